//! The command line over tools of its own, as real processes. `toolsmith call` and Ctrl-C:
//! SIGINT sent to the command while its tool runs cancels the tool's context (the tool says that
//! it saw it), and the command exits 130, saying so on stderr. `toolsmith mcp --stats`: a tool's
//! panic is counted.
//!
//! A test binary of its own (`harness = false`): started with `TOOLSMITH_TEST_CLI` set, it is
//! the `toolsmith` command line ([`toolsmith_cli::run`]) over the slow tools defined here, as a
//! program linking its own tools runs it; otherwise it runs the tests, each starting it so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use toolsmith::{Context, Registry, ToolError};

/// Set in the environment of the command line this binary starts as.
const CHILD: &str = "TOOLSMITH_TEST_CLI";

/// Waits a minute, on tokio's timer, unless cancelled first: an async tool built on tokio.
#[toolsmith::tool]
async fn wait_async(ctx: &Context) -> Result<String, ToolError> {
    eprintln!("wait_async: started");
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(60)) => Ok("waited a minute".to_owned()),
        () = ctx.cancelled() => {
            eprintln!("wait_async: saw the cancellation");
            Err(ToolError::Cancelled { tool: ctx.tool_name().unwrap_or_default().to_owned() })
        }
    }
}

/// Waits a minute, looking at its context every 10 ms: a sync tool that stops when cancelled.
#[toolsmith::tool]
fn wait_sync(ctx: &Context) -> Result<String, ToolError> {
    eprintln!("wait_sync: started");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if ctx.is_cancelled() {
            eprintln!("wait_sync: saw the cancellation");
            return Err(ToolError::Cancelled {
                tool: ctx.tool_name().unwrap_or_default().to_owned(),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok("waited a minute".to_owned())
}

/// Sleeps a minute and never looks at its context.
#[toolsmith::tool]
fn stubborn() -> String {
    eprintln!("stubborn: started");
    std::thread::sleep(Duration::from_secs(60));
    "slept a minute".to_owned()
}

/// Whom to book for.
#[derive(serde::Deserialize, toolsmith::ToolType)]
struct Traveller {
    /// Full name.
    name: String,
    /// How many bags.
    #[serde(default = "one")]
    bags: u8,
}

fn one() -> u8 {
    1
}

/// Books a seat, asking the person whom for.
#[toolsmith::tool]
async fn book(ctx: &Context) -> Result<String, ToolError> {
    Ok(match ctx.elicit::<Traveller>("Who is travelling?").await? {
        toolsmith::Elicited::Accept(t) => format!("booked for {} with {} bags", t.name, t.bags),
        other => format!("not booked ({})", other.action()),
    })
}

/// Answers at once.
#[toolsmith::tool]
fn quick() -> String {
    "done".to_owned()
}

/// Panics.
#[toolsmith::tool]
fn explode() -> String {
    panic!("the tool blew up")
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add(Arc::new(WaitAsync)).unwrap();
    registry.add(Arc::new(WaitSync)).unwrap();
    registry.add(Arc::new(Stubborn)).unwrap();
    registry.add(Arc::new(Quick)).unwrap();
    registry.add(Arc::new(Explode)).unwrap();
    registry.add(Arc::new(Book)).unwrap();
    registry
}

/// The command line over [`registry`]; with `TOOLSMITH_TEST_CLI=then-wait`, it waits a minute
/// after the command, saying `waiting` on stderr.
fn command_line() -> ExitCode {
    let registry = registry();
    let exit = toolsmith_cli::run(
        std::env::args_os(),
        || Ok(&registry),
        &mut std::io::stdin(),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    if std::env::var(CHILD).as_deref() == Ok("then-wait") {
        eprintln!("waiting");
        std::thread::sleep(Duration::from_secs(60));
    }
    exit.into()
}

const TESTS: &[(&str, fn())] = &[
    (
        "sigint_cancels_an_async_tool_which_sees_it_and_the_command_exits_130",
        sigint_cancels_an_async_tool_which_sees_it_and_the_command_exits_130,
    ),
    (
        "sigint_cancels_a_sync_tool_that_looks_at_its_context",
        sigint_cancels_a_sync_tool_that_looks_at_its_context,
    ),
    (
        "a_tool_that_ignores_the_cancellation_is_left_after_the_grace",
        a_tool_that_ignores_the_cancellation_is_left_after_the_grace,
    ),
    (
        "a_second_sigint_ends_the_command_without_waiting_for_the_grace",
        a_second_sigint_ends_the_command_without_waiting_for_the_grace,
    ),
    (
        "after_the_call_sigint_ends_the_process_as_before",
        after_the_call_sigint_ends_the_process_as_before,
    ),
    (
        "mcp_stats_count_a_panic_caught_as_an_error",
        mcp_stats_count_a_panic_caught_as_an_error,
    ),
    (
        "what_a_tool_asks_is_asked_on_the_terminal_and_answered_there",
        what_a_tool_asks_is_asked_on_the_terminal_and_answered_there,
    ),
    (
        "sigint_at_a_question_ends_the_command_at_once",
        sigint_at_a_question_ends_the_command_at_once,
    ),
];

fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_some() {
        return command_line();
    }
    let mut failed = 0;
    for (name, test) in TESTS {
        let outcome = std::panic::catch_unwind(test);
        println!(
            "test {name} ... {}",
            if outcome.is_ok() { "ok" } else { "FAILED" }
        );
        failed += usize::from(outcome.is_err());
    }
    let passed = TESTS.len() - failed;
    let result = if failed == 0 { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {result}. {passed} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out"
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// This binary as the command line `args`, its stderr read line by line as it comes.
struct Running {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn start(mode: &str, args: &[&str]) -> Running {
        Running::start_with(mode, args, Stdio::null())
    }

    /// As [`start`](Self::start), its stdin `stdin`.
    fn start_with(mode: &str, args: &[&str], stdin: Stdio) -> Running {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(CHILD, mode)
            .args(args)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Running {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (30 s at most) for a stderr line holding `text`.
    fn wait_for(&mut self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let found = line.contains(text);
                    self.seen.push(line);
                    if found {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        let _ = self.child.kill();
        panic!("no line with {text:?} on stderr: {:?}", self.seen);
    }

    /// Sends SIGINT, as a terminal's Ctrl-C does.
    fn interrupt(&self) {
        let kill = toolsmith_testkit::system_program("kill").expect("a `kill` program on PATH");
        let sent = Command::new(kill)
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "{sent}");
    }

    /// Waits (30 s at most) for the process to end: its status, stdout and the stderr lines.
    fn finish(mut self) -> (ExitStatus, String, Vec<String>) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the command did not end; stderr: {:?}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut stdout = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        self.seen.extend(self.lines.iter());
        (status, stdout, self.seen)
    }
}

fn has_line(lines: &[String], text: &str) -> bool {
    lines.iter().any(|line| line.contains(text))
}

fn sigint_cancels_an_async_tool_which_sees_it_and_the_command_exits_130() {
    let mut command = Running::start("", &["call", "wait_async"]);
    command.wait_for("wait_async: started");
    command.interrupt();
    let (status, stdout, stderr) = command.finish();
    assert_eq!(status.code(), Some(130), "{stderr:?}");
    assert_eq!(stdout, "");
    assert!(
        has_line(&stderr, "wait_async: saw the cancellation"),
        "{stderr:?}"
    );
    assert_eq!(
        stderr.last().map(String::as_str),
        Some("toolsmith: interrupted (SIGINT): the call of `wait_async` was cancelled")
    );
}

fn sigint_cancels_a_sync_tool_that_looks_at_its_context() {
    let mut command = Running::start("", &["call", "wait_sync", "--json"]);
    command.wait_for("wait_sync: started");
    command.interrupt();
    let (status, stdout, stderr) = command.finish();
    assert_eq!(status.code(), Some(130), "{stderr:?}");
    assert_eq!(stdout, "");
    assert!(
        has_line(&stderr, "wait_sync: saw the cancellation"),
        "{stderr:?}"
    );
    assert!(
        has_line(
            &stderr,
            "toolsmith: interrupted (SIGINT): the call of `wait_sync` was cancelled"
        ),
        "{stderr:?}"
    );
}

fn a_tool_that_ignores_the_cancellation_is_left_after_the_grace() {
    let mut command = Running::start("", &["call", "stubborn"]);
    command.wait_for("stubborn: started");
    let interrupted = Instant::now();
    command.interrupt();
    let (status, stdout, stderr) = command.finish();
    assert_eq!(status.code(), Some(130), "{stderr:?}");
    assert_eq!(stdout, "");
    assert!(
        has_line(
            &stderr,
            "toolsmith: interrupted (SIGINT): the call of `stubborn` was cancelled; it had not \
             stopped after 2 s, and the command ends without its answer"
        ),
        "{stderr:?}"
    );
    // The tool would have slept a minute.
    assert!(interrupted.elapsed() < Duration::from_secs(30));
}

fn a_second_sigint_ends_the_command_without_waiting_for_the_grace() {
    let mut command = Running::start("", &["call", "stubborn"]);
    command.wait_for("stubborn: started");
    command.interrupt();
    // The first one is taken before the second is sent.
    std::thread::sleep(Duration::from_millis(200));
    command.interrupt();
    let second = Instant::now();
    let (status, _, stderr) = command.finish();
    assert_eq!(status.code(), Some(130), "{stderr:?}");
    assert!(has_line(&stderr, "had not stopped"), "{stderr:?}");
    assert!(
        second.elapsed() < Duration::from_millis(1500),
        "{:?}",
        second.elapsed()
    );
}

fn after_the_call_sigint_ends_the_process_as_before() {
    let mut command = Running::start("then-wait", &["call", "quick"]);
    command.wait_for("waiting");
    command.interrupt();
    let (status, stdout, stderr) = command.finish();
    assert_eq!(stdout, "done\n");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(2), "{status} {stderr:?}");
    }
}

fn mcp_stats_count_a_panic_caught_as_an_error() {
    let file =
        std::env::temp_dir().join(format!("toolsmith-panic-stats-{}.json", std::process::id()));
    let mut server = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, "")
        .args(["mcp", "--stats", file.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"explode","arguments":{}}}"#,
    ];
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap()).lines();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    // The initialize answer, then the call's: the server keeps serving after the panic.
    let _ = stdout.next();
    let answer = stdout.next().unwrap().unwrap();
    assert!(answer.contains(r#""isError":true"#), "{answer}");
    drop(stdin);
    let status = server.wait().unwrap();
    assert!(status.success(), "{status}");
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(stats["tools"]["explode"]["calls"], 1, "{stats}");
    assert_eq!(
        stats["tools"]["explode"]["errors"],
        serde_json::json!({"panicked": 1})
    );
}

/// A tool's question to a person (`ctx.elicit`) is asked on the terminal, field by field, and
/// the answer is what the tool reads; with the arguments on stdin, nobody can be asked, and the
/// tool hears why.
fn what_a_tool_asks_is_asked_on_the_terminal_and_answered_there() {
    let mut command = Running::start_with("", &["call", "book"], Stdio::piped());
    command.wait_for("toolsmith: a tool asks: Who is travelling?");
    let mut answers = command.child.stdin.take().unwrap();
    // Yes; a name; the default bags.
    answers.write_all(b"y\nAda\n\n").unwrap();
    let (status, stdout, stderr) = command.finish();
    assert_eq!(status.code(), Some(0), "{stderr:?}");
    assert_eq!(stdout, "booked for Ada with 1 bags\n", "{stderr:?}");

    let mut command = Running::start_with("", &["call", "book"], Stdio::piped());
    command.wait_for("toolsmith: a tool asks");
    let mut answers = command.child.stdin.take().unwrap();
    answers.write_all(b"n\n").unwrap();
    let (status, stdout, _) = command.finish();
    assert_eq!(
        (status.code(), stdout.as_str()),
        (Some(0), "not booked (decline)\n")
    );

    let mut command = Running::start_with("", &["call", "book", "-"], Stdio::piped());
    let mut arguments = command.child.stdin.take().unwrap();
    arguments.write_all(b"{}").unwrap();
    drop(arguments);
    let (status, stdout, stderr) = command.finish();
    assert_eq!(status.code(), Some(1), "{stderr:?}");
    assert_eq!(stdout, "");
    assert!(
        has_line(
            &stderr,
            "stdin carried the arguments (`-`), so no answer can be read on it"
        ),
        "{stderr:?}"
    );
}

/// Ctrl-C while the terminal waits for an answer ends the command at once (a read of the
/// terminal cannot be cancelled), as it ends any program waiting there.
fn sigint_at_a_question_ends_the_command_at_once() {
    let mut command = Running::start_with("", &["call", "book"], Stdio::piped());
    command.wait_for("toolsmith: a tool asks: Who is travelling?");
    // The answers' pipe stays open: only the signal can end the wait.
    let _answers = command.child.stdin.take();
    let interrupted = Instant::now();
    command.interrupt();
    let (status, stdout, stderr) = command.finish();
    assert_eq!(stdout, "");
    assert!(
        interrupted.elapsed() < Duration::from_secs(5),
        "{:?}",
        interrupted.elapsed()
    );
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(2), "{status} {stderr:?}");
    }
}
