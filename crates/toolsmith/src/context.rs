//! [`Context`]: what a caller hands each call beside its arguments (the policy the arguments
//! are read under, the call's id, cancellation, a deadline, where progress and log messages
//! go, whom to ask, and typed request data), and [`CancellationToken`].

use std::any::{Any, TypeId};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use serde_json::Value;
use toolsmith_types::Policy;

use crate::ToolError;
use crate::ask::Asker;
use crate::future::{Sleep, lock, sleep_until};

/// What a caller hands a call beside its arguments.
///
/// A tool declares a `&Context` parameter (anywhere in its signature; it is not part of the
/// schema) to see it. Everything in it is optional and cheap to leave out: a default context
/// reads arguments under the default [`Policy`], is never cancelled, has no deadline, sends
/// progress nowhere and log messages to `tracing`, and holds no request data.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{Arguments, Context, LogLevel, Tool, ToolExt};
///
/// /// Who is asking.
/// struct Principal(String);
///
/// /// Greets whoever is asking.
/// #[toolsmith::tool]
/// fn whoami(ctx: &Context) -> Result<String, toolsmith::ToolError> {
///     let principal = ctx.get::<Principal>()?;
///     ctx.log(LogLevel::Info, format!("greeting {}", principal.0));
///     Ok(format!("You are {} (call {})", principal.0, ctx.call_id().unwrap_or("-")))
/// }
///
/// let ctx = Context::new().with_call_id("call_1").with_data(Principal("ada".into()));
/// let output = Whoami.call_blocking(Arguments::Text("{}"), ctx)?;
/// assert_eq!(output.as_text(), "You are ada (call call_1)");
///
/// // Missing request data is an error the caller reads, never a panic.
/// let error = Whoami.call_blocking(Arguments::Text("{}"), Context::new()).unwrap_err();
/// assert_eq!(error.code(), "missing_data");
/// # Ok::<(), toolsmith::ToolError>(())
/// ```
#[derive(Clone, Default)]
pub struct Context {
    /// The name the tool was called by.
    tool: Option<Name>,
    /// The call's id: its own for each call, so kept beside the shared part rather than in
    /// it (where setting it copied a scope that the calls of a step or a session share).
    call_id: Option<Arc<str>>,
    /// The deadline: a timeout sets one per call, so it too is kept beside the shared part.
    deadline: Option<Instant>,
    /// Everything else, shared: a default context holds none of it, so making, moving and
    /// dropping one (every call does) costs two words (a call's path moves its context
    /// through each layer; at 144 bytes inline that was a tenth of a trivial call's time).
    scope: Option<Arc<Scope>>,
}

/// What a context holds beside the tool's name (see [`Context`]).
#[derive(Clone, Default)]
struct Scope {
    policy: Policy,
    cancellation: Option<CancellationToken>,
    reporter: Option<Arc<dyn Reporter>>,
    asker: Option<Arc<dyn Asker>>,
    data: Option<Arc<Data>>,
}

/// A tool's name: its own, known for the program's life (what generated tools put in, at no
/// cost), or one given at run time (a renamed tool's).
#[derive(Clone)]
enum Name {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Name {
    #[inline]
    fn as_str(&self) -> &str {
        match self {
            Name::Static(name) => name,
            Name::Shared(name) => name,
        }
    }
}

/// The policy of a context that states none.
static DEFAULT_POLICY: LazyLock<Policy> = LazyLock::new(Policy::default);

impl Context {
    /// A default context (see [`Context`]).
    #[inline]
    pub fn new() -> Self {
        Context::default()
    }

    /// The scope, to change in place (copied first where another context shares it).
    fn scope_mut(&mut self) -> &mut Scope {
        Arc::make_mut(self.scope.get_or_insert_with(Default::default))
    }

    /// This context, reading arguments under `policy`.
    #[must_use]
    pub fn with_policy(mut self, policy: Policy) -> Self {
        self.scope_mut().policy = policy;
        self
    }

    /// This context for the call `id` (an MCP request id, a model's `tool_call_id`).
    #[must_use]
    pub fn with_call_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.call_id = Some(id.into());
        self
    }

    /// This context for a call of the tool `name`: the name the tool is known by to its caller
    /// where that is not its own (a renamed tool's), so that errors name the tool as the
    /// caller knows it.
    #[must_use]
    pub fn with_tool_name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.tool = Some(Name::Shared(name.into()));
        self
    }

    /// Names the tool `name` where no name is given yet: what generated tools do with their
    /// own name, which costs nothing to hold.
    #[doc(hidden)]
    #[inline]
    pub fn name_if_unnamed(&mut self, name: &'static str) {
        if self.tool.is_none() {
            self.tool = Some(Name::Static(name));
        }
    }

    /// This context, cancelled when `token` is.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.scope_mut().cancellation = Some(token);
        self
    }

    /// This context with a deadline: the earlier of `deadline` and the one it had.
    #[must_use]
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(self.deadline.map_or(deadline, |d| d.min(deadline)));
        self
    }

    /// This context, reporting progress and log messages to `reporter`.
    #[must_use]
    pub fn with_reporter(mut self, reporter: Arc<dyn Reporter>) -> Self {
        self.scope_mut().reporter = Some(reporter);
        self
    }

    /// This context, asking `asker` what the tool asks a person ([`Context::elicit`]) or a
    /// model ([`Context::sample`]).
    #[must_use]
    pub fn with_asker(mut self, asker: Arc<dyn Asker>) -> Self {
        self.scope_mut().asker = Some(asker);
        self
    }

    /// The asker the caller gave, where it gave one.
    pub(crate) fn asker_ref(&self) -> Option<&dyn Asker> {
        self.scope.as_ref()?.asker.as_deref()
    }

    /// Whether the caller gave the call someone to ask ([`Context::with_asker`]).
    pub fn can_ask(&self) -> bool {
        self.asker_ref().is_some()
    }

    /// This context holding `value` as request data, found by its type with
    /// [`get`](Context::get); a value of the same type given before is replaced.
    #[must_use]
    pub fn with_data<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// Puts `value` into the request data (replacing a value of the same type).
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        let scope = self.scope_mut();
        let data = Arc::make_mut(scope.data.get_or_insert_with(Default::default));
        let entry = (
            TypeId::of::<T>(),
            Arc::new(value) as Arc<dyn Any + Send + Sync>,
        );
        match data.0.iter_mut().find(|(id, _)| *id == entry.0) {
            Some(slot) => *slot = entry,
            None => data.0.push(entry),
        }
    }

    /// The policy the call's arguments are read under.
    #[inline]
    pub fn policy(&self) -> &Policy {
        match &self.scope {
            Some(scope) => &scope.policy,
            None => &DEFAULT_POLICY,
        }
    }

    /// The policy, to change in place (a tool puts the limits it states into it).
    #[inline]
    pub fn policy_mut(&mut self) -> &mut Policy {
        &mut self.scope_mut().policy
    }

    /// The call's id, where the caller gave one.
    #[inline]
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// The name the tool was called by: the one the caller gave
    /// ([`with_tool_name`](Context::with_tool_name), which a renamed tool does), else, inside a
    /// tool written with `#[tool]`, its own. `None` for a tool written by hand called by its
    /// own name, which it knows.
    #[inline]
    pub fn tool_name(&self) -> Option<&str> {
        self.tool.as_ref().map(Name::as_str)
    }

    /// Whether the call is to stop: its caller cancelled it, or its deadline has passed (a
    /// [`Timeout`](crate::Timeout) ends a call by its deadline).
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.cancellation()
            .is_some_and(CancellationToken::is_cancelled)
            || self.is_past_deadline()
    }

    /// Completes when the call is to stop (see [`is_cancelled`](Context::is_cancelled)): when
    /// its caller cancels it or its deadline passes; never, for a call that has neither.
    ///
    /// A long tool awaits it beside its work (`select!`) or polls
    /// [`is_cancelled`](Context::is_cancelled) between steps; what it returns after a
    /// cancellation is dropped by most callers, so returning early with
    /// [`stopped_error`](Context::stopped_error) (cancelled, or timed out) is the courteous
    /// answer.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled {
            token: self.cancellation().cloned(),
            slot: None,
            deadline: self.deadline.map(sleep_until),
        }
    }

    /// The token by which the caller cancels this call, where it gave one (the deadline is
    /// not in it: [`is_cancelled`](Context::is_cancelled) and
    /// [`cancelled`](Context::cancelled) see both).
    #[inline]
    pub fn cancellation(&self) -> Option<&CancellationToken> {
        self.scope.as_ref()?.cancellation.as_ref()
    }

    /// Whether the caller's token has cancelled the call (the deadline aside).
    #[inline]
    pub fn is_cancelled_by_caller(&self) -> bool {
        self.cancellation()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// The error of a call of `tool` that stopped because its context did
    /// ([`is_cancelled`](Context::is_cancelled)): [`ToolError::Cancelled`] where its caller
    /// cancelled it, else [`ToolError::TimedOut`], its deadline having passed.
    pub fn stopped_error(&self, tool: impl Into<String>) -> ToolError {
        let tool = tool.into();
        if self.is_cancelled_by_caller() || !self.is_past_deadline() {
            ToolError::Cancelled { tool }
        } else {
            ToolError::TimedOut { tool, after: None }
        }
    }

    /// When the call must have answered by, where it has a deadline.
    #[inline]
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The time left before the deadline (zero once it has passed), where there is one.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline()
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// Whether the deadline has passed.
    pub fn is_past_deadline(&self) -> bool {
        self.deadline().is_some_and(|d| Instant::now() >= d)
    }

    /// Whether nothing can have ended the call yet: no cancellation to see, no deadline to
    /// pass (a default context's case, answered without looking further).
    #[inline]
    pub(crate) fn cannot_have_ended(&self) -> bool {
        self.deadline.is_none() && self.scope.as_ref().is_none_or(|s| s.cancellation.is_none())
    }

    /// Reports progress: over MCP a `notifications/progress` where the client asked for them;
    /// nowhere when the caller takes none.
    pub fn progress(&self, progress: Progress) {
        if let Some(reporter) = self.reporter() {
            reporter.progress(self, progress);
        }
    }

    /// Logs a message about the call: over MCP a `notifications/message` (filtered by the
    /// client's `logging/setLevel`); elsewhere a `tracing` event at the nearest level.
    pub fn log(&self, level: LogLevel, data: impl Into<Value>) {
        let data = data.into();
        match self.reporter() {
            Some(reporter) => reporter.log(self, level, data),
            None => trace_log(self, level, &data),
        }
    }

    fn reporter(&self) -> Option<&Arc<dyn Reporter>> {
        self.scope.as_ref()?.reporter.as_ref()
    }

    /// The request data of type `T` the caller put in.
    ///
    /// # Errors
    /// [`ToolError::MissingData`], naming the type, when the caller put none in.
    pub fn get<T: Send + Sync + 'static>(&self) -> Result<&T, ToolError> {
        self.try_get::<T>().ok_or_else(|| ToolError::MissingData {
            tool: self.tool_name().unwrap_or("").to_owned(),
            type_name: std::any::type_name::<T>(),
        })
    }

    /// The request data of type `T`, or `None`.
    pub fn try_get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        let data = self.scope.as_ref()?.data.as_deref()?;
        data.0
            .iter()
            .find(|(id, _)| *id == TypeId::of::<T>())
            .and_then(|(_, value)| value.downcast_ref::<T>())
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("policy", self.policy())
            .field("call_id", &self.call_id())
            .field("tool", &self.tool_name())
            .field("cancelled", &self.is_cancelled())
            .field("deadline", &self.deadline())
            .field("reporter", &self.reporter().is_some())
            .field("asker", &self.can_ask())
            .field(
                "data",
                &self
                    .scope
                    .as_ref()
                    .and_then(|s| s.data.as_ref())
                    .map_or(0, |d| d.0.len()),
            )
            .finish()
    }
}

/// Typed request data: one value per type.
#[derive(Clone, Default)]
struct Data(Vec<(TypeId, Arc<dyn Any + Send + Sync>)>);

/// How far a call has got.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// How much is done (it only grows, in whatever unit the tool counts).
    pub done: f64,
    /// How much there is in all, where the tool knows.
    pub total: Option<f64>,
    /// What the tool is doing, in words.
    pub message: Option<String>,
}

impl Progress {
    /// `done` so far, of an unknown total.
    pub fn new(done: impl Into<f64>) -> Self {
        Progress {
            done: done.into(),
            total: None,
            message: None,
        }
    }

    /// `done` of `total`.
    pub fn of(done: impl Into<f64>, total: impl Into<f64>) -> Self {
        Progress {
            total: Some(total.into()),
            ..Progress::new(done)
        }
    }

    /// The same progress, saying what the tool is doing.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// How serious a log message is: the eight levels of RFC 5424, as MCP names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something to look at.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken now.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least serious first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name: `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`,
    /// `emergency`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level named `name` (as [`as_str`](LogLevel::as_str) writes it).
    pub fn from_name(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a call's progress and log messages go: what a caller implements to receive them (the
/// MCP server sends them to its client).
pub trait Reporter: Send + Sync {
    /// The call `context` reported `progress`.
    fn progress(&self, context: &Context, progress: Progress);

    /// The call `context` logged `data` at `level`. The default sends it to `tracing`.
    fn log(&self, context: &Context, level: LogLevel, data: Value) {
        trace_log(context, level, &data);
    }
}

/// A log message as a `tracing` event, at the nearest of tracing's levels.
fn trace_log(context: &Context, level: LogLevel, data: &Value) {
    let tool = context.tool_name().unwrap_or("");
    let call_id = context.call_id().unwrap_or("");
    let message: &dyn fmt::Display = match data {
        Value::String(text) => text,
        other => other,
    };
    match level {
        LogLevel::Debug => tracing::debug!(tool, call_id, "{message}"),
        LogLevel::Info | LogLevel::Notice => tracing::info!(tool, call_id, "{message}"),
        LogLevel::Warning => tracing::warn!(tool, call_id, "{message}"),
        LogLevel::Error | LogLevel::Critical | LogLevel::Alert | LogLevel::Emergency => {
            tracing::error!(tool, call_id, "{message}");
        }
    }
}

/// A cancellation that any number of holders can trigger and wait for: cancelling it cancels
/// every [`child`](CancellationToken::child) made from it, never its parent. Clones share one
/// cancellation.
///
/// ```
/// use toolsmith::CancellationToken;
///
/// let call = CancellationToken::new();
/// let step = call.child();
/// call.cancel();
/// assert!(step.is_cancelled());
/// ```
#[derive(Clone)]
pub struct CancellationToken {
    node: Arc<Node>,
}

struct Node {
    cancelled: AtomicBool,
    state: Mutex<NodeState>,
}

#[derive(Default)]
struct NodeState {
    waiters: Vec<(u64, Waker)>,
    children: Vec<Weak<Node>>,
}

/// Ids of waiting futures, to find their own waker again.
static NEXT_WAITER: AtomicU64 = AtomicU64::new(0);

impl CancellationToken {
    /// A token not yet cancelled.
    pub fn new() -> Self {
        CancellationToken {
            node: Arc::new(Node {
                cancelled: AtomicBool::new(false),
                state: Mutex::new(NodeState::default()),
            }),
        }
    }

    /// A token cancelled when this one is (or when it is cancelled itself).
    pub fn child(&self) -> CancellationToken {
        let child = CancellationToken::new();
        let mut state = lock(&self.node.state);
        if self.is_cancelled() {
            child.node.cancelled.store(true, Ordering::Release);
        } else {
            // Children that are gone are dropped whenever the list would grow past twice the
            // live ones, so a long-lived parent keeps no garbage.
            if state.children.len() >= 8 && state.children.len().is_power_of_two() {
                state.children.retain(|c| c.strong_count() > 0);
            }
            state.children.push(Arc::downgrade(&child.node));
        }
        child
    }

    /// Cancels this token and its children; waking every waiter. Cancelling twice does nothing
    /// more.
    pub fn cancel(&self) {
        cancel_node(&self.node);
    }

    /// Whether the token is cancelled.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.node.cancelled.load(Ordering::Acquire)
    }

    /// Completes when the token is cancelled.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled {
            token: Some(self.clone()),
            slot: None,
            deadline: None,
        }
    }
}

impl Default for CancellationToken {
    fn default() -> Self {
        CancellationToken::new()
    }
}

impl fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancellationToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

fn cancel_node(node: &Arc<Node>) {
    if node.cancelled.swap(true, Ordering::AcqRel) {
        return;
    }
    let (waiters, children) = {
        let mut state = lock(&node.state);
        (
            std::mem::take(&mut state.waiters),
            std::mem::take(&mut state.children),
        )
    };
    for (_, waker) in waiters {
        waker.wake();
    }
    for child in children.iter().filter_map(Weak::upgrade) {
        cancel_node(&child);
    }
}

/// The future of [`Context::cancelled`] and [`CancellationToken::cancelled`].
#[must_use = "a future does nothing unless awaited"]
pub struct Cancelled {
    token: Option<CancellationToken>,
    /// This future's waiter id, once it waits.
    slot: Option<u64>,
    /// The call's deadline, for a context's (it completes then too).
    deadline: Option<Sleep>,
}

impl Future for Cancelled {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        if let Some(deadline) = &mut self.deadline
            && Pin::new(deadline).poll(cx).is_ready()
        {
            return Poll::Ready(());
        }
        let Some(token) = &self.token else {
            return Poll::Pending;
        };
        if token.is_cancelled() {
            return Poll::Ready(());
        }
        let node = Arc::clone(&token.node);
        let mut state = lock(&node.state);
        // Checked again under the lock: `cancel` sets the flag before it takes the waiters.
        if node.cancelled.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        let id = *self
            .slot
            .get_or_insert_with(|| NEXT_WAITER.fetch_add(1, Ordering::Relaxed));
        match state.waiters.iter_mut().find(|(w, _)| *w == id) {
            Some((_, waker)) => waker.clone_from(cx.waker()),
            None => state.waiters.push((id, cx.waker().clone())),
        }
        Poll::Pending
    }
}

impl Drop for Cancelled {
    fn drop(&mut self) {
        if let (Some(token), Some(id)) = (&self.token, self.slot) {
            lock(&token.node.state).waiters.retain(|(w, _)| *w != id);
        }
    }
}

impl fmt::Debug for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancelled").finish_non_exhaustive()
    }
}
