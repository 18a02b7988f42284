//! `toolsmith mcp`, run as an MCP client runs it: JSON-RPC lines in on stdin, and nothing but
//! JSON-RPC lines out on stdout.
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
