//! [`McpConfig`]: the server's limits and identity, with documented defaults.

use std::time::Duration;

use toolsmith::{Dialect, Policy};

use crate::error::ServeError;
use crate::guard;

/// How a server limits and identifies itself. Built from [`McpConfig::default`] with the `with_`
/// methods:
///
/// ```
/// use std::time::Duration;
/// use toolsmith_mcp::McpConfig;
///
/// let config = McpConfig::default()
///     .with_max_request_bytes(64 * 1024)
///     .with_max_concurrent_calls(8)
///     .with_call_timeout(Duration::from_secs(5));
/// assert_eq!(config.max_concurrent_calls(), 8);
/// assert_eq!(McpConfig::default().call_timeout(), Duration::from_secs(60));
/// ```
///
/// Every count and every timeout but the shutdown's must be above zero (a server that takes no
/// byte, runs no call or waits no time serves nothing): [`McpServer::new`](crate::McpServer::new)
/// refuses a configuration that breaks this with [`ServeError::InvalidConfig`] naming the
/// setting, as it refuses an allowed host or origin it cannot read.
#[derive(Debug, Clone)]
pub struct McpConfig {
    max_request_bytes: usize,
    max_concurrent_calls: usize,
    call_timeout: Duration,
    policy: Policy,
    name: String,
    version: String,
    instructions: Option<String>,
    tools_change: bool,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    max_connections: usize,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
    idle_timeout: Duration,
    shutdown_timeout: Duration,
    max_queued_calls: usize,
    sessions: bool,
    max_sessions: usize,
    session_idle_timeout: Duration,
    request_state_key: Option<StateKey>,
}

/// The key `requestState` is sealed with; never shown.
#[derive(Clone)]
pub(crate) struct StateKey(pub(crate) Vec<u8>);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

impl McpConfig {
    /// The largest request accepted, in bytes: [`DEFAULT_MAX_REQUEST_BYTES`](Self::DEFAULT_MAX_REQUEST_BYTES).
    pub const DEFAULT_MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;
    /// Tool calls running at once: [`DEFAULT_MAX_CONCURRENT_CALLS`](Self::DEFAULT_MAX_CONCURRENT_CALLS).
    pub const DEFAULT_MAX_CONCURRENT_CALLS: usize = 64;
    /// How long a call may run: [`DEFAULT_CALL_TIMEOUT`](Self::DEFAULT_CALL_TIMEOUT).
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
    /// The longest any timeout may be set to: a year. A longer one (meant as "never") would
    /// put deadlines past what the clock can count; [`McpServer::new`](crate::McpServer::new)
    /// refuses it.
    pub const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 60 * 60);
    /// HTTP connections open at once: [`DEFAULT_MAX_CONNECTIONS`](Self::DEFAULT_MAX_CONNECTIONS),
    /// half of the common limit of 1024 open files, so that the server's own files and a tool's
    /// always find room.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
    /// How long a client may take to send a request's headers:
    /// [`DEFAULT_HEADER_READ_TIMEOUT`](Self::DEFAULT_HEADER_READ_TIMEOUT).
    pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
    /// How long a client may take to send a request's body:
    /// [`DEFAULT_BODY_READ_TIMEOUT`](Self::DEFAULT_BODY_READ_TIMEOUT).
    pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
    /// How long a kept-alive connection may wait for its next request:
    /// [`DEFAULT_IDLE_TIMEOUT`](Self::DEFAULT_IDLE_TIMEOUT).
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
    /// How long a shutdown waits for requests in flight:
    /// [`DEFAULT_SHUTDOWN_TIMEOUT`](Self::DEFAULT_SHUTDOWN_TIMEOUT).
    pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);
    /// HTTP sessions open at once, in session mode:
    /// [`DEFAULT_MAX_SESSIONS`](Self::DEFAULT_MAX_SESSIONS).
    pub const DEFAULT_MAX_SESSIONS: usize = 1024;
    /// How long an HTTP session may go unused before it is closed:
    /// [`DEFAULT_SESSION_IDLE_TIMEOUT`](Self::DEFAULT_SESSION_IDLE_TIMEOUT).
    pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(5 * 60);
    /// Tool calls waiting beyond those running:
    /// [`DEFAULT_MAX_QUEUED_CALLS`](Self::DEFAULT_MAX_QUEUED_CALLS).
    pub const DEFAULT_MAX_QUEUED_CALLS: usize = 1024;

    /// The largest request accepted, in bytes (one stdio line, or one HTTP body). A larger one
    /// is answered with an "invalid request" error (over HTTP, status 413) and dropped; the
    /// server keeps serving. Default 4 MiB.
    pub fn with_max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = bytes;
        self
    }

    /// How many tool calls may run at once: async tools on the executor, sync tools each on a
    /// thread of the server's (which has no more threads than this). A call beyond the limit
    /// waits its turn in the queue ([`with_max_queued_calls`](Self::with_max_queued_calls)). A
    /// call that timed out still counts until its tool returns (a sync tool's thread cannot be
    /// stopped), so runaway tools cannot pile up threads. Default 64; at least 1.
    pub fn with_max_concurrent_calls(mut self, calls: usize) -> Self {
        self.max_concurrent_calls = calls;
        self
    }

    /// How long one call may take, from when the server takes it (time in the queue counts),
    /// before its result is an `isError` timeout. At the deadline the call's context is
    /// cancelled first: an async tool is dropped (it sees the cancellation, say from a guard's
    /// `Drop`), a sync tool that looks (`ctx.is_cancelled()`) can stop, one that does not
    /// finishes on its own and its output is dropped; a call still queued never runs.
    /// Default 60 s.
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// The coercion policy calls run under. Default: lenient, answering the MCP dialect
    /// (`Policy::default().with_dialect(Dialect::Mcp)`).
    pub fn with_policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// The name and version the server gives clients in `initialize`. Default `toolsmith` and
    /// this crate's version.
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Instructions for the client's model, sent in `initialize`. Default none.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Whether the server's tools may change while it serves ([`McpServer::replace_tools`]):
    /// then `initialize` declares `tools.listChanged`, so that clients listen for
    /// `notifications/tools/list_changed`. Default `false`: the tools given are the tools
    /// served.
    ///
    /// [`McpServer::replace_tools`]: crate::McpServer::replace_tools
    pub fn with_changing_tools(mut self, changing: bool) -> Self {
        self.tools_change = changing;
        self
    }

    /// `Host` header values the HTTP transport accepts besides the loopback names (`localhost`,
    /// `127.0.0.1`, `::1`), which it always accepts: the guard against DNS rebinding. A server
    /// reached by another name (behind a load balancer, say) lists it here: `example.com` for
    /// any port, `example.com:8443` for that port only. A request naming another host is refused
    /// (403). Default: none.
    pub fn with_allowed_hosts(
        mut self,
        hosts: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// Browser origins the HTTP transport accepts besides its own hosts' (the MCP transport's
    /// guard against DNS rebinding: a page from another site must not reach the tools through a
    /// visitor's browser). A request with an `Origin` header is answered only when the origin's
    /// host is an allowed host (a loopback name, or one of
    /// [`with_allowed_hosts`](Self::with_allowed_hosts)) or the origin is listed here; a request
    /// without one (any client that is not a browser) is not concerned. An entry is
    /// `scheme://host` (the scheme's default port), `scheme://host:port`, `scheme://host:*`
    /// (any port) or `null`. Default: none.
    pub fn with_allowed_origins(
        mut self,
        origins: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// How many HTTP connections may be open at once. Past the limit, new connections wait in
    /// the system's queue of the listening socket (or are refused by the system once that is
    /// full) until one closes. Default 512.
    pub fn with_max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// How long an HTTP client may take to send a whole request head (the request line and the
    /// headers), from its connection or its request's first byte; past it the connection is
    /// closed. Default 10 s.
    pub fn with_header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long an HTTP client may take to send a request's body, once its headers are in; past
    /// it the request is answered with status 408 and the connection is closed. Default 30 s.
    pub fn with_body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// How long a kept-alive HTTP connection may wait for its next request, and how long an
    /// answer may wait for a client that does not read it; past it the connection is closed.
    /// Default 60 s.
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Whether streamable HTTP keeps sessions (default: no, stateless).
    ///
    /// Stateless, any instance of a server can answer any request, so servers scale out
    /// behind a load balancer; but a server cannot send its client a request of its own, so a
    /// tool's question ([`Context::elicit`](toolsmith::Context::elicit),
    /// [`Context::sample`](toolsmith::Context::sample)) reaches a client only on protocol
    /// 2026-07-28, which asks through `input_required` results. With sessions, `initialize`
    /// opens one (its id in the `Mcp-Session-Id` header, which every later request carries),
    /// the server asks clients of earlier protocols through their session, `GET` opens the
    /// session's stream of server messages and `DELETE` ends it. Sessions are held in this
    /// process: at most [`with_max_sessions`](Self::with_max_sessions) at once, each closed
    /// after [`with_session_idle_timeout`](Self::with_session_idle_timeout) unused.
    pub fn with_sessions(mut self, sessions: bool) -> Self {
        self.sessions = sessions;
        self
    }

    /// How many HTTP sessions may be open at once; past it, an `initialize` is answered with
    /// status 503 and a JSON-RPC error saying so, until a session ends (its client's `DELETE`,
    /// or its idle timeout). Default 1024.
    pub fn with_max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// How long an HTTP session may go unused before the server closes it (its client then
    /// gets 404 and starts another). A session is unused while none of its requests is in
    /// flight, from the end of the last one or its last message: a call that runs longer (a
    /// tool waiting for a person's answer, say) keeps its session. Default 5 minutes.
    pub fn with_session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// The key the `requestState` of protocol 2026-07-28's questions is sealed with (at least
    /// 32 bytes; HMAC-SHA256). Unless set, each server draws one at random, so a call that
    /// asked must be called again on the same instance; give every instance behind a load
    /// balancer the same secret key to let any of them take the retry. A key under 32 bytes is
    /// refused when the server is made. Never shown in `Debug` output.
    pub fn with_request_state_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.request_state_key = Some(StateKey(key.into()));
        self
    }

    /// The `requestState` key given, if any.
    pub(crate) fn request_state_key(&self) -> Option<&[u8]> {
        self.request_state_key.as_ref().map(|key| key.0.as_slice())
    }

    /// Whether streamable HTTP keeps sessions.
    pub fn sessions(&self) -> bool {
        self.sessions
    }

    /// How many HTTP sessions may be open at once.
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// How long an HTTP session may go unused.
    pub fn session_idle_timeout(&self) -> Duration {
        self.session_idle_timeout
    }

    /// How long an HTTP server that was told to stop waits for the requests in flight to be
    /// answered before it drops them (zero: not at all). Default 10 s.
    pub fn with_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// How many tool calls may wait for one of the running calls to end, beyond
    /// [`max_concurrent_calls`](Self::max_concurrent_calls); they run in the order they came.
    /// Over stdio, with the queue full, the server reads no further message until a call ends
    /// (the client's burst waits in the pipe; should none end within twice the call timeout,
    /// the call is answered as busy and reading goes on); over HTTP, a call past the queue is
    /// answered at once with an `isError` result saying the
    /// server is busy. Time in the queue counts toward the [call timeout](Self::with_call_timeout):
    /// a call has one deadline, from when the server takes it. Default 1024; 0 is refused when
    /// the server is made.
    pub fn with_max_queued_calls(mut self, calls: usize) -> Self {
        self.max_queued_calls = calls;
        self
    }

    /// The largest request accepted, in bytes.
    pub fn max_request_bytes(&self) -> usize {
        self.max_request_bytes
    }

    /// How many tool calls may run at once.
    pub fn max_concurrent_calls(&self) -> usize {
        self.max_concurrent_calls
    }

    /// How long one call may run.
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// The coercion policy calls run under.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// How many tool calls may wait beyond those running.
    pub fn max_queued_calls(&self) -> usize {
        self.max_queued_calls
    }

    pub(crate) fn server_name(&self) -> &str {
        &self.name
    }

    pub(crate) fn server_version(&self) -> &str {
        &self.version
    }

    pub(crate) fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    pub(crate) fn tools_change(&self) -> bool {
        self.tools_change
    }

    /// The `Host` names accepted besides the loopback names.
    pub fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// The browser origins accepted besides those of the allowed hosts.
    pub fn allowed_origins(&self) -> &[String] {
        &self.allowed_origins
    }

    /// How many HTTP connections may be open at once.
    pub fn max_connections(&self) -> usize {
        self.max_connections
    }

    /// How long a client may take to send a request head.
    pub fn header_read_timeout(&self) -> Duration {
        self.header_read_timeout
    }

    /// How long a client may take to send a request body.
    pub fn body_read_timeout(&self) -> Duration {
        self.body_read_timeout
    }

    /// How long a kept-alive connection may wait for its next request.
    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// How long a shutdown waits for the requests in flight.
    pub fn shutdown_timeout(&self) -> Duration {
        self.shutdown_timeout
    }

    /// Whether every setting can serve: counts and timeouts (but the shutdown's) above zero,
    /// hosts and origins that read as such.
    pub(crate) fn check(&self) -> Result<(), ServeError> {
        let counts = [
            ("max_request_bytes", self.max_request_bytes),
            ("max_concurrent_calls", self.max_concurrent_calls),
            ("max_connections", self.max_connections),
            ("max_queued_calls", self.max_queued_calls),
            ("max_sessions", self.max_sessions),
        ];
        for (setting, count) in counts {
            if count == 0 {
                return Err(invalid(setting, "must be at least 1".to_owned()));
            }
        }
        let timeouts = [
            ("call_timeout", self.call_timeout),
            ("header_read_timeout", self.header_read_timeout),
            ("body_read_timeout", self.body_read_timeout),
            ("idle_timeout", self.idle_timeout),
            ("session_idle_timeout", self.session_idle_timeout),
        ];
        for (setting, timeout) in timeouts {
            if timeout.is_zero() {
                return Err(invalid(setting, "must be longer than zero".to_owned()));
            }
        }
        let bounded = timeouts
            .into_iter()
            .chain([("shutdown_timeout", self.shutdown_timeout)]);
        for (setting, timeout) in bounded {
            if timeout > Self::MAX_TIMEOUT {
                return Err(invalid(
                    setting,
                    format!(
                        "must be at most a year ({} seconds)",
                        Self::MAX_TIMEOUT.as_secs()
                    ),
                ));
            }
        }
        for host in &self.allowed_hosts {
            guard::HostRule::parse(host).map_err(|why| invalid("allowed_hosts", why))?;
        }
        for origin in &self.allowed_origins {
            guard::OriginRule::parse(origin).map_err(|why| invalid("allowed_origins", why))?;
        }
        Ok(())
    }
}

fn invalid(setting: &'static str, problem: String) -> ServeError {
    ServeError::InvalidConfig { setting, problem }
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            max_request_bytes: Self::DEFAULT_MAX_REQUEST_BYTES,
            max_concurrent_calls: Self::DEFAULT_MAX_CONCURRENT_CALLS,
            call_timeout: Self::DEFAULT_CALL_TIMEOUT,
            policy: Policy::default().with_dialect(Dialect::Mcp),
            name: "toolsmith".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            tools_change: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: Self::DEFAULT_BODY_READ_TIMEOUT,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            shutdown_timeout: Self::DEFAULT_SHUTDOWN_TIMEOUT,
            sessions: false,
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            session_idle_timeout: Self::DEFAULT_SESSION_IDLE_TIMEOUT,
            request_state_key: None,
            max_queued_calls: Self::DEFAULT_MAX_QUEUED_CALLS,
        }
    }
}
