//! `complete_blocking`: a model's reply waited for on the test's thread.

#![allow(dead_code, clippy::expect_used)]

use toolsmith_agent::{LanguageModel, LmError, Reply, Request};

/// A model asked from sync test code.
pub trait CompleteBlocking {
    /// [`LanguageModel::complete`], polled to its end on this thread.
    fn complete_blocking(&self, request: Request<'_>) -> Result<Reply, LmError>;
}

impl<M: LanguageModel + ?Sized> CompleteBlocking for M {
    fn complete_blocking(&self, request: Request<'_>) -> Result<Reply, LmError> {
        toolsmith::block_on(self.complete(request)).expect("a test runs outside any runtime")
    }
}
