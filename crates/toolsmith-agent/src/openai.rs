//! [`OpenAiCompatible`]: a blocking client for `POST {base}/chat/completions`, the API that
//! OpenAI, llama.cpp's server, vLLM, Ollama and most gateways speak.

use std::fmt;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value, json};

use crate::lm::{LanguageModel, LmError};
use crate::message::{Message, Request, Role, ToolCall};

/// The most of a reply body read: a chat completion is far smaller.
const BODY_LIMIT: u64 = 16 * 1024 * 1024;
/// The most of a server's error text quoted in an error.
const QUOTE_LIMIT: usize = 500;

/// A chat model behind an OpenAI-compatible `chat/completions` endpoint.
///
/// Requests carry the API key as a bearer token, and no `Authorization` header when there is no
/// key. A 429 or 5xx answer is retried with exponential backoff, waiting what the server's
/// `Retry-After` asks for where it says (up to [`max_retry_wait`](Self::max_retry_wait)); any
/// other 4xx fails at once with the server's message. No error ever contains the key.
///
/// ```no_run
/// use std::sync::Arc;
/// use toolsmith_agent::{LanguageModel, OpenAiCompatible};
///
/// let lm: Arc<dyn LanguageModel> = Arc::new(
///     OpenAiCompatible::new("https://api.openai.com/v1", "gpt-4o-mini")?
///         .api_key_from_env("OPENAI_API_KEY"),
/// );
/// # Ok::<(), toolsmith_agent::BaseUrlError>(())
/// ```
#[derive(Clone)]
pub struct OpenAiCompatible {
    base_url: String,
    model: String,
    api_key: Option<String>,
    timeout: Duration,
    retries: u32,
    backoff: Duration,
    max_retry_wait: Duration,
    temperature: Option<f64>,
    agent: ureq::Agent,
}

/// Why a base URL cannot be used by [`OpenAiCompatible`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrlError {
    /// The URL given.
    pub url: String,
    /// What is wrong with it.
    pub problem: String,
}

impl fmt::Display for BaseUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not an http(s) URL: {}", self.url, self.problem)
    }
}

impl std::error::Error for BaseUrlError {}

impl fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .finish_non_exhaustive()
    }
}

impl OpenAiCompatible {
    /// A client of `model` at `base_url` (the part before `/chat/completions`, such as
    /// `https://api.openai.com/v1`), without a key; 60 s per request, 3 retries from 500 ms.
    ///
    /// # Errors
    /// When `base_url` is not an `http` or `https` URL with a host ([`check_base_url`](Self::check_base_url)):
    /// the problem is found here, not at the first request.
    pub fn new(
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Result<Self, BaseUrlError> {
        let base_url = base_url.into();
        Self::check_base_url(&base_url)?;
        let timeout = Duration::from_secs(60);
        Ok(OpenAiCompatible {
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.into(),
            api_key: None,
            timeout,
            retries: 3,
            backoff: Duration::from_millis(500),
            max_retry_wait: Duration::from_secs(60),
            temperature: None,
            agent: agent(timeout),
        })
    }

    /// Whether `base_url` can be a client's base URL: an `http` or `https` URL with a host, and
    /// without a query or fragment (`/chat/completions` is added after it).
    ///
    /// ```
    /// use toolsmith_agent::OpenAiCompatible;
    ///
    /// assert!(OpenAiCompatible::check_base_url("http://127.0.0.1:8080/v1").is_ok());
    /// let error = OpenAiCompatible::check_base_url("not-a-url").unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "`not-a-url` is not an http(s) URL: it has no scheme (start it with http:// or https://)"
    /// );
    /// ```
    ///
    /// # Errors
    /// What is wrong with it, in words.
    pub fn check_base_url(base_url: &str) -> Result<(), BaseUrlError> {
        let problem = |problem: &str| {
            Err(BaseUrlError {
                url: base_url.to_owned(),
                problem: problem.to_owned(),
            })
        };
        if !base_url.contains("://") {
            return problem("it has no scheme (start it with http:// or https://)");
        }
        let uri = match base_url.parse::<ureq::http::Uri>() {
            Ok(uri) => uri,
            Err(error) => return problem(&format!("it cannot be read as a URL ({error})")),
        };
        match uri.scheme_str() {
            None => return problem("it has no scheme (start it with http:// or https://)"),
            Some(scheme)
                if scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https") => {}
            Some(scheme) => {
                return problem(&format!(
                    "its scheme is `{scheme}`; only http:// and https:// are spoken"
                ));
            }
        }
        if uri.host().is_none_or(str::is_empty) {
            return problem("it has no host");
        }
        if uri.query().is_some() || base_url.contains('#') {
            return problem("it has a query or fragment, and `/chat/completions` goes after it");
        }
        Ok(())
    }

    /// Sends the key held by the environment variable `name`; none when it is unset or empty.
    pub fn api_key_from_env(self, name: &str) -> Self {
        let key = std::env::var(name).ok();
        self.api_key(key)
    }

    /// Sends `key` (none when `None` or empty) as a bearer token.
    pub fn api_key(mut self, key: Option<String>) -> Self {
        self.api_key = key.filter(|key| !key.is_empty());
        self
    }

    /// The time allowed for one request, from connecting to the last byte of the reply (less
    /// when the request's [`deadline`](Request::deadline) comes sooner).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self.agent = agent(timeout);
        self
    }

    /// How many times a 429 or 5xx answer is retried (0: never).
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// The wait before the first retry when the server does not say; it doubles each retry.
    pub fn backoff(mut self, backoff: Duration) -> Self {
        self.backoff = backoff;
        self
    }

    /// The longest `Retry-After` honoured; a server asking for longer fails the request.
    pub fn max_retry_wait(mut self, wait: Duration) -> Self {
        self.max_retry_wait = wait;
        self
    }

    /// The sampling temperature sent (the server's default when not set).
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The JSON body of the request for `request`.
    pub fn request_body(&self, request: &Request<'_>) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": request.messages.iter().map(Message::to_openai).collect::<Vec<_>>(),
        });
        if !request.tools.is_empty() {
            body["tools"] = Value::Array(request.tools.to_vec());
            body["tool_choice"] = request.tool_choice.to_openai();
        }
        if let Some(temperature) = self.temperature {
            body["temperature"] = json!(temperature);
        }
        body
    }

    /// One request, allowed `allowed` from connecting to the reply's last byte.
    fn attempt(&self, url: &str, body: &str, allowed: Duration) -> Result<Reply, LmError> {
        let mut post = self
            .agent
            .post(url)
            .config()
            .timeout_global(Some(allowed))
            .build()
            .header("Content-Type", "application/json");
        if let Some(key) = &self.api_key {
            post = post.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = post
            .send(body)
            .map_err(|e| self.transport_error(url, &e, allowed))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok())
            .and_then(parse_retry_after);
        let text = response
            .body_mut()
            .with_config()
            .limit(BODY_LIMIT)
            .read_to_string()
            .map_err(|e| self.transport_error(url, &e, allowed))?;
        Ok(Reply {
            status,
            retry_after,
            text,
        })
    }

    fn transport_error(&self, url: &str, error: &ureq::Error, allowed: Duration) -> LmError {
        match error {
            ureq::Error::Timeout(_) => LmError::Timeout {
                url: url.to_owned(),
                after: allowed,
            },
            ureq::Error::BodyExceedsLimit(limit) => LmError::Malformed {
                reason: format!("the reply is larger than {limit} bytes"),
            },
            other => LmError::Unreachable {
                url: url.to_owned(),
                reason: self.redact(&other.to_string()),
            },
        }
    }

    /// How long to wait after the `attempts`-th request got `reply`: what the server's
    /// `Retry-After` asks, else the backoff doubled for each attempt so far.
    fn wait_before_retry(&self, attempts: u32, reply: &Reply) -> Result<Duration, LmError> {
        match reply.retry_after {
            Some(asked) if asked > self.max_retry_wait => Err(LmError::RetryTooLate {
                status: reply.status,
                retry_after: asked,
            }),
            Some(asked) => Ok(asked),
            None => Ok(self
                .backoff
                .saturating_mul(1 << attempts.saturating_sub(1).min(16))),
        }
    }

    /// `text` with the API key, wherever it appears, replaced by `[redacted]`.
    fn redact(&self, text: &str) -> String {
        match &self.api_key {
            Some(key) => text.replace(key.as_str(), "[redacted]"),
            None => text.to_owned(),
        }
    }
}

impl LanguageModel for OpenAiCompatible {
    /// Asks the server, retrying 429 and 5xx answers; a request's deadline bounds every
    /// attempt's time, and a retry that could only begin after it is not made.
    fn complete(&self, request: &Request<'_>) -> Result<Message, LmError> {
        let url = self.url();
        let body = self.request_body(request).to_string();
        let left = || {
            request
                .deadline
                .map(|deadline| deadline.saturating_duration_since(Instant::now()))
        };
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let allowed = left().map_or(self.timeout, |left| left.min(self.timeout));
            if allowed.is_zero() {
                return Err(LmError::Timeout {
                    url,
                    after: allowed,
                });
            }
            let reply = self.attempt(&url, &body, allowed)?;
            if (200..300).contains(&reply.status) {
                return parse_completion(&reply.text);
            }
            let retryable = reply.status == 429 || (500..600).contains(&reply.status);
            let failed = || LmError::Status {
                status: reply.status,
                message: self.redact(&server_message(&reply.text)),
                attempts,
            };
            if !retryable || attempts > self.retries {
                return Err(failed());
            }
            let wait = self.wait_before_retry(attempts, &reply)?;
            if left().is_some_and(|left| left <= wait) {
                return Err(failed());
            }
            std::thread::sleep(wait);
        }
    }
}

/// One answer from the server.
struct Reply {
    status: u16,
    retry_after: Option<Duration>,
    text: String,
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        // Error statuses are answers to read (the server's message, `Retry-After`).
        .http_status_as_error(false)
        .build()
        .new_agent()
}

/// `Retry-After` as seconds or as an HTTP date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// The server's own words: `error.message` of an OpenAI-style error body, else the body's start.
fn server_message(text: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    let message = parsed.as_ref().and_then(|body| {
        let error = body.get("error")?;
        error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str())
            .map(str::to_owned)
    });
    match message {
        Some(message) => abridge(&message),
        None if text.trim().is_empty() => "(no message)".to_owned(),
        None => abridge(text.trim()),
    }
}

fn abridge(text: &str) -> String {
    match text.char_indices().nth(QUOTE_LIMIT) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The assistant message of a chat completion: `choices[0].message`.
fn parse_completion(text: &str) -> Result<Message, LmError> {
    let malformed = |reason: String| LmError::Malformed { reason };
    let body: Value = serde_json::from_str(text).map_err(|e| {
        malformed(format!(
            "it is not JSON ({e}): {}",
            abridge(text.trim()).escape_debug()
        ))
    })?;
    let message = body
        .get("choices")
        .and_then(|choices| choices.get(0))
        .and_then(|choice| choice.get("message"))
        .and_then(Value::as_object)
        .ok_or_else(|| malformed("it has no `choices[0].message` object".to_owned()))?;
    let content = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Array(parts)) => Some(text_parts(parts)),
        Some(other) => {
            return Err(malformed(format!(
                "its `content` is {}, not text",
                kind(other)
            )));
        }
    };
    let tool_calls = match message.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls
            .iter()
            .enumerate()
            .map(|(i, call)| parse_tool_call(i, call))
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(malformed(format!(
                "its `tool_calls` is {}, not an array",
                kind(other)
            )));
        }
    };
    Ok(Message {
        role: Role::Assistant,
        content,
        tool_calls,
        tool_call_id: None,
    })
}

/// The text of content given as parts (`[{"type": "text", "text": ...}]`).
fn text_parts(parts: &[Value]) -> String {
    parts
        .iter()
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect()
}

fn parse_tool_call(index: usize, call: &Value) -> Result<ToolCall, LmError> {
    let empty = Map::new();
    let function = call
        .get("function")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| LmError::Malformed {
            reason: format!("tool call {index} has no `function.name`"),
        })?;
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map_or_else(|| format!("call_{index}"), str::to_owned);
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => Value::String(String::new()),
        Some(arguments) => arguments.clone(),
    };
    Ok(ToolCall::new(id, name, arguments))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::message::ToolChoice;

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        let past = "Sun, 06 Nov 1994 08:49:37 GMT";
        assert_eq!(parse_retry_after(past), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn a_retry_waits_what_retry_after_asks_else_a_doubling_backoff() {
        let client = OpenAiCompatible::new("http://x", "m")
            .unwrap()
            .backoff(Duration::from_millis(100));
        let reply = |retry_after| Reply {
            status: 503,
            retry_after,
            text: String::new(),
        };
        let waits: Vec<_> = (1..=3)
            .map(|attempt| client.wait_before_retry(attempt, &reply(None)))
            .collect();
        let ms = Duration::from_millis;
        assert_eq!(waits, [Ok(ms(100)), Ok(ms(200)), Ok(ms(400))]);
        let asked = Some(Duration::from_secs(2));
        assert_eq!(
            client.wait_before_retry(1, &reply(asked)),
            Ok(Duration::from_secs(2))
        );
        let too_late = Some(Duration::from_secs(61));
        assert!(client.wait_before_retry(1, &reply(too_late)).is_err());
    }

    #[test]
    fn the_server_message_is_its_error_message_else_its_body() {
        let body = r#"{"error": {"message": "Invalid API key", "type": "auth"}}"#;
        assert_eq!(server_message(body), "Invalid API key");
        assert_eq!(server_message("Bad Gateway"), "Bad Gateway");
        assert_eq!(server_message(""), "(no message)");
        assert_eq!(server_message(&"x".repeat(600)).len(), QUOTE_LIMIT + 3);
    }

    #[test]
    fn a_completion_gives_text_and_tool_calls_with_ids() {
        let body = json!({"choices": [{"message": {"role": "assistant", "content": null,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1}"}},
            {"type": "function", "function": {"name": "add", "arguments": {"a": 2}}}
        ]}}]});
        let message = parse_completion(&body.to_string()).expect("a completion");
        assert_eq!(message.content, None);
        assert_eq!(
            message.tool_calls,
            vec![
                ToolCall::new("a", "add", json!("{\"a\":1}")),
                ToolCall::new("call_1", "add", json!({"a": 2})),
            ]
        );
    }

    #[test]
    fn a_reply_without_choices_is_malformed() {
        let error = parse_completion(r#"{"id": "x"}"#).unwrap_err();
        assert!(error.to_string().contains("choices[0].message"), "{error}");
        let error = parse_completion("<html>").unwrap_err();
        assert!(error.to_string().contains("not JSON"), "{error}");
    }

    #[test]
    fn the_request_body_declares_tools_only_when_there_are_some() {
        let client = OpenAiCompatible::new("http://127.0.0.1:1/v1/", "m")
            .unwrap()
            .temperature(0.0);
        assert_eq!(client.url(), "http://127.0.0.1:1/v1/chat/completions");
        let messages = [Message::user("hi")];
        let choice = ToolChoice::Auto;
        let plain = client.request_body(&Request {
            messages: &messages,
            tools: &[],
            tool_choice: &choice,
            deadline: None,
        });
        assert_eq!(
            plain,
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0})
        );
        let tools = [json!({"type": "function", "function": {"name": "finish"}})];
        let with_tools = client.request_body(&Request {
            messages: &messages,
            tools: &tools,
            tool_choice: &choice,
            deadline: None,
        });
        assert_eq!(with_tools["tool_choice"], "auto");
        assert_eq!(with_tools["tools"][0]["function"]["name"], "finish");
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let client = OpenAiCompatible::new("http://x", "m")
            .unwrap()
            .api_key(Some("sk-secret".into()));
        assert!(!format!("{client:?}").contains("sk-secret"));
        assert_eq!(client.redact("bad key sk-secret!"), "bad key [redacted]!");
    }
}
