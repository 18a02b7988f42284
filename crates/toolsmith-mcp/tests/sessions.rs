//! Streamable HTTP with sessions (`McpConfig::with_sessions`): `initialize` opens one, later
//! requests carry its id, `DELETE` ends it, an unknown id is 404, the number open is bounded
//! with a clear refusal, and an idle one is closed (but not while a call runs); a tool asks its
//! client through the session; stopping the server ends the sessions' streams; the service
//! alone (`McpServer::http_session_service`) keeps sessions too; without sessions, none is ever
//! issued.

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
    initialize_with(json!({}))
}

fn initialize_with(capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": capabilities,
        "clientInfo": {"name": "test", "version": "1"}}})
}

/// Opens a session: its id.
async fn open(port: u16) -> String {
    open_with(port, json!({})).await
}

/// Opens a session for a client with `capabilities`: its id.
async fn open_with(port: u16, capabilities: Value) -> String {
    let answer = send(port, "POST", None, Some(initialize_with(capabilities))).await;
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
    // A session id a client sends anyway is ignored.
    let called = send(
        port,
        "POST",
        Some("no-such-session"),
        Some(call("add", json!({"a": 1, "b": 2}))),
    )
    .await;
    assert_eq!(called.status, 200);
    assert_eq!(called.messages[0]["result"]["content"][0]["text"], "3");
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

/// An event stream being read: the JSON-RPC messages of its `data:` lines, as they come.
struct Events {
    stream: tokio::net::TcpStream,
    text: String,
    seen: usize,
}

impl Events {
    /// Sends `request` (a whole HTTP request) and starts reading its answer.
    async fn open(port: u16, request: String) -> Events {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        Events {
            stream,
            text: String::new(),
            seen: 0,
        }
    }

    /// The next message, within five seconds.
    async fn next(&mut self) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let messages: Vec<Value> = self
                .text
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str(data.trim()).ok())
                .collect();
            if let Some(message) = messages.into_iter().nth(self.seen) {
                self.seen += 1;
                return message;
            }
            let mut buffer = [0u8; 4096];
            let read = tokio::time::timeout_at(deadline, self.stream.read(&mut buffer))
                .await
                .expect("a message comes")
                .unwrap();
            assert!(read > 0, "the stream ended: {}", self.text);
            self.text
                .push_str(&String::from_utf8_lossy(&buffer[..read]));
        }
    }
}

fn post_request(port: u16, session: &str, body: &Value) -> String {
    let body = body.to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
         Mcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_asks_its_client_through_the_session_and_waiting_is_not_idleness() {
    let idle = Duration::from_millis(200);
    let config = McpConfig::default()
        .with_sessions(true)
        .with_session_idle_timeout(idle);
    let port = serve(config).await;
    let id = open_with(port, json!({"elicitation": {}})).await;
    let mut call = Events::open(port, post_request(port, &id, &call("book", json!({})))).await;
    let question = call.next().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    // The person takes longer than the idle timeout to answer: the call is in flight, so the
    // session stays.
    tokio::time::sleep(idle * 2).await;
    let answer = json!({"jsonrpc": "2.0", "id": question["id"],
                        "result": {"action": "accept", "content": {"name": "Ada", "bags": 2}}});
    let accepted = send(port, "POST", Some(&id), Some(answer)).await;
    assert_eq!(accepted.status, 202, "{:?}", accepted.messages);
    let result = call.next().await;
    assert_eq!(result["id"], 2, "{result}");
    assert_eq!(
        result["result"]["content"][0]["text"], "booked for Ada with 2 bags",
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stopping_the_server_ends_a_sessions_stream_of_server_messages() {
    let (registry, _gate) = common::registry();
    let server = McpServer::new(registry, McpConfig::default().with_sessions(true)).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        server.serve_http(listener, shutdown).await
    });
    let id = open(port).await;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: {id}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    stop.send(()).unwrap();
    // Well within the shutdown timeout (10 s): the stream does not hold the server up.
    let within = Duration::from_secs(3);
    tokio::time::timeout(within, served)
        .await
        .expect("the server stops at once")
        .unwrap()
        .unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut rest))
        .await
        .expect("the stream ends")
        .unwrap();
}

/// A POST of `body` to the service alone, with `session`.
fn service_request(
    body: &Value,
    session: Option<&str>,
) -> hyper::Request<http_body_util::Full<bytes::Bytes>> {
    let mut request = hyper::Request::post("http://127.0.0.1/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request
        .body(http_body_util::Full::new(bytes::Bytes::from(
            body.to_string(),
        )))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_session_service_alone_opens_sessions_and_bounds_them() {
    use http_body_util::BodyExt;

    let (registry, _gate) = common::registry();
    let server = McpServer::new(registry, McpConfig::default().with_max_sessions(1)).unwrap();
    let service = server.http_session_service();
    let opened = service.handle(service_request(&initialize(), None)).await;
    assert_eq!(opened.status(), 200);
    let id = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let accepted = service
        .handle(service_request(&initialized, Some(&id)))
        .await;
    assert_eq!(accepted.status(), 202);

    let refused = service.handle(service_request(&initialize(), None)).await;
    assert_eq!(refused.status(), 500);
    let body = refused.into_body().collect().await.unwrap().to_bytes();
    let body = String::from_utf8_lossy(&body);
    assert!(
        body.contains("the server has 1 sessions open, its limit; try again later"),
        "{body}"
    );
}
