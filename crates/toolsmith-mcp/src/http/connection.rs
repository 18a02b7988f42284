//! One HTTP connection's clock: which deadline it is under, and when it passes.
//!
//! A connection is always waiting on its client for something, and each wait has a bound:
//! - a new connection, or a kept-alive one once its next request has begun to arrive, has the
//!   header read timeout to deliver the whole request head;
//! - a kept-alive connection with no request in flight has the idle timeout to begin its next
//!   request;
//! - while a request is in flight the server is the one working (its body has its own
//!   deadline, in the front, which answers 408; a tool call has the call timeout);
//! - a write the client does not read has the idle timeout to make progress (and a connection
//!   is idle only from the last byte of its last answer).
//!
//! hyper's own header timeout cannot tell an idle connection from a slow request (its clock
//! starts when it begins to wait for a head), so the connection keeps its own clock here: the
//! socket wrapper ([`TimedIo`]) marks bytes read and writes stalled, the front marks a request
//! begun ([`Clock::request`]) and its answer sent (the [`InFlight`] guard, dropped with the
//! response body), and [`Clock::expired`] resolves when the current deadline passes.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;

/// The bounds a connection's clock applies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub(crate) header: Duration,
    pub(crate) idle: Duration,
}

/// What a connection's current deadline bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A request head that has not fully arrived.
    Head,
    /// A next request that has not begun.
    Idle,
    /// A write the client does not read.
    Write,
}

impl Wait {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Wait::Head => "the request head did not arrive within the header read timeout",
            Wait::Idle => "no request came within the idle timeout",
            Wait::Write => "the client did not read its answer within the idle timeout",
        }
    }
}

#[derive(Debug)]
struct State {
    /// Requests handed to the front and not yet answered in full.
    in_flight: usize,
    /// With no request in flight: whether a request has begun to arrive (else the connection is
    /// idle), and since when.
    reading_head: bool,
    since: Instant,
    /// Since when a write has been waiting for the client to read.
    write_stalled: Option<Instant>,
}

/// A connection's clock, shared by its socket, its requests and its watchdog.
#[derive(Debug)]
pub(crate) struct Clock {
    timeouts: Timeouts,
    state: Mutex<State>,
    changed: Notify,
}

impl Clock {
    /// The clock of a connection just accepted: its first request head is awaited.
    pub(crate) fn new(timeouts: Timeouts) -> Arc<Self> {
        Arc::new(Clock {
            timeouts,
            state: Mutex::new(State {
                in_flight: 0,
                reading_head: true,
                since: Instant::now(),
                write_stalled: None,
            }),
            changed: Notify::new(),
        })
    }

    fn update(&self, change: impl FnOnce(&mut State) -> bool) {
        let changed = change(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner));
        if changed {
            self.changed.notify_one();
        }
    }

    /// A request's head has arrived and the request is being served: no deadline of this
    /// clock's applies until it is answered.
    pub(crate) fn request(self: &Arc<Self>) -> InFlight {
        self.update(|state| {
            state.in_flight += 1;
            true
        });
        InFlight {
            clock: Arc::clone(self),
        }
    }

    fn answered(&self) {
        self.update(|state| {
            state.in_flight = state.in_flight.saturating_sub(1);
            if state.in_flight == 0 {
                state.reading_head = false;
                state.since = Instant::now();
            }
            true
        });
    }

    /// Bytes came in: an idle connection now has a request head on its way.
    fn bytes_read(&self) {
        self.update(|state| {
            if state.in_flight > 0 || state.reading_head {
                return false;
            }
            state.reading_head = true;
            state.since = Instant::now();
            true
        });
    }

    fn write_stalled(&self, stalled: bool) {
        self.update(|state| {
            if state.write_stalled.is_some() == stalled {
                return false;
            }
            state.write_stalled = stalled.then(Instant::now);
            true
        });
    }

    /// Bytes went out: a connection still sending its last answer is not idle yet.
    fn bytes_written(&self) {
        self.update(|state| {
            if state.in_flight == 0 && !state.reading_head {
                state.since = Instant::now();
            }
            // The deadline only moved later: the watchdog finds out when the earlier one passes.
            false
        });
    }

    /// The deadline in force, and what it bounds.
    fn deadline(&self) -> Option<(Instant, Wait)> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let reading = (state.in_flight == 0).then(|| {
            if state.reading_head {
                (state.since + self.timeouts.header, Wait::Head)
            } else {
                (state.since + self.timeouts.idle, Wait::Idle)
            }
        });
        let writing = state
            .write_stalled
            .map(|since| (since + self.timeouts.idle, Wait::Write));
        match (reading, writing) {
            (Some(reading), Some(writing)) => Some(if writing.0 < reading.0 {
                writing
            } else {
                reading
            }),
            (reading, writing) => reading.or(writing),
        }
    }

    /// Resolves when the deadline in force passes, with what it bounded.
    pub(crate) async fn expired(&self) -> Wait {
        loop {
            // A change made after this point is not missed: `notify_one` keeps a permit.
            let changed = self.changed.notified();
            match self.deadline() {
                Some((deadline, wait)) if deadline <= Instant::now() => return wait,
                Some((deadline, _)) => {
                    tokio::select! {
                        () = changed => {}
                        () = tokio::time::sleep_until(deadline) => {}
                    }
                }
                None => changed.await,
            }
        }
    }
}

/// A request in flight on a connection, until dropped (with its response body, once hyper has
/// sent it, or with the request if it is abandoned).
#[derive(Debug)]
pub(crate) struct InFlight {
    clock: Arc<Clock>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.clock.answered();
    }
}

/// A response body that holds its request's [`InFlight`] until it is dropped.
pub(crate) struct Answer {
    body: BoxBody<Bytes, std::convert::Infallible>,
    _in_flight: InFlight,
}

impl Answer {
    pub(crate) fn new(body: BoxBody<Bytes, std::convert::Infallible>, in_flight: InFlight) -> Self {
        Answer {
            body,
            _in_flight: in_flight,
        }
    }
}

impl Body for Answer {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A connection's socket, telling its clock when bytes come in and when writes stall.
pub(crate) struct TimedIo<S> {
    io: S,
    clock: Arc<Clock>,
    /// Whether the clock was told that a write is stalled.
    stalled: bool,
}

impl<S> TimedIo<S> {
    pub(crate) fn new(io: S, clock: Arc<Clock>) -> Self {
        TimedIo {
            io,
            clock,
            stalled: false,
        }
    }

    fn wrote<T>(
        &mut self,
        polled: Poll<io::Result<T>>,
        sent: impl Fn(&T) -> bool,
    ) -> Poll<io::Result<T>> {
        let stalled = polled.is_pending();
        if stalled != self.stalled {
            self.stalled = stalled;
            self.clock.write_stalled(stalled);
        }
        if let Poll::Ready(Ok(done)) = &polled
            && sent(done)
        {
            self.clock.bytes_written();
        }
        polled
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for TimedIo<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.clock.bytes_read();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for TimedIo<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        self.wrote(polled, |&n| n > 0)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.wrote(polled, |&n| n > 0)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_flush(cx);
        self.wrote(polled, |()| false)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUTS: Timeouts = Timeouts {
        header: Duration::from_secs(10),
        idle: Duration::from_secs(60),
    };

    #[tokio::test(start_paused = true)]
    async fn a_new_connection_has_the_header_timeout() {
        let clock = Clock::new(TIMEOUTS);
        let started = Instant::now();
        assert_eq!(clock.expired().await, Wait::Head);
        assert_eq!(started.elapsed(), TIMEOUTS.header);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_in_flight_has_no_deadline_and_its_answer_starts_the_idle_one() {
        let clock = Clock::new(TIMEOUTS);
        let in_flight = clock.request();
        let waited = tokio::time::timeout(Duration::from_secs(3600), clock.expired()).await;
        assert!(waited.is_err(), "no deadline while a request is served");
        let answered = Instant::now();
        drop(in_flight);
        assert_eq!(clock.expired().await, Wait::Idle);
        assert_eq!(answered.elapsed(), TIMEOUTS.idle);
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_byte_of_the_next_request_starts_the_header_deadline() {
        let clock = Clock::new(TIMEOUTS);
        drop(clock.request());
        tokio::time::sleep(Duration::from_secs(30)).await;
        clock.bytes_read();
        let first_byte = Instant::now();
        clock.bytes_read();
        assert_eq!(clock.expired().await, Wait::Head);
        assert_eq!(first_byte.elapsed(), TIMEOUTS.header);
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_still_being_sent_keeps_the_connection_from_idling() {
        let clock = Clock::new(TIMEOUTS);
        drop(clock.request());
        tokio::time::sleep(Duration::from_secs(45)).await;
        clock.bytes_written();
        let last_byte = Instant::now();
        assert_eq!(clock.expired().await, Wait::Idle);
        assert_eq!(last_byte.elapsed(), TIMEOUTS.idle);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_write_is_bounded_even_while_a_request_is_in_flight() {
        let clock = Clock::new(TIMEOUTS);
        let _in_flight = clock.request();
        clock.write_stalled(true);
        let stalled = Instant::now();
        assert_eq!(clock.expired().await, Wait::Write);
        assert_eq!(stalled.elapsed(), TIMEOUTS.idle);
    }
}
