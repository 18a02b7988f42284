//! The client side: an MCP server's tools as toolsmith [`Tool`]s.
//!
//! [`McpClient::connect`] starts a server from its command and argv (never through a shell),
//! with the environment given to it and a few variables a program needs inherited, its stderr
//! kept (the last lines) for error messages, and initializes it. [`McpClient::tools`] lists
//! every page of its tools; each is a [`RemoteTool`]: its `inputSchema` imported leniently
//! (the warnings kept, per tool) into an [`ImportedSchema`], so a call's arguments are coerced
//! and checked against the server's own schema here, and a call the server would refuse is
//! answered locally in the model-facing shape. A call that passes goes to the server: its
//! content blocks and `structuredContent` come back as the tool's output, `isError` as a tool
//! failure in the server's words; the call's cancellation (or deadline) is sent on as
//! `notifications/cancelled`, and the server's `notifications/progress` reach the call's
//! context. What the server asks while a call runs (`elicitation/create` for a person,
//! `sampling/createMessage` for a model) goes to the call context's [`Asker`](toolsmith::Asker):
//! the client declares both capabilities and passes each question to the one call in flight
//! (with several, MCP does not say which asks, and the server is told so).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, CancelledNotification, CancelledNotificationParam, ClientCapabilities,
    ClientRequest, ContentBlock, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, InitializeRequestParams,
    JsonRpcMessage, ProgressToken, ProtocolVersion, RequestId, ResourceContents,
    ServerNotification, ServerResult,
};
// Sampling is deprecated by the newest revision (SEP-2577), which has no handshake; the servers
// this client talks to (revisions with one) still ask for it.
#[allow(deprecated)]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};
use rmcp::service::{
    PeerRequestOptions, RequestContext, RunningService, RxJsonRpcMessage, TxJsonRpcMessage,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, Transport};
use rmcp::{ClientHandler, Peer, RoleClient};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio::runtime::Handle;
use tokio::sync::watch;
use toolsmith::{
    Arguments, CancellationToken, Content, Context, Elicited, ImportOptions, ImportWarning,
    ImportedSchema, Progress, Resource, ResourceLink, Role, Sampling, SamplingMessage, Tool,
    ToolAnnotations, ToolError, ToolFuture, ToolOutput, TypeGraph,
};

use crate::servers::{HttpServer, RemoteServer, StdioServer};
use crate::stdio::{CallAnswer, ClientCalls, ClientLines};

/// How many of the server's last stderr lines are kept for error messages.
const STDERR_LINES: usize = 20;

/// The longest stderr line kept, in bytes; the rest of a longer one is cut.
const STDERR_LINE_BYTES: usize = 500;

/// How long a server that failed its handshake is given to finish what it writes on stderr.
const LAST_WORDS: std::time::Duration = std::time::Duration::from_millis(500);

/// The longest line read from a stdio server (rmcp's bound for its own stream transport): a
/// message over it is dropped, and the call it answers fails at once, saying so.
const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The variables a server inherits from this process besides those it is given: what a program
/// needs to run at all (as the official SDKs' clients pass on), and nothing that holds a secret.
const INHERITED: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG"];

/// Why a server could not be reached or listed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The program could not be started.
    Spawn {
        /// The server's name.
        server: String,
        /// The program.
        program: String,
        /// Why.
        error: std::io::Error,
    },
    /// The server's description cannot be used as it is (a header that is no header).
    Invalid {
        /// The server's name.
        server: String,
        /// What is wrong, in words.
        reason: String,
    },
    /// The server did not complete the handshake, or a request to it failed.
    Protocol {
        /// The server's name.
        server: String,
        /// What failed, in words.
        reason: String,
        /// The server's last stderr lines, where it wrote any.
        stderr: String,
    },
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Spawn {
                server,
                program,
                error,
            } => write!(
                f,
                "cannot start the MCP server `{server}` (`{program}`): {error}"
            ),
            ClientError::Invalid { server, reason } => {
                write!(f, "the MCP server `{server}` {reason}")
            }
            ClientError::Protocol {
                server,
                reason,
                stderr,
            } => {
                write!(f, "the MCP server `{server}` {reason}")?;
                if !stderr.is_empty() {
                    write!(f, "; it last wrote on stderr:\n{stderr}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Spawn { error, .. } => Some(error),
            ClientError::Invalid { .. } | ClientError::Protocol { .. } => None,
        }
    }
}

/// How a client connects to its server, and reconnects after losing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    handshake_timeout: Duration,
    first_backoff: Duration,
    max_backoff: Duration,
}

impl Default for ClientOptions {
    /// A minute for the handshake (a server fetched by `npx` on its first start takes a
    /// while), and restarts a quarter of a second apart at first, at most half a minute.
    fn default() -> Self {
        ClientOptions {
            handshake_timeout: Duration::from_secs(60),
            first_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(30),
        }
    }
}

impl ClientOptions {
    /// How long starting (or reaching) the server, the MCP handshake and each listing of its
    /// tools may take.
    #[must_use]
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// How long after a failed restart the next may be tried: `first` after the first
    /// failure, doubling with each further one up to `max`. (A server lost after working is
    /// restarted by the next call at once.)
    #[must_use]
    pub fn restart_backoff(mut self, first: Duration, max: Duration) -> Self {
        self.first_backoff = first;
        self.max_backoff = max.max(first);
        self
    }

    /// The wait after `failures` failed restarts in a row.
    fn backoff(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(16);
        self.first_backoff
            .saturating_mul(1 << doublings)
            .min(self.max_backoff)
    }
}

/// A connection to one MCP server, and its tools.
///
/// Made in a Tokio runtime ([`McpClient::connect`] spawns the connection's tasks on it); the
/// calls of its tools may then be polled by any executor while that runtime runs. A server
/// lost (a stdio server that exited, an HTTP server whose session ended) is connected again
/// by the next call, with backoff between failed attempts. Dropping the client and every tool
/// listed from it closes the connection; a stdio server is given a moment to exit after its
/// stdin closes, then killed.
#[derive(Clone)]
pub struct McpClient {
    link: Arc<Link>,
}

/// What the client and its tools share: the server, and the session with it now.
struct Link {
    server: RemoteServer,
    options: ClientOptions,
    /// The runtime the connection's tasks run on: a new session is made there too, whatever
    /// executor polls the call that finds the old one gone.
    runtime: Handle,
    current: Mutex<Current>,
    /// Held while a session is being made, so that one lost server is started once.
    restarting: tokio::sync::Mutex<()>,
    /// Counts the times the server said its tools changed (and the reconnections, after which
    /// they may have).
    changes: Arc<watch::Sender<u64>>,
}

/// The session in use, and how the last attempts to replace it went.
struct Current {
    session: Arc<Session>,
    /// Failed attempts in a row to connect again.
    failures: u32,
    /// No attempt before this.
    not_before: Option<Instant>,
    /// Why the last attempt failed.
    last_failure: String,
}

/// One connection to the server, from its handshake to its end.
struct Session {
    peer: Peer<RoleClient>,
    /// Where the session allows it (a stdio server on a protocol before 2026-07-28), the
    /// calls sent beside rmcp's loop.
    calls: Option<Arc<ClientCalls<tokio::process::ChildStdin>>>,
    /// Kept to keep the connection: dropping it ends the service and closes the transport.
    service: RunningService<RoleClient, Handler>,
    progress: Progressing,
    stderr: Stderr,
    /// The task reading a stdio server's stderr, until someone waits for its end.
    stderr_read: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// A stdio server's process; after `service`, so that its stdin is closed first.
    _child: Option<Child>,
}

impl Session {
    /// Whether calls can be made on it: neither rmcp nor the calls sent beside it (which may
    /// see the server's output end first) found the connection closed.
    fn alive(&self) -> bool {
        !self.service.is_closed()
            && !self.peer.is_transport_closed()
            && self.calls.as_ref().is_none_or(|calls| calls.is_open())
    }

    /// Waits (briefly) for a server that went away to finish what it wrote on stderr, so that
    /// an error can give its last words.
    async fn last_words(&self, runtime: &Handle) {
        let reading = self
            .stderr_read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(reading) = reading {
            // Timed on the connection's runtime: the caller's executor may have no timer.
            let _ = runtime
                .spawn(async move { tokio::time::timeout(LAST_WORDS, reading).await })
                .await;
        }
    }
}

/// A stdio server's process: given a moment to exit once its stdin is closed, then killed.
struct Child {
    process: Option<tokio::process::Child>,
    /// The runtime the connection lives on, to wait there.
    runtime: Handle,
}

/// How long a stdio server is given to exit after its stdin closes.
const EXIT_GRACE: Duration = Duration::from_secs(2);

impl Drop for Child {
    fn drop(&mut self) {
        let Some(mut child) = self.process.take() else {
            return;
        };
        // When the runtime is shutting down, the task is dropped, and the child killed at once
        // with it (`kill_on_drop`).
        self.runtime.spawn(async move {
            if tokio::time::timeout(EXIT_GRACE, child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
        });
    }
}

/// The calls in flight, by the progress token their request carries.
type Progressing = Arc<Mutex<Calls>>;

/// How many progress reports are kept for tokens no call has claimed yet.
const EARLY_REPORTS: usize = 64;

/// The contexts of the calls in flight by progress token, and the reports that came for a
/// token before its call was entered here (rmcp gives the token once the request is on its
/// way, and a quick server may report before that).
#[derive(Default)]
struct Calls {
    running: HashMap<ProgressToken, InFlight>,
    /// Oldest first, at most [`EARLY_REPORTS`] (a server reporting for tokens that never come
    /// pushes out its own oldest reports, nothing else).
    early: VecDeque<(ProgressToken, Progress)>,
}

impl Calls {
    /// Enters the call `token` is for; the reports that came for it already reach it now.
    fn enter(&mut self, token: ProgressToken, context: Context) {
        let (mine, others) = std::mem::take(&mut self.early)
            .into_iter()
            .partition::<VecDeque<_>, _>(|(early, _)| *early == token);
        self.early = others;
        for (_, progress) in mine {
            context.progress(progress);
        }
        let ended = CancellationToken::new();
        self.running.insert(
            token,
            InFlight {
                context,
                ended,
                asked: Arc::default(),
            },
        );
    }

    /// The call `token` is for has ended (answered, cancelled, or given up by its caller):
    /// what was waiting on it stops.
    fn leave(&mut self, token: &ProgressToken) {
        if let Some(call) = self.running.remove(token) {
            call.ended.cancel();
        }
    }

    /// The one call in flight, or how many there are instead (`None`: none).
    fn asking(&self) -> Result<InFlight, Option<usize>> {
        let mut running = self.running.values();
        match (running.next(), running.next()) {
            (Some(only), None) => Ok(only.clone()),
            (None, _) => Err(None),
            (Some(_), Some(_)) => Err(Some(self.running.len())),
        }
    }

    fn report(&mut self, token: &ProgressToken, progress: Progress) {
        match self.running.get(token) {
            Some(call) => call.context.progress(progress),
            None => {
                if self.early.len() == EARLY_REPORTS {
                    self.early.pop_front();
                }
                self.early.push_back((token.clone(), progress));
            }
        }
    }
}

/// A call in flight: its context, what says it has ended, and how many questions the server
/// has asked about it.
#[derive(Clone)]
struct InFlight {
    context: Context,
    /// Cancelled when the call leaves ([`Calls::leave`]).
    ended: CancellationToken,
    asked: Arc<AtomicUsize>,
}

/// The most questions a server's tool may ask about one call; past them each is refused.
/// Each may cost someone: a person's attention, a paid model's answer (in an agent), and a
/// server asking in a loop would otherwise cost without end.
const MAX_QUESTIONS: usize = 16;

/// A call's request sent to the server: entered among the calls in flight while it lives, so
/// that the server's progress and questions reach its context; dropped unanswered (its caller
/// gave up on it, dropping its future), it is cancelled at the server too.
struct Sent {
    request: Option<Request>,
    token: ProgressToken,
    calls: Progressing,
    /// The runtime the connection lives on, where a dropped call's cancellation is sent.
    runtime: Handle,
}

/// A request awaiting its answer: sent through rmcp's peer, or beside it ([`ClientCalls`]).
struct Request {
    id: RequestId,
    answer: tokio::sync::oneshot::Receiver<CallAnswer>,
    /// Where its cancellation is sent.
    peer: Peer<RoleClient>,
    /// What sent it, when not rmcp's peer: what stops waiting for it once it is cancelled.
    calls: Option<Arc<ClientCalls<tokio::process::ChildStdin>>>,
}

impl Request {
    /// Tells the server the call is cancelled, for `reason`, as rmcp's request handle would
    /// (the request was made without options: there is nothing else of rmcp's to undo).
    async fn cancel(self, reason: String) {
        if let Some(calls) = &self.calls {
            calls.forget(&self.id);
        }
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(self.id),
            Some(reason),
        ));
        let _ = self.peer.send_notification(notification.into()).await;
    }
}

impl Sent {
    fn new(
        request: Request,
        token: ProgressToken,
        context: Context,
        calls: &Progressing,
        runtime: &Handle,
    ) -> Sent {
        calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .enter(token.clone(), context);
        Sent {
            request: Some(request),
            token,
            calls: Arc::clone(calls),
            runtime: runtime.clone(),
        }
    }

    /// The server's answer.
    async fn answer(&mut self) -> Result<CallAnswer, tokio::sync::oneshot::error::RecvError> {
        match self.request.as_mut() {
            Some(request) => (&mut request.answer).await,
            None => std::future::pending().await,
        }
    }

    /// The call leaves the calls in flight, its request given back to be cancelled or dropped
    /// as the caller decides.
    fn settle(mut self) -> Option<Request> {
        self.request.take()
    }
}

impl Drop for Sent {
    fn drop(&mut self) {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .leave(&self.token);
        if let Some(request) = self.request.take() {
            // The caller stopped waiting without a word: the server is told, as it is of a
            // cancellation, so that the tool stops there too.
            self.runtime
                .spawn(request.cancel("the caller gave up on the call".to_owned()));
        }
    }
}

/// The last lines a server wrote on stderr.
type Stderr = Arc<Mutex<VecDeque<String>>>;

/// The client's side of the connection: its handshake, and the questions a server asks while
/// one of its tools runs (`elicitation/create` for a person, `sampling/createMessage` for a
/// model), passed on to whoever the call's context asks ([`Context::elicit_with_schema`],
/// [`Context::sample`]): through a gateway the client that made the call, in an agent its
/// elicitation handler and its model. Log messages a server sends are not followed yet;
/// progress and list changes are taken by [`InOrder`] as they are read.
struct Handler {
    calls: Progressing,
}

#[allow(deprecated)] // sampling: see the `use` above
impl ClientHandler for Handler {
    fn get_info(&self) -> InitializeRequestParams {
        // Both are declared: a server may then ask, and whether someone answers is the
        // calling context's to say (with nobody to ask, the server is told so).
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        let capabilities = ClientCapabilities::builder()
            .enable_sampling()
            .enable_elicitation_with(elicitation)
            .build();
        // The newest revision that has an `initialize` handshake (rmcp's default, `LATEST`,
        // is one that has none, which servers of the revisions before refuse to offer).
        InitializeRequestParams::new(
            capabilities,
            Implementation::new("toolsmith", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Err(refused(
                "a question that sends the person to a URL is not passed on (only a form is)",
            ));
        };
        let schema = serde_json::to_value(requested_schema)
            .map_err(|error| refused(&format!("the form does not read ({error})")))?;
        let call = self.asking_call().await?;
        let answer = tokio::select! {
            answer = call.context.elicit_with_schema(message, schema) => answer,
            () = context.ct.cancelled() => return Err(refused("the server withdrew the question")),
            () = call.ended.cancelled() => return Err(refused(ENDED)),
        };
        let (action, content) = match answer.map_err(|error| unanswered(&error))? {
            Elicited::Accept(content) => (ElicitationAction::Accept, Some(Value::Object(content))),
            Elicited::Decline => (ElicitationAction::Decline, None),
            Elicited::Cancel => (ElicitationAction::Cancel, None),
        };
        let mut result = ElicitResult::new(action);
        result.content = content;
        Ok(result)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, rmcp::ErrorData> {
        let params = serde_json::to_value(params)
            .map_err(|error| refused(&format!("the request does not read ({error})")))?;
        let sampling = sampling_of(&params).map_err(|why| refused(&why))?;
        let call = self.asking_call().await?;
        let sampled = tokio::select! {
            sampled = call.context.sample(sampling) => sampled,
            () = context.ct.cancelled() => return Err(refused("the server withdrew the request")),
            () = call.ended.cancelled() => return Err(refused(ENDED)),
        };
        let sampled = sampled.map_err(|error| unanswered(&error))?;
        let mut result = serde_json::json!({
            "role": "assistant",
            "content": {"type": "text", "text": sampled.text},
            "model": sampled.model.unwrap_or_else(|| "unknown".to_owned()),
        });
        if let Some(reason) = sampled.stop_reason {
            result["stopReason"] = Value::String(reason);
        }
        serde_json::from_value(result).map_err(|error| {
            rmcp::ErrorData::internal_error(
                format!("the answer could not be written ({error})"),
                None,
            )
        })
    }
}

/// Why a question is not answered when its call ended first (its caller gave up on it).
const ENDED: &str = "the call it is about ended before it was answered";

/// How long a server's question waits for the call it belongs to to be entered (a quick
/// server may ask before the request that started the call has been recorded here).
const ENTERING: Duration = Duration::from_secs(1);

impl Handler {
    /// The context of the call a server's question belongs to: the one call in flight on
    /// this connection. MCP does not say which request a question is about, so with several
    /// in flight none is guessed at.
    async fn asking_call(&self) -> Result<InFlight, rmcp::ErrorData> {
        let given_up = Instant::now() + ENTERING;
        loop {
            let found = self
                .calls
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .asking();
            match found {
                Ok(call) => {
                    let asked = call.asked.fetch_add(1, Ordering::Relaxed);
                    if asked >= MAX_QUESTIONS {
                        return Err(refused(&format!(
                            "the call has asked {MAX_QUESTIONS} questions already, the most \
                             passed on for one call"
                        )));
                    }
                    return Ok(call);
                }
                Err(None) if Instant::now() < given_up => {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                Err(None) => {
                    return Err(refused(
                        "no call is in flight that the question could be about",
                    ));
                }
                Err(Some(calls)) => {
                    return Err(refused(&format!(
                        "{calls} calls are in flight, and MCP does not say which of them asks"
                    )));
                }
            }
        }
    }
}

/// The error a server's question gets when it is not passed on, saying why.
fn refused(why: &str) -> rmcp::ErrorData {
    rmcp::ErrorData::invalid_request(format!("not passed on: {why}"), None)
}

/// The error a server's question gets when the caller could not answer it: nobody to ask,
/// asking failed, or the call was cancelled meanwhile.
fn unanswered(error: &ToolError) -> rmcp::ErrorData {
    let why = match error {
        ToolError::NobodyToAsk { reason, .. } => format!("nobody can answer here: {reason}"),
        ToolError::AskFailed { message, .. } => format!("asking failed: {message}"),
        ToolError::Cancelled { .. } => "the call was cancelled".to_owned(),
        other => other.to_string(),
    };
    rmcp::ErrorData::invalid_request(why, None)
}

/// A `sampling/createMessage` request's text conversation as a [`Sampling`]; other content
/// (images, audio, tool use) is refused rather than dropped.
fn sampling_of(params: &Value) -> Result<Sampling, String> {
    let Some(messages) = params["messages"].as_array() else {
        return Err("the request has no `messages`".to_owned());
    };
    let mut read = Vec::with_capacity(messages.len());
    for message in messages {
        let role = match message["role"].as_str() {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            other => return Err(format!("a message has the role {other:?}")),
        };
        let blocks = match &message["content"] {
            Value::Array(blocks) => blocks.iter().collect(),
            block => vec![block],
        };
        let mut text = String::new();
        for block in blocks {
            match (block["type"].as_str(), block["text"].as_str()) {
                (Some("text"), Some(part)) => text.push_str(part),
                (kind, _) => {
                    return Err(format!(
                        "only text is passed on, and a message holds {}",
                        kind.map_or("a block of no type".to_owned(), |k| format!("`{k}`"))
                    ));
                }
            }
        }
        read.push(SamplingMessage::new(role, text));
    }
    let max_tokens = params["maxTokens"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(Sampling::DEFAULT_MAX_TOKENS);
    let mut sampling = Sampling::conversation(read).with_max_tokens(max_tokens);
    sampling.system = params["systemPrompt"].as_str().map(str::to_owned);
    // rmcp holds the temperature as an `f32`: read back as the number the server wrote (0.7,
    // not 0.699999988).
    sampling.temperature = params["temperature"].as_f64().map(|wide| {
        #[allow(clippy::cast_possible_truncation)]
        let narrow = wide as f32;
        narrow.to_string().parse().unwrap_or(wide)
    });
    Ok(sampling)
}

/// A transport that hands each `notifications/progress` to the call it is about as the message
/// is read, in the order the server sent it, and counts `notifications/tools/list_changed`.
/// (rmcp handles notifications on tasks of their own, so one sent just before its request's
/// answer could reach the handler after the call had ended; read here, it is in before the
/// answer is.)
struct InOrder<T> {
    inner: T,
    progress: Progressing,
    changes: Arc<watch::Sender<u64>>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &message {
            match &notification.notification {
                ServerNotification::ProgressNotification(progress) => {
                    let params = &progress.params;
                    self.progress
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .report(
                            &params.progress_token,
                            Progress {
                                done: params.progress,
                                total: params.total,
                                message: params.message.clone(),
                            },
                        );
                }
                ServerNotification::ToolListChangedNotification(_) => {
                    self.changes.send_modify(|n| *n = n.wrapping_add(1));
                }
                _ => {}
            }
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Waits for a server's tools to change: the server said so
/// (`notifications/tools/list_changed`), or it was connected again and may list others now.
/// From [`McpClient::list_changes`].
#[derive(Debug, Clone)]
pub struct ListChanges {
    seen: watch::Receiver<u64>,
}

impl ListChanges {
    /// Resolves at the next change after the last one this has seen (or at once, when one
    /// came since it was made or last resolved). List the tools again then.
    pub async fn changed(&mut self) {
        if self.seen.changed().await.is_err() {
            // The client is gone: no change will ever come.
            std::future::pending::<()>().await;
        }
    }
}

impl McpClient {
    /// Connects to `server` (starting it, for a stdio server) and completes the MCP handshake,
    /// with the [default options](ClientOptions::default).
    ///
    /// # Errors
    /// When the program cannot be started or the server reached, or the server does not
    /// complete the handshake in time (it exits, writes something else, or fails), with its
    /// last words on stderr.
    ///
    /// # Panics
    /// When called outside a Tokio runtime.
    pub async fn connect(server: impl Into<RemoteServer>) -> Result<McpClient, ClientError> {
        McpClient::connect_with(server, ClientOptions::default()).await
    }

    /// [`McpClient::connect`] with `options`.
    ///
    /// # Errors
    /// As [`McpClient::connect`].
    ///
    /// # Panics
    /// When called outside a Tokio runtime.
    pub async fn connect_with(
        server: impl Into<RemoteServer>,
        options: ClientOptions,
    ) -> Result<McpClient, ClientError> {
        let server = server.into();
        let changes = Arc::new(watch::Sender::new(0));
        let runtime = Handle::current();
        let session = open(&server, &options, &changes, &runtime).await?;
        Ok(McpClient {
            link: Arc::new(Link {
                server,
                options,
                runtime,
                current: Mutex::new(Current {
                    session: Arc::new(session),
                    failures: 0,
                    not_before: None,
                    last_failure: String::new(),
                }),
                restarting: tokio::sync::Mutex::new(()),
                changes,
            }),
        })
    }

    /// The server's name, as errors give it.
    pub fn name(&self) -> &str {
        self.link.server.name()
    }

    /// The server this client connects to.
    pub fn server(&self) -> &RemoteServer {
        &self.link.server
    }

    /// Every tool the server lists (all pages), each ready to call through this connection.
    ///
    /// # Errors
    /// When the server cannot be reached or does not answer `tools/list` in time, or a tool's
    /// `inputSchema` is no schema toolsmith can read (the error names the tool).
    pub async fn tools(&self) -> Result<Vec<RemoteTool>, ClientError> {
        let link = &self.link;
        let session = link
            .session()
            .await
            .map_err(|reason| link.failure(reason, None))?;
        let listed = tokio::time::timeout(
            link.options.handshake_timeout,
            session.peer.list_all_tools(),
        )
        .await
        .map_err(|_| {
            link.failure(
                format!(
                    "did not list its tools within {}",
                    seconds(link.options.handshake_timeout)
                ),
                Some(&session),
            )
        })?
        .map_err(|error| {
            link.failure(format!("did not list its tools: {error}"), Some(&session))
        })?;
        listed
            .into_iter()
            .map(|tool| RemoteTool::new(Arc::clone(link), tool))
            .collect()
    }

    /// A waiter for the server's tools to change, from now on.
    pub fn list_changes(&self) -> ListChanges {
        ListChanges {
            seen: self.link.changes.subscribe(),
        }
    }
}

impl Link {
    fn failure(&self, reason: String, session: Option<&Session>) -> ClientError {
        ClientError::Protocol {
            server: self.server.name().to_owned(),
            reason,
            stderr: session.map(|s| tail(&s.stderr)).unwrap_or_default(),
        }
    }

    /// The session to use now: the current one while it lives, else a new one, made by the
    /// first call to find the old one gone (the others wait for it), unless the last attempt
    /// failed too recently.
    async fn session(&self) -> Result<Arc<Session>, String> {
        if let Some(current) = self.alive() {
            return Ok(current);
        }
        let _only_one = self.restarting.lock().await;
        let now = Instant::now();
        let not_before = {
            let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            if current.session.alive() {
                return Ok(Arc::clone(&current.session));
            }
            current
                .not_before
                .filter(|at| *at > now)
                .map(|at| (at - now, current.last_failure.clone()))
        };
        if let Some((wait, why)) = not_before {
            return Err(format!(
                "is not connected (the last attempt to connect again failed: {why}); \
                 the next attempt may be made in {}",
                seconds(wait)
            ));
        }
        let made = self.runtime.spawn({
            let (server, options, changes) = (
                self.server.clone(),
                self.options.clone(),
                Arc::clone(&self.changes),
            );
            let runtime = self.runtime.clone();
            async move { open(&server, &options, &changes, &runtime).await }
        });
        let made = made
            .await
            .map_err(|error| format!("was lost, and connecting again failed: {error}"))?;
        match made {
            Ok(session) => {
                let session = Arc::new(session);
                let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
                current.session = Arc::clone(&session);
                current.failures = 0;
                current.not_before = None;
                drop(current);
                // A server started again may list other tools.
                self.changes.send_modify(|n| *n = n.wrapping_add(1));
                Ok(session)
            }
            Err(error) => {
                let reason = error.to_string();
                let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
                current.failures = current.failures.saturating_add(1);
                current.not_before = Some(Instant::now() + self.options.backoff(current.failures));
                current.last_failure.clone_from(&reason);
                Err(format!("was lost, and connecting again failed: {reason}"))
            }
        }
    }

    /// The session, where it is alive: what nearly every call finds, without waiting.
    fn alive(&self) -> Option<Arc<Session>> {
        Some(self.current()).filter(|session| session.alive())
    }

    fn current(&self) -> Arc<Session> {
        Arc::clone(
            &self
                .current
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .session,
        )
    }
}

/// A duration in words, to a tenth of a second.
fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

/// Connects to `server` and completes the handshake, within the options' time.
async fn open(
    server: &RemoteServer,
    options: &ClientOptions,
    changes: &Arc<watch::Sender<u64>>,
    runtime: &Handle,
) -> Result<Session, ClientError> {
    let progress: Progressing = Arc::default();
    match server {
        RemoteServer::Stdio(stdio) => open_stdio(stdio, options, progress, changes, runtime).await,
        RemoteServer::Http(http) => open_http(http, options, progress, changes).await,
    }
}

async fn open_stdio(
    server: &StdioServer,
    options: &ClientOptions,
    progress: Progressing,
    changes: &Arc<watch::Sender<u64>>,
    runtime: &Handle,
) -> Result<Session, ClientError> {
    let mut command = tokio::process::Command::new(&server.program);
    command
        .args(&server.args)
        .env_clear()
        .envs(
            INHERITED
                .iter()
                .filter_map(|key| Some((*key, std::env::var_os(key)?))),
        )
        .envs(server.env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = &server.cwd {
        command.current_dir(dir);
    }
    let spawned = |error| ClientError::Spawn {
        server: server.name.clone(),
        program: server.program.clone(),
        error,
    };
    let mut child = command.spawn().map_err(spawned)?;
    let (Some(stdin), Some(stdout), Some(stderr_pipe)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(spawned(std::io::Error::other("its pipes were not opened")));
    };
    let stderr: Stderr = Arc::default();
    let stderr_read = tokio::spawn(keep_stderr(stderr_pipe, Arc::clone(&stderr)));
    let (lines, calls) = ClientLines::with_calls(stdout, stdin, MAX_MESSAGE_BYTES);
    let transport = InOrder {
        inner: lines,
        progress: Arc::clone(&progress),
        changes: Arc::clone(changes),
    };
    let failed = |reason: String| ClientError::Protocol {
        server: server.name.clone(),
        reason,
        stderr: tail(&stderr),
    };
    let service = match handshake(transport, options, Arc::clone(&progress)).await {
        Ok(service) => service,
        Err(Handshake::Failed(reason)) => {
            // A server that gave up has usually said why: its stderr is read to its end
            // (briefly: one that lives on holds it open) so that the error can say it.
            let _ = tokio::time::timeout(LAST_WORDS, stderr_read).await;
            return Err(failed(reason));
        }
        Err(Handshake::TimedOut(reason)) => return Err(failed(reason)),
    };
    // Later protocols carry the session's metadata in every request, which rmcp adds.
    let calls = service
        .peer()
        .peer_info()
        .is_some_and(|info| info.protocol_version < ProtocolVersion::V_2026_07_28)
        .then_some(calls);
    Ok(Session {
        peer: service.peer().clone(),
        calls,
        service,
        progress,
        stderr,
        stderr_read: Mutex::new(Some(stderr_read)),
        _child: Some(Child {
            process: Some(child),
            runtime: runtime.clone(),
        }),
    })
}

async fn open_http(
    server: &HttpServer,
    options: &ClientOptions,
    progress: Progressing,
    changes: &Arc<watch::Sender<u64>>,
) -> Result<Session, ClientError> {
    let invalid = |reason: String| ClientError::Invalid {
        server: server.name.clone(),
        reason,
    };
    let mut headers = HashMap::with_capacity(server.headers.len());
    for (name, value) in &server.headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid(format!("has `{name}` as a header, which is no header name")))?;
        // The value is never repeated: it may be a secret.
        let mut value = HeaderValue::from_str(value).map_err(|_| {
            invalid(format!(
                "has a value for the header `{name}` that is no header value \
                 (a line break or another control character in it?)"
            ))
        })?;
        value.set_sensitive(true);
        headers.insert(header, value);
    }
    let client =
        http_client().map_err(|error| invalid(format!("cannot make an HTTP client: {error}")))?;
    let config =
        StreamableHttpClientTransportConfig::with_uri(server.url.as_str()).custom_headers(headers);
    let transport = InOrder {
        inner: StreamableHttpClientTransport::with_client(client, config),
        progress: Arc::clone(&progress),
        changes: Arc::clone(changes),
    };
    let service = handshake(transport, options, Arc::clone(&progress))
        .await
        .map_err(|failure| {
            let (Handshake::Failed(reason) | Handshake::TimedOut(reason)) = failure;
            ClientError::Protocol {
                server: server.name.clone(),
                reason: format!("at {} {reason}", server.url),
                stderr: String::new(),
            }
        })?;
    Ok(Session {
        peer: service.peer().clone(),
        calls: None,
        service,
        progress,
        stderr: Stderr::default(),
        stderr_read: Mutex::new(None),
        _child: None,
    })
}

/// Why a handshake did not complete, in words (`did not complete the MCP handshake: ...`).
enum Handshake {
    /// The server refused, went away, or the transport failed.
    Failed(String),
    /// The server said nothing in time.
    TimedOut(String),
}

/// The MCP handshake over `transport`, within the options' time.
async fn handshake<T, E, A>(
    transport: T,
    options: &ClientOptions,
    calls: Progressing,
) -> Result<RunningService<RoleClient, Handler>, Handshake>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match tokio::time::timeout(
        options.handshake_timeout,
        rmcp::serve_client(Handler { calls }, transport),
    )
    .await
    {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(error)) => Err(Handshake::Failed(format!(
            "did not complete the MCP handshake: {}",
            handshake_failure(&error)
        ))),
        Err(_) => Err(Handshake::TimedOut(format!(
            "did not complete the MCP handshake within {}",
            seconds(options.handshake_timeout)
        ))),
    }
}

/// Why a handshake failed, in words: a transport's failure as its error and the errors that
/// caused it (`error sending request ...: tcp connect error: Connection refused`), without
/// the transport's type name rmcp puts before it.
fn handshake_failure(error: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    use rmcp::transport::worker::WorkerQuitReason;
    let rmcp::service::ClientInitializeError::TransportError { error, context } = error else {
        return error.to_string();
    };
    // The HTTP client's error keeps its causes (connection refused, a certificate refused)
    // where rmcp's wrappers do not pass them on as sources.
    let http = match error
        .error
        .downcast_ref::<StreamableHttpError<reqwest::Error>>()
    {
        Some(http) => Some(http),
        None => match error
            .error
            .downcast_ref::<WorkerQuitReason<StreamableHttpError<reqwest::Error>>>()
        {
            Some(WorkerQuitReason::Fatal { error, .. }) => Some(error),
            _ => None,
        },
    };
    let words = match http {
        Some(StreamableHttpError::Client(client)) => with_causes(client),
        _ => with_causes(error.error.as_ref()),
    };
    format!("{words} ({context})")
}

/// An error and the errors that caused it, each said once.
fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut words = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        let said = next.to_string();
        if !words.contains(&said) {
            words.push_str(": ");
            words.push_str(&said);
        }
        cause = next.source();
    }
    words
}

/// The HTTP client of a streamable HTTP connection: TLS by rustls with the *ring* provider
/// (the one the rest of the workspace builds) and the platform's certificate verifier, and no
/// redirects followed, so that headers carrying a token reach the URL they were given for
/// and no other.
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

/// Reads the server's stderr to its end, keeping the last lines.
async fn keep_stderr(pipe: tokio::process::ChildStderr, kept: Stderr) {
    let mut lines = tokio::io::BufReader::new(pipe).split(b'\n');
    while let Ok(Some(line)) = lines.next_segment().await {
        let mut line = String::from_utf8_lossy(&line).into_owned();
        if line.len() > STDERR_LINE_BYTES {
            let cut = (0..=STDERR_LINE_BYTES)
                .rev()
                .find(|&at| line.is_char_boundary(at))
                .unwrap_or(0);
            line.truncate(cut);
            line.push_str(" ...");
        }
        let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() == STDERR_LINES {
            kept.pop_front();
        }
        kept.push_back(line);
    }
}

/// The kept stderr lines, as one text.
fn tail(stderr: &Stderr) -> String {
    let kept = stderr.lock().unwrap_or_else(PoisonError::into_inner);
    kept.iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n")
}

/// One tool of an MCP server, callable as any toolsmith tool.
pub struct RemoteTool {
    link: Arc<Link>,
    name: String,
    title: Option<String>,
    description: String,
    parameters: ImportedSchema,
    output: Option<TypeGraph>,
    annotations: ToolAnnotations,
}

impl std::fmt::Debug for RemoteTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTool")
            .field("server", &self.link.server.name())
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl RemoteTool {
    fn new(link: Arc<Link>, tool: rmcp::model::Tool) -> Result<Self, ClientError> {
        let name = tool.name.to_string();
        let schema = Value::Object((*tool.input_schema).clone());
        let parameters =
            ImportedSchema::new(schema, &ImportOptions::lenient()).map_err(|errors| {
                link.failure(
                    format!("lists the tool `{name}`, whose inputSchema cannot be read: {errors}"),
                    None,
                )
            })?;
        // An output schema that does not import is only not declared: the results still come.
        let output = tool.output_schema.as_ref().and_then(|schema| {
            toolsmith::import_with(
                &Value::Object((**schema).clone()),
                &ImportOptions::lenient(),
            )
            .ok()
            .map(|imported| imported.graph)
        });
        let annotations = tool
            .annotations
            .as_ref()
            .map(|hints| ToolAnnotations {
                read_only: hints.read_only_hint,
                destructive: hints.destructive_hint,
                idempotent: hints.idempotent_hint,
                open_world: hints.open_world_hint,
            })
            .unwrap_or_default();
        let title = tool
            .title
            .clone()
            .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()));
        Ok(RemoteTool {
            link,
            name,
            title,
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            parameters,
            output,
            annotations,
        })
    }

    /// The server this tool is on.
    pub fn server(&self) -> &str {
        self.link.server.name()
    }

    /// The tool's title, where the server gives one.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// Every liberty taken reading the tool's `inputSchema` (the schema itself still checks
    /// each call's arguments after coercion).
    pub fn import_warnings(&self) -> &[ImportWarning] {
        self.parameters.warnings()
    }

    /// The tool's `inputSchema` as the server gave it.
    pub fn input_schema(&self) -> &Value {
        self.parameters.schema()
    }
}

impl Tool for RemoteTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &TypeGraph {
        self.parameters.graph()
    }

    fn output(&self) -> Option<&TypeGraph> {
        self.output.as_ref()
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations
    }

    fn call<'a>(&'a self, arguments: Arguments<'a>, context: Context) -> ToolFuture<'a> {
        let tool = context.tool_name().unwrap_or(&self.name).to_owned();
        // Coerced and checked here: what the server would refuse is answered at once, in the
        // model-facing shape, and what is sent is what its schema asks for.
        let coerced = match self.parameters.coerce(arguments, context.policy()) {
            Ok(coerced) => coerced,
            Err(errors) => {
                return ToolFuture::ready(Err(ToolError::InvalidArguments { tool, errors }));
            }
        };
        let Value::Object(object) = coerced.value else {
            return ToolFuture::ready(Err(ToolError::Failed {
                tool,
                message: "the arguments are not an object, which MCP requires".to_owned(),
            }));
        };
        ToolFuture::new(async move {
            let server = self.link.server.name();
            if context.is_cancelled() {
                return Err(context.stopped_error(tool));
            }
            // The rare and long ways (connecting again, sending through rmcp, cancelling,
            // waiting for a dead server's last words) are boxed where they are taken: held in
            // place, their state made this future (boxed anew for every call) kilobytes larger.
            let connection = match self.link.alive() {
                Some(session) => session,
                None => tokio::select! {
                    session = Box::pin(self.link.session()) => session.map_err(|reason| {
                        ToolError::Unavailable {
                            tool: tool.clone(),
                            reason: format!("the MCP server `{server}` {reason}"),
                        }
                    })?,
                    () = context.cancelled() => return Err(context.stopped_error(tool)),
                },
            };
            let unavailable = |reason: String| ToolError::Unavailable {
                tool: tool.clone(),
                reason: format!(
                    "the MCP server `{server}` {reason}{}",
                    stderr_note(&connection.stderr)
                ),
            };
            let request = ClientRequest::CallToolRequest(rmcp::model::Request::new(
                CallToolRequestParams::new(self.name.clone()).with_arguments(object),
            ));
            // Sent beside rmcp's loop where the session allows it (a stdio server on a
            // protocol before 2026-07-28), else through it. Beside it, the request is queued
            // here and written while the call's cancellation is watched: a server that stops
            // reading holds the write, not the caller past its deadline.
            let mut write = None;
            let sent = match &connection.calls {
                Some(calls) => calls
                    .start(request)
                    .map(|(sent, written)| {
                        write = Some(written);
                        let request = Request {
                            id: sent.id,
                            answer: sent.answer,
                            peer: connection.peer.clone(),
                            calls: Some(Arc::clone(calls)),
                        };
                        (request, sent.progress_token)
                    })
                    .map_err(|error| error.to_string()),
                None => Box::pin(
                    connection
                        .peer
                        .send_cancellable_request(request, PeerRequestOptions::no_options()),
                )
                .await
                .map(|handle| {
                    let request = Request {
                        id: handle.id,
                        answer: handle.rx,
                        peer: handle.peer,
                        calls: None,
                    };
                    (request, handle.progress_token)
                })
                .map_err(|error| error.to_string()),
            };
            let (request, token) = match sent {
                Ok(sent) => sent,
                Err(error) => {
                    Box::pin(connection.last_words(&self.link.runtime)).await;
                    return Err(unavailable(format!("cannot be reached: {error}")));
                }
            };
            let mut sent = Sent::new(
                request,
                token,
                context.clone(),
                &connection.progress,
                &self.link.runtime,
            );
            let answered = tokio::select! {
                answer = async {
                    // A write that fails fails the answer (the connection has broken).
                    if let Some(write) = write {
                        write.await;
                    }
                    sent.answer().await
                } => Some(answer),
                () = context.cancelled() => None,
            };
            let request = sent.settle();
            let Some(answer) = answered else {
                if let Some(request) = request {
                    Box::pin(request.cancel(if context.is_cancelled_by_caller() {
                        "the caller cancelled the call".to_owned()
                    } else {
                        "the call's deadline passed".to_owned()
                    }))
                    .await;
                }
                return Err(context.stopped_error(tool));
            };
            let result = match answer {
                Ok(Ok(ServerResult::CallToolResult(result))) => result,
                Ok(Ok(other)) => {
                    return Err(unavailable(format!(
                        "answered `tools/call` with something else: {}",
                        short_json(&other)
                    )));
                }
                Ok(Err(error)) => return Err(unavailable(format!("failed the call: {error}"))),
                Err(_closed) => {
                    Box::pin(connection.last_words(&self.link.runtime)).await;
                    return Err(unavailable(
                        "closed the connection before it answered".to_owned(),
                    ));
                }
            };
            let content: toolsmith::Blocks = result.content.into_iter().map(content).collect();
            if result.is_error == Some(true) {
                let output = ToolOutput::new(content);
                return Err(ToolError::Failed {
                    tool,
                    message: output.as_text().into_owned(),
                });
            }
            let mut output = ToolOutput::new(content);
            output.structured = result.structured_content;
            Ok(output.with_repairs(coerced.repairs))
        })
    }
}

/// ", which last wrote on stderr: ..." where the server wrote anything, else nothing.
fn stderr_note(stderr: &Stderr) -> String {
    let tail = tail(stderr);
    if tail.is_empty() {
        String::new()
    } else {
        format!(" (its last words on stderr: {tail})")
    }
}

/// A value in a few hundred bytes of JSON at most, for an error message.
fn short_json(value: &impl serde::Serialize) -> String {
    let mut text = serde_json::to_string(value).unwrap_or_default();
    if text.len() > 300 {
        let cut = (0..=300)
            .rev()
            .find(|&at| text.is_char_boundary(at))
            .unwrap_or(0);
        text.truncate(cut);
        text.push_str("...");
    }
    text
}

/// One of MCP's content blocks as toolsmith's. Bytes that are not base64 are kept as text
/// saying so, never dropped without a word.
fn content(block: ContentBlock) -> Content {
    let bytes = |data: &str, what: &str| {
        BASE64
            .decode(data)
            .map_err(|error| Content::text(format!("[{what} whose data is not base64: {error}]")))
    };
    match block {
        ContentBlock::Text(text) => Content::Text(text.text),
        ContentBlock::Image(image) => match bytes(&image.data, "an image") {
            Ok(data) => Content::image(data, image.mime_type),
            Err(said) => said,
        },
        ContentBlock::Audio(audio) => match bytes(&audio.data, "audio") {
            Ok(data) => Content::audio(data, audio.mime_type),
            Err(said) => said,
        },
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => {
                let resource = Resource::text(uri, text);
                match mime_type {
                    Some(mime) => resource.with_mime_type(mime).into(),
                    None => resource.into(),
                }
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => match bytes(&blob, "a resource") {
                Ok(data) => {
                    let resource = Resource::blob(uri, data);
                    match mime_type {
                        Some(mime) => resource.with_mime_type(mime).into(),
                        None => resource.into(),
                    }
                }
                Err(said) => said,
            },
            other => Content::text(format!(
                "[resource contents toolsmith does not know: {}]",
                short_json(&other)
            )),
        },
        ContentBlock::ResourceLink(resource) => {
            let mut link = ResourceLink::new(resource.uri, resource.name);
            link.description = resource.description;
            link.mime_type = resource.mime_type;
            link.into()
        }
        other => Content::text(format!(
            "[a content block toolsmith does not know: {}]",
            short_json(&other)
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rmcp::model::NumberOrString;
    use toolsmith::Reporter;

    use super::*;

    #[derive(Default)]
    struct Seen(Mutex<Vec<f64>>);

    impl Reporter for Seen {
        fn progress(&self, _context: &Context, progress: Progress) {
            self.0.lock().unwrap().push(progress.done);
        }
    }

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    #[test]
    fn a_question_goes_to_the_one_call_in_flight_and_no_guess_is_made_among_several() {
        let mut calls = Calls::default();
        assert_eq!(calls.asking().err(), Some(None));
        calls.enter(token(1), Context::new().with_call_id("first"));
        let first = calls.asking().unwrap();
        assert_eq!(first.context.call_id(), Some("first"));
        calls.enter(token(2), Context::new().with_call_id("second"));
        assert_eq!(calls.asking().err(), Some(Some(2)));
        // A call that leaves says so to what waits on it.
        assert!(!first.ended.is_cancelled());
        calls.leave(&token(1));
        assert!(first.ended.is_cancelled());
        assert_eq!(calls.asking().unwrap().context.call_id(), Some("second"));
    }

    #[test]
    fn a_sampling_request_is_read_as_its_text_conversation_and_nothing_else_is_dropped() {
        let params = serde_json::json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Hi"}},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Hello, "},
                    {"type": "text", "text": "there"},
                ]},
            ],
            "systemPrompt": "Be brief.",
            "maxTokens": 20,
            "temperature": 0.5,
        });
        let sampling = sampling_of(&params).unwrap();
        let texts: Vec<(Role, &str)> = sampling
            .messages
            .iter()
            .map(|m| (m.role, m.text.as_str()))
            .collect();
        assert_eq!(
            texts,
            [(Role::User, "Hi"), (Role::Assistant, "Hello, there")]
        );
        assert_eq!(sampling.system.as_deref(), Some("Be brief."));
        assert_eq!(sampling.max_tokens, 20);
        assert_eq!(sampling.temperature, Some(0.5));

        let image = serde_json::json!({"messages": [{"role": "user", "content":
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}}], "maxTokens": 5});
        let refused = sampling_of(&image).unwrap_err();
        assert!(
            refused.contains("only text is passed on") && refused.contains("`image`"),
            "{refused}"
        );
        let nobody = serde_json::json!({"messages": [{"role": "system", "content":
            {"type": "text", "text": "x"}}]});
        assert!(sampling_of(&nobody).unwrap_err().contains("role"));
        assert!(sampling_of(&serde_json::json!({})).is_err());
    }

    #[test]
    fn a_report_before_its_call_is_entered_reaches_it_in_order() {
        let seen = Arc::new(Seen::default());
        let mut calls = Calls::default();
        calls.report(&token(1), Progress::new(1));
        calls.report(&token(2), Progress::new(7));
        calls.report(&token(1), Progress::new(2));
        calls.enter(token(1), Context::new().with_reporter(seen.clone()));
        calls.report(&token(1), Progress::new(3));
        assert_eq!(*seen.0.lock().unwrap(), [1.0, 2.0, 3.0]);
        // The other token's report waits for its own call.
        assert_eq!(calls.early.len(), 1);
    }

    #[test]
    fn reports_for_tokens_no_call_claims_are_bounded() {
        let mut calls = Calls::default();
        for n in 0..1000 {
            calls.report(&token(n), Progress::new(1));
        }
        assert_eq!(calls.early.len(), EARLY_REPORTS);
        assert_eq!(calls.early[0].0, token(1000 - EARLY_REPORTS as i64));
    }
}
