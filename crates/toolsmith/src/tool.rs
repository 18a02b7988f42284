//! [`Tool`]: the one object-safe trait every tool implements, and what a call returns.

use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value, json};
use toolsmith_types::{
    Arguments, CoerceErrors, Dialect, EmitError, Limits, Policy, Repair, TypeGraph,
};

use crate::Declarations;

/// A tool a model can call: a name, a description, typed parameters, and a call.
///
/// `#[tool]` and `#[toolset]` write this impl; writing it by hand is for tools known only at run
/// time (say, parameters imported from a JSON Schema). The trait is object-safe and `Send + Sync`:
/// tools are handed around as `Arc<dyn Tool>`, and cross-cutting behaviour (panics, lookup by
/// name) wraps them from outside.
///
/// ```
/// use toolsmith::{Arguments, Policy, Tool};
///
/// /// Adds two integers.
/// #[toolsmith::tool]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// let tool: &dyn Tool = &Add;
/// assert_eq!(tool.name(), "add");
/// assert_eq!(tool.description(), "Adds two integers.");
/// let output = tool.call(Arguments::Text(r#"{"a": 2, "b": "40"}"#), &Policy::default())?;
/// assert_eq!(output.text, "42");
/// # Ok::<(), toolsmith::ToolError>(())
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

    /// Where the tool keeps its declarations once written ([`declaration`](crate::declaration)),
    /// one per dialect; `None` (the default) writes them anew each time. The tools `#[tool]` and
    /// `#[toolset]` generate keep one; a hand-written tool whose name, description and types
    /// never change can keep a [`Declarations`] field and return it.
    fn declarations(&self) -> Option<&Declarations> {
        None
    }

    /// The limits on its arguments this tool states for itself (string bytes, argument text
    /// bytes, items, depth, ...), or `None` (the default): the caller's policy's limits apply.
    ///
    /// A statement replaces the [`Limits`] of the caller's [`Policy`] for this tool's calls,
    /// whole; the policy's mode, unknown keys and dialect still apply (see
    /// [`arguments_policy`](Tool::arguments_policy)). A tool that takes a whole document (a text
    /// toolset) states more room than the default policy gives; one that wants less, less. A
    /// transport's own cap on a request (the MCP server's largest request, an HTTP body limit)
    /// still applies before the arguments reach the tool. `#[tool(limits = ...)]` and
    /// `#[toolset(limits = ...)]` state it for generated tools.
    fn limits(&self) -> Option<Limits> {
        None
    }

    /// The policy this tool reads its arguments under when a caller passes `policy`: `policy`
    /// itself, or, where the tool states [`limits`](Tool::limits), `policy` with those limits
    /// in place of its own.
    ///
    /// ```
    /// use toolsmith::{Limits, Policy, Tool};
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
    /// let policy = Policy::strict();
    /// let applied = ByteCount.arguments_policy(&policy);
    /// assert_eq!(applied.limits.max_string_bytes, 64 << 20);
    /// assert_eq!(applied.mode, policy.mode);
    /// let big = "x".repeat(2 << 20);
    /// assert_eq!(toolsmith::testing::call_text(&ByteCount, serde_json::json!({"content": big})), Ok("2097152".to_owned()));
    /// ```
    fn arguments_policy<'p>(&self, policy: &'p Policy) -> Cow<'p, Policy> {
        match self.limits() {
            None => Cow::Borrowed(policy),
            Some(limits) => Cow::Owned(Policy {
                limits,
                ..policy.clone()
            }),
        }
    }

    /// Coerces `arguments` to [`parameters`](Tool::parameters) under `policy`, with the limits
    /// the tool states in place of the policy's ([`arguments_policy`](Tool::arguments_policy)),
    /// then runs the tool.
    ///
    /// The tools `#[tool]` and `#[toolset]` generate apply their statement themselves, so every
    /// caller (a [`Registry`](crate::Registry), the CLI, the MCP server, an agent, a direct
    /// call) gets it; a hand-written tool that states limits reads its arguments under
    /// `self.arguments_policy(policy)`.
    ///
    /// # Errors
    /// [`ToolError::InvalidArguments`] with every coercion error, [`ToolError::Failed`] when the
    /// tool returns an error, [`ToolError::Panicked`] when it panics.
    fn call(&self, arguments: Arguments<'_>, policy: &Policy) -> Result<ToolOutput, ToolError>;

    /// The parameters object in the reference shape:
    /// `{"type":"object","properties":{...},"required":[...],"additionalProperties":false}`.
    ///
    /// # Errors
    /// When the parameters type has no faithful schema (see [`EmitError`]).
    fn call_schema_object(&self) -> Result<Value, EmitError> {
        toolsmith_types::parameters_schema(self.parameters(), Dialect::JsonSchema)
    }

    /// The OpenAI-style function envelope:
    /// `{"type":"function","function":{"name","description","parameters"}}`.
    ///
    /// # Errors
    /// As [`call_schema_object`](Tool::call_schema_object).
    fn call_schema(&self) -> Result<Value, EmitError> {
        Ok(json!({
            "type": "function",
            "function": {
                "name": self.name(),
                "description": self.description(),
                "parameters": self.call_schema_object()?,
            }
        }))
    }
}

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

    /// The hints in MCP's spelling (`readOnlyHint`, ...), leaving out those not said.
    pub fn to_json(&self) -> Value {
        let hints = [
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        ];
        let map: Map<String, Value> = hints
            .into_iter()
            .filter_map(|(key, hint)| hint.map(|h| (key.to_owned(), Value::Bool(h))))
            .collect();
        Value::Object(map)
    }
}

/// What a tool returned: text for the model, the structured value where there is one, and the
/// repairs its arguments needed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The output as text (JSON text for a structured output).
    pub text: String,
    /// The output as JSON, for tools whose return type is data rather than text.
    pub structured: Option<Value>,
    /// Every repair made to the arguments before the tool ran (empty for a clean call).
    pub repairs: Vec<Repair>,
}

impl ToolOutput {
    /// A text output.
    #[inline]
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            structured: None,
            repairs: Vec::new(),
        }
    }

    /// A structured output; its text is the compact JSON.
    #[inline]
    pub fn structured(value: Value) -> Self {
        ToolOutput {
            // Straight to a string (`Display` goes through a formatter, slower on the call path);
            // a `Value` always serializes.
            text: serde_json::to_string(&value).unwrap_or_default(),
            structured: Some(value),
            repairs: Vec::new(),
        }
    }

    /// The same output, recording the repairs its arguments needed.
    #[inline]
    pub fn with_repairs(mut self, repairs: Vec<Repair>) -> Self {
        self.repairs = repairs;
        self
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
}

impl ToolError {
    /// A stable snake_case code: `invalid_arguments`, `failed`, `panicked`, `not_found`.
    pub fn code(&self) -> &'static str {
        match self {
            ToolError::InvalidArguments { .. } => "invalid_arguments",
            ToolError::Failed { .. } => "failed",
            ToolError::Panicked { .. } => "panicked",
            ToolError::NotFound { .. } => "not_found",
        }
    }

    /// What a model reads: what went wrong and, where it can, what to send instead.
    ///
    /// ```
    /// use toolsmith::{Arguments, Policy, Tool};
    ///
    /// #[toolsmith::tool]
    /// fn wait(seconds: u32) -> String {
    ///     format!("waited {seconds}s")
    /// }
    ///
    /// let error = Wait.call(Arguments::Text(r#"{"secs": 3}"#), &Policy::default()).unwrap_err();
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
        }
    }

    /// The error as JSON: `{"code", "message", ...}` with the coercion errors where there are some.
    pub fn to_json(&self) -> Value {
        let mut out = json!({"code": self.code(), "message": self.to_model_message()});
        let extra = match self {
            ToolError::InvalidArguments { tool, errors } => {
                json!({"tool": tool, "errors": errors.to_json()})
            }
            ToolError::Failed { tool, .. } | ToolError::Panicked { tool, .. } => {
                json!({"tool": tool})
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

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_model_message())
    }
}

impl std::error::Error for ToolError {}
