//! [`Tool`]: the one object-safe trait every tool implements, and what a call returns.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_types::{Arguments, CoerceErrors, Limits, Repair, TypeGraph};

use crate::content::{Blocks, Content, joined_text};
use crate::future::block_on_call;
use crate::{Asking, Context, ToolFuture};

/// A tool a model can call: a name, a description, typed parameters, and a call.
///
/// `#[tool]` and `#[toolset]` write this impl, for sync and `async` functions alike; writing it
/// by hand is for tools known only at run time (say, parameters imported from a JSON Schema).
/// The trait is the minimum, object-safe and `Send + Sync`: tools are handed around as
/// `Arc<dyn Tool>`, and everything cross-cutting (catching panics, timeouts, tracing, lookup by
/// name, declarations per dialect) wraps them from outside, once, in a
/// [`Registry`](crate::Registry) and its [`Layer`](crate::Layer)s.
///
/// A call returns a [`ToolFuture`]: `Send`, runtime-agnostic. Sync code calls through
/// [`ToolExt::call_blocking`] or [`Registry::call_blocking`](crate::Registry::call_blocking).
///
/// ```
/// use toolsmith::{Arguments, Context, Tool, ToolExt};
///
/// /// Adds two integers.
/// #[toolsmith::tool]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// /// Fetches a page's title (an async tool: awaited where it is called).
/// #[toolsmith::tool]
/// async fn title(url: String) -> String {
///     format!("The title of {url}")
/// }
///
/// let tool: &dyn Tool = &Add;
/// assert_eq!(tool.name(), "add");
/// assert_eq!(tool.description(), "Adds two integers.");
/// assert!(tool.is_blocking());
/// let output = tool.call_blocking(Arguments::Text(r#"{"a": 2, "b": "40"}"#), Context::new())?;
/// assert_eq!(output.as_text(), "42");
///
/// assert!(!Title.is_blocking());
/// let output = toolsmith::block_on(Title.call(Arguments::Text(r#"{"url": "a.b"}"#), Context::new()))??;
/// assert_eq!(output.as_text(), "The title of a.b");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Tool: Send + Sync {
    /// The name a model calls the tool by.
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// The tool's parameters: a struct at the root, one field per parameter.
    fn parameters(&self) -> &TypeGraph;

    /// The type of the tool's structured output, where its return type describes one.
    fn output(&self) -> Option<&TypeGraph> {
        None
    }

    /// Hints about the tool's behaviour, for clients that show or gate tools.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// The limits on its arguments this tool states for itself (string bytes, argument text
    /// bytes, items, depth, ...), or `None` (the default): the caller's policy's limits apply.
    ///
    /// A statement replaces the [`Limits`] of the context's [`Policy`](crate::Policy) for this
    /// tool's calls, whole; the policy's mode, unknown keys and dialect still apply. A tool
    /// that takes a whole document (a text toolset) states more room than the default policy
    /// gives; one that wants less, less. A transport's own cap on a request (the MCP server's
    /// largest request, an HTTP body limit) still applies before the arguments reach the tool.
    /// `#[tool(limits = ...)]` and `#[toolset(limits = ...)]` state it for generated tools,
    /// which read their arguments under it; a tool written by hand reads its arguments under
    /// its statement itself (callers read the statement, say to size a transport's buffers,
    /// but do not change the context for it).
    ///
    /// ```
    /// use toolsmith::{Arguments, Context, Limits, ToolExt};
    ///
    /// fn whole_files() -> Limits {
    ///     Limits { max_string_bytes: 64 << 20, max_input_bytes: 400 << 20, ..Limits::default() }
    /// }
    ///
    /// /// Counts the bytes of a file's content.
    /// #[toolsmith::tool(limits = whole_files)]
    /// fn byte_count(content: String) -> usize {
    ///     content.len()
    /// }
    ///
    /// let big = serde_json::json!({"content": "x".repeat(2 << 20)});
    /// let output = ByteCount.call_blocking(Arguments::Json(&big), Context::new())?;
    /// assert_eq!(output.as_text(), "2097152");
    /// # Ok::<(), toolsmith::ToolError>(())
    /// ```
    fn limits(&self) -> Option<Limits> {
        None
    }

    /// Whether [`call`](Tool::call) does blocking work (a sync function, a process waited
    /// for): then a caller on an async executor polls its future on a thread of its own,
    /// never on the executor's. `false` (the default) for a tool whose future only awaits.
    /// `#[tool]` says `true` for a sync function and `false` for an `async` one.
    fn is_blocking(&self) -> bool {
        false
    }

    /// Whether a person must approve each call before an agent runs it (a payment, a
    /// deletion, a message sent on someone's behalf). `false` (the default); `#[tool(needs_approval)]`
    /// says `true`. An agent stops before such a call and hands it to its caller to approve
    /// or reject (see `toolsmith_agent::ReAct`); other callers (the CLI's `call`, an MCP
    /// server, whose client asks its user) run it as they run any tool.
    fn needs_approval(&self) -> bool {
        false
    }

    /// Coerces `arguments` to [`parameters`](Tool::parameters) under the context's policy
    /// (with the limits the tool states in its place), then runs the tool.
    ///
    /// The future is `Send` and needs no particular runtime (a tool that uses one, say tokio's
    /// sockets, needs its caller to run it there). A tool that sees
    /// [`Context::is_cancelled`] may stop early with [`Context::stopped_error`].
    ///
    /// A call already cancelled or past its deadline is refused before it gets here, once, by
    /// the caller: a [`Registry`](crate::Registry)'s stack, or
    /// [`ToolExt::call_blocking`]. An implementation need not look.
    ///
    /// # Errors
    /// [`ToolError::InvalidArguments`] with every coercion error, [`ToolError::Failed`] when the
    /// tool returns an error, [`ToolError::MissingData`] when the tool needs request data the
    /// caller did not give.
    fn call<'a>(&'a self, arguments: Arguments<'a>, context: Context) -> ToolFuture<'a>;
}

/// The blocking entry point for any [`Tool`]: implemented for every tool.
pub trait ToolExt: Tool {
    /// Runs the call to its end on this thread ([`block_on`](crate::block_on)): for sync code
    /// (a CLI, tests, scripts), async tools included. No layer is applied (a panic is the
    /// caller's); call through a [`Registry`](crate::Registry) for those.
    ///
    /// # Errors
    /// As [`Tool::call`]; [`ToolError::Cancelled`] or [`ToolError::TimedOut`] when the context
    /// was cancelled or past its deadline already (the tool does not run);
    /// [`ToolError::Unavailable`] when called from inside a tokio runtime (with the crate's
    /// `tokio` feature), where blocking could deadlock, before any of the call runs (a sync
    /// tool's body included): await [`Tool::call`] there.
    fn call_blocking(
        &self,
        arguments: Arguments<'_>,
        context: Context,
    ) -> Result<ToolOutput, ToolError> {
        if let Some(refused) = crate::layer::refuse_before_start(|| self.name(), &context) {
            return Err(refused);
        }
        let tool = context.tool_name().unwrap_or(self.name()).to_owned();
        block_on_call(|| self.call(arguments, context)).unwrap_or_else(|inside| {
            Err(ToolError::Unavailable {
                tool,
                reason: inside.to_string(),
            })
        })
    }
}

impl<T: Tool + ?Sized> ToolExt for T {}

/// Hints about what a tool does (MCP's tool annotations). `None` is "not said".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolAnnotations {
    /// The tool does not change its environment.
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite something (meaningful when not read-only).
    pub destructive: Option<bool>,
    /// Calling the tool twice with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// The tool reaches an open world (the web, other people's systems).
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// Whether no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }
}

/// What a tool returned: its content blocks for the model, the structured value where there
/// is one, and the repairs its arguments needed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The result's blocks: text, images, audio, resources (one text block for a tool that
    /// returns text or a typed value, held without an allocation of its own).
    pub content: Blocks,
    /// The output as JSON, for tools whose return type is data rather than text (its text is
    /// also the content's one text block).
    pub structured: Option<Value>,
    /// Every repair made to the arguments before the tool ran (empty for a clean call).
    pub repairs: Vec<Repair>,
}

impl ToolOutput {
    /// An output of `content` blocks: a `Vec` of them, one [`Content`], or [`Blocks`].
    #[inline]
    pub fn new(content: impl Into<Blocks>) -> Self {
        ToolOutput {
            content: content.into(),
            structured: None,
            repairs: Vec::new(),
        }
    }

    /// A text output.
    #[inline]
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput::new(Content::Text(text.into()))
    }

    /// A structured output; its text is the compact JSON.
    #[inline]
    pub fn structured(value: Value) -> Self {
        // Straight to a string (`Display` goes through a formatter, slower on the call path);
        // a `Value` always serializes.
        let text = serde_json::to_string(&value).unwrap_or_default();
        ToolOutput {
            content: Blocks::from(Content::Text(text)),
            structured: Some(value),
            repairs: Vec::new(),
        }
    }

    /// The text of the output's text blocks, joined by newlines (empty where there are none):
    /// what a caller that reads only text shows.
    pub fn as_text(&self) -> Cow<'_, str> {
        joined_text(&self.content)
    }

    /// The same output, recording the repairs its arguments needed.
    #[inline]
    #[must_use]
    pub fn with_repairs(mut self, repairs: Vec<Repair>) -> Self {
        self.repairs = repairs;
        self
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::text(text)
    }
}

/// Why a call did not produce an output. Rendered once, for the model
/// ([`to_model_message`](ToolError::to_model_message)) or as data ([`to_json`](ToolError::to_json)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments could not be coerced to the tool's parameters: every problem, located.
    InvalidArguments {
        /// The tool called.
        tool: String,
        /// Every coercion error, in document order.
        errors: CoerceErrors,
    },
    /// The tool ran and reported a failure.
    Failed {
        /// The tool called.
        tool: String,
        /// The failure, as the tool worded it.
        message: String,
    },
    /// The tool panicked; the panic was caught and the process kept running.
    Panicked {
        /// The tool called.
        tool: String,
        /// The panic's message, where it had one.
        message: String,
    },
    /// No tool has this name.
    NotFound {
        /// The name asked for.
        name: String,
        /// The nearest existing name, where one is close.
        did_you_mean: Option<String>,
    },
    /// The call was cancelled (by its caller) before it answered.
    Cancelled {
        /// The tool called.
        tool: String,
    },
    /// The call did not answer before its deadline (a timeout), and was cancelled.
    TimedOut {
        /// The tool called.
        tool: String,
        /// How long the call was given, where a timeout set it.
        after: Option<Duration>,
    },
    /// The tool needs request data the caller did not put into the call's
    /// [`Context`] (a caller's mistake, not the model's).
    MissingData {
        /// The tool called.
        tool: String,
        /// The type of the data it asked for.
        type_name: &'static str,
    },
    /// The call could not be made now (every place taken, or a blocking call made where it
    /// could deadlock).
    Unavailable {
        /// The tool called.
        tool: String,
        /// Why, in words.
        reason: String,
    },
    /// The tool asked a person or a model ([`Context::elicit`], [`Context::sample`]) and
    /// there was nobody to ask: the caller gave none, or the one it gave cannot answer this
    /// kind of question. A tool can handle it (use a default, say what it needs).
    NobodyToAsk {
        /// The tool called.
        tool: String,
        /// What it asked for.
        asking: Asking,
        /// Why nobody can answer, in words.
        reason: String,
    },
    /// The tool asked a person or a model and asking went wrong (the client refused, the
    /// answer did not fit).
    AskFailed {
        /// The tool called.
        tool: String,
        /// What it asked for.
        asking: Asking,
        /// What went wrong, in words.
        message: String,
    },
}

impl ToolError {
    /// A stable snake_case code: `invalid_arguments`, `failed`, `panicked`, `not_found`,
    /// `cancelled`, `timed_out`, `missing_data`, `unavailable`, `nobody_to_ask`, `ask_failed`.
    pub fn code(&self) -> &'static str {
        match self {
            ToolError::InvalidArguments { .. } => "invalid_arguments",
            ToolError::Failed { .. } => "failed",
            ToolError::Panicked { .. } => "panicked",
            ToolError::NotFound { .. } => "not_found",
            ToolError::Cancelled { .. } => "cancelled",
            ToolError::TimedOut { .. } => "timed_out",
            ToolError::MissingData { .. } => "missing_data",
            ToolError::Unavailable { .. } => "unavailable",
            ToolError::NobodyToAsk { .. } => "nobody_to_ask",
            ToolError::AskFailed { .. } => "ask_failed",
        }
    }

    /// The tool the error is about (the name asked for, for [`ToolError::NotFound`]).
    pub fn tool(&self) -> &str {
        match self {
            ToolError::InvalidArguments { tool, .. }
            | ToolError::Failed { tool, .. }
            | ToolError::Panicked { tool, .. }
            | ToolError::Cancelled { tool }
            | ToolError::TimedOut { tool, .. }
            | ToolError::MissingData { tool, .. }
            | ToolError::Unavailable { tool, .. }
            | ToolError::NobodyToAsk { tool, .. }
            | ToolError::AskFailed { tool, .. } => tool,
            ToolError::NotFound { name, .. } => name,
        }
    }

    /// What a model reads: what went wrong and, where it can, what to send instead.
    ///
    /// ```
    /// use toolsmith::{Arguments, Context, ToolExt};
    ///
    /// #[toolsmith::tool]
    /// fn wait(seconds: u32) -> String {
    ///     format!("waited {seconds}s")
    /// }
    ///
    /// let error = Wait.call_blocking(Arguments::Text(r#"{"secs": 3}"#), Context::new()).unwrap_err();
    /// assert_eq!(
    ///     error.to_model_message(),
    ///     "Invalid arguments for tool `wait`. The arguments have 2 problems:\n\
    ///      - `secs`: unknown field; valid fields are \"seconds\" (did you mean \"seconds\"?)\n\
    ///      - `seconds`: missing required field; expected an integer\n"
    /// );
    /// ```
    pub fn to_model_message(&self) -> String {
        match self {
            ToolError::InvalidArguments { tool, errors } => {
                format!("Invalid arguments for tool `{tool}`. {errors}")
            }
            ToolError::Failed { tool, message } => format!("Tool `{tool}` failed: {message}"),
            ToolError::Panicked { tool, message } => {
                format!(
                    "Tool `{tool}` crashed ({message}); this is a bug in the tool, not in your call."
                )
            }
            ToolError::NotFound { name, did_you_mean } => {
                let mut out = format!("There is no tool named `{name}`.");
                if let Some(near) = did_you_mean {
                    out.push_str(&format!(" Did you mean `{near}`?"));
                }
                out
            }
            ToolError::Cancelled { tool } => {
                format!("The call of tool `{tool}` was cancelled before it finished.")
            }
            ToolError::TimedOut { tool, after } => match after {
                Some(after) => format!(
                    "Tool `{tool}` did not answer within {} and was stopped; try a smaller \
                     request, or try again later.",
                    readable(*after)
                ),
                None => format!(
                    "Tool `{tool}` did not answer before its deadline and was stopped; try a \
                     smaller request, or try again later."
                ),
            },
            ToolError::MissingData { tool, type_name } => format!(
                "Tool `{tool}` cannot run here: its caller did not provide the `{type_name}` \
                 it needs; this is a problem with the setup, not with your call."
            ),
            ToolError::Unavailable { tool, reason } => {
                format!("Tool `{tool}` cannot be called now: {reason}")
            }
            ToolError::NobodyToAsk {
                tool,
                asking,
                reason,
            } => {
                let whom = match asking {
                    Asking::Elicitation => "a person",
                    Asking::Sampling => "a model",
                };
                format!(
                    "Tool `{tool}` needed to ask {whom} ({}), and there is nobody to ask here: \
                     {reason}.",
                    asking.as_str()
                )
            }
            ToolError::AskFailed {
                tool,
                asking,
                message,
            } => format!(
                "Tool `{tool}` asked for {} and did not get an answer: {message}",
                asking.as_str()
            ),
        }
    }

    /// The error as JSON: `{"code", "message", ...}` with the coercion errors where there are some.
    pub fn to_json(&self) -> Value {
        let mut out = json!({"code": self.code(), "message": self.to_model_message()});
        let extra = match self {
            ToolError::InvalidArguments { tool, errors } => {
                json!({"tool": tool, "errors": errors.to_json()})
            }
            ToolError::TimedOut {
                tool,
                after: Some(after),
            } => json!({"tool": tool, "after_seconds": after.as_secs_f64()}),
            ToolError::MissingData { tool, type_name } => {
                json!({"tool": tool, "type": type_name})
            }
            ToolError::Failed { tool, .. }
            | ToolError::Panicked { tool, .. }
            | ToolError::Cancelled { tool }
            | ToolError::TimedOut { tool, .. }
            | ToolError::Unavailable { tool, .. } => json!({"tool": tool}),
            ToolError::NobodyToAsk { tool, asking, .. }
            | ToolError::AskFailed { tool, asking, .. } => {
                json!({"tool": tool, "asking": asking.as_str()})
            }
            ToolError::NotFound { name, did_you_mean } => {
                json!({"name": name, "did_you_mean": did_you_mean})
            }
        };
        if let (Value::Object(out), Value::Object(extra)) = (&mut out, extra) {
            out.extend(extra);
        }
        out
    }
}

/// A time given, as a person reads it: `250 ms` under a second (where tenths of a second
/// would round a short timeout to `0.0 s`), else seconds with one decimal.
fn readable(time: Duration) -> String {
    if time < Duration::from_secs(1) {
        format!("{} ms", time.as_millis())
    } else {
        format!("{:.1} s", time.as_secs_f64())
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_model_message())
    }
}

impl std::error::Error for ToolError {}
