//! `Anthropic` and `ReAct` against a fake Anthropic Messages API on 127.0.0.1 that checks every
//! request as the real one does: what goes on the wire, the loop over real HTTP, retries,
//! failures, malformed replies, and the key kept out of everything.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/blocking.rs"]
mod blocking;

#[path = "support/fake_anthropic.rs"]
mod fake_anthropic;

use blocking::{CompleteBlocking, calls_of, text_of, text_pieces};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_anthropic::{API_VERSION, Ending, FakeServer, Reply};
use serde_json::{Value, json};
use toolsmith::{Dialect, Registry, Tool};
use toolsmith_agent::{
    AgentError, Anthropic, Delta, LanguageModel, LmError, Message, Predict, Question,
    QuestionAnswer, ReAct, Request, ToolCall, ToolChoice, ToolDeclaration, Usage,
};

const KEY: &str = "sk-ant-test-9f8e7d6c5b4a";

/// Adds two integers.
#[toolsmith::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn client(server: &FakeServer) -> Anthropic {
    Anthropic::new(server.base_url(), "claude-test")
        .unwrap()
        .api_key(Some(KEY.to_owned()))
        .backoff(Duration::from_millis(1))
        .timeout(Duration::from_secs(10))
}

fn ask(client: &Anthropic) -> Result<Message, LmError> {
    ask_with(client, &[Message::user("hi")], &[], &ToolChoice::Auto).map(|reply| reply.message)
}

fn ask_with(
    client: &Anthropic,
    messages: &[Message],
    tools: &[ToolDeclaration],
    tool_choice: &ToolChoice,
) -> Result<toolsmith_agent::Reply, LmError> {
    client.complete_blocking(Request {
        messages,
        tools,
        tool_choice,
        deadline: None,
        max_tokens: None,
        temperature: None,
    })
}

fn agent(server: &FakeServer) -> ReAct<QuestionAnswer> {
    let mut tools = Registry::new();
    tools.add(Arc::new(Add)).expect("one tool");
    ReAct::new(Arc::new(client(server)), &tools).expect("an agent")
}

fn question(text: &str) -> Question {
    Question {
        question: text.to_owned(),
    }
}

/// The body of request `index`, as the server received it, after checking the server took it.
fn accepted_body(server: &FakeServer, index: usize) -> Value {
    let seen = &server.requests()[index];
    assert_eq!(seen.refused, None, "the fake API refused request {index}");
    seen.body.clone()
}

fn tool_names(body: &Value) -> Vec<&str> {
    body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default()
}

#[test]
fn a_run_calls_tools_with_object_input_answers_them_in_one_turn_and_finishes() {
    let server = FakeServer::start(
        Some(KEY),
        vec![
            Reply::message(
                json!([
                    {"type": "text", "text": "I'll add both."},
                    {"type": "tool_use", "id": "toolu_01A", "name": "add",
                     "input": {"a": "2", "b": 3}},
                    {"type": "tool_use", "id": "toolu_01B", "name": "add",
                     "input": {"a": 1, "b": 1}},
                ]),
                "tool_use",
            )
            .usage(120, 40),
            Reply::tool_use(&[("toolu_01C", "finish", json!({"answer": "5 and 2"}))])
                .usage(180, 15),
        ],
    );
    let answer = agent(&server)
        .run_blocking(&question("2 + 3, and 1 + 1?"))
        .expect("an answer");
    assert_eq!(answer.output.answer, "5 and 2");
    assert_eq!(answer.lm_calls, 2);
    assert_eq!(answer.usage, Some(Usage::new(300, 55)));
    let repairs: Vec<&str> = answer.trajectory[0]
        .repairs
        .iter()
        .map(|r| r.code.as_str())
        .collect();
    assert!(repairs.contains(&"int_from_string"), "{repairs:?}");

    let first = &server.requests()[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.api_key.as_deref(), Some(KEY));
    assert_eq!(first.version.as_deref(), Some(API_VERSION));
    assert_eq!(first.authorization, None);
    let body = accepted_body(&server, 0);
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 4096);
    assert!(
        body["system"].as_str().is_some_and(|s| !s.is_empty()),
        "{body}"
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": "question: 2 + 3, and 1 + 1?"}])
    );
    assert_eq!(tool_names(&body), ["add", "finish"]);
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(
        body["tools"][0]["input_schema"]["required"],
        json!(["a", "b"])
    );
    assert_eq!(body["tools"][0]["description"], "Adds two integers.");
    assert_eq!(body["tools"][0].get("strict"), None);
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));

    // The second request carries the reply as it came and both results in one user turn.
    let second = accepted_body(&server, 1);
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "I'll add both."},
            {"type": "tool_use", "id": "toolu_01A", "name": "add", "input": {"a": "2", "b": 3}},
            {"type": "tool_use", "id": "toolu_01B", "name": "add", "input": {"a": 1, "b": 1}},
        ]})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "5"},
            {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "2"},
        ]})
    );
}

#[test]
fn the_request_puts_system_apart_merges_turns_and_declares_strict_tools() {
    let server = FakeServer::start(Some(KEY), vec![Reply::text("Done.")]);
    let client = client(&server)
        .strict(true)
        .temperature(0.2)
        .max_tokens(1000);
    assert_eq!(client.dialect(), Dialect::Anthropic { strict: true });
    let messages = [
        Message::system("You add numbers."),
        Message::user("2 + 3?"),
        Message {
            content: Some("Adding.".into()),
            ..Message::tool_calls(vec![
                // Argument text, as another API's model sends it: read into an object.
                ToolCall::new("call_1", "add", json!(r#"{"a": 2, "b": 3}"#)),
                ToolCall::new("call_2", "add", json!({"a": 3, "b": 2})),
            ])
        },
        Message::tool_result("call_1", "5"),
        Message::tool_result("call_2", "5"),
        Message::user("Answer in one word."),
        Message::system("Be polite."),
    ];
    let tools = [ToolDeclaration::of(&Add)];
    let reply = ask_with(&client, &messages, &tools, &ToolChoice::Required).expect("a reply");
    assert_eq!(reply.message.content.as_deref(), Some("Done."));
    assert_eq!(reply.usage, Some(Usage::new(25, 10)));
    let body = accepted_body(&server, 0);
    assert_eq!(body["system"], "You add numbers.\n\nBe polite.");
    assert_eq!(body["max_tokens"], 1000);
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    assert_eq!(body["tools"][0]["strict"], true);
    assert_eq!(
        body["tools"][0]["input_schema"]["additionalProperties"],
        false
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "2 + 3?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Adding."},
                {"type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 2, "b": 3}},
                {"type": "tool_use", "id": "call_2", "name": "add", "input": {"a": 3, "b": 2}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "5"},
                {"type": "tool_result", "tool_use_id": "call_2", "content": "5"},
                {"type": "text", "text": "Answer in one word."},
            ]},
        ])
    );
}

#[test]
fn a_named_tool_choice_is_a_tool_choice_of_type_tool_and_no_tools_send_none() {
    let server = FakeServer::start(
        Some(KEY),
        vec![Reply::tool_use(&[(
            "toolu_01",
            "finish",
            json!({"answer": "Paris"}),
        )])],
    );
    let answer = Predict::<QuestionAnswer>::new(Arc::new(client(&server)))
        .expect("a predictor")
        .call_blocking(&question("The capital of France?"))
        .expect("an answer");
    assert_eq!(answer.output.answer, "Paris");
    let body = accepted_body(&server, 0);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "finish"})
    );
    assert_eq!(tool_names(&body), ["finish"]);

    let plain = client(&server)
        .request_body(&Request {
            messages: &[Message::user("hi")],
            tools: &[],
            tool_choice: &ToolChoice::Required,
            deadline: None,
            max_tokens: None,
            temperature: None,
        })
        .unwrap();
    assert_eq!(plain.get("tools"), None);
    assert_eq!(plain.get("tool_choice"), None);
}

#[test]
fn a_529_with_retry_after_is_retried_after_the_wait_asked() {
    let server = FakeServer::start(
        Some(KEY),
        vec![
            Reply::error(529, "overloaded_error", "Overloaded").header("retry-after", "1"),
            Reply::text("finally"),
        ],
    );
    let started = Instant::now();
    let reply = ask(&client(&server)).expect("a reply after a retry");
    assert_eq!(reply.content.as_deref(), Some("finally"));
    assert_eq!(server.requests().len(), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_429_that_persists_fails_after_the_retries_with_the_servers_message() {
    let message = "Number of request tokens has exceeded your per-minute rate limit";
    let server = FakeServer::start(
        Some(KEY),
        (0..3)
            .map(|_| Reply::error(429, "rate_limit_error", message).header("retry-after", "0"))
            .collect(),
    );
    let error = ask(&client(&server).retries(2)).unwrap_err();
    assert_eq!(
        error,
        LmError::Status {
            status: 429,
            message: format!("rate_limit_error: {message}"),
            attempts: 3,
        }
    );
    assert_eq!(
        error.to_string(),
        format!(
            "the model server answered HTTP 429: rate_limit_error: {message} (after 3 attempts)"
        )
    );
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_400_fails_at_once_with_the_servers_message() {
    let server = FakeServer::start(
        Some(KEY),
        vec![
            Reply::error(400, "invalid_request_error", "prompt is too long"),
            Reply::text("never asked"),
        ],
    );
    let error = ask(&client(&server)).unwrap_err();
    assert_eq!(
        error,
        LmError::Status {
            status: 400,
            message: "invalid_request_error: prompt is too long".into(),
            attempts: 1,
        }
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_conversation_the_api_refuses_fails_at_once_with_its_reason() {
    let server = FakeServer::start(Some(KEY), vec![Reply::text("never asked")]);
    let error = ask_with(
        &client(&server),
        &[Message::assistant("I speak first."), Message::user("hi")],
        &[],
        &ToolChoice::Auto,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model server answered HTTP 400: invalid_request_error: messages: first message \
         must use the \"user\" role"
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_tool_name_the_api_refuses_is_an_error_before_anything_is_sent() {
    let server = FakeServer::start(Some(KEY), vec![Reply::text("never asked")]);
    let tools = [ToolDeclaration::new(
        "add numbers",
        "Adds.",
        Add.parameters().clone(),
    )];
    let error = ask_with(
        &client(&server),
        &[Message::user("hi")],
        &tools,
        &ToolChoice::Auto,
    )
    .unwrap_err();
    assert!(matches!(error, LmError::Declaration(_)), "{error:?}");
    assert!(server.requests().is_empty());
}

#[test]
fn malformed_and_cut_off_replies_are_errors_that_say_why() {
    let tool_use = |input: Value| {
        json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
               "content": [{"type": "tool_use", "id": "toolu_1", "name": "add", "input": input}]})
    };
    let cases = [
        (Reply::raw(200, "{\"content\": ["), "it is not JSON"),
        (
            Reply::json(json!({"id": "msg_1", "type": "message", "role": "assistant"})),
            "it has no `content` array",
        ),
        (
            Reply::json(json!({"type": "message", "content": "hello"})),
            "its `content` is a string, not an array of blocks",
        ),
        (
            Reply::json(json!({"type": "message", "content": [{"text": "hello"}]})),
            "content block 0 has no `type`",
        ),
        (
            Reply::json(json!({"type": "message", "content": [
                {"type": "tool_use", "id": "toolu_1", "input": {}}
            ]})),
            "content block 0 (`tool_use`) has no `name`",
        ),
        (
            Reply::json(tool_use(json!("{\"a\": 1}"))),
            "content block 0 (`tool_use`) of `add` has a string as its `input`, not an object",
        ),
        (
            Reply::message(
                json!([
                    {"type": "text", "text": "Let me add."},
                    {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1}},
                ]),
                "max_tokens",
            ),
            "it was cut off at `max_tokens` (4096 tokens) in a call of `add`, whose arguments \
             may be incomplete; raise `max_tokens`",
        ),
        (
            Reply::message(json!([]), "max_tokens"),
            "it was cut off at `max_tokens` (4096 tokens) before the model had written anything",
        ),
        (
            Reply::json(json!({"type": "error",
                               "error": {"type": "overloaded_error", "message": "Overloaded"}})),
            "it is an error, not a message: overloaded_error: Overloaded",
        ),
    ];
    let expected: Vec<&str> = cases.iter().map(|(_, words)| *words).collect();
    let server = FakeServer::start(
        Some(KEY),
        cases.iter().map(|(reply, _)| reply.clone()).collect(),
    );
    let client = client(&server);
    for words in expected {
        let error = ask(&client).unwrap_err();
        if words.contains("cut off") {
            assert!(matches!(error, LmError::CutOff { .. }), "{error:?}");
        } else {
            assert!(matches!(error, LmError::Malformed { .. }), "{error:?}");
        }
        assert!(error.to_string().contains(words), "{error} / {words}");
    }
}

#[test]
fn a_reply_cut_off_mid_call_ends_a_run_rather_than_answering() {
    let complete = FakeServer::start(
        Some(KEY),
        vec![Reply::tool_use(&[(
            "toolu_1",
            "finish",
            json!({"answer": "Par"}),
        )])],
    );
    let cut = FakeServer::start(
        Some(KEY),
        vec![Reply::message(
            json!([{"type": "tool_use", "id": "toolu_1", "name": "finish",
                    "input": {"answer": "Par"}}]),
            "max_tokens",
        )],
    );
    // The same call, complete, is an answer; cut off by `max_tokens`, it is not.
    assert!(agent(&complete).run_blocking(&question("?")).is_ok());
    let error = agent(&cut).run_blocking(&question("?")).unwrap_err();
    assert!(
        matches!(error, AgentError::Lm(LmError::CutOff { .. })),
        "{error:?}"
    );
    assert!(error.to_string().contains("raise `max_tokens`"), "{error}");
}

#[test]
fn the_key_never_appears_in_an_error_or_debug_output() {
    let server = FakeServer::start(
        Some(KEY),
        vec![
            Reply::error(
                401,
                "authentication_error",
                &format!("invalid x-api-key: {KEY}"),
            ),
            Reply::raw(200, format!("<html>bad gateway for key {KEY}</html>")),
        ],
    );
    let client = client(&server);
    let debug = format!("{client:?}");
    assert!(!debug.contains(KEY), "{debug}");
    let error = agent(&server).run_blocking(&question("?")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model server answered HTTP 401: authentication_error: invalid x-api-key: [redacted]"
    );
    assert!(!format!("{error:?}").contains(KEY));
    let malformed = ask(&client).unwrap_err();
    assert!(malformed.to_string().contains("[redacted]"), "{malformed}");
    assert!(!format!("{malformed} {malformed:?}").contains(KEY));
}

#[test]
fn without_a_key_no_x_api_key_header_is_sent() {
    let keyed = FakeServer::start(Some(KEY), vec![Reply::text("never asked")]);
    let error = ask(&client(&keyed).api_key(None)).unwrap_err();
    assert_eq!(
        error,
        LmError::Status {
            status: 401,
            message: "authentication_error: x-api-key header is required".into(),
            attempts: 1,
        }
    );
    assert_eq!(keyed.requests()[0].api_key, None);

    let gateway = FakeServer::start(None, vec![Reply::text("hello")]);
    let client = Anthropic::new(gateway.base_url(), "m").unwrap();
    assert_eq!(ask(&client).unwrap().content.as_deref(), Some("hello"));
    assert_eq!(gateway.requests()[0].api_key, None);
}

#[test]
fn the_base_url_is_checked_when_the_client_is_made() {
    assert_eq!(Anthropic::DEFAULT_BASE_URL, "https://api.anthropic.com");
    let client = Anthropic::new("https://api.anthropic.com/", "claude-test").unwrap();
    assert_eq!(client.url(), "https://api.anthropic.com/v1/messages");
    assert_eq!(client.model(), "claude-test");
    let error = Anthropic::new("api.anthropic.com", "m").unwrap_err();
    assert_eq!(
        error.to_string(),
        "`api.anthropic.com` is not an http(s) URL: it has no scheme (start it with http:// or \
         https://)"
    );
}

/// Posts `body` to the fake as it is, with the API's headers unless `headers` replace them.
fn post_raw(server: &FakeServer, headers: &[(&str, &str)], body: &Value) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = agent
        .post(format!("{}/v1/messages", server.base_url()))
        .header("content-type", "application/json");
    let defaults = [("x-api-key", KEY), ("anthropic-version", API_VERSION)];
    for (name, value) in defaults {
        if !headers.iter().any(|(n, _)| *n == name) {
            request = request.header(name, value);
        }
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.send(body.to_string()).expect("an answer");
    let status = response.status().as_u16();
    (
        status,
        response.body_mut().read_to_string().unwrap_or_default(),
    )
}

#[test]
fn the_fake_api_refuses_what_the_real_one_refuses() {
    let server = FakeServer::start(Some(KEY), vec![Reply::text("the one accepted")]);
    let tools = json!([{"name": "add", "input_schema": {"type": "object", "properties": {}}}]);
    let call = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}
    ]});
    let good = json!({"model": "m", "max_tokens": 10, "tools": tools, "messages": [
        {"role": "user", "content": "hi"},
        call,
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]},
    ]});
    let with = |key: &str, value: Value| {
        let mut body = good.clone();
        body[key] = value;
        body
    };
    let refused = [
        (
            vec![("x-api-key", "sk-ant-other")],
            good.clone(),
            "invalid x-api-key",
        ),
        (
            vec![("anthropic-version", "2020-01-01")],
            good.clone(),
            "anthropic-version",
        ),
        (
            vec![],
            with("stop", json!(true)),
            "stop: Extra inputs are not permitted",
        ),
        (
            vec![],
            good.as_object()
                .map(|o| {
                    let mut o = o.clone();
                    o.remove("max_tokens");
                    Value::Object(o)
                })
                .unwrap(),
            "max_tokens: Field required",
        ),
        (
            vec![],
            with(
                "messages",
                json!([{"role": "user", "content": "a"},
                                    {"role": "user", "content": "b"}]),
            ),
            "roles must alternate",
        ),
        (
            vec![],
            with(
                "messages",
                json!([
                    {"role": "user", "content": "hi"},
                    call,
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2"}]},
                ]),
            ),
            "unexpected `tool_use_id`",
        ),
        (
            vec![],
            with(
                "messages",
                json!([
                    {"role": "user", "content": "hi"}, call, {"role": "user", "content": "ok"},
                ]),
            ),
            "`tool_use` ids were found without `tool_result` blocks",
        ),
        (
            vec![],
            with(
                "tools",
                json!([{"name": "add two", "input_schema": {"type": "object"}}]),
            ),
            "tools.0.name: String should match pattern",
        ),
        (
            vec![],
            with(
                "tools",
                json!([{"name": "add", "input_schema": {"type": "string"}}]),
            ),
            "tools.0.input_schema.type: Input should be 'object'",
        ),
        (
            vec![],
            with("tool_choice", json!({"type": "tool", "name": "sub"})),
            "Tool 'sub' not found",
        ),
    ];
    for (headers, body, words) in refused {
        let (status, text) = post_raw(&server, &headers, &body);
        assert!(matches!(status, 400 | 401), "{status}: {text}");
        let error: Value = serde_json::from_str(&text).expect("a JSON error");
        assert_eq!(error["type"], "error", "{text}");
        let message = error["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains(words), "{message} / {words}");
    }
    let (status, text) = post_raw(&server, &[], &good);
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("the one accepted"), "{text}");
}

/// Asks `client` the same with tools, whole then streamed: both replies, and the deltas.
fn whole_and_streamed(
    client: &Anthropic,
) -> (toolsmith_agent::Reply, toolsmith_agent::Reply, Vec<Delta>) {
    let messages = [Message::user("2 + 3?")];
    let tools = [ToolDeclaration::of(&Add)];
    let request = Request {
        messages: &messages,
        tools: &tools,
        tool_choice: &ToolChoice::Auto,
        deadline: None,
        max_tokens: None,
        temperature: None,
    };
    let whole = client.complete_blocking(request).expect("a whole reply");
    let (streamed, deltas) = client.stream_blocking(request);
    (whole, streamed.expect("a streamed reply"), deltas)
}

/// `client` asked "hi", streamed: the reply, and the deltas.
fn stream(client: &Anthropic) -> (Result<toolsmith_agent::Reply, LmError>, Vec<Delta>) {
    client.stream_blocking(Request {
        messages: &[Message::user("hi")],
        tools: &[],
        tool_choice: &ToolChoice::Auto,
        deadline: None,
        max_tokens: None,
        temperature: None,
    })
}

#[test]
fn a_streamed_message_arrives_in_deltas_and_is_the_one_complete_gives() {
    let reply = Reply::message(
        json!([
            {"type": "thinking", "thinking": "Two and three.", "signature": "EqQBCgIYAh"},
            {"type": "text", "text": "Let me add "},
            {"type": "text", "text": "them."},
            {"type": "tool_use", "id": "toolu_01A", "name": "add",
             "input": {"a": "2", "b": 3, "note": "a \"quoted\" ünïcode input"}},
            {"type": "tool_use", "id": "toolu_01B", "name": "add", "input": {}},
        ]),
        "tool_use",
    )
    .usage(120, 40)
    .pieces(3);
    let server = FakeServer::start(Some(KEY), vec![reply.clone(), reply]);
    let (whole, streamed, deltas) = whole_and_streamed(&client(&server));
    assert_eq!(streamed, whole);
    assert_eq!(
        streamed.message.content.as_deref(),
        Some("Let me add them.")
    );
    assert_eq!(
        streamed.message.tool_calls,
        [
            ToolCall::new(
                "toolu_01A",
                "add",
                json!({"a": "2", "b": 3, "note": "a \"quoted\" ünïcode input"})
            ),
            ToolCall::new("toolu_01B", "add", json!({})),
        ]
    );
    assert_eq!(streamed.usage, Some(Usage::new(120, 40)));
    // The thinking is no text; the text came in pieces, in order, then the calls.
    assert_eq!(text_of(&deltas), "Let me add them.");
    assert_eq!(text_pieces(&deltas), 6);
    assert_eq!(
        calls_of(&deltas),
        [
            (0, "toolu_01A".to_owned(), "add".to_owned()),
            (1, "toolu_01B".to_owned(), "add".to_owned()),
        ]
    );
    let seen = &server.requests()[1];
    assert_eq!(seen.refused, None);
    assert_eq!(seen.body["stream"], true);
    assert_eq!(seen.api_key.as_deref(), Some(KEY));
    assert_eq!(server.requests()[0].body.get("stream"), None);
}

#[test]
fn a_streamed_reply_cut_off_by_max_tokens_is_the_error_complete_gives() {
    let reply = Reply::message(
        json!([{"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1}}]),
        "max_tokens",
    );
    let server = FakeServer::start(Some(KEY), vec![reply.clone(), reply]);
    let client = client(&server);
    let whole = ask(&client).unwrap_err();
    let (streamed, deltas) = stream(&client);
    assert_eq!(streamed.unwrap_err(), whole);
    assert!(
        whole.to_string().contains("cut off at `max_tokens`"),
        "{whole}"
    );
    assert_eq!(calls_of(&deltas).len(), 1);
}

#[test]
fn a_stream_cut_short_or_broken_off_is_an_error() {
    let text = "An answer the server never finishes.";
    let server = FakeServer::start(
        Some(KEY),
        vec![
            Reply::text(text).ending(Ending::CutAfter(5)),
            Reply::text(text).ending(Ending::BrokenAfter(5)),
        ],
    );
    let client = client(&server);
    let (cut, deltas) = stream(&client);
    let cut = cut.unwrap_err();
    assert!(matches!(cut, LmError::Malformed { .. }), "{cut:?}");
    assert!(
        cut.to_string()
            .ends_with("the stream was cut short: it ended before `message_stop`"),
        "{cut}"
    );
    // message_start, ping, content_block_start, then two pieces of text.
    assert_eq!(text_of(&deltas), "An answe");
    let (broken, _) = stream(&client);
    let broken = broken.unwrap_err();
    assert!(
        broken
            .to_string()
            .contains("the stream was cut short after 5 events: "),
        "{broken}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_error_event_is_a_status_error_with_anthropics_words_and_never_the_key() {
    let server = FakeServer::start(
        Some(KEY),
        vec![
            Reply::text("Half of it").stream_error(4, "overloaded_error", "Overloaded"),
            Reply::text("Other half").stream_error(
                0,
                "api_error",
                &format!("Internal error for key {KEY}"),
            ),
        ],
    );
    let client = client(&server);
    let (error, deltas) = stream(&client);
    let error = error.unwrap_err();
    assert_eq!(
        error,
        LmError::Status {
            status: 529,
            message: "overloaded_error: Overloaded".into(),
            attempts: 1,
        }
    );
    assert_eq!(
        error.to_string(),
        "the model server answered HTTP 529: overloaded_error: Overloaded"
    );
    assert_eq!(text_of(&deltas), "Half");
    let (error, _) = stream(&client);
    let error = error.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model server answered HTTP 500: api_error: Internal error for key [redacted]"
    );
    assert!(!format!("{error:?}").contains(KEY));
}

#[test]
fn a_529_before_the_stream_is_retried_and_the_stream_then_read() {
    let server = FakeServer::start(
        Some(KEY),
        vec![
            Reply::error(529, "overloaded_error", "Overloaded").header("retry-after", "0"),
            Reply::text("Here it is.").usage(7, 4),
        ],
    );
    let (reply, deltas) = stream(&client(&server));
    let reply = reply.expect("a reply after the retry");
    assert_eq!(reply.message.content.as_deref(), Some("Here it is."));
    assert_eq!(reply.usage, Some(Usage::new(7, 4)));
    assert_eq!(text_of(&deltas), "Here it is.");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn the_fake_api_refuses_a_stream_that_is_no_boolean() {
    let server = FakeServer::start(Some(KEY), vec![Reply::text("never sent")]);
    let body = json!({"model": "claude-test", "max_tokens": 10, "stream": "yes",
                      "messages": [{"role": "user", "content": "hi"}]});
    let (status, text) = post_raw(&server, &[], &body);
    assert_eq!(status, 400);
    assert!(
        text.contains("stream: Input should be a valid boolean"),
        "{text}"
    );
}
