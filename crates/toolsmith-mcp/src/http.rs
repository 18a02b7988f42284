//! The transports' entry points on [`McpServer`]: any byte streams, stdio, and streamable HTTP
//! (stateless).
//!
//! Over HTTP, a front checks each request ([`guard`] for `Host` and `Origin`, then the method,
//! the content type, the body's size, and that the body is one JSON-RPC message, [`message`])
//! before rmcp's service answers it, so that every error is a JSON-RPC error with the status
//! that says what went wrong ([`reply`]).

pub(crate) mod guard;
mod message;
mod reply;

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::StatusCode;
use hyper::body::Body;
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, ErrorData};
use rmcp::service::ServerInitializeError;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;

use crate::error::ServeError;
use crate::server::McpServer;
use crate::stdio::LineTransport;

use self::guard::Guard;
use self::reply::Response;

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

    /// rmcp's streamable HTTP service alone (a tower service, to mount at `/mcp` in another
    /// HTTP server), stateless: every request is served by a fresh handle on this server, no
    /// session is kept, and plain JSON answers simple requests. It checks `Host` and `Origin` by
    /// the same rules as [`serve_http`](McpServer::serve_http) and bounds the body's size, but
    /// it has none of the rest of `serve_http`'s front: its refusals are plain text, and the
    /// server it is mounted in bounds connections and time.
    pub fn http_service(&self) -> StreamableHttpService<McpServer, NeverSessionManager> {
        let guard = Guard::new(self.config());
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_max_request_body_bytes(self.config().max_request_bytes())
            .with_allowed_hosts(guard.rmcp_hosts())
            .with_allowed_origins(guard.rmcp_origins())
            .enforce_origin_validation();
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
    /// Each request is checked before rmcp's service sees it, and refused with a JSON-RPC error
    /// (id `null` where none is known) and the status that says why: another method than POST
    /// (405), a `Host` or `Origin` that is not allowed (403), a content type that is not
    /// `application/json` (415), a body declared or found larger than the
    /// [limit](crate::McpConfig::with_max_request_bytes) (413, at once for a declared one),
    /// a body that is not UTF-8 JSON nested at most 128 deep (400, parse error), a batch or
    /// anything but one JSON-RPC message (400, invalid request). rmcp's own refusals (an
    /// `Accept` without both JSON and event streams, 406; an unknown protocol version, 400) come
    /// back as JSON-RPC errors too.
    ///
    /// # Errors
    /// [`ServeError::Accept`] when the listener fails.
    pub async fn serve_http(&self, listener: TcpListener) -> Result<(), ServeError> {
        let front = Front::new(self);
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

/// What stands before rmcp's HTTP service: the checks of every request.
#[derive(Clone)]
struct Front {
    service: StreamableHttpService<McpServer, NeverSessionManager>,
    guard: Arc<Guard>,
    max_request_bytes: usize,
}

impl Front {
    fn new(server: &McpServer) -> Self {
        Front {
            service: server.http_service(),
            guard: Arc::new(Guard::new(server.config())),
            max_request_bytes: server.config().max_request_bytes(),
        }
    }

    async fn handle(
        self,
        request: hyper::Request<hyper::body::Incoming>,
    ) -> Result<Response, Infallible> {
        Ok(self.answer(request).await)
    }

    async fn answer(&self, request: hyper::Request<hyper::body::Incoming>) -> Response {
        if let Some(refusal) = self.refuse_head(&request) {
            return refusal;
        }
        let (parts, body) = request.into_parts();
        let bytes = match self.read_body(body).await {
            Ok(bytes) => bytes,
            Err(refusal) => return *refusal,
        };
        // Here the body is in hand, read whole: `bytes`, no larger than the limit.
        if let Err(not_a_message) = message::check_json(&bytes) {
            return not_a_message_reply(not_a_message);
        }
        // Here `bytes` is known to be one JSON object: UTF-8, nested within the limit.
        let id = match message::read(&bytes) {
            Ok(ClientJsonRpcMessage::Request(request)) => Some(request.id),
            Ok(_) => None,
            Err(not_a_message) => return not_a_message_reply(not_a_message),
        };
        let response = self
            .service
            .handle(hyper::Request::from_parts(parts, Full::new(bytes)))
            .await;
        reply::as_json_rpc(response, id).await
    }

    /// The answer refusing a request before its body is read, if it is refused: for its `Host`
    /// or `Origin`, its method, its content type or its declared length.
    fn refuse_head(&self, request: &hyper::Request<hyper::body::Incoming>) -> Option<Response> {
        if let Err(refusal) = self.guard.check(request.uri(), request.headers()) {
            let error = ErrorData::invalid_request(refusal.message(), None);
            return Some(refused(request, refusal.status(), error));
        }
        if request.method() != hyper::Method::POST {
            let message = format!(
                "Method Not Allowed: this MCP endpoint answers POST (a JSON-RPC message), not {}",
                request.method()
            );
            let error = ErrorData::invalid_request(message, None);
            let mut response = refused(request, StatusCode::METHOD_NOT_ALLOWED, error);
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static("POST"));
            return Some(response);
        }
        let content_type = request
            .headers()
            .get(CONTENT_TYPE)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        let json = content_type
            .as_deref()
            .is_some_and(|value| reply::essence(value).eq_ignore_ascii_case("application/json"));
        if !json {
            let given = match content_type {
                Some(given) => format!("not `{given}`"),
                None => "and no Content-Type was given".to_owned(),
            };
            let message =
                format!("Unsupported Media Type: the body must be `application/json`, {given}");
            let error = ErrorData::invalid_request(message, None);
            return Some(refused(request, StatusCode::UNSUPPORTED_MEDIA_TYPE, error));
        }
        let limit = self.max_request_bytes;
        let declared = request.body().size_hint().lower();
        if declared > u64::try_from(limit).unwrap_or(u64::MAX) {
            let message = format!(
                "Request too large: the body of {declared} bytes is over the server's limit of \
                 {limit} bytes"
            );
            return Some(reply::closing(too_large(message, limit)));
        }
        None
    }

    /// The body, read whole within the size limit.
    async fn read_body(&self, body: hyper::body::Incoming) -> Result<Bytes, Box<Response>> {
        let limit = self.max_request_bytes;
        let refusal = match Limited::new(body, limit).collect().await {
            Ok(collected) => return Ok(collected.to_bytes()),
            Err(error) if error.is::<LengthLimitError>() => too_large(
                format!("Request too large: the body is over the server's limit of {limit} bytes"),
                limit,
            ),
            Err(error) => reply::error(
                StatusCode::BAD_REQUEST,
                ErrorData::invalid_request(
                    format!("Bad Request: the body could not be read ({error})"),
                    None,
                ),
                None,
            ),
        };
        // What is left of the body must not be read as the next request.
        Err(Box::new(reply::closing(refusal)))
    }
}

/// A refusal of `request` before its body is read: the connection closes after it when there is
/// a body, so that the body is not read as the next request.
fn refused<B: Body>(request: &hyper::Request<B>, status: StatusCode, error: ErrorData) -> Response {
    let response = reply::error(status, error, None);
    if request.body().is_end_stream() {
        response
    } else {
        reply::closing(response)
    }
}

fn too_large(message: String, limit: usize) -> Response {
    reply::error(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorData::invalid_request(message, Some(json!({"max_request_bytes": limit}))),
        None,
    )
}

fn not_a_message_reply(not_a_message: message::NotAMessage) -> Response {
    let (error, id) = not_a_message.into_error();
    reply::error(StatusCode::BAD_REQUEST, error, id)
}
