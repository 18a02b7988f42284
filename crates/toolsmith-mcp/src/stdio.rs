//! [`LineTransport`]: newline-delimited JSON-RPC over any byte streams (stdio by default), with
//! a bound on each line and an error answer to every line that is not a message.
//!
//! rmcp's own stream transport drops unparsable and oversized lines without a word; a client
//! waiting on a request it sent would wait forever. This one answers: a line that is not JSON
//! gets a parse error (`-32700`, id `null`), JSON that is not a JSON-RPC message gets an invalid
//! request (`-32600`) with the request's id where it has one, and a line over the size limit gets
//! an invalid request with the id read from the line's first bytes where it can be found there.
//! The protocol itself (what a message means, the handshake, dispatch) stays rmcp's.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
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
    write: Arc<Mutex<W>>,
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
            write: Arc::new(Mutex::new(write)),
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

/// Writes one line, whole, and flushes it.
async fn write_line<W: AsyncWrite + Unpin>(
    write: Arc<Mutex<W>>,
    bytes: std::io::Result<Vec<u8>>,
) -> std::io::Result<()> {
    let bytes = bytes?;
    let mut write = write.lock().await;
    write.write_all(&bytes).await?;
    write.flush().await
}

enum Line {
    /// `self.line` holds a whole line.
    Complete,
    /// A line over the limit, dropped; its first bytes.
    Oversized(Vec<u8>),
    Eof,
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
        write_line(Arc::clone(&self.write), encode(&item))
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
                        Some(serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text))
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
                write_line(Arc::clone(&self.write), encode(&message))
                    .await
                    .ok()?;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
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
    use super::*;

    fn id(text: &str) -> Option<String> {
        top_level_id(text.as_bytes()).map(|id| id.to_string())
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
