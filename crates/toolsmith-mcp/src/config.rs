//! [`McpConfig`]: the server's limits and identity, with documented defaults.

use std::time::Duration;

use toolsmith::{Dialect, Policy};

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
#[derive(Debug, Clone)]
pub struct McpConfig {
    max_request_bytes: usize,
    max_concurrent_calls: usize,
    call_timeout: Duration,
    policy: Policy,
    name: String,
    version: String,
    instructions: Option<String>,
    allowed_hosts: Option<Vec<String>>,
    max_queued_calls: usize,
}

impl McpConfig {
    /// The largest request accepted, in bytes: [`DEFAULT_MAX_REQUEST_BYTES`](Self::DEFAULT_MAX_REQUEST_BYTES).
    pub const DEFAULT_MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;
    /// Tool calls running at once: [`DEFAULT_MAX_CONCURRENT_CALLS`](Self::DEFAULT_MAX_CONCURRENT_CALLS).
    pub const DEFAULT_MAX_CONCURRENT_CALLS: usize = 64;
    /// How long a call may run: [`DEFAULT_CALL_TIMEOUT`](Self::DEFAULT_CALL_TIMEOUT).
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
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

    /// How many tool calls may run at once (each on its own thread). A call beyond the limit
    /// waits in the queue ([`with_max_queued_calls`](Self::with_max_queued_calls)). A call that
    /// timed out still counts until its tool returns, so runaway tools cannot pile up threads.
    /// Default 64; at least 1.
    pub fn with_max_concurrent_calls(mut self, calls: usize) -> Self {
        self.max_concurrent_calls = calls.max(1);
        self
    }

    /// How long one call may take, from when the server takes it (time in the queue counts),
    /// before its result is an `isError` timeout (the tool's thread cannot be stopped; it
    /// finishes on its own, and its output is dropped; a call still queued never runs).
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

    /// The `Host` header values the HTTP transport accepts (a guard against DNS rebinding).
    /// Default: loopback names only (`localhost`, `127.0.0.1`, `::1`); a server reached by
    /// another name (behind a load balancer) lists it here.
    pub fn with_allowed_hosts(
        mut self,
        hosts: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// How many tool calls may wait for one of the running calls to end, beyond
    /// [`max_concurrent_calls`](Self::max_concurrent_calls); they run in the order they came.
    /// Over stdio, with the queue full, the server reads no further message until a call ends
    /// (the client's burst waits in the pipe; should none end within the call timeout, the
    /// call is answered as busy and reading goes on); over HTTP, a call past the queue is
    /// answered at once with an `isError` result saying the server is busy. Time in the queue counts toward
    /// the [call timeout](Self::with_call_timeout): a call has one deadline, from when the server
    /// takes it. Default 1024; at least 1.
    pub fn with_max_queued_calls(mut self, calls: usize) -> Self {
        self.max_queued_calls = calls.max(1);
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

    pub(crate) fn allowed_hosts(&self) -> Option<&[String]> {
        self.allowed_hosts.as_deref()
    }
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
            allowed_hosts: None,
            max_queued_calls: Self::DEFAULT_MAX_QUEUED_CALLS,
        }
    }
}
