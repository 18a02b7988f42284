//! Tools state their own argument limits, and the command line honours them: `toolsmith call`
//! reads and coerces a tool's arguments under the tool's limits, and `toolsmith mcp` serves them
//! under the same, after its own cap on a request's size.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith::{Limits, Registry};
use toolsmith_cli::{Exit, run};

/// 1.5 MB of words: more than the default policy's longest string (1 MiB).
fn document() -> String {
    "word ".repeat(300_000)
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs the binary with `stdin`, waiting at most a minute.
fn toolsmith(args: &[&str], stdin: Vec<u8>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolsmith");
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // The binary may stop reading early; that is what some tests check.
        let _ = pipe.write_all(&stdin);
    });
    let out = wait(child, Duration::from_secs(60));
    writer.join().unwrap();
    out
}

/// The child's output, or a panic (after killing it) when it runs longer than `limit`.
fn wait(mut child: Child, limit: Duration) -> Output {
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let read_out = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).map(|_| text)
    });
    let read_err = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut text).map(|_| text)
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("toolsmith ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        code: status.code().expect("exited, not killed by a signal"),
        stdout: read_out.join().unwrap().unwrap(),
        stderr: read_err.join().unwrap().unwrap(),
    }
}

#[test]
fn call_text_wc_on_a_1_5_mb_text_from_stdin_works() {
    let arguments = json!({"text": document()}).to_string();
    let out = toolsmith(&["call", "text_wc", "-"], arguments.into_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "Lines: 1, Words: 300000, Characters: 1500000\n");
}

#[test]
fn a_65_mib_text_is_refused_with_a_size_error_naming_the_limit_and_the_size_sent() {
    let arguments = json!({"text": "x".repeat(65 << 20)}).to_string();
    let out = toolsmith(&["call", "text_wc", "--json", "-"], arguments.into_bytes());
    assert_eq!(out.code, 1, "{}", out.stderr);
    let answer: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(answer["code"], "invalid_arguments", "{answer}");
    let errors = answer["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{answer}");
    assert_eq!(errors[0]["code"], "too_large", "{answer}");
    assert_eq!(errors[0]["path"], "/text", "{answer}");
    let message = errors[0]["message"].as_str().unwrap();
    // However the message groups the digits (67,108,864).
    assert!(
        message.replace(',', "").contains("at most 67108864 bytes"),
        "{message}"
    );
    assert!(
        message
            .replace(',', "")
            .contains("68157440 bytes were sent"),
        "{message}"
    );
}

/// Echoes a note.
#[toolsmith::tool(limits = tiny)]
fn note(text: String) -> String {
    text
}

fn tiny() -> Limits {
    Limits {
        max_string_bytes: 8,
        max_input_bytes: 64,
        ..Limits::default()
    }
}

fn run_with_stdin(registry: &Registry, args: &[&str], stdin: &[u8]) -> (Exit, String, String) {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let argv = std::iter::once("toolsmith").chain(args.iter().copied());
    let exit = run(
        argv,
        || Ok(registry),
        &mut &stdin[..],
        &mut stdout,
        &mut stderr,
    );
    (
        exit,
        String::from_utf8(stdout).unwrap(),
        String::from_utf8(stderr).unwrap(),
    )
}

#[test]
fn call_reads_stdin_as_far_as_the_tools_own_input_limit_and_says_it_holds_more() {
    let mut registry = Registry::new();
    registry.add(Arc::new(Note)).unwrap();
    let (exit, stdout, stderr) = run_with_stdin(
        &registry,
        &["call", "note", "--json", "-"],
        json!({"text": "n".repeat(1000)}).to_string().as_bytes(),
    );
    assert_eq!(exit, Exit::Failure, "{stderr}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    let error = &answer["errors"][0];
    assert_eq!(error["code"], "too_large", "{answer}");
    assert_eq!(
        error["message"],
        "arguments: expected argument text of at most 64 bytes; standard input holds over 64 bytes"
    );
    // Within the input limit, the string limit is the tool's too.
    let (exit, stdout, _) = run_with_stdin(
        &registry,
        &["call", "note", "--json", "-"],
        br#"{"text": "nine bytes"}"#,
    );
    assert_eq!(exit, Exit::Failure);
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["errors"][0]["path"], "/text", "{answer}");
    assert_eq!(answer["errors"][0]["code"], "too_large", "{answer}");
    let (exit, stdout, stderr) = run_with_stdin(
        &registry,
        &["call", "note", "-"],
        br#"{"text": "8 bytes!"}"#,
    );
    assert_eq!(exit, Exit::Success, "{stderr}");
    assert_eq!(stdout, "8 bytes!\n");
}

/// A client of `toolsmith mcp` over stdio: initialize, then one `tools/call` of `text_wc`.
fn mcp_text_wc(flags: &[&str], text: &str) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("mcp")
        .args(flags)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start toolsmith mcp");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "text_wc", "arguments": {"text": text}}}),
    ];
    let writer = std::thread::spawn(move || {
        for line in lines {
            writeln!(stdin, "{line}").unwrap();
        }
        // Kept open until the answer is read: closing stdin ends the server.
        stdin
    });
    let (found, answer) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if message["id"] == 2 {
                let _ = found.send(message);
                return;
            }
        }
    });
    let answer = answer.recv_timeout(Duration::from_secs(60));
    drop(writer.join().unwrap());
    let _ = child.kill();
    let _ = child.wait();
    answer.expect("an answer to the call within a minute")
}

#[test]
fn mcp_over_stdio_serves_a_1_5_mb_text_under_the_tools_own_limits() {
    let answer = mcp_text_wc(&["--max-request-bytes", "20000000"], &document());
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "Lines: 1, Words: 300000, Characters: 1500000"
    );
}

#[test]
fn mcp_over_stdio_applies_its_own_request_cap_before_the_tools_limits() {
    let five_mb = "word ".repeat(1_000_000);
    let refused = mcp_text_wc(&[], &five_mb);
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let served = mcp_text_wc(&["--max-request-bytes", "20000000"], &five_mb);
    assert_eq!(
        served["result"]["content"][0]["text"], "Lines: 1, Words: 1000000, Characters: 5000000",
        "{served}"
    );
}
