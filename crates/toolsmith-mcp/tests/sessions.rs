//! Streamable HTTP with sessions (`McpConfig::with_sessions`): `initialize` opens one, later
//! requests carry its id, `DELETE` ends it, an unknown id is 404, the number open is bounded
//! with a clear refusal, and an idle one is closed; without sessions, none is ever issued.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith_mcp::{McpConfig, McpServer};

/// A server of the test tools over HTTP under `config`, on a free loopback port.
async fn serve(config: McpConfig) -> u16 {
    let (registry, _gate) = common::registry();
    let server = McpServer::new(registry, config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { server.serve_http(listener, std::future::pending()).await });
    port
}

/// An HTTP answer: status, headers (lowercase names), and the JSON-RPC messages of its body
/// (a JSON body, or the `data:` of each event of an event stream).
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    messages: Vec<Value>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `method` with `body` (JSON-RPC, for a POST) and `session` (its id, if any).
async fn send(port: u16, method: &str, session: Option<&str>, body: Option<Value>) -> Answer {
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let session = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
         {session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut response))
        .await
        .expect("the answer ends")
        .unwrap();
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let messages = match serde_json::from_str::<Value>(body.trim()) {
        Ok(message) => vec![message],
        // An event stream (chunked): each `data:` line that is JSON.
        Err(_) => body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect(),
    };
    Answer {
        status,
        headers,
        messages,
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
}

/// Opens a session: its id.
async fn open(port: u16) -> String {
    let answer = send(port, "POST", None, Some(initialize())).await;
    assert_eq!(answer.status, 200, "{:?}", answer.messages);
    let id = answer
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let accepted = send(port, "POST", Some(&id), Some(initialized)).await;
    assert_eq!(accepted.status, 202);
    id
}

fn call(tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_is_opened_used_and_ended() {
    let port = serve(McpConfig::default().with_sessions(true)).await;
    let id = open(port).await;
    let answer = send(
        port,
        "POST",
        Some(&id),
        Some(call("add", json!({"a": 2, "b": "40"}))),
    )
    .await;
    assert_eq!(answer.status, 200);
    let result = answer
        .messages
        .iter()
        .find(|m| m["id"] == 2)
        .expect("the call's answer");
    assert_eq!(result["result"]["content"][0]["text"], "42", "{result}");

    let unknown = send(
        port,
        "POST",
        Some("no-such-session"),
        Some(call("add", json!({"a": 1, "b": 1}))),
    )
    .await;
    assert_eq!(unknown.status, 404);

    let ended = send(port, "DELETE", Some(&id), None).await;
    assert_eq!(ended.status, 202);
    let after = send(
        port,
        "POST",
        Some(&id),
        Some(call("add", json!({"a": 1, "b": 1}))),
    )
    .await;
    assert_eq!(after.status, 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn past_the_limit_an_initialize_is_refused_until_a_session_ends() {
    let port = serve(
        McpConfig::default()
            .with_sessions(true)
            .with_max_sessions(1),
    )
    .await;
    let first = open(port).await;
    let refused = send(port, "POST", None, Some(initialize())).await;
    assert_eq!(refused.status, 503);
    let error = &refused.messages[0];
    assert_eq!(error["id"], 1, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the server has 1 sessions open, its limit; try again later"),
        "{error}"
    );
    send(port, "DELETE", Some(&first), None).await;
    open(port).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_session_is_closed() {
    let config = McpConfig::default()
        .with_sessions(true)
        .with_session_idle_timeout(Duration::from_millis(200));
    let port = serve(config).await;
    let id = open(port).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let answer = send(
            port,
            "POST",
            Some(&id),
            Some(call("add", json!({"a": 1, "b": 1}))),
        )
        .await;
        if answer.status == 404 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the session stayed open"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_sessions_none_is_issued_and_only_post_is_served() {
    let port = serve(McpConfig::default()).await;
    let answer = send(port, "POST", None, Some(initialize())).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("mcp-session-id"), None);
    let get = send(port, "GET", None, None).await;
    assert_eq!(get.status, 405);
    assert_eq!(get.header("allow"), Some("POST"));
    // With sessions, GET and DELETE are a session's; another method is still refused.
    let port = serve(McpConfig::default().with_sessions(true)).await;
    let put = send(port, "PUT", None, Some(initialize())).await;
    assert_eq!(put.status, 405);
    assert_eq!(put.header("allow"), Some("POST, GET, DELETE"));
}

#[tokio::test(flavor = "multi_thread")]
async fn get_opens_the_sessions_stream_of_server_messages() {
    let port = serve(McpConfig::default().with_sessions(true)).await;
    let id = open(port).await;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: {id}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut byte))
            .await
            .expect("the stream's head comes")
            .unwrap();
        assert_eq!(read, 1, "closed early: {}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
}
