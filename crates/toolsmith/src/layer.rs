//! Layers: what wraps every call from outside, once, for every caller (a [`Registry`]'s stack).
//!
//! A [`Layer`] sees a [`Call`] (the tool, its arguments, its [`Context`]) and the rest of the
//! stack ([`Next`]); it may change the context, answer without going on, or wrap what the rest
//! answers. The built-in ones: [`CatchPanic`], [`Trace`], [`Timeout`], [`ConcurrencyLimit`] and
//! [`Stats`](crate::Stats)'s layer. A layer whose work is done when the rest answers at once (a
//! sync tool, refused arguments) adds no allocation.
//!
//! [`Registry`]: crate::Registry

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use serde_json::Value;
use toolsmith_types::Arguments;

use crate::future::{ToolResult, lock, oneshot, panic_message, park_on, sleep_until};
use crate::{Context, Tool, ToolError, ToolFuture};

/// One call on its way to its tool.
pub struct Call<'a> {
    /// The tool called.
    pub tool: &'a Arc<dyn Tool>,
    /// Its arguments, as sent.
    pub arguments: Arguments<'a>,
    /// Its context.
    pub context: Context,
}

impl Call<'_> {
    /// The name the call was made by where it is not the tool's own (never, for a registry's
    /// calls: it names each tool by its own name): what a layer keeps to name the tool after
    /// the call has gone on, without copying a name on every call (an `Arc`'s count, two
    /// atomic operations, was a tenth of a trivial call's time). Inlined: for a registry's
    /// call it is a check that the context names no tool.
    #[inline]
    pub(crate) fn renamed(&self) -> Option<Arc<str>> {
        self.context
            .tool_name()
            .filter(|name| *name != self.tool.name())
            .map(Arc::from)
    }

    /// The name the call was made by: the context's where it names one, else the tool's own.
    pub fn name(&self) -> &str {
        self.context.tool_name().unwrap_or(self.tool.name())
    }
}

impl fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("tool", &self.tool.name())
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

/// Something that wraps every call: it sees the [`Call`] (the tool, its arguments, its
/// [`Context`]) and the rest of the stack ([`Next`]), and may change the context, answer
/// without going on, or wrap what the rest answers. The built-in ones: [`CatchPanic`],
/// [`Trace`], [`Timeout`], [`ConcurrencyLimit`] and [`Stats`](crate::Stats)'s layer.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use toolsmith::{Arguments, Call, Context, Layer, Next, Registry, ToolFuture};
///
/// /// Counts calls.
/// #[derive(Default)]
/// struct Count(AtomicUsize);
///
/// impl Layer for Count {
///     fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> ToolFuture<'a> {
///         self.0.fetch_add(1, Ordering::Relaxed);
///         next.run(call)
///     }
/// }
///
/// /// Says hello.
/// #[toolsmith::tool]
/// fn greet(name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// let count = Arc::new(Count::default());
/// let mut registry = Registry::new().with_layer(count.clone());
/// registry.add(Arc::new(Greet))?;
/// registry.call_blocking("greet", Arguments::Text(r#"{"name": "Ada"}"#), Context::new())?;
/// assert_eq!(count.0.load(Ordering::Relaxed), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Layer: Send + Sync {
    /// Handles `call`, going on with `next.run(call)` (or not).
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> ToolFuture<'a>;
}

impl<L: Layer + ?Sized> Layer for Arc<L> {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> ToolFuture<'a> {
        (**self).call(call, next)
    }
}

/// Runs blocking work on a thread where it may block: how a caller on an async executor keeps
/// a sync tool off the executor's threads (see [`Tool::is_blocking`]).
pub trait Offload: Send + Sync {
    /// Runs `job` on such a thread.
    ///
    /// # Errors
    /// Why it cannot now (every thread busy, say), in words for the caller.
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) -> Result<(), String>;
}

/// [`Offload`] onto a new thread per call: for callers with few calls and no pool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadPerCall;

impl Offload for ThreadPerCall {
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) -> Result<(), String> {
        std::thread::Builder::new()
            .name("toolsmith-tool".to_owned())
            .spawn(job)
            .map(drop)
            .map_err(|e| format!("no thread could be started for the call ({e})"))
    }
}

/// The rest of the stack after a layer.
#[derive(Clone, Copy)]
pub struct Next<'a> {
    rest: &'a [Arc<dyn Layer>],
    offload: Option<&'a Arc<dyn Offload>>,
}

impl<'a> Next<'a> {
    /// The stack `layers` (outermost first) over the tool, blocking tools run through
    /// `offload` where one is given.
    pub fn new(layers: &'a [Arc<dyn Layer>], offload: Option<&'a Arc<dyn Offload>>) -> Self {
        Next {
            rest: layers,
            offload,
        }
    }

    /// Goes on with `call`: the next layer, else the tool.
    ///
    /// Inlined into each layer: a frame of its own moved the call (56 bytes) in and the
    /// answer (120 bytes) out once more per layer.
    #[inline]
    pub fn run(self, call: Call<'a>) -> ToolFuture<'a> {
        match self.rest.split_first() {
            Some((layer, rest)) => layer.call(
                call,
                Next {
                    rest,
                    offload: self.offload,
                },
            ),
            None => invoke(call, self.offload),
        }
    }
}

impl fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("layers", &self.rest.len())
            .field("offload", &self.offload.is_some())
            .finish()
    }
}

/// The tool itself (which reads its arguments under the limits it states): a call already
/// cancelled or past its deadline refused, a blocking tool offloaded where the caller said how.
#[inline]
fn invoke<'a>(call: Call<'a>, offload: Option<&'a Arc<dyn Offload>>) -> ToolFuture<'a> {
    let Call {
        tool,
        arguments,
        context,
    } = call;
    if let Some(refused) = refuse_before_start(|| tool.name(), &context) {
        return ToolFuture::ready(Err(refused));
    }
    match offload {
        Some(offload) if tool.is_blocking() => offloaded(offload, tool, arguments, context),
        _ => tool.call(arguments, context),
    }
}

/// The error for a call that must not start: cancelled, or past its deadline.
///
/// Every call passes here, most with a context that nothing can end: that check is inlined,
/// and the tool's own name (a dynamic call for a `dyn Tool`) is asked for only to refuse.
#[inline]
pub(crate) fn refuse_before_start<'t>(
    tool: impl FnOnce() -> &'t str,
    context: &Context,
) -> Option<ToolError> {
    if context.cannot_have_ended() {
        return None;
    }
    refusal(tool(), context)
}

/// [`refuse_before_start`] for a context that can have ended.
fn refusal(tool: &str, context: &Context) -> Option<ToolError> {
    context
        .is_cancelled()
        .then(|| context.stopped_error(context.tool_name().unwrap_or(tool)))
}

/// A blocking tool's call, run through `offload`, its answer awaited here.
fn offloaded<'a>(
    offload: &Arc<dyn Offload>,
    tool: &Arc<dyn Tool>,
    arguments: Arguments<'_>,
    context: Context,
) -> ToolFuture<'a> {
    let name = context.tool_name().unwrap_or(tool.name()).to_owned();
    let tool = Arc::clone(tool);
    let arguments = OwnedArguments::from(arguments);
    let (sender, receiver) = oneshot();
    let job = Box::new(move || {
        // A call that waited for a thread (every thread of a pool busy) until it was
        // cancelled or its deadline passed is answered so, without running.
        if let Some(refused) = refuse_before_start(|| tool.name(), &context) {
            sender.send(Err(refused));
            return;
        }
        let result = catch_unwind(AssertUnwindSafe(|| {
            park_on(tool.call(arguments.borrow(), context))
        }))
        .unwrap_or_else(|payload| {
            Err(ToolError::Panicked {
                tool: tool.name().to_owned(),
                message: panic_message(payload.as_ref()),
            })
        });
        sender.send(result);
    });
    if let Err(reason) = offload.spawn(job) {
        return ToolFuture::ready(Err(ToolError::Unavailable { tool: name, reason }));
    }
    ToolFuture::new(async move {
        receiver.await.unwrap_or_else(|| {
            Err(ToolError::Unavailable {
                tool: name,
                reason: "the thread that was to run the call dropped it".to_owned(),
            })
        })
    })
}

/// Arguments that outlive the request they came in: what crosses to another thread.
enum OwnedArguments {
    Text(String),
    Json(Value),
}

impl From<Arguments<'_>> for OwnedArguments {
    fn from(arguments: Arguments<'_>) -> Self {
        match arguments {
            Arguments::Text(text) => OwnedArguments::Text(text.to_owned()),
            Arguments::Json(value) => OwnedArguments::Json(value.clone()),
        }
    }
}

impl OwnedArguments {
    fn borrow(&self) -> Arguments<'_> {
        match self {
            OwnedArguments::Text(text) => Arguments::Text(text),
            OwnedArguments::Json(value) => Arguments::Json(value),
        }
    }
}

/// Turns a panic in the rest of the stack (or in the tool) into [`ToolError::Panicked`], so
/// that the caller keeps running. In a [`Registry`](crate::Registry)'s default stack.
#[derive(Debug, Clone, Copy, Default)]
pub struct CatchPanic;

impl Layer for CatchPanic {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> ToolFuture<'a> {
        let tool = call.tool;
        let renamed = call.renamed();
        match catch_unwind(AssertUnwindSafe(|| next.run(call))) {
            Err(payload) => ToolFuture::ready(Err(ToolError::Panicked {
                tool: renamed.as_deref().unwrap_or(tool.name()).to_owned(),
                message: panic_message(payload.as_ref()),
            })),
            Ok(future) => future.catching_panics(tool.as_ref(), renamed),
        }
    }
}

/// A `tracing` span per call, named and with fields as OpenTelemetry's GenAI conventions say:
/// `execute_tool`, with `gen_ai.operation.name = "execute_tool"`, `gen_ai.tool.name`,
/// `gen_ai.tool.call.id`, and, once the call answers, `toolsmith.repairs` (the repairs' codes,
/// comma-separated) and `error.type` (the error's [`code`](ToolError::code)). With no
/// subscriber listening it costs a check. In a [`Registry`](crate::Registry)'s default stack.
#[derive(Debug, Clone, Copy, Default)]
pub struct Trace;

impl Layer for Trace {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> ToolFuture<'a> {
        // The fields are written only where a subscriber takes the span: with none, finding
        // out costs a check, and nothing of the call is looked at.
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = tracing::field::Empty,
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = call.name(),
            gen_ai.tool.call.id = tracing::field::Empty,
            toolsmith.repairs = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        if span.is_disabled() {
            return next.run(call);
        }
        let name = call.name();
        span.record("otel.name", format!("execute_tool {name}"));
        if let Some(id) = call.context.call_id() {
            span.record("gen_ai.tool.call.id", id);
        }
        let future = span.in_scope(|| next.run(call));
        if let Some(result) = future.answer() {
            record_answer(&span, result);
            return future;
        }
        use tracing::Instrument as _;
        let recorded = span.clone();
        ToolFuture::new(
            async move {
                let result = future.await;
                record_answer(&recorded, &result);
                result
            }
            .instrument(span),
        )
    }
}

fn record_answer(span: &tracing::Span, result: &ToolResult) {
    match result {
        Ok(output) if !output.repairs.is_empty() => {
            let codes: Vec<&str> = output.repairs.iter().map(|r| r.code.as_str()).collect();
            span.record("toolsmith.repairs", codes.join(","));
        }
        Ok(_) => {}
        Err(error) => {
            span.record("error.type", error.code());
        }
    }
}

/// Bounds each call's time: it gives the call's context a deadline, past which the context is
/// cancelled (the tool sees it: [`Context::is_cancelled`], [`Context::cancelled`]) and the call
/// answers [`ToolError::TimedOut`]. A deadline the context has already that comes sooner holds
/// instead (and is enforced even by `Timeout::deadline()`, which sets none of its own).
///
/// The deadline is the cancellation: a call that answers as it is made (a sync tool, most
/// async ones) costs the layer a look at the clock where it sets a deadline of its own, and
/// nothing more, not even that under `Timeout::deadline()`. A call dropped before its deadline
/// (its caller stopped waiting) is not cancelled by this layer: an async tool's future is
/// dropped with it, and a caller that runs blocking tools on other threads cancels them with
/// its own [`CancellationToken`](crate::CancellationToken) (as an agent's run does when it is dropped).
#[derive(Debug, Clone, Copy)]
pub struct Timeout {
    after: Option<Duration>,
}

impl Timeout {
    /// At most `after` per call.
    pub fn new(after: Duration) -> Self {
        Timeout { after: Some(after) }
    }

    /// Only the deadline each call's context has, where it has one.
    pub fn deadline() -> Self {
        Timeout { after: None }
    }
}

impl Layer for Timeout {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> ToolFuture<'a> {
        let Call {
            tool,
            arguments,
            mut context,
        } = call;
        let own = self.after.map(|after| Instant::now() + after);
        if let Some(own) = own {
            context = context.with_deadline(own);
        }
        let Some(deadline) = context.deadline() else {
            return next.run(Call {
                tool,
                arguments,
                context,
            });
        };
        // The layer's own time when it is what ends the call, for the message.
        let after = self.after.filter(|_| own == Some(deadline));
        let call = Call {
            tool,
            arguments,
            context,
        };
        let name = call.renamed();
        let mut future = next.run(call);
        if future.is_ready() {
            return future;
        }
        ToolFuture::new(async move {
            let mut sleep = std::pin::pin!(sleep_until(deadline));
            // The tool's context is cancelled by now: its deadline has passed.
            let timed_out = || {
                Poll::Ready(Err(ToolError::TimedOut {
                    tool: name.as_deref().unwrap_or(tool.name()).to_owned(),
                    after,
                }))
            };
            // Whether the call has been polled: its first poll follows the look at the
            // deadline the call was made after (the stack refuses a call past it), so only later
            // ones read the clock first.
            let mut polled = false;
            std::future::poll_fn(|cx| {
                // The deadline before the call: where two timeouts share one (a layer's own,
                // and a deadline layer inside it that reads it from the context), the outer
                // answers, saying its own time.
                if std::mem::replace(&mut polled, true) && Instant::now() >= deadline {
                    return timed_out();
                }
                if let Poll::Ready(answer) = Pin::new(&mut future).poll(cx) {
                    return Poll::Ready(answer);
                }
                // Still running: only now is the timer asked to wake the call at its deadline
                // (a call that answers on its first poll, most async tools, never asks).
                if sleep.as_mut().poll(cx).is_ready() {
                    return timed_out();
                }
                Poll::Pending
            })
            .await
        })
    }
}

/// At most so many calls at once; the rest wait their turn, in order (a call cancelled while it
/// waits answers [`ToolError::Cancelled`], or [`ToolError::TimedOut`] when its deadline passes,
/// and leaves the queue).
#[derive(Clone)]
pub struct ConcurrencyLimit {
    state: Arc<Mutex<Permits>>,
}

struct Permits {
    available: usize,
    waiters: VecDeque<(u64, Option<Waker>)>,
    next_id: u64,
}

impl ConcurrencyLimit {
    /// At most `limit` calls at once (at least one).
    pub fn new(limit: usize) -> Self {
        ConcurrencyLimit {
            state: Arc::new(Mutex::new(Permits {
                available: limit.max(1),
                waiters: VecDeque::new(),
                next_id: 0,
            })),
        }
    }

    /// Calls that could start now.
    pub fn available(&self) -> usize {
        lock(&self.state).available
    }
}

impl fmt::Debug for ConcurrencyLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("ConcurrencyLimit")
            .field("available", &state.available)
            .field("waiting", &state.waiters.len())
            .finish()
    }
}

/// A place taken; given back when dropped.
struct Permit(Arc<Mutex<Permits>>);

impl Drop for Permit {
    fn drop(&mut self) {
        let waker = {
            let mut state = lock(&self.0);
            state.available += 1;
            state.waiters.front_mut().and_then(|(_, w)| w.take())
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// A call waiting for a place (its entry leaves the queue when dropped).
struct Waiting {
    state: Arc<Mutex<Permits>>,
    id: Option<u64>,
}

impl Waiting {
    fn poll_acquire(&mut self, cx: &mut std::task::Context<'_>) -> Poll<Permit> {
        let mut state = lock(&self.state);
        let first = match self.id {
            None => state.waiters.is_empty(),
            Some(id) => state.waiters.front().is_some_and(|(w, _)| *w == id),
        };
        if first && state.available > 0 {
            state.available -= 1;
            if self.id.take().is_some() {
                state.waiters.pop_front();
            }
            return Poll::Ready(Permit(Arc::clone(&self.state)));
        }
        let id = match self.id {
            Some(id) => id,
            None => {
                let id = state.next_id;
                state.next_id += 1;
                state.waiters.push_back((id, None));
                self.id = Some(id);
                id
            }
        };
        if let Some((_, waker)) = state.waiters.iter_mut().find(|(w, _)| *w == id) {
            *waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let Some(id) = self.id else {
            return;
        };
        let waker = {
            let mut state = lock(&self.state);
            state.waiters.retain(|(w, _)| *w != id);
            // A place this waiter was woken for goes to the next one.
            if state.available > 0 {
                state.waiters.front_mut().and_then(|(_, w)| w.take())
            } else {
                None
            }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl Layer for ConcurrencyLimit {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> ToolFuture<'a> {
        let mut waiting = Waiting {
            state: Arc::clone(&self.state),
            id: None,
        };
        let mut noop = std::task::Context::from_waker(Waker::noop());
        if let Poll::Ready(permit) = waiting.poll_acquire(&mut noop) {
            let future = next.run(call);
            if future.is_ready() {
                return future;
            }
            return ToolFuture::new(async move {
                let result = future.await;
                drop(permit);
                result
            });
        }
        ToolFuture::new(async move {
            let cancelled = call.context.cancelled();
            let mut cancelled = std::pin::pin!(cancelled);
            let acquired = std::future::poll_fn(|cx| {
                if let Poll::Ready(permit) = waiting.poll_acquire(cx) {
                    return Poll::Ready(Some(permit));
                }
                cancelled.as_mut().poll(cx).map(|()| None)
            })
            .await;
            let Some(permit) = acquired else {
                return Err(call.context.stopped_error(call.name()));
            };
            drop(waiting);
            let result = next.run(call).await;
            drop(permit);
            result
        })
    }
}
