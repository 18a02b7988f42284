//! `toolsmith mcp`: the registered tools served over MCP, on stdio or streamable HTTP.

use std::fmt;
use std::time::Duration;

use clap::Args;
use toolsmith::Registry;
use toolsmith_mcp::{McpConfig, ServeError};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;

use crate::error::UsageError;
use crate::output::Outcome;

/// The arguments of `toolsmith mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve streamable HTTP (stateless) at HOST:PORT instead of stdio: an address
    /// (`127.0.0.1:8080`, `[::1]:8080`; port 0 picks a free one) or a name (`localhost:8080`,
    /// the first of its addresses that can be bound). Prints `toolsmith: listening on
    /// http://ADDR/mcp` on stderr once bound; stops on SIGTERM or SIGINT.
    #[arg(long, value_name = "HOST:PORT")]
    http: Option<String>,
    /// A `Host` the HTTP server answers to besides the loopback names (the guard against DNS
    /// rebinding): `example.com` (any port) or `example.com:8443`. Repeat it for each name
    /// clients or a load balancer use.
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    allow_hosts: Vec<String>,
    /// A browser origin the HTTP server answers besides those of its hosts:
    /// `https://app.example.com`, `http://localhost:3000`, `http://localhost:*` (any port) or
    /// `null`. Requests without an `Origin` are not concerned. Repeat it for each origin.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    allow_origins: Vec<String>,
    /// The largest request accepted, in bytes.
    #[arg(long, value_name = "BYTES", value_parser = count,
          default_value_t = McpConfig::DEFAULT_MAX_REQUEST_BYTES)]
    max_request_bytes: usize,
    /// How many tool calls may run at once; more wait in the queue (`--max-queued-calls`).
    #[arg(long, value_name = "N", value_parser = count,
          default_value_t = McpConfig::DEFAULT_MAX_CONCURRENT_CALLS)]
    max_concurrent_calls: usize,
    /// How long one tool call may run, in seconds.
    #[arg(long, value_name = "SECONDS", value_parser = seconds,
          default_value_t = Seconds(McpConfig::DEFAULT_CALL_TIMEOUT))]
    call_timeout: Seconds,
    /// How many HTTP connections may be open at once; more wait to be accepted.
    #[arg(long, value_name = "N", value_parser = count, requires = "http",
          default_value_t = McpConfig::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// How long an HTTP client may take to send a request's headers, in seconds, from its
    /// connection or its request's first byte; then the connection is closed.
    #[arg(long, value_name = "SECONDS", value_parser = seconds, requires = "http",
          default_value_t = Seconds(McpConfig::DEFAULT_HEADER_READ_TIMEOUT))]
    header_timeout: Seconds,
    /// How long an HTTP client may take to send a request's body, in seconds; then it is
    /// answered 408 and the connection is closed.
    #[arg(long, value_name = "SECONDS", value_parser = seconds, requires = "http",
          default_value_t = Seconds(McpConfig::DEFAULT_BODY_READ_TIMEOUT))]
    body_timeout: Seconds,
    /// How long a kept-alive HTTP connection may wait for its next request, and an answer for
    /// its client to read it, in seconds; then the connection is closed.
    #[arg(long, value_name = "SECONDS", value_parser = seconds, requires = "http",
          default_value_t = Seconds(McpConfig::DEFAULT_IDLE_TIMEOUT))]
    idle_timeout: Seconds,
    /// How long the HTTP server, once told to stop, lets requests in flight finish, in seconds
    /// (0: not at all).
    #[arg(long, value_name = "SECONDS", value_parser = seconds_or_zero, requires = "http",
          default_value_t = Seconds(McpConfig::DEFAULT_SHUTDOWN_TIMEOUT))]
    shutdown_timeout: Seconds,
    /// How many tool calls may wait for a running one to end (time waiting counts toward the
    /// call timeout); over stdio, with the queue full, the server reads on once a call ends;
    /// over HTTP, a call past it is answered as busy.
    #[arg(long, value_name = "N", value_parser = count,
          default_value_t = McpConfig::DEFAULT_MAX_QUEUED_CALLS)]
    max_queued_calls: usize,
}

impl McpArgs {
    /// Serves `registry` until the client closes stdin or, over HTTP, until SIGTERM or SIGINT.
    pub fn run(&self, registry: &Registry) -> Result<Outcome, UsageError> {
        log_to_stderr();
        let config = McpConfig::default()
            .with_max_request_bytes(self.max_request_bytes)
            .with_max_concurrent_calls(self.max_concurrent_calls)
            .with_call_timeout(self.call_timeout.0)
            .with_allowed_hosts(self.allow_hosts.iter().cloned())
            .with_allowed_origins(self.allow_origins.iter().cloned())
            .with_max_connections(self.max_connections)
            .with_header_read_timeout(self.header_timeout.0)
            .with_body_read_timeout(self.body_timeout.0)
            .with_idle_timeout(self.idle_timeout.0)
            .with_shutdown_timeout(self.shutdown_timeout.0)
            .with_max_queued_calls(self.max_queued_calls);
        let served = match &self.http {
            Some(addr) => toolsmith_mcp::serve_http(registry.clone(), addr, config),
            None => toolsmith_mcp::serve_stdio_with(registry.clone(), config),
        };
        served.map_err(|error| UsageError::Serve(in_flags(&error)))?;
        Ok(Outcome::Success(String::new()))
    }
}

/// `error` as the command line says it: a setting of the server by the flag that set it.
fn in_flags(error: &ServeError) -> String {
    match error {
        ServeError::InvalidConfig { setting, problem } => {
            let flag = match *setting {
                "allowed_hosts" => "--allow-host",
                "allowed_origins" => "--allow-origin",
                "max_request_bytes" => "--max-request-bytes",
                "max_concurrent_calls" => "--max-concurrent-calls",
                "max_connections" => "--max-connections",
                "call_timeout" => "--call-timeout",
                "header_read_timeout" => "--header-timeout",
                "body_read_timeout" => "--body-timeout",
                "idle_timeout" => "--idle-timeout",
                _ => return error.to_string(),
            };
            format!("`{flag}` {problem}")
        }
        _ => error.to_string(),
    }
}

/// A duration given in seconds, shown as such in `--help`.
#[derive(Debug, Clone, Copy)]
struct Seconds(Duration);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.as_secs_f64())
    }
}

/// A count that must be at least 1.
fn count(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(count) => Ok(count),
        Err(error) => Err(format!("not a count ({error})")),
    }
}

/// A number of seconds above zero.
fn seconds(text: &str) -> Result<Seconds, String> {
    match duration(text) {
        Some(duration) if !duration.is_zero() => Ok(Seconds(duration)),
        _ => Err("must be a number of seconds above zero".to_owned()),
    }
}

/// A number of seconds, zero or more.
fn seconds_or_zero(text: &str) -> Result<Seconds, String> {
    duration(text)
        .map(Seconds)
        .ok_or_else(|| "must be a number of seconds, zero or more".to_owned())
}

fn duration(text: &str) -> Option<Duration> {
    Duration::try_from_secs_f64(text.parse().ok()?).ok()
}

/// Prints the server's log events on this process's stderr, one line each: its own from INFO
/// (the address it listens on, a shutdown), its libraries' only when they are errors (rmcp
/// logs every request it refuses, which a client must not be able to flood the log with).
fn log_to_stderr() {
    let events = Targets::new()
        .with_target("toolsmith_mcp", Level::INFO)
        .with_default(Level::ERROR);
    let printed = tracing_subscriber::fmt::layer()
        .event_format(Line)
        .with_writer(std::io::stderr)
        .with_filter(events);
    // Already set when `run` runs twice in one process (tests): the first one serves.
    let _ = tracing_subscriber::registry().with(printed).try_init();
}

/// `toolsmith: MESSAGE`, with `warning: ` or `error: ` before the message as the CLI's own
/// messages have.
struct Line;

impl<S, N> FormatEvent<S, N> for Line
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let kind = match *event.metadata().level() {
            Level::ERROR => "error: ",
            Level::WARN => "warning: ",
            _ => "",
        };
        write!(writer, "toolsmith: {kind}")?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
