//! `Gemini` and `ReAct` against a fake Gemini API on 127.0.0.1 that checks every request as
//! strictly as the real one: what goes on the wire, retries, failures, and the loop over real
//! HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/blocking.rs"]
mod blocking;

#[path = "support/fake_gemini.rs"]
mod fake_gemini;

use blocking::{CompleteBlocking, calls_of, text_of, text_pieces};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_gemini::{Ending, FakeGemini, KEY, MODEL, Reply, call, call_with_id, sign, text, thought};
use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith::{Describe, Registry};
use toolsmith_agent::{
    AgentError, Delta, Gemini, LmError, Message, Question, QuestionAnswer, ReAct, Request,
    ToolCall, ToolChoice, ToolDeclaration, Usage,
};

/// Adds two integers.
#[toolsmith::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Where to go.
#[derive(Debug, Deserialize, toolsmith::ToolType)]
struct Place {
    /// The city.
    city: String,
    /// The postcode, when it matters.
    postcode: Option<String>,
}

/// How to get there.
#[derive(Debug, Clone, Copy, Deserialize, toolsmith::ToolType)]
#[serde(rename_all = "snake_case")]
enum Mode {
    /// On foot.
    Walk,
    /// By train.
    Train,
}

/// Plans a trip.
#[toolsmith::tool]
fn plan_trip(to: Place, mode: Mode, days: Option<u32>, luggage: BTreeMap<String, u32>) -> String {
    let postcode = to.postcode.as_deref().unwrap_or("any postcode");
    format!(
        "{mode:?} to {} ({postcode}) for {days:?} days with {luggage:?}",
        to.city
    )
}

fn client(server: &FakeGemini) -> Gemini {
    Gemini::new(server.base_url(), MODEL)
        .unwrap()
        .api_key(Some(KEY.to_owned()))
        .backoff(Duration::from_millis(1))
        .timeout(Duration::from_secs(10))
}

fn ask(client: &Gemini) -> Result<Message, LmError> {
    client
        .complete_blocking(Request {
            messages: &[Message::user("hi")],
            tools: &[],
            tool_choice: &ToolChoice::Auto,
            deadline: None,
            max_tokens: None,
            temperature: None,
        })
        .map(|reply| reply.message)
}

fn agent(server: &FakeGemini) -> ReAct<QuestionAnswer> {
    let mut tools = Registry::new();
    tools.add(Arc::new(Add)).expect("one tool");
    ReAct::new(Arc::new(client(server)), &tools).expect("an agent")
}

fn question(text: &str) -> Question {
    Question {
        question: text.to_owned(),
    }
}

/// Every request was taken: none refused by the fake's checks.
fn assert_all_taken(server: &FakeGemini) {
    for (i, seen) in server.requests().iter().enumerate() {
        assert_eq!(seen.refused, None, "request {i} was refused: {}", seen.body);
        assert_eq!(seen.status, 200, "request {i}");
    }
}

#[test]
fn a_run_sends_the_key_in_a_header_and_each_result_named_after_its_call() {
    let server = FakeGemini::start(vec![
        Reply::calls(&[
            ("add", json!({"a": "2", "b": 40})),
            ("add", json!({"a": 1, "b": 1})),
        ])
        .usage(120, 30),
        Reply::calls(&[("finish", json!({"answer": "42"}))]).usage(180, 12),
    ]);
    let answer = agent(&server)
        .run_blocking(&question("2 + 40?"))
        .expect("an answer");
    assert_all_taken(&server);
    assert_eq!(answer.output.answer, "42");
    assert_eq!(answer.lm_calls, 2);
    assert_eq!(answer.usage, Some(Usage::new(300, 42)));
    // The "2" was coerced, and the repair recorded.
    assert_eq!(answer.trajectory[0].observation, "42");
    assert_eq!(answer.trajectory[0].call_id, "call_0");
    assert_eq!(
        answer.trajectory[0].repairs[0].code.as_str(),
        "int_from_string"
    );

    let requests = server.requests();
    let first = &requests[0];
    assert_eq!(
        first.path,
        format!("/v1beta/models/{MODEL}:generateContent")
    );
    assert_eq!(first.api_key.as_deref(), Some(KEY));
    let system = first.body["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(system.contains("finish"), "{system}");
    assert_eq!(
        first.body["contents"],
        json!([{"role": "user", "parts": [{"text": "question: 2 + 40?"}]}])
    );
    let declarations = &first.body["tools"][0]["functionDeclarations"];
    let declared: Vec<&str> = declarations
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["name"].as_str())
        .collect();
    assert_eq!(declared, ["add", "finish"]);
    assert_eq!(declarations[0]["description"], "Adds two integers.");
    assert_eq!(declarations[0]["parameters"]["required"], json!(["a", "b"]));
    assert_eq!(
        first.body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "AUTO"}})
    );

    // The second request carries both calls, the first with the signature the model gave it,
    // and both results in one user turn, in order, named after their calls.
    let contents = &requests[1].body["contents"];
    let model_turn = &contents[1];
    assert_eq!(model_turn["role"], "model");
    assert_eq!(
        model_turn["parts"][0]["functionCall"],
        json!({"name": "add", "args": {"a": "2", "b": 40}})
    );
    assert!(model_turn["parts"][0]["thoughtSignature"].is_string());
    assert_eq!(model_turn["parts"][1].get("thoughtSignature"), None);
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "add", "response": {"result": "42"}}},
            {"functionResponse": {"name": "add", "response": {"result": "2"}}},
        ]})
    );
    assert_eq!(contents.as_array().map(Vec::len), Some(3));
}

#[test]
fn gemini_3_call_ids_and_signatures_go_back_and_thoughts_are_not_text() {
    let server = FakeGemini::start(vec![
        Reply::parts(vec![
            thought("The user wants a sum; I should call add."),
            text("Let me add."),
            call_with_id("fc-7a", "add", json!({"a": 20, "b": 22})),
        ]),
        Reply::parts(vec![
            thought("Done."),
            call_with_id("fc-7b", "finish", json!({"answer": "42"})),
        ]),
    ]);
    let answer = agent(&server)
        .run_blocking(&question("20 + 22?"))
        .expect("an answer");
    assert_all_taken(&server);
    assert_eq!(answer.output.answer, "42");
    assert_eq!(answer.trajectory[0].call_id, "fc-7a");
    let contents = &server.requests()[1].body["contents"];
    assert_eq!(
        contents[1]["parts"][0],
        json!({"text": "Let me add."}),
        "the thought is not sent back as text"
    );
    assert_eq!(contents[1]["parts"][1]["functionCall"]["id"], "fc-7a");
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"],
        json!({"name": "add", "response": {"result": "42"}, "id": "fc-7a"})
    );
}

#[test]
fn a_reply_of_thoughts_and_text_gives_the_text_only() {
    let server = FakeGemini::start(vec![Reply::parts(vec![
        thought("Hmm."),
        text("Hello"),
        text(", world"),
    ])]);
    let message = ask(&client(&server)).expect("a reply");
    assert_eq!(message.content.as_deref(), Some("Hello, world"));
    assert!(message.tool_calls.is_empty());
}

#[test]
fn declarations_with_optional_nested_enum_and_map_fields_pass_the_strict_schema_check() {
    let mut tools = Registry::new();
    tools.add(Arc::new(PlanTrip)).expect("one tool");
    let server = FakeGemini::start(vec![
        Reply::calls(&[(
            "plan_trip",
            json!({"to": {"city": "Lyon"}, "mode": "TRAIN",
                   "luggage": [{"key": "bags", "value": "2"}]}),
        )]),
        Reply::calls(&[("finish", json!({"answer": "planned"}))]),
    ]);
    let agent = ReAct::<QuestionAnswer>::new(Arc::new(client(&server)), &tools).unwrap();
    let answer = agent
        .run_blocking(&question("Plan a trip."))
        .expect("an answer");
    assert_all_taken(&server);
    assert_eq!(answer.output.answer, "planned");
    assert_eq!(
        answer.trajectory[0].observation,
        r#"Train to Lyon (any postcode) for None days with {"bags": 2}"#
    );
    let parameters =
        &server.requests()[0].body["tools"][0]["functionDeclarations"][0]["parameters"];
    let properties = &parameters["properties"];
    assert_eq!(properties["to"]["type"], "object");
    assert_eq!(properties["to"]["properties"]["postcode"]["nullable"], true);
    assert_eq!(properties["mode"]["enum"], json!(["walk", "train"]));
    assert_eq!(properties["days"]["nullable"], true);
    assert_eq!(properties["luggage"]["type"], "array");
    assert_eq!(parameters.get("additionalProperties"), None);
}

#[test]
fn the_fake_refuses_what_the_real_api_refuses() {
    let server = FakeGemini::start(Vec::new());
    let url = format!(
        "{}/v1beta/models/{MODEL}:generateContent",
        server.base_url()
    );
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let post = |url: &str, key: Option<&str>, body: &Value| -> (u16, Value) {
        let mut request = agent.post(url);
        if let Some(key) = key {
            request = request.header("x-goog-api-key", key);
        }
        let mut response = request.send(body.to_string()).unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str(&text).unwrap())
    };
    let hi = json!([{"role": "user", "parts": [{"text": "hi"}]}]);
    let with_parameters = |parameters: Value| {
        json!({"contents": hi, "tools": [{"functionDeclarations": [
            {"name": "f", "description": "F.", "parameters": parameters}]}]})
    };
    let refused = [
        (
            with_parameters(json!({"type": "object", "properties": {"m": {
                "type": "object", "additionalProperties": {"type": "integer"}}}})),
            "Unknown name \"additionalProperties\" at \
             'tools[0].function_declarations[0].parameters.properties[0].value'",
        ),
        (
            with_parameters(json!({"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}})),
            "Unknown name \"$ref\" at \
             'tools[0].function_declarations[0].parameters.properties[0].value'",
        ),
        (
            with_parameters(json!({"type": "object", "$defs": {"N": {"type": "string"}}})),
            "Unknown name \"$defs\" at 'tools[0].function_declarations[0].parameters'",
        ),
        (
            with_parameters(json!({"type": "object", "properties": {
                "k": {"type": "string", "const": "x"}}})),
            "Unknown name \"const\"",
        ),
        (
            with_parameters(json!({"type": "object", "properties": {
                "o": {"type": ["string", "null"]}}})),
            "Proto field is not repeating, cannot start list.",
        ),
        (
            with_parameters(json!({"type": "object", "required": ["ghost"], "properties": {}})),
            "property is not defined",
        ),
        (
            json!({"contents": hi, "tools": [{"functionDeclarations": [
                {"name": "9lives", "description": "N."}]}]}),
            "Invalid function name",
        ),
        (
            json!({"contents": [{"role": "assistant", "parts": [{"text": "hi"}]}]}),
            "Please use a valid role: user, model.",
        ),
        (
            json!({"contents": [{"role": "user", "parts": [
                {"functionResponse": {"name": "f", "response": {"result": "1"}}}]}]}),
            "function response turn comes immediately after a function call turn",
        ),
        (
            json!({"contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "g", "response": {"result": "1"}}}]}]}),
            "answers no function call",
        ),
        (
            json!({"contents": [{"role": "user", "parts": [{"text": "hi", "role": "x"}]}]}),
            "Unknown name \"role\"",
        ),
        (json!({"contents": []}), "contents is not specified"),
        (
            json!({"contents": hi, "toolConfig": {"functionCallingConfig": {
                "mode": "AUTO", "allowedFunctionNames": ["f"]}}}),
            "allowed_function_names should only be set when the Mode is ANY",
        ),
    ];
    for (body, expected) in &refused {
        let (status, answer) = post(&url, Some(KEY), body);
        assert_eq!(status, 400, "{body}");
        assert_eq!(answer["error"]["status"], "INVALID_ARGUMENT", "{body}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(expected), "{body}: {message}");
    }
    let (status, answer) = post(&url, None, &json!({"contents": hi}));
    assert_eq!(
        (status, &answer["error"]["status"]),
        (403, &json!("PERMISSION_DENIED"))
    );
    let (status, answer) = post(&url, Some("AIza-wrong"), &json!({"contents": hi}));
    assert_eq!(
        (status, &answer["error"]["status"]),
        (400, &json!("INVALID_ARGUMENT"))
    );
    let other = url.replace(MODEL, "gemini-0");
    let (status, answer) = post(&other, Some(KEY), &json!({"contents": hi}));
    assert_eq!(
        (status, &answer["error"]["status"]),
        (404, &json!("NOT_FOUND"))
    );
    // A valid request gets past the checks (to the end of the empty script).
    let (status, _) = post(
        &url,
        Some(KEY),
        &with_parameters(json!({"type": "object",
        "properties": {"x": {"type": "integer", "nullable": true, "minimum": 0}}})),
    );
    assert_eq!(status, 500);
}

#[test]
fn a_call_sent_back_without_its_signature_is_refused_as_the_real_api_does() {
    let server = FakeGemini::start(vec![
        Reply::calls(&[("add", json!({"a": 1, "b": 2}))]),
        Reply::text("never reached"),
    ]);
    let client = client(&server);
    let first = client
        .complete_blocking(Request {
            messages: &[Message::user("1 + 2?")],
            tools: &[ToolDeclaration::of(&Add)],
            tool_choice: &ToolChoice::Auto,
            deadline: None,
            max_tokens: None,
            temperature: None,
        })
        .unwrap()
        .message;
    assert!(first.tool_calls[0].signature.is_some(), "{first:?}");
    // The same call without its signature, as a program that dropped it would send it back.
    let mut unsigned = first.clone();
    unsigned.tool_calls[0].signature = None;
    let forgotten = [
        Message::user("1 + 2?"),
        unsigned,
        Message::tool_result(&first.tool_calls[0].id, "3"),
    ];
    let error = client
        .complete_blocking(Request {
            messages: &forgotten,
            tools: &[ToolDeclaration::of(&Add)],
            tool_choice: &ToolChoice::Auto,
            deadline: None,
            max_tokens: None,
            temperature: None,
        })
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("INVALID_ARGUMENT: Function call is missing a thought_signature"),
        "{message}"
    );
    // The call as the model gave it carries its signature back.
    let messages = [
        Message::user("1 + 2?"),
        first.clone(),
        Message::tool_result(&first.tool_calls[0].id, "3"),
    ];
    let reply = client
        .complete_blocking(Request {
            messages: &messages,
            tools: &[ToolDeclaration::of(&Add)],
            tool_choice: &ToolChoice::Auto,
            deadline: None,
            max_tokens: None,
            temperature: None,
        })
        .expect("the signed call is taken");
    assert_eq!(reply.message.content.as_deref(), Some("never reached"));
}

#[test]
fn required_and_named_tool_choices_are_function_calling_modes() {
    let server = FakeGemini::start(vec![Reply::text("a"), Reply::text("b")]);
    let client = client(&server);
    for choice in [ToolChoice::Required, ToolChoice::Tool("add".into())] {
        client
            .complete_blocking(Request {
                messages: &[Message::system("Be brief."), Message::user("hi")],
                tools: &[ToolDeclaration::of(&Add)],
                tool_choice: &choice,
                deadline: None,
                max_tokens: None,
                temperature: None,
            })
            .unwrap();
    }
    assert_all_taken(&server);
    let requests = server.requests();
    assert_eq!(
        requests[0].body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY"}})
    );
    assert_eq!(
        requests[1].body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["add"]}})
    );
    assert_eq!(
        requests[1].body["systemInstruction"],
        json!({"parts": [{"text": "Be brief."}]})
    );
}

#[test]
fn without_a_key_no_key_header_is_sent() {
    let server = FakeGemini::serving(MODEL, None, vec![Reply::text("hello")]);
    let client = Gemini::new(server.base_url(), MODEL).unwrap().api_key(None);
    assert_eq!(
        ask(&client).expect("a reply").content.as_deref(),
        Some("hello")
    );
    assert_eq!(server.requests()[0].api_key, None);
}

#[test]
fn a_429_with_retry_info_is_retried_after_the_delay_it_asks() {
    let server = FakeGemini::start(vec![Reply::rate_limited("1s"), Reply::text("finally")]);
    let started = Instant::now();
    let reply = ask(&client(&server)).expect("a reply after a retry");
    assert_eq!(reply.content.as_deref(), Some("finally"));
    assert_eq!(server.requests().len(), 2);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}

#[test]
fn a_retry_delay_longer_than_the_client_waits_fails_at_once() {
    let server = FakeGemini::start(vec![Reply::rate_limited("86400s"), Reply::text("no")]);
    let error = ask(&client(&server)).unwrap_err();
    assert_eq!(
        error,
        LmError::RetryTooLate {
            status: 429,
            retry_after: Duration::from_secs(86400)
        }
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn rate_limits_that_persist_fail_after_the_retries_with_the_servers_words() {
    let server = FakeGemini::start((0..4).map(|_| Reply::rate_limited("0.01s")).collect());
    let error = ask(&client(&server).retries(3)).unwrap_err();
    assert_eq!(
        error,
        LmError::Status {
            status: 429,
            message: "RESOURCE_EXHAUSTED: You exceeded your current quota, please check your \
                      plan and billing details."
                .into(),
            attempts: 4
        }
    );
    assert_eq!(server.requests().len(), 4);
}

#[test]
fn a_503_is_retried_with_backoff() {
    let server = FakeGemini::start(vec![
        Reply::error(
            503,
            "UNAVAILABLE",
            "The model is overloaded. Please try again later.",
        ),
        Reply::text("ok"),
    ]);
    assert_eq!(
        ask(&client(&server)).unwrap().content.as_deref(),
        Some("ok")
    );
}

#[test]
fn a_400_fails_at_once_with_the_servers_status_and_message() {
    let server = FakeGemini::start(vec![Reply::text("never asked")]);
    let wrong = Gemini::new(server.base_url(), MODEL)
        .unwrap()
        .api_key(Some("AIza-not-the-key".to_owned()));
    let error = ask(&wrong).unwrap_err();
    assert_eq!(
        error,
        LmError::Status {
            status: 400,
            message: "INVALID_ARGUMENT: API key not valid. Please pass a valid API key.".into(),
            attempts: 1
        }
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn the_key_never_appears_in_an_error_the_url_or_debug_output() {
    let server = FakeGemini::start(vec![
        Reply::error(
            400,
            "INVALID_ARGUMENT",
            &format!("API key not valid: {KEY}. Please pass a valid API key."),
        ),
        Reply::text("never asked"),
    ]);
    let client = client(&server);
    let error = agent(&server).run_blocking(&question("?")).unwrap_err();
    let AgentError::Lm(LmError::Status {
        status, attempts, ..
    }) = &error
    else {
        panic!("expected an HTTP status error, got {error:?}");
    };
    assert_eq!((*status, *attempts), (400, 1));
    assert_eq!(
        error.to_string(),
        "the model server answered HTTP 400: INVALID_ARGUMENT: API key not valid: [redacted]. \
         Please pass a valid API key."
    );
    assert!(!format!("{error:?}").contains(KEY));
    assert!(!client.url().contains(KEY));
    assert!(!format!("{client:?}").contains(KEY));
    let seen = server.requests();
    assert!(!seen[0].path.contains(KEY) && !seen[0].path.contains('?'));
}

#[test]
fn a_blocked_prompt_or_an_unusable_candidate_is_a_clear_error() {
    let usage = json!({"promptTokenCount": 8, "totalTokenCount": 8});
    let server = FakeGemini::start(vec![
        Reply::json(json!({
            "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
            "usageMetadata": usage,
            "modelVersion": MODEL,
        })),
        Reply::json(json!({
            "candidates": [{"finishReason": "SAFETY", "index": 0, "safetyRatings": [
                {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH",
                 "blocked": true}]}],
            "usageMetadata": usage,
            "modelVersion": MODEL,
        })),
        Reply::parts(Vec::new()).finish("MALFORMED_FUNCTION_CALL"),
        // Thinking used up every output token.
        Reply::json(json!({
            "candidates": [{"content": {"role": "model"}, "finishReason": "MAX_TOKENS",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 72,
                              "thoughtsTokenCount": 64},
            "modelVersion": MODEL,
        })),
        Reply::parts(vec![json!({"functionCall": {"args": {"a": 1}}})]),
        Reply::raw(200, "{\"candidates\": ["),
        Reply::json(json!({"candidates": [], "modelVersion": MODEL})),
    ]);
    let client = client(&server);
    let expected = [
        "the prompt was blocked (PROHIBITED_CONTENT)",
        "the model stopped (SAFETY) with no text and no function call",
        "the model stopped (MALFORMED_FUNCTION_CALL)",
        "it was cut off at the token limit (`maxOutputTokens`, or the model's context) before \
         the model had written anything",
        "function call 0 has no `name`",
        "not JSON",
        "it has no `candidates[0]`",
    ];
    for expected in expected {
        let error = ask(&client).unwrap_err();
        if expected.contains("cut off") {
            assert!(matches!(error, LmError::CutOff { .. }), "{error:?}");
        } else {
            assert!(matches!(error, LmError::Malformed { .. }), "{error:?}");
        }
        assert!(error.to_string().contains(expected), "{error}");
    }
    assert_eq!(server.requests().len(), expected.len());
}

/// A candidate cut off at the token limit (`finishReason: MAX_TOKENS`) is refused, whole or
/// streamed; the text written by then comes with the error.
#[test]
fn a_candidate_cut_off_at_the_token_limit_is_refused_with_its_text() {
    let cut = Reply::text("The answer is").finish("MAX_TOKENS");
    let server = FakeGemini::start(vec![cut.clone(), cut]);
    let client = client(&server);
    let whole = ask(&client).unwrap_err();
    let LmError::CutOff { reason, text } = &whole else {
        panic!("{whole:?}");
    };
    assert_eq!(text.as_deref(), Some("The answer is"));
    assert!(reason.contains("in its text"), "{reason}");
    let (streamed, _) = stream(&client);
    assert_eq!(streamed.unwrap_err(), whole);
}

#[test]
fn a_tool_gemini_cannot_declare_fails_before_anything_is_sent() {
    #[derive(toolsmith::ToolType)]
    #[allow(dead_code)]
    struct Nothing {
        x: Option<u8>,
    }
    let server = FakeGemini::start(vec![Reply::text("never asked")]);
    let error = client(&server)
        .complete_blocking(Request {
            messages: &[Message::user("hi")],
            tools: &[ToolDeclaration::new(
                "9lives",
                "Starts with a digit.",
                Nothing::type_graph(),
            )],
            tool_choice: &ToolChoice::Auto,
            deadline: None,
            max_tokens: None,
            temperature: None,
        })
        .unwrap_err();
    assert!(matches!(error, LmError::Declaration(_)), "{error:?}");
    assert!(server.requests().is_empty());
}

#[test]
fn an_unreachable_server_is_an_error_naming_the_url_and_never_the_key() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free port");
    let client = Gemini::new(format!("http://127.0.0.1:{port}"), MODEL)
        .unwrap()
        .api_key(Some(KEY.to_owned()));
    let error = ask(&client).unwrap_err();
    assert!(matches!(error, LmError::Unreachable { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains(&format!(
            "127.0.0.1:{port}/v1beta/models/{MODEL}:generateContent"
        )),
        "{message}"
    );
    assert!(!message.contains(KEY));
}

#[test]
fn a_request_deadline_bounds_the_request() {
    let server = FakeGemini::start(vec![Reply::text("late").after(Duration::from_secs(3))]);
    let started = Instant::now();
    let error = client(&server)
        .complete_blocking(Request {
            messages: &[Message::user("hi")],
            tools: &[],
            tool_choice: &ToolChoice::Auto,
            deadline: Some(started + Duration::from_millis(300)),
            max_tokens: None,
            temperature: None,
        })
        .unwrap_err();
    assert!(matches!(error, LmError::Timeout { .. }), "{error:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

/// `client` asked "hi", streamed: the reply, and the deltas.
fn stream(client: &Gemini) -> (Result<toolsmith_agent::Reply, LmError>, Vec<Delta>) {
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
fn a_streamed_response_arrives_in_deltas_and_is_the_one_complete_gives() {
    let mut signed = call("add", json!({"a": 1, "b": 2}));
    sign(&mut signed);
    let reply = Reply::parts(vec![
        thought("The user wants two sums."),
        text("Adding both, "),
        text("now."),
        call_with_id("fc-1", "add", json!({"a": 20, "b": 22})),
        signed,
    ])
    .usage(40, 12)
    .pieces(3);
    let server = FakeGemini::start(vec![reply.clone(), reply, Reply::text("42 and 3.")]);
    let client = client(&server);
    let tools = [ToolDeclaration::of(&Add)];
    let messages = [Message::user("20 + 22, and 1 + 2?")];
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
    let streamed = streamed.expect("a streamed reply");
    assert_eq!(streamed, whole);
    assert_eq!(
        streamed.message.content.as_deref(),
        Some("Adding both, now.")
    );
    assert_eq!(streamed.usage, Some(Usage::new(40, 12)));
    let calls = &streamed.message.tool_calls;
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), calls[1].id.as_str()),
        ("fc-1", "call_1")
    );
    assert!(
        calls.iter().all(|call| call.signature.is_some()),
        "{calls:?}"
    );
    // The thought is no text; the text came in pieces, then each call whole.
    assert_eq!(text_of(&deltas), "Adding both, now.");
    assert_eq!(text_pieces(&deltas), 7);
    assert_eq!(
        calls_of(&deltas),
        [
            (0, "fc-1".to_owned(), "add".to_owned()),
            (1, "call_1".to_owned(), "add".to_owned()),
        ]
    );
    let seen = &server.requests()[1];
    assert_eq!(
        seen.path,
        format!("/v1beta/models/{MODEL}:streamGenerateContent?alt=sse")
    );
    assert_eq!(seen.api_key.as_deref(), Some(KEY));
    // The streamed calls go back with their signatures, which the fake checks.
    let mut conversation = messages.to_vec();
    conversation.push(streamed.message.clone());
    conversation.push(Message::tool_result("fc-1", "42"));
    conversation.push(Message::tool_result("call_1", "3"));
    let (last, _) = client.stream_blocking(Request {
        messages: &conversation,
        ..request
    });
    assert_eq!(
        last.expect("the signatures were sent back")
            .message
            .content
            .as_deref(),
        Some("42 and 3.")
    );
    assert_all_taken(&server);
}

#[test]
fn blocked_and_unusable_streamed_responses_are_the_errors_complete_gives() {
    let usage = json!({"promptTokenCount": 8, "totalTokenCount": 8});
    let replies = [
        Reply::json(json!({
            "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
            "usageMetadata": usage,
            "modelVersion": MODEL,
        })),
        Reply::json(json!({
            "candidates": [{"finishReason": "SAFETY", "index": 0}],
            "usageMetadata": usage,
            "modelVersion": MODEL,
        })),
        Reply::parts(Vec::new()).finish("MALFORMED_FUNCTION_CALL"),
        Reply::json(json!({
            "candidates": [{"content": {"role": "model"}, "finishReason": "MAX_TOKENS",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 72,
                              "thoughtsTokenCount": 64},
            "modelVersion": MODEL,
        })),
        Reply::parts(vec![json!({"functionCall": {"args": {"a": 1}}})]),
    ];
    let script = replies
        .iter()
        .flat_map(|reply| [reply.clone(), reply.clone()])
        .collect();
    let server = FakeGemini::start(script);
    let client = client(&server);
    for expected in [
        "the prompt was blocked (PROHIBITED_CONTENT)",
        "the model stopped (SAFETY) with no text and no function call",
        "the model stopped (MALFORMED_FUNCTION_CALL)",
        "it was cut off at the token limit (`maxOutputTokens`, or the model's context) before \
         the model had written anything",
        "function call 0 has no `name`",
    ] {
        let whole = ask(&client).unwrap_err();
        let (streamed, _) = stream(&client);
        assert_eq!(streamed.unwrap_err(), whole);
        assert!(whole.to_string().contains(expected), "{whole}");
    }
    assert_all_taken(&server);
}

#[test]
fn a_stream_that_ends_before_a_finish_reason_was_cut_short() {
    let reply = Reply::text("A long answer, cut.").pieces(4);
    let server = FakeGemini::start(vec![
        reply.clone().ending(Ending::CutAfter(3)),
        reply.ending(Ending::BrokenAfter(3)),
    ]);
    let client = client(&server);
    let (cut, deltas) = stream(&client);
    let cut = cut.unwrap_err();
    assert!(matches!(cut, LmError::Malformed { .. }), "{cut:?}");
    assert!(
        cut.to_string().ends_with(
            "the stream was cut short: it ended before its candidate's `finishReason` (or a \
             blocked prompt's `promptFeedback`)"
        ),
        "{cut}"
    );
    assert_eq!(text_of(&deltas), "A long answe");
    let (broken, _) = stream(&client);
    let broken = broken.unwrap_err();
    assert!(
        broken
            .to_string()
            .contains("the stream was cut short after 3 events: "),
        "{broken}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_error_in_the_stream_is_a_status_error_with_googles_words_and_never_the_key() {
    let server = FakeGemini::start(vec![Reply::text("Half an answer").stream_error(
        2,
        503,
        "UNAVAILABLE",
        &format!("The model is overloaded (key {KEY})."),
    )]);
    let (error, deltas) = stream(&client(&server));
    let error = error.unwrap_err();
    assert_eq!(
        error,
        LmError::Status {
            status: 503,
            message: "UNAVAILABLE: The model is overloaded (key [redacted]).".into(),
            attempts: 1,
        }
    );
    assert!(!format!("{error} {error:?}").contains(KEY));
    assert_eq!(text_of(&deltas), "Half an ");
}

#[test]
fn a_429_before_the_stream_is_retried_after_the_delay_it_asks() {
    let server = FakeGemini::start(vec![
        Reply::rate_limited("0.2s"),
        Reply::text("finally").usage(5, 2),
    ]);
    let started = Instant::now();
    let (reply, deltas) = stream(&client(&server));
    let reply = reply.expect("a reply after a retry");
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(reply.message.content.as_deref(), Some("finally"));
    assert_eq!(reply.usage, Some(Usage::new(5, 2)));
    assert_eq!(text_of(&deltas), "finally");
    assert_eq!(server.requests().len(), 2);
    assert_all_taken_but_the_first(&server);
}

/// Every request but the first (a scripted error) was taken.
fn assert_all_taken_but_the_first(server: &FakeGemini) {
    for seen in &server.requests()[1..] {
        assert_eq!(seen.refused, None, "{}", seen.body);
        assert_eq!(seen.status, 200);
    }
}

#[test]
fn without_alt_sse_the_fake_streams_a_json_array_as_the_api_does() {
    let server = FakeGemini::start(vec![Reply::text("Hello there").pieces(5)]);
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let mut response = agent
        .post(format!(
            "{}/v1beta/models/{MODEL}:streamGenerateContent",
            server.base_url()
        ))
        .header("x-goog-api-key", KEY)
        .send(body.to_string())
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let chunks: Value =
        serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
    let texts: Vec<&str> = chunks
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|chunk| chunk["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(texts, ["Hello", " ther", "e"]);
    assert_eq!(chunks[2]["candidates"][0]["finishReason"], "STOP");
}

#[test]
fn a_streamed_call_keeps_its_arguments_as_complete_gives_them() {
    let server = FakeGemini::start(vec![Reply::calls(&[("add", json!({"a": 20, "b": "22"}))])]);
    let (reply, deltas) = stream(&client(&server));
    let reply = reply.expect("a reply");
    let call = &reply.message.tool_calls[0];
    assert_eq!(
        ToolCall {
            signature: None,
            ..call.clone()
        },
        ToolCall::new("call_0", "add", json!({"a": 20, "b": "22"}))
    );
    assert!(call.signature.is_some());
    assert_eq!(
        calls_of(&deltas),
        [(0, "call_0".to_owned(), "add".to_owned())]
    );
}
