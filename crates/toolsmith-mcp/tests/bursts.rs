//! Bursts of calls: beyond the concurrency limit, calls wait in a bounded queue. Over stdio a
//! client's pipelined burst is served whole (with the queue full, the server reads on once a
//! call ends); over HTTP a call past the queue is answered as busy; either way the server keeps
//! serving, and time in the queue counts toward a call's timeout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::{ANSWER_WITHIN, Client, text};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith_mcp::{McpConfig, McpServer};

/// Writes `n` calls of `add` before reading any answer, then reads the `n` answers; each must
/// be a success saying 5, one per id.
async fn pipelined_calls_all_succeed(n: u64) {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let burst: Vec<String> = (1..=n)
        .map(|id| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}}}}}}"#
            )
        })
        .collect();
    // In one write, as a client that frames its messages first sends them.
    client.send_bytes(burst.join("\n").as_bytes()).await;
    let mut ids = HashSet::new();
    let mut refused = Vec::new();
    for _ in 0..n {
        let answer: Value = serde_json::from_str(&client.receive_line().await).unwrap();
        if answer["result"]["isError"] != false || text(&answer) != "5" {
            refused.push(answer.clone());
        }
        ids.insert(answer["id"].as_u64().unwrap());
    }
    assert!(
        refused.is_empty(),
        "{} of {n} calls refused, the first: {}",
        refused.len(),
        refused[0]
    );
    assert_eq!(ids.len() as u64, n);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_hundred_pipelined_calls_are_all_served() {
    pipelined_calls_all_succeed(200).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_thousand_pipelined_calls_are_all_served() {
    pipelined_calls_all_succeed(20_000).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn over_stdio_with_the_queue_full_the_server_reads_on_once_a_call_ends() {
    let config = McpConfig::default()
        .with_max_concurrent_calls(1)
        .with_max_queued_calls(1);
    let (mut client, gate) = Client::connect(config).await;
    let waiting = client.send_call("wait", json!({})).await;
    let arrived = gate.clone();
    let came = tokio::task::spawn_blocking(move || arrived.arrivals_within(1));
    assert!(came.await.unwrap(), "the first call never reached its tool");
    // One call running, one queued: the next call is not refused, it waits unread, and so does
    // what comes after it.
    let queued = client.send_call("add", json!({"a": 1, "b": 2})).await;
    let unread = client.send_call("add", json!({"a": 2, "b": 2})).await;
    let ping = client.send("ping", json!({})).await;
    assert_eq!(
        client.receive_line_within(Duration::from_millis(300)).await,
        None,
        "nothing is answered while the running call holds the queue"
    );
    gate.open();
    let mut answers = Vec::new();
    for _ in 0..4 {
        answers.push(serde_json::from_str::<Value>(&client.receive_line().await).unwrap());
    }
    let by_id = |id: u64| answers.iter().find(|a| a["id"] == id).unwrap();
    assert_eq!(text(by_id(waiting)), "through");
    assert_eq!(text(by_id(queued)), "3");
    assert_eq!(text(by_id(unread)), "4");
    assert_eq!(by_id(ping)["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn time_in_the_queue_counts_toward_the_timeout_and_a_call_that_timed_out_never_runs() {
    let config = McpConfig::default()
        .with_max_concurrent_calls(1)
        .with_call_timeout(Duration::from_millis(300));
    let (mut client, gate) = Client::connect(config).await;
    let running = client.send_call("wait", json!({})).await;
    let arrived = gate.clone();
    let came = tokio::task::spawn_blocking(move || arrived.arrivals_within(1));
    assert!(came.await.unwrap(), "the first call never reached its tool");
    let queued = client.send_call("wait", json!({})).await;
    let mut answers = Vec::new();
    for _ in 0..2 {
        answers.push(serde_json::from_str::<Value>(&client.receive_line().await).unwrap());
    }
    let by_id = |id: u64| answers.iter().find(|a| a["id"] == id).unwrap();
    assert_eq!(
        text(by_id(running)),
        "Tool `wait` did not finish within 0.3s and was abandoned."
    );
    assert_eq!(by_id(queued)["result"]["isError"], true);
    assert!(
        text(by_id(queued)).starts_with("Tool `wait` did not start within 0.3s"),
        "{}",
        by_id(queued)
    );
    gate.open();
    // The thread is free again; the call that timed out in the queue was dropped, not run.
    assert_eq!(
        text(&client.call("add", json!({"a": 1, "b": 2})).await),
        "3"
    );
    assert_eq!(gate.arrivals(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn over_stdio_tools_that_never_return_cannot_stop_the_server_reading() {
    let config = McpConfig::default()
        .with_max_concurrent_calls(1)
        .with_max_queued_calls(1)
        .with_call_timeout(Duration::from_millis(300));
    let (mut client, gate) = Client::connect(config).await;
    // One call holds the only thread for good, and one waits in the only place in the queue,
    // so the next call waits unread for a place. The waiting call times out and leaves the
    // queue, never run; the next one takes its place and times out in turn; the server reads
    // on all along.
    let stuck = client.send_call("wait", json!({})).await;
    let arrived = gate.clone();
    let came = tokio::task::spawn_blocking(move || arrived.arrivals_within(1));
    assert!(came.await.unwrap(), "the first call never reached its tool");
    let queued = client.send_call("wait", json!({})).await;
    let next = client.send_call("add", json!({"a": 1, "b": 2})).await;
    let ping = client.send("ping", json!({})).await;
    let mut answers = Vec::new();
    for _ in 0..4 {
        answers.push(serde_json::from_str::<Value>(&client.receive_line().await).unwrap());
    }
    let by_id = |id: u64| answers.iter().find(|a| a["id"] == id).unwrap();
    assert_eq!(
        text(by_id(stuck)),
        "Tool `wait` did not finish within 0.3s and was abandoned."
    );
    assert!(
        text(by_id(queued)).starts_with("Tool `wait` did not start within 0.3s"),
        "{}",
        by_id(queued)
    );
    assert!(
        text(by_id(next)).starts_with("Tool `add` did not start within 0.3s"),
        "{}",
        by_id(next)
    );
    assert_eq!(by_id(ping)["result"], json!({}));
    gate.open();
    assert_eq!(
        text(&client.call("add", json!({"a": 1, "b": 2})).await),
        "3"
    );
    assert_eq!(gate.arrivals(), 1);
}

/// A server of the test tools over HTTP on a free loopback port, and its gate.
async fn http_server(config: McpConfig) -> (u16, std::sync::Arc<common::Gate>) {
    let (registry, gate) = common::registry();
    let server = McpServer::new(registry, config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { server.serve_http(listener, std::future::pending()).await });
    (port, gate)
}

/// Posts a `tools/call` of `tool` (`add` with 1 and 2, or `wait`); the answer as JSON.
async fn post_call(port: u16, tool: &'static str) -> Value {
    let arguments = match tool {
        "add" => json!({"a": 1, "b": 2}),
        _ => json!({}),
    };
    let exchange = async move {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": tool, "arguments": arguments}})
        .to_string();
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    };
    let response = tokio::time::timeout(ANSWER_WITHIN, exchange)
        .await
        .expect("an answer in time");
    let body = response.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_a_call_past_the_queue_is_busy_and_the_server_keeps_serving() {
    let config = McpConfig::default()
        .with_max_concurrent_calls(1)
        .with_max_queued_calls(1);
    let (port, gate) = http_server(config).await;
    let running = tokio::spawn(post_call(port, "wait"));
    let arrived = gate.clone();
    let came = tokio::task::spawn_blocking(move || arrived.arrivals_within(1));
    assert!(came.await.unwrap(), "the first call never reached its tool");
    // One place is left in the queue, for two calls: whichever comes second is busy, and the
    // other waits for the running call.
    let first = tokio::spawn(post_call(port, "add"));
    let second = tokio::spawn(post_call(port, "add"));
    let busy = tokio::time::timeout(ANSWER_WITHIN, async {
        loop {
            if first.is_finished() || second.is_finished() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(busy.is_ok(), "neither call was answered");
    let (busy, queued) = if first.is_finished() {
        (first.await.unwrap(), second)
    } else {
        (second.await.unwrap(), first)
    };
    assert_eq!(busy["result"]["isError"], true, "{busy}");
    assert_eq!(
        text(&busy),
        "The server is busy: 1 tool calls are running and 1 more are queued. \
         Try `add` again shortly."
    );
    gate.open();
    assert_eq!(text(&running.await.unwrap()), "through");
    assert_eq!(text(&queued.await.unwrap()), "3");
    assert_eq!(text(&post_call(port, "add").await), "3");
}
