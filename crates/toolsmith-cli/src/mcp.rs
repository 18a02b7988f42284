//! `toolsmith mcp`: the registered tools served over MCP, on stdio or streamable HTTP.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;
use toolsmith::Registry;
use toolsmith_mcp::McpConfig;

use crate::error::UsageError;
use crate::output::Outcome;

/// The arguments of `toolsmith mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve streamable HTTP (stateless) at this address, e.g. `127.0.0.1:8080`, instead of
    /// stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// A `Host` header the HTTP server accepts, instead of loopback names only (the guard against
    /// DNS rebinding); repeat it for each name clients or a load balancer use.
    #[arg(long = "allow-host", value_name = "HOST")]
    allow_hosts: Vec<String>,
    /// The largest request accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = McpConfig::DEFAULT_MAX_REQUEST_BYTES)]
    max_request_bytes: usize,
    /// How many tool calls may run at once; more wait in the queue (`--max-queued-calls`).
    #[arg(long, value_name = "N", default_value_t = McpConfig::DEFAULT_MAX_CONCURRENT_CALLS)]
    max_concurrent_calls: usize,
    /// How long one tool call may run, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = McpConfig::DEFAULT_CALL_TIMEOUT.as_secs_f64())]
    call_timeout: f64,
    /// How many tool calls may wait for a running one to end (time waiting counts toward the
    /// call timeout); over stdio, with the queue full, the server reads on once a call ends;
    /// over HTTP, a call past it is answered as busy.
    #[arg(long, value_name = "N", default_value_t = McpConfig::DEFAULT_MAX_QUEUED_CALLS, value_parser = at_least_one)]
    max_queued_calls: usize,
}

/// A count of at least 1.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(error) => Err(error.to_string()),
    }
}

impl McpArgs {
    /// Serves `registry` until the client closes stdin (or, over HTTP, until the process ends).
    pub fn run(&self, registry: &Registry) -> Result<Outcome, UsageError> {
        let timeout = Duration::try_from_secs_f64(self.call_timeout).map_err(|_| {
            UsageError::Serve(format!(
                "`--call-timeout {}` is not a duration in seconds",
                self.call_timeout
            ))
        })?;
        let mut config = McpConfig::default()
            .with_max_request_bytes(self.max_request_bytes)
            .with_max_concurrent_calls(self.max_concurrent_calls)
            .with_call_timeout(timeout)
            .with_max_queued_calls(self.max_queued_calls);
        if !self.allow_hosts.is_empty() {
            config = config.with_allowed_hosts(self.allow_hosts.iter().cloned());
        }
        let served = match self.http {
            Some(addr) => toolsmith_mcp::serve_http(registry.clone(), addr, config),
            None => toolsmith_mcp::serve_stdio_with(registry.clone(), config),
        };
        served.map_err(|error| UsageError::Serve(error.to_string()))?;
        Ok(Outcome::Success(String::new()))
    }
}
