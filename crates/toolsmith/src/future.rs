//! The future a call returns ([`ToolFuture`]), the blocking entry point ([`block_on`]), and the
//! small runtime-free pieces the layers need: catching a panic while polling, a timer thread,
//! a one-shot answer from another thread.

use std::any::Any;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::{Poll, Wake, Waker};
use std::time::Instant;

use crate::{Tool, ToolError, ToolOutput};

/// What a call answers.
pub type ToolResult = Result<ToolOutput, ToolError>;

/// The future of a call: [`Send`], pollable by any executor.
///
/// A call that finished as it was made (a sync tool, arguments refused before the tool ran) is
/// [`ready`](ToolFuture::ready) and costs no allocation; an async tool's is boxed
/// ([`new`](ToolFuture::new)).
#[must_use = "a call does nothing unless awaited"]
pub struct ToolFuture<'a>(Repr<'a>);

type BoxedCall<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

enum Repr<'a> {
    Ready(Option<ToolResult>),
    Boxed(BoxedCall<'a>),
    /// A boxed call whose panics while it is polled answer [`ToolError::Panicked`], naming
    /// the tool: [`CatchPanic`](crate::CatchPanic)'s work, done in place rather than in a
    /// second box around the first (an allocation on every async call).
    Caught {
        future: BoxedCall<'a>,
        tool: &'a dyn Tool,
        renamed: Option<Arc<str>>,
    },
}

impl<'a> ToolFuture<'a> {
    /// A call that has its answer already.
    #[inline]
    pub fn ready(result: ToolResult) -> Self {
        ToolFuture(Repr::Ready(Some(result)))
    }

    /// A call that answers when `future` does.
    #[inline]
    pub fn new(future: impl Future<Output = ToolResult> + Send + 'a) -> Self {
        ToolFuture(Repr::Boxed(Box::pin(future)))
    }

    /// The answer, where the call has it already: a layer that only looks at it returns the
    /// future as it is, instead of taking the answer out and wrapping it again.
    #[inline]
    pub(crate) fn answer(&self) -> Option<&ToolResult> {
        match &self.0 {
            Repr::Ready(Some(result)) => Some(result),
            _ => None,
        }
    }

    /// Whether the call has its answer already.
    #[inline]
    pub(crate) fn is_ready(&self) -> bool {
        self.answer().is_some()
    }

    /// The same call, a panic while it is polled answering [`ToolError::Panicked`] for
    /// `tool` (or `renamed`, the name it was called by where that is not its own).
    pub(crate) fn catching_panics(self, tool: &'a dyn Tool, renamed: Option<Arc<str>>) -> Self {
        match self.0 {
            Repr::Boxed(future) => ToolFuture(Repr::Caught {
                future,
                tool,
                renamed,
            }),
            // A ready call cannot panic any more; a caught one is caught already.
            repr => ToolFuture(repr),
        }
    }

    /// The answer, if the call has it already; else the future back.
    ///
    /// # Errors
    /// The future itself, when it has yet to be polled to its answer.
    #[inline]
    pub fn into_ready(self) -> Result<ToolResult, Self> {
        match self.0 {
            Repr::Ready(Some(result)) => Ok(result),
            other => Err(ToolFuture(other)),
        }
    }
}

impl Future for ToolFuture<'_> {
    type Output = ToolResult;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<ToolResult> {
        match &mut self.0 {
            Repr::Ready(result) => match result.take() {
                Some(result) => Poll::Ready(result),
                // Polled again after its answer: a caller's bug, answered as one.
                None => Poll::Ready(Err(ToolError::Failed {
                    tool: String::new(),
                    message: "the call was polled after it had answered".to_owned(),
                })),
            },
            Repr::Boxed(future) => future.as_mut().poll(cx),
            Repr::Caught {
                future,
                tool,
                renamed,
            } => match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
                Ok(poll) => poll,
                Err(payload) => {
                    let panicked = ToolError::Panicked {
                        tool: renamed.as_deref().unwrap_or(tool.name()).to_owned(),
                        message: panic_message(payload.as_ref()),
                    };
                    // The future that panicked is dropped here, where a panic of its own
                    // cannot reach the caller either.
                    let this = self.get_mut();
                    let spent = std::mem::replace(&mut this.0, Repr::Ready(None));
                    let _ = catch_unwind(AssertUnwindSafe(move || drop(spent)));
                    Poll::Ready(Err(panicked))
                }
            },
        }
    }
}

impl fmt::Debug for ToolFuture<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.0 {
            Repr::Ready(_) => "ready",
            Repr::Boxed(_) | Repr::Caught { .. } => "pending",
        };
        f.debug_tuple("ToolFuture").field(&state).finish()
    }
}

/// Why [`block_on`] would not run a future.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsideRuntime;

impl fmt::Display for InsideRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a blocking call was made from inside an async runtime, where blocking the thread \
             could deadlock it; await the call (`Registry::call`, `Tool::call`) instead",
        )
    }
}

impl std::error::Error for InsideRuntime {}

/// Runs `future` to its end on this thread: the blocking entry point for sync code (a CLI,
/// tests, scripts).
///
/// With the crate's `tokio` feature, the future runs inside a tokio runtime of this thread's
/// own (so a tool that uses tokio's timers or sockets works), and a call from inside a tokio
/// runtime is refused instead of panicking or deadlocking. Without it, the future is polled on
/// this thread, parked between wake-ups.
///
/// ```
/// let answer = toolsmith::block_on(async { 40 + 2 })?;
/// assert_eq!(answer, 42);
/// # Ok::<(), toolsmith::InsideRuntime>(())
/// ```
///
/// # Errors
/// [`InsideRuntime`] when called from inside a tokio runtime (with the `tokio` feature).
pub fn block_on<F: Future>(future: F) -> Result<F::Output, InsideRuntime> {
    if inside_runtime() {
        return Err(InsideRuntime);
    }
    #[cfg(feature = "tokio")]
    {
        thread_local! {
            static RUNTIME: Option<tokio::runtime::Runtime> = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok();
        }
        let mut future = std::pin::pin!(future);
        let ran = RUNTIME.try_with(|runtime| {
            runtime
                .as_ref()
                .map(|runtime| runtime.block_on(future.as_mut()))
        });
        match ran {
            Ok(Some(output)) => Ok(output),
            // No runtime could be built (or this thread is ending): polled here instead.
            _ => Ok(park_on(future)),
        }
    }
    #[cfg(not(feature = "tokio"))]
    {
        Ok(park_on(future))
    }
}

/// The call `make` makes, run as [`block_on`] runs a future; refused before `make` is called,
/// so that nothing of the call runs where its answer could not be waited for (a sync tool's body
/// runs when its call is made). A call that answered as it was made is not handed to a runtime
/// at all (entering tokio's was twice the cost of a trivial call).
pub(crate) fn block_on_call<'a>(
    make: impl FnOnce() -> ToolFuture<'a>,
) -> Result<ToolResult, InsideRuntime> {
    if inside_runtime() {
        return Err(InsideRuntime);
    }
    match make().into_ready() {
        Ok(answer) => Ok(answer),
        Err(pending) => block_on(pending),
    }
}

/// Whether this thread is inside a runtime where blocking could deadlock (a tokio runtime,
/// with the `tokio` feature; nothing can be told without it).
fn inside_runtime() -> bool {
    #[cfg(feature = "tokio")]
    {
        tokio::runtime::Handle::try_current().is_ok()
    }
    #[cfg(not(feature = "tokio"))]
    {
        false
    }
}

/// Polls `future` on this thread, parking it until woken.
pub(crate) fn park_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

/// The text of a panic's payload, where it has one.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// Completes at `deadline`, woken by one timer thread the process shares (started on first use).
pub(crate) struct Sleep {
    deadline: Instant,
    id: Option<u64>,
    /// The waker the timer holds for this sleep: polled again by the same task (a caller that
    /// spins on a call's answer polls many times), nothing needs to change under the lock.
    registered: Option<Waker>,
}

pub(crate) fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        id: None,
        registered: None,
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            return Poll::Ready(());
        }
        let Some(timer) = timer() else {
            // No timer thread could be started: the deadline is checked whenever the future is
            // polled for another reason, which is the best left to do.
            return Poll::Pending;
        };
        if self
            .registered
            .as_ref()
            .is_some_and(|known| known.will_wake(cx.waker()))
        {
            return Poll::Pending;
        }
        let id = *self
            .id
            .get_or_insert_with(|| timer.next.fetch_add(1, Ordering::Relaxed));
        timer.register(id, self.deadline, cx.waker());
        self.registered = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let (Some(id), Some(timer)) = (self.id, TIMER.get().and_then(Option::as_ref)) {
            let mut state = lock(&timer.state);
            state.wakers.remove(&id);
            // A deadline dropped before it passed stays queued until it passes: under a long
            // timeout the queue would hold one for every call made meanwhile. Once most are
            // such, they go (each sweep removes at least half the queue: a constant per call).
            if state.queue.len() > 64 && state.queue.len() > 2 * state.wakers.len() {
                let TimerState { queue, wakers } = &mut *state;
                queue.retain(|std::cmp::Reverse((_, id))| wakers.contains_key(id));
            }
        }
    }
}

struct Timer {
    state: Mutex<TimerState>,
    changed: Condvar,
    next: AtomicU64,
}

#[derive(Default)]
struct TimerState {
    /// Deadlines, earliest first (a deadline whose waker is gone is skipped).
    queue: BinaryHeap<std::cmp::Reverse<(Instant, u64)>>,
    wakers: HashMap<u64, Waker>,
}

static TIMER: OnceLock<Option<Arc<Timer>>> = OnceLock::new();

fn timer() -> Option<&'static Arc<Timer>> {
    TIMER
        .get_or_init(|| {
            let timer = Arc::new(Timer {
                state: Mutex::new(TimerState::default()),
                changed: Condvar::new(),
                next: AtomicU64::new(0),
            });
            let running = Arc::clone(&timer);
            std::thread::Builder::new()
                .name("toolsmith-timer".to_owned())
                .spawn(move || running.run())
                .ok()
                .map(|_| timer)
        })
        .as_ref()
}

impl Timer {
    fn register(&self, id: u64, deadline: Instant, waker: &Waker) {
        let mut state = lock(&self.state);
        match state.wakers.get_mut(&id) {
            Some(known) => known.clone_from(waker),
            None => {
                state.wakers.insert(id, waker.clone());
                let earliest = state.queue.peek().is_none_or(|e| deadline < e.0.0);
                state.queue.push(std::cmp::Reverse((deadline, id)));
                if earliest {
                    self.changed.notify_one();
                }
            }
        }
    }

    fn run(&self) {
        let mut state = lock(&self.state);
        loop {
            let now = Instant::now();
            while let Some(std::cmp::Reverse((deadline, id))) = state.queue.peek().copied() {
                if deadline > now {
                    break;
                }
                state.queue.pop();
                if let Some(waker) = state.wakers.remove(&id) {
                    waker.wake();
                }
            }
            state = match state.queue.peek() {
                Some(std::cmp::Reverse((deadline, _))) => {
                    let wait = deadline.saturating_duration_since(now);
                    self.changed
                        .wait_timeout(state, wait)
                        .map(|(state, _)| state)
                        .unwrap_or_else(|poisoned| poisoned.into_inner().0)
                }
                None => self
                    .changed
                    .wait(state)
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            };
        }
    }
}

/// A lock that a panic elsewhere does not make unusable: every state the crate guards stays
/// consistent at each step, so a poisoned lock's data is used as it is.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One answer sent from another thread: the sending half.
pub(crate) struct Sender<T>(Arc<Mutex<Slot<T>>>);

/// The receiving half: a future of the answer, `None` when the sender was dropped unsent.
pub(crate) struct Receiver<T>(Arc<Mutex<Slot<T>>>);

struct Slot<T> {
    value: Option<T>,
    closed: bool,
    waker: Option<Waker>,
}

pub(crate) fn oneshot<T>() -> (Sender<T>, Receiver<T>) {
    let slot = Arc::new(Mutex::new(Slot {
        value: None,
        closed: false,
        waker: None,
    }));
    (Sender(Arc::clone(&slot)), Receiver(slot))
}

impl<T> Sender<T> {
    pub(crate) fn send(self, value: T) {
        lock(&self.0).value = Some(value);
        // Drop wakes the receiver.
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut slot = lock(&self.0);
            slot.closed = true;
            slot.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> Future for Receiver<T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Option<T>> {
        let mut slot = lock(&self.0);
        if let Some(value) = slot.value.take() {
            return Poll::Ready(Some(value));
        }
        if slot.closed {
            return Poll::Ready(None);
        }
        slot.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn deadlines_dropped_before_they_pass_do_not_pile_up() {
        let far = Instant::now() + Duration::from_secs(3600);
        let mut cx = std::task::Context::from_waker(Waker::noop());
        for _ in 0..10_000 {
            let mut sleep = std::pin::pin!(sleep_until(far));
            assert!(sleep.as_mut().poll(&mut cx).is_pending());
        }
        let Some(timer) = timer() else {
            return;
        };
        let queued = lock(&timer.state).queue.len();
        assert!(queued < 1_000, "{queued} deadlines still queued");
    }
}
