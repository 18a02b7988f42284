//! `toolsmith mcp`, run as an MCP client runs it: JSON-RPC lines in on stdin, and nothing but
//! JSON-RPC lines out on stdout; the tools it serves (`--tools`, `--rename`), and the statistics
//! it writes (`--stats`), at once, on SIGUSR1 and when SIGTERM ends it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn toolsmith_mcp(args: &[&str], lines: &[Value]) -> (i32, Vec<Value>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("mcp")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A server that refused its command line has exited already; its pipe is closed.
    for line in lines {
        let _ = writeln!(stdin, "{line}");
    }
    let _ = writeln!(stdin, "not json");
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let messages = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}")))
        .collect();
    let stderr = String::from_utf8(output.stderr).unwrap();
    (output.status.code().unwrap(), messages, stderr)
}

#[test]
fn mcp_over_stdio_prints_only_protocol_messages_and_ends_when_stdin_closes() {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (code, messages, stderr) = toolsmith_mcp(&[], &[initialize, initialized, list]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages.iter().all(|m| m["jsonrpc"] == "2.0"),
        "{messages:?}"
    );
    let by_id = |id: i64| messages.iter().find(|m| m["id"] == id).unwrap();
    assert_eq!(by_id(1)["result"]["capabilities"]["tools"], json!({}));
    assert!(by_id(2)["result"]["tools"].is_array());
    let parse_error = messages.iter().find(|m| m["id"].is_null()).unwrap();
    assert_eq!(parse_error["error"]["code"], -32700);
}

#[test]
fn mcp_refuses_a_call_timeout_that_is_not_a_duration() {
    let (code, messages, stderr) = toolsmith_mcp(&["--call-timeout=-1"], &[]);
    assert_eq!(code, 2);
    assert!(messages.is_empty());
    assert!(
        stderr.contains("'-1'") && stderr.contains("--call-timeout"),
        "{stderr}"
    );
}

#[test]
fn a_tools_pattern_that_matches_no_tool_is_a_usage_error_listing_the_tools() {
    let (code, messages, stderr) = toolsmith_mcp(&["--tools", "text_*", "--tools", "txt_*"], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(messages.is_empty());
    assert!(
        stderr.starts_with(
            "toolsmith: error: `--tools`: no tool matches `txt_*`; the tools are: github_"
        ),
        "{stderr}"
    );
}

#[test]
fn a_rename_onto_a_name_taken_is_a_usage_error() {
    let (code, _, stderr) = toolsmith_mcp(&["--rename", "text_wc=text_grep"], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        "toolsmith: error: `--rename`: two tools would be named `text_grep`\n"
    );
}

#[test]
fn a_stats_file_that_cannot_be_written_is_a_usage_error_before_serving() {
    let file = std::env::temp_dir()
        .join(format!("toolsmith-no-such-dir-{}", std::process::id()))
        .join("stats.json");
    let (code, messages, stderr) = toolsmith_mcp(&["--stats", file.to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(messages.is_empty());
    assert!(
        stderr.starts_with(&format!(
            "toolsmith: error: cannot write the statistics to `{}`: ",
            file.display()
        )),
        "{stderr}"
    );
}

/// `toolsmith mcp` over stdio, a client talking to it line by line, its stderr read as it comes.
struct Session {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    stderr: std::sync::mpsc::Receiver<String>,
}

impl Session {
    /// The server started with `args`, the MCP handshake done.
    fn start(args: &[&str]) -> Session {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (lines, stderr) = std::sync::mpsc::channel();
        let pipe = std::io::BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in pipe.lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let mut session = Session {
            stdin: child.stdin.take().unwrap(),
            stdout: std::io::BufReader::new(child.stdout.take().unwrap()).lines(),
            child,
            stderr,
        };
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}});
        session.ask(&initialize);
        writeln!(
            session.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        session
    }

    /// Sends `request` and reads the answer.
    fn ask(&mut self, request: &Value) -> Value {
        writeln!(self.stdin, "{request}").unwrap();
        let line = self.stdout.next().unwrap().unwrap();
        serde_json::from_str(&line).unwrap()
    }

    /// Calls the tool `name` with `arguments`; the result.
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.ask(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                       "params": {"name": name, "arguments": arguments}}));
        answer["result"].clone()
    }

    /// Sends the signal `name` (`USR1`, `TERM`) with `kill`.
    fn signal(&self, name: &str) {
        let kill = toolsmith_testkit::system_program("kill").expect("a `kill` program on PATH");
        let status = Command::new(kill)
            .args(["-s", name, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -s {name}: {status}");
    }

    /// Waits (20 s at most) for a stderr line; it.
    fn stderr_line(&self) -> String {
        self.stderr
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("a line on stderr")
    }

    /// Waits (20 s at most) for the server to exit; its status code.
    fn exit_code(mut self) -> Option<i32> {
        for _ in 0..1000 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!("the server did not exit");
    }
}

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn stats_are_written_at_once_on_sigusr1_and_when_sigterm_ends_the_stdio_server() {
    let dir = std::env::temp_dir().join(format!("toolsmith-stdio-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("stats.json");
    let mut session = Session::start(&["--stats", file.to_str().unwrap()]);
    assert_eq!(read_json(&file), json!({"tools": {}}));

    let messy = session.call("text_wc", json!({"text": "a b", "words_only": "TRUE"}));
    assert_eq!(messy["content"][0]["text"], "Words: 2", "{messy}");
    session.signal("USR1");
    let written = format!("toolsmith: wrote the statistics to `{}`", file.display());
    assert_eq!(session.stderr_line(), written);
    let stats = read_json(&file);
    assert_eq!(stats["tools"]["text_wc"]["calls"], 1, "{stats}");
    assert_eq!(
        stats["tools"]["text_wc"]["repairs"],
        json!({"bool_from_string": 1})
    );

    let failed = session.call("text_rg", json!({"text": "a", "pattern": "[z-a]"}));
    assert_eq!(failed["isError"], true, "{failed}");
    session.signal("TERM");
    assert_eq!(session.stderr_line(), "toolsmith: received SIGTERM");
    assert_eq!(session.stderr_line(), written);
    assert_eq!(session.exit_code(), Some(0));
    let stats = read_json(&file);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(stats["tools"]["text_wc"]["calls"], 1, "{stats}");
    assert_eq!(
        stats["tools"]["text_rg"],
        json!({"calls": 1, "succeeded": 0, "repaired": 0, "repairs": {},
               "errors": {"failed": 1}, "argument_errors": {}})
    );
}
