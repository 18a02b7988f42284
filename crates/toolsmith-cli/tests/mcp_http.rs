//! `toolsmith mcp --http`, run as an operator runs it: the real binary, its stderr, signals, a
//! low limit of open files (through util-linux's `prlimit`), a slow tool (a stand-in `gh` that
//! sleeps), raw HTTP over TCP, and the README's `curl` session as written. Every wait is bounded,
//! and every server started is killed when its test ends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The longest any test waits for something that should come much sooner.
const PATIENCE: Duration = Duration::from_secs(20);

/// Tests that open a thousand connections run one at a time.
static MANY_CONNECTIONS: Mutex<()> = Mutex::new(());

/// A program these tests need from the system (`curl`, `kill`, `prlimit`), found on `PATH`:
/// `None` (the test is skipped, as it says) when it is missing, unless peers are required.
fn system_program(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    });
    if found.is_none() {
        let why = format!("`{name}` is not installed");
        assert!(!toolsmith_testkit::peers_required(), "{why}");
        eprintln!("skipped: {why}");
    }
    found
}

/// `toolsmith mcp --http ...` running, its stderr read line by line.
struct Served {
    child: Child,
    addr: SocketAddr,
    /// The line that announced the address.
    listening: String,
    stderr: Receiver<String>,
}

impl Served {
    /// `command` (the binary, or a program that runs it), until it says where it listens.
    fn start(mut command: Command) -> Served {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (lines, stderr) = mpsc::channel();
        let pipe = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in pipe.lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let listening = match stderr.recv_timeout(PATIENCE) {
            Ok(line) => line,
            Err(error) => {
                let _ = child.kill();
                panic!("no address announced ({error}): {:?}", child.wait());
            }
        };
        let addr = listening
            .strip_prefix("toolsmith: listening on http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .and_then(|addr| addr.parse().ok())
            .unwrap_or_else(|| panic!("not an address line: {listening:?}"));
        Served {
            child,
            addr,
            listening,
            stderr,
        }
    }

    /// `toolsmith mcp --http 127.0.0.1:0` with `args`.
    fn binary(args: &[&str]) -> Served {
        Served::start(toolsmith(&[&["--http", "127.0.0.1:0"], args].concat()))
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// Sends the signal `name` (`TERM`, `INT`) with `kill`.
    fn signal(&self, name: &str) {
        let kill = system_program("kill").expect("kill");
        let status = Command::new(kill)
            .args(["-s", name, &self.pid()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -s {name}: {status}");
    }

    /// Its exit status, once it has exited, within `within`.
    fn exited_within(&mut self, within: Duration) -> Option<ExitStatus> {
        let started = Instant::now();
        while started.elapsed() < within {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// The stderr lines printed after the address, up to its end (the process has exited).
    fn rest_of_stderr(&self) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            match self.stderr.recv_timeout(PATIENCE) {
                Ok(line) => lines.push(line),
                Err(RecvTimeoutError::Disconnected) => return lines,
                Err(RecvTimeoutError::Timeout) => panic!("stderr still open: {lines:?}"),
            }
        }
    }

    /// Waits (bounded) for a stderr line containing `text`; the lines read until then.
    fn stderr_until(&self, text: &str) -> Vec<String> {
        let started = Instant::now();
        let mut lines = Vec::new();
        while let Some(left) = PATIENCE.checked_sub(started.elapsed()) {
            match self.stderr.recv_timeout(left) {
                Ok(line) => {
                    let found = line.contains(text);
                    lines.push(line);
                    if found {
                        return lines;
                    }
                }
                Err(_) => break,
            }
        }
        panic!("no line with {text:?} on stderr: {lines:?}");
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `toolsmith mcp` command with `args`.
fn toolsmith(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command.arg("mcp").args(args);
    command
}

/// A POST of `body` to `addr` with `Host: host` and `extra` header lines; the status and body.
fn post_as(addr: SocketAddr, host: &str, extra: &str, body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect_timeout(&addr, PATIENCE).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(&[head.as_bytes(), body].concat()).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no response: {response:?}"));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

fn post(addr: SocketAddr, body: &str) -> (u16, String) {
    post_as(addr, "127.0.0.1", "", body.as_bytes())
}

fn word_count() -> String {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
           "params": {"name": "text_wc", "arguments": {"text": "a b\n"}}})
    .to_string()
}

/// Asserts that `addr` answers a tool call.
fn answers_a_call(addr: SocketAddr) {
    let (status, body) = post(addr, &word_count());
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "Lines: 1, Words: 2, Characters: 4"
    );
}

#[test]
fn the_bound_address_is_printed_on_stderr_and_served() {
    let served = Served::binary(&[]);
    assert!(served.addr.ip().is_loopback() && served.addr.port() != 0);
    assert_eq!(
        served.listening,
        format!("toolsmith: listening on http://{}/mcp", served.addr)
    );
    answers_a_call(served.addr);
}

#[test]
fn a_host_name_is_resolved_and_served() {
    let served = Served::start(toolsmith(&["--http", "localhost:0"]));
    assert!(served.addr.ip().is_loopback(), "{}", served.listening);
    let host = format!("localhost:{}", served.addr.port());
    let (status, body) = post_as(served.addr, &host, "", word_count().as_bytes());
    assert_eq!(status, 200, "{body}");
}

#[test]
fn an_address_that_does_not_resolve_is_a_usage_error() {
    let (code, stderr) = run_bounded(toolsmith(&["--http", "localhost"]));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("cannot listen on `localhost`"), "{stderr}");
}

/// A stand-in for gh in a directory of its own: it marks that it started, sleeps `seconds` and
/// prints an empty list. The directory is first on `PATH` and the working directory, so it is
/// the gh the GitHub toolset runs.
struct SlowGh {
    dir: PathBuf,
    started: PathBuf,
}

impl SlowGh {
    fn new(test: &str, seconds: u32) -> SlowGh {
        use std::os::unix::fs::PermissionsExt;
        let dir =
            std::env::temp_dir().join(format!("toolsmith-mcp-http-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let started = dir.join("started");
        let gh = dir.join("gh");
        std::fs::write(
            &gh,
            format!(
                "#!/bin/sh\n: > '{}'\nsleep {seconds}\necho '[]'\n",
                started.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
        SlowGh { dir, started }
    }

    /// `toolsmith mcp --http 127.0.0.1:0 ARGS` with this gh.
    fn serve(&self, args: &[&str]) -> Served {
        let mut command = toolsmith(&[&["--http", "127.0.0.1:0"], args].concat());
        let path = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(
            std::iter::once(self.dir.clone()).chain(std::env::split_paths(&path)),
        )
        .unwrap();
        command.env("PATH", path).current_dir(&self.dir);
        Served::start(command)
    }

    /// A client calling a GitHub tool in the background: its status and body.
    fn call(addr: SocketAddr) -> std::thread::JoinHandle<(u16, String)> {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "github_list_issues", "arguments": {"repo": "a/b"}}});
        std::thread::spawn(move || post(addr, &call.to_string()))
    }

    /// Waits (bounded) until gh has started: a call is in flight.
    fn wait_until_started(&self) {
        let started = Instant::now();
        while !self.started.exists() {
            assert!(started.elapsed() < PATIENCE, "gh never started");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for SlowGh {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn sigterm_lets_a_call_in_flight_finish_refuses_new_connections_and_exits_0() {
    if system_program("kill").is_none() {
        return;
    }
    let gh = SlowGh::new("sigterm", 2);
    let mut served = gh.serve(&[]);
    let client = SlowGh::call(served.addr);
    gh.wait_until_started();
    served.signal("TERM");
    let signalled = Instant::now();
    while TcpStream::connect_timeout(&served.addr, PATIENCE).is_ok() {
        assert!(
            signalled.elapsed() < PATIENCE,
            "still accepting connections"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (status, body) = client.join().unwrap();
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"], "No issues found",
        "{answer}"
    );
    let exit = served.exited_within(PATIENCE).expect("exited");
    assert_eq!(exit.code(), Some(0), "{exit}");
    let stderr = served.rest_of_stderr();
    assert_eq!(stderr[0], "toolsmith: received SIGTERM", "{stderr:?}");
    assert_eq!(stderr.last().unwrap(), "toolsmith: stopped", "{stderr:?}");
}

#[test]
fn sigint_stops_the_server_with_status_0() {
    if system_program("kill").is_none() {
        return;
    }
    let mut served = Served::binary(&[]);
    answers_a_call(served.addr);
    served.signal("INT");
    let exit = served.exited_within(PATIENCE).expect("exited");
    assert_eq!(exit.code(), Some(0), "{exit}");
    assert_eq!(
        served.rest_of_stderr(),
        ["toolsmith: received SIGINT", "toolsmith: stopped"]
    );
}

#[test]
fn stats_are_written_on_sigusr1_and_when_sigterm_stops_the_server() {
    if system_program("kill").is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("toolsmith-http-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("stats.json");
    let read =
        || -> Value { serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap() };
    let mut served = Served::binary(&["--stats", file.to_str().unwrap()]);
    assert_eq!(read(), json!({"tools": {}}));
    answers_a_call(served.addr);
    served.signal("USR1");
    let written = format!("toolsmith: wrote the statistics to `{}`", file.display());
    served.stderr_until(&written);
    assert_eq!(read()["tools"]["text_wc"]["calls"], 1);

    let messy = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                       "params": {"name": "text_wc", "arguments": {"text": "a", "chars_only": "yes", "lines": 1}}});
    let (status, body) = post(served.addr, &messy.to_string());
    assert_eq!(status, 200, "{body}");
    served.signal("TERM");
    let exit = served.exited_within(PATIENCE).expect("exited");
    assert_eq!(exit.code(), Some(0), "{exit}");
    // Once the server has stopped, whatever stopped it.
    let stderr = served.rest_of_stderr();
    assert_eq!(stderr[0], "toolsmith: received SIGTERM", "{stderr:?}");
    assert_eq!(stderr[stderr.len() - 2..], ["toolsmith: stopped", &written]);
    let stats = read();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        stats,
        json!({"tools": {"text_wc": {
            "calls": 2, "succeeded": 1, "repaired": 0, "repairs": {},
            "errors": {"invalid_arguments": 1},
            "argument_errors": {"extra_forbidden": 1},
        }}})
    );
}

#[test]
fn a_call_running_past_the_shutdown_timeout_does_not_keep_the_process_alive() {
    if system_program("kill").is_none() {
        return;
    }
    let gh = SlowGh::new("deadline", 8);
    let mut served = gh.serve(&["--shutdown-timeout", "1"]);
    let client = SlowGh::call(served.addr);
    gh.wait_until_started();
    served.signal("TERM");
    let signalled = Instant::now();
    let exit = served.exited_within(PATIENCE).expect("exited");
    assert!(
        signalled.elapsed() < Duration::from_secs(5),
        "{:?}",
        signalled.elapsed()
    );
    assert_eq!(exit.code(), Some(0), "{exit}");
    // The client's connection was closed without an answer (its thread found no response).
    assert!(client.join().is_err(), "the call was answered");
    let stderr = served.rest_of_stderr();
    assert!(
        stderr
            .iter()
            .any(|line| line.starts_with("toolsmith: warning: 1 connections were still busy")),
        "{stderr:?}"
    );
}

/// Raises this process's own soft limit of open files to `at_least`, with `prlimit`, when it
/// is lower (it cannot open a thousand connections under 1024 otherwise).
fn raise_own_file_limit(prlimit: &Path, at_least: u64) {
    let output = Command::new(prlimit)
        .args([
            "--pid",
            &std::process::id().to_string(),
            "--nofile",
            "--raw",
            "--noheadings",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let soft: u64 = text
        .split_whitespace()
        .find_map(|word| word.parse().ok())
        .unwrap_or(0);
    if soft < at_least {
        let status = Command::new(prlimit)
            .args(["--pid", &std::process::id().to_string()])
            .arg(format!("--nofile={at_least}:"))
            .status()
            .unwrap();
        assert!(
            status.success(),
            "cannot raise this test's limit of open files"
        );
    }
}

/// `toolsmith mcp --http 127.0.0.1:0 ARGS` under a limit of 1024 open files.
fn serve_with_1024_files(prlimit: &Path, args: &[&str]) -> Served {
    let mut command = Command::new(prlimit);
    command
        .arg("--nofile=1024:1024")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["mcp", "--http", "127.0.0.1:0"])
        .args(args);
    Served::start(command)
}

/// 1,100 connections that say nothing.
fn idle_connections(addr: SocketAddr) -> Vec<TcpStream> {
    (0..1100)
        .map(|i| {
            TcpStream::connect_timeout(&addr, PATIENCE)
                .unwrap_or_else(|e| panic!("connection {i}: {e}"))
        })
        .collect()
}

#[test]
fn a_thousand_idle_connections_under_a_limit_of_1024_files_do_not_stop_the_server() {
    let Some(prlimit) = system_program("prlimit") else {
        return;
    };
    let _one_at_a_time = MANY_CONNECTIONS.lock().unwrap_or_else(|e| e.into_inner());
    raise_own_file_limit(&prlimit, 4096);
    let mut served = serve_with_1024_files(&prlimit, &[]);
    let idle = idle_connections(served.addr);
    std::thread::sleep(Duration::from_secs(1));
    assert!(served.is_running(), "{:?}", served.rest_of_stderr());
    drop(idle);
    answers_a_call(served.addr);
    assert!(served.is_running());
}

#[test]
fn accept_errors_are_logged_and_retried_until_files_free_up() {
    let Some(prlimit) = system_program("prlimit") else {
        return;
    };
    let _one_at_a_time = MANY_CONNECTIONS.lock().unwrap_or_else(|e| e.into_inner());
    raise_own_file_limit(&prlimit, 4096);
    // More connections allowed than files: accepting runs out of file descriptors.
    let mut served = serve_with_1024_files(&prlimit, &["--max-connections", "4096"]);
    let idle = idle_connections(served.addr);
    let warned = served.stderr_until("cannot accept a connection");
    assert!(
        warned
            .last()
            .unwrap()
            .starts_with("toolsmith: warning: cannot accept a connection (Too many open files"),
        "{warned:?}"
    );
    std::thread::sleep(Duration::from_secs(1));
    assert!(served.is_running());
    drop(idle);
    answers_a_call(served.addr);
    assert!(served.is_running());
}

/// How long until the server closes `stream` (whatever it sends first is read and dropped).
fn closed_after(mut stream: TcpStream) -> Duration {
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let started = Instant::now();
    let mut chunk = [0; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return started.elapsed(),
            Ok(_) => assert!(started.elapsed() < PATIENCE, "still open"),
        }
    }
}

#[test]
fn the_timeout_flags_bound_each_wait_for_a_client() {
    let served = Served::binary(&[
        "--header-timeout",
        "0.5",
        "--body-timeout",
        "0.5",
        "--idle-timeout",
        "0.5",
    ]);
    let connect = || TcpStream::connect_timeout(&served.addr, PATIENCE).unwrap();
    // A client that says nothing, and one that stops in the middle of its headers.
    let silent = closed_after(connect());
    let mut half = connect();
    half.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    let half = closed_after(half);
    // A body that stops short of its length: 408.
    let mut stalled = connect();
    stalled
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Content-Length: 50\r\n\r\n{\"jsonrpc\"",
        )
        .unwrap();
    stalled.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut answer = String::new();
    stalled.read_to_string(&mut answer).unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 408 Request Timeout"),
        "{answer}"
    );
    // A kept-alive connection after its answer.
    let mut kept = connect();
    let body = word_count();
    write!(
        kept,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let idle = closed_after(kept);
    for (wait, took) in [("silent", silent), ("half", half), ("idle", idle)] {
        assert!(
            took >= Duration::from_millis(400) && took < Duration::from_secs(5),
            "{wait}: {took:?}"
        );
    }
}

/// Runs `command` (killed after [`PATIENCE`]); its exit code and stderr.
fn run_bounded(mut command: Command) -> (Option<i32>, String) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > PATIENCE {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.code(), stderr)
}

#[test]
fn a_limit_of_zero_is_a_usage_error_naming_the_flag() {
    let at_least_one = "must be at least 1";
    let above_zero = "must be a number of seconds above zero";
    let http: &[&str] = &["--http", "127.0.0.1:0"];
    let sessions: &[&str] = &["--http", "127.0.0.1:0", "--sessions"];
    let cases: [(&[&str], &str, &str); 9] = [
        (sessions, "--max-sessions", at_least_one),
        (sessions, "--session-idle-timeout", above_zero),
        (&[], "--max-request-bytes", at_least_one),
        (&[], "--max-concurrent-calls", at_least_one),
        (&[], "--call-timeout", above_zero),
        (http, "--max-connections", at_least_one),
        (http, "--header-timeout", above_zero),
        (http, "--body-timeout", above_zero),
        (http, "--idle-timeout", above_zero),
    ];
    for (transport, flag, why) in cases {
        let (code, stderr) = run_bounded(toolsmith(&[transport, &[flag, "0"]].concat()));
        assert_eq!(code, Some(2), "{flag} 0: {stderr}");
        assert!(
            stderr.contains(&format!("'{flag} <")) && stderr.contains(why),
            "{flag} 0: {stderr}"
        );
    }
}

#[test]
fn with_sessions_an_initialize_opens_one_and_past_the_limit_is_refused() {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
    .to_string();
    let served = Served::binary(&["--sessions", "--max-sessions", "1"]);
    let (status, body) = post(served.addr, &initialize);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"protocolVersion\""), "{body}");
    let (status, body) = post(served.addr, &initialize);
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("the server has 1 sessions open, its limit; try again later"),
        "{body}"
    );
    // Sessions are for HTTP, and their limits for sessions.
    let (code, stderr) = run_bounded(toolsmith(&["--sessions"]));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--http"), "{stderr}");
    let (code, stderr) = run_bounded(toolsmith(&["--http", "127.0.0.1:0", "--max-sessions", "2"]));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--sessions"), "{stderr}");
}

#[test]
fn with_sessions_sigterm_ends_a_sessions_stream_and_exits_at_once() {
    if system_program("kill").is_none() {
        return;
    }
    // A shutdown timeout longer than the test's patience: only a stream that ends lets the
    // server exit in time.
    let mut served = Served::binary(&["--sessions", "--shutdown-timeout", "60"]);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
    .to_string();
    let mut stream = TcpStream::connect_timeout(&served.addr, PATIENCE).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{initialize}",
        initialize.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let session = response
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id: {response}"));
    // The session's stream of server messages, open.
    let mut events = TcpStream::connect_timeout(&served.addr, PATIENCE).unwrap();
    events.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        events,
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: {session}\r\n\r\n"
    )
    .unwrap();
    let mut status = [0u8; 12];
    events.read_exact(&mut status).unwrap();
    assert_eq!(&status, b"HTTP/1.1 200");
    served.signal("TERM");
    let exit = served
        .exited_within(Duration::from_secs(5))
        .expect("exited at once");
    assert_eq!(exit.code(), Some(0), "{exit}");
}

#[test]
fn a_timeout_past_a_year_is_a_usage_error_naming_the_flag() {
    let (code, stderr) = run_bounded(toolsmith(&["--call-timeout", "1e12"]));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`--call-timeout` must be at most a year"),
        "{stderr}"
    );
}

#[test]
fn an_allowed_host_or_origin_that_does_not_read_is_a_usage_error_naming_the_flag() {
    let cases = [
        ("--allow-host", "not a host"),
        ("--allow-origin", "app.example.com"),
    ];
    for (flag, value) in cases {
        let (code, stderr) = run_bounded(toolsmith(&["--http", "127.0.0.1:0", flag, value]));
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "toolsmith: error: cannot serve MCP: `{flag}` lists `{value}`"
            )),
            "{stderr}"
        );
    }
}

#[test]
fn http_flags_need_http() {
    let (code, stderr) = run_bounded(toolsmith(&["--max-connections", "5"]));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--http"), "{stderr}");
}

#[test]
fn allowed_hosts_add_to_the_loopback_names() {
    let served = Served::binary(&["--allow-host", "mcp.example.com"]);
    let port = served.addr.port();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        "mcp.example.com".into(),
    ] {
        let (status, body) = post_as(served.addr, &host, "", word_count().as_bytes());
        assert_eq!(status, 200, "{host}: {body}");
    }
    let (status, body) = post_as(served.addr, "evil.example", "", word_count().as_bytes());
    assert_eq!(status, 403, "{body}");
}

#[test]
fn a_foreign_origin_is_refused_and_a_listed_one_answered() {
    let served = Served::binary(&["--allow-origin", "https://app.example.com"]);
    let (status, body) = post_as(
        served.addr,
        "127.0.0.1",
        "Origin: http://evil.com\r\n",
        word_count().as_bytes(),
    );
    assert_eq!(status, 403, "{body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["id"], Value::Null, "{error}");
    assert_eq!(error["error"]["code"], -32600, "{error}");
    for origin in ["https://app.example.com", "http://localhost:6274"] {
        let (status, body) = post_as(
            served.addr,
            "127.0.0.1",
            &format!("Origin: {origin}\r\n"),
            word_count().as_bytes(),
        );
        assert_eq!(status, 200, "{origin}: {body}");
    }
}

#[test]
fn bodies_the_issue_found_answered_in_plain_text_are_json_rpc_errors() {
    let served = Served::binary(&[]);
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let bodies: [(&[u8], i64); 3] = [
        (br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600),
        (deep.as_bytes(), -32700),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}",
            -32700,
        ),
    ];
    for (body, code) in bodies {
        let (status, answer) = post_as(served.addr, "127.0.0.1", "", body);
        assert_eq!(status, 400, "{answer}");
        let error: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(error["error"]["code"], code, "{error}");
        assert_eq!(error["id"], Value::Null, "{error}");
    }
}

/// One command of the README's session and what it prints.
struct Step {
    command: String,
    shown: Vec<String>,
}

/// The README's `curl` session: its commands (continuation lines joined) and their outputs.
fn readme_session() -> Vec<Step> {
    let readme = common::readme();
    let start = readme
        .find("<!-- readme-curl-session")
        .expect("the session's marker");
    let block = &readme[start..];
    let block = &block[block.find("```console\n").expect("a console block") + 11..];
    let block = &block[..block.find("\n```").expect("the block's end")];
    let mut steps: Vec<Step> = Vec::new();
    let mut continued = false;
    for line in block.lines() {
        if continued {
            let step = steps.last_mut().unwrap();
            step.command.push(' ');
            step.command
                .push_str(line.trim().trim_end_matches('\\').trim_end());
            continued = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            steps.push(Step {
                command: command.trim_end_matches('\\').trim_end().to_owned(),
                shown: Vec::new(),
            });
            continued = line.ends_with('\\');
        } else {
            steps
                .last_mut()
                .expect("a command first")
                .shown
                .push(line.to_owned());
        }
    }
    steps
}

#[test]
fn the_readme_curl_session_runs_as_written() {
    let Some(curl) = system_program("curl") else {
        return;
    };
    if system_program("kill").is_none() {
        return;
    }
    let steps = readme_session();
    let [serve, calls @ .., stop] = steps.as_slice() else {
        panic!("the session starts a server, sends requests and stops it");
    };
    // The server, as the README starts it, on a free port instead of 8080.
    let readme_addr = "127.0.0.1:8080";
    assert_eq!(
        serve.command,
        format!("toolsmith mcp --http {readme_addr} &")
    );
    let mut served = Served::binary(&[]);
    let port = served.addr.port().to_string();
    let on_our_port = |text: &str| text.replace("8080", &port);
    assert_eq!(
        vec![served.listening.clone()],
        serve
            .shown
            .iter()
            .map(|l| on_our_port(l))
            .collect::<Vec<_>>()
    );
    let mut methods = Vec::new();
    for step in calls {
        let args = common::words(&step.command);
        assert_eq!(args[0], "curl", "{}", step.command);
        let args: Vec<String> = args[1..].iter().map(|arg| on_our_port(arg)).collect();
        let output = Command::new(&curl).args(&args).output().unwrap();
        assert!(output.status.success(), "{}: {output:?}", step.command);
        let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
        let request: Value =
            serde_json::from_str(&args[args.iter().position(|a| a == "-d").unwrap() + 1]).unwrap();
        methods.push(request["method"].as_str().unwrap().to_owned());
        let shown = step.shown.join("\n");
        match serde_json::from_str::<Value>(&shown) {
            Ok(shown) => assert_eq!(printed, shown, "{}", step.command),
            // Shortened with `...`: what is shown begins what is printed, and it answers.
            Err(_) => {
                let before = &shown[..shown.find("...").expect("shortened with ...")];
                let printed_text = String::from_utf8_lossy(&output.stdout);
                assert!(printed_text.starts_with(before), "{printed_text}");
                assert_eq!(printed["id"], request["id"]);
                assert!(printed["result"].is_object(), "{printed}");
            }
        }
    }
    assert_eq!(methods, ["initialize", "tools/list", "tools/call"]);
    assert_eq!(stop.command, "kill %1");
    served.signal("TERM");
    let exit = served.exited_within(PATIENCE).expect("exited");
    assert_eq!(exit.code(), Some(0));
    // On a busy machine the server may not yet have read the end of the connection the last
    // curl closed, and then says it waits for it: a line the README leaves out.
    let said: Vec<String> = served
        .rest_of_stderr()
        .into_iter()
        .filter(|line| !line.starts_with("toolsmith: stopping: waiting up to"))
        .collect();
    assert_eq!(said, stop.shown);
}

/// A gateway over HTTP in front of a server over HTTP, both the real binary: each request to
/// the gateway stands alone (stateless), coerced and checked there, and answered by the server
/// behind it.
#[test]
fn a_gateway_over_http_serves_an_http_servers_tools() {
    let upstream = Served::binary(&["--tools", "text_wc"]);
    let url = format!("http://{}/mcp", upstream.addr);
    let prefix = format!("127001{}", upstream.addr.port());
    let gateway = Served::binary(&[
        "--mcp-url",
        &url,
        "--mcp-prefix",
        "--tools",
        &format!("{prefix}_*"),
    ]);
    let (status, body) = post(
        gateway.addr,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let wc = format!("{prefix}_text_wc");
    assert_eq!(names, [wc.as_str()]);

    let call = |arguments: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": wc, "arguments": arguments}});
        let (status, body) = post(gateway.addr, &body.to_string());
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<Value>(&body).unwrap()
    };
    let answer = call(json!({"text": "a b\n"}));
    assert_eq!(
        answer["result"]["content"][0]["text"], "Lines: 1, Words: 2, Characters: 4",
        "{answer}"
    );
    // Refused at the gateway, in the words a model reads.
    let answer = call(json!({}));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let message = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(message.contains("`text`"), "{message}");
}
