//! `tools/call` round trips per second over stdio for a trivial tool (`add`, two integers):
//! the toolsmith server against the MCP Python SDK's server (`python_server.py`), both driven by
//! this one client speaking newline-delimited JSON-RPC to the server's stdin and stdout, in the
//! same run. Sequential (one request in flight) and pipelined (`PIPELINE` in flight).
//!
//! Run with `cargo xtask bench mcp` (which installs the Python SDK first). Started with
//! `--serve-stdio`, this program is the toolsmith server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::sync::Arc;

#[path = "../../../benches/harness.rs"]
mod harness;

use harness::{Case, report};

/// Requests in flight in the pipelined cases.
const PIPELINE: usize = 32;

/// The target: at least 50 times the Python server's rate, so at most 1/50 of its time.
const TARGET: f64 = 1.0 / 50.0;

/// Adds two integers.
#[toolsmith::tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
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
    fn start(command: &mut Command) -> Server {
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
        writeln!(
            server.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        server.stdin.flush().unwrap();
        // Checked once: the call works and answers what it should.
        server.send_call();
        server.stdin.flush().unwrap();
        let answer = server.receive();
        assert!(
            answer.contains(r#""text":"5""#) && answer.contains(r#""isError":false"#),
            "{answer}"
        );
        server
    }

    fn send(&mut self, body: &str) {
        self.next_id += 1;
        writeln!(
            self.stdin,
            r#"{{"jsonrpc":"2.0","id":{},{body}}}"#,
            self.next_id
        )
        .unwrap();
    }

    fn send_call(&mut self) {
        self.send(r#""method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}"#);
    }

    fn receive(&mut self) -> &str {
        self.line.clear();
        self.stdout.read_line(&mut self.line).unwrap();
        &self.line
    }

    /// `n` calls written before any answer is read; the answers read.
    fn calls(&mut self, n: usize) {
        for _ in 0..n {
            self.send_call();
        }
        self.stdin.flush().unwrap();
        for _ in 0..n {
            assert!(!self.receive().is_empty(), "the server hung up");
        }
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
    if let Err(error) = registry.add(Arc::new(Add)) {
        eprintln!("{error}");
        return ExitCode::FAILURE;
    }
    match toolsmith_mcp::serve_stdio(registry) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
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
    let mut peer = Server::start(Command::new(python).arg(script));
    let mut ours =
        Server::start(Command::new(std::env::current_exe().unwrap()).arg("--serve-stdio"));

    let sequential = report(
        "tools/call round trip over stdio, one request in flight (ns per call)",
        vec![
            Case::new("MCP Python SDK server", || peer.calls(1)),
            Case::new("toolsmith-mcp", || ours.calls(1)).target(TARGET),
        ],
    );
    let pipelined = report(
        &format!("tools/call over stdio, {PIPELINE} requests in flight (ns per {PIPELINE} calls)"),
        vec![
            Case::new("MCP Python SDK server", || peer.calls(PIPELINE)),
            Case::new("toolsmith-mcp", || ours.calls(PIPELINE)).target(TARGET),
        ],
    );
    for (title, medians, calls) in [
        ("sequential", &sequential, 1),
        ("pipelined", &pipelined, PIPELINE),
    ] {
        let rate = |ns: f64| calls as f64 * 1e9 / ns;
        let (python, toolsmith) = (rate(medians[0]), rate(medians[1]));
        println!(
            "{title:<10} calls/s: MCP Python SDK {python:>9.0}, toolsmith-mcp {toolsmith:>9.0}: {:.1}x (target 50x)",
            toolsmith / python
        );
    }
    ExitCode::SUCCESS
}
