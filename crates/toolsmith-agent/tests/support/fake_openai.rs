//! A fake OpenAI-compatible server on 127.0.0.1 for tests: it answers `POST
//! /v1/chat/completions` from a script, in order, and records what each request carried.
//!
//! Shared by this crate's tests and the CLI's (included with `#[path]`).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    body: String,
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
            headers: Vec::new(),
            delay: Duration::ZERO,
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
        Reply::json(completion(json!({"role": "assistant", "content": content})))
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
        Reply::json(completion(
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
        ))
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

fn completion(message: Value) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    })
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
        seen.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Seen {
                path: request.url().to_owned(),
                authorization,
                body: serde_json::from_str(&body).unwrap_or(Value::Null),
            });
        let reply = if request.url() == "/v1/chat/completions" {
            script
                .next()
                .unwrap_or_else(|| Reply::error(500, "the fake server's script is exhausted"))
        } else {
            Reply::error(404, "no such endpoint")
        };
        std::thread::sleep(reply.delay);
        let mut response =
            tiny_http::Response::from_string(reply.body).with_status_code(reply.status);
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
