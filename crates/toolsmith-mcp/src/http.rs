//! The transports' entry points on [`McpServer`]: any byte streams, stdio, and streamable HTTP
//! (stateless).

use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;

use crate::error::ServeError;
use crate::server::McpServer;
use crate::stdio::LineTransport;

impl McpServer {
    /// Serves one client over `read` and `write` (newline-delimited JSON-RPC, as on stdio) until
    /// the client closes `read`.
    ///
    /// # Errors
    /// [`ServeError::Connection`] when the client does not complete the MCP handshake.
    pub async fn serve<R, W>(&self, read: R, write: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let transport = LineTransport::new(read, write, self.config().max_request_bytes());
        let running = self
            .clone()
            .serve(transport)
            .await
            .map_err(|error| ServeError::Connection(error.to_string()))?;
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|error| ServeError::Connection(error.to_string()))
    }

    /// Serves one client over this process's stdin and stdout.
    ///
    /// # Errors
    /// As [`serve`](McpServer::serve).
    pub async fn serve_stdio(&self) -> Result<(), ServeError> {
        self.serve(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// The streamable HTTP service (a tower service, to mount at `/mcp` in any HTTP server),
    /// stateless: every request is served by a fresh handle on this server, no session is kept,
    /// and plain JSON answers simple requests.
    pub fn http_service(&self) -> StreamableHttpService<McpServer, NeverSessionManager> {
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_max_request_body_bytes(self.config().max_request_bytes());
        if let Some(hosts) = self.config().allowed_hosts() {
            config = config.with_allowed_hosts(hosts.iter().cloned());
        }
        let server = self.clone();
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        )
    }

    /// Serves streamable HTTP on `listener` until accepting fails. Every path answers as the MCP
    /// endpoint; clients use `/mcp` by convention.
    ///
    /// # Errors
    /// [`ServeError::Accept`] when the listener fails.
    pub async fn serve_http(&self, listener: TcpListener) -> Result<(), ServeError> {
        let service = TowerToHyperService::new(self.http_service());
        loop {
            let (stream, _peer) = listener.accept().await.map_err(ServeError::Accept)?;
            let service = service.clone();
            tokio::spawn(async move {
                // A connection that breaks concerns only its client.
                let _ = Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }
}
