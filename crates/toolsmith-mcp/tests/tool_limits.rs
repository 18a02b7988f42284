//! A tool's own argument limits hold over MCP: the server calls each tool under the limits it
//! states, in place of the configured policy's, once a request is within the server's own cap.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use toolsmith::{Limits, Registry};
use toolsmith_mcp::{McpConfig, McpServer};

/// 1.5 MB: more than the default policy's longest string (1 MiB).
const BIG: usize = 1_500_000;

fn documents() -> Limits {
    Limits {
        max_string_bytes: 4 << 20,
        max_input_bytes: 8 << 20,
        ..Limits::default()
    }
}

/// Counts the bytes of a document.
#[toolsmith::tool(limits = documents)]
fn byte_count(document: String) -> usize {
    document.len()
}

/// Counts the bytes of a note.
#[toolsmith::tool]
fn note_length(note: String) -> usize {
    note.len()
}

struct Client {
    write: DuplexStream,
    lines: Lines<BufReader<DuplexStream>>,
    next_id: u64,
}

impl Client {
    /// A server for the two tools under `config`, and an initialized client of it.
    async fn connect(config: McpConfig) -> Client {
        let mut registry = Registry::new();
        registry
            .add(Arc::new(ByteCount))
            .unwrap()
            .add(Arc::new(NoteLength))
            .unwrap();
        let server = McpServer::new(registry, config).unwrap();
        let (client_write, server_read) = tokio::io::duplex(1 << 16);
        let (server_write, client_read) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move { server.serve(server_read, server_write).await });
        let mut client = Client {
            write: client_write,
            lines: BufReader::new(client_read).lines(),
            next_id: 0,
        };
        let init = client
            .request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        client
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    async fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.flush().await.unwrap();
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .expect("an answer within a minute")
            .unwrap()
            .expect("a message");
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }
}

/// A message with its numbers ungrouped (`1,048,576` as `1048576`), to look for a number in it
/// however the message groups digits.
fn ungrouped(message: &str) -> String {
    message.replace(',', "")
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_stating_larger_limits_takes_a_string_the_servers_policy_refuses() {
    let mut client = Client::connect(McpConfig::default()).await;
    let answer = client
        .call("byte_count", json!({"document": "x".repeat(BIG)}))
        .await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(text(&answer), BIG.to_string());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_stating_no_limits_is_called_under_the_servers_policy() {
    let mut client = Client::connect(McpConfig::default()).await;
    let answer = client
        .call("note_length", json!({"note": "x".repeat(BIG)}))
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let message = text(&answer);
    assert!(
        ungrouped(message).contains("`note`: expected a string of at most 1048576 bytes"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tools_statement_replaces_the_configured_policys_limits() {
    let mut generous = toolsmith::Policy::default().with_dialect(toolsmith::Dialect::Mcp);
    generous.limits.max_string_bytes = 16 << 20;
    let config = McpConfig::default()
        .with_policy(generous)
        .with_max_request_bytes(32 << 20);
    let mut client = Client::connect(config).await;
    // The tool states 4 MiB: the server's larger policy does not raise it.
    let answer = client
        .call("byte_count", json!({"document": "x".repeat(5 << 20)}))
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        ungrouped(text(&answer)).contains("at most 4194304 bytes"),
        "{answer}"
    );
    // The tool that states nothing gets the configured policy.
    let answer = client
        .call("note_length", json!({"note": "x".repeat(BIG)}))
        .await;
    assert_eq!(text(&answer), BIG.to_string(), "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_servers_own_request_cap_applies_before_a_tools_limits() {
    let config = McpConfig::default().with_max_request_bytes(1 << 20);
    let mut client = Client::connect(config).await;
    let answer = client
        .call("byte_count", json!({"document": "x".repeat(BIG)}))
        .await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
}
