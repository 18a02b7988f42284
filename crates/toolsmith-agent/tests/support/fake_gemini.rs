//! A fake Gemini API on 127.0.0.1 for tests: it answers `POST
//! /v1beta/models/{model}:generateContent` from a script, in order, and records what each
//! request carried.
//!
//! Every request is checked as strictly as the real API checks it: the `x-goog-api-key` header,
//! the path with the model, the body's fields, `contents` (roles `user` and `model` only, parts
//! of known kinds, each model turn of function calls answered by the next user turn with as many
//! `functionResponse` parts, named after the calls, and each call the fake made with a
//! `thoughtSignature` sent back with it), the function declarations (names matching
//! `^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$`, and every schema object of their `parameters` holding only
//! the fields of the API's `Schema`, an OpenAPI subset), and the tool config. A request the real
//! API would refuse is answered as it answers it, a 400 `INVALID_ARGUMENT` in Google's error
//! shape (`Invalid JSON payload received. Unknown name "additionalProperties" at ...`), and
//! uses no reply of the script. Replies have the shape of the API reference's examples:
//! `candidates` with `content`, `finishReason` and `index`, `usageMetadata`, `modelVersion`.
//!
//! `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` is checked the same way and
//! answered with the scripted response as the API streams one: server-sent events, each a
//! `GenerateContentResponse` chunk of the candidate's next parts (text in pieces, a thought or
//! a function call whole, with its thought signature), each with the usage so far, the last
//! with the candidate's `finishReason` and the whole usage; a blocked prompt is one chunk of
//! its `promptFeedback`. Without `alt=sse` the API streams a JSON array instead, and so does
//! the fake. A stream can be cut short, broken off, paced, or end in an error object.
//!
//! Shared by this crate's tests and the CLI's (included with `#[path]`).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Map, Value, json};

mod sse {
    #![allow(dead_code)]
    include!("sse.rs");
}

pub use sse::Ending;

/// The model the fake serves unless told another.
pub const MODEL: &str = "gemini-2.5-flash";
/// The API key the fake takes unless told another.
pub const KEY: &str = "AIzaSy-test-0123456789abcdef";

/// Every part of a reply's function calls gets a signature of its own.
static SIGNATURES: AtomicUsize = AtomicUsize::new(0);

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    body: Body,
    stream: sse::Shape,
    /// An error object sent after this many chunks, in place of the rest: its code, status
    /// and message.
    stream_error: Option<(usize, u16, String, String)>,
    headers: Vec<(String, String)>,
    delay: Duration,
}

#[derive(Debug, Clone)]
enum Body {
    Json(Value),
    Text(String),
}

impl Reply {
    /// A 200 answer with this JSON body.
    pub fn json(body: Value) -> Self {
        Reply {
            status: 200,
            body: Body::Json(body),
            stream: sse::Shape::default(),
            stream_error: None,
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// An answer with this status and body text.
    pub fn raw(status: u16, body: impl Into<String>) -> Self {
        Reply {
            status,
            body: Body::Text(body.into()),
            stream: sse::Shape::default(),
            stream_error: None,
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// A response whose candidate's content has these parts (see [`text`], [`call`],
    /// [`call_with_id`], [`thought`]), finished with `STOP`.
    pub fn parts(parts: Vec<Value>) -> Self {
        Reply::json(json!({
            "candidates": [{
                "content": {"parts": parts, "role": "model"},
                "finishReason": "STOP",
                "index": 0,
            }],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 10}],
            },
            "modelVersion": MODEL,
            "responseId": "fake-response",
        }))
    }

    /// A response of text only.
    pub fn text(content: &str) -> Self {
        Reply::parts(vec![text(content)])
    }

    /// A response making these calls, `(name, args)`, without ids (as Gemini 2.5 does), the
    /// first call signed (as a thinking model signs it).
    pub fn calls(calls: &[(&str, Value)]) -> Self {
        let mut parts: Vec<Value> = calls
            .iter()
            .map(|(name, args)| call(name, args.clone()))
            .collect();
        if let Some(first) = parts.first_mut() {
            sign(first);
        }
        Reply::parts(parts)
    }

    /// Google's error answer: `{"error": {"code", "message", "status"}}`.
    pub fn error(code: u16, status: &str, message: &str) -> Self {
        Reply {
            status: code,
            ..Reply::json(google_error(code, status, message))
        }
    }

    /// A 429 `RESOURCE_EXHAUSTED` whose details ask to retry after `delay` (`"1s"`), as the
    /// real API's quota errors do (a `QuotaFailure`, a `Help` link, a `RetryInfo`).
    pub fn rate_limited(delay: &str) -> Self {
        let mut body = google_error(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota, please check your plan and billing details.",
        );
        body["error"]["details"] = json!([
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                "quotaDimensions": {"location": "global", "model": MODEL},
                "quotaValue": "10",
            }]},
            {"@type": "type.googleapis.com/google.rpc.Help", "links": [{
                "description": "Learn more about Gemini API quotas",
                "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
            }]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
        ]);
        Reply {
            status: 429,
            ..Reply::json(body)
        }
    }

    /// The same response with its candidate's `finishReason` set.
    pub fn finish(mut self, reason: &str) -> Self {
        if let Body::Json(body) = &mut self.body {
            body["candidates"][0]["finishReason"] = json!(reason);
        }
        self
    }

    /// The same response reporting these token counts.
    pub fn usage(mut self, prompt: u64, candidates: u64) -> Self {
        if let Body::Json(body) = &mut self.body {
            body["usageMetadata"] = json!({
                "promptTokenCount": prompt,
                "candidatesTokenCount": candidates,
                "totalTokenCount": prompt + candidates,
            });
        }
        self
    }

    /// The same response, streamed with this many characters of text per chunk (4 unless
    /// set).
    pub fn pieces(mut self, size: usize) -> Self {
        self.stream.piece = size;
        self
    }

    /// The same response, its stream ending as told.
    pub fn ending(mut self, ending: Ending) -> Self {
        self.stream.ending = ending;
        self
    }

    /// The same response, its stream's chunks sent `pace` apart.
    pub fn pace(mut self, pace: Duration) -> Self {
        self.stream.pace = pace;
        self
    }

    /// The same response, its stream ending after `chunks` chunks in Google's error object
    /// (`{"error": {"code", "message", "status"}}`), as the API sends one mid-stream.
    pub fn stream_error(mut self, chunks: usize, code: u16, status: &str, message: &str) -> Self {
        self.stream_error = Some((chunks, code, status.to_owned(), message.to_owned()));
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

    fn text_body(&self) -> String {
        match &self.body {
            Body::Json(body) => body.to_string(),
            Body::Text(text) => text.clone(),
        }
    }
}

/// A text part.
pub fn text(content: &str) -> Value {
    json!({"text": content})
}

/// A thought part (a summary of the model's thinking), which a client must not read as text.
pub fn thought(content: &str) -> Value {
    json!({"text": content, "thought": true})
}

/// A function call part without an id.
pub fn call(name: &str, args: Value) -> Value {
    json!({"functionCall": {"name": name, "args": args}})
}

/// A function call part with an id (as Gemini 3 makes them), signed.
pub fn call_with_id(id: &str, name: &str, args: Value) -> Value {
    let mut part = json!({"functionCall": {"id": id, "name": name, "args": args}});
    sign(&mut part);
    part
}

/// `part` with a thought signature of its own.
pub fn sign(part: &mut Value) {
    let n = SIGNATURES.fetch_add(1, Ordering::Relaxed);
    part["thoughtSignature"] = json!(format!("CiQB0e2Kb-signature-{n}"));
}

/// The chunks of `response` as the API streams a response: the candidate's parts in order,
/// text in pieces, each chunk with the usage so far; the last with the `finishReason` and the
/// whole usage.
fn chunks(response: &Value, piece: usize) -> Vec<Value> {
    let Some(candidate) = response["candidates"].get(0) else {
        return vec![response.clone()];
    };
    let usage = &response["usageMetadata"];
    let prompt = usage["promptTokenCount"].clone();
    let chunk = |parts: Option<Vec<Value>>| {
        let mut candidate = json!({"index": 0});
        if let Some(parts) = parts {
            candidate["content"] = json!({"parts": parts, "role": "model"});
        }
        json!({
            "candidates": [candidate],
            "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt},
            "modelVersion": response["modelVersion"],
            "responseId": response["responseId"],
        })
    };
    let mut chunks = Vec::new();
    let parts = candidate["content"]["parts"].as_array();
    for part in parts.into_iter().flatten() {
        let text = part.get("text").and_then(Value::as_str);
        match text {
            Some(text) if part.get("thought").is_none() => {
                let pieces = sse::pieces(text, piece);
                let last = pieces.len() - 1;
                for (i, text) in pieces.into_iter().enumerate() {
                    let mut part = if i == last { part.clone() } else { json!({}) };
                    part["text"] = json!(text);
                    chunks.push(chunk(Some(vec![part])));
                }
            }
            _ => chunks.push(chunk(Some(vec![part.clone()]))),
        }
    }
    let has_content = !candidate["content"].is_null();
    if chunks.is_empty() {
        chunks.push(chunk(has_content.then(Vec::new)));
    }
    if let Some(last) = chunks.last_mut() {
        for (key, value) in candidate.as_object().into_iter().flatten() {
            if key != "content" && key != "index" {
                last["candidates"][0][key] = value.clone();
            }
        }
        if !usage.is_null() {
            last["usageMetadata"] = usage.clone();
        }
    }
    chunks
}

fn google_error(code: u16, status: &str, message: &str) -> Value {
    json!({"error": {"code": code, "message": message, "status": status}})
}

/// What one request carried, and what the fake made of it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request path, with any query.
    pub path: String,
    /// The `x-goog-api-key` header, if any.
    pub api_key: Option<String>,
    /// The body, parsed (`Value::Null` when it was not JSON).
    pub body: Value,
    /// The status answered.
    pub status: u16,
    /// Why the request was refused, when it was (the message of the 4xx answered).
    pub refused: Option<String>,
}

/// A function call the fake made, to know it when it comes back.
#[derive(Debug, Clone)]
struct Made {
    name: String,
    args: Value,
    signature: Option<String>,
}

/// The running server; it stops when dropped.
pub struct FakeGemini {
    base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl FakeGemini {
    /// Starts a server of [`MODEL`] taking [`KEY`], answering with `script`, in order; past
    /// its end it answers 500.
    pub fn start(script: Vec<Reply>) -> Self {
        FakeGemini::serving(MODEL, Some(KEY), script)
    }

    /// Starts a server of `model` taking `key` (any request when `None`), answering with
    /// `script`, in order; past its end it answers 500.
    pub fn serving(model: &str, key: Option<&str>, script: Vec<Reply>) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("a loopback port"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (server, seen) = (Arc::clone(&server), Arc::clone(&seen));
            let expected = Expected {
                path: format!("/v1beta/models/{model}:generateContent"),
                stream_path: format!("/v1beta/models/{model}:streamGenerateContent"),
                model: model.to_owned(),
                key: key.map(str::to_owned),
            };
            std::thread::spawn(move || serve(&server, &seen, &expected, script))
        };
        FakeGemini {
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

impl Drop for FakeGemini {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

struct Expected {
    path: String,
    /// `streamGenerateContent`'s, without its query.
    stream_path: String,
    model: String,
    key: Option<String>,
}

fn serve(
    server: &tiny_http::Server,
    seen: &Mutex<Vec<Seen>>,
    expected: &Expected,
    script: Vec<Reply>,
) {
    let mut script = script.into_iter();
    let mut made: Vec<Made> = Vec::new();
    for mut request in server.incoming_requests() {
        let mut text = String::new();
        let _ = request.as_reader().read_to_string(&mut text);
        let api_key = request
            .headers()
            .iter()
            .find(|h| h.field.equiv("x-goog-api-key"))
            .map(|h| h.value.as_str().to_owned());
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let path = request.url().to_owned();
        let (method, query) = path.split_once('?').unwrap_or((&path, ""));
        // How the answer is sent: whole, as events (`alt=sse`), or as a streamed JSON array.
        let sent = if method == expected.path && query.is_empty() {
            Some(Sent::Whole)
        } else if method == expected.stream_path && query == "alt=sse" {
            Some(Sent::Events)
        } else if method == expected.stream_path && query.is_empty() {
            Some(Sent::Array)
        } else {
            None
        };
        let refusal = if *request.method() != tiny_http::Method::Post || sent.is_none() {
            Some((
                404,
                "NOT_FOUND",
                format!(
                    "models/{} is not found for API version v1beta, or is not supported for \
                     generateContent. Call ListModels to see the list of available models and \
                     their supported methods.",
                    model_in(&path).unwrap_or(&expected.model)
                ),
            ))
        } else {
            refuse_key(expected.key.as_deref(), api_key.as_deref()).or_else(|| {
                let checked = if body.is_null() {
                    Err(format!(
                        "Invalid JSON payload received. Unexpected token.\n{}",
                        text.chars().take(40).collect::<String>()
                    ))
                } else {
                    check_request(&body, &made)
                };
                checked
                    .err()
                    .map(|message| (400, "INVALID_ARGUMENT", message))
            })
        };
        let (reply, refused) = match refusal {
            Some((code, status, message)) => (Reply::error(code, status, &message), Some(message)),
            None => {
                let reply = script.next().unwrap_or_else(|| {
                    Reply::error(500, "INTERNAL", "the fake server's script is exhausted")
                });
                if let Body::Json(body) = &reply.body {
                    made.extend(calls_made(body));
                }
                (reply, None)
            }
        };
        seen.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Seen {
                path,
                api_key,
                body,
                status: reply.status,
                refused,
            });
        std::thread::sleep(reply.delay);
        let text = match (&reply.body, sent) {
            (Body::Json(response), Some(Sent::Events)) if reply.status == 200 => {
                let mut events: Vec<String> = chunks(response, reply.stream.piece)
                    .iter()
                    .map(|chunk| sse::event(None, &chunk.to_string()))
                    .collect();
                if let Some((after, code, status, message)) = &reply.stream_error {
                    events.truncate(*after);
                    let error = google_error(*code, status, message);
                    events.push(sse::event(None, &error.to_string()));
                }
                let headers: Vec<(&str, &str)> = reply
                    .headers
                    .iter()
                    .map(|(name, value)| (name.as_str(), value.as_str()))
                    .collect();
                sse::send(request, &events, &reply.stream, &headers);
                continue;
            }
            (Body::Json(response), Some(Sent::Array)) if reply.status == 200 => {
                Value::Array(chunks(response, reply.stream.piece)).to_string()
            }
            _ => reply.text_body(),
        };
        let mut response = tiny_http::Response::from_string(text).with_status_code(reply.status);
        let content_type =
            tiny_http::Header::from_bytes("Content-Type", "application/json; charset=UTF-8");
        if let Ok(header) = content_type {
            response.add_header(header);
        }
        for (name, value) in &reply.headers {
            if let Ok(header) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
                response.add_header(header);
            }
        }
        let _ = request.respond(response);
    }
}

/// How a request is answered, by the method it asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    /// `generateContent`: the response whole.
    Whole,
    /// `streamGenerateContent?alt=sse`: server-sent events.
    Events,
    /// `streamGenerateContent`: a JSON array of chunks.
    Array,
}

/// The model named by a `/v1beta/models/{model}:method` path.
fn model_in(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/v1beta/models/")?;
    Some(rest.split(':').next().unwrap_or(rest))
}

/// How the real API refuses a missing or wrong key.
fn refuse_key(expected: Option<&str>, given: Option<&str>) -> Option<(u16, &'static str, String)> {
    let expected = expected?;
    match given {
        None => Some((
            403,
            "PERMISSION_DENIED",
            "Method doesn't allow unregistered callers (callers without established identity). \
             Please use API Key or other form of API consumer identity to call this API."
                .to_owned(),
        )),
        Some(key) if key != expected => Some((
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.".to_owned(),
        )),
        Some(_) => None,
    }
}

/// The function calls of a reply, with their signatures.
fn calls_made(body: &Value) -> Vec<Made> {
    let parts = body["candidates"][0]["content"]["parts"].as_array();
    parts
        .into_iter()
        .flatten()
        .filter_map(|part| {
            let call = part.get("functionCall")?;
            Some(Made {
                name: call["name"].as_str()?.to_owned(),
                args: call.get("args").cloned().unwrap_or_else(|| json!({})),
                signature: part
                    .get("thoughtSignature")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect()
}

// The checks. Messages follow the real API's: a field it does not know is `Invalid JSON payload
// received. Unknown name "x" at 'path': Cannot find field.`, a value of the wrong kind `Invalid
// value at 'path' (TYPE_STRING), ...`, a rule broken `* GenerateContentRequest.path: ...`; paths
// name fields in snake case, as the proto does.

type Checked = Result<(), String>;

fn unknown(name: &str, path: &str) -> String {
    if path.is_empty() {
        format!("Invalid JSON payload received. Unknown name \"{name}\": Cannot find field.")
    } else {
        format!(
            "Invalid JSON payload received. Unknown name \"{name}\" at '{path}': Cannot find field."
        )
    }
}

fn not_repeating(name: &str, path: &str) -> String {
    format!(
        "Invalid JSON payload received. Unknown name \"{name}\" at '{path}': Proto field is not \
         repeating, cannot start list."
    )
}

fn invalid(path: &str, expected: &str, value: &Value) -> String {
    format!("Invalid value at '{path}' ({expected}), {value}")
}

fn rule(path: &str, message: &str) -> String {
    format!("* GenerateContentRequest.{path}: {message}\n")
}

fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        snake(name)
    } else {
        format!("{path}.{}", snake(name))
    }
}

/// The fields of `value`, an object, each known; an error naming the first unknown one.
fn known_fields<'a>(
    value: &'a Value,
    path: &str,
    known: &[&str],
) -> Result<&'a Map<String, Value>, String> {
    let Value::Object(fields) = value else {
        return Err(format!(
            "Invalid JSON payload received. Expected an object at '{path}', got {value}."
        ));
    };
    match fields.keys().find(|key| !known.contains(&key.as_str())) {
        Some(key) => Err(unknown(key, path)),
        None => Ok(fields),
    }
}

fn string<'a>(value: &'a Value, path: &str) -> Result<&'a str, String> {
    match value {
        Value::String(text) => Ok(text),
        Value::Array(_) => Err(not_repeating(path.rsplit('.').next().unwrap_or(path), path)),
        other => Err(invalid(path, "TYPE_STRING", other)),
    }
}

fn array<'a>(value: &'a Value, path: &str) -> Result<&'a [Value], String> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(format!(
            "Invalid JSON payload received. Expected a list at '{path}', got {other}."
        )),
    }
}

fn check_request(body: &Value, made: &[Made]) -> Checked {
    let request = known_fields(
        body,
        "",
        &[
            "contents",
            "systemInstruction",
            "tools",
            "toolConfig",
            "generationConfig",
            "safetySettings",
            "cachedContent",
        ],
    )?;
    if let Some(system) = request.get("systemInstruction") {
        check_content(system, "system_instruction", None)?;
    }
    let declared = match request.get("tools") {
        Some(tools) => check_tools(tools)?,
        None => Vec::new(),
    };
    if let Some(config) = request.get("toolConfig") {
        check_tool_config(config, &declared)?;
    }
    if let Some(config) = request.get("generationConfig") {
        check_generation_config(config)?;
    }
    let contents = match request.get("contents") {
        Some(contents) => array(contents, "contents")?,
        None => &[],
    };
    if contents.is_empty() {
        return Err(rule("contents", "contents is not specified"));
    }
    for (i, content) in contents.iter().enumerate() {
        check_content(content, &format!("contents[{i}]"), Some(()))?;
    }
    check_turns(contents, made)
}

const PART_DATA: &[&str] = &[
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
];

/// A content: a role (`user` or `model`, where one is wanted) and parts of known kinds, each
/// with exactly one kind of data.
fn check_content(content: &Value, path: &str, role_wanted: Option<()>) -> Checked {
    let fields = known_fields(content, path, &["role", "parts"])?;
    if let Some(role) = fields.get("role") {
        let role = string(role, &join(path, "role"))?;
        if role_wanted.is_some() && role != "user" && role != "model" {
            return Err("Please use a valid role: user, model.".to_owned());
        }
    }
    let parts = match fields.get("parts") {
        Some(parts) => array(parts, &join(path, "parts"))?,
        None => &[],
    };
    if parts.is_empty() {
        return Err(rule(
            &join(path, "parts"),
            "contents.parts must not be empty.",
        ));
    }
    for (i, part) in parts.iter().enumerate() {
        let path = format!("{}[{i}]", join(path, "parts"));
        let mut known = PART_DATA.to_vec();
        known.extend([
            "thought",
            "thoughtSignature",
            "videoMetadata",
            "partMetadata",
        ]);
        let part = known_fields(part, &path, &known)?;
        let data: Vec<&str> = PART_DATA
            .iter()
            .copied()
            .filter(|kind| part.contains_key(*kind))
            .collect();
        if data.len() != 1 {
            return Err(rule(
                &format!("{path}.data"),
                "required oneof field 'data' must have one initialized field",
            ));
        }
        if let Some(text) = part.get("text") {
            string(text, &format!("{path}.text"))?;
        }
        if let Some(call) = part.get("functionCall") {
            let path = format!("{path}.function_call");
            let call = known_fields(call, &path, &["id", "name", "args"])?;
            string(
                call.get("name").unwrap_or(&Value::Null),
                &join(&path, "name"),
            )?;
            if let Some(args) = call.get("args").filter(|args| !args.is_object()) {
                return Err(invalid(
                    &join(&path, "args"),
                    "type.googleapis.com/google.protobuf.Struct",
                    args,
                ));
            }
        }
        if let Some(response) = part.get("functionResponse") {
            let path = format!("{path}.function_response");
            let response = known_fields(response, &path, &["id", "name", "response", "parts"])?;
            string(
                response.get("name").unwrap_or(&Value::Null),
                &join(&path, "name"),
            )?;
            match response.get("response") {
                Some(Value::Object(_)) => {}
                other => {
                    return Err(invalid(
                        &join(&path, "response"),
                        "type.googleapis.com/google.protobuf.Struct",
                        other.unwrap_or(&Value::Null),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The turns in order: every model turn of function calls answered by the next turn, a user
/// turn of as many function responses, named after the calls; function calls only in model
/// turns, responses only in user turns; a call the fake made signed sent back with its
/// signature.
fn check_turns(contents: &[Value], made: &[Made]) -> Checked {
    let mut position = 0;
    for (i, content) in contents.iter().enumerate() {
        let role = content
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("user");
        let parts = content["parts"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let calls: Vec<&Value> = parts.iter().filter_map(|p| p.get("functionCall")).collect();
        let responses: Vec<&Value> = parts
            .iter()
            .filter_map(|p| p.get("functionResponse"))
            .collect();
        if role == "user" && !calls.is_empty() {
            return Err(rule(
                &format!("contents[{i}]"),
                "function calls can only be in a model turn",
            ));
        }
        if role == "model" && !responses.is_empty() {
            return Err(rule(
                &format!("contents[{i}]"),
                "function responses can only be in a user turn",
            ));
        }
        for part in parts {
            position += 1;
            let Some(call) = part.get("functionCall") else {
                continue;
            };
            let name = call["name"].as_str().unwrap_or("");
            let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
            let ours = made.iter().find(|m| m.name == name && m.args == args);
            let signature = ours.and_then(|m| m.signature.as_deref());
            if signature.is_some()
                && part.get("thoughtSignature").and_then(Value::as_str) != signature
            {
                return Err(format!(
                    "Function call is missing a thought_signature in functionCall parts. This is \
                     required for tools to work correctly, and missing thought_signature may \
                     lead to degraded model performance. Additional data, function call \
                     `default_api:{name}` , position {position}. Please refer to \
                     https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
                ));
            }
        }
        if !responses.is_empty() {
            let previous = i
                .checked_sub(1)
                .and_then(|p| contents.get(p))
                .filter(|c| c["role"] == "model");
            let called: Vec<&str> = previous
                .and_then(|c| c["parts"].as_array())
                .into_iter()
                .flatten()
                .filter_map(|p| p["functionCall"]["name"].as_str())
                .collect();
            if called.is_empty() {
                return Err(
                    "Please ensure that function response turn comes immediately after a \
                     function call turn."
                        .to_owned(),
                );
            }
            if called.len() != responses.len() {
                return Err(
                    "Please ensure that the number of function response parts is equal to the \
                     number of function call parts of the function call turn."
                        .to_owned(),
                );
            }
            for (j, response) in responses.iter().enumerate() {
                let name = response["name"].as_str().unwrap_or("");
                if !called.contains(&name) {
                    return Err(rule(
                        &format!("contents[{i}].parts[{j}].function_response.name"),
                        &format!("\"{name}\" answers no function call of the function call turn"),
                    ));
                }
            }
        }
        if !calls.is_empty() {
            let next = contents.get(i + 1);
            let answered = next.is_some_and(|c| {
                c["role"] == "user"
                    && c["parts"]
                        .as_array()
                        .is_some_and(|ps| ps.iter().any(|p| p.get("functionResponse").is_some()))
            });
            if next.is_some() && !answered {
                return Err(
                    "Please ensure that function call turn comes immediately after a user turn \
                     or after a function response turn, and is answered by a function response \
                     turn."
                        .to_owned(),
                );
            }
        }
    }
    Ok(())
}

/// The declared function names, once every declaration is valid.
fn check_tools(tools: &Value) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for (i, tool) in array(tools, "tools")?.iter().enumerate() {
        let path = format!("tools[{i}]");
        let tool = known_fields(
            tool,
            &path,
            &[
                "functionDeclarations",
                "googleSearch",
                "codeExecution",
                "urlContext",
            ],
        )?;
        let Some(declarations) = tool.get("functionDeclarations") else {
            continue;
        };
        let path = join(&path, "functionDeclarations");
        for (j, declaration) in array(declarations, &path)?.iter().enumerate() {
            let path = format!("{path}[{j}]");
            let declaration = known_fields(
                declaration,
                &path,
                &[
                    "name",
                    "description",
                    "parameters",
                    "parametersJsonSchema",
                    "response",
                    "behavior",
                ],
            )?;
            let name = string(
                declaration.get("name").unwrap_or(&Value::Null),
                &join(&path, "name"),
            )?;
            if !valid_function_name(name) {
                return Err(rule(
                    &join(&path, "name"),
                    "Invalid function name. Must start with a letter or an underscore. Must be \
                     alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a \
                     maximum length of 64.",
                ));
            }
            if let Some(description) = declaration.get("description") {
                string(description, &join(&path, "description"))?;
            }
            if let Some(parameters) = declaration.get("parameters") {
                check_schema(parameters, &join(&path, "parameters"))?;
            }
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// `^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$`
fn valid_function_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// The fields of the API's `Schema`, a subset of OpenAPI 3.0's schema object.
const SCHEMA_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

const TYPES: &[&str] = &[
    "TYPE_UNSPECIFIED",
    "STRING",
    "NUMBER",
    "INTEGER",
    "BOOLEAN",
    "ARRAY",
    "OBJECT",
    "NULL",
];

const TYPE_ENUM: &str = "type.googleapis.com/google.ai.generativelanguage.v1beta.Type";

/// One schema object and every schema inside it.
fn check_schema(schema: &Value, path: &str) -> Checked {
    let fields = known_fields(schema, path, SCHEMA_FIELDS)?;
    let mut ty = None;
    for (key, value) in fields {
        let here = join(path, key);
        match key.as_str() {
            "type" => {
                let name = string(value, &here)?;
                if !TYPES.contains(&name.to_ascii_uppercase().as_str()) {
                    return Err(invalid(&here, TYPE_ENUM, value));
                }
                ty = Some(name.to_ascii_uppercase());
            }
            "format" | "title" | "description" | "pattern" => {
                string(value, &here)?;
            }
            "nullable" if !value.is_boolean() => {
                return Err(invalid(&here, "TYPE_BOOL", value));
            }
            "enum" | "required" | "propertyOrdering" => {
                for (i, item) in array(value, &here)?.iter().enumerate() {
                    string(item, &format!("{here}[{i}]"))?;
                }
            }
            "maxItems" | "minItems" | "minProperties" | "maxProperties" | "minLength"
            | "maxLength" => {
                let int64 = value.as_u64().is_some()
                    || value.as_str().is_some_and(|s| s.parse::<u64>().is_ok());
                if !int64 {
                    return Err(invalid(&here, "TYPE_INT64", value));
                }
            }
            "minimum" | "maximum" if !value.is_number() => {
                return Err(invalid(&here, "TYPE_DOUBLE", value));
            }
            "properties" => {
                let Value::Object(properties) = value else {
                    return Err(invalid(&here, "map<string, Schema>", value));
                };
                for (i, property) in properties.values().enumerate() {
                    check_schema(property, &format!("{here}[{i}].value"))?;
                }
            }
            "items" => {
                if value.is_array() {
                    return Err(not_repeating("items", &here));
                }
                check_schema(value, &here)?;
            }
            "anyOf" => {
                for (i, item) in array(value, &here)?.iter().enumerate() {
                    check_schema(item, &format!("{here}[{i}]"))?;
                }
            }
            // `nullable`, `minimum` and `maximum` of the right kind; `example` and `default`
            // take any value.
            _ => {}
        }
    }
    if let (Some(Value::Array(required)), properties) =
        (fields.get("required"), fields.get("properties"))
    {
        for (i, name) in required.iter().enumerate() {
            let defined = name
                .as_str()
                .is_some_and(|name| properties.and_then(|p| p.get(name)).is_some());
            if !defined {
                return Err(rule(
                    &format!("{}[{i}]", join(path, "required")),
                    "property is not defined",
                ));
            }
        }
    }
    let format = fields.get("format").and_then(Value::as_str);
    if ty.as_deref() == Some("STRING") && format.is_some_and(|f| f != "enum" && f != "date-time") {
        return Err(rule(
            &join(path, "format"),
            "only 'enum' and 'date-time' are supported for STRING type",
        ));
    }
    Ok(())
}

fn check_tool_config(config: &Value, declared: &[String]) -> Checked {
    let path = "tool_config";
    let config = known_fields(config, path, &["functionCallingConfig"])?;
    let Some(calling) = config.get("functionCallingConfig") else {
        return Ok(());
    };
    let path = join(path, "functionCallingConfig");
    let calling = known_fields(calling, &path, &["mode", "allowedFunctionNames"])?;
    let mode = match calling.get("mode") {
        Some(mode) => string(mode, &join(&path, "mode"))?,
        None => "AUTO",
    };
    if !["MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"].contains(&mode) {
        return Err(invalid(
            &join(&path, "mode"),
            "type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode",
            &json!(mode),
        ));
    }
    if let Some(allowed) = calling.get("allowedFunctionNames") {
        let here = join(&path, "allowedFunctionNames");
        if mode != "ANY" && mode != "VALIDATED" {
            return Err(rule(
                &here,
                "allowed_function_names should only be set when the Mode is ANY or VALIDATED.",
            ));
        }
        for (i, name) in array(allowed, &here)?.iter().enumerate() {
            let name = string(name, &format!("{here}[{i}]"))?;
            if !declared.iter().any(|d| d == name) {
                return Err(rule(
                    &format!("{here}[{i}]"),
                    &format!("function \"{name}\" is not declared"),
                ));
            }
        }
    }
    if declared.is_empty() {
        return Err(rule(
            &path,
            "function calling config is set but no function is declared",
        ));
    }
    Ok(())
}

fn check_generation_config(config: &Value) -> Checked {
    let path = "generation_config";
    let config = known_fields(
        config,
        path,
        &[
            "temperature",
            "topP",
            "topK",
            "candidateCount",
            "maxOutputTokens",
            "stopSequences",
            "seed",
            "responseMimeType",
            "responseSchema",
            "thinkingConfig",
            "presencePenalty",
            "frequencyPenalty",
        ],
    )?;
    if let Some(temperature) = config.get("temperature")
        && !temperature.is_number()
    {
        return Err(invalid(
            &join(path, "temperature"),
            "TYPE_FLOAT",
            temperature,
        ));
    }
    Ok(())
}
