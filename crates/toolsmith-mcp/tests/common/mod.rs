//! Tools for the tests, and a client that speaks newline-delimited JSON-RPC to a server over
//! in-memory pipes.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde::Serialize;
use toolsmith::{
    Content, Context, LogLevel, Progress, Resource, ResourceLink, ToolError, ToolOutput, ToolType,
};

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

/// Says `text` louder (an async tool: awaited on the executor).
#[toolsmith::tool]
pub async fn shout(text: String) -> String {
    tokio::task::yield_now().await;
    text.to_uppercase()
}

/// How many calls of `hold` in this process saw their cancellation.
pub static CANCELLATIONS_SEEN: AtomicUsize = AtomicUsize::new(0);

/// Holds until cancelled (60 s at most), saying once that it has started; counts the
/// cancellations it sees.
#[toolsmith::tool]
pub async fn hold(ctx: &Context) -> Result<String, ToolError> {
    ctx.progress(Progress::new(0).with_message("holding"));
    tokio::select! {
        () = ctx.cancelled() => {
            CANCELLATIONS_SEEN.fetch_add(1, Ordering::SeqCst);
            Err(ToolError::Cancelled { tool: "hold".to_owned() })
        }
        () = tokio::time::sleep(Duration::from_secs(60)) => Ok("held 60 s".to_owned()),
    }
}

/// How many calls of `hold` in this process saw their cancellation.
#[toolsmith::tool]
pub fn cancellations() -> usize {
    CANCELLATIONS_SEEN.load(Ordering::SeqCst)
}

/// Counts to `n`, reporting each step.
#[toolsmith::tool]
pub async fn count_to(n: u32, ctx: &Context) -> String {
    for step in 1..=n {
        tokio::time::sleep(Duration::from_millis(5)).await;
        ctx.progress(Progress::of(step, n).with_message(format!("step {step} of {n}")));
    }
    format!("counted to {n}")
}

/// Says four things, one at each level from debug to error (a sync tool: it logs from a tool
/// thread).
#[toolsmith::tool]
pub fn chatty(ctx: &Context) -> String {
    for level in [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
    ] {
        ctx.log(level, format!("{level} from chatty"));
    }
    "said four things".to_owned()
}

/// A one-pixel PNG.
pub const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
];

/// A few bytes of WAV.
pub const WAV: &[u8] = b"RIFF\x26\x00\x00\x00WAVEfmt ";

/// Answers with every kind of content block at once.
#[toolsmith::tool]
pub fn media() -> ToolOutput {
    let mut link = ResourceLink::new("file:///reports/q3.pdf", "q3.pdf");
    link.mime_type = Some("application/pdf".to_owned());
    ToolOutput::new(vec![
        Content::text("Everything:"),
        Content::image(PNG, "image/png"),
        Content::audio(WAV, "audio/wav"),
        Resource::text("test://notes", "some notes")
            .with_mime_type("text/markdown")
            .into(),
        Resource::blob("test://bytes", vec![0u8, 1, 2, 255])
            .with_mime_type("application/octet-stream")
            .into(),
        link.into(),
    ])
}

/// Who is calling: request data the server puts into a call's context (from an HTTP header).
#[derive(Debug, Clone)]
pub struct Caller(pub String);

/// Says who is calling.
#[toolsmith::tool]
pub fn whoami(ctx: &Context) -> Result<String, ToolError> {
    Ok(format!("you are {}", ctx.get::<Caller>()?.0))
}

/// Puts the bearer token of a call's `Authorization` header into its context, as a [`Caller`].
pub fn caller_from_header(request: &toolsmith_mcp::CallRequest<'_>, ctx: &mut Context) {
    if let Some(token) = request
        .header("authorization")
        .and_then(|value| value.strip_prefix("Bearer "))
    {
        ctx.insert(Caller(token.to_owned()));
    }
}

/// Whom to book for: what `book` asks a person.
#[derive(serde::Deserialize, ToolType)]
pub struct Traveller {
    /// Full name.
    pub name: String,
    /// How many bags.
    #[serde(default)]
    pub bags: u8,
}

/// Books a seat, asking the person whom for.
#[toolsmith::tool]
pub async fn book(ctx: &Context) -> Result<String, ToolError> {
    Ok(match ctx.elicit::<Traveller>("Who is travelling?").await? {
        toolsmith::Elicited::Accept(t) => format!("booked for {} with {} bags", t.name, t.bags),
        other => format!("not booked ({})", other.action()),
    })
}

/// Summarizes `text` with the client's model.
#[toolsmith::tool]
pub async fn summarize(ctx: &Context, text: String) -> Result<String, ToolError> {
    let request = toolsmith::Sampling::new(format!("Summarize: {text}"))
        .with_system("Be brief.")
        .with_max_tokens(50);
    let sampled = ctx.sample(request).await?;
    Ok(format!(
        "{} (by {})",
        sampled.text,
        sampled.model.unwrap_or_default()
    ))
}

/// Plans a trip: asks the person whom for, then the client's model where to (two questions,
/// so two rounds on protocol 2026-07-28).
#[toolsmith::tool]
pub async fn plan_trip(ctx: &Context) -> Result<String, ToolError> {
    let Some(traveller) = ctx
        .elicit::<Traveller>("Who is travelling?")
        .await?
        .accepted()
    else {
        return Ok("no trip".to_owned());
    };
    let idea = ctx
        .sample(format!("Suggest a trip for {}", traveller.name))
        .await?;
    Ok(format!("{} goes to: {}", traveller.name, idea.text))
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
    for tool in [
        Arc::new(Shout) as Arc<dyn toolsmith::Tool>,
        Arc::new(Hold),
        Arc::new(Cancellations),
        Arc::new(CountTo),
        Arc::new(Chatty),
        Arc::new(Media),
        Arc::new(Whoami),
        Arc::new(Book),
        Arc::new(Summarize),
        Arc::new(PlanTrip),
    ] {
        registry.add(tool).unwrap();
    }
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
        (Client::connect_to(server).await, gate)
    }

    /// `server` over in-memory pipes (served on this runtime), and an initialized client of it.
    pub async fn connect_to(server: McpServer) -> Client {
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
        client
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

    /// Closes the client's end of the pipe to the server, as a client closing the server's
    /// stdin does.
    pub async fn close_write(&mut self) {
        self.write.shutdown().await.unwrap();
    }

    /// Whether the server closes its end within `wait`, writing nothing more.
    pub async fn closed_within(&mut self, wait: Duration) -> bool {
        matches!(
            tokio::time::timeout(wait, self.lines.next_line()).await,
            Ok(Ok(None))
        )
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
