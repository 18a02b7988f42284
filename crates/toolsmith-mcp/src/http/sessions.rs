//! [`BoundedSessions`]: rmcp's in-process session manager, holding at most a given number of
//! sessions at once, each closed after a time unused.
//!
//! A session costs a task, channels and the calls' state for as long as it lives, and a client
//! opens one with a single `initialize`: unbounded, sessions are memory any client can take.
//! The front refuses an `initialize` past the bound with a clear answer ([`Self::is_full`]);
//! the manager refuses too, should two slip past the front at once.

use std::fmt;
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};

/// rmcp's [`LocalSessionManager`], with at most `max` sessions.
#[derive(Debug)]
pub(crate) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    /// Held while a session is counted and made, so that two `initialize`s at once cannot
    /// both take the last place.
    creating: tokio::sync::Mutex<()>,
}

/// Why a session was not made or reached.
#[derive(Debug)]
pub(crate) enum SessionsError {
    /// The manager's own error.
    Local(LocalSessionManagerError),
    /// Every place is taken: how many sessions are open.
    Full(usize),
}

impl fmt::Display for SessionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionsError::Local(error) => error.fmt(f),
            SessionsError::Full(open) => write!(
                f,
                "the server has {open} sessions open, its limit; try again later"
            ),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(error: LocalSessionManagerError) -> Self {
        SessionsError::Local(error)
    }
}

impl BoundedSessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        BoundedSessions {
            inner,
            max,
            creating: tokio::sync::Mutex::new(()),
        }
    }

    /// Whether every place is taken: how many sessions are open, when it is.
    pub(crate) async fn is_full(&self) -> Option<usize> {
        let open = self.inner.sessions.read().await.len();
        (open >= self.max).then_some(open)
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _creating = self.creating.lock().await;
        if let Some(open) = self.is_full().await {
            return Err(SessionsError::Full(open));
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}
