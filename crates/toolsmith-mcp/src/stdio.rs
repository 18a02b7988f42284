//! [`LineTransport`]: newline-delimited JSON-RPC over any byte streams (stdio by default), with
//! a bound on each line and an error answer to every line that is not a message.
//!
//! rmcp's own stream transport drops unparsable and oversized lines without a word; a client
//! waiting on a request it sent would wait forever. This one answers: a line that is not JSON
//! gets a parse error (`-32700`, id `null`), JSON that is not a JSON-RPC message gets an invalid
//! request (`-32600`) with the request's id where it has one, and a line over the size limit gets
//! an invalid request with the id read from the line's first bytes where it can be found there.
//! The protocol itself (what a message means, the handshake, dispatch) stays rmcp's.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, ErrorCode, ErrorData, JsonRpcMessage,
    RequestId,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// How much of an oversized line is kept to find its id in.
const ID_SCAN_BYTES: usize = 4096;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// An MCP server transport over a reader and a writer: one JSON-RPC message per line each way.
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    max_line_bytes: usize,
    /// The start of a line over the limit, kept until its newline: where its id is looked for.
    oversized: Option<Vec<u8>>,
    write: Arc<Writer<W>>,
}

/// The writing half, shared by every message being sent.
///
/// A message is queued as it is handed over, in order; whichever send then holds the writer
/// writes everything queued by then in one go. Answers finished together (a burst of pipelined
/// calls) leave in one write, rather than costing a system call and a wake of the client each.
/// A failed write loses what it held, and the sends that queued it may report success; the
/// stream is broken by then, and the next send reports the error.
struct Writer<W> {
    queued: std::sync::Mutex<Vec<u8>>,
    /// The writer, and a spare buffer the queue is swapped with.
    out: Mutex<(W, Vec<u8>)>,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    fn queue(&self, bytes: &[u8]) {
        self.queued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(bytes);
    }

    /// Writes and flushes what is queued, if anything: an earlier send may have written it.
    async fn write_queued(&self) -> std::io::Result<()> {
        let mut out = self.out.lock().await;
        let (write, batch) = &mut *out;
        std::mem::swap(
            batch,
            &mut self
                .queued
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if batch.is_empty() {
            return Ok(());
        }
        let written = write.write_all(batch).await;
        batch.clear();
        written?;
        write.flush().await
    }
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport reading `read` and writing `write`, refusing lines over `max_line_bytes`.
    pub fn new(read: R, write: W, max_line_bytes: usize) -> Self {
        LineTransport {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            max_line_bytes,
            oversized: None,
            write: Arc::new(Writer {
                queued: std::sync::Mutex::new(Vec::new()),
                out: Mutex::new((write, Vec::new())),
            }),
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
            if let Some(start) = &mut self.oversized {
                let room = ID_SCAN_BYTES.saturating_sub(start.len());
                start.extend_from_slice(&chunk[..room.min(chunk.len())]);
            } else if self.line.len().saturating_add(take) > self.max_line_bytes {
                let mut start = std::mem::take(&mut self.line);
                start.truncate(ID_SCAN_BYTES);
                let room = ID_SCAN_BYTES.saturating_sub(start.len());
                start.extend_from_slice(&chunk[..room.min(chunk.len())]);
                self.oversized = Some(start);
            } else {
                self.line.extend_from_slice(chunk);
            }
            self.read.consume(take);
            if newline.is_some() {
                return Ok(match self.oversized.take() {
                    Some(start) => Line::Oversized(start),
                    None => Line::Complete,
                });
            }
        }
    }
}

/// One message as a line.
fn encode(message: &TxJsonRpcMessage<RoleServer>) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Queues one message as a line and returns the write that sends it.
fn send_line<W: AsyncWrite + Unpin + Send + 'static>(
    write: &Arc<Writer<W>>,
    message: &TxJsonRpcMessage<RoleServer>,
) -> impl Future<Output = std::io::Result<()>> + Send + 'static + use<W> {
    let encoded = encode(message);
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
    /// A line over the limit, dropped; its first bytes.
    Oversized(Vec<u8>),
    Eof,
}

/// One line as a message, as rmcp reads it.
///
/// rmcp reads a message by buffering it whole and then trying each kind of request in turn,
/// which costs several times the parse itself. `tools/call`, the request a busy client sends
/// most, is read straight into its type first; anything that does not read that way (another
/// method, a malformed call) goes through rmcp's reader, so what a line means is rmcp's.
fn parse(text: &[u8]) -> serde_json::Result<RxJsonRpcMessage<RoleServer>> {
    match serde_json::from_slice::<ToolCall<'_>>(text) {
        Ok(call)
            if call.jsonrpc == "2.0"
                && call.method == "tools/call"
                && !call.result
                && !call.error =>
        {
            let mut params = call.params;
            let mut request = CallToolRequest::new(CallToolRequestParams::new(""));
            // rmcp keeps a request's `_meta` in its extensions, not in its params.
            if let Some(meta) = params.meta.take() {
                request.extensions.insert(meta);
            }
            request.params = params;
            Ok(JsonRpcMessage::request(
                ClientRequest::CallToolRequest(request),
                call.id,
            ))
        }
        _ => serde_json::from_slice(text),
    }
}

/// A `tools/call` request as it arrives: `{"jsonrpc":"2.0","id":..,"method":"tools/call",
/// "params":{..}}`, other members ignored, as rmcp ignores them.
/// `jsonrpc` and `method` are read in place (rmcp's types for them copy each into a string).
#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    params: CallToolRequestParams,
    /// A message with a `result` or `error` as well is not a request to rmcp.
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

/// `true` for a member that is there, whatever its value (`null` too).
fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(value).map(|_| true)
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
            let answer = match self.read_line().await.ok()? {
                Line::Eof => return None,
                Line::Oversized(start) => Some((
                    top_level_id(&start),
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
                    let mut text = line.strip_suffix(b"\n").unwrap_or(&line);
                    text = text.strip_suffix(b"\r").unwrap_or(text);
                    text = text.strip_prefix(UTF8_BOM).unwrap_or(text);
                    let parsed = if text.iter().all(u8::is_ascii_whitespace) {
                        None
                    } else {
                        Some(parse(text))
                    };
                    let answer = match parsed {
                        None => None,
                        Some(Ok(message)) => {
                            self.line = recycle(line);
                            return Some(message);
                        }
                        Some(Err(error)) => reject(text, &error),
                    };
                    self.line = recycle(line);
                    answer
                }
            };
            if let Some((id, error)) = answer {
                let message: TxJsonRpcMessage<RoleServer> = JsonRpcMessage::error(error, id);
                send_line(&self.write, &message).await.ok()?;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.write_queued().await?;
        self.write.out.lock().await.0.shutdown().await
    }
}

/// The line buffer, emptied, keeping its capacity.
fn recycle(mut line: Vec<u8>) -> Vec<u8> {
    line.clear();
    line
}

/// The `id` of the JSON object that `start` begins, when its value is within `start`: a key
/// `"id"` at the top level followed by a number or a string without escapes.
fn top_level_id(start: &[u8]) -> Option<RequestId> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < start.len() {
        match start[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let end = string_end(start, i)?;
                if depth == 1 && &start[i..=end] == b"\"id\"" {
                    let rest = skip_space(start, end + 1);
                    if start.get(rest) == Some(&b':') {
                        return id_value(start, skip_space(start, rest + 1));
                    }
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where the string starting at `open` (a quote) ends: its closing quote.
fn string_end(text: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

fn skip_space(text: &[u8], mut i: usize) -> usize {
    while text.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

fn id_value(text: &[u8], at: usize) -> Option<RequestId> {
    let rest = text.get(at..)?;
    let end = if rest.first() == Some(&b'"') {
        string_end(text, at)? - at + 1
    } else {
        rest.iter()
            .position(|b| !(b.is_ascii_digit() || *b == b'-'))?
    };
    serde_json::from_slice(&rest[..end]).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

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
        top_level_id(text.as_bytes()).map(|id| id.to_string())
    }

    /// What rmcp's own reader makes of `line`: the message as JSON, or that it is not one.
    fn as_rmcp_reads_it(line: &str) -> Option<Value> {
        let message = serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(line).ok()?;
        Some(serde_json::to_value(message).unwrap())
    }

    fn as_parsed(line: &str) -> Option<Value> {
        let message = parse(line.as_bytes()).ok()?;
        Some(serde_json::to_value(message).unwrap())
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
    fn a_tool_call_is_read_as_one() {
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2},"_meta":{"progressToken":7}}}"#;
        let Ok(JsonRpcMessage::Request(request)) = parse(line.as_bytes()) else {
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
}
