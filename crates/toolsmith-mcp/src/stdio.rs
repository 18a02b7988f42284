//! The stdio transport: [`LineTransport`], newline-delimited JSON-RPC over any byte streams
//! (stdio by default), with a bound on each line and an error answer to every line that is not a
//! message; and [`McpServer`]'s entry points over it, [`serve`](McpServer::serve) (one client
//! over any byte streams) and [`serve_stdio`](McpServer::serve_stdio).
//!
//! rmcp's own stream transport drops unparsable and oversized lines without a word; a client
//! waiting on a request it sent would wait forever. This one answers: a line that is not JSON
//! gets a parse error (`-32700`, `"id": null`), JSON that is not a JSON-RPC message gets an
//! invalid request (`-32600`) with the request's id where it has one (else `null`, as JSON-RPC
//! 2.0 asks), and a line over the size limit gets an invalid request with the id read from the
//! line as it passes (wherever in the object it is; the line itself is never held). A leading
//! UTF-8 byte order mark is dropped.
//!
//! Before the handshake, a request other than `initialize` (or `ping`, or one carrying its
//! protocol version in `_meta` as protocol 2026-07-28 allows) is answered with an error saying
//! to initialize first, and a notification or response, which rmcp would end the connection
//! for, is dropped. The protocol itself (what a message means, the handshake, dispatch) stays
//! rmcp's.
//!
//! Serving an [`McpServer`], the transport also takes each `tools/call`'s arguments as their
//! text (see [`intake`](crate::intake)), and gives each call a place among those the server has
//! taken before handing it over: with every place taken (the concurrency limit running and the
//! queue full), it reads nothing more until one frees, so a client's burst waits its turn in
//! the pipe instead of being refused. (Should none free within twice the call timeout, the
//! call is answered as busy and reading goes on.)
//!
//! The client's end of such a connection, [`ClientLines`], reads and writes lines the same way,
//! and reads each answer to a `tools/call` straight into its type.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, GetExtensions, GetMeta,
    InitializeRequestParams, JsonRpcMessage, MetaObject, ProtocolVersion, RequestId,
    RequestMetaObject, ServerJsonRpcMessage,
};
use rmcp::service::{RxJsonRpcMessage, ServerInitializeError, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleClient, RoleServer, ServiceExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::error::ServeError;
use crate::intake::{CallIntake, ToolAnswer, ToolCall, UTF8_BOM};
use crate::server::McpServer;
pub(crate) use direct::{CallAnswer, ClientCalls};
use direct::{Direct, PeerSlot};

mod direct;

/// An MCP server transport over a reader and a writer: one JSON-RPC message per line each way.
///
/// Every line gets an answer, as rmcp's own stream transport does not promise: one that is not
/// JSON a parse error, one that is not a message an invalid request, one over the size limit
/// "request too large", each with the request's id where it can be read (else `"id": null`).
/// A leading UTF-8 byte order mark is dropped. Before the handshake, a request other than
/// `initialize` or `ping` is told to send `initialize` first, and a notification is dropped
/// rather than ending the connection.
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    max_line_bytes: usize,
    /// The outline of a line over the limit, read as it passes, until its newline.
    oversized: Option<Outline>,
    write: Arc<Writer<W>>,
    /// Serving an [`McpServer`]: the places for its calls. Calls then carry their arguments'
    /// text and their place to the server.
    places: Option<Places>,
    /// A call read and waiting for its place, kept here so that a `receive` given up while it
    /// waits loses nothing.
    waiting: Option<WaitingCall>,
    /// Whether the handshake is still to come.
    handshake: bool,
    /// Whether an answer to a bad line is being written: a `receive` given up while it wrote
    /// leaves it to the next one to finish.
    answering: bool,
    /// Serving an [`McpServer`] over a lasting connection: the calls answered here rather than
    /// through rmcp's loop.
    direct: Option<Direct>,
}

/// The places for an [`McpServer`]'s calls, and how long a call read waits for one.
struct Places {
    semaphore: Arc<Semaphore>,
    /// Twice the call timeout: with no place free for that long, the call is handed over
    /// without one, to be answered as busy, and reading goes on. Every call holding a place
    /// answers (and frees it) by its deadline, one call timeout after it took the place, so a
    /// place frees within one call timeout of the wait's start; the second is slack, so that a
    /// place freed at a holder's very deadline is never lost to the wait's own timer firing in
    /// the same tick.
    wait: Duration,
}

/// A `tools/call` read by a transport serving an [`McpServer`], not yet handed over.
struct WaitingCall {
    id: RequestId,
    request: ClientRequest,
    arguments: Option<Box<str>>,
    /// Since when it waits for a place, once it had to.
    blocked_since: Option<Instant>,
}

impl WaitingCall {
    fn admit(mut self, place: Option<OwnedSemaphorePermit>) -> RxJsonRpcMessage<RoleServer> {
        self.request
            .extensions_mut()
            .insert(CallIntake::new(self.arguments, place));
        JsonRpcMessage::request(self.request, self.id)
    }
}

/// The writing half, shared by every message being sent.
///
/// A message is queued as it is handed over, in order; whichever send then holds the writer
/// writes everything queued by then in one go. Answers finished together (a burst of pipelined
/// calls) leave in one write, rather than costing a system call and a wake of the client each.
///
/// A write given up part way (its send's future dropped, as rmcp's loop drops a `receive` that
/// was answering a bad line) goes on from where it stopped at the next send, so no message is
/// cut or sent twice; a flush given up is made by the next send. (An error answer to a bad line
/// that a `receive` gave up writing is finished by the next `receive`, should no send come
/// first: only then does reading wait on writing, as it did while that answer was written.) A
/// failed write breaks the writer: that send and every later one answer the error, the sends
/// whose messages it held included.
struct Writer<W> {
    queued: std::sync::Mutex<Vec<u8>>,
    out: Mutex<Out<W>>,
}

/// The writer and what it is writing.
struct Out<W> {
    write: W,
    /// The bytes being written (a spare buffer the queue is swapped with, when empty).
    batch: Vec<u8>,
    /// How many of them are written.
    written: usize,
    /// Whether bytes were written since the last flush.
    unflushed: bool,
    /// Why the stream broke, once a write failed.
    broken: Option<(std::io::ErrorKind, String)>,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    fn new(write: W) -> Self {
        Writer {
            queued: std::sync::Mutex::new(Vec::new()),
            out: Mutex::new(Out {
                write,
                batch: Vec::new(),
                written: 0,
                unflushed: false,
                broken: None,
            }),
        }
    }

    fn queue(&self, bytes: &[u8]) {
        self.queued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(bytes);
    }

    /// Writes and flushes what is queued, if anything: an earlier send may have written it.
    /// Cancel-safe: each step either wrote its bytes, counted, or wrote nothing.
    async fn write_queued(&self) -> std::io::Result<()> {
        let mut out = self.out.lock().await;
        let out = &mut *out;
        {
            let mut queued = self
                .queued
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((kind, message)) = &out.broken {
                // Nothing queued will be written: kept, it would grow with every send.
                queued.clear();
                return Err(std::io::Error::new(*kind, message.clone()));
            }
            if out.batch.is_empty() {
                std::mem::swap(&mut out.batch, &mut queued);
            } else {
                out.batch.extend_from_slice(&queued);
                queued.clear();
            }
        }
        if out.batch.is_empty() && !out.unflushed {
            return Ok(());
        }
        let written = out.write_batch().await;
        if let Err(error) = &written {
            out.broken = Some((error.kind(), error.to_string()));
            out.batch.clear();
            out.written = 0;
        }
        written
    }

    /// Writes what is queued, then closes the stream.
    async fn close(&self) -> std::io::Result<()> {
        self.write_queued().await?;
        self.out.lock().await.write.shutdown().await
    }
}

impl<W: AsyncWrite + Unpin> Out<W> {
    /// Writes the rest of the batch, then flushes what was written.
    async fn write_batch(&mut self) -> std::io::Result<()> {
        while self.written < self.batch.len() {
            match self.write.write(&self.batch[self.written..]).await? {
                0 => return Err(std::io::ErrorKind::WriteZero.into()),
                wrote => {
                    self.written += wrote;
                    self.unflushed = true;
                }
            }
        }
        self.batch.clear();
        self.written = 0;
        if self.unflushed {
            self.write.flush().await?;
            self.unflushed = false;
        }
        Ok(())
    }
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport reading `read` and writing `write`, refusing lines over `max_line_bytes`,
    /// for any rmcp server: a `tools/call` reaches it as rmcp reads one.
    pub fn new(read: R, write: W, max_line_bytes: usize) -> Self {
        LineTransport {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            max_line_bytes,
            oversized: None,
            write: Arc::new(Writer::new(write)),
            places: None,
            waiting: None,
            handshake: true,
            answering: false,
            direct: None,
        }
    }

    /// Reads up to the end of the next line into `self.line`, never holding more than the limit.
    /// Cancel-safe: what was read stays in `self` for the next call.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Line::Eof);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let chunk = &available[..take];
            if let Some(outline) = &mut self.oversized {
                outline.feed(chunk);
            } else if self.line.len().saturating_add(take) > self.max_line_bytes {
                let mut outline = Outline::of(&self.line);
                outline.feed(chunk);
                self.line.clear();
                self.oversized = Some(outline);
            } else {
                self.line.extend_from_slice(chunk);
            }
            self.read.consume(take);
            if newline.is_some() {
                return Ok(match self.oversized.take() {
                    Some(outline) => Line::Oversized(outline),
                    None => Line::Complete,
                });
            }
        }
    }

    /// What becomes of a message read before the handshake: rmcp's, an answer, or nothing.
    fn screen(&mut self, request: Option<&ClientRequest>) -> Screened {
        if !self.handshake {
            return Screened::Pass;
        }
        let Some(request) = request else {
            // A notification or a response: rmcp would end the connection for it, and JSON-RPC
            // answers neither.
            return Screened::Drop;
        };
        match request {
            ClientRequest::InitializeRequest(_) => {
                self.handshake = false;
                Screened::Pass
            }
            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => Screened::Pass,
            // rmcp reads an `initialize` whose params are not its params as some other method.
            ClientRequest::CustomRequest(custom) if custom.method == "initialize" => {
                Screened::Answer(invalid_initialize(custom.params.as_ref()))
            }
            // Protocol 2026-07-28 has no handshake: a request that says its version in `_meta`
            // begins the session when its metadata is complete; rmcp says what is missing.
            request if request.get_meta().protocol_version().is_some() => {
                if request
                    .get_meta()
                    .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                    .is_empty()
                {
                    self.handshake = false;
                }
                Screened::Pass
            }
            request => Screened::Answer(not_initialized(request.method())),
        }
    }
}

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
        let server = self.for_lasting_connection();
        let peer = PeerSlot::default();
        let mut transport = server.line_transport(read, write);
        transport.direct = Some(Direct::new(server.clone(), Arc::clone(&peer)));
        let running = match server.serve(transport).await {
            Ok(running) => {
                // The session is open: its calls are answered by the transport from now on.
                let _ = peer.set(running.peer().clone());
                running
            }
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

    /// The newline-delimited transport for this server over `read` and `write`: lines up to the
    /// request size limit, and calls handed over with their arguments' text, each once it has
    /// a place.
    pub(crate) fn line_transport<R, W>(&self, read: R, write: W) -> LineTransport<R, W>
    where
        R: AsyncRead + Send + Unpin,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let mut transport = LineTransport::new(read, write, self.config().max_request_bytes());
        transport.places = Some(Places {
            semaphore: self.places(),
            wait: self.config().call_timeout().saturating_mul(2),
        });
        transport
    }
}

enum Screened {
    Pass,
    Answer(ErrorData),
    Drop,
}

/// The answer to a request made before the handshake.
fn not_initialized(method: &str) -> ErrorData {
    ErrorData::invalid_request(
        format!(
            "The server is not initialized: send `initialize` first, then `{method}` (or, from \
             protocol 2026-07-28 on, give every request the `_meta` fields \
             `io.modelcontextprotocol/protocolVersion` and \
             `io.modelcontextprotocol/clientCapabilities`)"
        ),
        None,
    )
}

/// The answer to an `initialize` whose params do not read as its params: why.
fn invalid_initialize(params: Option<&Value>) -> ErrorData {
    let why = match params {
        None => "it has none".to_owned(),
        Some(params) => match InitializeRequestParams::deserialize(params) {
            Err(error) => error.to_string(),
            Ok(_) => "they do not read as such".to_owned(),
        },
    };
    ErrorData::invalid_params(
        format!(
            "Invalid params for `initialize` (`protocolVersion`, `capabilities` and `clientInfo` \
             are required): {why}"
        ),
        None,
    )
}

/// One message as a line. An error without an id says `"id": null`, as JSON-RPC 2.0 asks of an
/// answer to a request whose id could not be read (rmcp leaves the member out).
fn encode<Req, Resp, Not>(message: &JsonRpcMessage<Req, Resp, Not>) -> std::io::Result<Vec<u8>>
where
    JsonRpcMessage<Req, Resp, Not>: Serialize,
{
    /// An error answering no request that could be identified.
    #[derive(Serialize)]
    struct Unidentified<'a> {
        jsonrpc: &'static str,
        id: (),
        error: &'a ErrorData,
    }
    let mut bytes = match message {
        JsonRpcMessage::Error(error) if error.id.is_none() => serde_json::to_vec(&Unidentified {
            jsonrpc: "2.0",
            id: (),
            error: &error.error,
        }),
        message => serde_json::to_vec(message),
    }
    .map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// A `tools/call` request as a line, written straight from its parts: what rmcp writes (the
/// tests hold the two equal), without rmcp's detour through a copy of the params as a JSON
/// value (made to merge a `_meta` they might hold; a call the client makes has its `_meta` only
/// in the request's extensions). `None` for any other message, and for a call with `_meta` in
/// its params or metadata kept the older way, which rmcp writes.
fn encode_call(message: &TxJsonRpcMessage<RoleClient>) -> Option<std::io::Result<Vec<u8>>> {
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return None;
    };
    if call.params.meta.is_some() || call.extensions.get::<MetaObject>().is_some() {
        return None;
    }
    // The params' own members, as rmcp writes them, after `{` (there is always a `name`; were
    // there none, rmcp would write the call).
    let params = match serde_json::to_vec(&call.params) {
        Ok(params) => params,
        Err(error) => return Some(Err(std::io::Error::other(error))),
    };
    let members = params.strip_prefix(b"{").filter(|rest| *rest != b"}")?;
    let write = || -> serde_json::Result<Vec<u8>> {
        let mut line = Vec::with_capacity(params.len() + 96);
        line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        serde_json::to_writer(&mut line, &request.id)?;
        line.extend_from_slice(br#","method":"tools/call","params":{"#);
        if let Some(meta) = call.extensions.get::<RequestMetaObject>() {
            line.extend_from_slice(br#""_meta":"#);
            serde_json::to_writer(&mut line, &meta.0.0)?;
            line.push(b',');
        }
        line.extend_from_slice(members);
        line.extend_from_slice(b"}\n");
        Ok(line)
    };
    Some(write().map_err(std::io::Error::other))
}

/// Queues one message as a line and returns the write that sends it.
fn send_line<W, Req, Resp, Not>(
    write: &Arc<Writer<W>>,
    message: &JsonRpcMessage<Req, Resp, Not>,
) -> impl Future<Output = std::io::Result<()>> + Send + 'static + use<W, Req, Resp, Not>
where
    W: AsyncWrite + Unpin + Send + 'static,
    JsonRpcMessage<Req, Resp, Not>: Serialize,
{
    send_encoded(write, encode(message))
}

/// Queues a message encoded as a line and returns the write that sends it.
fn send_encoded<W>(
    write: &Arc<Writer<W>>,
    encoded: std::io::Result<Vec<u8>>,
) -> impl Future<Output = std::io::Result<()>> + Send + 'static + use<W>
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    if let Ok(bytes) = &encoded {
        write.queue(bytes);
    }
    let write = Arc::clone(write);
    async move {
        encoded?;
        write.write_queued().await
    }
}

enum Line {
    /// `self.line` holds a whole line.
    Complete,
    /// A line over the limit, dropped; its outline.
    Oversized(Outline),
    Eof,
}

/// A line read.
enum Read {
    Message(RxJsonRpcMessage<RoleServer>),
    /// A `tools/call` for an [`McpServer`], its arguments as text.
    Call(WaitingCall),
}

impl Read {
    fn request(&self) -> Option<&ClientRequest> {
        match self {
            Read::Message(JsonRpcMessage::Request(request)) => Some(&request.request),
            Read::Message(_) => None,
            Read::Call(call) => Some(&call.request),
        }
    }

    fn id(&self) -> Option<RequestId> {
        match self {
            Read::Message(JsonRpcMessage::Request(request)) => Some(request.id.clone()),
            Read::Message(_) => None,
            Read::Call(call) => Some(call.id.clone()),
        }
    }
}

/// One line as a message, as rmcp reads it; with `as_text`, a `tools/call` with its arguments
/// as their text, whatever JSON they are.
///
/// rmcp reads a message by buffering it whole and then trying each kind of request in turn,
/// which costs several times the parse itself. `tools/call`, the request a busy client sends
/// most, is read straight into its type first; anything that does not read that way (another
/// method, a malformed call) goes through rmcp's reader, so what a line means is rmcp's.
fn parse(text: &[u8], as_text: bool) -> serde_json::Result<Read> {
    if let Some(call) = ToolCall::read(text) {
        let raw = call.params.arguments;
        if as_text {
            return Ok(Read::Call(WaitingCall {
                id: call.id,
                request: call.params.into_request(None),
                arguments: raw.map(|raw| raw.get().into()),
                blocked_since: None,
            }));
        }
        // Arguments that are not an object are rmcp's to refuse.
        let arguments = match raw {
            None => Some(None),
            Some(raw) => serde_json::from_str(raw.get()).ok().map(Some),
        };
        if let Some(arguments) = arguments {
            let request = call.params.into_request(arguments);
            return Ok(Read::Message(JsonRpcMessage::request(request, call.id)));
        }
    }
    serde_json::from_slice::<ClientJsonRpcMessage>(text).map(Read::Message)
}

/// What a line that is not a message gets back, if anything.
fn reject(line: &[u8], error: &serde_json::Error) -> Option<(Option<RequestId>, ErrorData)> {
    use serde_json::error::Category;
    match error.classify() {
        Category::Syntax | Category::Eof | Category::Io => Some((
            None,
            ErrorData::new(
                ErrorCode::PARSE_ERROR,
                format!("Parse error: the line is not JSON ({error})"),
                None,
            ),
        )),
        Category::Data => {
            let value: Value = serde_json::from_slice(line).ok()?;
            let id = value.get("id");
            // A notification gets no answer, even a wrong one.
            if id.is_none() && value.get("method").is_some() {
                return None;
            }
            let id = id.and_then(|id| serde_json::from_value(id.clone()).ok());
            Some((
                id,
                ErrorData::invalid_request(
                    format!("Invalid request: not an MCP message ({error})"),
                    None,
                ),
            ))
        }
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        send_line(&self.write, &item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // An answer to a bad line whose write a dropped `receive` gave up on.
            if self.answering {
                self.write.write_queued().await.ok()?;
                self.answering = false;
            }
            if let Some(places) = &self.places
                && let Some(call) = &mut self.waiting
            {
                // Every place taken: nothing more is read until a call ends, or for as long as
                // a call may take, after which the call goes without a place (to be answered as
                // busy), so that tools that never return cannot stop the reading for good.
                let place = match Arc::clone(&places.semaphore).try_acquire_owned() {
                    Ok(place) => Some(place),
                    Err(_) => {
                        let since = *call.blocked_since.get_or_insert_with(Instant::now);
                        let waiting = Arc::clone(&places.semaphore).acquire_owned();
                        tokio::time::timeout_at(since + places.wait, waiting)
                            .await
                            .ok()
                            .and_then(Result::ok)
                    }
                };
                if let Some(call) = self.waiting.take() {
                    let message = call.admit(place);
                    match &self.direct {
                        Some(direct) => match direct.take(message, &self.write) {
                            Some(message) => return Some(message),
                            None => continue,
                        },
                        None => return Some(message),
                    }
                }
            }
            let answer = match self.read_line().await.ok()? {
                Line::Eof => return None,
                Line::Oversized(outline) => Some((
                    outline.id(),
                    ErrorData::invalid_request(
                        format!(
                            "Request too large: over the server's limit of {} bytes",
                            self.max_line_bytes
                        ),
                        Some(serde_json::json!({"max_request_bytes": self.max_line_bytes})),
                    ),
                )),
                Line::Complete => {
                    let line = std::mem::take(&mut self.line);
                    let text = message_text(&line);
                    let parsed = (!is_blank(text)).then(|| parse(text, self.places.is_some()));
                    let answer = match parsed {
                        None => None,
                        Some(Ok(read)) => match self.screen(read.request()) {
                            Screened::Pass => match read {
                                Read::Message(message) => {
                                    self.line = recycle(line);
                                    if let Some(direct) = &self.direct {
                                        direct.note(&message);
                                    }
                                    return Some(message);
                                }
                                Read::Call(call) => {
                                    self.waiting = Some(call);
                                    None
                                }
                            },
                            Screened::Answer(error) => Some((read.id(), error)),
                            Screened::Drop => None,
                        },
                        Some(Err(error)) => reject(text, &error),
                    };
                    self.line = recycle(line);
                    answer
                }
            };
            if let Some((id, error)) = answer {
                let message: TxJsonRpcMessage<RoleServer> = JsonRpcMessage::error(error, id);
                self.answering = true;
                send_line(&self.write, &message).await.ok()?;
                self.answering = false;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The calls answered here, which rmcp's loop does not see, answer before the stream
        // closes, as those it runs itself do.
        if let Some(direct) = &mut self.direct {
            direct.drain().await;
        }
        self.write.close().await
    }
}

/// The client's end of a newline-delimited connection (a stdio server's pipes): lines up to a
/// bound each way as [`LineTransport`] reads them, queued writes leaving together, and each
/// answer to a `tools/call` read straight into its type ([`ToolAnswer`]), each call written
/// straight from its parts; anything else is read and written as rmcp reads and writes it.
///
/// A line that is not JSON is dropped, as rmcp and the other official SDKs do (answering it
/// could start an exchange of errors); a request from the server that does not read as one is
/// answered as an invalid request, with its id; anything else unreadable is dropped with a log
/// line. A line over the bound is dropped too, but an answer whose id can be read from it (as
/// it passes, wherever the id is) fails its request at once (rmcp would leave the call
/// waiting), and such a request is answered as too large. An answer no reader takes (an error
/// without its message, say) fails its request too, with the reader's words, where rmcp would
/// drop it and leave the call waiting for good.
pub(crate) struct ClientLines<R, W> {
    lines: LineTransport<R, W>,
    /// The calls sent beside rmcp's loop, whose answers are handed straight back.
    calls: Option<Arc<ClientCalls<W>>>,
}

impl<R, W> ClientLines<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// The client's end reading `read` (the server's stdout) and writing `write` (its stdin),
    /// dropping lines over `max_line_bytes`.
    pub(crate) fn new(read: R, write: W, max_line_bytes: usize) -> Self {
        ClientLines {
            lines: LineTransport::new(read, write, max_line_bytes),
            calls: None,
        }
    }

    /// The same, and the calls that can be sent on it beside rmcp's loop.
    pub(crate) fn with_calls(
        read: R,
        write: W,
        max_line_bytes: usize,
    ) -> (Self, Arc<ClientCalls<W>>) {
        let mut lines = ClientLines::new(read, write, max_line_bytes);
        let calls = Arc::new(ClientCalls::new(Arc::clone(&lines.lines.write)));
        lines.calls = Some(Arc::clone(&calls));
        (lines, calls)
    }

    /// The next message for rmcp: each answer to a call sent by [`ClientCalls`] is handed to it
    /// instead. Cancel-safe, as [`read_message`](Self::read_message) is.
    async fn next_message(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let Some(message) = self.read_message().await else {
                if let Some(calls) = &self.calls {
                    calls.close();
                }
                return None;
            };
            match &self.calls {
                Some(calls) => {
                    if let Some(message) = calls.answer(message) {
                        return Some(message);
                    }
                }
                None => return Some(message),
            }
        }
    }
}

impl<R, W> Drop for ClientLines<R, W> {
    fn drop(&mut self) {
        if let Some(calls) = &self.calls {
            calls.close();
        }
    }
}

impl<R, W> Transport<RoleClient> for ClientLines<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let encoded = encode_call(&item).unwrap_or_else(|| encode(&item));
        send_encoded(&self.lines.write, encoded)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.next_message().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.lines.write.close().await
    }
}

impl<R, W> ClientLines<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// The next message read from the server, an error answering what cannot be read where it
    /// answers a request. Cancel-safe: what was read stays in `self` for the next call.
    async fn read_message(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let lines = &mut self.lines;
        loop {
            // An answer to a bad line whose write a dropped `receive` gave up on.
            if lines.answering {
                lines.write.write_queued().await.ok()?;
                lines.answering = false;
            }
            let answer = match lines.read_line().await {
                Err(error) => {
                    tracing::debug!("reading the server's output failed: {error}");
                    return None;
                }
                Ok(Line::Eof) => return None,
                Ok(Line::Oversized(outline)) => {
                    let limit = lines.max_line_bytes;
                    let problem = || format!("over the client's limit of {limit} bytes");
                    let data = || serde_json::json!({"max_message_bytes": limit});
                    match from_server(&outline) {
                        FromServer::Answer(id) => {
                            let error = ErrorData::internal_error(
                                format!("the server's answer is {}", problem()),
                                Some(data()),
                            );
                            return Some(JsonRpcMessage::error(error, Some(id)));
                        }
                        FromServer::Request(id) => Some((
                            id,
                            ErrorData::invalid_request(
                                format!("Request too large: {}", problem()),
                                Some(data()),
                            ),
                        )),
                        FromServer::Other => {
                            tracing::warn!("a message from the server {} was dropped", problem());
                            None
                        }
                    }
                }
                Ok(Line::Complete) => {
                    let line = std::mem::take(&mut lines.line);
                    let text = message_text(&line);
                    let read = if is_blank(text) {
                        Unreadable::Blank
                    } else {
                        match read_from_server(text) {
                            Ok(message) => {
                                lines.line = recycle(line);
                                return Some(message);
                            }
                            Err(error) => unreadable_from_server(text, &error),
                        }
                    };
                    lines.line = recycle(line);
                    match read {
                        Unreadable::Blank => None,
                        Unreadable::Answer(id, error) => {
                            return Some(JsonRpcMessage::error(error, Some(id)));
                        }
                        Unreadable::Request(id, error) => Some((id, error)),
                    }
                }
            };
            if let Some((id, error)) = answer {
                let message: TxJsonRpcMessage<RoleClient> = JsonRpcMessage::error(error, Some(id));
                lines.answering = true;
                send_line(&lines.write, &message).await.ok()?;
                lines.answering = false;
            }
        }
    }
}

/// One line from a server as a message, as rmcp reads it: an answer to a `tools/call` straight
/// into its type, anything else through rmcp's reader.
fn read_from_server(text: &[u8]) -> serde_json::Result<RxJsonRpcMessage<RoleClient>> {
    match ToolAnswer::read(text) {
        Some(answer) => Ok(answer),
        None => serde_json::from_slice::<ServerJsonRpcMessage>(text),
    }
}

/// A message from a server that cannot be read whole, by what its outline says it is.
enum FromServer {
    /// An answer to the request with this id: the request fails at once, rather than waiting
    /// for an answer that was dropped.
    Answer(RequestId),
    /// The server's request with this id: answered with an error.
    Request(RequestId),
    /// Neither can be told (a notification, no readable id): dropped.
    Other,
}

fn from_server(outline: &Outline) -> FromServer {
    match outline.id() {
        Some(id) if outline.method => FromServer::Request(id),
        Some(id) if outline.result || outline.error => FromServer::Answer(id),
        _ => FromServer::Other,
    }
}

/// What becomes of a line from a server that is not an MCP message.
enum Unreadable {
    /// Nothing: a blank line, or one nobody waits on.
    Blank,
    /// An answer to this request, which fails with this error instead of waiting for good.
    Answer(RequestId, ErrorData),
    /// The server's request, answered with this error.
    Request(RequestId, ErrorData),
}

/// What a line from a server that is JSON but not an MCP message becomes: an answer (an `id`
/// with a `result` or an `error`) fails its request with the reader's words; a request (a
/// `method` and an `id`) is told it is invalid; the rest is dropped. A line that is not JSON is
/// dropped: it is no answer nor request (a log line that quotes one, say), and answering it
/// could start an exchange of errors.
fn unreadable_from_server(line: &[u8], error: &serde_json::Error) -> Unreadable {
    if error.classify() != serde_json::error::Category::Data {
        tracing::debug!("dropped a line from the server that is not JSON: {error}");
        return Unreadable::Blank;
    }
    let outline = Outline::of(line);
    match from_server(&outline) {
        FromServer::Answer(id) => Unreadable::Answer(
            id,
            ErrorData::internal_error(
                format!("the server's answer could not be read: {error}"),
                None,
            ),
        ),
        FromServer::Request(id) => Unreadable::Request(
            id,
            ErrorData::invalid_request(
                format!("Invalid request: not an MCP message ({error})"),
                None,
            ),
        ),
        FromServer::Other => {
            tracing::debug!("dropped a line from the server that is not an MCP message: {error}");
            Unreadable::Blank
        }
    }
}

/// A line without its line break and a leading byte order mark: the message's text.
fn message_text(line: &[u8]) -> &[u8] {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    text.strip_prefix(UTF8_BOM).unwrap_or(text)
}

/// Whether a line holds nothing but white space (no message, and nothing to answer).
fn is_blank(text: &[u8]) -> bool {
    text.iter().all(u8::is_ascii_whitespace)
}

/// The line buffer, emptied, keeping its capacity.
fn recycle(mut line: Vec<u8>) -> Vec<u8> {
    line.clear();
    line
}

/// What the top level of a JSON object says about itself, read a piece at a time as its bytes
/// pass (a line too long to keep, or one no reader takes): its `id`, and whether it has a
/// `method`, a `result` or an `error`. Bounded memory whatever the line; wherever in the object
/// the members are (the TypeScript SDK writes `id` last).
///
/// Keys are read as JSON reads them, escapes decoded (`"\u0069d"` is `id`). An `id` is taken
/// only when its value ends within the object (a `,` or the closing brace follows it), and only
/// when the object has one `id`.
#[derive(Debug, Default)]
struct Outline {
    /// Nesting outside strings: 1 inside the top-level object.
    depth: usize,
    /// Whether the top-level object has ended (what follows is not read).
    ended: bool,
    in_string: bool,
    /// Where in an escape the string is.
    escape: Escape,
    /// At the top level: whether a `:` was read since the last `,` (a value comes, not a key).
    in_value: bool,
    /// The top-level key being read or last read, while it can still be one of ours.
    key: Vec<u8>,
    /// Whether the key being read has run past what ours are, or holds a character none of
    /// ours has.
    key_other: bool,
    /// The `id`'s value as written, while it is being read.
    id_text: Option<Vec<u8>>,
    /// The `id`'s value once it ended; `Err` when it could not be taken.
    id: Option<Result<Vec<u8>, ()>>,
    method: bool,
    result: bool,
    error: bool,
}

/// Where in a string's escape an [`Outline`] is.
#[derive(Debug, Default, Clone, Copy)]
enum Escape {
    #[default]
    None,
    /// After a `\`.
    Backslash,
    /// In a `\u` escape: the code unit so far, and how many hex digits it has had.
    Unicode { unit: u32, digits: u8 },
}

/// The longest top-level key an [`Outline`] looks for (`method`, `result`).
const OUTLINE_KEY_BYTES: usize = 6;
/// The longest `id` an [`Outline`] keeps.
const OUTLINE_ID_BYTES: usize = 256;

impl Outline {
    /// The outline of a whole text.
    fn of(text: &[u8]) -> Outline {
        let mut outline = Outline::default();
        outline.feed(text);
        outline
    }

    /// Reads the next bytes.
    fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if self.ended {
                return;
            }
            self.step(byte);
        }
    }

    fn step(&mut self, byte: u8) {
        let top = self.depth == 1;
        if top && self.in_value && !self.key_other && self.key == b"id" {
            self.id_byte(byte);
        }
        if self.in_string {
            let key = top && !self.in_value;
            match self.escape {
                Escape::None => self.step_in_string(byte, key),
                Escape::Backslash => {
                    self.escape = Escape::None;
                    let decoded = match byte {
                        b'u' => {
                            self.escape = Escape::Unicode { unit: 0, digits: 0 };
                            return;
                        }
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        // `"`, `\`, `/`; anything else is no JSON, and no key of ours.
                        other => other,
                    };
                    self.key_char(key, u32::from(decoded));
                }
                Escape::Unicode { unit, digits } => {
                    let Some(digit) = char::from(byte).to_digit(16) else {
                        // No JSON, and no key of ours; the byte is read as what it is (a `"`
                        // still ends the string).
                        self.escape = Escape::None;
                        self.key_char(key, u32::MAX);
                        return self.step_in_string(byte, key);
                    };
                    let unit = (unit << 4) | digit;
                    if digits < 3 {
                        self.escape = Escape::Unicode {
                            unit,
                            digits: digits + 1,
                        };
                    } else {
                        self.escape = Escape::None;
                        self.key_char(key, unit);
                    }
                }
            }
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                if top && !self.in_value {
                    self.key.clear();
                    self.key_other = false;
                }
            }
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                if top {
                    self.end_value();
                    self.ended = true;
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if top && !self.in_value => {
                self.in_value = true;
                if !self.key_other {
                    match self.key.as_slice() {
                        b"id" => {
                            self.id = match self.id {
                                None => {
                                    self.id_text = Some(Vec::new());
                                    None
                                }
                                // Two ids: neither is taken.
                                Some(_) => Some(Err(())),
                            }
                        }
                        b"method" => self.method = true,
                        b"result" => self.result = true,
                        b"error" => self.error = true,
                        _ => {}
                    }
                }
            }
            b',' if top => {
                self.end_value();
                self.in_value = false;
                self.key.clear();
                self.key_other = true;
            }
            _ => {}
        }
    }

    /// A byte of a string outside any escape, `key` where the string is a top-level key.
    fn step_in_string(&mut self, byte: u8, key: bool) {
        match byte {
            b'\\' => self.escape = Escape::Backslash,
            b'"' => self.in_string = false,
            _ => self.key_char(key, u32::from(byte)),
        }
    }

    /// A character of a string, `key` where it is part of a top-level key: kept while the key
    /// can still be one of ours (which are ASCII; a character past ASCII, or a `\u` escape
    /// that is no hex, makes it another).
    fn key_char(&mut self, key: bool, char: u32) {
        if !key || self.key_other {
            return;
        }
        match u8::try_from(char) {
            Ok(byte) if byte.is_ascii() && self.key.len() < OUTLINE_KEY_BYTES => {
                self.key.push(byte);
            }
            _ => self.key_other = true,
        }
    }

    /// A byte of the top-level `id`'s value (the `,` or brace ending it included, dropped at
    /// its end).
    fn id_byte(&mut self, byte: u8) {
        if let Some(text) = &mut self.id_text {
            if text.len() < OUTLINE_ID_BYTES {
                text.push(byte);
            } else {
                self.id_text = None;
                self.id = Some(Err(()));
            }
        }
    }

    /// The end of a top-level value: the `id`'s, if it was the one being read.
    fn end_value(&mut self) {
        if let Some(mut text) = self.id_text.take() {
            text.pop();
            if self.id.is_none() {
                self.id = Some(Ok(text));
            }
        }
    }

    /// The object's `id`, when it has one that reads as a request id.
    fn id(&self) -> Option<RequestId> {
        match &self.id {
            Some(Ok(text)) => serde_json::from_slice(text.trim_ascii()).ok(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;
    use rmcp::model::ServerResult;

    #[tokio::test]
    async fn answers_sent_together_leave_whole_and_in_order() {
        let (server_end, mut client_end) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(server_end);
        let mut transport = LineTransport::new(read, write, 1024);
        // Handed over in order, then written in whatever order rmcp's send tasks run.
        let mut tasks = Vec::new();
        for i in 0..200 {
            let message: TxJsonRpcMessage<RoleServer> = JsonRpcMessage::error(
                ErrorData::invalid_request(format!("answer {i}"), None),
                Some(RequestId::Number(i)),
            );
            tasks.push(transport.send(message));
        }
        let tasks: Vec<_> = tasks.into_iter().rev().map(tokio::spawn).collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        transport.close().await.unwrap();
        let mut out = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut client_end, &mut out)
            .await
            .unwrap();
        let ids: Vec<i64> = out
            .lines()
            .map(|line| {
                let answer: Value = serde_json::from_str(line).unwrap();
                answer["id"].as_i64().unwrap()
            })
            .collect();
        assert_eq!(ids, (0..200).collect::<Vec<_>>());
        assert!(out.ends_with('\n'));
    }

    fn id(text: &str) -> Option<String> {
        Outline::of(text.as_bytes()).id().map(|id| id.to_string())
    }

    /// The outline of `text` fed in pieces of every size: the same as read whole.
    fn outline_in_pieces(text: &str) -> (Option<String>, bool, bool, bool) {
        let whole = Outline::of(text.as_bytes());
        let read = |outline: &Outline| {
            (
                outline.id().map(|id| id.to_string()),
                outline.method,
                outline.result,
                outline.error,
            )
        };
        for size in 1..=text.len().max(1) {
            let mut outline = Outline::default();
            for piece in text.as_bytes().chunks(size) {
                outline.feed(piece);
            }
            assert_eq!(read(&outline), read(&whole), "{text} in pieces of {size}");
        }
        read(&whole)
    }

    #[test]
    fn an_outline_finds_the_top_level_id_wherever_it_is_and_in_any_pieces() {
        // The TypeScript SDK writes `id` last.
        assert_eq!(
            outline_in_pieces(r#"{"result":{"id":1,"x":[{"id":2}]},"jsonrpc":"2.0","id":7}"#),
            (Some("7".into()), false, true, false)
        );
        assert_eq!(
            outline_in_pieces(r#" {"method" : "x", "params":{"error":1}, "id" : "a,}b" } "#),
            (Some("a,}b".into()), true, false, false)
        );
        assert_eq!(
            outline_in_pieces(r#"{"error":{"code":1,"message":"\"id\":3,"},"id":-4}"#),
            (Some("-4".into()), false, false, true)
        );
        // A broken `\u` escape ends where its hex does: the string's closing quote still
        // closes it (a line too long to keep that is no JSON still gets its id back).
        for text in [
            r#"{"method":"x","params":"\u","id":5}"#,
            r#"{"method":"x","params":"\u12","id":5}"#,
            r#"{"method":"x","params":"a\uZZ","id":5}"#,
        ] {
            assert_eq!(
                outline_in_pieces(text),
                (Some("5".into()), true, false, false),
                "{text}"
            );
        }
        // Keys spelled with escapes are the keys they decode to.
        assert_eq!(
            outline_in_pieces(r#"{"r\u0065sult":{},"\u0069\u0064":3}"#),
            (Some("3".into()), false, true, false)
        );
        assert_eq!(
            outline_in_pieces(r#"{"\u006D\u0065thod":"x","\/x":1,"\u00e9":2,"id":"\u0041"}"#),
            (Some("A".into()), true, false, false)
        );
        // Not taken: two ids (one spelled with escapes), an id whose value never ends, one that
        // is no request id, keys that only look like ours, a key that only starts like ours.
        for text in [
            r#"{"id":1,"id":2,"result":{}}"#,
            r#"{"id":1,"\u0069d":2,"result":{}}"#,
            r#"{"result":{},"id":12"#,
            r#"{"result":{},"i\"d":3}"#,
            r#"{"result":{},"\u0069\u0064\u0000":3}"#,
            r#"{"result":{},"\u0069\u00e4":3}"#,
            r#"{"result":{},"\u0069\u64":3}"#,
            r#"{"result":{},"id":{"n":1}}"#,
            r#"{"result":{},"id":1.5}"#,
            r#"{"result":{},"idx":3}"#,
            r#"["id",3]"#,
        ] {
            assert_eq!(outline_in_pieces(text).0, None, "{text}");
        }
        assert!(!outline_in_pieces(r#"{"results":1,"methods":2,"errors":3}"#).1);
        let long_id = format!(r#"{{"result":{{}},"id":"{}"}}"#, "x".repeat(300));
        assert_eq!(id(&long_id), None);
    }

    proptest! {
        /// Whatever a message holds and wherever its id is, the outline reads the id serde
        /// reads.
        #[test]
        fn an_outline_reads_the_id_serde_reads(
            members in proptest::collection::btree_map("[a-z\"\\\\]{0,3}", member_value(), 0..4),
            id in prop_oneof![
                any::<i64>().prop_map(Value::from),
                "[a-z\"\\\\,}]{0,5}".prop_map(Value::from),
            ],
            at in 0usize..5,
            // How each letter of the `id` key is spelled: as it is, or as a `\u` escape in
            // lower or upper case hex.
            spelling in proptest::collection::vec(0u8..3, 2),
        ) {
            let mut object: Vec<(String, Value)> = members
                .into_iter()
                .filter(|(key, _)| key != "id")
                .collect();
            object.insert(at.min(object.len()), ("id".to_owned(), id.clone()));
            let id_key: String = "id"
                .chars()
                .zip(&spelling)
                .map(|(letter, how)| match how {
                    0 => letter.to_string(),
                    1 => format!("\\u{:04x}", u32::from(letter)),
                    _ => format!("\\u{:04X}", u32::from(letter)),
                })
                .collect();
            let text = format!(
                "{{{}}}",
                object
                    .iter()
                    .map(|(key, value)| match key.as_str() {
                        "id" => format!("\"{id_key}\":{value}"),
                        key => format!("{}:{value}", Value::from(key)),
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            );
            let expected = serde_json::from_value::<RequestId>(id).ok();
            prop_assert_eq!(Outline::of(text.as_bytes()).id(), expected, "{}", text);
        }
    }

    /// A writer whose writes take a few bytes at a time and can be told to fail.
    struct Trickle {
        out: Arc<std::sync::Mutex<Vec<u8>>>,
        fail: Arc<std::sync::atomic::AtomicBool>,
    }

    impl AsyncWrite for Trickle {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            use std::task::Poll;
            if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
                return Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()));
            }
            // Every other poll is not ready: a write is always under way when it is dropped.
            static TURN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
            if !TURN.fetch_xor(true, std::sync::atomic::Ordering::SeqCst) {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let n = buf.len().min(3);
            self.out.lock().unwrap().extend_from_slice(&buf[..n]);
            Poll::Ready(Ok(n))
        }
        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_write_given_up_part_way_goes_on_where_it_stopped() {
        let out = Arc::new(std::sync::Mutex::new(Vec::new()));
        let fail = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = Arc::new(Writer::new(Trickle {
            out: Arc::clone(&out),
            fail: Arc::clone(&fail),
        }));
        let mut lines = Vec::new();
        for i in 0..40 {
            let line = format!("{{\"n\":{i}}}\n");
            lines.push(line.clone());
            let send = send_encoded(&writer, Ok(line.into_bytes()));
            // Every third send is given up after a few polls, part way through its write.
            if i % 3 == 0 {
                let mut send = std::pin::pin!(send);
                let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                for _ in 0..3 {
                    assert!(send.as_mut().poll(&mut cx).is_pending());
                }
            } else {
                send.await.unwrap();
            }
        }
        send_encoded(&writer, Ok(Vec::new())).await.unwrap();
        assert_eq!(
            String::from_utf8(out.lock().unwrap().clone()).unwrap(),
            lines.concat()
        );

        // A failed write fails the send that made it and every one after.
        fail.store(true, std::sync::atomic::Ordering::SeqCst);
        let first = send_encoded(&writer, Ok(b"{}\n".to_vec()));
        let second = send_encoded(&writer, Ok(b"{}\n".to_vec()));
        assert_eq!(
            first.await.unwrap_err().kind(),
            std::io::ErrorKind::BrokenPipe
        );
        fail.store(false, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            second.await.unwrap_err().kind(),
            std::io::ErrorKind::BrokenPipe
        );
        assert_eq!(
            send_encoded(&writer, Ok(b"{}\n".to_vec()))
                .await
                .unwrap_err()
                .kind(),
            std::io::ErrorKind::BrokenPipe
        );
        // What is sent to a broken writer is not kept.
        assert!(writer.queued.lock().unwrap().is_empty());
    }

    /// What rmcp's own reader makes of `line`: the message as JSON, or that it is not one.
    fn as_rmcp_reads_it(line: &str) -> Option<Value> {
        let message = serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(line).ok()?;
        Some(serde_json::to_value(message).unwrap())
    }

    fn as_parsed(line: &str) -> Option<Value> {
        let Ok(Read::Message(message)) = parse(line.as_bytes(), false) else {
            return None;
        };
        Some(serde_json::to_value(message).unwrap())
    }

    /// What a transport serving an `McpServer` makes of `line`: the message as JSON, its
    /// arguments left out, and the arguments' text.
    fn as_call(line: &str) -> Option<(Value, Option<String>)> {
        match parse(line.as_bytes(), true).ok()? {
            Read::Call(call) => {
                let arguments = call.arguments.as_deref().map(str::to_owned);
                let message = serde_json::to_value(call.admit(None)).unwrap();
                Some((message, arguments))
            }
            Read::Message(message) => Some((serde_json::to_value(message).unwrap(), None)),
        }
    }

    #[test]
    fn a_line_means_what_it_means_to_rmcp() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
            r#"{"params":{"arguments":{"a":2.5,"b":[1,{"c":null}]},"name":"add"},"method":"tools/call","id":"x-1","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","_meta":{"progressToken":7}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":null,"extra":1},"other":true}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","requestState":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"add","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"add"},"result":null}"#,
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"add"},"error":{}}"#,
            r#"{"jsonrpc":"1.0","id":12,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2\u002e0","id":16,"method":"tools\/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":17,"method":"tools/list","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"add"},"id":14}"#,
            r#"{"jsonrpc":"2.0","id":15,"result":{}}"#,
            r#"[1,2]"#,
        ];
        for line in lines {
            assert_eq!(as_parsed(line), as_rmcp_reads_it(line), "{line}");
        }
        // The calls above were read, not only refused alike.
        assert!(as_parsed(lines[0]).is_some() && as_parsed(lines[2]).is_some());
    }

    #[test]
    fn serving_the_server_a_call_means_what_it_means_to_rmcp_but_for_its_arguments_text() {
        let lines = [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"a":3}}}"#,
                Some(r#"{"a":2,"a":3}"#),
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments": "{\"a\":2}" ,"_meta":{"progressToken":7}}}"#,
                Some(r#""{\"a\":2}""#),
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":[1],"requestState":"s"},"other":true}"#,
                Some("[1]"),
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":null}}"#,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add"}}"#,
                None,
            ),
        ];
        for (line, arguments) in lines {
            let (message, text) = as_call(line).unwrap();
            assert_eq!(text.as_deref(), arguments, "{line}");
            // rmcp reads the same request once the arguments are out of it.
            let mut without: Value = serde_json::from_str(line).unwrap();
            without["params"]
                .as_object_mut()
                .unwrap()
                .remove("arguments");
            assert_eq!(
                Some(message),
                as_rmcp_reads_it(&without.to_string()),
                "{line}"
            );
        }
        // Anything else is read as rmcp reads it.
        for line in [
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"1.0","id":8,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"add"},"result":null}"#,
        ] {
            assert_eq!(
                as_call(line).map(|(message, _)| message),
                as_rmcp_reads_it(line),
                "{line}"
            );
        }
    }

    #[test]
    fn an_error_answering_no_identified_request_has_a_null_id() {
        let message: TxJsonRpcMessage<RoleServer> =
            JsonRpcMessage::error(ErrorData::invalid_request("no", None), None);
        let line = String::from_utf8(encode(&message).unwrap()).unwrap();
        assert_eq!(
            line,
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"no\"}}\n"
        );
    }

    #[test]
    fn a_tool_call_is_read_as_one() {
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2},"_meta":{"progressToken":7}}}"#;
        let Ok(Read::Message(JsonRpcMessage::Request(request))) = parse(line.as_bytes(), false)
        else {
            panic!("not a request");
        };
        let ClientRequest::CallToolRequest(call) = request.request else {
            panic!("not a tool call");
        };
        assert_eq!(call.params.name, "add");
        assert_eq!(call.params.arguments.unwrap()["a"], 2);
        assert_eq!(call.params.meta, None);
        let meta = call
            .extensions
            .get::<rmcp::model::RequestMetaObject>()
            .unwrap();
        assert_eq!(meta.0.get("progressToken"), Some(&Value::from(7)));
    }

    #[test]
    fn the_id_of_an_oversized_request_is_read_from_its_start() {
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"#),
            Some("17".into())
        );
        assert_eq!(id(r#"{"id" : "a-1", "method""#), Some("a-1".into()));
    }

    #[test]
    fn an_id_inside_the_params_is_not_the_request_id() {
        assert_eq!(
            id(r#"{"params":{"id":3,"x":"}"},"id":4,"#),
            Some("4".into())
        );
        assert_eq!(id(r#"{"params":{"id":3,"x":"#), None);
    }

    #[test]
    fn an_id_cut_off_by_the_scan_is_not_guessed() {
        assert_eq!(id(r#"{"method":"x","id":12"#), None);
        assert_eq!(id(r#"{"id":"unterminated"#), None);
    }

    /// rmcp's reading of a line from a server, spelled out (every variant and member).
    fn rmcp_reads(line: &str) -> Option<String> {
        serde_json::from_str::<ServerJsonRpcMessage>(line)
            .ok()
            .map(|message| format!("{message:?}"))
    }

    /// A reading spelled out as [`rmcp_reads`] spells it.
    fn spelled(message: Option<ServerJsonRpcMessage>) -> Option<String> {
        message.map(|message| format!("{message:?}"))
    }

    /// Answers to `tools/call` as servers send them (the Python SDK, server-everything, rmcp,
    /// toolsmith), and the edges of the shape.
    const TOOL_ANSWERS: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}],"isError":false,"structuredContent":{"result":5}}}"#,
        r#"{"jsonrpc":"2.0","id":"a-7","result":{"content":[{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5}}]}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"audio","data":"aGk=","mimeType":"audio/wav"}]}}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"a"}},{"type":"resource_link","uri":"file:///b","name":"b"}]}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"no"}],"isError":true}}"#,
        r#"{"jsonrpc":"2.0","id":6,"result":{"isError":true}}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{"structuredContent":null}}"#,
        r#"{"jsonrpc":"2.0","id":8,"result":{"structuredContent":[1,2]}}"#,
        r#"{"jsonrpc":"2.0","id":9,"result":{"content":[],"_meta":{"k":1},"resultType":"complete"}}"#,
        r#"{"result":{"content":[]},"id":10,"jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"caf\u00e9 \"q\""}]}}"#,
    ];

    /// Lines that are not (only) an answer to a `tools/call`: rmcp's reader takes them.
    const OTHER_LINES: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"extra":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":"text"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"1.0","id":1,"result":{"content":[]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no such tool"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}"#,
    ];

    #[test]
    fn a_tool_answer_is_read_straight_into_its_type_as_rmcp_reads_it() {
        for line in TOOL_ANSWERS {
            let fast = ToolAnswer::read(line.as_bytes());
            assert!(fast.is_some(), "not read straight: {line}");
            assert_eq!(spelled(fast), rmcp_reads(line), "{line}");
            assert_eq!(
                spelled(read_from_server(line.as_bytes()).ok()),
                rmcp_reads(line)
            );
        }
    }

    #[test]
    fn every_other_line_is_read_by_rmcp() {
        for line in OTHER_LINES {
            assert!(ToolAnswer::read(line.as_bytes()).is_none(), "{line}");
            assert_eq!(
                spelled(read_from_server(line.as_bytes()).ok()),
                rmcp_reads(line),
                "{line}"
            );
        }
    }

    /// A JSON value for a result member: often of the member's own shape, sometimes anything.
    fn member_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-z\"\\\\é]{0,6}".prop_map(Value::from),
            Just(Value::from("complete")),
            Just(serde_json::json!({"type":"text","text":"t"})),
            Just(serde_json::json!({"type":"image","data":"aGk=","mimeType":"image/png"})),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("type".to_owned()),
                        Just("text".to_owned()),
                        "[a-z]{1,3}"
                    ],
                    inner,
                    0..4
                )
                .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    /// A content block: often one of the protocol's, sometimes anything.
    fn block() -> impl Strategy<Value = Value> {
        let text = "[a-z\"\\\\é ]{0,6}";
        prop_oneof![
            3 => text.prop_map(|t| serde_json::json!({"type": "text", "text": t})),
            1 => (text, any::<f64>()).prop_map(|(t, p)| {
                serde_json::json!({"type": "text", "text": t, "annotations": {"priority": p}})
            }),
            1 => Just(serde_json::json!({"type": "image", "data": "aGk=", "mimeType": "image/png"})),
            1 => text.prop_map(|t| {
                serde_json::json!({"type": "resource", "resource": {"uri": "file:///a", "text": t}})
            }),
            1 => Just(serde_json::json!({"type": "resource_link", "uri": "file:///b", "name": "b"})),
            1 => member_value(),
        ]
    }

    /// A member of a result: mostly one of a tool's answer with a value of its shape, now and
    /// then another kind's member or a value of no particular shape.
    fn member() -> impl Strategy<Value = (String, Value)> {
        let named = |name: &'static str| Just(name.to_owned());
        prop_oneof![
            4 => proptest::collection::vec(block(), 0..3)
                .prop_map(|blocks| ("content".to_owned(), Value::from(blocks))),
            2 => member_value().prop_map(|v| ("structuredContent".to_owned(), v)),
            2 => any::<bool>().prop_map(|b| ("isError".to_owned(), Value::from(b))),
            1 => prop_oneof![Just("complete"), Just("input_required"), Just("")]
                .prop_map(|t| ("resultType".to_owned(), Value::from(t))),
            1 => member_value().prop_map(|v| ("_meta".to_owned(), v)),
            2 => (
                prop_oneof![
                    named("content"),
                    named("isError"),
                    named("resultType"),
                    named("tools"),
                    named("task"),
                    named("action"),
                    named("contents"),
                    "[a-zA-Z_]{1,8}",
                ],
                member_value(),
            ),
        ]
    }

    proptest! {
        /// Whatever a result holds, a line read straight into a tool's answer is what rmcp
        /// reads: the shortcut never changes what a server said.
        #[test]
        fn the_shortcut_never_reads_a_line_otherwise_than_rmcp(
            members in proptest::collection::vec(member(), 0..5),
            id in prop_oneof![
                any::<i64>().prop_map(Value::from),
                "[a-z0-9-]{0,5}".prop_map(Value::from),
            ],
        ) {
            let result = Value::Object(members.into_iter().collect());
            let line = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
            if let Some(fast) = ToolAnswer::read(line.as_bytes()) {
                prop_assert_eq!(spelled(Some(fast)), rmcp_reads(&line), "{}", line);
            }
            prop_assert_eq!(spelled(read_from_server(line.as_bytes()).ok()), rmcp_reads(&line));
        }
    }

    /// The client's end over a pipe: what the server writes, and what the client reads.
    fn client_end() -> (
        ClientLines<
            tokio::io::ReadHalf<tokio::io::DuplexStream>,
            tokio::io::WriteHalf<tokio::io::DuplexStream>,
        >,
        tokio::io::DuplexStream,
    ) {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(client);
        (ClientLines::new(read, write, 256), server)
    }

    #[tokio::test]
    async fn a_client_drops_what_is_not_a_message_and_answers_an_unreadable_request() {
        use tokio::io::AsyncWriteExt;
        let (mut client, mut server) = client_end();
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":\"{}\"}}\n",
            "x".repeat(300)
        );
        let lines = [
            "not json\n",
            "\n",
            long.as_str(),
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/made_up\",\"params\":3}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"sampling/createMessage\",\"params\":7}\n",
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"5\"}]}}\r\n",
        ];
        for line in lines {
            server.write_all(line.as_bytes()).await.unwrap();
        }
        let Some(JsonRpcMessage::Response(answer)) = client.receive().await else {
            panic!("the answer was not read");
        };
        assert_eq!(answer.id, RequestId::Number(9));
        assert!(matches!(answer.result, ServerResult::CallToolResult(_)));
        // Of everything before it, only the request was answered, with its id.
        let mut read = tokio::io::BufReader::new(&mut server);
        let mut line = String::new();
        tokio::io::AsyncBufReadExt::read_line(&mut read, &mut line)
            .await
            .unwrap();
        let error: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(error["id"], "q", "{line}");
        assert_eq!(error["error"]["code"], -32600, "{line}");
        drop(read);
        drop(server);
        assert!(client.receive().await.is_none());
    }

    /// A `tools/call` request as the client sends it: `params` read as rmcp reads them, and
    /// `meta` in the request's extensions, where rmcp's peer puts the progress token.
    fn call_request(
        id: RequestId,
        params: Value,
        meta: Option<Value>,
    ) -> TxJsonRpcMessage<RoleClient> {
        let params: rmcp::model::CallToolRequestParams = serde_json::from_value(params).unwrap();
        let mut request = rmcp::model::Request::new(params);
        if let Some(meta) = meta {
            request
                .extensions
                .insert(serde_json::from_value::<RequestMetaObject>(meta).unwrap());
        }
        JsonRpcMessage::request(ClientRequest::CallToolRequest(request), id)
    }

    #[test]
    fn a_call_is_written_straight_as_rmcp_writes_it() {
        let calls = [
            call_request(
                RequestId::Number(2),
                serde_json::json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
                Some(serde_json::json!({"progressToken": 1})),
            ),
            call_request(
                RequestId::String("x-1".into()),
                serde_json::json!({"name": "echo", "arguments": {"text": "caf\u{e9} \"q\"\n", "n": [1.5, null, {}]}}),
                None,
            ),
            call_request(
                RequestId::Number(-1),
                serde_json::json!({"name": "now"}),
                None,
            ),
            call_request(
                RequestId::Number(3),
                serde_json::json!({
                    "name": "rsvp",
                    "arguments": {},
                    "inputResponses": {"ask-1": {"action": "accept", "content": {"going": true}}},
                    "requestState": "opaque",
                }),
                Some(serde_json::json!({"progressToken": "t", "trace": {"k": [1]}})),
            ),
        ];
        for call in &calls {
            let fast = encode_call(call).unwrap().unwrap();
            assert_eq!(
                String::from_utf8(fast).unwrap(),
                String::from_utf8(encode(call).unwrap()).unwrap()
            );
        }
    }

    #[test]
    fn a_call_with_meta_in_its_params_and_every_other_message_is_written_by_rmcp() {
        let with_meta = call_request(
            RequestId::Number(1),
            serde_json::json!({"name": "add", "_meta": {"progressToken": 1}}),
            None,
        );
        assert!(encode_call(&with_meta).is_none());
        let ping: TxJsonRpcMessage<RoleClient> = JsonRpcMessage::request(
            ClientRequest::PingRequest(rmcp::model::PingRequest::default()),
            RequestId::Number(1),
        );
        assert!(encode_call(&ping).is_none());
        let error: TxJsonRpcMessage<RoleClient> =
            JsonRpcMessage::error(ErrorData::invalid_request("no", None), None);
        assert!(encode_call(&error).is_none());
    }

    proptest! {
        /// Whatever its arguments and metadata, a call written straight is what rmcp writes.
        #[test]
        fn a_call_written_straight_is_always_what_rmcp_writes(
            arguments in proptest::collection::btree_map("[a-z\"é]{0,4}", member_value(), 0..4),
            meta in proptest::option::of(proptest::collection::btree_map("[a-zA-Z]{1,4}", member_value(), 0..3)),
            id in any::<i64>(),
        ) {
            let arguments = Value::Object(arguments.into_iter().collect());
            let meta = meta.map(|meta| Value::Object(meta.into_iter().collect()));
            let call = call_request(
                RequestId::Number(id),
                serde_json::json!({"name": "t", "arguments": arguments}),
                meta,
            );
            let fast = encode_call(&call).unwrap().unwrap();
            prop_assert_eq!(fast, encode(&call).unwrap());
        }
    }

    /// An answer over the client's limit fails its request at once, and a request over it is
    /// answered as too large, each by the id read from it.
    #[tokio::test]
    async fn an_oversized_answer_fails_its_call_and_an_oversized_request_is_answered() {
        use tokio::io::AsyncWriteExt;
        let (mut client, mut server) = client_end();
        let padding = "x".repeat(300);
        let answer = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{padding}\"}}]}}}}\n"
        );
        let request = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"sampling/createMessage\",\"params\":{{\"x\":\"{padding}\"}}}}\n"
        );
        server.write_all(request.as_bytes()).await.unwrap();
        server.write_all(answer.as_bytes()).await.unwrap();
        let received = tokio::time::timeout(Duration::from_secs(10), client.receive()).await;
        let Ok(Some(JsonRpcMessage::Error(failed))) = received else {
            panic!("the oversized answer did not fail its call");
        };
        assert_eq!(failed.id, Some(RequestId::Number(7)));
        assert!(
            failed
                .error
                .message
                .contains("over the client's limit of 256 bytes"),
            "{failed:?}"
        );
        let mut read = tokio::io::BufReader::new(&mut server);
        let mut line = String::new();
        tokio::io::AsyncBufReadExt::read_line(&mut read, &mut line)
            .await
            .unwrap();
        let refused: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(refused["id"], "r", "{line}");
        assert_eq!(refused["error"]["code"], -32600, "{line}");
    }

    /// An error answer a dropped `receive` left half written is finished by the next one,
    /// with no send in between to write it.
    #[tokio::test]
    async fn an_answer_a_dropped_receive_left_half_written_is_finished_by_the_next() {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let (read, mut server_write) = tokio::io::duplex(1 << 16);
        // The server's end of its stdin holds 32 bytes: the answer fills it.
        let (write, server_read) = tokio::io::duplex(32);
        let mut client = ClientLines::new(read, write, 1 << 16);
        server_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"sampling/createMessage\",\"params\":7}\n")
            .await
            .unwrap();
        {
            let mut receive = std::pin::pin!(client.receive());
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            for _ in 0..5 {
                assert!(receive.as_mut().poll(&mut cx).is_pending());
            }
        }
        let reading = tokio::spawn(async move {
            let mut line = String::new();
            tokio::io::BufReader::new(server_read)
                .read_line(&mut line)
                .await
                .unwrap();
            line
        });
        let next = tokio::time::timeout(Duration::from_millis(300), client.receive()).await;
        assert!(next.is_err(), "nothing more was sent to the client");
        let Ok(line) = tokio::time::timeout(Duration::from_secs(5), reading).await else {
            panic!("the answer was not finished");
        };
        let line = line.unwrap();
        let error: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            (&error["id"], &error["error"]["code"]),
            (&Value::from("q"), &Value::from(-32600))
        );
    }

    /// An answer over the limit with its id after the rest, as the TypeScript SDK writes
    /// them, and an answer no reader takes, each fail their call rather than leave it waiting.
    #[tokio::test]
    async fn an_answer_too_long_or_unreadable_fails_its_call_wherever_its_id_is() {
        use tokio::io::AsyncWriteExt;
        let (mut client, mut server) = client_end();
        let padding = "x".repeat(5000);
        let long = format!(
            "{{\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{padding}\"}}]}},\"jsonrpc\":\"2.0\",\"id\":7}}\n"
        );
        // An error without its `message`: rmcp cannot read it.
        let unreadable = "{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{\"code\":-32000}}\n";
        // A log line quoting an answer is not one: it fails nothing, and the answer that
        // follows it is read.
        let logged = "sent: {\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":1}}\n";
        let answer = "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"content\":[]}}\n";
        for line in [logged, answer, &long, unreadable] {
            server.write_all(line.as_bytes()).await.unwrap();
        }
        let Some(JsonRpcMessage::Response(read)) = client.receive().await else {
            panic!("the answer after the log line was not read");
        };
        assert_eq!(read.id, RequestId::Number(6));
        for (id, words) in [
            (7, "over the client's limit of 256 bytes"),
            (8, "could not be read"),
        ] {
            let received = tokio::time::timeout(Duration::from_secs(10), client.receive()).await;
            let Ok(Some(JsonRpcMessage::Error(failed))) = received else {
                panic!("answer {id} did not fail its call: {received:?}");
            };
            assert_eq!(failed.id, Some(RequestId::Number(id)));
            assert!(failed.error.message.contains(words), "{failed:?}");
        }
    }
}
