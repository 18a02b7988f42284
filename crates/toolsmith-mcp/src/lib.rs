//! Serve any toolsmith [`Registry`] over the Model Context Protocol, on `rmcp`, the official
//! Rust MCP SDK: over stdio (newline-delimited JSON-RPC) and over streamable HTTP, stateless (no
//! session affinity, so any instance behind a load balancer can answer any request).
//!
//! Every `tools/call` goes through toolsmith: the arguments are coerced against the tool's
//! parameters under the MCP dialect's [`Policy`](toolsmith::Policy), invalid arguments and tool
//! failures come back as a result with `isError: true` and the message a model can act on
//! ([`ToolError::to_model_message`](toolsmith::ToolError::to_model_message)), and an unknown tool
//! is a protocol error naming the nearest tool. Tools run on the server's own tool threads, never
//! on the async executor's, so a slow tool stalls no other request; calls run concurrently up to
//! a limit, each under a timeout, and a panicking tool is an error result while the server keeps
//! serving. The limits are in [`McpConfig`].
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
//! This crate must never depend on the command line crate (the CLI depends on it), and it must
//! never write anything but protocol messages to standard output: diagnostics go to the client as
//! JSON-RPC errors, or nowhere. The JSON-RPC protocol itself is rmcp's; this crate only frames
//! stdio lines (to answer bad JSON and oversized requests with errors) and maps toolsmith onto
//! rmcp's server handler.

mod config;
mod error;
mod http;
mod intake;
mod pool;
mod server;
mod stdio;

use std::net::SocketAddr;

pub use config::McpConfig;
pub use error::ServeError;
pub use server::McpServer;
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
    // One client: its messages on one thread (fewer wake-ups between threads per call), its
    // tools on the server's tool threads as always.
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

/// Serves `registry` over streamable HTTP at `addr` (every path answers; `/mcp` by convention),
/// statelessly, with `config`, until the process ends. Starts its own async runtime.
///
/// # Errors
/// When a tool cannot be declared, the runtime cannot start, or `addr` cannot be bound.
pub fn serve_http(
    registry: Registry,
    addr: SocketAddr,
    config: McpConfig,
) -> Result<(), ServeError> {
    let server = McpServer::new(registry, config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|error| ServeError::Bind { addr, error })?;
        server.serve_http(listener).await
    })
}
