//! `tools/call` round trips per second over stdio for a trivial tool (`add`, two integers):
//! the toolsmith server against the MCP Python SDK's server (`python_server.py`), both driven by
//! this one client speaking newline-delimited JSON-RPC to the server's stdin and stdout, in the
//! same run. Sequential (one request in flight) and pipelined (`PIPELINE` in flight). The
//! toolsmith server is measured twice: `add` as an `async fn` (awaited on the executor, the
//! case with the target) and as a sync fn (`add_sync`, run on the server's tool threads).
//!
//! Then cancellation latency over the same stdio: the time from the client writing
//! `notifications/cancelled` for a running call of an async tool (`hold`, which awaits
//! `ctx.cancelled()`) to the tool observing it, median and p99 over `CANCELLATIONS` calls. The
//! tool runs in the server process, so both ends read the system's real-time clock (one clock
//! for both processes, nanoseconds), and the tool's reading comes back through a second tool
//! (`cancel_seen`) called after the cancellation.
//!
//! Run with `cargo xtask bench mcp` (which installs the Python SDK first). Started with
//! `--serve-stdio`, this program is the toolsmith server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use toolsmith::{Context, Progress, ToolError};

#[path = "../../../benches/harness.rs"]
mod harness;

use harness::{Case, report};

/// Requests in flight in the pipelined cases.
const PIPELINE: usize = 32;

/// The async tool's target: at least 100 times the Python server's rate, so at most 1/100 of
/// its time.
const TARGET: f64 = 1.0 / 100.0;

/// The sync tool's target, with the hop to a tool thread and back: 50 times.
const SYNC_TARGET: f64 = 1.0 / 50.0;

/// Calls cancelled in the cancellation-latency measurement.
const CANCELLATIONS: usize = 1000;

/// How long `hold` waits for its cancellation, and `cancel_seen` for `hold`'s reading.
const PATIENCE: Duration = Duration::from_secs(10);

/// Adds two integers.
#[toolsmith::tool(read_only)]
async fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Adds two integers (a sync tool: it runs on the server's tool threads).
#[toolsmith::tool(read_only)]
fn add_sync(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Nanoseconds since the Unix epoch on the real-time clock, which the bench and its server
/// process share.
fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
        })
}

/// The last cancellation a `hold` call observed: its call id and when (`now_ns`).
static SEEN: Mutex<Option<(String, u64)>> = Mutex::new(None);

/// Wakes `cancel_seen` when `hold` has recorded its cancellation.
static SEEN_NOTIFY: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Reports progress once it runs, then waits for its call to be cancelled and records when it
/// saw that.
#[toolsmith::tool]
async fn hold(ctx: &Context) -> Result<String, ToolError> {
    ctx.progress(Progress::new(0));
    tokio::select! {
        () = ctx.cancelled() => {
            let at = now_ns();
            let id = ctx.call_id().unwrap_or_default().to_owned();
            *SEEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((id, at));
            SEEN_NOTIFY.notify_one();
            Ok("cancelled".to_owned())
        }
        () = tokio::time::sleep(PATIENCE) => Ok("never cancelled".to_owned()),
    }
}

/// When (`now_ns`) the `hold` call with JSON-RPC id `id` saw its cancellation; waits for it.
#[toolsmith::tool]
async fn cancel_seen(id: String) -> Result<u64, ToolError> {
    let waited = tokio::time::timeout(PATIENCE, async {
        loop {
            let notified = SEEN_NOTIFY.notified();
            if let Some((seen, at)) = &*SEEN
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                && *seen == id
            {
                return *at;
            }
            notified.await;
        }
    })
    .await;
    waited.map_err(|_| ToolError::Unavailable {
        tool: "cancel_seen".to_owned(),
        reason: format!("call {id} never saw its cancellation"),
    })
}

/// A server process and the client's ends of its pipes.
struct Server {
    child: Child,
    /// Buffered: each batch of requests reaches the server in one write, as from any client
    /// that frames its messages before sending them.
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
}

impl Server {
    /// Starts the server, initializes it, and checks that each of `tools` adds 2 and 3.
    fn start(command: &mut Command, tools: &[&str]) -> Server {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the server starts");
        let stdin = BufWriter::new(child.stdin.take().unwrap());
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            stdin,
            stdout,
            line: String::new(),
            next_id: 0,
        };
        server.send(
            r#""method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}"#,
        );
        server.stdin.flush().unwrap();
        let init = server.receive();
        assert!(init.contains(r#""result""#), "{init}");
        server.notify(r#""method":"notifications/initialized""#);
        server.stdin.flush().unwrap();
        // Checked once: each call works and answers what it should.
        for tool in tools {
            server.send_call(tool);
            server.stdin.flush().unwrap();
            let answer = server.receive();
            assert!(
                answer.contains(r#""text":"5""#) && answer.contains(r#""isError":false"#),
                "{tool}: {answer}"
            );
        }
        server
    }

    /// Sends a request with the next id; returns the id.
    fn send(&mut self, body: &str) -> u64 {
        self.next_id += 1;
        writeln!(
            self.stdin,
            r#"{{"jsonrpc":"2.0","id":{},{body}}}"#,
            self.next_id
        )
        .unwrap();
        self.next_id
    }

    fn notify(&mut self, body: &str) {
        writeln!(self.stdin, r#"{{"jsonrpc":"2.0",{body}}}"#).unwrap();
    }

    fn send_call(&mut self, tool: &str) {
        self.send(&format!(
            r#""method":"tools/call","params":{{"name":"{tool}","arguments":{{"a":2,"b":3}}}}"#
        ));
    }

    fn receive(&mut self) -> &str {
        self.line.clear();
        self.stdout.read_line(&mut self.line).unwrap();
        &self.line
    }

    /// `n` calls of `tool` written before any answer is read; the answers read.
    fn calls(&mut self, tool: &str, n: usize) {
        for _ in 0..n {
            self.send_call(tool);
        }
        self.stdin.flush().unwrap();
        for _ in 0..n {
            assert!(!self.receive().is_empty(), "the server hung up");
        }
    }

    /// One cancellation: a `hold` call started (its progress read), cancelled, and the time
    /// from writing `notifications/cancelled` to the tool seeing it, in nanoseconds.
    fn cancellation(&mut self) -> u64 {
        let id = self.send(
            r#""method":"tools/call","params":{"name":"hold","arguments":{},"_meta":{"progressToken":"p"}}"#,
        );
        self.stdin.flush().unwrap();
        let started = self.receive();
        assert!(
            started.contains(r#""method":"notifications/progress""#),
            "{started}"
        );
        let sent = now_ns();
        self.notify(&format!(
            r#""method":"notifications/cancelled","params":{{"requestId":{id}}}"#
        ));
        self.stdin.flush().unwrap();
        self.send(&format!(
            r#""method":"tools/call","params":{{"name":"cancel_seen","arguments":{{"id":"{id}"}}}}"#
        ));
        self.stdin.flush().unwrap();
        let answer = self.receive().to_owned();
        let value: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(value["id"], self.next_id, "{answer}");
        let seen: u64 = value["result"]["content"][0]["text"]
            .as_str()
            .and_then(|text| text.parse().ok())
            .unwrap_or_else(|| panic!("{answer}"));
        seen.saturating_sub(sent)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve() -> ExitCode {
    let mut registry = toolsmith::Registry::new();
    let tools: [Arc<dyn toolsmith::Tool>; 4] = [
        Arc::new(Add),
        Arc::new(AddSync),
        Arc::new(Hold),
        Arc::new(CancelSeen),
    ];
    for tool in tools {
        if let Err(error) = registry.add(tool) {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    }
    match toolsmith_mcp::serve_stdio(registry) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}

/// The `q` quantile of `sorted`, in microseconds.
fn quantile_us(sorted: &[u64], q: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(at).map_or(f64::NAN, |&ns| ns as f64 / 1e3)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|arg| arg == "--serve-stdio") {
        return serve();
    }
    let Some(python) = toolsmith_testkit::require("python") else {
        return ExitCode::SUCCESS;
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/python_server.py");
    let mut peer = Server::start(Command::new(python).arg(script), &["add"]);
    let mut ours = Server::start(
        Command::new(std::env::current_exe().unwrap()).arg("--serve-stdio"),
        &["add", "add_sync"],
    );
    // Two cases share one server process, so they take turns with it.
    let ours = std::cell::RefCell::new(&mut ours);

    let sequential = report(
        "tools/call round trip over stdio, one request in flight (ns per call)",
        vec![
            Case::new("MCP Python SDK server", || peer.calls("add", 1)),
            Case::new("toolsmith-mcp, async fn add", || {
                ours.borrow_mut().calls("add", 1);
            })
            .target(TARGET),
            Case::new("toolsmith-mcp, sync fn add", || {
                ours.borrow_mut().calls("add_sync", 1);
            })
            .target(SYNC_TARGET),
        ],
    );
    let pipelined = report(
        &format!("tools/call over stdio, {PIPELINE} requests in flight (ns per {PIPELINE} calls)"),
        vec![
            Case::new("MCP Python SDK server", || peer.calls("add", PIPELINE)),
            Case::new("toolsmith-mcp, async fn add", || {
                ours.borrow_mut().calls("add", PIPELINE);
            })
            .target(TARGET),
            Case::new("toolsmith-mcp, sync fn add", || {
                ours.borrow_mut().calls("add_sync", PIPELINE);
            })
            .target(SYNC_TARGET),
        ],
    );
    for (title, medians, calls) in [
        ("sequential", &sequential, 1),
        ("pipelined", &pipelined, PIPELINE),
    ] {
        let rate = |ns: f64| calls as f64 * 1e9 / ns;
        let (python, async_fn, sync_fn) = (rate(medians[0]), rate(medians[1]), rate(medians[2]));
        println!(
            "{title:<10} calls/s: MCP Python SDK {python:>9.0}, toolsmith-mcp async fn {async_fn:>9.0}: {:.1}x (target 100x), sync fn {sync_fn:>9.0}: {:.1}x (target 50x)",
            async_fn / python,
            sync_fn / python,
        );
    }

    let ours = ours.into_inner();
    let mut latencies: Vec<u64> = (0..CANCELLATIONS).map(|_| ours.cancellation()).collect();
    latencies.sort_unstable();
    println!();
    println!(
        "cancellation over stdio, notifications/cancelled written to an async tool seeing ctx.cancelled(), {CANCELLATIONS} calls: median {:.1} us, p99 {:.1} us, max {:.1} us",
        quantile_us(&latencies, 0.5),
        quantile_us(&latencies, 0.99),
        quantile_us(&latencies, 1.0),
    );
    ExitCode::SUCCESS
}
