//! The transports' entry points on [`McpServer`]: any byte streams, stdio, and streamable HTTP
//! (stateless).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use rmcp::ServiceExt;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::ServerInitializeError;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde::de::IgnoredAny;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tower_service::Service;

use crate::error::ServeError;
use crate::server::McpServer;

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
        let transport = self.line_transport(read, write);
        let running = match self.clone().serve(transport).await {
            Ok(running) => running,
            // A client may leave before its first request (after `server/discover`, say).
            Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(error) => return Err(ServeError::Connection(error.to_string())),
        };
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|error| ServeError::Connection(error.to_string()))
    }

    /// Serves one client over this process's stdin and stdout. When both are pipes (as MCP
    /// clients launch servers) they are read and written on the runtime's I/O driver rather than
    /// through a blocking thread per read and write (rmcp's `stdio_pipes`).
    ///
    /// # Errors
    /// As [`serve`](McpServer::serve).
    pub async fn serve_stdio(&self) -> Result<(), ServeError> {
        let (read, write) = rmcp::transport::stdio_pipes();
        self.serve(read, write).await
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
    /// In front of rmcp's service, a POST body is read whole (up to the request size limit,
    /// else status 413) and one that is not JSON is answered with a JSON-RPC parse error
    /// (status 400), as on stdio.
    ///
    /// # Errors
    /// [`ServeError::Accept`] when the listener fails.
    pub async fn serve_http(&self, listener: TcpListener) -> Result<(), ServeError> {
        let front = Front {
            service: self.http_service(),
            max_request_bytes: self.config().max_request_bytes(),
        };
        loop {
            let (stream, _peer) = listener.accept().await.map_err(ServeError::Accept)?;
            let front = front.clone();
            let service = hyper::service::service_fn(move |request| front.clone().handle(request));
            tokio::spawn(async move {
                // A connection that breaks concerns only its client.
                let _ = Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }
}

type Response = hyper::Response<BoxBody<Bytes, Infallible>>;

/// What stands before rmcp's HTTP service: the body limit and the parse error.
#[derive(Clone)]
struct Front {
    service: StreamableHttpService<McpServer, NeverSessionManager>,
    max_request_bytes: usize,
}

impl Front {
    async fn handle(
        mut self,
        request: hyper::Request<hyper::body::Incoming>,
    ) -> Result<Response, Infallible> {
        if request.method() != hyper::Method::POST {
            return self.service.call(request).await;
        }
        let (parts, body) = request.into_parts();
        let bytes = match Limited::new(body, self.max_request_bytes).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(error) if error.is::<LengthLimitError>() => {
                let message = format!(
                    "Request too large: over the server's limit of {} bytes",
                    self.max_request_bytes
                );
                return Ok(json_rpc_error(
                    hyper::StatusCode::PAYLOAD_TOO_LARGE,
                    ErrorData::invalid_request(message, None),
                ));
            }
            Err(error) => {
                let message = format!("the request body could not be read: {error}");
                return Ok(json_rpc_error(
                    hyper::StatusCode::BAD_REQUEST,
                    ErrorData::invalid_request(message, None),
                ));
            }
        };
        let (parts, bytes) = crate::intake::http_body(parts, bytes);
        if let Err(error) = serde_json::from_slice::<IgnoredAny>(&bytes) {
            return Ok(json_rpc_error(
                hyper::StatusCode::BAD_REQUEST,
                ErrorData::new(
                    ErrorCode::PARSE_ERROR,
                    format!("Parse error: the body is not JSON ({error})"),
                    None,
                ),
            ));
        }
        self.service
            .call(hyper::Request::from_parts(parts, Full::new(bytes)))
            .await
    }
}

/// A JSON-RPC error answering no particular request (id `null`), with `status`.
fn json_rpc_error(status: hyper::StatusCode, error: ErrorData) -> Response {
    let message: ServerJsonRpcMessage = JsonRpcMessage::error(error, None);
    let body = serde_json::to_vec(&message).unwrap_or_default();
    let mut response = hyper::Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}
