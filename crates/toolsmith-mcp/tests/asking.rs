//! A tool asking its client, message by message: `input_required` rounds on protocol
//! 2026-07-28 (the answers carried from round to round, a forged state refused), and what a
//! tool is told where its client cannot answer (no capability declared, stateless HTTP on an
//! earlier protocol). The official Python SDK client answering for real is in
//! `python_client.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Client, text};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith_mcp::{McpConfig, McpServer};

/// `_meta` of a protocol 2026-07-28 request from a client declaring `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    })
}

/// Calls `tool` on protocol 2026-07-28 with `extra` params (`inputResponses`,
/// `requestState`); the whole answer.
async fn call_2026(client: &mut Client, tool: &str, capabilities: Value, extra: Value) -> Value {
    let mut params = json!({"name": tool, "arguments": {}, "_meta": meta(capabilities)});
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    client.request("tools/call", params).await
}

#[tokio::test(flavor = "multi_thread")]
async fn on_protocol_2026_a_question_is_a_round_of_input_required_and_the_retry_answers() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let both = json!({"elicitation": {}, "sampling": {}});
    let first = call_2026(&mut client, "plan_trip", both.clone(), json!({})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let question = &result["inputRequests"]["q0"];
    assert_eq!(question["method"], "elicitation/create", "{first}");
    assert_eq!(question["params"]["message"], "Who is travelling?");
    assert_eq!(
        question["params"]["requestedSchema"]["required"],
        json!(["name"])
    );
    let state = result["requestState"].as_str().unwrap().to_owned();

    // The answer to the first question; the second (a request for text) is the next round.
    let answer = json!({"action": "accept", "content": {"name": "Bo"}});
    let second = call_2026(
        &mut client,
        "plan_trip",
        both.clone(),
        json!({"inputResponses": {"q0": answer}, "requestState": state}),
    )
    .await;
    let result = &second["result"];
    assert_eq!(result["resultType"], "input_required", "{second}");
    let question = &result["inputRequests"]["q1"];
    assert_eq!(question["method"], "sampling/createMessage", "{second}");
    assert_eq!(
        question["params"]["messages"][0]["content"]["text"],
        "Suggest a trip for Bo"
    );
    assert!(result["inputRequests"].get("q0").is_none(), "{second}");
    let state = result["requestState"].as_str().unwrap().to_owned();

    // Only this round's answer is sent: the first comes back in the state.
    let idea = json!({"role": "assistant", "content": {"type": "text", "text": "Lisbon"},
                      "model": "m"});
    let last = call_2026(
        &mut client,
        "plan_trip",
        both,
        json!({"inputResponses": {"q1": idea}, "requestState": state}),
    )
    .await;
    assert_eq!(text(&last), "Bo goes to: Lisbon", "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_this_server_did_not_give_for_the_call_is_refused() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let both = json!({"elicitation": {}, "sampling": {}});
    let first = call_2026(&mut client, "book", both.clone(), json!({})).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    for forged in [
        state.as_str(),
        "not json",
        r#"{"v": 1, "tool": "plan_trip"}"#,
    ] {
        // `book`'s state given for `plan_trip`, text that is not a state, a state with no
        // answers.
        let answer = call_2026(
            &mut client,
            "plan_trip",
            both.clone(),
            json!({"requestState": forged}),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("`requestState` is not one this server gave"),
            "{message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_is_bound_to_the_arguments_of_its_call() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let both = json!({"elicitation": {}, "sampling": {}});
    let call = |text: &str| {
        json!({"name": "summarize", "arguments": {"text": text},
                                   "_meta": meta(both.clone())})
    };
    let first = client.request("tools/call", call("the sky is blue")).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    assert!(
        !state.contains("sky"),
        "the state is sealed, not plain: {state}"
    );
    let answer = json!({"role": "assistant", "content": {"type": "text", "text": "Blue."},
                        "model": "m"});
    let retry = |text: &str| {
        let mut params = call(text);
        params["inputResponses"] = json!({"q0": answer});
        params["requestState"] = json!(state);
        params
    };
    // The same call again, with the answer.
    let again = client.request("tools/call", retry("the sky is blue")).await;
    assert_eq!(text(&again), "Blue. (by m)", "{again}");
    // Another text: the state is not this call's.
    let other = client
        .request("tools/call", retry("the sea is green"))
        .await;
    assert_eq!(other["error"]["code"], -32602, "{other}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_did_not_declare_the_capability_is_not_asked() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    // Protocol 2026-07-28: the capabilities of the request's `_meta`.
    let answer = call_2026(&mut client, "book", json!({}), json!({})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        text(&answer).contains(
            "there is nobody to ask here: the client did not declare the `elicitation` \
             capability (for forms) in the request's `_meta`"
        ),
        "{answer}"
    );
    // The handshake era: the capabilities of `initialize` (the test client declares none).
    let answer = client
        .call("summarize", json!({"text": "the sky is blue"}))
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        text(&answer).contains("the client did not declare the `sampling` capability"),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn over_stateless_http_before_protocol_2026_the_tool_is_told_why_nobody_can_answer() {
    let (registry, _gate) = common::registry();
    let server = McpServer::new(registry, McpConfig::default()).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { server.serve_http(listener, std::future::pending()).await });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "book", "arguments": {}}})
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
    assert!(
        response.contains("there is nobody to ask here: the server serves HTTP without sessions"),
        "{response}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn servers_given_one_key_take_each_others_retries_and_a_short_key_is_refused() {
    let key = b"a secret of at least thirty-two bytes!!".to_vec();
    let config = || McpConfig::default().with_request_state_key(key.clone());
    let (registry, _gate) = common::registry();
    let first = McpServer::new(registry, config()).unwrap();
    let (registry, _gate) = common::registry();
    let second = McpServer::new(registry, config()).unwrap();
    let mut asked = Client::connect_to(first).await;
    let mut retried = Client::connect_to(second).await;
    let both = json!({"elicitation": {}, "sampling": {}});
    let round = call_2026(&mut asked, "book", both.clone(), json!({})).await;
    let state = round["result"]["requestState"].clone();
    let answer = json!({"action": "accept", "content": {"name": "Bo"}});
    let done = call_2026(
        &mut retried,
        "book",
        both,
        json!({"inputResponses": {"q0": answer}, "requestState": state}),
    )
    .await;
    assert_eq!(text(&done), "booked for Bo with 0 bags", "{done}");

    let (registry, _gate) = common::registry();
    let short = McpConfig::default().with_request_state_key(b"short".to_vec());
    let Err(error) = McpServer::new(registry, short) else {
        panic!("a short key was taken");
    };
    assert!(error.to_string().contains("request_state_key"), "{error}");
    assert!(!format!("{:?}", config()).contains("secret"));
}
