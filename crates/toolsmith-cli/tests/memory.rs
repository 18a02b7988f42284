//! `toolsmith mcp` gives memory back: after a burst of calls whose arguments cost a repair per
//! element, a server left idle returns to a fraction of its peak instead of keeping it for
//! good. The real binary over stdio, started with a `PATH` holding no `gh`, so that each call
//! is read whole and then answered with the tool's "not installed" error, starting nothing.
//! Every wait is bounded, and the server is killed when the test ends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Calls sent at once.
const CALLS: usize = 16;
/// Elements of each call's `labels`, each `[1]`: unwrapped, then read as text.
const ELEMENTS: usize = 99_998;
/// How long the calls may take (a debug build reads them slowly).
const PATIENCE: Duration = Duration::from_secs(180);
/// How long the server may take to give its memory back once idle.
const SETTLING: Duration = Duration::from_secs(20);

/// A field of `/proc/PID/status`, in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The server, killed when dropped, and the empty directory its `PATH` names.
struct Server {
    child: Child,
    empty: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.empty);
    }
}

#[test]
fn an_idle_server_gives_back_the_memory_a_burst_of_costly_calls_took() {
    let empty = std::env::temp_dir().join(format!("toolsmith-memory-test-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let mut server = Server {
        child: Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("mcp")
            .env("PATH", &empty)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
        empty,
    };
    let pid = server.child.id();
    let mut stdin = server.child.stdin.take().unwrap();
    let stdout = BufReader::new(server.child.stdout.take().unwrap());
    let (lines, answers) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let labels = vec!["[1]"; ELEMENTS].join(",");
    let mut burst = String::from(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
    );
    burst.push_str("\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for id in 1..=CALLS {
        burst.push_str(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"github_list_issues","arguments":{{"repo":"a/b","labels":[{labels}]}}}}}}"#
        ));
        burst.push('\n');
    }
    stdin.write_all(burst.as_bytes()).unwrap();
    stdin.flush().unwrap();

    let deadline = Instant::now() + PATIENCE;
    for _ in 0..=CALLS {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = answers
            .recv_timeout(left)
            .expect("every call is answered in time");
        let answer: Value = serde_json::from_str(&line).unwrap();
        if answer["id"] != 0 {
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or("");
            assert!(text.contains("not installed"), "{line:.300}");
        }
    }

    let peak = status_kib(pid, "VmHWM:");
    let idle_since = Instant::now();
    let settled_by = idle_since + SETTLING;
    let mut resident = status_kib(pid, "VmRSS:");
    while resident > peak / 3 && Instant::now() < settled_by {
        std::thread::sleep(Duration::from_millis(250));
        resident = status_kib(pid, "VmRSS:");
    }
    eprintln!(
        "peak {} MiB, {} MiB after {:.1} s idle",
        peak / 1024,
        resident / 1024,
        idle_since.elapsed().as_secs_f64()
    );
    assert!(
        resident <= peak / 3,
        "idle for {} s after a peak of {} MiB, the server still holds {} MiB",
        SETTLING.as_secs(),
        peak / 1024,
        resident / 1024
    );
}
