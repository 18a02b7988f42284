//! [`BoundedSessions`]: rmcp's in-process session manager, holding at most a given number of
//! sessions at once, each closed once unused for its idle timeout.
//!
//! A session costs a task, channels and the calls' state for as long as it lives, and a client
//! opens one with a single `initialize`: unbounded, sessions are memory any client can take.
//! The front takes a place ([`BoundedSessions::reserve`]) before it lets an `initialize` through,
//! so that one past the bound is answered with a clear refusal; the manager refuses too, for a
//! service used without the front.
//!
//! Idle time is counted here rather than by rmcp's worker, whose keep-alive counts from the
//! session's last message even while a call runs: a call longer than the timeout (a tool waiting
//! for a person's answer to its question, say) would lose its session mid-call. Here a session is
//! idle while none of its requests is in flight, from when the last one ended or its last message
//! came. Expired sessions are closed when the manager is next asked about any session (every
//! request naming one, every new one), so that an expired id is never served; a server nobody
//! talks to holds its expired sessions, never more than the bound, until somebody does.

use std::collections::HashMap;
use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};

/// rmcp's [`LocalSessionManager`], with at most `max` sessions, each closed after `idle` unused.
#[derive(Debug)]
pub(crate) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    idle: Duration,
    places: Arc<Places>,
}

/// The sessions open and the places the front has reserved.
#[derive(Debug, Default)]
struct Places {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    sessions: HashMap<SessionId, Activity>,
    /// Places reserved for `initialize`s on their way through rmcp's service.
    reserved: usize,
}

/// When a session was last used, and how many of its requests are in flight.
#[derive(Debug)]
struct Activity {
    last: Instant,
    in_flight: usize,
}

impl Activity {
    fn expired(&self, idle: Duration) -> bool {
        self.in_flight == 0 && self.last.elapsed() >= idle
    }
}

impl Places {
    /// The state; a panic elsewhere while it was held leaves nothing half-written that matters.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes that `id` was used now, and by one more request in flight if `starts`.
    fn touch(&self, id: &SessionId, starts: bool) {
        if let Some(activity) = self.lock().sessions.get_mut(id) {
            activity.last = Instant::now();
            activity.in_flight += usize::from(starts);
        }
    }
}

/// Why a session was not made or reached.
#[derive(Debug)]
pub(crate) enum SessionsError {
    /// The manager's own error.
    Local(LocalSessionManagerError),
    /// Every place is taken.
    Full(Full),
}

/// Every place is taken: how many sessions are open, the bound.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Full {
    pub(crate) max: usize,
}

impl fmt::Display for Full {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the server has {} sessions open, its limit; try again later, or end a session \
             (DELETE) first",
            self.max
        )
    }
}

impl fmt::Display for SessionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionsError::Local(error) => error.fmt(f),
            SessionsError::Full(full) => full.fmt(f),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(error: LocalSessionManagerError) -> Self {
        SessionsError::Local(error)
    }
}

/// A place held for one `initialize` until it is dropped (by then its session, if any, counts).
pub(crate) struct Reservation {
    places: Arc<Places>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut state = self.places.lock();
        state.reserved = state.reserved.saturating_sub(1);
    }
}

impl BoundedSessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        // Idle time is ours to count (see the module's doc).
        inner.session_config.keep_alive = None;
        BoundedSessions {
            inner,
            max,
            idle,
            places: Arc::default(),
        }
    }

    /// A place for a new session, unless every place is taken (by sessions, or held for
    /// `initialize`s under way).
    pub(crate) async fn reserve(&self) -> Result<Reservation, Full> {
        self.close_expired().await;
        let mut state = self.places.lock();
        if state.sessions.len() + state.reserved >= self.max {
            return Err(Full { max: self.max });
        }
        state.reserved += 1;
        Ok(Reservation {
            places: Arc::clone(&self.places),
        })
    }

    /// Closes every session unused for the idle timeout.
    async fn close_expired(&self) {
        let expired: Vec<SessionId> = {
            let mut state = self.places.lock();
            let expired: Vec<SessionId> = state
                .sessions
                .iter()
                .filter(|(_, activity)| activity.expired(self.idle))
                .map(|(id, _)| id.clone())
                .collect();
            for id in &expired {
                state.sessions.remove(id);
            }
            expired
        };
        for id in expired {
            tracing::debug!("closing session {id}, unused for {:?}", self.idle);
            if let Err(error) = self.inner.close_session(&id).await {
                tracing::debug!("closing session {id}: {error}");
            }
        }
    }

    /// `stream`, holding its session busy until it is dropped.
    fn busy<S>(&self, id: &SessionId, stream: S) -> Busy<S> {
        self.places.touch(id, true);
        Busy {
            stream: Box::pin(stream),
            _in_flight: InFlight {
                places: Arc::clone(&self.places),
                id: id.clone(),
            },
        }
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.close_expired().await;
        // The front's reservation holds a place for this session, so only sessions count here.
        // Without the front, two may pass this check at once: the second is closed again below.
        if self.places.lock().sessions.len() >= self.max {
            return Err(SessionsError::Full(Full { max: self.max }));
        }
        let (id, transport) = self.inner.create_session().await?;
        {
            let mut state = self.places.lock();
            if state.sessions.len() < self.max {
                let activity = Activity {
                    last: Instant::now(),
                    in_flight: 0,
                };
                state.sessions.insert(id.clone(), activity);
                return Ok((id, transport));
            }
        }
        let _ = self.inner.close_session(&id).await;
        Err(SessionsError::Full(Full { max: self.max }))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.places.touch(id, false);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.close_expired().await;
        Ok(self.places.lock().sessions.contains_key(id) && self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.places.lock().sessions.remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.create_stream(id, message).await?;
        Ok(self.busy(id, stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.places.touch(id, false);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // The stream of server messages stays open while the client listens; it does not keep
        // the session from going idle.
        self.places.touch(id, false);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.places.touch(id, false);
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

/// A request's stream of answers, its session busy while it lives.
struct Busy<S> {
    stream: Pin<Box<S>>,
    _in_flight: InFlight,
}

impl<S: Stream> Stream for Busy<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.stream.as_mut().poll_next(cx)
    }
}

/// One request in flight in a session; when it ends, the session's idle time starts anew.
struct InFlight {
    places: Arc<Places>,
    id: SessionId,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(activity) = self.places.lock().sessions.get_mut(&self.id) {
            activity.last = Instant::now();
            activity.in_flight = activity.in_flight.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_place_is_held_while_reserved_and_freed_when_dropped() {
        let sessions = BoundedSessions::new(1, Duration::from_secs(60));
        let held = sessions.reserve().await;
        assert!(held.is_ok());
        assert!(sessions.reserve().await.is_err());
        drop(held);
        assert!(sessions.reserve().await.is_ok());
    }

    #[tokio::test]
    async fn a_session_with_a_request_in_flight_is_not_idle() {
        let sessions = BoundedSessions::new(1, Duration::ZERO);
        let Ok((id, _transport)) = sessions.create_session().await else {
            panic!("a first session is made");
        };
        let busy = sessions.busy(&id, nothing());
        assert!(matches!(sessions.has_session(&id).await, Ok(true)));
        drop(busy);
        assert!(matches!(sessions.has_session(&id).await, Ok(false)));
        assert!(sessions.reserve().await.is_ok(), "its place is free");
    }

    fn nothing() -> impl Stream<Item = ()> {
        struct Empty;
        impl Stream for Empty {
            type Item = ();
            fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<()>> {
                Poll::Ready(None)
            }
        }
        Empty
    }
}
