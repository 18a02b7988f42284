//! A fake OpenAI-compatible server on 127.0.0.1 for tests: it answers `POST
//! /v1/chat/completions` from a script, in order, and records what each request carried.
//!
//! A scripted completion ([`Reply::text`], [`Reply::calls`]) is answered as the API answers
//! it: whole, or, to a request with `"stream": true`, as a stream of `chat.completion.chunk`
//! events (the role and the content's start, the text in pieces, each call's `index`, `id` and
//! `function.name` then its arguments in pieces, a last chunk with the `finish_reason`, the
//! usage in a chunk of no choices when `stream_options.include_usage` asks for it, then
//! `data: [DONE]`). A stream can be cut short, broken off, paced, or end in an error object.
//! A request whose `stream` is no boolean, or that sets `stream_options` without streaming,
//! or that sets `max_tokens` for a reasoning model (`o1`, `o3`, `o4-mini`, `gpt-5.1`: they
//! take only `max_completion_tokens`), is refused with a 400 as the API refuses it, and takes
//! no reply of the script.
//!
//! Shared by this crate's tests and the CLI's (included with `#[path]`).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

mod sse {
    #![allow(dead_code)]
    include!("sse.rs");
}

pub use sse::Ending;

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    body: String,
    /// The assistant message of a scripted completion, sent whole or streamed.
    message: Option<Value>,
    usage: Option<Value>,
    /// The `finish_reason` sent in place of the natural one (`stop`, `tool_calls`).
    finish: Option<String>,
    stream: sse::Shape,
    /// An error object sent in the stream after this many events, in place of the rest.
    stream_error: Option<(usize, String)>,
    headers: Vec<(String, String)>,
    delay: Duration,
}

impl Reply {
    /// A 200 answer with this JSON body.
    pub fn json(body: Value) -> Self {
        Reply::raw(200, body.to_string())
    }

    /// An answer with this status and body text.
    pub fn raw(status: u16, body: impl Into<String>) -> Self {
        Reply {
            status,
            body: body.into(),
            message: None,
            usage: None,
            finish: None,
            stream: sse::Shape::default(),
            stream_error: None,
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// A completion of this assistant message, sent whole or streamed as the request asks.
    pub fn completion(message: Value) -> Self {
        Reply {
            message: Some(message),
            ..Reply::raw(200, "")
        }
    }

    /// An OpenAI-style error answer.
    pub fn error(status: u16, message: &str) -> Self {
        Reply::raw(
            status,
            json!({"error": {"message": message, "type": "test"}}).to_string(),
        )
    }

    /// A completion whose message is text only.
    pub fn text(content: &str) -> Self {
        Reply::completion(json!({"role": "assistant", "content": content}))
    }

    /// A completion whose message makes these calls: `(id, tool, arguments text)`.
    pub fn calls(calls: &[(&str, &str, &str)]) -> Self {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function",
                       "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        Reply::completion(json!({"role": "assistant", "content": null, "tool_calls": calls}))
    }

    /// The same completion counting these tokens in its `usage` (streamed when the request
    /// asks for it with `stream_options.include_usage`).
    pub fn usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = Some(json!({
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }));
        self
    }

    /// The same completion, streamed with this many characters of text (or of a call's
    /// arguments) per delta (4 unless set).
    pub fn pieces(mut self, size: usize) -> Self {
        self.stream.piece = size;
        self
    }

    /// The same completion, its stream ending as told.
    pub fn ending(mut self, ending: Ending) -> Self {
        self.stream.ending = ending;
        self
    }

    /// The same completion, its stream's events sent `pace` apart.
    pub fn pace(mut self, pace: Duration) -> Self {
        self.stream.pace = pace;
        self
    }

    /// The same completion, its stream ending after `events` events in an error object of
    /// this message, as the API sends one when it fails mid-stream.
    pub fn stream_error(mut self, events: usize, message: &str) -> Self {
        self.stream_error = Some((events, message.to_owned()));
        self
    }

    /// The same answer with a header added.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The same completion ended with `finish_reason` (`length`: cut off at the token limit).
    pub fn finish_reason(mut self, reason: &str) -> Self {
        self.finish = Some(reason.to_owned());
        self
    }

    /// The same answer, sent after `delay`.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// The `finish_reason` of `message`: `finish` where one is scripted, else the natural one.
fn finish_reason<'a>(message: &Value, finish: Option<&'a str>) -> &'a str {
    finish.unwrap_or(if message["tool_calls"].is_array() {
        "tool_calls"
    } else {
        "stop"
    })
}

fn completion(message: &Value, usage: Option<&Value>, finish: Option<&str>) -> Value {
    let mut body = json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(message, finish)}],
    });
    if let Some(usage) = usage {
        body["usage"] = usage.clone();
    }
    body
}

/// The events of `message` streamed as the API streams a completion.
fn chunks(
    message: &Value,
    usage: Option<&Value>,
    finish: Option<&str>,
    request: &Value,
    piece: usize,
) -> Vec<String> {
    let include_usage = request["stream_options"]["include_usage"] == json!(true);
    let chunk = |delta: Value, finish: Option<&str>| {
        let mut chunk = json!({
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": request["model"],
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if include_usage {
            chunk["usage"] = Value::Null;
        }
        sse::event(None, &chunk.to_string())
    };
    let mut events = Vec::new();
    let calls = message["tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    match message["content"].as_str() {
        Some(content) => {
            events.push(chunk(
                json!({"role": "assistant", "content": "", "refusal": null}),
                None,
            ));
            for text in sse::pieces(content, piece) {
                events.push(chunk(json!({"content": text}), None));
            }
        }
        None if calls.is_empty() => {
            events.push(chunk(json!({"role": "assistant", "content": null}), None));
        }
        None => {}
    }
    for (index, call) in calls.iter().enumerate() {
        let mut start = json!({"tool_calls": [{
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }]});
        if index == 0 && message["content"].is_null() {
            start["role"] = json!("assistant");
            start["content"] = Value::Null;
            start["refusal"] = Value::Null;
        }
        events.push(chunk(start, None));
        let arguments = call["function"]["arguments"].as_str().unwrap_or("");
        for text in sse::pieces(arguments, piece) {
            events.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": text}}]}),
                None,
            ));
        }
    }
    events.push(chunk(json!({}), Some(finish_reason(message, finish))));
    if include_usage && let Some(usage) = usage {
        let last = json!({
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": request["model"],
            "system_fingerprint": "fp_fake",
            "choices": [],
            "usage": usage,
        });
        events.push(sse::event(None, &last.to_string()));
    }
    events.push(sse::event(None, "[DONE]"));
    events
}

/// Why the API would refuse a request, if it would: its streaming fields, or its token limit.
fn check_request(body: &Value) -> Option<(&'static str, String)> {
    check_stream(body).or_else(|| check_token_limit(body))
}

/// OpenAI's reasoning models refuse the deprecated `max_tokens`.
fn check_token_limit(body: &Value) -> Option<(&'static str, String)> {
    let model = body.get("model").and_then(Value::as_str).unwrap_or("");
    let reasoning = ["o1", "o3", "o4", "gpt-5"].iter().any(|family| {
        model
            .strip_prefix(family)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.']))
    });
    (reasoning && body.get("max_tokens").is_some()).then(|| {
        (
            "max_tokens",
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use \
             'max_completion_tokens' instead."
                .to_owned(),
        )
    })
}

/// Why the API would refuse a request's streaming fields, if it would.
fn check_stream(body: &Value) -> Option<(&'static str, String)> {
    let stream = body.get("stream");
    if let Some(stream) = stream.filter(|stream| !stream.is_boolean()) {
        let kind = match stream {
            Value::Null => "null",
            Value::String(_) => "a string",
            Value::Number(_) => "a number",
            Value::Array(_) => "an array",
            _ => "an object",
        };
        return Some((
            "stream",
            format!("Invalid type for 'stream': expected a boolean, but got {kind} instead."),
        ));
    }
    let options = body.get("stream_options").filter(|o| !o.is_null())?;
    if stream != Some(&json!(true)) {
        return Some((
            "stream_options",
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.".to_owned(),
        ));
    }
    match options.get("include_usage") {
        None | Some(Value::Bool(_)) => None,
        Some(_) => Some((
            "stream_options.include_usage",
            "Invalid type for 'stream_options.include_usage': expected a boolean.".to_owned(),
        )),
    }
}

/// What one request carried.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request path.
    pub path: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// The body, parsed (`Value::Null` when it was not JSON).
    pub body: Value,
}

/// The running server; it stops when dropped.
pub struct FakeServer {
    base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl FakeServer {
    /// Starts a server answering with `script`, in order; past its end it answers 500.
    pub fn start(script: Vec<Reply>) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("a loopback port"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (server, seen) = (Arc::clone(&server), Arc::clone(&seen));
            std::thread::spawn(move || serve(&server, &seen, script))
        };
        FakeServer {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            seen,
            server,
            thread: Some(thread),
        }
    }

    /// The base URL to give a client (`http://127.0.0.1:PORT/v1`).
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

fn serve(server: &tiny_http::Server, seen: &Mutex<Vec<Seen>>, script: Vec<Reply>) {
    let mut script = script.into_iter();
    for mut request in server.incoming_requests() {
        let mut body = String::new();
        let _ = request.as_reader().read_to_string(&mut body);
        let authorization = request
            .headers()
            .iter()
            .find(|h| h.field.equiv("Authorization"))
            .map(|h| h.value.as_str().to_owned());
        let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        seen.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Seen {
                path: request.url().to_owned(),
                authorization,
                body: body.clone(),
            });
        let reply = if request.url() != "/v1/chat/completions" {
            Reply::error(404, "no such endpoint")
        } else if let Some((param, message)) = check_request(&body) {
            let code = match param {
                "max_tokens" => json!("unsupported_parameter"),
                _ => Value::Null,
            };
            Reply::raw(
                400,
                json!({"error": {"message": message, "type": "invalid_request_error",
                                 "param": param, "code": code}})
                .to_string(),
            )
        } else {
            script
                .next()
                .unwrap_or_else(|| Reply::error(500, "the fake server's script is exhausted"))
        };
        std::thread::sleep(reply.delay);
        let streamed = body["stream"] == json!(true);
        let text = match &reply.message {
            Some(message) if streamed && reply.status == 200 => {
                let mut events = chunks(
                    message,
                    reply.usage.as_ref(),
                    reply.finish.as_deref(),
                    &body,
                    reply.stream.piece,
                );
                if let Some((after, message)) = &reply.stream_error {
                    events.truncate(*after);
                    let error = json!({"error": {"message": message, "type": "server_error",
                                                 "param": null, "code": null}});
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
            Some(message) => {
                completion(message, reply.usage.as_ref(), reply.finish.as_deref()).to_string()
            }
            None => reply.body,
        };
        let mut response = tiny_http::Response::from_string(text).with_status_code(reply.status);
        let content_type = tiny_http::Header::from_bytes("Content-Type", "application/json");
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
