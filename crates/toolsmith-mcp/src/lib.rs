//! Serve any toolsmith [`Registry`] over the Model Context Protocol, and use any MCP server's
//! tools as toolsmith tools, on `rmcp`, the official Rust MCP SDK. A registry is served over
//! stdio (newline-delimited JSON-RPC) and over streamable HTTP, stateless by default (no session
//! affinity, so any instance behind a load balancer can answer any request) or keeping sessions
//! ([`McpConfig::with_sessions`]). A tool may ask its client (elicitation, sampling): on protocol
//! 2026-07-28 through `input_required` rounds on any transport, before it through requests on
//! the client's connection or session.
//!
//! Every `tools/call` goes through toolsmith: through the registry's call path and its layers
//! ([`Registry::call_entry`](toolsmith::Registry::call_entry)), the arguments coerced against the
//! tool's parameters under the MCP dialect's [`Policy`](toolsmith::Policy); invalid arguments and
//! tool failures come back as a result with `isError: true` and the message a model can act on
//! ([`ToolError::to_model_message`](toolsmith::ToolError::to_model_message)), and an unknown tool
//! is a protocol error naming the nearest tool. An async tool is awaited on the task handling
//! its request; a sync tool runs on the server's own tool threads, never on the executor's, so a
//! slow tool stalls no other request. Calls run concurrently up to a limit, each under a timeout
//! that cancels its context, and a panicking tool is an error result while the server keeps
//! serving (the registry's default layers catch it). The limits are in [`McpConfig`].
//!
//! Each call's [`Context`](toolsmith::Context) is filled from MCP: the JSON-RPC request id is
//! its call id; the client's `notifications/cancelled` (over HTTP, the client going away)
//! cancels it, and the cancelled call's answer is never sent; a request with
//! `_meta.progressToken` gets a `notifications/progress` for each
//! [`progress`](toolsmith::Context::progress) report; each [`log`](toolsmith::Context::log)
//! message is a `notifications/message` at the level the client chose ([`DEFAULT_LOG_LEVEL`]
//! until it chooses); both arrive before the call's result. Request data comes from
//! [`McpServer::with_request_data`] (from the HTTP request's headers, say). A tool's content
//! blocks (text, images, audio, resources, resource links) are MCP's content blocks.
//!
//! A program serves its tools with one call:
//!
//! ```no_run
//! /// Says hello.
//! #[toolsmith::tool]
//! fn greet(name: String) -> String {
//!     format!("Hello, {name}!")
//! }
//!
//! fn main() -> Result<(), toolsmith_mcp::ServeError> {
//!     let mut registry = toolsmith::Registry::new();
//!     registry.add(std::sync::Arc::new(Greet))?;
//!     toolsmith_mcp::serve_stdio(registry)
//! }
//! ```
//!
//! The other way round, [`McpClient`] makes any MCP server's tools toolsmith tools. It starts a
//! [`StdioServer`] from a program and its argv (never a shell), with the environment it is
//! given (and `PATH`, `HOME` and a few more inherited), keeping the last lines of its stderr for
//! error messages, or reaches an [`HttpServer`] over streamable HTTP with the headers it is
//! given; [`read_config`] reads both from the `mcpServers` file Claude Desktop and most clients
//! use. It lists the server's tools; each [`RemoteTool`] coerces a call's arguments by the type
//! read from the tool's `inputSchema` and checks them against that schema itself (a call the
//! server would refuse is answered here, in the model-facing shape), then forwards it:
//! cancellation and progress pass through, `isError` is a tool failure in the server's words,
//! a server that is gone is an error naming it and is connected again by the next call (with
//! backoff after failed attempts), and [`McpClient::list_changes`] says when the tools change.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use toolsmith::{Arguments, Context, Registry};
//! use toolsmith_mcp::{McpClient, StdioServer};
//!
//! let server = StdioServer::new("everything", "npx", ["-y", "@modelcontextprotocol/server-everything"]);
//! let client = McpClient::connect(&server).await?;
//! let mut registry = Registry::new();
//! for tool in client.tools().await? {
//!     registry.add(Arc::new(tool))?;
//! }
//! // A model's strings for numbers are coerced before the call leaves.
//! let sum = registry
//!     .call("get-sum", Arguments::Text(r#"{"a": "2", "b": 3}"#), Context::new())
//!     .await?;
//! println!("{}", sum.as_text());
//!
//! // A server over streamable HTTP, with a token.
//! let search = toolsmith_mcp::HttpServer::new("search", "https://search.example.com/mcp")
//!     .with_header("Authorization", format!("Bearer {}", std::env::var("SEARCH_TOKEN")?));
//! let search = McpClient::connect(search).await?;
//! # drop(search);
//! # Ok(())
//! # }
//! ```
//!
//! Over streamable HTTP ([`serve_http`], or [`McpServer::serve_http`] in a program's own
//! runtime) the server is meant to face clients it does not control: every wait for a client has
//! a deadline, open connections are capped, no accept error ends it, `Host` and `Origin` are
//! checked against DNS rebinding, every refusal is a JSON-RPC error with the right status, and
//! it stops gracefully when told to (SIGTERM or SIGINT for [`serve_http`]).
//!
//! This crate must never depend on the command line crate (the CLI depends on it), and it must
//! never write anything but protocol messages to standard output: diagnostics go to the client as
//! JSON-RPC errors, or nowhere. What only the operator can act on (the address served, an accept
//! error, a shutdown's progress, a connection closed for a timeout at DEBUG) is logged as
//! [`tracing`] events; the program decides whether and where they go (the `toolsmith` binary
//! prints them on stderr), and without a subscriber they cost next to nothing. The JSON-RPC
//! protocol itself is rmcp's; this crate only frames stdio lines, checks HTTP requests (to answer
//! bad ones with errors) and maps toolsmith onto rmcp's server handler.

mod ask;
mod client;
mod config;
mod content;
mod error;
mod guard;
mod http;
mod intake;
mod notify;
mod pool;
mod server;
mod servers;
mod stdio;

pub use client::{ClientError, ClientOptions, ListChanges, McpClient, RemoteTool};
pub use config::McpConfig;
pub use error::ServeError;
pub use http::{LISTEN_BACKLOG, bind_http, shutdown_signal};
pub use notify::DEFAULT_LOG_LEVEL;
pub use server::{CallRequest, McpServer};
pub use servers::{ConfigError, HttpServer, RemoteServer, StdioServer, parse_config, read_config};
pub use stdio::LineTransport;
use toolsmith::Registry;

/// Serves `registry` over this process's stdin and stdout with the default [`McpConfig`], until
/// the client closes stdin. Starts (and ends) its own async runtime.
///
/// # Errors
/// When a tool cannot be declared in MCP ([`ServeError::Declare`]), the runtime cannot start, or
/// the connection fails.
pub fn serve_stdio(registry: Registry) -> Result<(), ServeError> {
    serve_stdio_with(registry, McpConfig::default())
}

/// [`serve_stdio`] with `config`.
///
/// # Errors
/// As [`serve_stdio`].
pub fn serve_stdio_with(registry: Registry, config: McpConfig) -> Result<(), ServeError> {
    let server = McpServer::new(registry, config)?;
    // One client: its messages and its async tools on one thread (fewer wake-ups between
    // threads per call), its sync tools on the server's tool threads as always.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let served = runtime.block_on(server.serve_stdio());
    // A tool still running past its timeout must not keep the process alive once the client
    // has gone.
    runtime.shutdown_background();
    served
}

/// Serves `registry` over streamable HTTP at `addr` with `config` (stateless unless it keeps
/// [sessions](McpConfig::with_sessions)), until the process
/// receives SIGTERM or SIGINT; then stops gracefully (see [`McpServer::serve_http`]) and returns.
/// `addr` is `HOST:PORT`, a name resolved as [`bind_http`] says (`localhost:8080`,
/// `127.0.0.1:0` for a free port); the address bound is logged (`tracing`, INFO) as
/// `listening on http://ADDR/mcp`. Every path answers; clients use `/mcp` by convention. Starts
/// its own async runtime, and ends it without waiting for the tools still running.
///
/// # Errors
/// When the configuration is invalid, a tool cannot be declared, the runtime cannot start, the
/// signal handlers cannot be installed, or `addr` cannot be resolved or bound.
pub fn serve_http(registry: Registry, addr: &str, config: McpConfig) -> Result<(), ServeError> {
    let server = McpServer::new(registry, config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let served = runtime.block_on(async move {
        // Installed before the address is announced: a signal sent once it is is not missed.
        let shutdown = shutdown_signal()?;
        let listener = bind_http(addr).await?;
        server.serve_http(listener, shutdown).await
    });
    // Requests dropped at the shutdown timeout, and tools still running, must not keep the
    // process alive.
    runtime.shutdown_background();
    served
}
