//! Streamable HTTP: [`McpServer`]'s entry points over it (stateless, or keeping sessions:
//! [`sessions`]), [`bind_http`] and [`shutdown_signal`]. Any byte streams and stdio are served
//! beside their transport, in [`stdio`](crate::stdio).
//!
//! The HTTP server is hyper's, with what a server facing clients it does not control needs
//! around it: an accept loop that no error ends (it backs off and keeps serving), a cap on open
//! connections, a deadline on every wait for a client ([`connection`]), a graceful shutdown,
//! and a front that checks each request ([`guard`](crate::guard) for `Host` and `Origin`, then the method,
//! the content type, the body's size and time, and that the body is one JSON-RPC message,
//! [`message`]) before rmcp's service answers it, so that every error is a JSON-RPC error with
//! the status that says what went wrong ([`reply`]).

mod connection;
mod message;
mod reply;
mod sessions;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full, LengthLimitError, Limited};
use hyper::StatusCode;
use hyper::body::Body;
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;

use crate::error::ServeError;
use crate::server::McpServer;

use self::connection::{Answer, Clock, InFlight, TimedIo, Timeouts};
use self::reply::Response;
use self::sessions::BoundedSessions;
use crate::guard::Guard;

impl McpServer {
    /// rmcp's streamable HTTP service alone (a tower service, to mount at `/mcp` in another
    /// HTTP server), stateless: every request is served by a fresh handle on this server, no
    /// session is kept, and plain JSON answers simple requests. It checks `Host` and `Origin` by
    /// the same rules as [`serve_http`](McpServer::serve_http) and bounds the body's size, but
    /// it has none of the rest of `serve_http`'s front: its refusals are plain text, and the
    /// server it is mounted in bounds connections and time.
    pub fn http_service(&self) -> StreamableHttpService<McpServer, NeverSessionManager> {
        let guard = Guard::new(
            self.config().allowed_hosts(),
            self.config().allowed_origins(),
        );
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_max_request_body_bytes(self.config().max_request_bytes())
            .with_allowed_hosts(guard.rmcp_hosts())
            .with_allowed_origins(guard.rmcp_origins())
            .enforce_origin_validation();
        let server = self.clone();
        StreamableHttpService::new(
            // Stateless: no request sees what another set (a log level).
            move || Ok(server.for_connection()),
            Arc::new(NeverSessionManager::default()),
            config,
        )
    }

    /// rmcp's streamable HTTP service alone, keeping sessions (see
    /// [`McpConfig::with_sessions`](crate::McpConfig::with_sessions), whatever it is set to
    /// here): `initialize` opens a session, served by a handle of its own on this server, which
    /// can ask the session's client; `GET` opens its stream of server messages, `DELETE` ends
    /// it. At most [`max_sessions`](crate::McpConfig::with_max_sessions) are open at once (an
    /// `initialize` past them is answered with status 500 and a plain-text error saying so), each
    /// closed after its [idle timeout](crate::McpConfig::with_session_idle_timeout). Sessions
    /// live in the service, so mount one service (clones share them) on one instance, or route
    /// each session's requests to the instance that opened it. As with
    /// [`http_service`](McpServer::http_service), the server it is mounted in bounds
    /// connections and time, and its refusals are plain text.
    pub fn http_session_service(
        &self,
    ) -> StreamableHttpService<McpServer, impl SessionManager + use<>> {
        let config = self.config();
        let sessions = BoundedSessions::new(config.max_sessions(), config.session_idle_timeout());
        self.http_service_keeping(Arc::new(sessions))
    }

    /// rmcp's streamable HTTP service keeping sessions in `sessions`.
    fn http_service_keeping(
        &self,
        sessions: Arc<BoundedSessions>,
    ) -> StreamableHttpService<McpServer, BoundedSessions> {
        let guard = Guard::new(
            self.config().allowed_hosts(),
            self.config().allowed_origins(),
        );
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(true)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_max_request_body_bytes(self.config().max_request_bytes())
            .with_allowed_hosts(guard.rmcp_hosts())
            .with_allowed_origins(guard.rmcp_origins())
            .enforce_origin_validation();
        let server = self.clone();
        StreamableHttpService::new(move || Ok(server.for_session()), sessions, config)
    }

    /// Serves streamable HTTP on `listener` until `shutdown` resolves; then stops accepting
    /// (new connections are refused), lets the requests in flight be answered for up to the
    /// [shutdown timeout](crate::McpConfig::with_shutdown_timeout), drops what is left, and
    /// returns. Every path answers as the MCP endpoint; clients use `/mcp` by convention.
    ///
    /// Once serving it logs `listening on http://ADDR/mcp` (`tracing`, level INFO); an error
    /// accepting a connection (say, no file descriptor left) is logged at WARN and retried
    /// after a pause that doubles up to a second, never ending the server. Connections beyond
    /// the [limit](crate::McpConfig::with_max_connections) wait to be accepted until one closes.
    /// Each connection is closed when its client is slower than a
    /// [timeout](crate::McpConfig::with_header_read_timeout) allows.
    ///
    /// Each request is checked before rmcp's service sees it, and refused with a JSON-RPC error
    /// (id `null` where none is known) and the status that says why: another method than POST
    /// (405; with [sessions](crate::McpConfig::with_sessions), GET and DELETE are served too),
    /// an `initialize` past the [session limit](crate::McpConfig::with_max_sessions) (503), a
    /// `Host` or `Origin` that is not allowed (403), a content type that is not
    /// `application/json` (415), a body declared or found larger than the
    /// [limit](crate::McpConfig::with_max_request_bytes) (413, at once for a declared one),
    /// a body slower than its timeout (408), a body that is not UTF-8 JSON nested at most 128
    /// deep (400, parse error), a batch or anything but one JSON-RPC message (400, invalid
    /// request). rmcp's own refusals (an `Accept` without both JSON and event streams, 406; an
    /// unknown protocol version, 400) come back as JSON-RPC errors too. With sessions, a
    /// session's stream of server messages (its GET) ends when the server stops.
    ///
    /// ```no_run
    /// # async fn run(registry: toolsmith::Registry) -> Result<(), toolsmith_mcp::ServeError> {
    /// use toolsmith_mcp::{McpConfig, McpServer};
    ///
    /// let server = McpServer::new(registry, McpConfig::default())?;
    /// let shutdown = toolsmith_mcp::shutdown_signal()?;
    /// let listener = toolsmith_mcp::bind_http("127.0.0.1:0").await?;
    /// println!("serving on {:?}", listener.local_addr());
    /// server.serve_http(listener, shutdown).await
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`ServeError::Bind`] when the listener's address cannot be read.
    pub async fn serve_http(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ServeError> {
        let local = listener.local_addr().map_err(|error| ServeError::Bind {
            addr: "the listener".to_owned(),
            error,
        })?;
        let config = self.config();
        let (stop, stopping) = watch::channel(false);
        let front = Front::new(self, stopping);
        let timeouts = Timeouts {
            header: config.header_read_timeout(),
            idle: config.idle_timeout(),
        };
        let slots = Arc::new(Semaphore::new(config.max_connections()));
        let graceful = GracefulShutdown::new();
        let mut connections = JoinSet::new();
        let mut shutdown = std::pin::pin!(shutdown);
        let mut backoff = Backoff::default();
        let mut warned_full: Option<Instant> = None;
        tracing::info!("listening on http://{local}/mcp");
        loop {
            while connections.try_join_next().is_some() {}
            if slots.available_permits() == 0
                && warned_full.is_none_or(|at| at.elapsed() >= FULL_WARNING_INTERVAL)
            {
                warned_full = Some(Instant::now());
                tracing::warn!(
                    "{} connections are open, the limit: new ones wait until one closes",
                    config.max_connections()
                );
            }
            let slot = tokio::select! {
                () = &mut shutdown => break,
                slot = Arc::clone(&slots).acquire_owned() => slot,
            };
            // The semaphore is never closed.
            let Ok(slot) = slot else { break };
            let accepted = tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok((stream, _peer)) => {
                    backoff.reset();
                    connections.spawn(serve_connection(
                        stream,
                        front.clone(),
                        timeouts,
                        graceful.watcher(),
                        slot,
                    ));
                }
                // The client gave up before it was accepted: nothing to wait for.
                Err(error) if concerns_one_connection(&error) => {}
                Err(error) => {
                    let pause = backoff.next_pause();
                    tracing::warn!(
                        "cannot accept a connection ({error}); trying again in {} ms",
                        pause.as_millis()
                    );
                    tokio::select! {
                        () = &mut shutdown => break,
                        () = tokio::time::sleep(pause) => {}
                    }
                }
            }
        }
        drop(listener);
        // Streams of server messages (a session's GET) end now; they would never end by
        // themselves.
        let _ = stop.send(true);
        while connections.try_join_next().is_some() {}
        let grace = config.shutdown_timeout();
        if !connections.is_empty() {
            tracing::info!(
                "stopping: waiting up to {} s for {} open connections",
                grace.as_secs_f64(),
                connections.len()
            );
        }
        if tokio::time::timeout(grace, graceful.shutdown())
            .await
            .is_err()
        {
            while connections.try_join_next().is_some() {}
            tracing::warn!(
                "{} connections were still busy after {} s; their requests are dropped",
                connections.len(),
                grace.as_secs_f64()
            );
        }
        connections.shutdown().await;
        tracing::info!("stopped");
        Ok(())
    }
}

/// Binds a listener for [`McpServer::serve_http`] at `addr`, `HOST:PORT`: an IP address
/// (`127.0.0.1:8080`, `[::1]:8080`; port 0 picks a free port) or a name, resolved. When a name
/// resolves to several addresses (`localhost` to `::1` and `127.0.0.1`, say), the first of them,
/// in the resolver's order, that can be bound is bound; `local_addr` says which.
///
/// The listener queues up to [`LISTEN_BACKLOG`] connections not yet accepted (the system may
/// allow fewer: `net.core.somaxconn` on Linux), where connections past the server's
/// [limit](crate::McpConfig::with_max_connections) wait; beyond that the system turns new ones
/// away, and clients retry.
///
/// # Errors
/// [`ServeError::Bind`] when `addr` does not resolve or none of its addresses can be bound.
pub async fn bind_http(addr: &str) -> Result<TcpListener, ServeError> {
    let failed = |error| ServeError::Bind {
        addr: addr.to_owned(),
        error,
    };
    let mut last_error = None;
    for candidate in tokio::net::lookup_host(addr).await.map_err(failed)? {
        match listen(candidate) {
            Ok(listener) => return Ok(listener),
            Err(error) => last_error = Some(error),
        }
    }
    Err(failed(last_error.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::AddrNotAvailable,
            "the name resolves to no address",
        )
    })))
}

/// How many connections a listener from [`bind_http`] queues before they are accepted: more
/// than the 128 a plain `TcpListener::bind` asks for, so that a burst past the connection limit
/// waits rather than being turned away.
pub const LISTEN_BACKLOG: u32 = 1024;

fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // As `TcpListener::bind` does: a restarted server can bind its port again at once.
    #[cfg(not(windows))]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// A future that resolves when the process receives SIGTERM or SIGINT (on other systems than
/// Unix, Ctrl-C), logging which (`tracing`, level INFO): the `shutdown` to give
/// [`McpServer::serve_http`]. The handlers are installed when this is called, so a signal that
/// arrives any time after is seen; once installed, these signals no longer end the process by
/// themselves.
///
/// # Errors
/// [`ServeError::Signal`] when the handlers cannot be installed.
///
/// # Panics
/// When called outside a Tokio runtime.
pub fn shutdown_signal() -> Result<impl Future<Output = ()> + Send + 'static, ServeError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate()).map_err(ServeError::Signal)?;
        let mut interrupt = signal(SignalKind::interrupt()).map_err(ServeError::Signal)?;
        Ok(async move {
            let name = tokio::select! {
                _ = terminate.recv() => "SIGTERM",
                _ = interrupt.recv() => "SIGINT",
            };
            tracing::info!("received {name}");
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            // A handler that cannot be installed ends the wait: better stopped than unstoppable.
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("received Ctrl-C");
        })
    }
}

/// How often, at most, the server says that its connections are at the limit.
const FULL_WARNING_INTERVAL: Duration = Duration::from_secs(60);

/// The pause after an accept error: 10 ms, doubling with each error in a row, up to 1 s.
struct Backoff {
    next: Duration,
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(10);
    const MAX: Duration = Duration::from_secs(1);

    fn next_pause(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(Self::MAX);
        pause
    }

    fn reset(&mut self) {
        self.next = Self::FIRST;
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: Self::FIRST }
    }
}

/// An accept error about the one connection being accepted (its client left), rather than
/// about the server (out of file descriptors or memory).
fn concerns_one_connection(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::ConnectionAborted
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionRefused
            | ErrorKind::Interrupted
    )
}

/// Serves one connection until it ends, its clock expires, or a shutdown has let it finish.
/// Holds its `slot` among the open connections until then.
async fn serve_connection(
    stream: TcpStream,
    front: Front,
    timeouts: Timeouts,
    shutdown: Watcher,
    _slot: OwnedSemaphorePermit,
) {
    // Answers are small and written whole; waiting to fill a packet only delays them.
    let _ = stream.set_nodelay(true);
    let clock = Clock::new(timeouts);
    let io = TokioIo::new(TimedIo::new(stream, Arc::clone(&clock)));
    let requests = Arc::clone(&clock);
    let service = hyper::service::service_fn(move |request| {
        front.clone().handle(request, requests.request())
    });
    // No timer: hyper's header timeout would also close a connection kept alive between
    // requests; the clock bounds both waits, each by its own timeout.
    let builder = Builder::new(TokioExecutor::new());
    let connection = shutdown.watch(builder.serve_connection(io, service).into_owned());
    tokio::select! {
        served = connection => {
            if let Err(error) = served {
                tracing::debug!("a connection ended: {error}");
            }
        }
        wait = clock.expired() => tracing::debug!("closed a connection: {}", wait.describe()),
    }
}

/// What stands before rmcp's HTTP service: the checks of every request.
#[derive(Clone)]
struct Front {
    service: Service,
    guard: Arc<Guard>,
    max_request_bytes: usize,
    body_read_timeout: Duration,
    /// Whether the server is stopping.
    stopping: watch::Receiver<bool>,
}

/// rmcp's service, stateless or keeping sessions.
#[derive(Clone)]
enum Service {
    Stateless(StreamableHttpService<McpServer, NeverSessionManager>),
    Sessions {
        service: StreamableHttpService<McpServer, BoundedSessions>,
        sessions: Arc<BoundedSessions>,
    },
}

impl Service {
    async fn handle<B>(&self, request: hyper::Request<B>) -> Response
    where
        B: Body + Send + 'static,
        B::Error: std::fmt::Display,
    {
        match self {
            Service::Stateless(service) => service.handle(request).await,
            Service::Sessions { service, .. } => service.handle(request).await,
        }
    }
}

impl Front {
    fn new(server: &McpServer, stopping: watch::Receiver<bool>) -> Self {
        let config = server.config();
        let service = if config.sessions() {
            let sessions = Arc::new(BoundedSessions::new(
                config.max_sessions(),
                config.session_idle_timeout(),
            ));
            Service::Sessions {
                service: server.http_service_keeping(Arc::clone(&sessions)),
                sessions,
            }
        } else {
            Service::Stateless(server.http_service())
        };
        Front {
            service,
            guard: Arc::new(Guard::new(config.allowed_hosts(), config.allowed_origins())),
            max_request_bytes: config.max_request_bytes(),
            body_read_timeout: config.body_read_timeout(),
            stopping,
        }
    }

    /// Whether requests other than POST are served: `GET` (a session's stream of server
    /// messages) and `DELETE` (the session's end), with sessions.
    fn keeps_sessions(&self) -> bool {
        matches!(self.service, Service::Sessions { .. })
    }

    async fn handle(
        self,
        request: hyper::Request<hyper::body::Incoming>,
        in_flight: InFlight,
    ) -> Result<hyper::Response<Answer>, Infallible> {
        let response = self.answer(request).await;
        Ok(response.map(|body| Answer::new(body, in_flight)))
    }

    async fn answer(&self, request: hyper::Request<hyper::body::Incoming>) -> Response {
        if let Some(refusal) = self.refuse_head(&request) {
            return refusal;
        }
        if request.method() != hyper::Method::POST {
            return self.answer_without_body(request).await;
        }
        let (parts, body) = request.into_parts();
        let bytes = match self.read_body(body).await {
            Ok(bytes) => bytes,
            Err(refusal) => return *refusal,
        };
        // Here the body is in hand, read whole: `bytes`, no larger than the limit. A leading
        // byte order mark goes, and a tool call's arguments are set aside as their text.
        let (parts, bytes) = crate::intake::http_body(parts, bytes);
        if let Err(not_a_message) = message::check_json(&bytes) {
            return not_a_message_reply(not_a_message);
        }
        // Here `bytes` is known to be one JSON object: UTF-8, nested within the limit.
        let (id, initialize) = match message::read(&bytes) {
            Ok(ClientJsonRpcMessage::Request(request)) => (
                Some(request.id),
                matches!(request.request, ClientRequest::InitializeRequest(_)),
            ),
            Ok(_) => (None, false),
            Err(not_a_message) => return not_a_message_reply(not_a_message),
        };
        // A place for the session an `initialize` opens, held until rmcp has opened it.
        let _place = match &self.service {
            Service::Sessions { sessions, .. } if initialize => match sessions.reserve().await {
                Ok(place) => Some(place),
                Err(full) => {
                    let error = ErrorData::new(
                        ErrorCode::INTERNAL_ERROR,
                        format!("Service Unavailable: {full}"),
                        Some(json!({"max_sessions": full.max})),
                    );
                    return reply::error(StatusCode::SERVICE_UNAVAILABLE, error, id);
                }
            },
            _ => None,
        };
        let response = self
            .service
            .handle(hyper::Request::from_parts(parts, Full::new(bytes)))
            .await;
        reply::as_json_rpc(response, id).await
    }

    /// rmcp's answer to a session's `GET` (its stream of server messages, which ends when the
    /// server stops) or `DELETE` (its end); `refuse_head` lets no other method through. A body
    /// is not read: the connection closes after the answer, if there is one.
    async fn answer_without_body(
        &self,
        request: hyper::Request<hyper::body::Incoming>,
    ) -> Response {
        let has_body = !request.body().is_end_stream();
        let request = request.map(|_| Empty::<Bytes>::new());
        let response = reply::as_json_rpc(self.service.handle(request).await, None).await;
        let mut stopping = self.stopping.clone();
        let stopped = async move {
            // Also when the server is gone: its sender dropped.
            let _ = stopping.wait_for(|stopping| *stopping).await;
        };
        let streams = response.body().size_hint().exact().is_none();
        let response = if streams {
            response.map(|body| reply::until(body, stopped))
        } else {
            response
        };
        if has_body {
            reply::closing(response)
        } else {
            response
        }
    }

    /// The answer refusing a request before its body is read, if it is refused: for its `Host`
    /// or `Origin`, its method, its content type or its declared length.
    fn refuse_head(&self, request: &hyper::Request<hyper::body::Incoming>) -> Option<Response> {
        if let Err(refusal) = self.guard.check(request.uri(), request.headers()) {
            let error = ErrorData::invalid_request(refusal.message(), None);
            return Some(refused(request, refusal.status(), error));
        }
        let method = request.method();
        if self.keeps_sessions()
            && (method == hyper::Method::GET || method == hyper::Method::DELETE)
        {
            return None;
        }
        if method != hyper::Method::POST {
            let (allowed, message) = if self.keeps_sessions() {
                (
                    "POST, GET, DELETE",
                    format!(
                        "Method Not Allowed: this MCP endpoint answers POST (a JSON-RPC message), \
                         GET (a session's stream) and DELETE (a session's end), not {method}"
                    ),
                )
            } else {
                (
                    "POST",
                    format!(
                        "Method Not Allowed: this MCP endpoint answers POST (a JSON-RPC message), \
                         not {method}"
                    ),
                )
            };
            let error = ErrorData::invalid_request(message, None);
            let mut response = refused(request, StatusCode::METHOD_NOT_ALLOWED, error);
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static(allowed));
            return Some(response);
        }
        let content_type = request
            .headers()
            .get(CONTENT_TYPE)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        let json = content_type
            .as_deref()
            .is_some_and(|value| reply::essence(value).eq_ignore_ascii_case("application/json"));
        if !json {
            let given = match content_type {
                Some(given) => format!("not `{given}`"),
                None => "and no Content-Type was given".to_owned(),
            };
            let message =
                format!("Unsupported Media Type: the body must be `application/json`, {given}");
            let error = ErrorData::invalid_request(message, None);
            return Some(refused(request, StatusCode::UNSUPPORTED_MEDIA_TYPE, error));
        }
        let limit = self.max_request_bytes;
        let declared = request.body().size_hint().lower();
        if declared > u64::try_from(limit).unwrap_or(u64::MAX) {
            let message = format!(
                "Request too large: the body of {declared} bytes is over the server's limit of \
                 {limit} bytes"
            );
            return Some(reply::closing(too_large(message, limit)));
        }
        None
    }

    /// The body, read whole within the size limit and the body read timeout.
    async fn read_body(&self, body: hyper::body::Incoming) -> Result<Bytes, Box<Response>> {
        let limit = self.max_request_bytes;
        let read = Limited::new(body, limit).collect();
        let refusal = match tokio::time::timeout(self.body_read_timeout, read).await {
            Ok(Ok(collected)) => return Ok(collected.to_bytes()),
            Ok(Err(error)) if error.is::<LengthLimitError>() => too_large(
                format!("Request too large: the body is over the server's limit of {limit} bytes"),
                limit,
            ),
            Ok(Err(error)) => reply::error(
                StatusCode::BAD_REQUEST,
                ErrorData::invalid_request(
                    format!("Bad Request: the body could not be read ({error})"),
                    None,
                ),
                None,
            ),
            Err(_elapsed) => reply::error(
                StatusCode::REQUEST_TIMEOUT,
                ErrorData::invalid_request(
                    format!(
                        "Request Timeout: the body did not arrive within {} s",
                        self.body_read_timeout.as_secs_f64()
                    ),
                    None,
                ),
                None,
            ),
        };
        // What is left of the body must not be read as the next request.
        Err(Box::new(reply::closing(refusal)))
    }
}

/// A refusal of `request` before its body is read: the connection closes after it when there is
/// a body, so that the body is not read as the next request.
fn refused<B: Body>(request: &hyper::Request<B>, status: StatusCode, error: ErrorData) -> Response {
    let response = reply::error(status, error, None);
    if request.body().is_end_stream() {
        response
    } else {
        reply::closing(response)
    }
}

fn too_large(message: String, limit: usize) -> Response {
    reply::error(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorData::invalid_request(message, Some(json!({"max_request_bytes": limit}))),
        None,
    )
}

fn not_a_message_reply(not_a_message: message::NotAMessage) -> Response {
    let (error, id) = not_a_message.into_error();
    reply::error(StatusCode::BAD_REQUEST, error, id)
}
