//! What a call's context does over MCP, seen on the wire (newline-delimited JSON-RPC, as on
//! stdio, and HTTP): async tools awaited on the executor while sync ones block only the server's
//! threads, the timeout cancelling the context before the error answer, the client's
//! cancellation reaching the tool and its answer never sent, progress and log messages sent
//! before the answer (and only as asked), request data from an HTTP header (and a hook that
//! panics), and the request id as the call id.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{ANSWER_WITHIN, Client, text};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith::{Context, Registry};
use toolsmith_mcp::{McpConfig, McpServer};

/// Sleeps a second, blocking its thread.
#[toolsmith::tool]
fn nap() -> String {
    std::thread::sleep(Duration::from_secs(1));
    "slept".to_owned()
}

/// A server of `tools` (and `shout`) under `config`, and a client of it, on this runtime.
async fn serve(config: McpConfig, tools: Vec<Arc<dyn toolsmith::Tool>>) -> Client {
    let mut registry = Registry::new();
    registry.add(Arc::new(common::Shout)).unwrap();
    for tool in tools {
        registry.add(tool).unwrap();
    }
    Client::connect_to(McpServer::new(registry, config).unwrap()).await
}

/// The messages received until the answer to `id`, that answer last.
async fn until_answer(client: &mut Client, id: u64) -> Vec<Value> {
    let mut received = Vec::new();
    loop {
        let message: Value = serde_json::from_str(&client.receive_line().await).unwrap();
        let done = message["id"] == id;
        received.push(message);
        if done {
            return received;
        }
    }
}

// The default flavor: one thread, the runtime `serve_stdio` runs the server on.
#[tokio::test]
async fn a_sync_tool_blocking_eight_threads_does_not_delay_an_async_call() {
    let mut client = serve(McpConfig::default(), vec![Arc::new(Nap)]).await;
    let naps: Vec<u64> = futures_of(8, &mut client).await;
    let shout = client
        .send_call("shout", json!({"text": "still here"}))
        .await;
    let first: Value = serde_json::from_str(&client.receive_line().await).unwrap();
    assert_eq!(first["id"], shout, "{first}");
    assert_eq!(text(&first), "STILL HERE");
    for _ in &naps {
        let answer: Value = serde_json::from_str(&client.receive_line().await).unwrap();
        assert!(naps.contains(&answer["id"].as_u64().unwrap()), "{answer}");
        assert_eq!(text(&answer), "slept");
    }
}

/// Sends `n` calls of `nap`; their ids.
async fn futures_of(n: usize, client: &mut Client) -> Vec<u64> {
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(client.send_call("nap", json!({})).await);
    }
    ids
}

/// What `linger` saw when its call was dropped: whether its context was cancelled by then.
static DROPPED_CANCELLED: AtomicUsize = AtomicUsize::new(0);

/// Records, when dropped, whether the call's context was cancelled by then.
struct Witness(Context);

impl Drop for Witness {
    fn drop(&mut self) {
        if self.0.is_cancelled() {
            DROPPED_CANCELLED.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Waits (an async tool) far longer than any test's timeout.
#[toolsmith::tool]
async fn linger(ctx: &Context) -> String {
    let _witness = Witness(ctx.clone());
    tokio::time::sleep(Duration::from_secs(60)).await;
    "lingered".to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_timeout_cancels_an_async_tools_context_before_the_error_answer() {
    let config = McpConfig::default().with_call_timeout(Duration::from_millis(100));
    let mut client = serve(config, vec![Arc::new(Linger)]).await;
    let answer = client.call("linger", json!({})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        text(&answer),
        "Tool `linger` did not finish within 0.1s and was abandoned."
    );
    // Dropped, cancelled, before the answer was written.
    assert_eq!(DROPPED_CANCELLED.load(Ordering::SeqCst), 1);
}

/// A layer of the program's that holds every call a minute after its tool answered.
struct HoldOn;

impl toolsmith::Layer for HoldOn {
    fn call<'a>(
        &'a self,
        call: toolsmith::Call<'a>,
        next: toolsmith::Next<'a>,
    ) -> toolsmith::ToolFuture<'a> {
        toolsmith::ToolFuture::new(async move {
            let answer = next.run(call).await;
            tokio::time::sleep(Duration::from_secs(60)).await;
            answer
        })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_deadline_holds_over_a_layer_that_keeps_the_call_past_it() {
    let mut registry = Registry::new();
    registry.add(Arc::new(common::Shout)).unwrap();
    let registry = registry.with_layer(HoldOn);
    let config = McpConfig::default().with_call_timeout(Duration::from_millis(100));
    let mut client = Client::connect_to(McpServer::new(registry, config).unwrap()).await;
    let started = Instant::now();
    let answer = client.call("shout", json!({"text": "hi"})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        text(&answer),
        "Tool `shout` did not finish within 0.1s and was abandoned."
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// Whether `watch` saw its call cancelled.
static WATCH_SAW_IT: AtomicBool = AtomicBool::new(false);

/// Watches its context (a sync tool, on a thread of its own) for 10 s at most.
#[toolsmith::tool]
fn watch(ctx: &Context) -> String {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if ctx.is_cancelled() {
            WATCH_SAW_IT.store(true, Ordering::SeqCst);
            return "cancelled".to_owned();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    "never cancelled".to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_timeout_cancels_a_sync_tools_context_which_the_tool_sees() {
    let config = McpConfig::default().with_call_timeout(Duration::from_millis(100));
    let mut client = serve(config, vec![Arc::new(Watch)]).await;
    let answer = client.call("watch", json!({})).await;
    assert_eq!(
        text(&answer),
        "Tool `watch` did not finish within 0.1s and was abandoned."
    );
    let saw = tokio::time::timeout(ANSWER_WITHIN, async {
        while !WATCH_SAW_IT.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    assert!(saw.is_ok(), "the tool never saw its call cancelled");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_call_is_never_answered_and_its_tool_sees_the_cancellation() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let before = text(&client.call("cancellations", json!({})).await).to_owned();
    let hold = client
        .send(
            "tools/call",
            json!({"name": "hold", "arguments": {}, "_meta": {"progressToken": "h"}}),
        )
        .await;
    // The tool says it has started.
    let started = client.receive().await;
    assert_eq!(started["method"], "notifications/progress", "{started}");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": hold, "reason": "changed my mind"}});
    client.send_line(&cancel.to_string()).await;
    let seen = tokio::time::timeout(ANSWER_WITHIN, async {
        loop {
            let now = client.call("cancellations", json!({})).await;
            assert_ne!(now["id"], hold, "the cancelled call was answered");
            if text(&now) != before {
                return now;
            }
        }
    })
    .await
    .expect("the tool never saw its cancellation");
    assert_eq!(
        text(&seen).parse::<usize>().unwrap(),
        before.parse::<usize>().unwrap() + 1
    );
    // The tool has answered by now, and the server has dropped the answer: what comes next is
    // only the answer to what comes next.
    let ping = client.request("ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_closes_its_end_still_gets_the_answers_of_the_calls_running() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let counting = client.send_call("count_to", json!({"n": 20})).await;
    client.close_write().await;
    let answer: Value = serde_json::from_str(&client.receive_line().await).unwrap();
    assert_eq!(answer["id"], counting, "{answer}");
    assert_eq!(text(&answer), "counted to 20");
    // Then the server closes its end.
    assert!(client.closed_within(ANSWER_WITHIN).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_is_sent_before_the_answer_for_a_request_with_a_token_and_not_otherwise() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let with = client
        .send(
            "tools/call",
            json!({"name": "count_to", "arguments": {"n": 2}, "_meta": {"progressToken": "p-1"}}),
        )
        .await;
    let received = until_answer(&mut client, with).await;
    assert_eq!(
        received,
        vec![
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params":
                {"progressToken": "p-1", "progress": 1.0, "total": 2.0, "message": "step 1 of 2"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params":
                {"progressToken": "p-1", "progress": 2.0, "total": 2.0, "message": "step 2 of 2"}}),
            json!({"jsonrpc": "2.0", "id": with, "result":
                {"content": [{"type": "text", "text": "counted to 2"}], "isError": false}}),
        ]
    );
    // A number stays a number.
    let numbered = client
        .send(
            "tools/call",
            json!({"name": "count_to", "arguments": {"n": 1}, "_meta": {"progressToken": 7}}),
        )
        .await;
    let received = until_answer(&mut client, numbered).await;
    assert_eq!(received[0]["params"]["progressToken"], 7, "{received:?}");
    let without = client.send_call("count_to", json!({"n": 2})).await;
    let received = until_answer(&mut client, without).await;
    assert_eq!(received.len(), 1, "{received:?}");
}

/// The levels of the log messages received before the answer to `id`, checking each's shape.
async fn levels_logged_until(client: &mut Client, id: u64) -> Vec<String> {
    let received = until_answer(client, id).await;
    let (answer, notes) = received.split_last().unwrap();
    assert_eq!(text(answer), "said four things");
    notes
        .iter()
        .map(|note| {
            assert_eq!(note["method"], "notifications/message", "{note}");
            let level = note["params"]["level"].as_str().unwrap();
            assert_eq!(note["params"]["logger"], "chatty", "{note}");
            assert_eq!(note["params"]["data"], format!("{level} from chatty"));
            level.to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn log_messages_are_sent_at_every_level_until_the_client_sets_one() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let all = client.send_call("chatty", json!({})).await;
    assert_eq!(
        levels_logged_until(&mut client, all).await,
        ["debug", "info", "warning", "error"]
    );
    let set = client
        .request("logging/setLevel", json!({"level": "warning"}))
        .await;
    assert_eq!(set["result"], json!({}), "{set}");
    let fewer = client.send_call("chatty", json!({})).await;
    assert_eq!(
        levels_logged_until(&mut client, fewer).await,
        ["warning", "error"]
    );
    // A request's own level wins over the connection's.
    let asked = client
        .send(
            "tools/call",
            json!({"name": "chatty", "arguments": {},
                   "_meta": {"io.modelcontextprotocol/logLevel": "error"}}),
        )
        .await;
    assert_eq!(levels_logged_until(&mut client, asked).await, ["error"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_declares_logging() {
    let (registry, _gate) = common::registry();
    let server = McpServer::new(registry, McpConfig::default()).unwrap();
    let info = rmcp::ServerHandler::get_info(&server);
    assert!(info.capabilities.logging.is_some());
}

/// Panics once polled (an async tool).
#[toolsmith::tool]
async fn stumble() -> String {
    tokio::task::yield_now().await;
    panic!("tripped")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_async_tool_is_an_error_result_and_the_server_keeps_serving() {
    let mut client = serve(McpConfig::default(), vec![Arc::new(Stumble)]).await;
    let answer = client.call("stumble", json!({})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        text(&answer).starts_with("Tool `stumble` crashed (tripped)"),
        "{answer}"
    );
    let shout = client.call("shout", json!({"text": "ok"})).await;
    assert_eq!(text(&shout), "OK");
}

/// Posts a call of `whoami` to the server on `port`, with `headers`; the answer as JSON.
async fn post_whoami(port: u16, headers: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "whoami", "arguments": {}}})
    .to_string();
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
         {headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let body = response.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn request_data_comes_from_the_http_request_and_its_absence_is_an_error_result() {
    let (registry, _gate) = common::registry();
    let server = McpServer::new(registry, McpConfig::default())
        .unwrap()
        .with_request_data(common::caller_from_header);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { server.serve_http(listener, std::future::pending()).await });
    let known = post_whoami(port, "Authorization: Bearer grace\r\n").await;
    assert_eq!(text(&known), "you are grace", "{known}");
    let unknown = post_whoami(port, "").await;
    assert_eq!(unknown["result"]["isError"], true, "{unknown}");
    assert!(
        text(&unknown).contains("did not provide the `call_context::common::Caller`"),
        "{unknown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_data_hook_that_panics_fails_the_call_not_the_server() {
    let mut registry = Registry::new();
    registry.add(Arc::new(common::Shout)).unwrap();
    let server = McpServer::new(registry, McpConfig::default())
        .unwrap()
        .with_request_data(|request, _ctx| {
            assert_ne!(request.tool(), "shout", "a bug in the hook");
        });
    let mut client = Client::connect_to(server).await;
    let answer = client.call("shout", json!({"text": "hi"})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        text(&answer).contains("its request data hook panicked"),
        "{answer}"
    );
    let ping = client.request("ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
}

/// Says the call's id.
#[toolsmith::tool]
fn my_id(ctx: &Context) -> String {
    ctx.call_id().unwrap_or("none").to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_call_id_is_the_json_rpc_request_id_as_text() {
    let mut client = serve(McpConfig::default(), vec![Arc::new(MyId)]).await;
    let numbered = client.call("my_id", json!({})).await;
    assert_eq!(text(&numbered), numbered["id"].to_string());
    client
        .send_line(
            r#"{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"my_id"}}"#,
        )
        .await;
    let named = client.receive().await;
    assert_eq!(named["id"], "call-7");
    assert_eq!(text(&named), "call-7");
}
