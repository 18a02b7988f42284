//! What a call says while it runs: its [`Context`]'s progress and log messages, as MCP
//! notifications to the client that made the call.
//!
//! A tool reports from wherever it runs (an async tool on the executor, a sync one on a pool
//! thread), without waiting; the notifications wait in the call's [`CallReporter`], in order,
//! and the task handling the request sends them to the client while it awaits the tool, and
//! sends what is left before the answer: the client sees them before the result, as the spec
//! asks (over streamable HTTP they travel on the request's own response stream, which ends with
//! the result). Once the call has answered, what its tool still reports is not sent.
//!
//! Progress goes out only for a request that carries `_meta.progressToken`. Log messages go out
//! at or above the level the client chose: the request's own `_meta`
//! `io.modelcontextprotocol/logLevel`; else, for a request of protocol 2026-07-28 or later,
//! none; else the level the connection set with `logging/setLevel`; else every level
//! ([`DEFAULT_LOG_LEVEL`]). A message held back goes to `tracing`, as a context without a
//! client would send it.

// rmcp marks MCP's logging deprecated (SEP-2577, for protocol 2026-07-28); the protocol
// versions this server serves before it have it, and clients use it.
#![allow(deprecated)]

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use std::task::{Poll, Waker};

use rmcp::RoleServer;
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, RequestMetaObject,
};
use rmcp::service::Peer;
use serde_json::Value;
use toolsmith::{Context, LogLevel, Progress, Reporter};

/// The level a connection's log messages are sent at before the client sets one with
/// `logging/setLevel` (the spec leaves it to the server): every level, so that a client that
/// shows log messages sees what a tool says, and one that wants fewer says so. Over stateless
/// HTTP, where no `setLevel` outlives its own request, it is the level of every call that does
/// not carry one in its `_meta`.
pub const DEFAULT_LOG_LEVEL: LogLevel = LogLevel::Debug;

/// How many notifications a call holds for its client at most; past it, more are dropped (and
/// counted in a `tracing` warning), so that a tool reporting faster than the client reads
/// cannot grow the server's memory.
const MAX_HELD: usize = 1024;

/// A notification waiting to be sent.
pub(crate) enum Note {
    Progress(ProgressNotificationParam),
    Log(LoggingMessageNotificationParam),
}

impl Note {
    /// Sends it to `peer`; a client that has gone is no longer told anything.
    pub(crate) async fn send(self, peer: Peer<RoleServer>) {
        let sent = match self {
            Note::Progress(param) => peer.notify_progress(param).await,
            Note::Log(param) => peer.notify_logging_message(param).await,
        };
        if let Err(error) = sent {
            tracing::debug!("a notification could not be sent: {error}");
        }
    }
}

/// One call's [`Reporter`]: what its tool reports, held in order for the request's task.
pub(crate) struct CallReporter {
    /// The request's progress token: progress is reported only where there is one.
    progress_token: Option<ProgressToken>,
    /// The least serious level sent to the client (`None`: none is).
    log_level: Option<LogLevel>,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    notes: VecDeque<Note>,
    /// The request's task, waiting for the next note.
    waker: Option<Waker>,
    /// The call has answered: nothing more is held.
    closed: bool,
    dropped: usize,
}

impl CallReporter {
    /// The reporter of a call made with `meta`, on a connection whose `logging/setLevel` chose
    /// `session_level`.
    pub(crate) fn new(meta: &RequestMetaObject, session_level: Option<LogLevel>) -> Self {
        CallReporter {
            progress_token: meta.get_progress_token(),
            log_level: log_level(meta, session_level),
            held: Mutex::new(Held::default()),
        }
    }

    fn hold(&self, note: Note) {
        let waker = {
            let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            if held.closed {
                return;
            }
            if held.notes.len() >= MAX_HELD {
                held.dropped += 1;
                return;
            }
            held.notes.push_back(note);
            held.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The next note held, or `Pending` (the task is woken when one comes).
    pub(crate) fn poll_next(&self, cx: &mut std::task::Context<'_>) -> Poll<Note> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        match held.notes.pop_front() {
            Some(note) => Poll::Ready(note),
            None => {
                match &mut held.waker {
                    Some(waker) => waker.clone_from(cx.waker()),
                    None => held.waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }

    /// Takes what is held, and holds nothing more: the call has answered.
    pub(crate) fn close(&self) -> VecDeque<Note> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.closed = true;
        held.waker = None;
        if held.dropped > 0 {
            tracing::warn!(
                "a call reported faster than its client read: {} notifications were dropped",
                held.dropped
            );
            held.dropped = 0;
        }
        std::mem::take(&mut held.notes)
    }
}

impl Reporter for CallReporter {
    fn progress(&self, _context: &Context, progress: Progress) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let mut param = ProgressNotificationParam::new(token.clone(), progress.done);
        param.total = progress.total;
        param.message = progress.message;
        self.hold(Note::Progress(param));
    }

    fn log(&self, context: &Context, level: LogLevel, data: Value) {
        if self.log_level.is_some_and(|least| level >= least) {
            let mut param = LoggingMessageNotificationParam::new(to_rmcp(level), data);
            param.logger = context.tool_name().map(str::to_owned);
            self.hold(Note::Log(param));
        } else {
            trace(context, level, &data);
        }
    }
}

/// The least serious level a call made with `meta` sends (see the [module](self)).
fn log_level(meta: &RequestMetaObject, session_level: Option<LogLevel>) -> Option<LogLevel> {
    if let Some(level) = meta.log_level() {
        return Some(from_rmcp(level));
    }
    if meta
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
    {
        // Protocol 2026-07-28: a request asks for log messages itself, or gets none.
        return None;
    }
    Some(session_level.unwrap_or(DEFAULT_LOG_LEVEL))
}

pub(crate) fn from_rmcp(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

fn to_rmcp(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// A log message the client did not ask for, as a `tracing` event at the nearest level.
fn trace(context: &Context, level: LogLevel, data: &Value) {
    let tool = context.tool_name().unwrap_or("");
    let call_id = context.call_id().unwrap_or("");
    let message: &dyn std::fmt::Display = match data {
        Value::String(text) => text,
        other => other,
    };
    match level {
        LogLevel::Debug => tracing::debug!(tool, call_id, "{message}"),
        LogLevel::Info | LogLevel::Notice => tracing::info!(tool, call_id, "{message}"),
        LogLevel::Warning => tracing::warn!(tool, call_id, "{message}"),
        _ => tracing::error!(tool, call_id, "{message}"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rmcp::model::ProtocolVersion;
    use serde_json::json;

    use super::*;

    fn meta(value: Value) -> RequestMetaObject {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_level_is_the_requests_then_the_connections_then_every_level() {
        let asked = meta(json!({"io.modelcontextprotocol/logLevel": "warning"}));
        assert_eq!(
            log_level(&asked, Some(LogLevel::Debug)),
            Some(LogLevel::Warning)
        );
        let plain = meta(json!({}));
        assert_eq!(
            log_level(&plain, Some(LogLevel::Error)),
            Some(LogLevel::Error)
        );
        assert_eq!(log_level(&plain, None), Some(DEFAULT_LOG_LEVEL));
        let mut modern = RequestMetaObject::new();
        modern.set_protocol_version(ProtocolVersion::V_2026_07_28);
        assert_eq!(log_level(&modern, Some(LogLevel::Debug)), None);
    }

    #[test]
    fn progress_is_held_only_for_a_request_with_a_token_and_nothing_after_the_answer() {
        let context = Context::new();
        let without = CallReporter::new(&meta(json!({})), None);
        without.progress(&context, Progress::of(1, 2));
        assert!(without.close().is_empty());
        let with = CallReporter::new(&meta(json!({"progressToken": 7})), None);
        with.progress(&context, Progress::of(1, 2).with_message("half"));
        let held = with.close();
        let Some(Note::Progress(param)) = held.front() else {
            panic!("no progress held");
        };
        assert_eq!(
            serde_json::to_value(param).unwrap(),
            json!({"progressToken": 7, "progress": 1.0, "total": 2.0, "message": "half"})
        );
        with.progress(&context, Progress::new(2));
        assert!(with.close().is_empty());
    }

    #[test]
    fn a_call_holds_a_bounded_number_of_notifications() {
        let reporter = CallReporter::new(&meta(json!({"progressToken": "p"})), None);
        for done in 0..MAX_HELD + 10 {
            reporter.progress(&Context::new(), Progress::new(done as f64));
        }
        assert_eq!(reporter.close().len(), MAX_HELD);
    }
}
