//! `toolsmith mcp`: the registered tools served over MCP, on stdio or streamable HTTP.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use toolsmith_mcp::{McpConfig, McpServer, ServeError};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;

use crate::error::UsageError;
use crate::outcome::Outcome;
use crate::select::ToolSelection;
use crate::stats::StatsFile;
use crate::upstream::{Changes, Connected, Upstreams};

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
    /// Keep HTTP sessions: `initialize` opens one (`Mcp-Session-Id`), GET opens its stream
    /// and DELETE ends it, and a tool's questions reach clients of protocols before
    /// 2026-07-28 through it. Without it the server is stateless (any instance answers any
    /// request; a tool asks only clients on protocol 2026-07-28).
    #[arg(long, requires = "http")]
    sessions: bool,
    /// How many HTTP sessions may be open at once; past it an `initialize` is answered 503.
    #[arg(long, value_name = "N", value_parser = count, requires = "sessions",
          default_value_t = McpConfig::DEFAULT_MAX_SESSIONS)]
    max_sessions: usize,
    /// How long an HTTP session may go unused before it is closed, in seconds (a request in
    /// flight, say a call waiting for a person's answer, keeps it in use).
    #[arg(long, value_name = "SECONDS", value_parser = seconds, requires = "sessions",
          default_value_t = Seconds(McpConfig::DEFAULT_SESSION_IDLE_TIMEOUT))]
    session_idle_timeout: Seconds,
    /// How many tool calls may wait for a running one to end (time waiting counts toward the
    /// call timeout); over stdio, with the queue full, the server reads on once a call ends;
    /// over HTTP, a call past it is answered as busy.
    #[arg(long, value_name = "N", value_parser = count,
          default_value_t = McpConfig::DEFAULT_MAX_QUEUED_CALLS)]
    max_queued_calls: usize,
    /// Count the calls, their repairs and their errors, per tool and code, and write them to
    /// FILE as JSON: at once (no calls yet), on SIGUSR1, and when the server stops. Each write
    /// replaces the file whole (a file beside it, renamed over it).
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    #[command(flatten)]
    selection: ToolSelection,
    #[command(flatten)]
    pub upstreams: Upstreams,
}

impl McpArgs {
    /// Serves `connected`'s registry (its tools as selected and renamed) until the client
    /// closes stdin or, over HTTP, until SIGTERM or SIGINT (over stdio too), following the
    /// changes of its MCP servers' tools; writes the statistics at the end.
    pub fn run(&self, connected: &Connected) -> Result<Outcome, UsageError> {
        let registry = &connected.registry;
        log_to_stderr();
        // Said before serving, not after: a gateway may serve for days.
        for warning in &connected.warnings {
            tracing::warn!("{}", warning.trim_start_matches("toolsmith: warning: "));
        }
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
            .with_max_queued_calls(self.max_queued_calls)
            .with_sessions(self.sessions)
            .with_max_sessions(self.max_sessions)
            .with_session_idle_timeout(self.session_idle_timeout.0)
            .with_changing_tools(!self.upstreams.is_empty());
        let registry = self.selection.apply(registry)?.into_owned();
        let stats = match &self.stats {
            Some(path) => Some(Arc::new(StatsFile::create(path)?)),
            None => None,
        };
        let registry = match &stats {
            Some(stats) => stats.count(registry),
            None => registry,
        };
        let server = McpServer::new(registry, config).map_err(|e| serve_error(&e))?;
        // As `toolsmith_mcp::serve_stdio` and `serve_http` do: one client's messages on one
        // thread; HTTP's many clients on as many threads as there are cores. A gateway over
        // stdio serves on its servers' connections' runtime (one worker thread): a call then
        // reads its client, writes to its server, reads the answer and writes it back on one
        // thread, where a runtime of its own would wake the other's thread twice a call (each
        // wake-up of a sleeping thread costs more than a trivial call).
        let mut own = None;
        let runtime = match connected.runtime().filter(|_| self.http.is_none()) {
            Some(shared) => shared,
            None => {
                let mut runtime = match self.http {
                    Some(_) => tokio::runtime::Builder::new_multi_thread(),
                    None => tokio::runtime::Builder::new_current_thread(),
                };
                let runtime = runtime.enable_all().build().map_err(|error| {
                    UsageError::Serve(format!("cannot start the async runtime: {error}"))
                })?;
                &*own.insert(runtime)
            }
        };
        let served = runtime.block_on(async {
            // Until serving ends: following the servers' tools never does.
            tokio::select! {
                served = self.serve(&server, stats.clone()) => served,
                never = self.follow(&server, connected.follow(), stats.as_deref()) => match never {},
            }
        });
        // Tools still running (past their timeout, or dropped at shutdown) must not keep the
        // process alive (the connections' runtime is shut down so when they are dropped).
        if let Some(runtime) = own {
            runtime.shutdown_background();
        }
        // Written whatever ended the server: what was counted is kept.
        let written = stats.map_or(Ok(()), |stats| write_stats(&stats));
        served.and(written)?;
        Ok(Outcome::Success(String::new()))
    }

    /// Serves the tools composed anew at each change of an MCP server's tools, selected,
    /// renamed and counted as the first ones were; a change that cannot be served (a `--tools`
    /// pattern matching nothing now, a name taken twice) is a warning, and the tools stay.
    async fn follow(
        &self,
        server: &McpServer,
        changes: Option<Changes>,
        stats: Option<&StatsFile>,
    ) -> std::convert::Infallible {
        if let Some(mut changes) = changes {
            while let Some(change) = changes.next().await {
                let served = change.and_then(|(registry, said)| {
                    let registry = self
                        .selection
                        .apply(&registry)
                        .map_err(|error| error.to_string())?
                        .into_owned();
                    let registry = match stats {
                        Some(stats) => stats.count(registry),
                        None => registry,
                    };
                    Ok((registry, said))
                });
                let replaced = match served {
                    Ok((registry, said)) => {
                        let count = registry.len();
                        server
                            .replace_tools(registry)
                            .await
                            .map(|()| format!("{said}: serving {count} tools"))
                            .map_err(|error| serve_error(&error).to_string())
                    }
                    Err(error) => Err(error),
                };
                match replaced {
                    Ok(said) => tracing::info!("{said}"),
                    Err(error) => {
                        tracing::warn!("the tools served stay as they were: {error}");
                    }
                }
            }
        }
        std::future::pending().await
    }

    /// Serves until the client leaves or, over HTTP, until SIGTERM or SIGINT; over stdio,
    /// SIGTERM and SIGINT end the wait for the client.
    async fn serve(
        &self,
        server: &McpServer,
        stats: Option<Arc<StatsFile>>,
    ) -> Result<(), UsageError> {
        // Installed before serving: a signal sent once the server answers is not missed.
        let shutdown = toolsmith_mcp::shutdown_signal().map_err(|e| serve_error(&e))?;
        if let Some(stats) = stats {
            write_on_sigusr1(stats)?;
        }
        let served = match &self.http {
            Some(addr) => match toolsmith_mcp::bind_http(addr).await {
                Ok(listener) => server.serve_http(listener, shutdown).await,
                Err(error) => Err(error),
            },
            None => tokio::select! {
                served = server.serve_stdio() => served,
                () = shutdown => Ok(()),
            },
        };
        served.map_err(|e| serve_error(&e))
    }
}

/// Writes the statistics, saying so on stderr.
fn write_stats(stats: &StatsFile) -> Result<(), UsageError> {
    stats.write()?;
    tracing::info!("wrote the statistics to `{}`", stats.path().display());
    Ok(())
}

/// Writes the statistics at every SIGUSR1, from now on (a failure is said on stderr, and the
/// server goes on).
#[cfg(unix)]
fn write_on_sigusr1(stats: Arc<StatsFile>) -> Result<(), UsageError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut signals = signal(SignalKind::user_defined1()).map_err(|error| {
        UsageError::Serve(format!("cannot install the handler of SIGUSR1: {error}"))
    })?;
    tokio::spawn(async move {
        while signals.recv().await.is_some() {
            let stats = Arc::clone(&stats);
            // A write to disk, off the server's threads.
            let written = tokio::task::spawn_blocking(move || write_stats(&stats)).await;
            if let Ok(Err(error)) = written {
                tracing::warn!("{error}");
            }
        }
    });
    Ok(())
}

/// No SIGUSR1 here: the statistics are written when the server stops.
#[cfg(not(unix))]
fn write_on_sigusr1(_stats: Arc<StatsFile>) -> Result<(), UsageError> {
    Ok(())
}

/// A server error as the command line says it.
fn serve_error(error: &ServeError) -> UsageError {
    UsageError::Serve(in_flags(error))
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
                "max_sessions" => "--max-sessions",
                "session_idle_timeout" => "--session-idle-timeout",
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
        .with_target("toolsmith_cli", Level::INFO)
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
