//! Calls answered and made beside rmcp's service loop, on stdio connections: [`Direct`], a
//! server's `tools/call`s answered where its transport reads them, and [`ClientCalls`], a
//! client's `tools/call`s written by their callers and answered straight from the line read.
//!
//! rmcp's loop hands each request it reads to a task of its own, which answers through a
//! channel back to the loop, which writes the answer on another task; a request sent through a
//! peer goes through a channel to the loop, a task writes it, and its answer comes back through
//! the loop and a channel. For a trivial call that is most of the time a server spends on it,
//! and most of what a gateway spends relaying one. Here a server's call is started on one task
//! by the transport, which writes the answer itself; a client's call is written by its caller,
//! and its answer is handed to it by the task reading the server.
//!
//! What a message means stays rmcp's. A server's call runs rmcp's own request handling
//! ([`Service::handle_request`], which shapes the result for the session's protocol version)
//! with the context rmcp's loop would make; a client's call is written and its answer read as
//! rmcp writes and reads them. A client's `notifications/cancelled` cancels a server's call as
//! rmcp would, and its answer is then dropped, as the specification asks. Progress, log
//! messages and questions to the client still go through rmcp's peer: a server's call awaits
//! what it reported being written before its answer is.
//!
//! Only calls on a session opened by `initialize` at a protocol version before 2026-07-28 go
//! this way. Protocol 2026-07-28 carries the session's metadata in every request, which rmcp
//! checks (server) and adds (client) in its loop, so every call on such a session, and every
//! other request, is rmcp's.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use rmcp::model::{
    ClientNotification, ClientRequest, GetExtensions, GetMeta, JsonRpcMessage, JsonRpcRequest,
    NumberOrString, ProgressToken, ProtocolVersion, RequestId, ServerResult,
};
use rmcp::service::{
    Peer, RequestContext, RxJsonRpcMessage, Service, ServiceError, TxJsonRpcMessage,
};
use rmcp::{RoleClient, RoleServer};
use tokio::io::AsyncWrite;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::{Writer, encode, encode_call, send_encoded, send_line};
use crate::server::McpServer;

/// The session's peer, known once rmcp has opened the session.
pub(crate) type PeerSlot = Arc<OnceLock<Peer<RoleServer>>>;

/// The calls a stdio connection's transport answers itself.
pub(crate) struct Direct {
    /// The handler rmcp serves on this connection (the same session).
    server: McpServer,
    peer: PeerSlot,
    /// The calls running, each by its request id, with what cancels it.
    running: Arc<Mutex<HashMap<RequestId, CancellationToken>>>,
    /// Cancelled once the connection has ended and the calls still running have been given
    /// their time to answer ([`drain`](Direct::drain)): those left are then cancelled, as
    /// rmcp's loop cancels its own, and answer nothing.
    connection: CancellationToken,
    /// Held by each call's task (and, until the connection ends, here): when every sender is
    /// gone, so is every call.
    calls_running: Option<mpsc::Sender<()>>,
    all_done: mpsc::Receiver<()>,
}

/// How long the calls still running when a client closes its end are given to answer: what
/// rmcp's loop gives its own.
const DRAIN: Duration = Duration::from_secs(5);

impl Direct {
    /// Calls answered for `server` (the handler rmcp serves on the connection), once `peer` is
    /// set.
    pub(crate) fn new(server: McpServer, peer: PeerSlot) -> Direct {
        let (calls_running, all_done) = mpsc::channel(1);
        Direct {
            server,
            peer,
            running: Arc::default(),
            connection: CancellationToken::new(),
            calls_running: Some(calls_running),
            all_done,
        }
    }

    /// The connection has ended (the client closed its end): the calls still running get
    /// [`DRAIN`] to answer, as rmcp's loop gives its own; then those left are cancelled and
    /// answer nothing.
    pub(crate) async fn drain(&mut self) {
        self.calls_running = None;
        let _ = tokio::time::timeout(DRAIN, self.all_done.recv()).await;
        self.connection.cancel();
    }

    /// Starts `message`, a `tools/call` admitted by the transport, and answers it on `write`;
    /// or gives it back, for rmcp's loop, when it is not one this can take.
    pub(crate) fn take<W>(
        &self,
        message: RxJsonRpcMessage<RoleServer>,
        write: &Arc<Writer<W>>,
    ) -> Option<RxJsonRpcMessage<RoleServer>>
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        // A session begun without `initialize` (`server/discover`, or requests carrying their
        // own protocol version) has no handshake info: its calls stay rmcp's.
        let (Some(peer), Some(calls_running)) = (self.peer.get(), &self.calls_running) else {
            return Some(message);
        };
        let JsonRpcMessage::Request(JsonRpcRequest {
            id, mut request, ..
        }) = message
        else {
            return Some(message);
        };
        let plain = matches!(request, ClientRequest::CallToolRequest(_))
            && request.get_meta().protocol_version().is_none()
            && peer
                .peer_info()
                .is_some_and(|info| info.protocol_version < ProtocolVersion::V_2026_07_28);
        if !plain {
            return Some(JsonRpcMessage::request(request, id));
        }
        // The context rmcp's loop makes: the request's metadata and extensions (the
        // transport's intake among them) moved into it.
        let cancellation = self.connection.child_token();
        let mut context = RequestContext::new(id.clone(), peer.clone());
        context.ct = cancellation.clone();
        context.meta = std::mem::take(request.get_meta_mut());
        context.extensions = std::mem::take(request.extensions_mut());
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), cancellation);
        // rmcp's handling of the request, boxed here: its state (kilobytes, for every kind of
        // request rmcp handles) is then written once, not copied again with the task that
        // awaits it as tokio moves it into place.
        let server = self.server.clone();
        let answering = Box::pin(async move { server.handle_request(request, context).await });
        let running = Arc::clone(&self.running);
        let connection = self.connection.clone();
        let write = Arc::clone(write);
        let calls_running = calls_running.clone();
        tokio::spawn(async move {
            let _running = calls_running;
            let answered = answering.await;
            let cancelled = running
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id)
                .is_none();
            // A cancelled call, or one whose connection ended, is answered nothing.
            if cancelled || connection.is_cancelled() {
                return;
            }
            // Queued now, written once the other calls ready in this turn have queued theirs:
            // answers finished together leave in one write, as through rmcp's loop (whose
            // send tasks run after it has taken every answer ready). A failed write breaks the
            // writer: every later answer fails too, as through rmcp.
            let written = {
                let message: TxJsonRpcMessage<RoleServer> = match answered {
                    Ok(result) => JsonRpcMessage::response(result, id),
                    Err(error) => JsonRpcMessage::error(error, Some(id)),
                };
                send_line(&write, &message)
            };
            tokio::task::yield_now().await;
            let _ = written.await;
        });
        None
    }

    /// Looks at a message on its way to rmcp's loop: a client's `notifications/cancelled` for a
    /// call running here cancels it (rmcp, which does not know the call, ignores it).
    pub(crate) fn note(&self, message: &RxJsonRpcMessage<RoleServer>) {
        let JsonRpcMessage::Notification(notification) = message else {
            return;
        };
        let ClientNotification::CancelledNotification(cancelled) = &notification.notification
        else {
            return;
        };
        let Some(id) = &cancelled.params.request_id else {
            return;
        };
        let cancellation = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if let Some(cancellation) = cancellation {
            cancellation.cancel();
        }
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        self.connection.cancel();
    }
}

/// The calls a stdio client sends on its own ([`ClientCalls::start`]) and whose answers its
/// transport hands straight back, beside rmcp's service loop rather than through it: a call's
/// request is written by the caller's task and its answer given to it by the task reading the
/// server, where rmcp's loop would pass each through two channels and a task of its own.
///
/// Only `tools/call`s on a session at a protocol version before 2026-07-28 are sent this way
/// (later ones carry the session's metadata in every request, which rmcp adds); everything
/// else, a call's cancellation among it, is rmcp's. The calls' ids (and progress tokens) are
/// numbers from [`FIRST_ID`] on, which rmcp's own, counted up from 0, never come near.
pub(crate) struct ClientCalls<W> {
    write: Arc<Writer<W>>,
    next: AtomicI64,
    waiting: Mutex<Waiting>,
}

/// The first id of a call sent by [`ClientCalls`].
const FIRST_ID: i64 = 1 << 40;

/// What a call sent by [`ClientCalls`] is answered with: as rmcp answers a request.
pub(crate) type CallAnswer = Result<ServerResult, ServiceError>;

/// The calls waiting for their answers, while the connection lives.
struct Waiting {
    open: bool,
    calls: HashMap<i64, oneshot::Sender<CallAnswer>>,
}

/// A call sent by [`ClientCalls`]: its id, progress token and answer to come (its sender
/// dropped unanswered when the connection ends first).
pub(crate) struct SentCall {
    pub(crate) id: RequestId,
    pub(crate) progress_token: ProgressToken,
    pub(crate) answer: oneshot::Receiver<CallAnswer>,
}

impl<W> ClientCalls<W>
where
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(super) fn new(write: Arc<Writer<W>>) -> Self {
        ClientCalls {
            write,
            next: AtomicI64::new(FIRST_ID),
            waiting: Mutex::new(Waiting {
                open: true,
                calls: HashMap::new(),
            }),
        }
    }

    /// Sends `request` (a `tools/call`) with an id and a progress token of its own: queues it,
    /// and returns the call and the write that sends it. Should the write fail, the call's
    /// answer fails (its sender dropped), as it does when the connection ends.
    ///
    /// # Errors
    /// When the connection has ended, or the request cannot be written as JSON.
    pub(crate) fn start(
        self: &Arc<Self>,
        mut request: ClientRequest,
    ) -> std::io::Result<(SentCall, impl Future<Output = ()> + Send + 'static + use<W>)> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::Number(n);
        let progress_token = ProgressToken(NumberOrString::Number(n));
        request
            .get_meta_mut()
            .set_progress_token(progress_token.clone());
        let (answered, answer) = oneshot::channel();
        {
            let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
            if !waiting.open {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            waiting.calls.insert(n, answered);
        }
        let message: TxJsonRpcMessage<RoleClient> = JsonRpcMessage::request(request, id.clone());
        let encoded = match encode_call(&message).unwrap_or_else(|| encode(&message)) {
            Ok(encoded) => encoded,
            Err(error) => {
                self.forget(&id);
                return Err(error);
            }
        };
        let written = send_encoded(&self.write, Ok(encoded));
        let calls = Arc::clone(self);
        let failed = id.clone();
        let write = async move {
            // Written after a yield, as the server's answers are: the calls started together
            // (a gateway passing on a client's burst) queue theirs first, and they leave in one
            // write instead of one each.
            tokio::task::yield_now().await;
            if written.await.is_err() {
                calls.forget(&failed);
            }
        };
        let sent = SentCall {
            id,
            progress_token,
            answer,
        };
        Ok((sent, write))
    }
}

impl<W> ClientCalls<W> {
    /// Whether calls can still be sent: the server's output has not ended.
    pub(crate) fn is_open(&self) -> bool {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .open
    }

    /// Stops waiting for call `id`'s answer (it was cancelled): an answer that comes anyway is
    /// dropped, and a server that sends none costs nothing here.
    pub(crate) fn forget(&self, id: &RequestId) {
        if let RequestId::Number(n) = id {
            self.waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .calls
                .remove(n);
        }
    }

    /// Hands `message` to the call it answers, if it answers one sent here; else gives it
    /// back, for rmcp.
    pub(super) fn answer(
        &self,
        message: RxJsonRpcMessage<RoleClient>,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        let id = match &message {
            JsonRpcMessage::Response(response) => &response.id,
            JsonRpcMessage::Error(error) => match &error.id {
                Some(id) => id,
                None => return Some(message),
            },
            _ => return Some(message),
        };
        // An id sent back as a string is the number it spells, as rmcp reads it.
        let n = match id {
            RequestId::Number(n) => Some(*n),
            RequestId::String(text) => text.parse().ok(),
        };
        let Some(n) = n.filter(|n| *n >= FIRST_ID) else {
            return Some(message);
        };
        let waiting = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .calls
            .remove(&n);
        // An answer to a call no longer waiting (given up, cancelled) is dropped, as rmcp drops
        // one it has no request for.
        if let Some(waiting) = waiting {
            let _ = waiting.send(match message {
                JsonRpcMessage::Response(response) => Ok(response.result),
                JsonRpcMessage::Error(error) => Err(ServiceError::McpError(error.error)),
                _ => return None,
            });
        }
        None
    }

    /// The connection has ended: every call waiting is told (its answer's sender dropped), and
    /// none is sent from now on.
    pub(super) fn close(&self) {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        waiting.open = false;
        waiting.calls.clear();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use rmcp::model::{CallToolRequestParams, Request};
    use rmcp::transport::Transport;
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

    use super::*;
    use crate::stdio::ClientLines;

    type Lines = ClientLines<tokio::io::ReadHalf<DuplexStream>, tokio::io::WriteHalf<DuplexStream>>;

    /// A client's end with its calls, and the server's end of the pipe.
    fn connection() -> (
        Lines,
        Arc<ClientCalls<tokio::io::WriteHalf<DuplexStream>>>,
        DuplexStream,
    ) {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(client);
        let (lines, calls) = ClientLines::with_calls(read, write, 1 << 16);
        (lines, calls, server)
    }

    fn call(name: &str) -> ClientRequest {
        ClientRequest::CallToolRequest(Request::new(
            CallToolRequestParams::new(name.to_owned())
                .with_arguments(serde_json::Map::from_iter([("n".to_owned(), json!(1))])),
        ))
    }

    fn answer(id: Value, text: &str) -> String {
        let answer = json!({"jsonrpc": "2.0", "id": id,
                            "result": {"content": [{"type": "text", "text": text}]}});
        format!("{answer}\n")
    }

    fn text_of(answer: CallAnswer) -> String {
        match answer {
            Ok(ServerResult::CallToolResult(result)) => serde_json::to_value(&result.content)
                .unwrap()[0]["text"]
                .as_str()
                .unwrap()
                .to_owned(),
            other => panic!("not a tool's answer: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_call_sent_beside_rmcp_carries_its_own_id_and_token_and_gets_its_answer_by_it() {
        let (mut lines, calls, server) = connection();
        let (server_read, mut server_write) = tokio::io::split(server);
        let mut server_read = BufReader::new(server_read);

        let (first, written) = calls.start(call("add")).unwrap();
        written.await;
        let (second, written) = calls.start(call("add")).unwrap();
        written.await;
        let mut written = String::new();
        server_read.read_line(&mut written).await.unwrap();
        let request: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(request["method"], "tools/call");
        assert_eq!(request["params"]["arguments"], json!({"n": 1}));
        let id = request["id"].as_i64().unwrap();
        assert!(id >= FIRST_ID, "{request}");
        assert_eq!(request["params"]["_meta"]["progressToken"], id, "{request}");
        assert_eq!(RequestId::Number(id), first.id);
        assert_ne!(first.id, second.id);

        // Answered out of order, the second by its id spelled as a string (read as rmcp reads
        // it); a notification and an answer to rmcp's own request 3 go on to rmcp.
        let second_id = match &second.id {
            RequestId::Number(n) => n.to_string(),
            RequestId::String(text) => text.to_string(),
        };
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                              "params": {"progressToken": 1, "progress": 1}});
        let mut script = answer(json!(second_id), "second");
        script.push_str(&format!("{progress}\n"));
        script.push_str(&answer(json!(id), "first"));
        script.push_str(&answer(json!(3), "rmcp's"));
        server_write.write_all(script.as_bytes()).await.unwrap();

        let to_rmcp = lines.receive().await.unwrap();
        assert!(
            matches!(to_rmcp, JsonRpcMessage::Notification(_)),
            "{to_rmcp:?}"
        );
        let to_rmcp = lines.receive().await.unwrap();
        let JsonRpcMessage::Response(response) = to_rmcp else {
            panic!("not rmcp's answer: {to_rmcp:?}");
        };
        assert_eq!(response.id, RequestId::Number(3));
        assert_eq!(text_of(second.answer.await.unwrap()), "second");
        assert_eq!(text_of(first.answer.await.unwrap()), "first");
    }

    #[tokio::test]
    async fn a_forgotten_call_s_late_answer_is_dropped_and_the_end_fails_every_call_waiting() {
        let (mut lines, calls, server) = connection();
        let (_server_read, mut server_write) = tokio::io::split(server);
        let (forgotten, written) = calls.start(call("slow")).unwrap();
        written.await;
        let (waiting, written) = calls.start(call("slow")).unwrap();
        written.await;
        calls.forget(&forgotten.id);
        let RequestId::Number(late) = forgotten.id else {
            panic!("not a number");
        };
        let ping = json!({"jsonrpc": "2.0", "id": "p", "method": "ping"});
        let script = format!("{}{ping}\n", answer(json!(late), "late"));
        server_write.write_all(script.as_bytes()).await.unwrap();
        // The late answer goes nowhere; the server's request after it reaches rmcp.
        let to_rmcp = lines.receive().await.unwrap();
        assert!(matches!(to_rmcp, JsonRpcMessage::Request(_)), "{to_rmcp:?}");
        assert!(
            forgotten.answer.await.is_err(),
            "a forgotten call was answered"
        );

        // The server goes away: the call still waiting is told, and no call is sent after.
        drop(server_write);
        drop(_server_read);
        assert!(lines.receive().await.is_none());
        assert!(
            waiting.answer.await.is_err(),
            "a call outlived its connection"
        );
        assert!(calls.start(call("after")).is_err());
    }
}
