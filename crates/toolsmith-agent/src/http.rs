//! The HTTP side every client shares ([`Transport`]): one JSON `POST`, its time bounded by the
//! request's deadline, 429 and 5xx answers retried with backoff or as the server asks, the
//! body size bounded, and the API key kept out of every error.
//!
//! A client ([`OpenAiCompatible`](crate::OpenAiCompatible), [`Anthropic`](crate::Anthropic),
//! [`Gemini`](crate::Gemini)) owns only its wire format: the URL, the headers, the body it
//! writes, the reply it reads and the shape of its API's errors ([`ErrorShape`]).
//!
//! Requests go through `reqwest` on tokio. A request made where no tokio runtime is running
//! (a future polled by another executor) runs on a small runtime of the transport's own, so
//! that a model can be asked from any executor.
//!
//! A streamed reply ([`Transport::exchange_streaming`]) is asked and retried the same way, then
//! its body is read as server-sent events, each handed to the client's [`EventReader`] as it
//! comes. The body is read by a task (on the caller's runtime, else on the transport's own)
//! that passes the events over a channel to the future the caller polls, where the reader and
//! the caller's sink run.

use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use eventsource_stream::{Event, EventStreamError, Eventsource as _};
use futures_core::Stream;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::lm::{LmError, Reply};

/// The most of a reply body read, a streamed one's too: a model's reply is far smaller.
const BODY_LIMIT: usize = 16 * 1024 * 1024;
/// How many events of a stream may wait for the caller's future to read them.
const EVENTS_BUFFERED: usize = 64;
/// The most of a server's error text quoted in an error.
pub(crate) const QUOTE_LIMIT: usize = 500;

/// How a client's API writes its errors.
#[derive(Clone, Copy)]
pub(crate) struct ErrorShape {
    /// The server's own words in an error body (`error.message`, say), abridged; the body's
    /// start when it has no message in the API's shape.
    pub message: fn(&str) -> String,
    /// How long an error body asks to wait before retrying, where it says (Gemini's
    /// `RetryInfo.retryDelay`); a `Retry-After` header goes first.
    pub retry_delay: fn(&str) -> Option<Duration>,
}

impl ErrorShape {
    /// `{"error": {"message": ...}}`, with no wait asked in the body.
    pub(crate) const STANDARD: ErrorShape = ErrorShape {
        message: standard_message,
        retry_delay: |_| None,
    };
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
    let url = match reqwest::Url::parse(base_url) {
        Ok(url) => url,
        Err(error) => return problem(&format!("it cannot be read as a URL ({error})")),
    };
    match url.scheme() {
        "http" | "https" => {}
        scheme => {
            return problem(&format!(
                "its scheme is `{scheme}`; only http:// and https:// are spoken"
            ));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return problem("it has no host");
    }
    if url.query().is_some() || base_url.contains('#') {
        return problem(&format!(
            "it has a query or fragment, and `{path}` goes after it"
        ));
    }
    Ok(())
}

/// One request to send.
pub(crate) struct Post {
    /// Where.
    pub url: String,
    /// Headers besides `Content-Type: application/json`; their values may be secret.
    pub headers: Vec<(&'static str, String)>,
    /// The JSON body.
    pub body: String,
    /// The API key, replaced by `[redacted]` wherever a server or transport error quotes it.
    pub secret: Option<String>,
    /// When the answer is no longer wanted.
    pub deadline: Option<Instant>,
}

/// How one API's stream of server-sent events is read into a reply: each client's own.
pub(crate) trait EventReader: Send {
    /// Reads one event of the stream: its type (its `event:` field, `message` when it has
    /// none) and its data. [`Read::Done`] once the API's end event came, after which nothing
    /// more is read.
    ///
    /// # Errors
    /// An event that cannot be read ([`LmError::Malformed`]) or that is the server's error
    /// ([`LmError::Status`], its `attempts` filled in by the transport).
    fn event(&mut self, kind: &str, data: &str) -> Result<Read, LmError>;

    /// The reply the stream made, once it is over: `ended` after [`Read::Done`], else where the
    /// body ended first (for an API with an end event, a stream cut short: [`cut_short`]).
    ///
    /// # Errors
    /// When the events do not make a reply the API's non-streaming answer would have made.
    fn finish(self, ended: bool) -> Result<Reply, LmError>;
}

/// What an [`EventReader`] makes of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// More events are to come.
    More,
    /// The stream's end event: the reply is whole.
    Done,
}

/// The error of a stream that ended before `missing` (its end event, in words).
pub(crate) fn cut_short(missing: &str) -> LmError {
    LmError::Malformed {
        reason: format!("the stream was cut short: it ended before {missing}"),
    }
}

/// The time allowed per request, and how error answers are retried.
#[derive(Debug, Clone, Copy)]
struct Settings {
    timeout: Duration,
    retries: u32,
    backoff: Duration,
    max_retry_wait: Duration,
}

/// The HTTP client of every model client, and its settings.
#[derive(Clone)]
pub(crate) struct Transport {
    settings: Settings,
    /// Built at the first request (building one reads the platform's certificates).
    client: Arc<OnceLock<Result<reqwest::Client, String>>>,
}

impl Default for Transport {
    /// 60 s per request, 3 retries from 500 ms, a wait of up to 60 s honoured.
    fn default() -> Self {
        Transport {
            settings: Settings {
                timeout: Duration::from_secs(60),
                retries: 3,
                backoff: Duration::from_millis(500),
                max_retry_wait: Duration::from_secs(60),
            },
            client: Arc::default(),
        }
    }
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("timeout", &self.settings.timeout)
            .field("retries", &self.settings.retries)
            .field("backoff", &self.settings.backoff)
            .field("max_retry_wait", &self.settings.max_retry_wait)
            .finish()
    }
}

impl Transport {
    pub(crate) fn set_timeout(&mut self, timeout: Duration) {
        self.settings.timeout = timeout;
    }

    pub(crate) fn set_retries(&mut self, retries: u32) {
        self.settings.retries = retries;
    }

    pub(crate) fn set_backoff(&mut self, backoff: Duration) {
        self.settings.backoff = backoff;
    }

    pub(crate) fn set_max_retry_wait(&mut self, wait: Duration) {
        self.settings.max_retry_wait = wait;
    }

    /// Sends `post`, retrying 429 and 5xx answers, and reads the body of the first success
    /// with `read`. The deadline bounds every attempt's time, and a retry that could only
    /// begin after it is not made. A reply `read` finds malformed is quoted in its error: the
    /// key is taken out of it too.
    pub(crate) async fn exchange<T>(
        &self,
        post: Post,
        errors: ErrorShape,
        read: impl FnOnce(&str) -> Result<T, LmError>,
    ) -> Result<T, LmError> {
        let secret = post.secret.clone();
        let text = self.send(post, errors).await?;
        read(&text).map_err(|error| redacted(error, secret.as_deref()))
    }

    /// Sends `post` as [`exchange`](Self::exchange) does, asking for a stream, and reads the
    /// body of the first success as server-sent events, each handed to `reader` as it comes.
    ///
    /// Error answers that come before the stream (429 and 5xx) are retried as
    /// [`exchange`](Self::exchange) retries them; once the stream has started nothing is
    /// retried. The time per request bounds the wait for the stream to open and then for each
    /// event after the one before (a long stream is not cut while it goes on), the deadline
    /// the whole stream, and [`BODY_LIMIT`] its size. A body that is not an event stream, or
    /// that ends or breaks before `reader` saw its end event, is an error
    /// ([`LmError::Malformed`]). The key is taken out of every error, `reader`'s too.
    pub(crate) async fn exchange_streaming<R: EventReader>(
        &self,
        post: Post,
        errors: ErrorShape,
        mut reader: R,
    ) -> Result<Reply, LmError> {
        let secret = post.secret.clone();
        let client = self.client(&post.url)?;
        let (sender, mut events) = mpsc::channel(EVENTS_BUFFERED);
        let work = stream_events(client, self.settings, post, errors, sender);
        // Dropped with this future, or once the reply is read: the body is read no further.
        let _task = match tokio::runtime::Handle::try_current() {
            Ok(runtime) => AbortOnDrop(runtime.spawn(work)),
            Err(_) => match own_runtime() {
                Ok(runtime) => AbortOnDrop(runtime.spawn(work)),
                Err(reason) => {
                    return Err(LmError::Unreachable {
                        url: String::new(),
                        reason: format!("no runtime to send the request on: {reason}"),
                    });
                }
            },
        };
        let mut attempts = 1;
        let read = loop {
            let Some(streamed) = events.recv().await else {
                break reader.finish(false);
            };
            match streamed {
                Streamed::Opened { attempts: made } => attempts = made,
                Streamed::Event(event) => match reader.event(&event.event, &event.data) {
                    Ok(Read::More) => {}
                    Ok(Read::Done) => break reader.finish(true),
                    Err(error) => break Err(error),
                },
                Streamed::Failed(error) => return Err(redacted(error, secret.as_deref())),
            }
        };
        read.map_err(|error| match error {
            LmError::Status {
                status, message, ..
            } => LmError::Status {
                status,
                message: redact(&message, secret.as_deref()),
                attempts,
            },
            other => redacted(other, secret.as_deref()),
        })
    }

    /// The HTTP client, built at the first request.
    fn client(&self, url: &str) -> Result<reqwest::Client, LmError> {
        match self.client.get_or_init(http_client) {
            Ok(client) => Ok(client.clone()),
            Err(reason) => Err(LmError::Unreachable {
                url: url.to_owned(),
                reason: format!("no HTTP client could be made: {reason}"),
            }),
        }
    }

    /// Sends `post` on the tokio runtime this task runs in, or on the transport's own where
    /// there is none: the body of the first success.
    async fn send(&self, post: Post, errors: ErrorShape) -> Result<String, LmError> {
        let client = self.client(&post.url)?;
        let work = post_with_retries(client, self.settings, post, errors);
        if tokio::runtime::Handle::try_current().is_ok() {
            return work.await;
        }
        match own_runtime() {
            Ok(runtime) => {
                // Dropped with this future: the request is abandoned, not left to retry.
                let mut task = AbortOnDrop(runtime.spawn(work));
                (&mut task.0).await.unwrap_or_else(|error| {
                    Err(LmError::Malformed {
                        reason: format!("the request's task ended early: {error}"),
                    })
                })
            }
            Err(reason) => Err(LmError::Unreachable {
                url: String::new(),
                reason: format!("no runtime to send the request on: {reason}"),
            }),
        }
    }
}

/// The HTTP client: TLS by rustls with the *ring* provider and the platform's certificate
/// verifier, and no redirect followed, so that a key reaches only the URL it was given for.
fn http_client() -> Result<reqwest::Client, String> {
    use rustls_platform_verifier::BuilderVerifierExt as _;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| error.to_string())?
        .with_platform_verifier()
        .map_err(|error| error.to_string())?
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| error.to_string())
}

/// The runtime requests made outside any tokio runtime are sent on: one worker thread, made
/// at the first such request.
fn own_runtime() -> Result<&'static tokio::runtime::Runtime, String> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("toolsmith-agent-http")
                .enable_all()
                .build()
                .map_err(|error| error.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The retry loop of [`Transport::exchange`], and the body of the first success.
async fn post_with_retries(
    client: reqwest::Client,
    settings: Settings,
    post: Post,
    errors: ErrorShape,
) -> Result<String, LmError> {
    let opened = open(&client, settings, &post, errors).await?;
    match tokio::time::timeout_at(opened.until, read_body(opened.response, &post)).await {
        Ok(text) => text,
        Err(_) => Err(LmError::Timeout {
            url: post.url.clone(),
            after: opened.allowed,
        }),
    }
}

/// A request the server took (a 2xx answer), its body still to read.
struct Opened {
    response: reqwest::Response,
    /// How many requests were made.
    attempts: u32,
    /// When the attempt's time is up: its body must be read by then.
    until: tokio::time::Instant,
    /// The time the attempt was allowed.
    allowed: Duration,
}

/// Sends `post` until the server takes it, retrying 429 and 5xx answers (after what the
/// server asks, else a doubling backoff) while the retries and the deadline allow. Each
/// attempt has the time per request, cut to the deadline, from connecting to the last byte
/// of its body; the body of the answer taken is read in what is left of it (a stream's, event
/// by event: [`read_events`]).
async fn open(
    client: &reqwest::Client,
    settings: Settings,
    post: &Post,
    errors: ErrorShape,
) -> Result<Opened, LmError> {
    let left = || {
        post.deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()))
    };
    let redact = |text: &str| redact(text, post.secret.as_deref());
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let allowed = left().map_or(settings.timeout, |left| left.min(settings.timeout));
        let timed_out = || LmError::Timeout {
            url: post.url.clone(),
            after: allowed,
        };
        if allowed.is_zero() {
            return Err(timed_out());
        }
        let until = tokio::time::Instant::now() + allowed;
        let response = match tokio::time::timeout_at(until, request(client, post)).await {
            Ok(response) => response?,
            Err(_) => return Err(timed_out()),
        };
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(Opened {
                response,
                attempts,
                until,
                allowed,
            });
        }
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(parse_retry_after);
        let text = match tokio::time::timeout_at(until, read_body(response, post)).await {
            Ok(text) => text?,
            Err(_) => return Err(timed_out()),
        };
        let retryable = status == 429 || (500..600).contains(&status);
        let failed = || LmError::Status {
            status,
            message: redact(&(errors.message)(&text)),
            attempts,
        };
        if !retryable || attempts > settings.retries {
            return Err(failed());
        }
        let asked = retry_after.or_else(|| (errors.retry_delay)(&text));
        let wait = wait_before_retry(&settings, attempts, status, asked)?;
        if left().is_some_and(|left| left <= wait) {
            return Err(failed());
        }
        tokio::time::sleep(wait).await;
    }
}

/// One request, up to the answer's status and headers.
async fn request(client: &reqwest::Client, post: &Post) -> Result<reqwest::Response, LmError> {
    let mut request = client
        .post(&post.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(post.body.clone());
    for (name, value) in &post.headers {
        request = request.header(*name, value);
    }
    request
        .send()
        .await
        .map_err(|error| transport_error(post, error))
}

/// An answer's body, to its last byte (at most [`BODY_LIMIT`] of it).
async fn read_body(mut response: reqwest::Response, post: &Post) -> Result<String, LmError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| transport_error(post, error))?
    {
        if body.len() + chunk.len() > BODY_LIMIT {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

fn too_large() -> LmError {
    LmError::Malformed {
        reason: format!("the reply is larger than {BODY_LIMIT} bytes"),
    }
}

/// What the task reading a stream passes to the caller's future.
enum Streamed {
    /// The server took the request, after this many attempts; its events follow.
    Opened { attempts: u32 },
    /// One event of the stream.
    Event(Event),
    /// The request failed, or the stream broke; nothing follows.
    Failed(LmError),
}

/// A task's handle that ends the task when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The task of [`Transport::exchange_streaming`]: sends `post` until the server takes it
/// ([`open`]), then passes each event of its body on to `events`, and what went wrong, if
/// anything. It ends when the body does, or when the caller's future no longer listens.
async fn stream_events(
    client: reqwest::Client,
    settings: Settings,
    mut post: Post,
    errors: ErrorShape,
    events: mpsc::Sender<Streamed>,
) {
    post.headers
        .push(("Accept", "text/event-stream".to_owned()));
    if let Err(error) = pass_events(&client, settings, &post, errors, &events).await {
        // The caller's future may have stopped listening: then no one needs to know.
        let _ = events.send(Streamed::Failed(error)).await;
    }
}

async fn pass_events(
    client: &reqwest::Client,
    settings: Settings,
    post: &Post,
    errors: ErrorShape,
    events: &mpsc::Sender<Streamed>,
) -> Result<(), LmError> {
    let opened = open(client, settings, post, errors).await?;
    let attempts = opened.attempts;
    if events.send(Streamed::Opened { attempts }).await.is_err() {
        return Ok(());
    }
    read_events(opened.response, post, settings.timeout, events).await
}

/// Reads `response`'s body as server-sent events, passing each on as it is whole. Each event
/// must come within `gap` of the one before (of the stream's opening, for the first), and
/// before the request's deadline: a stream that goes on is never cut for being long, one that
/// falls silent is given up.
async fn read_events(
    response: reqwest::Response,
    post: &Post,
    gap: Duration,
    events: &mpsc::Sender<Streamed>,
) -> Result<(), LmError> {
    // The end of the wait for what comes next, and the time that wait allows.
    let wait = || {
        let allowed = post.deadline.map_or(gap, |deadline| {
            gap.min(deadline.saturating_duration_since(Instant::now()))
        });
        (tokio::time::Instant::now() + allowed, allowed)
    };
    let timed_out = |allowed: Duration| LmError::Timeout {
        url: post.url.clone(),
        after: allowed,
    };
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let is_event_stream = content_type
        .split(';')
        .next()
        .is_some_and(|kind| kind.trim().eq_ignore_ascii_case("text/event-stream"));
    if !content_type.is_empty() && !is_event_stream {
        let (until, allowed) = wait();
        let text = tokio::time::timeout_at(until, read_body(response, post))
            .await
            .map_err(|_| timed_out(allowed))??;
        return Err(LmError::Malformed {
            reason: format!(
                "it is `{content_type}`, not an event stream: {}",
                abridge(text.trim()).escape_debug()
            ),
        });
    }
    let mut stream = Bounded {
        body: Box::pin(response.bytes_stream()),
        read: 0,
    }
    .eventsource();
    let mut count = 0usize;
    loop {
        let (until, allowed) = wait();
        let next = std::future::poll_fn(|cx| Pin::new(&mut stream).poll_next(cx));
        let Some(next) = tokio::time::timeout_at(until, next)
            .await
            .map_err(|_| timed_out(allowed))?
        else {
            return Ok(());
        };
        let event = next.map_err(|error| match error {
            EventStreamError::Transport(BodyError::TooLarge) => too_large(),
            EventStreamError::Transport(BodyError::Broken(error)) => LmError::Malformed {
                reason: format!(
                    "the stream was cut short after {count} events: {}",
                    transport_reason(post, error)
                ),
            },
            EventStreamError::Utf8(error) => LmError::Malformed {
                reason: format!("the stream is not UTF-8 text: {error}"),
            },
            EventStreamError::Parser(error) => LmError::Malformed {
                reason: format!("the stream is not one of server-sent events: {error}"),
            },
        })?;
        count += 1;
        if events.send(Streamed::Event(event)).await.is_err() {
            return Ok(());
        }
    }
}

/// A body's bytes as they come, at most [`BODY_LIMIT`] of them.
struct Bounded<S> {
    body: Pin<Box<S>>,
    read: usize,
}

/// Why a streamed body could not be read on.
#[derive(Debug)]
enum BodyError {
    /// The connection broke, or the body's framing did.
    Broken(reqwest::Error),
    /// It is longer than [`BODY_LIMIT`].
    TooLarge,
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::Broken(error) => write!(f, "{error}"),
            BodyError::TooLarge => write!(f, "the body is larger than {BODY_LIMIT} bytes"),
        }
    }
}

impl<S, B> Stream for Bounded<S>
where
    S: Stream<Item = Result<B, reqwest::Error>>,
    B: AsRef<[u8]>,
{
    type Item = Result<B, BodyError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.body.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                self.read = self.read.saturating_add(chunk.as_ref().len());
                if self.read > BODY_LIMIT {
                    Poll::Ready(Some(Err(BodyError::TooLarge)))
                } else {
                    Poll::Ready(Some(Ok(chunk)))
                }
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(BodyError::Broken(error)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// How long to wait after the `attempts`-th request got `status`: what the server asked,
/// else the backoff doubled for each attempt so far.
fn wait_before_retry(
    settings: &Settings,
    attempts: u32,
    status: u16,
    asked: Option<Duration>,
) -> Result<Duration, LmError> {
    match asked {
        Some(asked) if asked > settings.max_retry_wait => Err(LmError::RetryTooLate {
            status,
            retry_after: asked,
        }),
        Some(asked) => Ok(asked),
        None => Ok(settings
            .backoff
            .saturating_mul(1 << attempts.saturating_sub(1).min(16))),
    }
}

/// A failed request in words: its causes, one after another (reqwest's own message names only
/// the step that failed), the key taken out.
fn transport_error(post: &Post, error: reqwest::Error) -> LmError {
    if error.is_timeout() {
        return LmError::Timeout {
            url: post.url.clone(),
            after: Duration::ZERO,
        };
    }
    LmError::Unreachable {
        url: post.url.clone(),
        reason: transport_reason(post, error),
    }
}

/// What went wrong with a request, in words: its causes, one after another, the key taken out.
fn transport_reason(post: &Post, error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut reason = error.to_string();
    let mut cause = std::error::Error::source(&error);
    while let Some(next) = cause {
        let words = next.to_string();
        if !reason.contains(&words) {
            reason.push_str(": ");
            reason.push_str(&words);
        }
        cause = next.source();
    }
    redact(&reason, post.secret.as_deref())
}

/// `error` with `secret` taken out of the words it quotes from the server.
fn redacted(error: LmError, secret: Option<&str>) -> LmError {
    match error {
        LmError::Malformed { reason } => LmError::Malformed {
            reason: redact(&reason, secret),
        },
        LmError::CutOff { reason, text } => LmError::CutOff {
            reason: redact(&reason, secret),
            text: text.map(|text| redact(&text, secret)),
        },
        LmError::Status {
            status,
            message,
            attempts,
        } => LmError::Status {
            status,
            message: redact(&message, secret),
            attempts,
        },
        LmError::Unreachable { url, reason } => LmError::Unreachable {
            url,
            reason: redact(&reason, secret),
        },
        other => other,
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

/// An API key. Its `Debug` output is `[redacted]`, so that no client's `Debug` output can
/// carry it, whatever the client's own `Debug` does.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ApiKey(String);

impl ApiKey {
    /// `key`, unless it is absent or empty (an unset variable, a blank one).
    pub(crate) fn new(key: Option<String>) -> Option<ApiKey> {
        key.filter(|key| !key.is_empty()).map(ApiKey)
    }

    /// The key itself, for the header that carries it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// The key-setting builder methods every HTTP client has, over its `api_key` field; `$how`
/// says how the key is sent.
macro_rules! api_key_settings {
    ($how:literal) => {
        /// Sends the key held by the environment variable `name`; none when it is unset or
        /// empty.
        pub fn api_key_from_env(self, name: &str) -> Self {
            let key = std::env::var(name).ok();
            self.api_key(key)
        }

        #[doc = concat!("Sends `key` (none when `None` or empty) ", $how, ".")]
        pub fn api_key(mut self, key: Option<String>) -> Self {
            self.api_key = crate::http::ApiKey::new(key);
            self
        }
    };
}

pub(crate) use api_key_settings;

/// The builder methods every HTTP client has, over its `transport` field.
macro_rules! transport_settings {
    () => {
        /// The time allowed for one request, from connecting to the last byte of the reply
        /// (less when the request's [`deadline`](crate::Request::deadline) comes sooner); 60 s
        /// unless set. A streamed reply
        /// ([`complete_streaming`](crate::LanguageModel::complete_streaming)) is given it to
        /// start and then between one event and the next: a long answer is not cut while it
        /// comes, one that falls silent is given up (the deadline still bounds it whole).
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
        let settings = transport.settings;
        let waits: Vec<_> = (1..=3)
            .map(|attempt| wait_before_retry(&settings, attempt, 503, None))
            .collect();
        let ms = Duration::from_millis;
        assert_eq!(waits, [Ok(ms(100)), Ok(ms(200)), Ok(ms(400))]);
        let asked = Some(Duration::from_secs(2));
        assert_eq!(
            wait_before_retry(&settings, 1, 429, asked),
            Ok(Duration::from_secs(2))
        );
        let too_late = Some(Duration::from_secs(61));
        assert!(wait_before_retry(&settings, 1, 429, too_late).is_err());
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
