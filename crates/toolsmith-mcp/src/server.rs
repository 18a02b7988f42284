//! [`McpServer`]: rmcp's server handler over a toolsmith [`Registry`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, MetaObject, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use toolsmith::{
    Arguments, CoerceError, CoerceErrors, Dialect, ErrorCode, Registry, ToolError, ToolOutput,
    envelope,
};

use crate::config::McpConfig;
use crate::error::ServeError;
use crate::intake::CallIntake;
use crate::pool::ToolPool;

/// An MCP server over a [`Registry`]: rmcp's [`ServerHandler`], with the tools' declarations
/// computed once, at construction.
///
/// Cloning is cheap (the clones share the registry, the declarations, the tool threads and the
/// limits), which is how the stateless HTTP transport hands each request its own handler.
///
/// ```
/// use toolsmith_mcp::{McpConfig, McpServer};
///
/// /// Adds two integers.
/// #[toolsmith::tool(read_only)]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// let mut registry = toolsmith::Registry::new();
/// registry.add(std::sync::Arc::new(Add))?;
/// let server = McpServer::new(registry, McpConfig::default())?;
/// let declared = &server.tools()[0];
/// assert_eq!(declared.name, "add");
/// assert_eq!(declared.title.as_deref(), Some("Add"));
/// assert_eq!(declared.input_schema["type"], "object");
/// assert_eq!(declared.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
}

struct Shared {
    registry: Arc<Registry>,
    config: McpConfig,
    /// `tools/list`'s answer, built once.
    listed: ListToolsResult,
    /// The places for calls: one per call running or queued. A call holds its place from when
    /// the server takes it until its tool returns (or it leaves the queue unrun).
    places: Arc<Semaphore>,
    /// The threads tools run on, no more than the concurrency limit; calls beyond it wait in
    /// the pool's queue.
    pool: ToolPool,
}

/// A call's arguments: their text, as the client sent it, or a map read by rmcp.
enum CallArguments {
    Text(Option<Box<str>>),
    Map(Value),
}

impl CallArguments {
    fn as_arguments(&self) -> Arguments<'_> {
        match self {
            CallArguments::Text(Some(text)) => Arguments::Text(text),
            CallArguments::Text(None) => Arguments::Text("{}"),
            CallArguments::Map(value) => Arguments::Json(value),
        }
    }
}

impl McpServer {
    /// A server for `registry`, declaring every tool in the MCP dialect.
    ///
    /// # Errors
    /// [`ServeError::InvalidConfig`] when a setting of `config` cannot serve;
    /// [`ServeError::Declare`] when a tool's name or schema cannot be declared to MCP clients.
    pub fn new(registry: impl Into<Arc<Registry>>, config: McpConfig) -> Result<Self, ServeError> {
        config.check()?;
        let registry = registry.into();
        let tools = registry
            .iter()
            .map(|entry| declare(entry.tool().as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let places = config
            .max_concurrent_calls()
            .saturating_add(config.max_queued_calls())
            .min(Semaphore::MAX_PERMITS);
        let pool = ToolPool::new(config.max_concurrent_calls());
        Ok(McpServer {
            shared: Arc::new(Shared {
                registry,
                config,
                listed: ListToolsResult::with_all_items(tools),
                places: Arc::new(Semaphore::new(places)),
                pool,
            }),
        })
    }

    /// The tools as `tools/list` declares them, in the registry's order.
    pub fn tools(&self) -> &[rmcp::model::Tool] {
        &self.shared.listed.tools
    }

    /// The configuration the server runs with.
    pub fn config(&self) -> &McpConfig {
        &self.shared.config
    }

    /// The places for calls, for a transport that waits for one before it hands a call over.
    pub(crate) fn places(&self) -> Arc<Semaphore> {
        Arc::clone(&self.shared.places)
    }

    /// Runs one call: its arguments read and coerced on one of the pool's threads, once one is
    /// free, within the timeout. `place` is the call's place, when the transport waited for it;
    /// otherwise a call finding every place taken is answered as busy.
    async fn call(
        &self,
        name: &str,
        arguments: CallArguments,
        place: Option<OwnedSemaphorePermit>,
    ) -> Result<CallToolResult, ErrorData> {
        let shared = &self.shared;
        if let Err(error) = shared.registry.find(name) {
            return Err(unknown_tool(&error));
        }
        let place = match place {
            Some(place) => place,
            None => match Arc::clone(&shared.places).try_acquire_owned() {
                Ok(place) => place,
                Err(_) => {
                    let config = &shared.config;
                    return Ok(error_result(format!(
                        "The server is busy: {} tool calls are running and {} more are queued. \
                         Try `{name}` again shortly.",
                        config.max_concurrent_calls(),
                        config.max_queued_calls()
                    )));
                }
            },
        };
        let registry = Arc::clone(&shared.registry);
        let policy = shared.config.policy().clone();
        let tool = name.to_owned();
        let (answer, answered) = oneshot::channel();
        let picked_up = Arc::new(AtomicBool::new(false));
        let picking_up = Arc::clone(&picked_up);
        let spawned = shared.pool.spawn(move || {
            // Held until the tool returns, even after a timeout: a runaway tool keeps its place.
            let _place = place;
            // A call whose caller has gone (it timed out in the queue) is not run.
            if answer.is_closed() {
                return;
            }
            picking_up.store(true, Ordering::Release);
            let context = toolsmith::Context::new().with_policy(policy);
            let output =
                toolsmith::block_on(registry.call(&tool, arguments.as_arguments(), context))
                    .unwrap_or_else(|inside| {
                        Err(ToolError::Unavailable {
                            tool: tool.clone(),
                            reason: inside.to_string(),
                        })
                    });
            // The caller may have timed out and gone; the answer is then dropped.
            let _ = answer.send(output);
        });
        if let Err(error) = spawned {
            return Ok(error_result(format!(
                "The server could not start a thread for `{name}` ({error}). Try again shortly."
            )));
        }
        // From when the server took the call: time in the queue counts.
        let timeout = shared.config.call_timeout();
        match tokio::time::timeout(timeout, soon(answered, &picked_up)).await {
            Ok(Ok(Ok(output))) => Ok(success_result(output)),
            Ok(Ok(Err(ToolError::InvalidArguments { tool, errors })))
                if !errors.is_empty()
                    && errors
                        .iter()
                        .all(|error| error.code == ErrorCode::ArgumentsType) =>
            {
                Err(not_an_object(&tool, &errors))
            }
            Ok(Ok(Err(error))) => Ok(error_result(error.to_model_message())),
            // `Registry::call` catches the tool's panics; anything else that ended the job
            // (the pool catches it) left it without an answer.
            Ok(Err(_dropped)) => Ok(error_result(
                ToolError::Panicked {
                    tool: name.to_owned(),
                    message: "the tool's thread ended without an answer".to_owned(),
                }
                .to_model_message(),
            )),
            Err(_elapsed) if !picked_up.load(Ordering::Acquire) => Ok(error_result(format!(
                "Tool `{name}` did not start within {}: the server was busy with other calls \
                 all that time. Try again later.",
                seconds(timeout)
            ))),
            Err(_elapsed) => Ok(error_result(format!(
                "Tool `{name}` did not finish within {} and was abandoned.",
                seconds(timeout)
            ))),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let config = &self.shared.config;
        let info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                config.server_name(),
                config.server_version(),
            ));
        match config.instructions() {
            Some(instructions) => info.with_instructions(instructions),
            None => info,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(self.shared.listed.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (arguments, place) = match CallIntake::take(&mut context.extensions) {
            // The transport's only reference: the place moves to the call.
            Some(intake) => match Arc::try_unwrap(intake) {
                Ok(intake) => (CallArguments::Text(intake.arguments), intake.admitted),
                Err(shared) => (CallArguments::Text(shared.arguments.clone()), None),
            },
            None => (
                CallArguments::Map(Value::Object(request.arguments.unwrap_or_default())),
                None,
            ),
        };
        self.call(&request.name, arguments, place)
            .await
            .map(Into::into)
    }
}

/// How long the executor keeps polling for a tool's answer before it sleeps until woken.
///
/// Most tool calls are over in microseconds; an executor that sleeps at once must then be woken
/// by the tool's thread, which on a machine with idle CPUs costs more than the call. Polling
/// between other tasks (never blocking them) for this long answers such calls without it.
const ANSWER_SPIN: Duration = Duration::from_micros(50);

/// How long the executor waits for a tool's thread to pick the call up before it stops polling.
/// A call not picked up by then has no thread awake on another CPU (one is being woken, or it
/// shares this thread's CPU and can run only once this thread sleeps).
const PICK_UP_SPIN: Duration = Duration::from_micros(5);

/// `answered`, polled among the executor's other tasks for up to [`ANSWER_SPIN`] (or
/// [`PICK_UP_SPIN`], while `picked_up` is not yet set) before it is simply awaited.
async fn soon<T>(
    answered: oneshot::Receiver<T>,
    picked_up: &AtomicBool,
) -> Result<T, oneshot::error::RecvError> {
    let mut answered = std::pin::pin!(answered);
    let started = Instant::now();
    loop {
        // Polled with a waker that does nothing: an answer that comes while this task keeps
        // looking need not wake the executor.
        let polled = answered
            .as_mut()
            .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()));
        if let Poll::Ready(answer) = polled {
            return answer;
        }
        let waited = started.elapsed();
        if waited >= ANSWER_SPIN || (waited >= PICK_UP_SPIN && !picked_up.load(Ordering::Acquire)) {
            return answered.await;
        }
        tokio::task::yield_now().await;
    }
}

/// A tool's MCP declaration: toolsmith's MCP envelope, with a title.
fn declare(tool: &dyn toolsmith::Tool) -> Result<rmcp::model::Tool, ServeError> {
    let mut declared = envelope(tool, Dialect::Mcp)?;
    declared["title"] = Value::String(title(tool.name()));
    serde_json::from_value(declared).map_err(|error| ServeError::Declaration {
        tool: tool.name().to_owned(),
        error,
    })
}

/// A human title from a tool name: `create_task` -> `Create task`.
fn title(name: &str) -> String {
    let words = name.replace(['_', '-', '.'], " ");
    let mut chars = words.trim().chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The `_meta` key under which a result lists the repairs made to the call's arguments.
const REPAIRS_META_KEY: &str = "toolsmith/repairs";

fn success_result(output: ToolOutput) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(output.as_text())]);
    // MCP's structuredContent is an object; other structured outputs travel as their JSON text.
    if let Some(structured @ Value::Object(_)) = output.structured {
        result.structured_content = Some(structured);
    }
    // Recorded for the client, as the CLI records them; the model reads the content.
    if !output.repairs.is_empty() {
        let repairs = output.repairs.iter().map(toolsmith::Repair::to_json);
        let mut meta = rmcp::model::JsonObject::new();
        meta.insert(REPAIRS_META_KEY.to_owned(), Value::Array(repairs.collect()));
        result.meta = Some(MetaObject(meta));
    }
    result
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// The protocol error for a name no tool has: MCP's invalid params, naming the nearest tool.
fn unknown_tool(error: &ToolError) -> ErrorData {
    let data = match error {
        ToolError::NotFound { name, did_you_mean } => {
            Some(json!({"name": name, "did_you_mean": did_you_mean}))
        }
        _ => None,
    };
    ErrorData::invalid_params(error.to_model_message(), data)
}

/// The protocol error for arguments that are not an object at all (an array, a number, a
/// string holding no object): MCP's invalid params, in the argument reader's words.
fn not_an_object(tool: &str, errors: &CoerceErrors) -> ErrorData {
    let problems: Vec<String> = errors.iter().map(CoerceError::message).collect();
    ErrorData::invalid_params(
        format!(
            "Invalid arguments for tool `{tool}`: {}",
            problems.join("; ")
        ),
        Some(json!({"tool": tool, "errors": errors.to_json()})),
    )
}

fn seconds(duration: std::time::Duration) -> String {
    format!("{}s", duration.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_the_name_in_words() {
        assert_eq!(title("create_task"), "Create task");
        assert_eq!(title("weather.lookup"), "Weather lookup");
        assert_eq!(title(""), "");
    }
}
