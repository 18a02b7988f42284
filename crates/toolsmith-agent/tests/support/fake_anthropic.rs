//! A fake Anthropic Messages API on 127.0.0.1 for tests: it answers `POST /v1/messages` from a
//! script, in order, and records what each request carried.
//!
//! It checks every request as the real API does, and answers one it would refuse with the same
//! status and error shape (400 `invalid_request_error`, 401 `authentication_error`, 404
//! `not_found_error`) without taking a reply from the script: the headers (`x-api-key` when
//! the server was given a key, `anthropic-version`, a JSON content type), the top-level keys
//! (no unknown one), `model`, `max_tokens`, `system`, the messages (roles alternating and
//! starting with `user`, known content blocks, no blank text, every `tool_use` answered by a
//! `tool_result` in the next turn and every `tool_result` answering one of the previous turn),
//! the tools (names matching `^[a-zA-Z0-9_-]{1,64}$` and unique, `input_schema` an object
//! schema of `"type": "object"`) and `tool_choice`. The replies it sends have the shape of the
//! API's own (`id`, `type: message`, `role`, `model`, `content`, `stop_reason`, `usage`).
//!
//! A scripted message ([`Reply::message`], [`Reply::text`], [`Reply::tool_use`]) is sent whole,
//! or, to a request with `"stream": true` (a boolean, else a 400), as the API streams it:
//! `message_start` (the message without content, its input tokens), a `ping`, then for each
//! block `content_block_start` (a text block's empty text, a `tool_use` block's id, name and
//! empty input, a thinking block's empty thinking), its `content_block_delta`s (`text_delta`s,
//! `input_json_delta`s whose `partial_json` pieces join into the input, `thinking_delta`s and
//! a `signature_delta`) and `content_block_stop`, then `message_delta` (the stop reason, the
//! output tokens) and `message_stop`. A stream can be cut short, broken off, paced, or end in
//! an `event: error` (`overloaded_error`, say) as the API sends one mid-stream.
//!
//! Shared by this crate's tests and the CLI's (included with `#[path]`).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Map, Value, json};

mod sse {
    #![allow(dead_code)]
    include!("sse.rs");
}

pub use sse::Ending;

/// The `anthropic-version` the API speaks.
pub const API_VERSION: &str = "2023-06-01";

/// The top-level keys a Messages API request may have.
const KNOWN_KEYS: &[&str] = &[
    "model",
    "messages",
    "max_tokens",
    "system",
    "tools",
    "tool_choice",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "stream",
    "metadata",
    "thinking",
    "service_tier",
];

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    body: Body,
    stream: sse::Shape,
    /// An `error` event sent after this many events, in place of the rest: its type and
    /// message.
    stream_error: Option<(usize, String, String)>,
    headers: Vec<(String, String)>,
    delay: Duration,
}

#[derive(Debug, Clone)]
enum Body {
    /// A message, its `model` filled in with the request's.
    Message(Value),
    /// Anything else, sent as it is.
    Raw(String),
}

impl Reply {
    /// A 200 answer with this JSON body, sent as it is.
    pub fn json(body: Value) -> Self {
        Reply::raw(200, body.to_string())
    }

    /// An answer with this status and body text.
    pub fn raw(status: u16, body: impl Into<String>) -> Self {
        Reply {
            status,
            body: Body::Raw(body.into()),
            stream: sse::Shape::default(),
            stream_error: None,
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// An Anthropic error answer: `{"type": "error", "error": {"type", "message"}}`.
    pub fn error(status: u16, kind: &str, message: &str) -> Self {
        Reply::raw(status, error_body(kind, message).to_string())
    }

    /// A message of these content blocks, stopped for `stop_reason`, that counted 25 input and
    /// 10 output tokens.
    pub fn message(content: Value, stop_reason: &str) -> Self {
        Reply {
            status: 200,
            body: Body::Message(json!({
                "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
                "type": "message",
                "role": "assistant",
                "content": content,
                "model": "",
                "stop_reason": stop_reason,
                "stop_sequence": null,
                "usage": {"input_tokens": 25, "output_tokens": 10},
            })),
            stream: sse::Shape::default(),
            stream_error: None,
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// A message of text only, at the end of its turn.
    pub fn text(text: &str) -> Self {
        Reply::message(json!([{"type": "text", "text": text}]), "end_turn")
    }

    /// A message making these calls, `(id, tool, input)`, stopped for `tool_use`.
    pub fn tool_use(calls: &[(&str, &str, Value)]) -> Self {
        let blocks: Vec<Value> = calls
            .iter()
            .map(|(id, name, input)| {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            })
            .collect();
        Reply::message(Value::Array(blocks), "tool_use")
    }

    /// The same message with its `usage` counting these tokens.
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        if let Body::Message(message) = &mut self.body {
            message["usage"] =
                json!({"input_tokens": input_tokens, "output_tokens": output_tokens});
        }
        self
    }

    /// The same message, streamed with this many characters of text (or of a call's input
    /// JSON) per delta (4 unless set).
    pub fn pieces(mut self, size: usize) -> Self {
        self.stream.piece = size;
        self
    }

    /// The same message, its stream ending as told.
    pub fn ending(mut self, ending: Ending) -> Self {
        self.stream.ending = ending;
        self
    }

    /// The same message, its stream's events sent `pace` apart.
    pub fn pace(mut self, pace: Duration) -> Self {
        self.stream.pace = pace;
        self
    }

    /// The same message, its stream ending after `events` events in an `error` event of this
    /// type and message (`overloaded_error`, `Overloaded`), as the API sends one mid-stream.
    pub fn stream_error(mut self, events: usize, kind: &str, message: &str) -> Self {
        self.stream_error = Some((events, kind.to_owned(), message.to_owned()));
        self
    }

    /// The same answer with a header added.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The same answer, sent after `delay`.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// The events of `message` streamed as the API streams a message.
fn events(message: &Value, piece: usize) -> Vec<String> {
    let event = |data: Value| {
        let name = data["type"].as_str().unwrap_or("message").to_owned();
        sse::event(Some(&name), &data.to_string())
    };
    let usage = &message["usage"];
    let mut start_usage = usage.clone();
    start_usage["output_tokens"] = json!(1);
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["stop_sequence"] = Value::Null;
    start["usage"] = start_usage;
    let mut events = vec![
        event(json!({"type": "message_start", "message": start})),
        event(json!({"type": "ping"})),
    ];
    let blocks = message["content"].as_array().cloned().unwrap_or_default();
    for (index, block) in blocks.iter().enumerate() {
        let delta = |delta: Value| {
            event(json!({"type": "content_block_delta", "index": index, "delta": delta}))
        };
        let mut deltas = Vec::new();
        let started = match block["type"].as_str() {
            Some("text") => {
                let text = block["text"].as_str().unwrap_or("");
                for text in sse::pieces(text, piece) {
                    deltas.push(delta(json!({"type": "text_delta", "text": text})));
                }
                json!({"type": "text", "text": ""})
            }
            Some("tool_use") => {
                // The API's first piece of a call's input is empty.
                deltas.push(delta(
                    json!({"type": "input_json_delta", "partial_json": ""}),
                ));
                let input = block["input"].to_string();
                if input != "{}" {
                    for json in sse::pieces(&input, piece) {
                        deltas.push(delta(
                            json!({"type": "input_json_delta", "partial_json": json}),
                        ));
                    }
                }
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}})
            }
            Some("thinking") => {
                let thinking = block["thinking"].as_str().unwrap_or("");
                for thinking in sse::pieces(thinking, piece) {
                    deltas.push(delta(
                        json!({"type": "thinking_delta", "thinking": thinking}),
                    ));
                }
                deltas.push(delta(
                    json!({"type": "signature_delta", "signature": block["signature"]}),
                ));
                json!({"type": "thinking", "thinking": "", "signature": ""})
            }
            _ => block.clone(),
        };
        events.push(event(
            json!({"type": "content_block_start", "index": index, "content_block": started}),
        ));
        events.extend(deltas);
        events.push(event(json!({"type": "content_block_stop", "index": index})));
    }
    events.push(event(json!({
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
        "usage": {"output_tokens": usage["output_tokens"]},
    })));
    events.push(event(json!({"type": "message_stop"})));
    events
}

fn error_body(kind: &str, message: &str) -> Value {
    json!({
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    })
}

/// What one request carried.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request path.
    pub path: String,
    /// The `x-api-key` header, if any.
    pub api_key: Option<String>,
    /// The `anthropic-version` header, if any.
    pub version: Option<String>,
    /// The `Authorization` header, if any (the API never reads one).
    pub authorization: Option<String>,
    /// The body, parsed (`Value::Null` when it was not JSON).
    pub body: Value,
    /// Why the fake refused the request as the API would, if it did.
    pub refused: Option<String>,
}

/// The running server; it stops when dropped.
pub struct FakeServer {
    base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl FakeServer {
    /// Starts a server answering with `script`, in order; past its end it answers 500. With a
    /// `key`, a request must carry it as `x-api-key` (else 401, as the API answers); without,
    /// none is needed (a gateway that holds the key).
    pub fn start(key: Option<&str>, script: Vec<Reply>) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("a loopback port"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (server, seen) = (Arc::clone(&server), Arc::clone(&seen));
            let key = key.map(str::to_owned);
            std::thread::spawn(move || serve(&server, &seen, key.as_deref(), script))
        };
        FakeServer {
            base_url: format!("http://127.0.0.1:{port}"),
            seen,
            server,
            thread: Some(thread),
        }
    }

    /// The base URL to give a client (`http://127.0.0.1:PORT`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(
    server: &tiny_http::Server,
    seen: &Mutex<Vec<Seen>>,
    key: Option<&str>,
    script: Vec<Reply>,
) {
    let mut script = script.into_iter();
    for mut request in server.incoming_requests() {
        let mut text = String::new();
        let _ = request.as_reader().read_to_string(&mut text);
        let header = |name: &'static str| {
            request
                .headers()
                .iter()
                .find(|h| h.field.equiv(name))
                .map(|h| h.value.as_str().to_owned())
        };
        let (api_key, version) = (header("x-api-key"), header("anthropic-version"));
        let content_type = header("content-type");
        let authorization = header("authorization");
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let checked = if request.url() != "/v1/messages" {
            Err(Refusal::new(404, "not_found_error", "Not found"))
        } else if *request.method() != tiny_http::Method::Post {
            Err(Refusal::new(
                405,
                "invalid_request_error",
                "Method not allowed",
            ))
        } else {
            check_headers(
                key,
                api_key.as_deref(),
                version.as_deref(),
                content_type.as_deref(),
            )
            .and_then(|()| check_body(&text))
        };
        seen.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Seen {
                path: request.url().to_owned(),
                api_key,
                version,
                authorization,
                body: body.clone(),
                refused: checked.as_ref().err().map(|r| r.message.clone()),
            });
        let reply = match checked {
            Ok(()) => script.next().unwrap_or_else(|| {
                Reply::error(500, "api_error", "the fake server's script is exhausted")
            }),
            Err(refusal) => Reply::error(refusal.status, refusal.kind, &refusal.message),
        };
        std::thread::sleep(reply.delay);
        let streamed = body["stream"] == json!(true);
        let text = match reply.body {
            Body::Message(mut message) => {
                message["model"] = body.get("model").cloned().unwrap_or(Value::Null);
                if streamed && reply.status == 200 {
                    let mut events = events(&message, reply.stream.piece);
                    if let Some((after, kind, text)) = &reply.stream_error {
                        events.truncate(*after);
                        let error = json!({"type": "error",
                                           "error": {"type": kind, "message": text}});
                        events.push(sse::event(Some("error"), &error.to_string()));
                    }
                    let headers: Vec<(&str, &str)> = [("request-id", "req_fake")]
                        .into_iter()
                        .chain(reply.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())))
                        .collect();
                    sse::send(request, &events, &reply.stream, &headers);
                    continue;
                }
                message.to_string()
            }
            Body::Raw(text) => text,
        };
        let mut response = tiny_http::Response::from_string(text).with_status_code(reply.status);
        for (name, value) in [
            ("Content-Type", "application/json"),
            ("request-id", "req_fake"),
        ]
        .into_iter()
        .chain(reply.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())))
        {
            if let Ok(header) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
                response.add_header(header);
            }
        }
        let _ = request.respond(response);
    }
}

/// Why the API would refuse a request.
#[derive(Debug)]
struct Refusal {
    status: u16,
    kind: &'static str,
    message: String,
}

impl Refusal {
    fn new(status: u16, kind: &'static str, message: impl Into<String>) -> Self {
        Refusal {
            status,
            kind,
            message: message.into(),
        }
    }
}

/// A 400 `invalid_request_error`.
fn invalid(message: impl Into<String>) -> Refusal {
    Refusal::new(400, "invalid_request_error", message)
}

fn check_headers(
    key: Option<&str>,
    api_key: Option<&str>,
    version: Option<&str>,
    content_type: Option<&str>,
) -> Result<(), Refusal> {
    if let Some(key) = key {
        match api_key {
            None => {
                return Err(Refusal::new(
                    401,
                    "authentication_error",
                    "x-api-key header is required",
                ));
            }
            Some(sent) if sent != key => {
                return Err(Refusal::new(
                    401,
                    "authentication_error",
                    "invalid x-api-key",
                ));
            }
            Some(_) => {}
        }
    }
    match version {
        None => return Err(invalid("anthropic-version: header is required")),
        Some(API_VERSION) => {}
        Some(other) => {
            return Err(invalid(format!(
                "anthropic-version: invalid version `{other}`"
            )));
        }
    }
    if !content_type.is_some_and(|value| value.starts_with("application/json")) {
        return Err(invalid("content-type: must be application/json"));
    }
    Ok(())
}

fn check_body(text: &str) -> Result<(), Refusal> {
    let body: Value = serde_json::from_str(text)
        .map_err(|e| invalid(format!("There was an issue with your request body: {e}")))?;
    let body = body
        .as_object()
        .ok_or_else(|| invalid("The request body is not a valid JSON object"))?;
    for key in body.keys() {
        if !KNOWN_KEYS.contains(&key.as_str()) {
            return Err(invalid(format!("{key}: Extra inputs are not permitted")));
        }
    }
    match body.get("model") {
        Some(Value::String(model)) if !model.is_empty() => {}
        Some(_) => return Err(invalid("model: Input should be a valid string")),
        None => return Err(invalid("model: Field required")),
    }
    match body.get("max_tokens").map(Value::as_u64) {
        Some(Some(tokens)) if tokens >= 1 => {}
        Some(Some(_)) => {
            return Err(invalid(
                "max_tokens: Input should be greater than or equal to 1",
            ));
        }
        Some(None) => return Err(invalid("max_tokens: Input should be a valid integer")),
        None => return Err(invalid("max_tokens: Field required")),
    }
    if body
        .get("stream")
        .is_some_and(|stream| !stream.is_boolean())
    {
        return Err(invalid("stream: Input should be a valid boolean"));
    }
    let temperature = body.get("temperature").map(Value::as_f64);
    if temperature.is_some_and(|t| !t.is_some_and(|t| (0.0..=1.0).contains(&t))) {
        return Err(invalid("temperature: Input should be between 0 and 1"));
    }
    match body.get("system") {
        None | Some(Value::String(_)) => {}
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                check_text_block(&format!("system.{i}"), block)?;
            }
        }
        Some(_) => return Err(invalid("system: Input should be a valid string or list")),
    }
    let tools = check_tools(body.get("tools"))?;
    check_tool_choice(body.get("tool_choice"), &tools)?;
    check_messages(body.get("messages"), !tools.is_empty())
}

/// The declared tools' names, after checking each declaration.
fn check_tools(tools: Option<&Value>) -> Result<Vec<String>, Refusal> {
    let Some(tools) = tools else {
        return Ok(Vec::new());
    };
    let tools = tools
        .as_array()
        .ok_or_else(|| invalid("tools: Input should be a valid list"))?;
    let mut names = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        let at = format!("tools.{i}");
        let tool = tool
            .as_object()
            .ok_or_else(|| invalid(format!("{at}: Input should be a valid dictionary")))?;
        for key in tool.keys() {
            if ![
                "name",
                "description",
                "input_schema",
                "strict",
                "cache_control",
                "type",
            ]
            .contains(&key.as_str())
            {
                return Err(invalid(format!(
                    "{at}.{key}: Extra inputs are not permitted"
                )));
            }
        }
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid(format!("{at}.name: Field required")))?;
        if !is_tool_name(name) {
            return Err(invalid(format!(
                "{at}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )));
        }
        if names.iter().any(|seen| seen == name) {
            return Err(invalid("tools: Tool names must be unique."));
        }
        if tool.get("description").is_some_and(|d| !d.is_string()) {
            return Err(invalid(format!(
                "{at}.description: Input should be a valid string"
            )));
        }
        if tool.get("strict").is_some_and(|s| !s.is_boolean()) {
            return Err(invalid(format!(
                "{at}.strict: Input should be a valid boolean"
            )));
        }
        let schema = tool
            .get("input_schema")
            .ok_or_else(|| invalid(format!("{at}.input_schema: Field required")))?;
        if schema.get("type") != Some(&json!("object")) {
            return Err(invalid(format!(
                "{at}.input_schema.type: Input should be 'object'"
            )));
        }
        if schema.get("properties").is_some_and(|p| !p.is_object()) {
            return Err(invalid(format!(
                "{at}.input_schema.properties: Input should be a valid dictionary"
            )));
        }
        names.push(name.to_owned());
    }
    Ok(names)
}

fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn check_tool_choice(choice: Option<&Value>, tools: &[String]) -> Result<(), Refusal> {
    let Some(choice) = choice else {
        return Ok(());
    };
    if tools.is_empty() {
        return Err(invalid(
            "tool_choice: tool_choice may only be specified while providing tools.",
        ));
    }
    let choice = choice
        .as_object()
        .ok_or_else(|| invalid("tool_choice: Input should be a valid dictionary"))?;
    match choice.get("type").and_then(Value::as_str) {
        Some("auto" | "any" | "none") => {
            if let Some(key) = choice
                .keys()
                .find(|key| !["type", "disable_parallel_tool_use"].contains(&key.as_str()))
            {
                return Err(invalid(format!(
                    "tool_choice.{key}: Extra inputs are not permitted"
                )));
            }
        }
        Some("tool") => {
            let name = choice
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid("tool_choice.tool.name: Field required"))?;
            if !tools.iter().any(|tool| tool == name) {
                return Err(invalid(format!(
                    "tool_choice: Tool '{name}' not found in provided tools"
                )));
            }
        }
        _ => {
            return Err(invalid(
                "tool_choice: Input tag does not match any of the expected tags: 'auto', \
                 'any', 'tool', 'none'",
            ));
        }
    }
    Ok(())
}

fn check_text_block(at: &str, block: &Value) -> Result<(), Refusal> {
    if block.get("type") != Some(&json!("text")) {
        return Err(invalid(format!("{at}.type: Input should be 'text'")));
    }
    match block.get("text") {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(()),
        Some(Value::String(_)) => Err(invalid(format!(
            "{at}: text content blocks must contain non-whitespace text"
        ))),
        _ => Err(invalid(format!("{at}.text: Field required"))),
    }
}

fn check_messages(messages: Option<&Value>, has_tools: bool) -> Result<(), Refusal> {
    let messages = match messages {
        Some(Value::Array(messages)) => messages,
        Some(_) => return Err(invalid("messages: Input should be a valid list")),
        None => return Err(invalid("messages: Field required")),
    };
    if messages.is_empty() {
        return Err(invalid("messages: at least one message is required"));
    }
    // The `tool_use` ids of the previous (assistant) turn, which the next turn must answer.
    let mut unanswered: Vec<String> = Vec::new();
    let mut used_ids: HashSet<String> = HashSet::new();
    let mut previous_role = None;
    for (i, message) in messages.iter().enumerate() {
        let at = format!("messages.{i}");
        let message = message
            .as_object()
            .ok_or_else(|| invalid(format!("{at}: Input should be a valid dictionary")))?;
        if let Some(key) = message
            .keys()
            .find(|key| !["role", "content"].contains(&key.as_str()))
        {
            return Err(invalid(format!(
                "{at}.{key}: Extra inputs are not permitted"
            )));
        }
        let role = match message.get("role").and_then(Value::as_str) {
            Some(role @ ("user" | "assistant")) => role,
            Some(_) => {
                return Err(invalid(format!(
                    "{at}.role: Input should be 'user' or 'assistant'"
                )));
            }
            None => return Err(invalid(format!("{at}.role: Field required"))),
        };
        if i == 0 && role != "user" {
            return Err(invalid(
                "messages: first message must use the \"user\" role",
            ));
        }
        if previous_role == Some(role) {
            return Err(invalid(format!(
                "messages: roles must alternate between \"user\" and \"assistant\", but found \
                 multiple \"{role}\" roles in a row"
            )));
        }
        previous_role = Some(role);
        let blocks = content_blocks(&at, message.get("content"))?;
        let mut answered: Vec<String> = Vec::new();
        let mut uses: Vec<String> = Vec::new();
        let mut text_seen = false;
        for (j, block) in blocks.iter().enumerate() {
            let at = format!("{at}.content.{j}");
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    check_text_block(&at, block)?;
                    text_seen = true;
                }
                Some("tool_use") if role == "assistant" => {
                    let id = check_tool_use(&at, block)?;
                    if !used_ids.insert(id.clone()) {
                        return Err(invalid(format!("{at}: `tool_use` ids must be unique")));
                    }
                    uses.push(id);
                }
                Some("tool_result") if role == "user" => {
                    if text_seen {
                        return Err(invalid(format!(
                            "{at}: tool_result blocks must come before any text in a user \
                             message"
                        )));
                    }
                    let id = check_tool_result(&at, block)?;
                    if !unanswered.contains(&id) {
                        return Err(invalid(format!(
                            "{at}: unexpected `tool_use_id` found in `tool_result` blocks: \
                             {id}. Each `tool_result` block must have a corresponding \
                             `tool_use` block in the previous message."
                        )));
                    }
                    answered.push(id);
                }
                Some(kind @ ("tool_use" | "tool_result")) => {
                    return Err(invalid(format!(
                        "{at}: `{kind}` blocks are not allowed in a \"{role}\" message"
                    )));
                }
                _ => {
                    return Err(invalid(format!(
                        "{at}.type: Input tag does not match any of the expected tags"
                    )));
                }
            }
        }
        let missing: Vec<&str> = unanswered
            .iter()
            .filter(|id| !answered.contains(id))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(invalid(format!(
                "messages.{i}: `tool_use` ids were found without `tool_result` blocks \
                 immediately after: {}. Each `tool_use` block must have a corresponding \
                 `tool_result` block in the next message.",
                missing.join(", ")
            )));
        }
        if (!uses.is_empty() || !answered.is_empty()) && !has_tools {
            return Err(invalid(
                "Requests which include `tool_use` or `tool_result` blocks must define tools.",
            ));
        }
        unanswered = uses;
    }
    Ok(())
}

/// A message's content as blocks: a string is one text block.
fn content_blocks(at: &str, content: Option<&Value>) -> Result<Vec<Value>, Refusal> {
    match content {
        Some(Value::String(text)) if text.trim().is_empty() => Err(invalid(format!(
            "{at}: text content blocks must contain non-whitespace text"
        ))),
        Some(Value::String(text)) => Ok(vec![json!({"type": "text", "text": text})]),
        Some(Value::Array(blocks)) if blocks.is_empty() => Err(invalid(format!(
            "{at}: all messages must have non-empty content"
        ))),
        Some(Value::Array(blocks)) => Ok(blocks.clone()),
        Some(_) => Err(invalid(format!(
            "{at}.content: Input should be a valid string or list"
        ))),
        None => Err(invalid(format!("{at}.content: Field required"))),
    }
}

/// A `tool_use` block's id, after checking the block.
fn check_tool_use(at: &str, block: &Value) -> Result<String, Refusal> {
    only_keys(at, block, &["type", "id", "name", "input", "cache_control"])?;
    let id = block
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| {
            !id.is_empty()
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
        .ok_or_else(|| {
            invalid(format!(
                "{at}.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
            ))
        })?;
    if !block
        .get("name")
        .and_then(Value::as_str)
        .is_some_and(is_tool_name)
    {
        return Err(invalid(format!(
            "{at}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
        )));
    }
    if !block.get("input").is_some_and(Value::is_object) {
        return Err(invalid(format!(
            "{at}.input: Input should be a valid dictionary"
        )));
    }
    Ok(id.to_owned())
}

/// A `tool_result` block's `tool_use_id`, after checking the block.
fn check_tool_result(at: &str, block: &Value) -> Result<String, Refusal> {
    only_keys(
        at,
        block,
        &[
            "type",
            "tool_use_id",
            "content",
            "is_error",
            "cache_control",
        ],
    )?;
    match block.get("content") {
        None | Some(Value::String(_)) => {}
        Some(Value::Array(blocks)) => {
            for (k, inner) in blocks.iter().enumerate() {
                check_text_block(&format!("{at}.content.{k}"), inner)?;
            }
        }
        Some(_) => {
            return Err(invalid(format!(
                "{at}.content: Input should be a valid string or list"
            )));
        }
    }
    if block.get("is_error").is_some_and(|e| !e.is_boolean()) {
        return Err(invalid(format!(
            "{at}.is_error: Input should be a valid boolean"
        )));
    }
    block
        .get("tool_use_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| invalid(format!("{at}.tool_use_id: Field required")))
}

fn only_keys(at: &str, block: &Value, allowed: &[&str]) -> Result<(), Refusal> {
    let empty = Map::new();
    let keys = block.as_object().unwrap_or(&empty).keys();
    match keys
        .into_iter()
        .find(|key| !allowed.contains(&key.as_str()))
    {
        Some(key) => Err(invalid(format!(
            "{at}.{key}: Extra inputs are not permitted"
        ))),
        None => Ok(()),
    }
}
