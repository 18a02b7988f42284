//! Protocol answers a client can use, over the newline-delimited transport (as on stdio) and
//! over streamable HTTP: `"id": null` where no id can be read, a tool call's arguments read by
//! toolsmith's argument reader (a double encoding repaired and recorded, a duplicate key refused,
//! arguments that are not an object an invalid-params error), "initialize first" before the
//! handshake, and a leading byte order mark dropped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ANSWER_WITHIN, Client, text};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith::{Arguments, Context, Policy, RepairCode};
use toolsmith_mcp::{McpConfig, McpServer};

/// The `_meta` key under which a result lists the repairs made to its arguments.
const REPAIRS: &str = "toolsmith/repairs";

/// What the argument reader says of `arguments` for the test tool `add`: the message every
/// surface gives a model.
async fn reader_says(arguments: &str) -> String {
    let (registry, _gate) = common::registry();
    let policy = McpConfig::default().policy().clone();
    registry
        .call(
            "add",
            Arguments::Text(arguments),
            Context::new().with_policy(policy),
        )
        .await
        .unwrap_err()
        .to_model_message()
}

fn call_line(id: u64, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{arguments}}}}}"#
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_parse_error_and_an_invalid_request_are_answered_with_a_null_id() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    for line in [
        "{this is not json",
        "[1,2]",
        r#"{"jsonrpc":"2.0","id":[1],"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","result":{}}"#,
    ] {
        client.send_line(line).await;
        let answer = client.receive_line().await;
        assert!(
            answer.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32"#),
            "{line}: {answer}"
        );
    }
    assert_eq!(
        text(&client.call("add", json!({"a": 1, "b": 2})).await),
        "3"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn arguments_sent_as_a_json_string_are_decoded_and_the_repair_recorded() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let answer = client.call("add", json!(r#"{"a": 2, "b": 3}"#)).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(text(&answer), "5");
    let repairs = &answer["result"]["_meta"][REPAIRS];
    assert_eq!(
        repairs[0]["code"],
        RepairCode::DoubleEncoded.as_str(),
        "{answer}"
    );
    // A clean call records nothing.
    let clean = client.call("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(clean["result"].get("_meta"), None, "{clean}");
}

#[tokio::test(flavor = "multi_thread")]
async fn arguments_that_are_not_an_object_are_invalid_params_saying_what_they_are() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    for (arguments, kind) in [
        (json!([1, 2]), "not an array"),
        (json!(5), "not a number"),
        (json!(true), "not a boolean"),
        (json!("hello"), "not a string"),
        (json!("[1, 2]"), "not a string"),
    ] {
        let answer = client.call("add", arguments.clone()).await;
        assert_eq!(answer["error"]["code"], -32602, "{arguments}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Invalid arguments for tool `add`:")
                && message.contains("expected a JSON object of arguments")
                && message.contains(kind),
            "{arguments}: {message}"
        );
        assert_eq!(
            answer["error"]["data"]["errors"][0]["code"], "arguments_type",
            "{answer}"
        );
    }
    assert_eq!(
        text(&client.call("add", json!({"a": 1, "b": 2})).await),
        "3"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicate_keys_get_the_answer_every_surface_gives() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    for (id, arguments) in [
        (1, r#"{"a": 1, "a": 2, "b": 3}"#),
        (2, r#""{\"a\": 1, \"a\": 2, \"b\": 3}""#),
    ] {
        client.send_line(&call_line(id, arguments)).await;
        let answer = client.receive().await;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        let message = text(&answer);
        assert_eq!(message, reader_says(arguments).await);
        assert!(message.contains("each key at most once"), "{message}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_tool_is_named_before_its_arguments_are_read() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let answer = client.call("ad", json!([1])).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        "There is no tool named `ad`. Did you mean `add`?"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_before_initialize_is_told_to_initialize_first() {
    let (mut client, _gate) = Client::connect_uninitialized(McpConfig::default()).await;
    // A notification before the handshake ends nothing, and gets no answer.
    client
        .send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
        .await;
    let id = client.send("tools/list", json!({})).await;
    let answer: Value = serde_json::from_str(&client.receive_line().await).unwrap();
    assert_eq!(answer["id"], id, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("send `initialize` first"), "{message}");
    let id = client.send_call("add", json!({"a": 1, "b": 2})).await;
    let answer: Value = serde_json::from_str(&client.receive_line().await).unwrap();
    assert_eq!(answer["id"], id, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("send `initialize` first, then `tools/call`"),
        "{answer}"
    );
    // An `initialize` that is not one is told why.
    let id = client.send("initialize", json!({"capabilities": {}})).await;
    let answer: Value = serde_json::from_str(&client.receive_line().await).unwrap();
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing field `protocolVersion`"),
        "{answer}"
    );
    // A ping needs no handshake.
    let ping = client.request("ping", json!({})).await;
    assert_eq!(ping["result"], json!({}), "{ping}");
    let init = client
        .request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}),
        )
        .await;
    assert!(init.get("result").is_some(), "{init}");
    assert_eq!(
        text(&client.call("add", json!({"a": 1, "b": 2})).await),
        "3"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_line_starting_with_a_byte_order_mark_is_read() {
    let (mut client, _gate) = Client::connect(McpConfig::default()).await;
    let line = call_line(41, r#"{"a": 2, "b": 3}"#);
    client
        .send_bytes(&[b"\xEF\xBB\xBF".as_slice(), line.as_bytes()].concat())
        .await;
    let answer = client.receive().await;
    assert_eq!(answer["id"], 41, "{answer}");
    assert_eq!(text(&answer), "5");
}

/// A server of the test tools over HTTP on a free loopback port.
async fn http_server(config: McpConfig) -> u16 {
    let (registry, _gate) = common::registry();
    let server = McpServer::new(registry, config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { server.serve_http(listener, std::future::pending()).await });
    port
}

/// Posts `body` as an MCP client would; the status code and the body of the answer.
async fn post(port: u16, body: &[u8]) -> (u16, String) {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    };
    let response = tokio::time::timeout(ANSWER_WITHIN, exchange)
        .await
        .expect("an answer in time");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok());
    (status.unwrap_or(0), body.to_owned())
}

/// Posts a `tools/call` of `add` with `arguments` as written; the answer as JSON.
async fn post_call(port: u16, arguments: &str) -> Value {
    let (status, body) = post(port, call_line(7, arguments).as_bytes()).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_arguments_sent_as_a_json_string_are_decoded_and_the_repair_recorded() {
    let port = http_server(McpConfig::default()).await;
    let answer = post_call(port, r#""{\"a\": 2, \"b\": 3}""#).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(text(&answer), "5");
    assert_eq!(
        answer["result"]["_meta"][REPAIRS][0]["code"],
        RepairCode::DoubleEncoded.as_str(),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_arguments_that_are_not_an_object_are_invalid_params() {
    let port = http_server(McpConfig::default()).await;
    for (arguments, kind) in [("[1, 2]", "not an array"), (r#""hello""#, "not a string")] {
        let answer = post_call(port, arguments).await;
        assert_eq!(answer["error"]["code"], -32602, "{arguments}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Invalid arguments for tool `add`:") && message.contains(kind),
            "{arguments}: {message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_duplicate_keys_get_the_answer_every_surface_gives() {
    let port = http_server(McpConfig::default()).await;
    let arguments = r#"{"a": 1, "a": 2, "b": 3}"#;
    let answer = post_call(port, arguments).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(text(&answer), reader_says(arguments).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_a_body_starting_with_a_byte_order_mark_is_read() {
    let port = http_server(McpConfig::default()).await;
    let body = [
        b"\xEF\xBB\xBF".as_slice(),
        call_line(7, r#"{"a": 2, "b": 3}"#).as_bytes(),
    ]
    .concat();
    let (status, body) = post(port, &body).await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(text(&answer), "5", "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_requests_need_no_handshake() {
    // Stateless: every request stands alone, so none waits for an `initialize`.
    let port = http_server(McpConfig::default()).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (status, body) = post(port, list.to_string().as_bytes()).await;
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).unwrap();
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    assert_eq!(text(&post_call(port, r#"{"a": 2, "b": 3}"#).await), "5");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_policy_set_on_the_server_is_the_one_the_reader_applies() {
    // Strict: the double encoding is refused, as the CLI's --strict refuses it.
    let config = McpConfig::default().with_policy(Policy::strict());
    let (mut client, _gate) = Client::connect(config).await;
    let answer = client.call("add", json!(r#"{"a": 2, "b": 3}"#)).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        text(&answer),
        registry_says_strictly(r#""{\"a\": 2, \"b\": 3}""#).await,
        "{answer}"
    );
}

/// What the argument reader says of `arguments` for `add` under the strict policy.
async fn registry_says_strictly(arguments: &str) -> String {
    let (registry, _gate) = common::registry();
    registry
        .call(
            "add",
            Arguments::Text(arguments),
            Context::new().with_policy(Policy::strict()),
        )
        .await
        .unwrap_err()
        .to_model_message()
}
