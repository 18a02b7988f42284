//! Tools for the tests, and a client that speaks newline-delimited JSON-RPC to a server over
//! in-memory pipes.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde::Serialize;
use toolsmith::ToolType;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use toolsmith::Registry;
use toolsmith_mcp::{McpConfig, McpServer};

/// Adds two integers.
#[toolsmith::tool(read_only)]
pub fn add(a: i64, b: i64) -> i64 {
    a.saturating_add(b)
}

/// Fails when asked to.
#[toolsmith::tool]
pub fn refuse(reason: String) -> Result<String, String> {
    Err(reason)
}

/// Panics.
#[toolsmith::tool]
pub fn explode() -> String {
    panic!("the tool blew up")
}

/// Tomorrow's weather.
#[derive(Serialize, ToolType)]
pub struct Weather {
    /// The city.
    pub city: String,
    /// Degrees Celsius.
    pub celsius: f64,
}

/// Looks up tomorrow's weather in a city.
#[toolsmith::tool(read_only, open_world)]
pub fn forecast(city: String) -> Weather {
    Weather {
        city,
        celsius: 21.5,
    }
}

static RENDEZVOUS: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// Waits (10 s at most) until `group` calls are inside it at once; says whether they met.
#[toolsmith::tool]
pub fn rendezvous(group: usize) -> String {
    let (arrived, changed) = &RENDEZVOUS;
    let mut count = arrived.lock().unwrap();
    *count += 1;
    changed.notify_all();
    let (count, _) = changed
        .wait_timeout_while(count, Duration::from_secs(10), |count| *count < group)
        .unwrap();
    if *count >= group {
        "met".to_owned()
    } else {
        format!("alone: {} of {group} arrived", *count)
    }
}

/// A gate that `wait` calls block on until the test opens it, counting who has arrived.
#[derive(Default)]
pub struct Gate {
    state: Mutex<(usize, bool)>,
    changed: Condvar,
}

impl Gate {
    /// Blocks until `n` calls are waiting at the gate.
    pub fn wait_for_arrivals(&self, n: usize) {
        let mut state = self.state.lock().unwrap();
        while state.0 < n {
            state = self.changed.wait(state).unwrap();
        }
    }

    /// Lets every waiting call through, and every later one.
    pub fn open(&self) {
        self.state.lock().unwrap().1 = true;
        self.changed.notify_all();
    }
}

#[toolsmith::tool(name = "wait")]
impl Gate {
    /// Waits at the gate until it opens.
    fn wait(&self) -> String {
        let mut state = self.state.lock().unwrap();
        state.0 += 1;
        self.changed.notify_all();
        while !state.1 {
            state = self.changed.wait(state).unwrap();
        }
        "through".to_owned()
    }
}

/// The test tools, with a fresh gate.
pub fn registry() -> (Registry, Arc<Gate>) {
    let gate = Arc::new(Gate::default());
    let mut registry = Registry::new();
    registry
        .add(Arc::new(Add))
        .unwrap()
        .add(Arc::new(Refuse))
        .unwrap()
        .add(Arc::new(Explode))
        .unwrap()
        .add(Arc::new(Forecast))
        .unwrap()
        .add(Arc::new(Rendezvous))
        .unwrap()
        .add(gate.clone())
        .unwrap();
    (registry, gate)
}

/// A client connected to a server serving the test tools under `config`.
pub struct Client {
    write: DuplexStream,
    lines: Lines<BufReader<DuplexStream>>,
    next_id: u64,
}

impl Client {
    /// A server over in-memory pipes, and an initialized client of it.
    pub async fn connect(config: McpConfig) -> (Client, Arc<Gate>) {
        let (registry, gate) = registry();
        let server = McpServer::new(registry, config).unwrap();
        let (client_write, server_read) = tokio::io::duplex(1 << 16);
        let (server_write, client_read) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move { server.serve(server_read, server_write).await });
        let mut client = Client {
            write: client_write,
            lines: BufReader::new(client_read).lines(),
            next_id: 0,
        };
        let init = client
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}
                }),
            )
            .await;
        client
            .send_line(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        (client, gate)
    }

    /// Writes one raw line.
    pub async fn send_line(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        self.write.flush().await.unwrap();
    }

    /// Sends a request; returns its id.
    pub async fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&request.to_string()).await;
        id
    }

    /// Sends a `tools/call`; returns its id.
    pub async fn send_call(&mut self, tool: &str, arguments: Value) -> u64 {
        self.send("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }

    /// The next message from the server.
    pub async fn receive(&mut self) -> Value {
        let line = self.lines.next_line().await.unwrap().expect("a message");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a request and waits for its answer.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        let answer = self.receive().await;
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    /// Calls a tool and returns the answer.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }
}

/// The text of a tool result's first content block.
pub fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// How long a test waits for any one answer before it fails rather than hangs.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(60);

impl Client {
    /// A server over in-memory pipes, and a client of it that has not initialized.
    pub async fn connect_uninitialized(config: McpConfig) -> (Client, Arc<Gate>) {
        let (registry, gate) = registry();
        let server = McpServer::new(registry, config).unwrap();
        let (client_write, server_read) = tokio::io::duplex(1 << 16);
        let (server_write, client_read) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move { server.serve(server_read, server_write).await });
        let client = Client {
            write: client_write,
            lines: BufReader::new(client_read).lines(),
            next_id: 0,
        };
        (client, gate)
    }

    /// The next line from the server as it was written, or `None` when none comes within
    /// `wait`.
    pub async fn receive_line_within(&mut self, wait: Duration) -> Option<String> {
        tokio::time::timeout(wait, self.lines.next_line())
            .await
            .ok()
            .map(|line| line.unwrap().expect("a message"))
    }

    /// The next line from the server as it was written (failing after [`ANSWER_WITHIN`]).
    pub async fn receive_line(&mut self) -> String {
        self.receive_line_within(ANSWER_WITHIN)
            .await
            .expect("an answer in time")
    }

    /// Writes raw bytes, then a newline.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.write.write_all(bytes).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        self.write.flush().await.unwrap();
    }
}

impl Gate {
    /// How many calls have arrived at the gate so far.
    pub fn arrivals(&self) -> usize {
        self.state.lock().unwrap().0
    }
}

impl Gate {
    /// Blocks until `n` calls are waiting at the gate, or [`ANSWER_WITHIN`] has passed; says
    /// whether they came.
    pub fn arrivals_within(&self, n: usize) -> bool {
        let state = self.state.lock().unwrap();
        let (state, _) = self
            .changed
            .wait_timeout_while(state, ANSWER_WITHIN, |state| state.0 < n)
            .unwrap();
        state.0 >= n
    }
}
