//! The HTTP side every client shares ([`Transport`]): one JSON `POST`, its time bounded by the
//! request's deadline, 429 and 5xx answers retried with backoff or as `Retry-After` asks, the
//! body size bounded, and the API key kept out of every error.
//!
//! A client ([`OpenAiCompatible`](crate::OpenAiCompatible),
//! [`Anthropic`](crate::Anthropic),
//! [`Gemini`](crate::Gemini)) owns only its wire format: the URL, the headers, the body it
//! writes, the reply it reads and the shape of its API's errors ([`ErrorShape`]).

use std::fmt;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::lm::LmError;

/// The most of a reply body read: a model's reply is far smaller.
const BODY_LIMIT: u64 = 16 * 1024 * 1024;
/// The most of a server's error text quoted in an error.
pub(crate) const QUOTE_LIMIT: usize = 500;

/// How a client's API writes its errors.
pub(crate) trait ErrorShape {
    /// The server's own words in an error body (`error.message`, say), abridged; the body's
    /// start when it has no message in the API's shape.
    fn message(&self, body: &str) -> String {
        standard_message(body)
    }

    /// How long an error body asks to wait before retrying, where it says (Gemini's
    /// `RetryInfo.retryDelay`); a `Retry-After` header goes first.
    fn retry_delay(&self, _body: &str) -> Option<Duration> {
        None
    }
}

/// Why a base URL cannot be a client's: not an `http(s)` URL with a host, or one with a query
/// or fragment (the API's own path goes after it).
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

/// Whether `base_url` can be a client's base URL: an `http` or `https` URL with a host, and
/// without a query or fragment (`path`, the API's own, is added after it).
pub(crate) fn check_base_url(base_url: &str, path: &str) -> Result<(), BaseUrlError> {
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
        return problem(&format!(
            "it has a query or fragment, and `{path}` goes after it"
        ));
    }
    Ok(())
}

/// One request to send.
pub(crate) struct Post<'a> {
    /// Where.
    pub url: &'a str,
    /// Headers besides `Content-Type: application/json`; their values may be secret.
    pub headers: &'a [(&'static str, &'a str)],
    /// The JSON body.
    pub body: &'a str,
    /// The API key, replaced by `[redacted]` wherever a server or transport error quotes it.
    pub secret: Option<&'a str>,
    /// When the answer is no longer wanted.
    pub deadline: Option<Instant>,
}

/// The time allowed per request, and how error answers are retried.
#[derive(Clone)]
pub(crate) struct Transport {
    agent: ureq::Agent,
    timeout: Duration,
    retries: u32,
    backoff: Duration,
    max_retry_wait: Duration,
}

impl Default for Transport {
    /// 60 s per request, 3 retries from 500 ms, `Retry-After` honoured up to 60 s.
    fn default() -> Self {
        let timeout = Duration::from_secs(60);
        Transport {
            agent: agent(timeout),
            timeout,
            retries: 3,
            backoff: Duration::from_millis(500),
            max_retry_wait: Duration::from_secs(60),
        }
    }
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .field("backoff", &self.backoff)
            .field("max_retry_wait", &self.max_retry_wait)
            .finish()
    }
}

impl Transport {
    pub(crate) fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
        self.agent = agent(timeout);
    }

    pub(crate) fn set_retries(&mut self, retries: u32) {
        self.retries = retries;
    }

    pub(crate) fn set_backoff(&mut self, backoff: Duration) {
        self.backoff = backoff;
    }

    pub(crate) fn set_max_retry_wait(&mut self, wait: Duration) {
        self.max_retry_wait = wait;
    }

    /// Sends `post`, retrying 429 and 5xx answers, and reads the body of the first success
    /// with `read`. The deadline bounds every attempt's time, and a retry that could only
    /// begin after it is not made. A reply `read` finds malformed is quoted in its error: the
    /// key is taken out of it too.
    pub(crate) fn exchange<T>(
        &self,
        post: &Post<'_>,
        errors: &dyn ErrorShape,
        read: impl FnOnce(&str) -> Result<T, LmError>,
    ) -> Result<T, LmError> {
        let text = self.post(post, errors)?;
        read(&text).map_err(|error| match error {
            LmError::Malformed { reason } => LmError::Malformed {
                reason: redact(&reason, post.secret),
            },
            other => other,
        })
    }

    /// Sends `post`, retrying 429 and 5xx answers, and gives the body of the first success.
    fn post(&self, post: &Post<'_>, errors: &dyn ErrorShape) -> Result<String, LmError> {
        let left = || {
            post.deadline
                .map(|deadline| deadline.saturating_duration_since(Instant::now()))
        };
        let redact = |text: &str| redact(text, post.secret);
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let allowed = left().map_or(self.timeout, |left| left.min(self.timeout));
            if allowed.is_zero() {
                return Err(LmError::Timeout {
                    url: post.url.to_owned(),
                    after: allowed,
                });
            }
            let answer = self.attempt(post, allowed)?;
            if (200..300).contains(&answer.status) {
                return Ok(answer.text);
            }
            let retryable = answer.status == 429 || (500..600).contains(&answer.status);
            let failed = || LmError::Status {
                status: answer.status,
                message: redact(&errors.message(&answer.text)),
                attempts,
            };
            if !retryable || attempts > self.retries {
                return Err(failed());
            }
            let asked = answer
                .retry_after
                .or_else(|| errors.retry_delay(&answer.text));
            let wait = self.wait_before_retry(attempts, answer.status, asked)?;
            if left().is_some_and(|left| left <= wait) {
                return Err(failed());
            }
            std::thread::sleep(wait);
        }
    }

    /// One request, allowed `allowed` from connecting to the reply's last byte.
    fn attempt(&self, post: &Post<'_>, allowed: Duration) -> Result<Answer, LmError> {
        let mut request = self
            .agent
            .post(post.url)
            .config()
            .timeout_global(Some(allowed))
            .build()
            .header("Content-Type", "application/json");
        for (name, value) in post.headers {
            request = request.header(*name, *value);
        }
        let fail = |error: &ureq::Error| transport_error(post, error, allowed);
        let mut response = request.send(post.body).map_err(|e| fail(&e))?;
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
            .map_err(|e| fail(&e))?;
        Ok(Answer {
            status,
            retry_after,
            text,
        })
    }

    /// How long to wait after the `attempts`-th request got `status`: what the server asked,
    /// else the backoff doubled for each attempt so far.
    fn wait_before_retry(
        &self,
        attempts: u32,
        status: u16,
        asked: Option<Duration>,
    ) -> Result<Duration, LmError> {
        match asked {
            Some(asked) if asked > self.max_retry_wait => Err(LmError::RetryTooLate {
                status,
                retry_after: asked,
            }),
            Some(asked) => Ok(asked),
            None => Ok(self
                .backoff
                .saturating_mul(1 << attempts.saturating_sub(1).min(16))),
        }
    }
}

/// One answer from the server.
struct Answer {
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

fn transport_error(post: &Post<'_>, error: &ureq::Error, allowed: Duration) -> LmError {
    match error {
        ureq::Error::Timeout(_) => LmError::Timeout {
            url: post.url.to_owned(),
            after: allowed,
        },
        ureq::Error::BodyExceedsLimit(limit) => LmError::Malformed {
            reason: format!("the reply is larger than {limit} bytes"),
        },
        other => LmError::Unreachable {
            url: post.url.to_owned(),
            reason: redact(&other.to_string(), post.secret),
        },
    }
}

/// `text` with `secret`, wherever it appears, replaced by `[redacted]`.
pub(crate) fn redact(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(secret) if !secret.is_empty() => text.replace(secret, "[redacted]"),
        _ => text.to_owned(),
    }
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

/// The server's own words in the error shape OpenAI, Anthropic and Gemini share:
/// `{"error": {"message": ...}}` (or `{"error": "..."}`), else the body's start.
pub(crate) fn standard_message(text: &str) -> String {
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

/// `text`, cut after [`QUOTE_LIMIT`] characters.
pub(crate) fn abridge(text: &str) -> String {
    match text.char_indices().nth(QUOTE_LIMIT) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A reply body read as JSON, or [`LmError::Malformed`] quoting its start.
pub(crate) fn json_body(text: &str) -> Result<Value, LmError> {
    serde_json::from_str(text).map_err(|e| LmError::Malformed {
        reason: format!(
            "it is not JSON ({e}): {}",
            abridge(text.trim()).escape_debug()
        ),
    })
}

/// A JSON value's kind, for messages: `a string`, `an object`, ...
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The builder methods every HTTP client has, over its `transport` field.
macro_rules! transport_settings {
    () => {
        /// The time allowed for one request, from connecting to the last byte of the reply
        /// (less when the request's [`deadline`](crate::Request::deadline) comes sooner); 60 s
        /// unless set.
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.transport.set_timeout(timeout);
            self
        }

        /// How many times a 429 or 5xx answer is retried (3 unless set; 0: never).
        pub fn retries(mut self, retries: u32) -> Self {
            self.transport.set_retries(retries);
            self
        }

        /// The wait before the first retry when the server does not say (500 ms unless set);
        /// it doubles each retry.
        pub fn backoff(mut self, backoff: std::time::Duration) -> Self {
            self.transport.set_backoff(backoff);
            self
        }

        /// The longest wait a server may ask for before a retry (60 s unless set); a server
        /// asking for longer fails the request with
        /// [`LmError::RetryTooLate`](crate::LmError::RetryTooLate).
        pub fn max_retry_wait(mut self, wait: std::time::Duration) -> Self {
            self.transport.set_max_retry_wait(wait);
            self
        }
    };
}

pub(crate) use transport_settings;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        let past = "Sun, 06 Nov 1994 08:49:37 GMT";
        assert_eq!(parse_retry_after(past), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn a_retry_waits_what_the_server_asks_else_a_doubling_backoff() {
        let mut transport = Transport::default();
        transport.set_backoff(Duration::from_millis(100));
        let waits: Vec<_> = (1..=3)
            .map(|attempt| transport.wait_before_retry(attempt, 503, None))
            .collect();
        let ms = Duration::from_millis;
        assert_eq!(waits, [Ok(ms(100)), Ok(ms(200)), Ok(ms(400))]);
        let asked = Some(Duration::from_secs(2));
        assert_eq!(
            transport.wait_before_retry(1, 429, asked),
            Ok(Duration::from_secs(2))
        );
        let too_late = Some(Duration::from_secs(61));
        assert!(transport.wait_before_retry(1, 429, too_late).is_err());
    }

    #[test]
    fn the_server_message_is_its_error_message_else_its_body() {
        let body = r#"{"error": {"message": "Invalid API key", "type": "auth"}}"#;
        assert_eq!(standard_message(body), "Invalid API key");
        assert_eq!(standard_message("Bad Gateway"), "Bad Gateway");
        assert_eq!(standard_message(""), "(no message)");
        assert_eq!(standard_message(&"x".repeat(600)).len(), QUOTE_LIMIT + 3);
    }

    #[test]
    fn a_secret_is_redacted_wherever_it_appears() {
        assert_eq!(
            redact("bad key sk-secret!", Some("sk-secret")),
            "bad key [redacted]!"
        );
        assert_eq!(redact("nothing", Some("")), "nothing");
    }
}
