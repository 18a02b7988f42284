//! `complete_blocking` and `stream_blocking`: a model's reply waited for on the test's thread.

#![allow(dead_code, clippy::expect_used)]

use std::sync::Mutex;

use toolsmith_agent::{Delta, LanguageModel, LmError, Reply, Request};

/// A model asked from sync test code.
pub trait CompleteBlocking {
    /// [`LanguageModel::complete`], polled to its end on this thread.
    fn complete_blocking(&self, request: Request<'_>) -> Result<Reply, LmError>;

    /// [`LanguageModel::complete_streaming`], polled to its end on this thread: the reply, and
    /// every delta reported, in order.
    fn stream_blocking(&self, request: Request<'_>) -> (Result<Reply, LmError>, Vec<Delta>);
}

impl<M: LanguageModel + ?Sized> CompleteBlocking for M {
    fn complete_blocking(&self, request: Request<'_>) -> Result<Reply, LmError> {
        toolsmith::block_on(self.complete(request)).expect("a test runs outside any runtime")
    }

    fn stream_blocking(&self, request: Request<'_>) -> (Result<Reply, LmError>, Vec<Delta>) {
        let deltas = Mutex::new(Vec::new());
        let sink = |delta: Delta| {
            deltas
                .lock()
                .expect("no test panics holding it")
                .push(delta)
        };
        let reply = toolsmith::block_on(self.complete_streaming(request, &sink))
            .expect("a test runs outside any runtime");
        (
            reply,
            deltas.into_inner().expect("no test panics holding it"),
        )
    }
}

/// The text of `deltas`, joined.
pub fn text_of(deltas: &[Delta]) -> String {
    deltas
        .iter()
        .filter_map(|delta| match delta {
            Delta::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// How many of `deltas` are text.
pub fn text_pieces(deltas: &[Delta]) -> usize {
    deltas
        .iter()
        .filter(|delta| matches!(delta, Delta::Text(_)))
        .count()
}

/// The calls `deltas` started: `(index, id, name)`.
pub fn calls_of(deltas: &[Delta]) -> Vec<(usize, String, String)> {
    deltas
        .iter()
        .filter_map(|delta| match delta {
            Delta::ToolCall { index, id, name } => Some((*index, id.clone(), name.clone())),
            _ => None,
        })
        .collect()
}
