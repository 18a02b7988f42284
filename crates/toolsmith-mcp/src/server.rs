//! [`McpServer`]: rmcp's server handler over a toolsmith [`Registry`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, oneshot};
use toolsmith::{Arguments, Dialect, Registry, ToolError, ToolOutput, envelope};

use crate::config::McpConfig;
use crate::error::ServeError;
use crate::pool::ToolPool;

/// An MCP server over a [`Registry`]: rmcp's [`ServerHandler`], with the tools' declarations
/// computed once, at construction.
///
/// Cloning is cheap (the clones share the registry, the declarations and the concurrency
/// limit), which is how the stateless HTTP transport hands each request its own handler.
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
    calls: Arc<Semaphore>,
    /// The threads tools run on.
    pool: ToolPool,
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
        let calls = Arc::new(Semaphore::new(config.max_concurrent_calls()));
        // No more threads than calls may run: at that many, a queued call always finds a
        // thread about to be free.
        let pool = ToolPool::new(config.max_concurrent_calls());
        Ok(McpServer {
            shared: Arc::new(Shared {
                registry,
                config,
                listed: ListToolsResult::with_all_items(tools),
                calls,
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

    /// Runs one call: coerced, on one of the pool's threads, under the concurrency limit and the
    /// timeout.
    async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, ErrorData> {
        let shared = &self.shared;
        if let Err(error) = shared.registry.find(name) {
            return Err(unknown_tool(&error));
        }
        let Ok(permit) = shared.calls.clone().try_acquire_owned() else {
            let limit = shared.config.max_concurrent_calls();
            return Ok(error_result(format!(
                "The server is busy: {limit} tool calls are already running. Try `{name}` again shortly."
            )));
        };
        let registry = Arc::clone(&shared.registry);
        let policy = shared.config.policy().clone();
        let tool = name.to_owned();
        let (answer, answered) = oneshot::channel();
        let picked_up = Arc::new(AtomicBool::new(false));
        let picking_up = Arc::clone(&picked_up);
        let spawned = shared.pool.spawn(move || {
            picking_up.store(true, Ordering::Release);
            // Held until the tool returns, even after a timeout: a runaway tool keeps its slot.
            let _permit = permit;
            // The caller may have timed out and gone; the answer is then dropped.
            let _ = answer.send(registry.call(&tool, Arguments::Json(&arguments), &policy));
        });
        if let Err(error) = spawned {
            return Ok(error_result(format!(
                "The server could not start a thread for `{name}` ({error}). Try again shortly."
            )));
        }
        let timeout = shared.config.call_timeout();
        Ok(
            match tokio::time::timeout(timeout, soon(answered, &picked_up)).await {
                Ok(Ok(Ok(output))) => success_result(output),
                Ok(Ok(Err(error))) => error_result(error.to_model_message()),
                // `Registry::call` catches the tool's panics; anything else that ended the job
                // (the pool catches it) left it without an answer.
                Ok(Err(_dropped)) => error_result(
                    ToolError::Panicked {
                        tool: name.to_owned(),
                        message: "the tool's thread ended without an answer".to_owned(),
                    }
                    .to_model_message(),
                ),
                Err(_elapsed) => error_result(format!(
                    "Tool `{name}` did not finish within {} and was abandoned.",
                    seconds(timeout)
                )),
            },
        )
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        self.call(&request.name, arguments).await.map(Into::into)
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

fn success_result(output: ToolOutput) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(output.text)]);
    // MCP's structuredContent is an object; other structured outputs travel as their JSON text.
    if let Some(structured @ Value::Object(_)) = output.structured {
        result.structured_content = Some(structured);
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
