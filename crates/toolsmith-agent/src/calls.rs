//! The tool calls of one reply, run at once: each through the registry's layers with its own
//! context (the model's `tool_call_id`, the run's deadline and cancellation), all their
//! futures polled together in the run's own, each answered in the reply's order.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::Poll;
use std::time::{Duration, Instant};

use toolsmith::types::did_you_mean;
use toolsmith::{
    Arguments, Context, Offload, RegisteredTool, Registry, ThreadPerCall, ToolError, ToolFuture,
    ToolPool, ToolResult,
};

use crate::message::ToolCall;
use crate::signature::FINISH;

/// The most tool calls of one reply that run at once; the next starts as one ends.
const PARALLEL_CALLS: usize = 8;
/// The most tool calls of one reply that run at all; the rest are answered without running.
pub const MAX_CALLS_PER_REPLY: usize = 32;

/// The most threads of the agents' shared pool: sync tools often block on I/O (a process, a
/// request), so more than the CPUs; eight agents' full replies at once.
const POOL_THREADS: usize = 8 * PARALLEL_CALLS;

/// Where the agents' sync tools run unless the caller says otherwise: one pool the process's
/// agents share (bounded, its idle threads ending), instead of a thread started per call, which
/// cost more than the rest of a step. Its workers park as soon as they run dry: an agent's next
/// call comes after the model's reply, far later than any spin would last (and within a reply's
/// calls, spinning workers took the CPUs the calls needed: `cargo xtask bench agent`).
///
/// With every pool thread running a call, a call gets a thread of its own ([`SpillOver`]): a
/// sync tool may block far past its run's deadline (a read without a timeout), and calls whose
/// runs gave up on them must not keep every agent of the process waiting.
pub(crate) fn default_offload() -> Arc<dyn Offload> {
    static POOL: LazyLock<Arc<dyn Offload>> = LazyLock::new(|| {
        Arc::new(SpillOver(
            ToolPool::new(POOL_THREADS).with_thread_name("toolsmith-agent"),
        ))
    });
    Arc::clone(&POOL)
}

/// A pool that, saturated, runs a job on a thread of its own instead of queueing it.
struct SpillOver(ToolPool);

impl Offload for SpillOver {
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) -> Result<(), String> {
        if self.0.is_saturated() {
            ThreadPerCall.spawn(job)
        } else {
            self.0.spawn(job)
        }
    }
}

/// Where one call of a reply is.
enum Slot<'c> {
    /// A `finish` call, answered by the loop.
    Finish,
    /// Waiting for a place among the calls running.
    Waiting(&'c RegisteredTool, &'c ToolCall),
    /// Running: its future, polled with the others, and whether its tool is blocking (run on
    /// another thread).
    Running(&'c ToolCall, ToolFuture<'c>, bool),
    /// Answered.
    Done(ToolResult),
}

/// Runs every call of `calls` that is not `finish` through `tools`, in `context` (each under
/// its own call id), and answers them in order: `None` in place of each `finish`. A call of a
/// tool `tools` does not have is answered with the nearest name (`finish` included); calls past
/// [`MAX_CALLS_PER_REPLY`] are answered without running. When `context` is cancelled, the calls
/// still running are answered [`ToolError::Cancelled`] and left behind (dropped: a blocking
/// tool's thread is free again when its tool returns).
///
/// The answers come from the one vector the calls were run in (none at all for a reply that
/// only calls `finish`): a step's bookkeeping allocates no more than its calls need.
pub(crate) async fn run<'c>(
    tools: &'c Registry,
    context: &Context,
    calls: &'c [ToolCall],
) -> Answers<'c> {
    let (calls, refused) = calls.split_at(calls.len().min(MAX_CALLS_PER_REPLY));
    if calls.iter().all(|call| call.name == FINISH) {
        return Answers {
            finishes: calls.len(),
            slots: Vec::new().into_iter(),
            refused: refused.iter(),
        };
    }
    let mut slots: Vec<Slot<'_>> = calls.iter().map(|call| plan(tools, call)).collect();
    if slots.iter().any(|slot| matches!(slot, Slot::Waiting(..))) {
        drive(tools, context, &mut slots).await;
    }
    Answers {
        finishes: 0,
        slots: slots.into_iter(),
        refused: refused.iter(),
    }
}

/// The answers of one reply's calls, in order ([`run`]).
pub(crate) struct Answers<'c> {
    /// Calls of `finish` answered first: a reply of only `finish` calls runs nothing.
    finishes: usize,
    slots: std::vec::IntoIter<Slot<'c>>,
    /// The calls past [`MAX_CALLS_PER_REPLY`], answered without running.
    refused: std::slice::Iter<'c, ToolCall>,
}

impl Iterator for Answers<'_> {
    type Item = Option<ToolResult>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finishes > 0 {
            self.finishes -= 1;
            return Some(None);
        }
        if let Some(slot) = self.slots.next() {
            return Some(match slot {
                Slot::Finish => None,
                Slot::Done(result) => Some(result),
                // `drive` leaves no call unanswered; this is never reached.
                Slot::Waiting(_, call) | Slot::Running(call, ..) => Some(Err(cancelled(call))),
            });
        }
        self.refused.next().map(|call| {
            Some(Err(ToolError::Failed {
                tool: call.name.clone(),
                message: format!(
                    "not run: at most {MAX_CALLS_PER_REPLY} tool calls are run per reply"
                ),
            }))
        })
    }
}

fn plan<'c>(tools: &'c Registry, call: &'c ToolCall) -> Slot<'c> {
    if call.name == FINISH {
        return Slot::Finish;
    }
    match tools.entry(&call.name) {
        Some(entry) => Slot::Waiting(entry, call),
        None => Slot::Done(Err(ToolError::NotFound {
            name: call.name.clone(),
            did_you_mean: did_you_mean(&call.name, tools.names().chain([FINISH])),
        })),
    }
}

fn cancelled(call: &ToolCall) -> ToolError {
    ToolError::Cancelled {
        tool: call.name.clone(),
    }
}

/// Polls the calls of `slots` together, starting them in order, at most [`PARALLEL_CALLS`] at
/// a time, until each is done or `context` is cancelled.
fn drive<'c>(
    tools: &'c Registry,
    context: &Context,
    slots: &mut [Slot<'c>],
) -> impl Future<Output = ()> {
    let mut cancellation = context.cancelled();
    // When the calls were started, or one last ended.
    let mut progress: Option<Instant> = None;
    std::future::poll_fn(move |cx| {
        loop {
            let mut running = slots
                .iter()
                .filter(|slot| matches!(slot, Slot::Running(..)))
                .count();
            for slot in slots.iter_mut() {
                if running >= PARALLEL_CALLS {
                    break;
                }
                if let Slot::Waiting(entry, call) = *slot {
                    let call_context = context.clone().with_call_id(call.id.as_str());
                    let arguments = Arguments::Json(&call.arguments);
                    let blocking = entry.tool().is_blocking();
                    let future = tools.call_entry(entry, arguments, call_context);
                    *slot = Slot::Running(call, future, blocking);
                    running += 1;
                }
            }
            let mut ended = false;
            for slot in slots.iter_mut() {
                if let Slot::Running(_, future, _) = slot
                    && let Poll::Ready(result) = Pin::new(future).poll(cx)
                {
                    *slot = Slot::Done(result);
                    ended = true;
                    progress = None;
                }
            }
            let waiting = slots.iter().any(|slot| matches!(slot, Slot::Waiting(..)));
            if !waiting && !slots.iter().any(|slot| matches!(slot, Slot::Running(..))) {
                return Poll::Ready(());
            }
            // A call that ended made room for a waiting one: start it now.
            if !(ended && waiting) {
                break;
            }
        }
        if Pin::new(&mut cancellation).poll(cx).is_ready() {
            for slot in slots.iter_mut() {
                if let Slot::Waiting(_, call) | Slot::Running(call, ..) = *slot {
                    *slot = Slot::Done(Err(context.stopped_error(call.name.as_str())));
                }
            }
            return Poll::Ready(());
        }
        // A blocking call's answer comes from another thread, most within microseconds: the
        // run yields and looks again for a while rather than sleep until that thread wakes it
        // (a wake costs more than such a call). Not with one CPU, where the call's thread
        // could run only once this one stops.
        let since = *progress.get_or_insert_with(Instant::now);
        let blocking = slots
            .iter()
            .any(|slot| matches!(slot, Slot::Running(_, _, true)));
        if blocking && spinning_pays() && since.elapsed() < ANSWER_SPIN {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    })
}

/// How long a run keeps looking for a blocking call's answer (yielding to its executor between
/// looks) before it waits to be woken, from when it last saw a call end.
const ANSWER_SPIN: Duration = Duration::from_micros(50);

/// Whether looking again for an answer from another thread can pay: only when this process
/// may run on more than one CPU.
fn spinning_pays() -> bool {
    static PAYS: LazyLock<bool> =
        LazyLock::new(|| std::thread::available_parallelism().is_ok_and(|cpus| cpus.get() > 1));
    *PAYS
}
