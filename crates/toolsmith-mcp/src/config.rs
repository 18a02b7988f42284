//! [`McpConfig`]: the server's limits and identity, with documented defaults.

use std::time::Duration;

use toolsmith::{Dialect, Policy};

use crate::error::ServeError;
use crate::http::guard;

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
/// Every count and timeout must be above zero (a server that takes no
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
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
}

impl McpConfig {
    /// The largest request accepted, in bytes: [`DEFAULT_MAX_REQUEST_BYTES`](Self::DEFAULT_MAX_REQUEST_BYTES).
    pub const DEFAULT_MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;
    /// Tool calls running at once: [`DEFAULT_MAX_CONCURRENT_CALLS`](Self::DEFAULT_MAX_CONCURRENT_CALLS).
    pub const DEFAULT_MAX_CONCURRENT_CALLS: usize = 64;
    /// How long a call may run: [`DEFAULT_CALL_TIMEOUT`](Self::DEFAULT_CALL_TIMEOUT).
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

    /// The largest request accepted, in bytes (one stdio line, or one HTTP body). A larger one
    /// is answered with an "invalid request" error (over HTTP, status 413) and dropped; the
    /// server keeps serving. Default 4 MiB.
    pub fn with_max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = bytes;
        self
    }

    /// How many tool calls may run at once (each on its own thread). A call beyond the limit
    /// is answered at once with an `isError` result saying the server is busy. A call that timed
    /// out still counts until its tool returns, so runaway tools cannot pile up threads.
    /// Default 64; at least 1.
    pub fn with_max_concurrent_calls(mut self, calls: usize) -> Self {
        self.max_concurrent_calls = calls;
        self
    }

    /// How long one call may run before its result is an `isError` timeout (the tool's thread
    /// cannot be stopped; it finishes on its own, and its output is dropped). Default 60 s.
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

    pub(crate) fn server_name(&self) -> &str {
        &self.name
    }

    pub(crate) fn server_version(&self) -> &str {
        &self.version
    }

    pub(crate) fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The `Host` names accepted besides the loopback names.
    pub fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// The browser origins accepted besides those of the allowed hosts.
    pub fn allowed_origins(&self) -> &[String] {
        &self.allowed_origins
    }

    /// Whether every setting can serve: counts and timeouts above zero,
    /// hosts and origins that read as such.
    pub(crate) fn check(&self) -> Result<(), ServeError> {
        let counts = [
            ("max_request_bytes", self.max_request_bytes),
            ("max_concurrent_calls", self.max_concurrent_calls),
        ];
        for (setting, count) in counts {
            if count == 0 {
                return Err(invalid(setting, "must be at least 1".to_owned()));
            }
        }
        if self.call_timeout.is_zero() {
            return Err(invalid(
                "call_timeout",
                "must be longer than zero".to_owned(),
            ));
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
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }
}
