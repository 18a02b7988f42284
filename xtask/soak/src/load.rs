//! The clients: each one connection kept alive (hyper's HTTP/1.1 client), `initialize` once,
//! then `tools/call` after `tools/call` of the text tools until the part's end, every call
//! with its own id and an answer checked against what the tool must say.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

/// How long a call may take before it counts as failed (`timeout`).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client waits after a failure before it calls again (so that a client of a server
/// that is down does not spin).
const PAUSE_AFTER_FAILURE: Duration = Duration::from_millis(50);
/// The protocol version the clients speak.
const PROTOCOL_VERSION: &str = "2025-06-18";

/// Where the clients send their requests.
#[derive(Debug, Clone)]
pub struct Target {
    /// The address they connect to.
    pub addr: SocketAddr,
}

impl Target {
    fn host(&self) -> String {
        self.addr.to_string()
    }
}

/// Calls answered and failed in each second of a part, counted as they happen.
pub struct Timeline {
    start: Instant,
    ok: Vec<AtomicU64>,
    failed: Vec<AtomicU64>,
}

impl Timeline {
    /// A timeline of `seconds` seconds (calls after the last second count in it) from now.
    pub fn new(seconds: usize) -> Timeline {
        Timeline {
            start: Instant::now(),
            ok: (0..=seconds).map(|_| AtomicU64::new(0)).collect(),
            failed: (0..=seconds).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// When the part started.
    pub fn start(&self) -> Instant {
        self.start
    }

    fn slot(&self) -> usize {
        (self.start.elapsed().as_secs() as usize).min(self.ok.len() - 1)
    }

    fn answered(&self) {
        self.ok[self.slot()].fetch_add(1, Ordering::Relaxed);
    }

    fn failed(&self) {
        self.failed[self.slot()].fetch_add(1, Ordering::Relaxed);
    }

    /// Calls answered in second `second`.
    pub fn ok_in(&self, second: usize) -> u64 {
        self.ok.get(second).map_or(0, |n| n.load(Ordering::Relaxed))
    }

    /// Calls failed in second `second`.
    pub fn failed_in(&self, second: usize) -> u64 {
        self.failed
            .get(second)
            .map_or(0, |n| n.load(Ordering::Relaxed))
    }
}

/// What the clients did, added up.
#[derive(Debug, Default)]
pub struct Calls {
    /// Calls sent (each with its own id).
    pub sent: u64,
    /// Calls answered with the right result.
    pub ok: u64,
    /// Each answered call's time, from the start of its request to the end of its answer, in
    /// microseconds.
    pub latencies_us: Vec<u32>,
    /// Failed calls by what went wrong.
    pub failures: BTreeMap<String, u64>,
    /// Each failed call: its id and what went wrong.
    pub lost: Vec<(u64, String)>,
    /// `initialize` requests that failed (the client tries again; they are not calls).
    pub initialize_failures: u64,
}

impl Calls {
    fn fail(&mut self, id: u64, kind: String, timeline: &Timeline) {
        timeline.failed();
        *self.failures.entry(kind.clone()).or_default() += 1;
        self.lost.push((id, kind));
    }

    /// Adds `other`'s calls to these.
    pub fn merge(&mut self, other: Calls) {
        self.sent += other.sent;
        self.ok += other.ok;
        self.latencies_us.extend(other.latencies_us);
        for (kind, n) in other.failures {
            *self.failures.entry(kind).or_default() += n;
        }
        self.lost.extend(other.lost);
        self.initialize_failures += other.initialize_failures;
    }

    /// Calls that failed.
    pub fn failed(&self) -> u64 {
        self.failures.values().sum()
    }

    /// The `q` quantile (0 to 1) of the answered calls' times, in microseconds.
    pub fn latency_quantile(&mut self, q: f64) -> Option<u32> {
        if self.latencies_us.is_empty() {
            return None;
        }
        self.latencies_us.sort_unstable();
        let rank = ((self.latencies_us.len() - 1) as f64 * q).round() as usize;
        self.latencies_us.get(rank).copied()
    }
}

/// One client's connection: hyper's sender for it.
type Connection = SendRequest<Full<Bytes>>;

/// Runs one client until `deadline`: connects, initializes, then calls; reconnects after a
/// failure that leaves its connection unusable.
pub async fn client(
    target: Target,
    ids: Arc<AtomicU64>,
    deadline: Instant,
    timeline: Arc<Timeline>,
) -> Calls {
    let mut calls = Calls::default();
    let mut connection: Option<Connection> = None;
    let mut initialized = false;
    while Instant::now() < deadline {
        if !initialized {
            match initialize(&target, &mut connection).await {
                Ok(()) => initialized = true,
                Err(_) => {
                    calls.initialize_failures += 1;
                    connection = None;
                    tokio::time::sleep(PAUSE_AFTER_FAILURE).await;
                    continue;
                }
            }
        }
        let id = ids.fetch_add(1, Ordering::Relaxed);
        calls.sent += 1;
        let call = ToolCall::new(id);
        let started = Instant::now();
        match call.send(&target, &mut connection).await {
            Ok(()) => {
                let micros = started.elapsed().as_micros();
                calls.ok += 1;
                calls
                    .latencies_us
                    .push(u32::try_from(micros).unwrap_or(u32::MAX));
                timeline.answered();
            }
            Err(failure) => {
                if failure.ends_connection {
                    connection = None;
                }
                calls.fail(id, failure.kind, &timeline);
                tokio::time::sleep(PAUSE_AFTER_FAILURE).await;
            }
        }
    }
    calls
}

/// One fresh client's first call: connect, `initialize`, one `tools/call`; how long it took, or
/// why it failed. `patience` bounds the whole.
pub async fn fresh_call(target: &Target, id: u64, patience: Duration) -> Result<Duration, String> {
    let started = Instant::now();
    let attempt = async {
        let mut connection = None;
        initialize_within(target, &mut connection, patience)
            .await
            .map_err(|failure| format!("initialize: {}", failure.kind))?;
        ToolCall::new(id)
            .send_within(target, &mut connection, patience)
            .await
            .map_err(|failure| failure.kind)
    };
    match tokio::time::timeout(patience, attempt).await {
        Ok(Ok(())) => Ok(started.elapsed()),
        Ok(Err(kind)) => Err(kind),
        Err(_) => Err(format!("no answer within {:.0} s", patience.as_secs_f64())),
    }
}

/// Why a call failed, and whether its connection can still be used.
struct Failure {
    kind: String,
    ends_connection: bool,
}

impl Failure {
    /// A failure after which the connection is kept (the server answered).
    fn answered(kind: impl Into<String>) -> Failure {
        Failure {
            kind: kind.into(),
            ends_connection: false,
        }
    }

    /// A failure that leaves no usable connection.
    fn broken(kind: impl Into<String>) -> Failure {
        Failure {
            kind: kind.into(),
            ends_connection: true,
        }
    }
}

/// A `tools/call` of a text tool whose answer is known: `text_wc` for even ids, `text_sort_lines`
/// for odd ones, on a text that holds the id (so an answer to another call cannot pass).
struct ToolCall {
    id: u64,
    tool: &'static str,
    text: String,
}

impl ToolCall {
    fn new(id: u64) -> ToolCall {
        if id.is_multiple_of(2) {
            ToolCall {
                id,
                tool: "text_wc",
                text: format!("call {id}\nalpha beta\n"),
            }
        } else {
            ToolCall {
                id,
                tool: "text_sort_lines",
                text: format!("zeta {id}\nbeta\nalpha\n"),
            }
        }
    }

    fn body(&self) -> String {
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "method": "tools/call",
            "params": {"name": self.tool, "arguments": {"text": self.text}},
        })
        .to_string()
    }

    /// Whether `result` is what the tool must answer.
    fn is_answered_by(&self, result: &Value) -> bool {
        let structured = &result["structuredContent"];
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        match self.tool {
            "text_wc" => {
                let characters = self.text.chars().count() as u64;
                structured["lines"] == 2
                    && structured["words"] == 4
                    && structured["characters"] == characters
            }
            _ => {
                structured["total_lines"] == 3
                    && text.starts_with(&format!("alpha\nbeta\nzeta {}", self.id))
            }
        }
    }

    async fn send(
        &self,
        target: &Target,
        connection: &mut Option<Connection>,
    ) -> Result<(), Failure> {
        self.send_within(target, connection, CALL_TIMEOUT).await
    }

    async fn send_within(
        &self,
        target: &Target,
        connection: &mut Option<Connection>,
        timeout: Duration,
    ) -> Result<(), Failure> {
        let answer = exchange(target, connection, self.body(), timeout).await?;
        if answer["id"] != self.id {
            return Err(Failure::answered("answer to another id"));
        }
        if let Some(code) = answer["error"]["code"].as_i64() {
            return Err(Failure::answered(format!("JSON-RPC error {code}")));
        }
        let result = &answer["result"];
        if result["isError"] != false {
            let text = result["content"][0]["text"].as_str().unwrap_or("(no text)");
            let first_words: String = text.chars().take(40).collect();
            return Err(Failure::answered(format!("tool error: {first_words}")));
        }
        if self.is_answered_by(result) {
            Ok(())
        } else {
            Err(Failure::answered("wrong answer"))
        }
    }
}

/// `initialize`, as a client does once before its calls.
async fn initialize(target: &Target, connection: &mut Option<Connection>) -> Result<(), Failure> {
    initialize_within(target, connection, CALL_TIMEOUT).await
}

async fn initialize_within(
    target: &Target,
    connection: &mut Option<Connection>,
    timeout: Duration,
) -> Result<(), Failure> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "soak", "version": "1"},
        },
    })
    .to_string();
    let answer = exchange(target, connection, body, timeout).await?;
    if answer["result"]["protocolVersion"].is_string() {
        Ok(())
    } else {
        Err(Failure::answered("initialize refused"))
    }
}

/// Sends `body` on the connection (making one first when there is none) and reads the JSON
/// answer, all within `timeout`.
async fn exchange(
    target: &Target,
    connection: &mut Option<Connection>,
    body: String,
    timeout: Duration,
) -> Result<Value, Failure> {
    match tokio::time::timeout(timeout, exchange_unbounded(target, connection, body)).await {
        Ok(answer) => answer,
        Err(_) => Err(Failure::broken("timeout")),
    }
}

async fn exchange_unbounded(
    target: &Target,
    connection: &mut Option<Connection>,
    body: String,
) -> Result<Value, Failure> {
    let sender = match connection {
        Some(sender) => sender,
        None => connection.insert(connect(target).await?),
    };
    sender
        .ready()
        .await
        .map_err(|error| Failure::broken(hyper_failure(&error)))?;
    let request = Request::post("/mcp")
        .header(HOST, target.host())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL_VERSION)
        .body(Full::new(Bytes::from(body)))
        .map_err(|error| Failure::broken(format!("request not built: {error}")))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|error| Failure::broken(hyper_failure(&error)))?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|error| Failure::broken(hyper_failure(&error)))?
        .to_bytes();
    if status != StatusCode::OK {
        return Err(Failure::answered(format!("HTTP {}", status.as_u16())));
    }
    serde_json::from_slice(&bytes).map_err(|_| Failure::answered("answer not JSON"))
}

/// A new connection to `target`, its HTTP/1.1 handshake done.
async fn connect(target: &Target) -> Result<Connection, Failure> {
    let stream = TcpStream::connect(target.addr)
        .await
        .map_err(|error| Failure::broken(format!("connect: {}", error.kind())))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|error| Failure::broken(hyper_failure(&error)))?;
    tokio::spawn(connection);
    Ok(sender)
}

/// What went wrong on the connection, in a few words.
fn hyper_failure(error: &hyper::Error) -> String {
    if error.is_incomplete_message() {
        "connection closed before the answer".to_owned()
    } else if error.is_closed() || error.is_canceled() {
        "connection closed".to_owned()
    } else {
        format!("connection failed: {error}")
    }
}
