//! Which gh the `toolsmith` binary runs, started as a user starts it: from a directory holding
//! a planted `gh`, with the real gh on `PATH` (behind entries that name the current directory).
//! `toolsmith call` and `toolsmith mcp` both find the real one against the fake GitHub API, and
//! the planted one never runs. Ctrl-C on `toolsmith call` stops the gh it started at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../toolsmith-github/tests/fake_github/mod.rs"]
mod fake_github;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fake_github::{FakeGitHub, TempDir, gh_env};
use serde_json::{Value, json};

/// How long any one run of the binary may take before the test fails (it is killed).
const DEADLINE: Duration = Duration::from_secs(60);

/// A checkout the binary is started in: its directory holds an executable `gh` that only
/// leaves a marker file behind. Beside it, a fake GitHub for the real gh.
struct Checkout {
    fake: FakeGitHub,
    home: TempDir,
}

impl Checkout {
    fn new(name: &str) -> Checkout {
        let checkout = Checkout {
            fake: FakeGitHub::start(),
            home: TempDir::new(&format!("cli-{name}")),
        };
        let workdir = checkout.workdir();
        std::fs::create_dir_all(&workdir).unwrap();
        let planted = workdir.join("gh");
        std::fs::write(
            &planted,
            format!(
                "#!/bin/sh\necho planted > '{}'\necho '{{}}'\n",
                checkout.marker().display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
        checkout
    }

    fn workdir(&self) -> PathBuf {
        self.home.path().join("work")
    }

    fn marker(&self) -> PathBuf {
        self.home.path().join("planted-gh-ran")
    }

    /// `toolsmith ARGS`, started in the checkout with `PATH` set to `path` and gh's
    /// environment pointing at the fake.
    fn toolsmith(&self, path: &str, args: &[&str]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .args(args)
            .current_dir(self.workdir())
            .env("PATH", path)
            .envs(gh_env(&self.fake, self.home.path()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start toolsmith")
    }
}

/// The directory holding the peer gh, or `None` (the test is skipped) when it is not installed.
fn peer_gh_dir() -> Option<String> {
    let gh = toolsmith_testkit::require("gh")?;
    Some(gh.parent().unwrap().display().to_string())
}

/// Everything `pipe` says, read on a thread.
fn read_all(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        let _ = sender.send(text);
    });
    receiver
}

/// Waits for `child` until [`DEADLINE`]; kills it and fails the test past that.
fn wait(child: &mut Child) -> i32 {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("toolsmith did not finish within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `toolsmith ARGS` run to its end: exit code, stdout, stderr.
fn run(checkout: &Checkout, path: &str, args: &[&str]) -> (i32, String, String) {
    let mut child = checkout.toolsmith(path, args);
    drop(child.stdin.take());
    let stdout = read_all(child.stdout.take().unwrap());
    let stderr = read_all(child.stderr.take().unwrap());
    let code = wait(&mut child);
    let stdout = stdout.recv_timeout(DEADLINE).unwrap();
    let stderr = stderr.recv_timeout(DEADLINE).unwrap();
    (code, stdout, stderr)
}

const GET_ISSUE_5: &str = r#"{"issue_number": 5, "repo": "octo/hello"}"#;

#[test]
fn call_runs_the_gh_on_path_and_never_the_one_in_the_working_directory() {
    let Some(peer) = peer_gh_dir() else { return };
    let checkout = Checkout::new("call");
    // Both spellings of "the current directory" come before the real gh's directory.
    let path = format!(":.:{peer}");
    let (code, stdout, stderr) = run(&checkout, &path, &["call", "github_get_issue", GET_ISSUE_5]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("Issue #5: Flaky test\n"), "{stdout}");
    assert_eq!(checkout.fake.operations(), ["IssueByNumber"]);
    assert!(!checkout.marker().exists(), "the planted gh ran");
}

#[test]
fn call_with_only_the_current_directory_on_path_says_gh_is_not_on_path() {
    let checkout = Checkout::new("call-no-gh");
    let (code, stdout, stderr) = run(&checkout, ":.", &["call", "github_get_issue", GET_ISSUE_5]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains(
            "the GitHub CLI (gh) is not installed: `gh` was not found (PATH has no absolute \
             directory to search); the relative PATH entries \"\", \".\" were not searched"
        ),
        "{stderr}"
    );
    assert!(!checkout.marker().exists(), "the planted gh ran");
    assert!(checkout.fake.requests().is_empty());
}

#[test]
fn mcp_over_stdio_runs_the_gh_on_path_and_never_the_one_in_the_working_directory() {
    let Some(peer) = peer_gh_dir() else { return };
    let checkout = Checkout::new("mcp");
    let mut child = checkout.toolsmith(&format!(".::{peer}"), &["mcp"]);
    let stderr = read_all(child.stderr.take().unwrap());
    let (lines, messages) = mpsc::channel();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "github_get_issue",
            "arguments": {"issue_number": 5, "repo": "octo/hello"}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    // Read until the call's answer; stdin stays open until then, as a client keeps it.
    let started = Instant::now();
    let answer = loop {
        let left = DEADLINE.saturating_sub(started.elapsed());
        let Ok(line) = messages.recv_timeout(left) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no answer to tools/call within {DEADLINE:?}");
        };
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            break message;
        }
    };
    drop(stdin);
    let code = wait(&mut child);
    let stderr = stderr.recv_timeout(DEADLINE).unwrap();
    assert_eq!(code, 0, "{stderr}");
    let result = &answer["result"];
    assert_ne!(result["isError"], true, "{answer}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Issue #5: Flaky test\n"), "{text}");
    assert_eq!(checkout.fake.operations(), ["IssueByNumber"]);
    assert!(!checkout.marker().exists(), "the planted gh ran");
}

#[test]
fn sigint_on_a_call_kills_the_gh_it_started_and_the_command_exits_130() {
    let Some(peer) = peer_gh_dir() else { return };
    let checkout = Checkout::new("sigint");
    let mut child = checkout.toolsmith(
        &peer,
        &[
            "call",
            "github_api_request",
            r#"{"endpoint": "repos/octo/hello/slow"}"#,
        ],
    );
    drop(child.stdin.take());
    let stdout = read_all(child.stdout.take().unwrap());
    let stderr = read_all(child.stderr.take().unwrap());
    // gh is running once its request has reached the fake (which holds it for 20 s).
    if !checkout.fake.wait_for_request(DEADLINE) {
        let _ = child.kill();
        panic!("gh sent no request within {DEADLINE:?}");
    }
    let kill = toolsmith_testkit::system_program("kill").expect("a `kill` program on PATH");
    let interrupted = Instant::now();
    let sent = Command::new(kill)
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "{sent}");
    let code = wait(&mut child);
    let took = interrupted.elapsed();
    let stderr = stderr.recv_timeout(DEADLINE).unwrap();
    assert_eq!(code, 130, "{stderr}");
    assert_eq!(stdout.recv_timeout(DEADLINE).unwrap(), "");
    // The tool stopped: no "had not stopped" grace period was waited out.
    assert_eq!(
        stderr.trim_end(),
        "toolsmith: interrupted (SIGINT): the call of `github_api_request` was cancelled"
    );
    assert!(
        took < Duration::from_secs(5),
        "exited {took:?} after SIGINT"
    );
    // gh itself was killed: its connection closed without an answer.
    assert_eq!(
        checkout
            .fake
            .wait_for_abandoned(Duration::from_secs(10))
            .as_deref(),
        Some("/repos/octo/hello/slow")
    );
}
