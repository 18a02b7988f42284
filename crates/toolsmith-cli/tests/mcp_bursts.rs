//! `toolsmith mcp` over stdio, started as an MCP client starts it, given a client's burst: every
//! pipelined call is answered with its result, with the default limits and with the smallest.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// Long enough for any burst here on a loaded machine; a server that hangs fails the test then.
const DEADLINE: Duration = Duration::from_secs(300);

/// Kills the server when dropped, so that a failed test leaves no process behind.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `toolsmith mcp ARGS`, initializes, writes `n` `text_wc` calls in one go before reading
/// any answer, and returns the answers (in the order they came), or fails after [`DEADLINE`].
fn burst(args: &[&str], n: usize) -> Vec<Value> {
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let mut stdin = server.0.stdin.take().unwrap();
    let stdout = server.0.stdout.take().unwrap();
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    ];
    for id in 1..=n {
        lines.push(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "text_wc", "arguments": {"text": "one two three"}}})
            .to_string(),
        );
    }
    let mut text = lines.join("\n");
    text.push('\n');
    // Written from a thread of its own: the server answers while it reads.
    let writer = std::thread::spawn(move || {
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.flush().unwrap();
        stdin
    });
    let (answered, answers) = mpsc::channel();
    std::thread::spawn(move || {
        let mut read = BufReader::new(stdout);
        for _ in 0..=n {
            let mut line = String::new();
            if read.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            if answered.send(line).is_err() {
                break;
            }
        }
    });
    let mut received = Vec::with_capacity(n + 1);
    for _ in 0..=n {
        let line = answers
            .recv_timeout(DEADLINE)
            .expect("the server answers every call in time");
        received.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    drop(writer.join().unwrap());
    let init = received.remove(0);
    assert_eq!(init["id"], 0, "{init}");
    received
}

fn assert_all_counted(answers: &[Value], n: usize) {
    assert_eq!(answers.len(), n);
    let refused: Vec<&Value> = answers
        .iter()
        .filter(|answer| answer["result"]["structuredContent"]["words"] != 3)
        .collect();
    assert!(
        refused.is_empty(),
        "{} of {n} calls not served, the first: {}",
        refused.len(),
        refused[0]
    );
    let mut ids: Vec<u64> = answers.iter().map(|a| a["id"].as_u64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=n as u64).collect::<Vec<_>>());
}

#[test]
fn two_hundred_pipelined_calls_are_all_served() {
    assert_all_counted(&burst(&[], 200), 200);
}

#[test]
fn twenty_thousand_pipelined_calls_are_all_served() {
    assert_all_counted(&burst(&[], 20_000), 20_000);
}

#[test]
fn a_burst_through_the_smallest_limits_is_served_in_full() {
    let args = ["--max-concurrent-calls", "1", "--max-queued-calls", "1"];
    assert_all_counted(&burst(&args, 2_000), 2_000);
}

#[test]
fn a_queue_of_no_calls_is_a_usage_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["mcp", "--max-queued-calls", "0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("--max-queued-calls") && stderr.contains("must be at least 1"),
        "{stderr}"
    );
}
