//! The client side: an MCP server's tools as toolsmith [`Tool`]s.
//!
//! [`McpClient::connect`] starts a server from its command and argv (never through a shell),
//! with the environment given to it and a few variables a program needs inherited, its stderr
//! kept (the last lines) for error messages, and initializes it. [`McpClient::tools`] lists
//! every page of its tools; each is a [`RemoteTool`]: its `inputSchema` imported leniently
//! (the warnings kept, per tool) into an [`ImportedSchema`], so a call's arguments are coerced
//! and checked against the server's own schema here, and a call the server would refuse is
//! answered locally in the model-facing shape. A call that passes goes to the server: its
//! content blocks and `structuredContent` come back as the tool's output, `isError` as a tool
//! failure in the server's words; the call's cancellation (or deadline) is sent on as
//! `notifications/cancelled`, and the server's `notifications/progress` reach the call's
//! context.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientRequest, ContentBlock, Implementation,
    InitializeRequestParams, JsonRpcMessage, ProgressToken, ResourceContents, ServerNotification,
    ServerResult,
};
use rmcp::service::{PeerRequestOptions, RunningService, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::{IntoTransport, Transport};
use rmcp::{ClientHandler, Peer, RoleClient};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use toolsmith::{
    Arguments, Content, Context, ImportOptions, ImportWarning, ImportedSchema, Progress, Resource,
    ResourceLink, Tool, ToolAnnotations, ToolError, ToolFuture, ToolOutput, TypeGraph,
};

/// How many of the server's last stderr lines are kept for error messages.
const STDERR_LINES: usize = 20;

/// The longest stderr line kept, in bytes; the rest of a longer one is cut.
const STDERR_LINE_BYTES: usize = 500;

/// How long a server that failed its handshake is given to finish what it writes on stderr.
const LAST_WORDS: std::time::Duration = std::time::Duration::from_millis(500);

/// The variables a server inherits from this process besides those it is given: what a program
/// needs to run at all (as the official SDKs' clients pass on), and nothing that holds a secret.
const INHERITED: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG"];

/// An MCP server to start over stdio: a program and its arguments, never a shell command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioServer {
    /// What errors call the server (`everything`, `filesystem`).
    pub name: String,
    /// The program: a path, or a name looked up on `PATH`.
    pub program: String,
    /// Its arguments, each one word as given.
    pub args: Vec<String>,
    /// Variables set for it, beside the few it inherits (`PATH`, `HOME`, ...).
    pub env: Vec<(String, String)>,
}

impl StdioServer {
    /// The server `name`, started as `program` with `args`.
    pub fn new(
        name: impl Into<String>,
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        StdioServer {
            name: name.into(),
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        }
    }

    /// The same server, with the variable `key` set to `value`.
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }
}

/// Why a server could not be reached or listed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The program could not be started.
    Spawn {
        /// The server's name.
        server: String,
        /// The program.
        program: String,
        /// Why.
        error: std::io::Error,
    },
    /// The server did not complete the handshake, or a request to it failed.
    Protocol {
        /// The server's name.
        server: String,
        /// What failed, in words.
        reason: String,
        /// The server's last stderr lines, where it wrote any.
        stderr: String,
    },
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Spawn {
                server,
                program,
                error,
            } => write!(
                f,
                "cannot start the MCP server `{server}` (`{program}`): {error}"
            ),
            ClientError::Protocol {
                server,
                reason,
                stderr,
            } => {
                write!(f, "the MCP server `{server}` {reason}")?;
                if !stderr.is_empty() {
                    write!(f, "; it last wrote on stderr:\n{stderr}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Spawn { error, .. } => Some(error),
            ClientError::Protocol { .. } => None,
        }
    }
}

/// A connection to one MCP server, and its tools.
///
/// Made in a Tokio runtime ([`McpClient::connect`] spawns the connection's tasks on it); the
/// calls of its tools may then be polled by any executor while that runtime runs. Dropping the
/// client (and every tool listed from it) closes the connection and ends a stdio server.
#[derive(Clone)]
pub struct McpClient {
    connection: Arc<Connection>,
}

/// What the client and its tools share.
struct Connection {
    name: String,
    peer: Peer<RoleClient>,
    /// Kept to keep the connection: dropping it ends the service, and a stdio server with it.
    _service: RunningService<RoleClient, Notifications>,
    progress: Progressing,
    stderr: Stderr,
}

/// The calls in flight, by the progress token their request carries.
type Progressing = Arc<Mutex<Calls>>;

/// How many progress reports are kept for tokens no call has claimed yet.
const EARLY_REPORTS: usize = 64;

/// The contexts of the calls in flight by progress token, and the reports that came for a
/// token before its call was entered here (rmcp gives the token once the request is on its
/// way, and a quick server may report before that).
#[derive(Default)]
struct Calls {
    running: HashMap<ProgressToken, Context>,
    /// Oldest first, at most [`EARLY_REPORTS`] (a server reporting for tokens that never come
    /// pushes out its own oldest reports, nothing else).
    early: VecDeque<(ProgressToken, Progress)>,
}

impl Calls {
    /// Enters the call `token` is for; the reports that came for it already reach it now.
    fn enter(&mut self, token: ProgressToken, context: Context) {
        let (mine, others) = std::mem::take(&mut self.early)
            .into_iter()
            .partition::<VecDeque<_>, _>(|(early, _)| *early == token);
        self.early = others;
        for (_, progress) in mine {
            context.progress(progress);
        }
        self.running.insert(token, context);
    }

    fn report(&mut self, token: &ProgressToken, progress: Progress) {
        match self.running.get(token) {
            Some(context) => context.progress(progress),
            None => {
                if self.early.len() == EARLY_REPORTS {
                    self.early.pop_front();
                }
                self.early.push_back((token.clone(), progress));
            }
        }
    }
}

/// The last lines a server wrote on stderr.
type Stderr = Arc<Mutex<VecDeque<String>>>;

/// The client's side of the handshake. What a server sends unasked is not followed yet (log
/// messages, list changes), but for progress, which [`InOrder`] hands to the call it is about.
struct Notifications;

impl ClientHandler for Notifications {
    fn get_info(&self) -> InitializeRequestParams {
        InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("toolsmith", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A transport that hands each `notifications/progress` to the call it is about as the message
/// is read, in the order the server sent it. (rmcp handles notifications on tasks of their
/// own, so one sent just before its request's answer could reach the handler after the call
/// had ended; read here, it is in before the answer is.)
struct InOrder<T> {
    inner: T,
    progress: Progressing,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &message
            && let ServerNotification::ProgressNotification(progress) = &notification.notification
        {
            let params = &progress.params;
            self.progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .report(
                    &params.progress_token,
                    Progress {
                        done: params.progress,
                        total: params.total,
                        message: params.message.clone(),
                    },
                );
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

impl McpClient {
    /// Starts `server` and completes the MCP handshake with it.
    ///
    /// # Errors
    /// When the program cannot be started, or the server does not answer the handshake (it
    /// exits, writes something else, or fails), with its last words on stderr.
    ///
    /// # Panics
    /// When called outside a Tokio runtime.
    pub async fn connect(server: &StdioServer) -> Result<McpClient, ClientError> {
        let mut command = tokio::process::Command::new(&server.program);
        command
            .args(&server.args)
            .env_clear()
            .envs(
                INHERITED
                    .iter()
                    .filter_map(|key| Some((*key, std::env::var_os(key)?))),
            )
            .envs(server.env.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let spawned = |error| ClientError::Spawn {
            server: server.name.clone(),
            program: server.program.clone(),
            error,
        };
        let mut child = command.spawn().map_err(spawned)?;
        let (Some(stdin), Some(stdout), Some(stderr_pipe)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(spawned(std::io::Error::other("its pipes were not opened")));
        };
        let stderr: Stderr = Arc::default();
        let stderr_read = tokio::spawn(keep_stderr(stderr_pipe, Arc::clone(&stderr)));
        // The child ends when the connection does: its handle lives as long as the stdio pipes
        // are read, in the task below.
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        let progress: Progressing = Arc::default();
        let transport = InOrder {
            inner: (stdout, stdin).into_transport(),
            progress: Arc::clone(&progress),
        };
        let service = match rmcp::serve_client(Notifications, transport).await {
            Ok(service) => service,
            Err(error) => {
                // A server that gave up has usually said why: its stderr is read to its end
                // (briefly: one that lives on holds it open) so that the error can say it.
                let _ = tokio::time::timeout(LAST_WORDS, stderr_read).await;
                return Err(ClientError::Protocol {
                    server: server.name.clone(),
                    reason: format!("did not complete the MCP handshake: {error}"),
                    stderr: tail(&stderr),
                });
            }
        };
        let peer = service.peer().clone();
        Ok(McpClient {
            connection: Arc::new(Connection {
                name: server.name.clone(),
                peer,
                _service: service,
                progress,
                stderr,
            }),
        })
    }

    /// The server's name, as errors give it.
    pub fn name(&self) -> &str {
        &self.connection.name
    }

    /// Every tool the server lists (all pages), each ready to call through this connection.
    ///
    /// # Errors
    /// When the server does not answer `tools/list`, or a tool's `inputSchema` is no schema
    /// toolsmith can read (the error names the tool).
    pub async fn tools(&self) -> Result<Vec<RemoteTool>, ClientError> {
        let connection = &self.connection;
        let listed = connection
            .peer
            .list_all_tools()
            .await
            .map_err(|error| connection.failure(format!("did not list its tools: {error}")))?;
        listed
            .into_iter()
            .map(|tool| RemoteTool::new(Arc::clone(connection), tool))
            .collect()
    }
}

impl Connection {
    fn failure(&self, reason: String) -> ClientError {
        ClientError::Protocol {
            server: self.name.clone(),
            reason,
            stderr: tail(&self.stderr),
        }
    }
}

/// Reads the server's stderr to its end, keeping the last lines.
async fn keep_stderr(pipe: tokio::process::ChildStderr, kept: Stderr) {
    let mut lines = tokio::io::BufReader::new(pipe).split(b'\n');
    while let Ok(Some(line)) = lines.next_segment().await {
        let mut line = String::from_utf8_lossy(&line).into_owned();
        if line.len() > STDERR_LINE_BYTES {
            let cut = (0..=STDERR_LINE_BYTES)
                .rev()
                .find(|&at| line.is_char_boundary(at))
                .unwrap_or(0);
            line.truncate(cut);
            line.push_str(" ...");
        }
        let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() == STDERR_LINES {
            kept.pop_front();
        }
        kept.push_back(line);
    }
}

/// The kept stderr lines, as one text.
fn tail(stderr: &Stderr) -> String {
    let kept = stderr.lock().unwrap_or_else(PoisonError::into_inner);
    kept.iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n")
}

/// One tool of an MCP server, callable as any toolsmith tool.
pub struct RemoteTool {
    connection: Arc<Connection>,
    name: String,
    title: Option<String>,
    description: String,
    parameters: ImportedSchema,
    output: Option<TypeGraph>,
    annotations: ToolAnnotations,
}

impl std::fmt::Debug for RemoteTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTool")
            .field("server", &self.connection.name)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl RemoteTool {
    fn new(connection: Arc<Connection>, tool: rmcp::model::Tool) -> Result<Self, ClientError> {
        let name = tool.name.to_string();
        let schema = Value::Object((*tool.input_schema).clone());
        let parameters =
            ImportedSchema::new(schema, &ImportOptions::lenient()).map_err(|errors| {
                connection.failure(format!(
                    "lists the tool `{name}`, whose inputSchema cannot be read: {errors}"
                ))
            })?;
        // An output schema that does not import is only not declared: the results still come.
        let output = tool.output_schema.as_ref().and_then(|schema| {
            toolsmith::import_with(
                &Value::Object((**schema).clone()),
                &ImportOptions::lenient(),
            )
            .ok()
            .map(|imported| imported.graph)
        });
        let annotations = tool
            .annotations
            .as_ref()
            .map(|hints| ToolAnnotations {
                read_only: hints.read_only_hint,
                destructive: hints.destructive_hint,
                idempotent: hints.idempotent_hint,
                open_world: hints.open_world_hint,
            })
            .unwrap_or_default();
        let title = tool
            .title
            .clone()
            .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()));
        Ok(RemoteTool {
            connection,
            name,
            title,
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            parameters,
            output,
            annotations,
        })
    }

    /// The server this tool is on.
    pub fn server(&self) -> &str {
        &self.connection.name
    }

    /// The tool's title, where the server gives one.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// Every liberty taken reading the tool's `inputSchema` (the schema itself still checks
    /// each call's arguments after coercion).
    pub fn import_warnings(&self) -> &[ImportWarning] {
        self.parameters.warnings()
    }

    /// The tool's `inputSchema` as the server gave it.
    pub fn input_schema(&self) -> &Value {
        self.parameters.schema()
    }
}

impl Tool for RemoteTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &TypeGraph {
        self.parameters.graph()
    }

    fn output(&self) -> Option<&TypeGraph> {
        self.output.as_ref()
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations
    }

    fn call<'a>(&'a self, arguments: Arguments<'a>, context: Context) -> ToolFuture<'a> {
        let tool = context.tool_name().unwrap_or(&self.name).to_owned();
        // Coerced and checked here: what the server would refuse is answered at once, in the
        // model-facing shape, and what is sent is what its schema asks for.
        let coerced = match self.parameters.coerce(arguments, context.policy()) {
            Ok(coerced) => coerced,
            Err(errors) => {
                return ToolFuture::ready(Err(ToolError::InvalidArguments { tool, errors }));
            }
        };
        let Value::Object(object) = coerced.value else {
            return ToolFuture::ready(Err(ToolError::Failed {
                tool,
                message: "the arguments are not an object, which MCP requires".to_owned(),
            }));
        };
        ToolFuture::new(async move {
            let connection = &self.connection;
            let unavailable = |reason: String| ToolError::Unavailable {
                tool: tool.clone(),
                reason: format!(
                    "the MCP server `{}` {reason}{}",
                    connection.name,
                    stderr_note(&connection.stderr)
                ),
            };
            if context.is_cancelled() {
                return Err(ToolError::Cancelled { tool });
            }
            let request = ClientRequest::CallToolRequest(rmcp::model::Request::new(
                CallToolRequestParams::new(self.name.clone()).with_arguments(object),
            ));
            let mut handle = connection
                .peer
                .send_cancellable_request(request, PeerRequestOptions::no_options())
                .await
                .map_err(|error| unavailable(format!("cannot be reached: {error}")))?;
            let token = handle.progress_token.clone();
            connection
                .progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .enter(token.clone(), context.clone());
            let answered = tokio::select! {
                answer = &mut handle.rx => Some(answer),
                () = context.cancelled() => None,
            };
            connection
                .progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .running
                .remove(&token);
            let Some(answer) = answered else {
                let _ = handle
                    .cancel(Some("the caller cancelled the call".to_owned()))
                    .await;
                return Err(ToolError::Cancelled { tool });
            };
            let result = match answer {
                Ok(Ok(ServerResult::CallToolResult(result))) => result,
                Ok(Ok(other)) => {
                    return Err(unavailable(format!(
                        "answered `tools/call` with something else: {}",
                        short_json(&other)
                    )));
                }
                Ok(Err(error)) => return Err(unavailable(format!("failed the call: {error}"))),
                Err(_closed) => {
                    return Err(unavailable(
                        "closed the connection before it answered".to_owned(),
                    ));
                }
            };
            let content: Vec<Content> = result.content.into_iter().map(content).collect();
            if result.is_error == Some(true) {
                let output = ToolOutput::new(content);
                return Err(ToolError::Failed {
                    tool,
                    message: output.as_text().into_owned(),
                });
            }
            let mut output = ToolOutput::new(content);
            output.structured = result.structured_content;
            Ok(output.with_repairs(coerced.repairs))
        })
    }
}

/// ", which last wrote on stderr: ..." where the server wrote anything, else nothing.
fn stderr_note(stderr: &Stderr) -> String {
    let tail = tail(stderr);
    if tail.is_empty() {
        String::new()
    } else {
        format!(" (its last words on stderr: {tail})")
    }
}

/// A value in a few hundred bytes of JSON at most, for an error message.
fn short_json(value: &impl serde::Serialize) -> String {
    let mut text = serde_json::to_string(value).unwrap_or_default();
    if text.len() > 300 {
        let cut = (0..=300)
            .rev()
            .find(|&at| text.is_char_boundary(at))
            .unwrap_or(0);
        text.truncate(cut);
        text.push_str("...");
    }
    text
}

/// One of MCP's content blocks as toolsmith's. Bytes that are not base64 are kept as text
/// saying so, never dropped without a word.
fn content(block: ContentBlock) -> Content {
    let bytes = |data: &str, what: &str| {
        BASE64
            .decode(data)
            .map_err(|error| Content::text(format!("[{what} whose data is not base64: {error}]")))
    };
    match block {
        ContentBlock::Text(text) => Content::Text(text.text),
        ContentBlock::Image(image) => match bytes(&image.data, "an image") {
            Ok(data) => Content::image(data, image.mime_type),
            Err(said) => said,
        },
        ContentBlock::Audio(audio) => match bytes(&audio.data, "audio") {
            Ok(data) => Content::audio(data, audio.mime_type),
            Err(said) => said,
        },
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => {
                let resource = Resource::text(uri, text);
                match mime_type {
                    Some(mime) => resource.with_mime_type(mime).into(),
                    None => resource.into(),
                }
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => match bytes(&blob, "a resource") {
                Ok(data) => {
                    let resource = Resource::blob(uri, data);
                    match mime_type {
                        Some(mime) => resource.with_mime_type(mime).into(),
                        None => resource.into(),
                    }
                }
                Err(said) => said,
            },
            other => Content::text(format!(
                "[resource contents toolsmith does not know: {}]",
                short_json(&other)
            )),
        },
        ContentBlock::ResourceLink(resource) => {
            let mut link = ResourceLink::new(resource.uri, resource.name);
            link.description = resource.description;
            link.mime_type = resource.mime_type;
            link.into()
        }
        other => Content::text(format!(
            "[a content block toolsmith does not know: {}]",
            short_json(&other)
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rmcp::model::NumberOrString;
    use toolsmith::Reporter;

    use super::*;

    #[derive(Default)]
    struct Seen(Mutex<Vec<f64>>);

    impl Reporter for Seen {
        fn progress(&self, _context: &Context, progress: Progress) {
            self.0.lock().unwrap().push(progress.done);
        }
    }

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    #[test]
    fn a_report_before_its_call_is_entered_reaches_it_in_order() {
        let seen = Arc::new(Seen::default());
        let mut calls = Calls::default();
        calls.report(&token(1), Progress::new(1));
        calls.report(&token(2), Progress::new(7));
        calls.report(&token(1), Progress::new(2));
        calls.enter(token(1), Context::new().with_reporter(seen.clone()));
        calls.report(&token(1), Progress::new(3));
        assert_eq!(*seen.0.lock().unwrap(), [1.0, 2.0, 3.0]);
        // The other token's report waits for its own call.
        assert_eq!(calls.early.len(), 1);
    }

    #[test]
    fn reports_for_tokens_no_call_claims_are_bounded() {
        let mut calls = Calls::default();
        for n in 0..1000 {
            calls.report(&token(n), Progress::new(1));
        }
        assert_eq!(calls.early.len(), EARLY_REPORTS);
        assert_eq!(calls.early[0].0, token(1000 - EARLY_REPORTS as i64));
    }
}
