//! The streamable HTTP server facing clients it does not control, spoken to byte by byte over
//! raw TCP: deadlines on every wait for a client, the cap on connections, the request checks
//! (every refusal a JSON-RPC error with its status), `Host` and `Origin`, a stateless client
//! hanging up mid-call, and the graceful shutdown. Every wait in these tests is bounded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Gate;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use toolsmith_mcp::{McpConfig, McpServer, ServeError};

/// The longest any test waits for something that should come much sooner.
const PATIENCE: Duration = Duration::from_secs(10);

/// A server on a free loopback port, serving the test tools until told to stop.
struct Server {
    addr: SocketAddr,
    gate: Arc<Gate>,
    stop: Option<oneshot::Sender<()>>,
    served: JoinHandle<Result<(), ServeError>>,
}

impl Server {
    async fn start(config: McpConfig) -> Server {
        let (registry, gate) = common::registry();
        let server = McpServer::new(registry, config).unwrap();
        let listener = toolsmith_mcp::bind_http("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let served = tokio::spawn(async move {
            server
                .serve_http(listener, async {
                    let _ = stopped.await;
                })
                .await
        });
        Server {
            addr,
            gate,
            stop: Some(stop),
            served,
        }
    }

    async fn connect(&self) -> TcpStream {
        TcpStream::connect(self.addr).await.unwrap()
    }

    /// Tells the server to stop, as a signal would.
    fn shut_down(&mut self) {
        let _ = self.stop.take().unwrap().send(());
    }

    /// Waits for `serve_http` to return.
    async fn stopped(mut self) -> Result<(), ServeError> {
        tokio::time::timeout(PATIENCE, &mut self.served)
            .await
            .expect("serve_http returned in time")
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A call left waiting must not hold a tool thread past the test.
        self.gate.open();
        self.served.abort();
    }
}

/// A request as an MCP client sends it, with `extra` headers, asking to keep the connection.
fn request(body: &str, extra: &str) -> String {
    String::from_utf8(request_bytes(body.as_bytes(), extra)).unwrap()
}

/// [`request`] with any bytes as its body.
fn request_bytes(body: &[u8], extra: &str) -> Vec<u8> {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\r\n",
        body.len()
    );
    [head.as_bytes(), body].concat()
}

fn call(id: u64, tool: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
    .to_string()
}

/// One response read from `stream`: its status, headers (lowercase names) and body.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }
}

/// Reads one response (its body by `Content-Length`) from `stream`, within [`PATIENCE`].
async fn read_reply(stream: &mut TcpStream) -> Reply {
    tokio::time::timeout(PATIENCE, async {
        let mut bytes = Vec::new();
        let head_end = loop {
            if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                break end;
            }
            let mut chunk = [0; 4096];
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the connection closed before a response: {bytes:?}");
            bytes.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8(bytes[..head_end].to_vec()).unwrap();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers: Vec<(String, String)> = lines
            .map(|line| {
                let (name, value) = line.split_once(':').unwrap();
                (name.trim().to_ascii_lowercase(), value.trim().to_owned())
            })
            .collect();
        let length: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = bytes[head_end + 4..].to_vec();
        while body.len() < length {
            let mut chunk = [0; 4096];
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the connection closed inside a body");
            body.extend_from_slice(&chunk[..n]);
        }
        Reply {
            status,
            headers,
            body: String::from_utf8(body).unwrap(),
        }
    })
    .await
    .expect("a response in time")
}

/// Sends `raw` on a new connection and reads the response.
async fn exchange(server: &Server, raw: &[u8]) -> Reply {
    let mut stream = server.connect().await;
    stream.write_all(raw).await.unwrap();
    read_reply(&mut stream).await
}

/// How long until the server closes `stream`, reading (and dropping) whatever it sends; `None`
/// when it is still open after `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut chunk = [0; 4096];
    loop {
        let left = within.checked_sub(started.elapsed())?;
        match tokio::time::timeout(left, stream.read(&mut chunk)).await {
            Err(_elapsed) => return None,
            Ok(Ok(0) | Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => {}
        }
    }
}

fn timeouts(header: u64, body: u64, idle: u64) -> McpConfig {
    McpConfig::default()
        .with_header_read_timeout(Duration::from_millis(header))
        .with_body_read_timeout(Duration::from_millis(body))
        .with_idle_timeout(Duration::from_millis(idle))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_connection_is_closed_after_the_header_timeout() {
    let server = Server::start(timeouts(300, 60_000, 60_000)).await;
    let mut stream = server.connect().await;
    let closed = closed_within(&mut stream, PATIENCE).await.expect("closed");
    assert!(closed >= Duration::from_millis(250), "{closed:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn half_a_request_head_is_closed_after_the_header_timeout() {
    let server = Server::start(timeouts(300, 60_000, 60_000)).await;
    let mut stream = server.connect().await;
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
        .await
        .unwrap();
    let closed = closed_within(&mut stream, PATIENCE).await.expect("closed");
    assert!(closed >= Duration::from_millis(250), "{closed:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_head_sent_a_byte_at_a_time_is_closed_at_the_header_timeout() {
    let server = Server::start(timeouts(500, 60_000, 60_000)).await;
    let mut stream = server.connect().await;
    let head = request("{}", "");
    let started = Instant::now();
    let mut sent = 0;
    // A byte every 50 ms would take 5 s to send the head; the server closes it long before.
    let closed = loop {
        assert!(
            started.elapsed() < PATIENCE,
            "still open after {sent} bytes"
        );
        if sent < head.len()
            && stream
                .write_all(&head.as_bytes()[sent..=sent])
                .await
                .is_err()
        {
            break started.elapsed();
        }
        sent += 1;
        if closed_within(&mut stream, Duration::from_millis(50))
            .await
            .is_some()
        {
            break started.elapsed();
        }
    };
    assert!(sent < head.len(), "the whole head was taken");
    assert!(
        closed >= Duration::from_millis(450) && closed < Duration::from_secs(3),
        "{closed:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_body_is_answered_408_and_the_connection_closed() {
    let server = Server::start(timeouts(60_000, 300, 60_000)).await;
    let mut stream = server.connect().await;
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"json";
    stream.write_all(head.as_bytes()).await.unwrap();
    let reply = read_reply(&mut stream).await;
    assert_eq!(reply.status, 408, "{}", reply.body);
    assert_eq!(reply.json()["error"]["code"], -32600);
    assert_eq!(reply.json()["id"], Value::Null);
    assert!(closed_within(&mut stream, PATIENCE).await.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() {
    let server = Server::start(timeouts(60_000, 60_000, 300)).await;
    let mut stream = server.connect().await;
    stream
        .write_all(request(&call(1, "add", json!({"a": 1, "b": 2})), "").as_bytes())
        .await
        .unwrap();
    let reply = read_reply(&mut stream).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let closed = closed_within(&mut stream, PATIENCE).await.expect("closed");
    // By the idle timeout, not the header timeout (a minute).
    assert!(
        closed >= Duration::from_millis(250) && closed < Duration::from_secs(5),
        "{closed:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kept_alive_connection_serves_requests_that_come_within_the_idle_timeout() {
    let server = Server::start(timeouts(60_000, 60_000, 2_000)).await;
    let mut stream = server.connect().await;
    for id in 1..=3 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stream
            .write_all(request(&call(id, "add", json!({"a": id, "b": 2})), "").as_bytes())
            .await
            .unwrap();
        let reply = read_reply(&mut stream).await;
        assert_eq!(reply.json()["id"], id, "{}", reply.body);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_running_longer_than_every_client_timeout_is_answered() {
    let server = Server::start(timeouts(200, 200, 200)).await;
    let mut stream = server.connect().await;
    stream
        .write_all(request(&call(1, "wait", json!({})), "").as_bytes())
        .await
        .unwrap();
    let gate = server.gate.clone();
    tokio::task::spawn_blocking(move || gate.wait_for_arrivals(1))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    server.gate.open();
    let reply = read_reply(&mut stream).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "through");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declared_length_over_the_limit_is_refused_at_once() {
    let server = Server::start(McpConfig::default().with_max_request_bytes(1024)).await;
    let mut stream = server.connect().await;
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Accept: application/json, text/event-stream\r\n\
                Content-Length: 1000000000000\r\n\r\n{\"a\":1}";
    let started = Instant::now();
    stream.write_all(head.as_bytes()).await.unwrap();
    let reply = read_reply(&mut stream).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(reply.status, 413);
    let error = reply.json();
    assert_eq!(error["id"], Value::Null);
    assert_eq!(error["error"]["code"], -32600);
    assert_eq!(error["error"]["data"]["max_request_bytes"], 1024);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1000000000000 bytes"),
        "{error}"
    );
    assert_eq!(reply.header("connection"), Some("close"));
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_past_the_limit_wait_until_one_closes() {
    let server = Server::start(McpConfig::default().with_max_connections(2)).await;
    let first = server.connect().await;
    let _second = server.connect().await;
    // Both slots are held by clients saying nothing; a third waits to be accepted.
    let mut third = server.connect().await;
    third
        .write_all(request(&call(1, "add", json!({"a": 1, "b": 2})), "").as_bytes())
        .await
        .unwrap();
    let mut byte = [0; 1];
    let early = tokio::time::timeout(Duration::from_millis(500), third.peek(&mut byte)).await;
    assert!(early.is_err(), "answered past the limit");
    drop(first);
    let reply = read_reply(&mut third).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

/// Arguments nested too deep are the argument reader's to refuse, as over stdio: an `isError`
/// result naming the limit, whether they are an object or an array.
#[tokio::test(flavor = "multi_thread")]
async fn arguments_nested_too_deep_are_answered_by_the_argument_reader() {
    let server = Server::start(McpConfig::default()).await;
    for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
        let deep = format!("{}1{}", open.repeat(10_000), close.repeat(10_000));
        let body = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":"#,
            &deep,
            "}}",
        ]
        .concat();
        let reply = exchange(&server, request(&body, "").as_bytes()).await;
        assert_eq!(reply.status, 200, "{open}: {}", reply.body);
        let answer = reply.json();
        assert_eq!(answer["id"], 1, "{open}: {answer}");
        assert_eq!(answer["result"]["isError"], true, "{open}: {answer}");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("at most 128 levels deep"), "{open}: {text}");
    }
}

/// Each request the front refuses, and the status and JSON-RPC error code it gets.
#[tokio::test(flavor = "multi_thread")]
async fn every_refusal_is_a_json_rpc_error_with_its_status() {
    let server = Server::start(McpConfig::default()).await;
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    let cases: Vec<(&str, Vec<u8>, u16, i64, Value)> = vec![
        (
            "a batch",
            request(&format!("[{ping}]"), "").into_bytes(),
            400,
            -32600,
            Value::Null,
        ),
        (
            "10k-deep JSON",
            request(&deep, "").into_bytes(),
            400,
            -32700,
            Value::Null,
        ),
        (
            "invalid UTF-8",
            request_bytes(
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}",
                "",
            ),
            400,
            -32700,
            Value::Null,
        ),
        (
            "NaN",
            request(r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":NaN}"#, "").into_bytes(),
            400,
            -32700,
            Value::Null,
        ),
        (
            "JSON that is not a message",
            request(
                r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":5}"#,
                "",
            )
            .into_bytes(),
            400,
            -32600,
            json!(5),
        ),
        (
            "a JSON-RPC response",
            request(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#, "").into_bytes(),
            400,
            -32600,
            Value::Null,
        ),
        (
            "a wrong content type",
            request(ping, "")
                .replace("application/json\r\nAccept", "text/plain\r\nAccept")
                .into_bytes(),
            415,
            -32600,
            Value::Null,
        ),
        (
            "no content type",
            request(ping, "")
                .replace("Content-Type: application/json\r\n", "")
                .into_bytes(),
            415,
            -32600,
            Value::Null,
        ),
        (
            "GET",
            b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".to_vec(),
            405,
            -32600,
            Value::Null,
        ),
        (
            "DELETE",
            b"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".to_vec(),
            405,
            -32600,
            Value::Null,
        ),
        (
            "an Accept without event streams",
            request(ping, "")
                .replace(
                    "Accept: application/json, text/event-stream",
                    "Accept: application/json",
                )
                .into_bytes(),
            406,
            -32600,
            json!(3),
        ),
        (
            "an unknown protocol version",
            request(ping, "MCP-Protocol-Version: 1999-01-01\r\n").into_bytes(),
            400,
            -32600,
            json!(3),
        ),
    ];
    for (case, raw, status, code, id) in cases {
        let reply = exchange(&server, &raw).await;
        assert_eq!(reply.status, status, "{case}: {}", reply.body);
        assert_eq!(
            reply.header("content-type"),
            Some("application/json"),
            "{case}"
        );
        let error = reply.json();
        assert_eq!(error["jsonrpc"], "2.0", "{case}: {error}");
        assert!(
            error.as_object().unwrap().contains_key("id"),
            "{case}: {error}"
        );
        assert_eq!(error["id"], id, "{case}: {error}");
        assert_eq!(error["error"]["code"], code, "{case}: {error}");
        assert!(error["error"]["message"].is_string(), "{case}: {error}");
    }
    let reply = exchange(&server, b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await;
    assert_eq!(reply.header("allow"), Some("POST"));
    // And the server still answers.
    let reply = exchange(&server, request(ping, "").as_bytes()).await;
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_does_not_read_its_answers_is_closed_after_the_idle_timeout() {
    let server = Server::start(timeouts(60_000, 60_000, 500)).await;
    let stream = server.connect().await;
    let (mut read, mut write) = stream.into_split();
    // Forty calls answered with 900 kB each (the most one string argument may be), pipelined,
    // and none of the answers read: they fill the sockets' buffers and the server's writes stall.
    let reason = "x".repeat(900_000);
    let calls: Vec<u8> = (1..=40)
        .flat_map(|id| request(&call(id, "refuse", json!({"reason": reason})), "").into_bytes())
        .collect();
    let writing = tokio::spawn(async move {
        // The server stops reading once it is stuck writing, and then closes: either may
        // end this write.
        let _ = write.write_all(&calls).await;
        write
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut received = 0;
    let mut chunk = vec![0; 1 << 16];
    let closed = tokio::time::timeout(PATIENCE, async {
        loop {
            match read.read(&mut chunk).await {
                Ok(0) | Err(_) => return true,
                Ok(n) => received += n,
            }
        }
    })
    .await;
    assert_eq!(closed, Ok(true), "still open after {received} bytes");
    assert!(
        received < 40 * 900_000,
        "every answer was sent: {received} bytes"
    );
    writing.abort();
}

fn with_origin(origin: &str) -> String {
    request(
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        &format!("Origin: {origin}\r\n"),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_origin_is_refused_with_403() {
    let server = Server::start(McpConfig::default()).await;
    let reply = exchange(&server, with_origin("http://evil.com").as_bytes()).await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    let error = reply.json();
    assert_eq!(error["id"], Value::Null);
    assert_eq!(error["error"]["code"], -32600);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("http://evil.com"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn loopback_origins_and_requests_without_an_origin_are_answered() {
    let server = Server::start(McpConfig::default()).await;
    for origin in [
        "http://localhost:6274",
        "http://127.0.0.1:3000",
        "https://[::1]",
    ] {
        let reply = exchange(&server, with_origin(origin).as_bytes()).await;
        assert_eq!(reply.status, 200, "{origin}: {}", reply.body);
    }
    let reply = exchange(
        &server,
        request(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, "").as_bytes(),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn listed_origins_and_those_of_allowed_hosts_are_answered() {
    let config = McpConfig::default()
        .with_allowed_hosts(["mcp.example.com"])
        .with_allowed_origins(["https://app.example.com", "http://dev.example.com:*"]);
    let server = Server::start(config).await;
    for origin in [
        "https://mcp.example.com",
        "https://app.example.com",
        "http://dev.example.com:5173",
    ] {
        let reply = exchange(&server, with_origin(origin).as_bytes()).await;
        assert_eq!(reply.status, 200, "{origin}: {}", reply.body);
    }
    for origin in ["https://app.example.com:8443", "http://evil.com", "null"] {
        let reply = exchange(&server, with_origin(origin).as_bytes()).await;
        assert_eq!(reply.status, 403, "{origin}: {}", reply.body);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn allowed_hosts_add_to_the_loopback_names() {
    let server = Server::start(McpConfig::default().with_allowed_hosts(["mcp.example.com"])).await;
    let ping = request(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, "");
    for host in ["127.0.0.1", "localhost:8080", "[::1]:1", "mcp.example.com"] {
        let raw = ping.replace("Host: 127.0.0.1", &format!("Host: {host}"));
        let reply = exchange(&server, raw.as_bytes()).await;
        assert_eq!(reply.status, 200, "{host}: {}", reply.body);
    }
    let raw = ping.replace("Host: 127.0.0.1", "Host: evil.example");
    let reply = exchange(&server, raw.as_bytes()).await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    assert_eq!(reply.json()["error"]["code"], -32600);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shutdown_lets_a_call_in_flight_finish_and_refuses_new_connections() {
    let mut server = Server::start(McpConfig::default()).await;
    let mut stream = server.connect().await;
    stream
        .write_all(request(&call(1, "wait", json!({})), "").as_bytes())
        .await
        .unwrap();
    let gate = server.gate.clone();
    tokio::task::spawn_blocking(move || gate.wait_for_arrivals(1))
        .await
        .unwrap();
    server.shut_down();
    let started = Instant::now();
    loop {
        assert!(started.elapsed() < PATIENCE, "still accepting");
        if TcpStream::connect(server.addr).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.gate.open();
    let reply = read_reply(&mut stream).await;
    assert_eq!(reply.json()["result"]["content"][0]["text"], "through");
    server.stopped().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shutdown_does_not_wait_past_its_timeout_for_a_call() {
    let config = McpConfig::default().with_shutdown_timeout(Duration::from_millis(300));
    let mut server = Server::start(config).await;
    let mut stream = server.connect().await;
    stream
        .write_all(request(&call(1, "wait", json!({})), "").as_bytes())
        .await
        .unwrap();
    let gate = server.gate.clone();
    tokio::task::spawn_blocking(move || gate.wait_for_arrivals(1))
        .await
        .unwrap();
    let started = Instant::now();
    server.shut_down();
    let gate = server.gate.clone();
    server.stopped().await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // The call's connection was dropped with it.
    assert!(closed_within(&mut stream, PATIENCE).await.is_some());
    gate.open();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_name_is_resolved_and_bound() {
    let listener = toolsmith_mcp::bind_http("localhost:0").await.unwrap();
    assert!(listener.local_addr().unwrap().ip().is_loopback());
    let error = toolsmith_mcp::bind_http("localhost").await.unwrap_err();
    assert!(matches!(error, ServeError::Bind { .. }), "{error}");
    assert!(error.to_string().contains("`localhost`"), "{error}");
}

#[test]
fn a_limit_of_zero_is_refused_naming_the_setting() {
    let zero = Duration::ZERO;
    let configs = [
        (
            "max_request_bytes",
            McpConfig::default().with_max_request_bytes(0),
        ),
        (
            "max_concurrent_calls",
            McpConfig::default().with_max_concurrent_calls(0),
        ),
        (
            "max_connections",
            McpConfig::default().with_max_connections(0),
        ),
        ("call_timeout", McpConfig::default().with_call_timeout(zero)),
        (
            "header_read_timeout",
            McpConfig::default().with_header_read_timeout(zero),
        ),
        (
            "body_read_timeout",
            McpConfig::default().with_body_read_timeout(zero),
        ),
        ("idle_timeout", McpConfig::default().with_idle_timeout(zero)),
    ];
    for (setting, config) in configs {
        let Err(error) = McpServer::new(common::registry().0, config) else {
            panic!("{setting} 0 was taken");
        };
        assert!(
            matches!(&error, ServeError::InvalidConfig { setting: s, .. } if *s == setting),
            "{error}"
        );
    }
    let no_wait = McpConfig::default().with_shutdown_timeout(zero);
    assert!(McpServer::new(common::registry().0, no_wait).is_ok());
}

#[test]
fn a_timeout_past_a_year_is_refused_naming_the_setting() {
    let forever = Duration::MAX;
    let configs = [
        (
            "call_timeout",
            McpConfig::default().with_call_timeout(forever),
        ),
        (
            "header_read_timeout",
            McpConfig::default().with_header_read_timeout(forever),
        ),
        (
            "body_read_timeout",
            McpConfig::default().with_body_read_timeout(forever),
        ),
        (
            "idle_timeout",
            McpConfig::default().with_idle_timeout(forever),
        ),
        (
            "shutdown_timeout",
            McpConfig::default().with_shutdown_timeout(forever),
        ),
    ];
    for (setting, config) in configs {
        let Err(error) = McpServer::new(common::registry().0, config) else {
            panic!("{setting} of Duration::MAX was taken");
        };
        assert!(
            matches!(&error, ServeError::InvalidConfig { setting: s, .. } if *s == setting),
            "{error}"
        );
        assert!(error.to_string().contains("at most a year"), "{error}");
    }
    let a_year = McpConfig::default().with_call_timeout(McpConfig::MAX_TIMEOUT);
    assert!(McpServer::new(common::registry().0, a_year).is_ok());
}

#[test]
fn an_allowed_host_or_origin_that_does_not_read_is_refused() {
    let hosts = McpConfig::default().with_allowed_hosts(["not a host"]);
    let error = McpServer::new(common::registry().0, hosts).err().unwrap();
    assert!(error.to_string().contains("`not a host`"), "{error}");
    let origins = McpConfig::default().with_allowed_origins(["app.example.com"]);
    let error = McpServer::new(common::registry().0, origins).err().unwrap();
    assert!(error.to_string().contains("`app.example.com`"), "{error}");
}

/// Stateless, a call's answer can go nowhere but the connection it came on: a client that
/// hangs up mid-call has given up on it, and the tool's context is cancelled (with sessions,
/// the spec says a disconnection is not a cancellation; `notifications/cancelled` is).
#[tokio::test(flavor = "multi_thread")]
async fn a_stateless_client_that_hangs_up_mid_call_cancels_the_call() {
    use std::sync::atomic::Ordering;
    let seen = || common::CANCELLATIONS_SEEN.load(Ordering::SeqCst);
    let before = seen();
    let server = Server::start(McpConfig::default()).await;
    let mut stream = server.connect().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "hold", "arguments": {}, "_meta": {"progressToken": 1}}});
    stream
        .write_all(request(&body.to_string(), "").as_bytes())
        .await
        .unwrap();
    // `hold` reports its start as progress, which the answer's event stream carries.
    let mut read = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&read).contains("holding") {
        let n = tokio::time::timeout(PATIENCE, stream.read(&mut buf))
            .await
            .expect("the call's progress in time")
            .unwrap();
        assert!(n > 0, "closed before the call started: {read:?}");
        read.extend_from_slice(&buf[..n]);
    }
    drop(stream);
    let hung_up = Instant::now();
    while seen() == before {
        assert!(
            hung_up.elapsed() < PATIENCE,
            "the tool never saw its cancellation"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
