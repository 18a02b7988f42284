//! The `toolsmith mcp` server's resident memory under costly arguments: 64 `tools/call`s at
//! once, each of a ~500 KB argument whose 99,998 elements `[1]` (the most the value limit
//! allows beside `repo`) are each repaired twice (a one-element array unwrapped, a number read
//! as text) until the repair cap says how many more there were: `github_list_issues`'s
//! `labels`, a `Vec<String>`. Over stdio (all 64 lines written at once) and over HTTP (64
//! connections, one request each, sent together); three rounds each, with the peak (`VmHWM`)
//! and the resident memory 2 s and 10 s after each round's last answer (`VmRSS`), from
//! `/proc/PID/status`.
//!
//! The server is the real binary, started with a `PATH` that holds no `gh`: each call is read
//! whole, then answered with the tool's "gh is not installed" error, so no process is started
//! and nothing leaves the machine.
//!
//! Run with `cargo xtask bench memory`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Calls sent at once.
const CALLS: usize = 64;
/// Elements of each call's `labels`.
const ELEMENTS: usize = 99_998;
/// Rounds of [`CALLS`] calls per transport.
const ROUNDS: usize = 3;

/// The arguments of every call: `{"repo":"a/b","labels":[[1],[1],...]}`.
fn arguments() -> String {
    format!(
        "{{\"repo\":\"a/b\",\"labels\":[{}]}}",
        vec!["[1]"; ELEMENTS].join(", ")
    )
}

fn call(id: usize, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"github_list_issues","arguments":{arguments}}}}}"#
    )
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"memory","version":"1"}}}"#;

/// Whether `answer` is the tool's own answer (its arguments were read whole): gh not found.
fn read_whole(answer: &Value) -> bool {
    answer["result"]["isError"] == true
        && answer["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("not installed"))
}

/// A field of `/proc/PID/status` in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn mib(kib: u64) -> String {
    format!("{:.0} MiB", kib as f64 / 1024.0)
}

/// `toolsmith mcp ARGS` with a `PATH` of one empty directory; killed when dropped.
struct Server {
    child: Child,
    _empty_path: TempDir,
}

impl Server {
    fn start(args: &[&str], stdio: bool) -> Server {
        let empty_path = TempDir::new();
        let child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("mcp")
            .args(args)
            .env("PATH", &empty_path.0)
            .stdin(if stdio { Stdio::piped() } else { Stdio::null() })
            .stdout(if stdio { Stdio::piped() } else { Stdio::null() })
            .stderr(if stdio { Stdio::null() } else { Stdio::piped() })
            .spawn()
            .unwrap();
        Server {
            child,
            _empty_path: empty_path,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A directory of its own, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let dir = std::env::temp_dir().join(format!("toolsmith-memory-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One round's figures.
struct Round {
    took: Duration,
    peak: u64,
    idle_2s: u64,
    idle_10s: u64,
}

fn measure(pid: u32, round: impl FnOnce()) -> Round {
    let started = Instant::now();
    round();
    let took = started.elapsed();
    let peak = status_kib(pid, "VmHWM:");
    std::thread::sleep(Duration::from_secs(2));
    let idle_2s = status_kib(pid, "VmRSS:");
    std::thread::sleep(Duration::from_secs(8));
    let idle_10s = status_kib(pid, "VmRSS:");
    Round {
        took,
        peak,
        idle_2s,
        idle_10s,
    }
}

fn print(transport: &str, before: u64, rounds: &[Round]) {
    println!("{transport}: {} before the first call", mib(before));
    for (index, round) in rounds.iter().enumerate() {
        println!(
            "  round {}: {CALLS} calls in {:.2} s; peak so far {}, then {} after 2 s idle, {} after 10 s",
            index + 1,
            round.took.as_secs_f64(),
            mib(round.peak),
            mib(round.idle_2s),
            mib(round.idle_10s)
        );
    }
}

fn over_stdio(arguments: &str) {
    let mut server = Server::start(&[], true);
    let pid = server.child.id();
    let mut stdin = server.child.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.child.stdout.take().unwrap());
    let mut line = String::new();
    writeln!(stdin, "{INITIALIZE}").unwrap();
    stdout.read_line(&mut line).unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let before = status_kib(pid, "VmRSS:");
    let batch: String = (1..=CALLS)
        .map(|id| call(id, arguments) + "\n")
        .collect::<String>();
    let rounds: Vec<Round> = (0..ROUNDS)
        .map(|_| {
            measure(pid, || {
                stdin.write_all(batch.as_bytes()).unwrap();
                stdin.flush().unwrap();
                for _ in 0..CALLS {
                    line.clear();
                    stdout.read_line(&mut line).unwrap();
                    let answer: Value = serde_json::from_str(&line).unwrap();
                    assert!(read_whole(&answer), "{line:.300}");
                }
            })
        })
        .collect();
    print("stdio, 64 calls pipelined", before, &rounds);
}

fn over_http(arguments: &str) {
    let mut server = Server::start(&["--http", "127.0.0.1:0"], false);
    let pid = server.child.id();
    let mut stderr = BufReader::new(server.child.stderr.take().unwrap());
    let mut listening = String::new();
    stderr.read_line(&mut listening).unwrap();
    let url = listening
        .trim()
        .strip_prefix("toolsmith: listening on ")
        .unwrap_or_else(|| panic!("not an address: {listening:?}"))
        .to_owned();
    post(&url, INITIALIZE);
    let before = status_kib(pid, "VmRSS:");
    let rounds: Vec<Round> = (0..ROUNDS)
        .map(|_| {
            measure(pid, || {
                std::thread::scope(|scope| {
                    let sent: Vec<_> = (1..=CALLS)
                        .map(|id| {
                            let url = &url;
                            scope.spawn(move || post(url, &call(id, arguments)))
                        })
                        .collect();
                    for answer in sent {
                        let answer = answer.join().unwrap();
                        assert!(read_whole(&answer), "{answer:.300}");
                    }
                });
            })
        })
        .collect();
    print("HTTP, 64 calls at once", before, &rounds);
}

/// One POST on a connection of its own; the JSON answer.
fn post(url: &str, body: &str) -> Value {
    let mut response = ureq::post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .send(body)
        .unwrap();
    let text = response.body_mut().read_to_string().unwrap();
    serde_json::from_str(&text).unwrap()
}

fn main() -> ExitCode {
    let arguments = arguments();
    println!(
        "toolsmith mcp's RSS, {CALLS} calls of a {} KB argument ({ELEMENTS} labels, each `[1]`: \
         two repairs)",
        arguments.len() / 1000
    );
    over_stdio(&arguments);
    over_http(&arguments);
    ExitCode::SUCCESS
}
