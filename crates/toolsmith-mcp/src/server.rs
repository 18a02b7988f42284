//! [`McpServer`]: rmcp's server handler over a toolsmith [`Registry`].

// rmcp marks MCP's logging deprecated (SEP-2577, for protocol 2026-07-28); the protocol
// versions this server serves before it have `logging/setLevel`, and clients use it.
#![allow(deprecated)]

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, RequestId, RequestMetaObject, RequestStateCodec,
    ServerCapabilities, ServerConfig, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use toolsmith::{
    Arguments, Asker, CancellationToken, CoerceError, CoerceErrors, Context, Dialect, ErrorCode,
    LogLevel, Registry, Timeout, ToolError, ToolFuture, ToolResult, envelope,
};

use crate::ask::{self, ClientAsker, Question, Rounds};
use crate::config::McpConfig;
use crate::content::{error_result, success_result};
use crate::error::ServeError;
use crate::intake::CallIntake;
use crate::notify::{self, CallReporter};
use crate::pool::{self, ServerPool};

/// An MCP server over a [`Registry`]: rmcp's [`ServerHandler`], with the tools' declarations
/// computed once, at construction (and again when [`replace_tools`](McpServer::replace_tools)
/// gives it other tools).
///
/// Every `tools/call` goes through the registry ([`Registry::call_entry`]), so its layers
/// apply, with one more of the server's own innermost: a [`Timeout`] that, at the call's
/// deadline, cancels the call's context (the tool sees it) before the server answers with an
/// `isError` result. An async tool is awaited on the task handling the request; a sync tool
/// runs on the server's own threads (the registry's [`Offload`](toolsmith::Offload)), never on
/// the executor's.
///
/// Each call gets a [`Context`]: the JSON-RPC request id as its call id, the call's deadline, a
/// cancellation that the client's `notifications/cancelled` (or, over HTTP, the client going
/// away) triggers, progress sent as `notifications/progress` when the request carries a
/// progress token, log messages sent as `notifications/message` at the level the client chose,
/// and whatever request data [`with_request_data`](McpServer::with_request_data) puts in.
///
/// Cloning is cheap (the clones share the registry, the declarations, the tool threads and the
/// limits), which is how the stateless HTTP transport hands each request its own handler.
///
/// ```
/// use toolsmith_mcp::{McpConfig, McpServer};
///
/// /// Adds two integers.
/// #[toolsmith::tool(read_only)]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// let mut registry = toolsmith::Registry::new();
/// registry.add(std::sync::Arc::new(Add))?;
/// let server = McpServer::new(registry, McpConfig::default())?;
/// let declared = &server.tools()[0];
/// assert_eq!(declared.name, "add");
/// assert_eq!(declared.title.as_deref(), Some("Add"));
/// assert_eq!(declared.input_schema["type"], "object");
/// assert_eq!(declared.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    /// What one client connection keeps between its requests: one per stdio connection, one per
    /// request over stateless HTTP.
    session: Arc<Session>,
    /// What the embedding program puts into each call's context.
    request_data: Option<Arc<RequestDataFn>>,
    /// Whether this connection is told when the tools change: a lasting one (stdio, a byte
    /// stream), not a stateless HTTP request's.
    lasting: bool,
    /// Whether a client's answer to a request of the server's can come back on this connection
    /// (a lasting one, an HTTP session), so that a call can ask its client.
    answerable: bool,
}

struct Shared {
    /// The tools served now; replaced whole, never changed in place, so that a call keeps the
    /// tools it started with.
    tools: RwLock<Arc<Tools>>,
    /// The threads of the blocking tools, shared by every set of tools served.
    pool: Arc<ServerPool>,
    /// The connections to tell when the tools change: the lasting ones (stdio, a byte
    /// stream), each pruned once closed; a stateless HTTP request is none.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    config: McpConfig,
    /// The places for calls: one per call running or waiting to run. A call holds its place
    /// from when the server takes it until its tool returns.
    places: Arc<Semaphore>,
    /// Calls running at once (the concurrency limit): a call waits for one, in turn, before its
    /// tool is called, and holds it until its tool returns.
    running: Arc<Semaphore>,
    /// What `requestState` is sealed with, on protocol 2026-07-28 (see [`Rounds`]).
    request_state: Arc<RequestStateCodec>,
}

type RequestDataFn = dyn Fn(&CallRequest<'_>, &mut Context) + Send + Sync;

/// One set of tools served: the registry and its `tools/list` answer.
struct Tools {
    /// The registry given, with the server's timeout layer and its tool threads.
    registry: Registry,
    /// `tools/list`'s answer, built once.
    listed: ListToolsResult,
}

impl Tools {
    fn new(registry: Registry, pool: &Arc<ServerPool>) -> Result<Tools, ServeError> {
        let registry = registry
            .with_layer(Timeout::deadline())
            .with_offload(Arc::clone(pool) as Arc<dyn toolsmith::Offload>);
        let declared = registry
            .iter()
            .map(|entry| declare(entry.tool().as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Tools {
            registry,
            listed: ListToolsResult::with_all_items(declared),
        })
    }
}

impl Shared {
    /// The tools served now.
    fn tools(&self) -> Arc<Tools> {
        Arc::clone(&self.tools.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The lasting connections still open (the closed ones pruned).
    fn open_peers(&self) -> MutexGuard<'_, Vec<Peer<RoleServer>>> {
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|peer| !peer.is_transport_closed());
        peers
    }
}

/// What a connection keeps: the level of log messages its client set.
#[derive(Default)]
struct Session {
    /// `LogLevel` as its position in [`LogLevel::ALL`] plus one; 0 while the client set none.
    log_level: AtomicU8,
    /// What the connection's calls ask their client through, made at the first call.
    asker: std::sync::OnceLock<Arc<dyn Asker>>,
}

impl Session {
    /// What a call on this connection asks its client through: the client itself where it can
    /// answer, else an asker saying why not.
    fn asker(&self, request: &RequestContext<RoleServer>, connected: bool) -> Arc<dyn Asker> {
        if !connected {
            return ask::stateless();
        }
        Arc::clone(
            self.asker
                .get_or_init(|| Arc::new(ClientAsker::new(request.peer.clone()))),
        )
    }

    fn log_level(&self) -> Option<LogLevel> {
        let stored = usize::from(self.log_level.load(Ordering::Relaxed));
        stored
            .checked_sub(1)
            .and_then(|at| LogLevel::ALL.get(at).copied())
    }

    fn set_log_level(&self, level: LogLevel) {
        let at = LogLevel::ALL.iter().position(|l| *l == level).unwrap_or(0);
        // Eight levels: the position always fits.
        let stored = u8::try_from(at + 1).unwrap_or(1);
        self.log_level.store(stored, Ordering::Relaxed);
    }
}

/// The request a call came in, as [`McpServer::with_request_data`]'s hook sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallRequest<'a> {
    tool: &'a str,
    id: &'a RequestId,
    meta: &'a RequestMetaObject,
    http: Option<&'a hyper::http::request::Parts>,
}

impl<'a> CallRequest<'a> {
    /// The tool called.
    pub fn tool(&self) -> &'a str {
        self.tool
    }

    /// The JSON-RPC request id.
    pub fn id(&self) -> &'a RequestId {
        self.id
    }

    /// The request's `_meta`.
    pub fn meta(&self) -> &'a RequestMetaObject {
        self.meta
    }

    /// The HTTP request the call came in (method, URI, headers), over HTTP; `None` over stdio.
    pub fn http(&self) -> Option<&'a hyper::http::request::Parts> {
        self.http
    }

    /// The value of the HTTP header `name` (any case), where the call came over HTTP with one
    /// that is visible ASCII.
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.http?.headers.get(name)?.to_str().ok()
    }
}

/// A call's arguments: their text, as the client sent it, or a map read by rmcp.
enum CallArguments {
    Text(Option<Box<str>>),
    Map(Value),
}

impl CallArguments {
    fn as_arguments(&self) -> Arguments<'_> {
        match self {
            CallArguments::Text(Some(text)) => Arguments::Text(text),
            CallArguments::Text(None) => Arguments::Text("{}"),
            CallArguments::Map(value) => Arguments::Json(value),
        }
    }
}

/// What a call holds until the last of its context is dropped (when its tool returns, even
/// after a timeout: a runaway tool keeps its place and its turn).
struct Held {
    _place: OwnedSemaphorePermit,
    _running: OwnedSemaphorePermit,
}

impl McpServer {
    /// A server for `registry`, declaring every tool in the MCP dialect.
    ///
    /// The server calls through `registry`'s layers, adding a [`Timeout`] of its own innermost
    /// (the [call timeout](McpConfig::with_call_timeout), running from when the server takes
    /// the call), and runs its blocking tools on threads of its own (replacing any
    /// [`Offload`](toolsmith::Offload) the registry had).
    ///
    /// # Errors
    /// [`ServeError::InvalidConfig`] when a setting of `config` cannot serve;
    /// [`ServeError::Declare`] when a tool's name or schema cannot be declared to MCP clients.
    pub fn new(registry: impl Into<Arc<Registry>>, config: McpConfig) -> Result<Self, ServeError> {
        config.check()?;
        let pool = Arc::new(ServerPool::new(config.max_concurrent_calls()));
        let tools = Tools::new(Arc::unwrap_or_clone(registry.into()), &pool)?;
        let places = config
            .max_concurrent_calls()
            .saturating_add(config.max_queued_calls())
            .min(Semaphore::MAX_PERMITS);
        let running = config.max_concurrent_calls().min(Semaphore::MAX_PERMITS);
        let request_state = Arc::new(ask::request_state_codec(config.request_state_key())?);
        Ok(McpServer {
            shared: Arc::new(Shared {
                tools: RwLock::new(Arc::new(tools)),
                pool,
                peers: Mutex::default(),
                config,
                places: Arc::new(Semaphore::new(places)),
                running: Arc::new(Semaphore::new(running)),
                request_state,
            }),
            session: Arc::default(),
            request_data: None,
            lasting: false,
            answerable: false,
        })
    }

    /// This server, putting request data into each call's [`Context`] with `fill`: given the
    /// request the call came in ([`CallRequest`]: its HTTP request's headers, over HTTP), it
    /// adds what the tools read with [`Context::get`] (who is calling, a connection to use,
    /// ...). A tool that asks for data `fill` did not add answers with
    /// [`ToolError::MissingData`], an `isError` result; so `fill` need not refuse anything.
    /// Should `fill` panic, the call is answered with an `isError` result, and the server keeps
    /// serving.
    ///
    /// It applies to the server it returns and the clones made of that (a second hook replaces
    /// the first).
    ///
    /// ```
    /// use toolsmith::{Context, ToolError};
    /// use toolsmith_mcp::{McpConfig, McpServer};
    ///
    /// /// Who is calling, from the `Authorization` header.
    /// struct Caller(String);
    ///
    /// /// Says who is calling.
    /// #[toolsmith::tool]
    /// fn whoami(ctx: &Context) -> Result<String, ToolError> {
    ///     Ok(ctx.get::<Caller>()?.0.clone())
    /// }
    ///
    /// let mut registry = toolsmith::Registry::new();
    /// registry.add(std::sync::Arc::new(Whoami))?;
    /// let server = McpServer::new(registry, McpConfig::default())?.with_request_data(
    ///     |request, ctx| {
    ///         if let Some(token) = request.header("authorization").and_then(|h| h.strip_prefix("Bearer ")) {
    ///             ctx.insert(Caller(token.to_owned()));
    ///         }
    ///     },
    /// );
    /// # drop(server);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_request_data(
        mut self,
        fill: impl Fn(&CallRequest<'_>, &mut Context) + Send + Sync + 'static,
    ) -> Self {
        self.request_data = Some(Arc::new(fill));
        self
    }

    /// The tools as `tools/list` declares them now, in the registry's order.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.shared.tools().listed.tools.clone()
    }

    /// Serves `registry`'s tools from now on, in place of the ones served so far, and tells
    /// every client connected over stdio (`notifications/tools/list_changed`). A call running
    /// ends with the tools it started with. This server's clones serve the new tools too.
    /// (Say so in the configuration, [`McpConfig::with_changing_tools`], so that clients
    /// know to listen.)
    ///
    /// # Errors
    /// [`ServeError::Declare`] when a tool's name or schema cannot be declared to MCP clients;
    /// the tools served so far stay.
    pub async fn replace_tools(&self, registry: Registry) -> Result<(), ServeError> {
        let tools = Tools::new(registry, &self.shared.pool)?;
        *self
            .shared
            .tools
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(tools);
        let peers = self.shared.open_peers().clone();
        for peer in peers {
            // A client gone meanwhile is no failure of the change.
            let _ = peer.notify_tool_list_changed().await;
        }
        Ok(())
    }

    /// The configuration the server runs with.
    pub fn config(&self) -> &McpConfig {
        &self.shared.config
    }

    /// The places for calls, for a transport that waits for one before it hands a call over.
    pub(crate) fn places(&self) -> Arc<Semaphore> {
        Arc::clone(&self.shared.places)
    }

    /// Whether this connection's calls can ask its client (`elicitation/create`,
    /// `sampling/createMessage`): where the client's answer can come back.
    fn can_ask(&self) -> bool {
        self.answerable
    }

    /// This server for a lasting connection (stdio, a byte stream), which is told when the
    /// tools change.
    pub(crate) fn for_lasting_connection(&self) -> McpServer {
        McpServer {
            lasting: true,
            answerable: true,
            ..self.for_connection()
        }
    }

    /// This server for an HTTP session: a handle of its own, whose calls can ask the session's
    /// client.
    pub(crate) fn for_session(&self) -> McpServer {
        McpServer {
            answerable: true,
            ..self.for_connection()
        }
    }

    /// This server for a new client connection: the same tools and limits, and a session of
    /// its own (the log level its client sets).
    pub(crate) fn for_connection(&self) -> McpServer {
        McpServer {
            shared: Arc::clone(&self.shared),
            session: Arc::default(),
            request_data: self.request_data.clone(),
            lasting: false,
            answerable: false,
        }
    }

    /// Runs one call: it takes its place (`place`, when the transport waited for it; otherwise
    /// a call finding every place taken is answered as busy), waits its turn among the running
    /// calls, then goes through the registry, everything within the call timeout from now.
    async fn call(
        &self,
        name: &str,
        arguments: CallArguments,
        place: Option<OwnedSemaphorePermit>,
        retry: Retry,
        request: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let shared = &*self.shared;
        let config = &shared.config;
        // The tools this call is made with, whatever replaces them while it runs.
        let tools = shared.tools();
        let registry = &tools.registry;
        let entry = registry.find(name).map_err(|e| unknown_tool(&e))?;
        let place = match place {
            Some(place) => place,
            None => match Arc::clone(&shared.places).try_acquire_owned() {
                Ok(place) => place,
                Err(_) => {
                    return Ok(complete_error(format!(
                        "The server is busy: {} tool calls are running and {} more are queued. \
                         Try `{name}` again shortly.",
                        config.max_concurrent_calls(),
                        config.max_queued_calls()
                    )));
                }
            },
        };
        // From when the server took the call: time waiting for a turn counts.
        let timeout = config.call_timeout();
        let deadline = Instant::now() + timeout;
        let running = match Arc::clone(&shared.running).try_acquire_owned() {
            Ok(running) => running,
            Err(_) => {
                let turn = tokio::time::timeout_at(
                    deadline.into(),
                    Arc::clone(&shared.running).acquire_owned(),
                );
                tokio::select! {
                    biased;
                    () = request.ct.cancelled() => {
                        return Ok(complete_error(
                            ToolError::Cancelled { tool: name.to_owned() }.to_model_message(),
                        ));
                    }
                    turn = turn => match turn {
                        Ok(Ok(running)) => running,
                        // The semaphore is never closed; the deadline passed.
                        _ => {
                            return Ok(complete_error(format!(
                                "Tool `{name}` did not start within {}: the server was busy with \
                                 other calls all that time. Try again later.",
                                seconds(timeout)
                            )));
                        }
                    }
                }
            }
        };
        // On protocol 2026-07-28 a call asks by answering `input_required`, and is called
        // again with the answers; before it, the client is asked where it can answer.
        let rounds = match request.protocol_version() {
            Some(version) if version >= ProtocolVersion::V_2026_07_28 => {
                let capabilities = request.meta.client_capabilities();
                let text = match &arguments {
                    CallArguments::Text(text) => {
                        std::borrow::Cow::Borrowed(text.as_deref().unwrap_or("{}"))
                    }
                    CallArguments::Map(value) => std::borrow::Cow::Owned(value.to_string()),
                };
                Some(Arc::new(Rounds::new(
                    &shared.request_state,
                    name,
                    &text,
                    retry.input_responses,
                    retry.request_state.as_deref(),
                    capabilities.as_ref(),
                )?))
            }
            _ => None,
        };
        let asker = match &rounds {
            Some(rounds) => Arc::clone(rounds) as Arc<dyn Asker>,
            None => self.session.asker(request, self.can_ask()),
        };
        let cancellation = CancellationToken::new();
        let reporter = Arc::new(CallReporter::new(&request.meta, self.session.log_level()));
        let mut context = Context::new()
            .with_policy(config.policy().clone())
            .with_call_id(request.id.to_string())
            .with_cancellation(cancellation.clone())
            .with_deadline(deadline)
            .with_reporter(Arc::clone(&reporter) as Arc<dyn toolsmith::Reporter>)
            .with_asker(asker)
            .with_data(Held {
                _place: place,
                _running: running,
            });
        if let Some(fill) = &self.request_data {
            let http = request.extensions.get::<hyper::http::request::Parts>();
            let call = CallRequest {
                tool: name,
                id: &request.id,
                meta: &request.meta,
                http,
            };
            // The program's own code: should it panic, the call says so rather than never
            // answering.
            let filled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                fill(&call, &mut context);
            }));
            if filled.is_err() {
                return Ok(complete_error(format!(
                    "Tool `{name}` cannot run: the server failed while preparing the call \
                     (its request data hook panicked); this is a bug in the server, not in \
                     your call."
                )));
            }
        }
        let arguments = arguments.as_arguments();
        // A blocking tool's call goes to the pool, which notes when a thread picks it up (where
        // its workers spin, so that polling for the answer can pay).
        let picked_up = (entry.tool().is_blocking() && shared.pool.spins())
            .then(|| Arc::new(AtomicBool::new(false)));
        let future = match &picked_up {
            Some(picked_up) => {
                pool::noting_pick_up(picked_up, || registry.call_entry(entry, arguments, context))
            }
            None => registry.call_entry(entry, arguments, context),
        };
        let answered = Answered {
            call: future,
            cancellation: &cancellation,
            request,
            reporter: &reporter,
            deadline,
            tool: name,
            rounds: rounds.as_deref(),
        }
        .run(picked_up.as_deref())
        .await;
        // What the tool reported before it answered goes first; then nothing more.
        for note in reporter.close() {
            note.send(request.peer.clone()).await;
        }
        let answered = match answered {
            Ran::Answered(answered) => answered,
            Ran::NeedsInput(question) => {
                let rounds = rounds.as_deref().ok_or_else(|| {
                    ErrorData::internal_error("a call asked for input outside rounds", None)
                })?;
                let result = serde_json::from_value(rounds.input_required(question))
                    .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
                return Ok(CallToolResponse::InputRequired(result));
            }
        };
        let result = match answered {
            Ok(output) => Ok(success_result(output)),
            Err(ToolError::InvalidArguments { tool, errors })
                if !errors.is_empty()
                    && errors
                        .iter()
                        .all(|error| error.code == ErrorCode::ArgumentsType) =>
            {
                Err(not_an_object(&tool, &errors))
            }
            // The server's own deadline (a timeout layer of the registry's says its time).
            Err(ToolError::TimedOut { after: None, .. }) => Ok(error_result(format!(
                "Tool `{name}` did not finish within {} and was abandoned.",
                seconds(timeout)
            ))),
            Err(error) => Ok(error_result(error.to_model_message())),
        };
        result.map(CallToolResponse::Complete)
    }
}

/// What a call retried after `input_required` carries (protocol 2026-07-28).
#[derive(Default)]
pub(crate) struct Retry {
    /// The client's answers to the last round's questions.
    pub(crate) input_responses: Option<std::collections::BTreeMap<String, Value>>,
    /// The state the last round's answer gave, echoed.
    pub(crate) request_state: Option<String>,
}

/// A finished call's error result, saying `message`.
fn complete_error(message: String) -> CallToolResponse {
    CallToolResponse::Complete(error_result(message))
}

/// How a call's run ended.
enum Ran {
    /// The tool answered (or failed).
    Answered(ToolResult),
    /// The tool asked a question this round has no answer for: its key and request.
    NeedsInput(Question),
}

/// How long the executor keeps polling for a blocking tool's answer before it sleeps until
/// woken.
///
/// Most tool calls are over in microseconds; an executor that sleeps at once must then be woken
/// by the tool's thread, which on a machine with idle CPUs costs more than the call. Polling
/// between other tasks (never blocking them) for this long answers such calls without it. (Not
/// when the process may use one CPU only: the tool's thread could then run only once this one
/// stops.)
const ANSWER_SPIN: Duration = Duration::from_micros(50);

/// How long the executor waits for a tool's thread to pick the call up before it stops polling.
/// A call not picked up by then has no thread awake on another CPU (one is being woken, or it
/// shares this thread's CPU and can run only once this thread sleeps).
const PICK_UP_SPIN: Duration = Duration::from_micros(5);

/// A call on its way to its answer, and what the task handling its request does meanwhile:
/// passes the client's cancellation on to the call's context, sends what the tool reports, and
/// keeps the deadline should a layer of the registry's hold the call past it.
struct Answered<'a> {
    call: ToolFuture<'a>,
    cancellation: &'a CancellationToken,
    request: &'a RequestContext<RoleServer>,
    reporter: &'a CallReporter,
    deadline: Instant,
    tool: &'a str,
    /// The call's rounds, on protocol 2026-07-28: a question asked ends the run.
    rounds: Option<&'a Rounds>,
}

impl Answered<'_> {
    /// The call's answer. For a blocking tool on a pool whose workers spin (`picked_up` says
    /// whether a thread has taken it), the call is first polled among the executor's other tasks for a while
    /// ([`ANSWER_SPIN`]), so that a quick tool's thread need not wake the executor.
    async fn run(self, picked_up: Option<&AtomicBool>) -> Ran {
        let Answered {
            mut call,
            cancellation,
            request,
            reporter,
            deadline,
            tool,
            rounds,
        } = self;
        if let Some(picked_up) = picked_up {
            let started = Instant::now();
            loop {
                // Polled with a waker that does nothing: an answer that comes while this task
                // keeps looking need not wake the executor.
                let polled =
                    Pin::new(&mut call).poll(&mut std::task::Context::from_waker(Waker::noop()));
                if let Poll::Ready(answer) = polled {
                    return Ran::Answered(answer);
                }
                let waited = started.elapsed();
                if waited >= ANSWER_SPIN
                    || (waited >= PICK_UP_SPIN && !picked_up.load(Ordering::Acquire))
                {
                    break;
                }
                tokio::task::yield_now().await;
            }
        }
        let mut client_cancelled = pin!(request.ct.cancelled());
        let mut passed_on = false;
        // The deadline on toolsmith's timer, not tokio's: tokio's time driver wakes itself (a
        // write to its eventfd) for every timer registered since it last slept with none
        // pending, which a server answering call after call paid once a call; toolsmith's
        // timer is told only of a deadline earlier than every other.
        let mut late = pin!(Context::new().with_deadline(deadline).cancelled());
        let mut sending: Option<Pin<Box<dyn Future<Output = ()> + Send>>> = None;
        let answer = std::future::poll_fn(|cx| {
            loop {
                // What the tool reported, sent in order, one at a time, while it runs on.
                loop {
                    if let Some(send) = &mut sending {
                        if send.as_mut().poll(cx).is_pending() {
                            break;
                        }
                        sending = None;
                    }
                    match reporter.poll_next(cx) {
                        Poll::Ready(note) => {
                            sending = Some(Box::pin(note.send(request.peer.clone())));
                        }
                        Poll::Pending => break,
                    }
                }
                if let Poll::Ready(answer) = Pin::new(&mut call).poll(cx) {
                    return Poll::Ready(Ran::Answered(answer));
                }
                // The tool asked what this round has no answer for: the round ends, the tool
                // told to stop (its future is dropped with the call).
                if let Some(question) = rounds.and_then(|rounds| rounds.asked(cx.waker())) {
                    cancellation.cancel();
                    return Poll::Ready(Ran::NeedsInput(question));
                }
                // The client cancelled (or, over HTTP, left): the tool sees it, and is awaited
                // (to its deadline) so that it can stop as it must; rmcp drops the answer, and
                // nothing the tool reports from now on is sent.
                if !passed_on && client_cancelled.as_mut().poll(cx).is_ready() {
                    passed_on = true;
                    cancellation.cancel();
                    // A cancelled request is told nothing more.
                    reporter.close();
                    sending = None;
                    continue;
                }
                // A layer outside the server's timeout kept the call past its deadline.
                if late.as_mut().poll(cx).is_ready() {
                    cancellation.cancel();
                    return Poll::Ready(Ran::Answered(Err(ToolError::TimedOut {
                        tool: tool.to_owned(),
                        after: None,
                    })));
                }
                return Poll::Pending;
            }
        })
        .await;
        if let Some(send) = sending {
            send.await;
        }
        answer
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let config = &self.shared.config;
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
        let mut capabilities = capabilities;
        if config.tools_change()
            && let Some(tools) = capabilities.tools.as_mut()
        {
            tools.list_changed = Some(true);
        }
        let info = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            config.server_name(),
            config.server_version(),
        ));
        match config.instructions() {
            Some(instructions) => info.with_instructions(instructions),
            None => info,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(self.shared.tools().listed.clone())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if !self.lasting {
            return;
        }
        self.shared.open_peers().push(context.peer);
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session.set_log_level(notify::from_rmcp(request.level));
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (arguments, place) = match CallIntake::take(&mut context.extensions) {
            // The transport's only reference: the place moves to the call.
            Some(intake) => match Arc::try_unwrap(intake) {
                Ok(intake) => (CallArguments::Text(intake.arguments), intake.admitted),
                Err(shared) => (CallArguments::Text(shared.arguments.clone()), None),
            },
            None => (
                CallArguments::Map(Value::Object(request.arguments.unwrap_or_default())),
                None,
            ),
        };
        let retry = Retry {
            input_responses: request.input_responses,
            request_state: request.request_state,
        };
        // Boxed: rmcp moves each request's task (which holds this future) by value several
        // times; a call's state kept behind a pointer makes that task a fraction of its size.
        Box::pin(self.call(&request.name, arguments, place, retry, &context)).await
    }
}

/// A tool's MCP declaration: toolsmith's MCP envelope, with a title.
fn declare(tool: &dyn toolsmith::Tool) -> Result<rmcp::model::Tool, ServeError> {
    let mut declared = envelope(tool, Dialect::Mcp)?;
    declared["title"] = Value::String(title(tool.name()));
    serde_json::from_value(declared).map_err(|error| ServeError::Declaration {
        tool: tool.name().to_owned(),
        error,
    })
}

/// A human title from a tool name: `create_task` -> `Create task`.
fn title(name: &str) -> String {
    let words = name.replace(['_', '-', '.'], " ");
    let mut chars = words.trim().chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The protocol error for a name no tool has: MCP's invalid params, naming the nearest tool.
fn unknown_tool(error: &ToolError) -> ErrorData {
    let data = match error {
        ToolError::NotFound { name, did_you_mean } => {
            Some(json!({"name": name, "did_you_mean": did_you_mean}))
        }
        _ => None,
    };
    ErrorData::invalid_params(error.to_model_message(), data)
}

/// The protocol error for arguments that are not an object at all (an array, a number, a
/// string holding no object): MCP's invalid params, in the argument reader's words.
fn not_an_object(tool: &str, errors: &CoerceErrors) -> ErrorData {
    let problems: Vec<String> = errors.iter().map(CoerceError::message).collect();
    ErrorData::invalid_params(
        format!(
            "Invalid arguments for tool `{tool}`: {}",
            problems.join("; ")
        ),
        Some(json!({"tool": tool, "errors": errors.to_json()})),
    )
}

fn seconds(duration: Duration) -> String {
    format!("{}s", duration.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_the_name_in_words() {
        assert_eq!(title("create_task"), "Create task");
        assert_eq!(title("weather.lookup"), "Weather lookup");
        assert_eq!(title(""), "");
    }

    #[test]
    fn a_session_keeps_every_level() {
        let session = Session::default();
        assert_eq!(session.log_level(), None);
        for level in LogLevel::ALL {
            session.set_log_level(level);
            assert_eq!(session.log_level(), Some(level));
        }
    }
}
