//! Every error path and limit of the server, over the newline-delimited transport (as on stdio)
//! and over streamable HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{Client, text};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith_mcp::{McpConfig, McpServer};

#[tokio::test(flavor = "multi_thread")]
async fn a_line_that_is_not_json_gets_a_parse_error_and_the_server_keeps_serving() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    client.send_line("{this is not json").await;
    let error = client.receive().await;
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert_eq!(error["id"], Value::Null, "{error}");
    assert_eq!(
        text(&client.call("add", json!({"a": 1, "b": 2})).await),
        "3"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn json_that_is_not_a_message_gets_an_invalid_request_with_its_id() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    client.send_line(r#"{"id": 41, "what": "no method"}"#).await;
    let error = client.receive().await;
    assert_eq!(error["error"]["code"], -32600, "{error}");
    assert_eq!(error["id"], 41, "{error}");
    assert_eq!(
        text(&client.call("add", json!({"a": 1, "b": 2})).await),
        "3"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_over_the_size_limit_is_refused_by_id_and_the_server_keeps_serving() {
    let config = McpConfig::default().with_max_request_bytes(1024);
    let (mut client, _gate) = Client::connect(config).await;
    let huge = "x".repeat(10_000);
    let id = client.send_call("refuse", json!({"reason": huge})).await;
    let error = client.receive().await;
    assert_eq!(error["id"], id, "{error}");
    assert_eq!(error["error"]["code"], -32600, "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("Request too large") && message.contains("1024"),
        "{message}"
    );
    assert_eq!(
        text(&client.call("add", json!({"a": 1, "b": 2})).await),
        "3"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_tool_is_a_protocol_error_naming_the_nearest_tool() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let error = client.call("ad", json!({})).await;
    assert_eq!(error["error"]["code"], -32602, "{error}");
    assert_eq!(
        error["error"]["message"],
        "There is no tool named `ad`. Did you mean `add`?"
    );
    assert_eq!(error["error"]["data"]["did_you_mean"], "add");
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_arguments_are_an_error_result_with_the_model_message() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let answer = client.call("add", json!({"a": 1, "c": 2})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let message = text(&answer);
    assert!(
        message.starts_with("Invalid arguments for tool `add`."),
        "{message}"
    );
    assert!(message.contains("`c`: unknown field"), "{message}");
    assert!(message.contains("`b`: missing required field"), "{message}");
}

#[tokio::test(flavor = "multi_thread")]
async fn arguments_are_coerced_before_the_tool_runs() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let answer = client.call("add", json!({"a": "40", "b": 2})).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(text(&answer), "42");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_tool_is_an_error_result_with_its_message() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let answer = client
        .call("refuse", json!({"reason": "no quota left"}))
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(text(&answer), "Tool `refuse` failed: no quota left");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_tool_is_an_error_result_and_the_server_keeps_serving() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let answer = client.call("explode", json!({})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let message = text(&answer);
    assert!(
        message.contains("Tool `explode` crashed (the tool blew up)"),
        "{message}"
    );
    assert_eq!(
        text(&client.call("add", json!({"a": 1, "b": 2})).await),
        "3"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_past_the_timeout_is_an_error_result() {
    let config = McpConfig::default().with_call_timeout(Duration::from_millis(50));
    let (mut client, gate) = Client::connect(config).await;
    let answer = client.call("wait", json!({})).await;
    gate.open();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        text(&answer),
        "Tool `wait` did not finish within 0.05s and was abandoned."
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_beyond_the_concurrency_limit_waits_for_a_running_one_to_end() {
    let config = McpConfig::default().with_max_concurrent_calls(1);
    let (mut client, gate) = Client::connect(config).await;
    let waiting = client.send_call("wait", json!({})).await;
    let arrived = gate.clone();
    let came = tokio::task::spawn_blocking(move || arrived.arrivals_within(1));
    assert!(came.await.unwrap(), "the first call never reached its tool");
    let queued = client.send_call("add", json!({"a": 1, "b": 2})).await;
    assert_eq!(
        client.receive_line_within(Duration::from_millis(200)).await,
        None,
        "the queued call is neither refused nor run while the first one holds the thread"
    );
    gate.open();
    let answers = [client.receive().await, client.receive().await];
    let by_id = |id: u64| answers.iter().find(|a| a["id"] == id).unwrap();
    assert_eq!(text(by_id(waiting)), "through");
    assert_eq!(text(by_id(queued)), "3");
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_run_concurrently_and_a_blocked_tool_stalls_no_other_request() {
    let (mut client, gate) = Client::connect(McpConfig::default()).await;
    let first = client.send_call("wait", json!({})).await;
    let second = client.send_call("wait", json!({})).await;
    // Both calls are inside the tool at once.
    let arrived = gate.clone();
    tokio::task::spawn_blocking(move || arrived.wait_for_arrivals(2))
        .await
        .unwrap();
    let listed = client.request("tools/list", json!({})).await;
    let declared = listed["result"]["tools"].as_array().unwrap().len();
    assert_eq!(declared, common::registry().0.len());
    assert_eq!(
        text(&client.call("add", json!({"a": 1, "b": 2})).await),
        "3"
    );
    gate.open();
    let mut ids = vec![
        client.receive().await["id"].clone(),
        client.receive().await["id"].clone(),
    ];
    ids.sort_by_key(|id| id.as_u64());
    assert_eq!(ids, vec![json!(first), json!(second)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_declared_input_schema_is_an_object() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let listed = client.request("tools/list", json!({})).await;
    for tool in listed["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["title"].is_string(), "{tool}");
    }
}

/// Posts `body` to a server on `port` as an MCP client would; returns the status line and body.
async fn post(port: u16, body: &str) -> (String, String) {
    post_as(port, &format!("127.0.0.1:{port}"), body).await
}

/// [`post`] with the `Host` header `host`.
async fn post_as(port: u16, host: &str, body: &str) -> (String, String) {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (
        head.lines().next().unwrap_or_default().to_owned(),
        body.to_owned(),
    )
}

async fn http_server(config: McpConfig) -> u16 {
    let (registry, _gate) = common::registry();
    let server = McpServer::new(registry, config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { server.serve_http(listener, std::future::pending()).await });
    port
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_a_call_needs_no_session() {
    let port = http_server(McpConfig::default()).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "add", "arguments": {"a": 2, "b": 3}}});
    let (status, body) = post(port, &call.to_string()).await;
    assert!(status.contains("200"), "{status}: {body}");
    assert!(body.contains(r#""text":"5""#), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_a_request_over_the_size_limit_is_refused() {
    let port = http_server(McpConfig::default().with_max_request_bytes(1024)).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "refuse", "arguments": {"reason": "x".repeat(4096)}}});
    let (status, body) = post(port, &call.to_string()).await;
    assert!(status.contains("413"), "{status}");
    assert!(body.contains("Request too large"), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_bad_json_is_an_error_and_the_server_keeps_serving() {
    let port = http_server(McpConfig::default()).await;
    let (status, body) = post(port, "{not json").await;
    assert!(status.contains("400"), "{status}: {body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                      "params": {"name": "add", "arguments": {"a": 2, "b": 3}}});
    let (status, body) = post(port, &call.to_string()).await;
    assert!(
        status.contains("200") && body.contains(r#""text":"5""#),
        "{status}: {body}"
    );
}
