//! The tool calls of one reply, run at once: each through the registry's layers with its own
//! context (the model's `tool_call_id`, the run's deadline and cancellation), all their
//! futures polled together in the run's own, each answered in the reply's order.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use toolsmith::{
    Arguments, Context, RegisteredTool, Registry, ToolError, ToolFuture, ToolResult, did_you_mean,
};

use crate::message::ToolCall;
use crate::signature::FINISH;

/// The most tool calls of one reply that run at once; the next starts as one ends.
const PARALLEL_CALLS: usize = 8;
/// The most tool calls of one reply that run at all; the rest are answered without running.
pub const MAX_CALLS_PER_REPLY: usize = 32;

/// Where one call of a reply is.
enum Slot<'c> {
    /// A `finish` call, answered by the loop.
    Finish,
    /// Waiting for a place among the calls running.
    Waiting(&'c RegisteredTool, &'c ToolCall),
    /// Running: its future, polled with the others.
    Running(&'c ToolCall, ToolFuture<'c>),
    /// Answered.
    Done(ToolResult),
}

/// Runs every call of `calls` that is not `finish` through `tools`, in `context` (each under
/// its own call id), and answers them in order: `None` in place of each `finish`. A call of a
/// tool `tools` does not have is answered with the nearest name (`finish` included); calls past
/// [`MAX_CALLS_PER_REPLY`] are answered without running. When `context` is cancelled, the calls
/// still running are answered [`ToolError::Cancelled`] and left behind (dropped: a blocking
/// tool's thread ends when its tool returns).
pub(crate) async fn run(
    tools: &Registry,
    context: &Context,
    calls: &[ToolCall],
) -> Vec<Option<ToolResult>> {
    let (calls, refused) = calls.split_at(calls.len().min(MAX_CALLS_PER_REPLY));
    let mut slots: Vec<Slot<'_>> = calls.iter().map(|call| plan(tools, call)).collect();
    if slots.iter().any(|slot| matches!(slot, Slot::Waiting(..))) {
        drive(tools, context, &mut slots).await;
    }
    let mut answers: Vec<Option<ToolResult>> = slots
        .into_iter()
        .map(|slot| match slot {
            Slot::Finish => None,
            Slot::Done(result) => Some(result),
            // `drive` leaves no call unanswered; this is never reached.
            Slot::Waiting(_, call) | Slot::Running(call, _) => Some(Err(cancelled(call))),
        })
        .collect();
    answers.extend(refused.iter().map(|call| {
        Some(Err(ToolError::Failed {
            tool: call.name.clone(),
            message: format!("not run: at most {MAX_CALLS_PER_REPLY} tool calls are run per reply"),
        }))
    }));
    answers
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
                    *slot = Slot::Running(call, tools.call_entry(entry, arguments, call_context));
                    running += 1;
                }
            }
            let mut ended = false;
            for slot in slots.iter_mut() {
                if let Slot::Running(_, future) = slot
                    && let Poll::Ready(result) = Pin::new(future).poll(cx)
                {
                    *slot = Slot::Done(result);
                    ended = true;
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
                if let Slot::Waiting(_, call) | Slot::Running(call, _) = *slot {
                    *slot = Slot::Done(Err(cancelled(call)));
                }
            }
            return Poll::Ready(());
        }
        Poll::Pending
    })
}
