//! A tool as each receiver declares it ([`envelope`]), and the receivers' limits checked over a
//! request's tools ([`lint_tools`]).

use std::fmt;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};
use toolsmith_types::{Dialect, EmitError, Finding, LintTool, emit, lint, parameters_schema};

use crate::{Tool, ToolAnnotations};

/// Why a tool cannot be declared to a receiver.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EnvelopeError {
    /// The receiver refuses the tool's name.
    Name(Finding),
    /// The tool's parameters (or output) cannot be written in the receiver's dialect.
    Schema {
        /// The tool.
        tool: String,
        /// Why.
        error: EmitError,
    },
}

impl fmt::Display for EnvelopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnvelopeError::Name(finding) => f.write_str(&finding.message()),
            EnvelopeError::Schema { tool, error } => {
                write!(f, "tool `{tool}` cannot be declared: {error}")
            }
        }
    }
}

impl std::error::Error for EnvelopeError {}

/// The declaration of `tool` that `dialect`'s receiver takes:
///
/// | dialect | envelope |
/// |---|---|
/// | `json-schema` | `{"name", "description", "parameters"}` |
/// | `openai`, `openai-strict` | `{"type": "function", "function": {"name", "description", "parameters"}}`, with `"strict": true` when strict |
/// | `anthropic`, `anthropic-strict` | `{"name", "description", "input_schema"}`, with `"strict": true` when strict |
/// | `gemini` | a function declaration: `{"name", "description", "parameters"}` |
/// | `mcp` | `{"name", "description", "inputSchema", "outputSchema"?, "annotations"?}`: `outputSchema` where the tool's output type is an object, `annotations` where the tool sets a hint |
///
/// The parameters are written in the dialect ([`parameters_schema`]). A tool advertised in a
/// strict dialect should be called with [`Policy::with_dialect`](crate::Policy::with_dialect), so
/// that the wire shapes the dialect asked for (a `null` for an omitted optional) are no repairs.
///
/// ```
/// use toolsmith::{Dialect, envelope};
///
/// /// Looks up the weather.
/// #[toolsmith::tool]
/// fn weather(city: String, units: Option<String>) -> String {
///     format!("{city}: sunny ({units:?})")
/// }
///
/// let declared = envelope(&Weather, Dialect::OpenAi { strict: true })?;
/// assert_eq!(declared["function"]["strict"], true);
/// // Strict mode lists every field as required; an optional one takes null.
/// assert_eq!(declared["function"]["parameters"]["required"], serde_json::json!(["city", "units"]));
/// let anthropic = envelope(&Weather, Dialect::Anthropic { strict: false })?;
/// assert_eq!(anthropic["input_schema"]["required"], serde_json::json!(["city"]));
/// # Ok::<(), toolsmith::EnvelopeError>(())
/// ```
///
/// # Errors
/// When the receiver refuses the tool's name, or its parameters cannot be written in the dialect
/// (say, a recursive type for Gemini).
pub fn envelope(tool: &dyn Tool, dialect: Dialect) -> Result<Value, EnvelopeError> {
    write_envelope(tool, dialect)
}

/// A tool's declarations, one per dialect, each written the first time it is asked for: kept
/// by the registry beside each tool ([`RegisteredTool::declaration`](crate::RegisteredTool::declaration)).
pub(crate) struct Declarations {
    by_dialect: [OnceLock<Result<Value, EnvelopeError>>; Dialect::ALL.len()],
}

impl Declarations {
    /// An empty cache.
    pub(crate) const fn new() -> Self {
        Declarations {
            by_dialect: [const { OnceLock::new() }; Dialect::ALL.len()],
        }
    }

    /// `tool`'s declaration in `dialect`, written on first use (`None` for a dialect missing
    /// from [`Dialect::ALL`], which then goes uncached).
    pub(crate) fn get(
        &self,
        tool: &dyn Tool,
        dialect: Dialect,
    ) -> Option<&Result<Value, EnvelopeError>> {
        let index = Dialect::ALL.iter().position(|&d| d == dialect)?;
        let slot = self.by_dialect.get(index)?;
        Some(slot.get_or_init(|| write_envelope(tool, dialect)))
    }
}

impl Default for Declarations {
    fn default() -> Self {
        Declarations::new()
    }
}

impl fmt::Debug for Declarations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let written = self.by_dialect.iter().filter(|slot| slot.get().is_some());
        f.debug_struct("Declarations")
            .field("written", &written.count())
            .finish()
    }
}

/// Writes `tool`'s declaration in `dialect`.
fn write_envelope(tool: &dyn Tool, dialect: Dialect) -> Result<Value, EnvelopeError> {
    let name = tool.name();
    dialect.check_tool_name(name).map_err(EnvelopeError::Name)?;
    let schema_error = |error| EnvelopeError::Schema {
        tool: name.to_owned(),
        error,
    };
    let parameters = parameters_schema(tool.parameters(), dialect).map_err(schema_error)?;
    let description = tool.description();
    Ok(match dialect {
        Dialect::OpenAi { strict } => {
            let mut function = json!({
                "name": name,
                "description": description,
                "parameters": parameters,
            });
            if strict {
                function["strict"] = Value::Bool(true);
            }
            json!({"type": "function", "function": function})
        }
        Dialect::Anthropic { strict } => {
            let mut declared = json!({
                "name": name,
                "description": description,
                "input_schema": parameters,
            });
            if strict {
                declared["strict"] = Value::Bool(true);
            }
            declared
        }
        Dialect::Mcp => {
            let mut declared = Map::new();
            declared.insert("name".to_owned(), json!(name));
            declared.insert("description".to_owned(), json!(description));
            declared.insert("inputSchema".to_owned(), parameters);
            if let Some(output) = tool.output() {
                match emit(output, Dialect::Mcp) {
                    Ok(schema) => {
                        declared.insert("outputSchema".to_owned(), schema);
                    }
                    // MCP takes only an object as output schema; other outputs go as text.
                    Err(EmitError::RootNotObject { .. }) => {}
                    Err(error) => return Err(schema_error(error)),
                }
            }
            let annotations = tool.annotations();
            if !annotations.is_empty() {
                declared.insert("annotations".to_owned(), mcp_annotations(annotations));
            }
            Value::Object(declared)
        }
        // JSON Schema and Gemini (and any dialect to come) take a plain declaration.
        _ => json!({
            "name": name,
            "description": description,
            "parameters": parameters,
        }),
    })
}

/// The hints in MCP's spelling (`readOnlyHint`, ...), leaving out those not said.
fn mcp_annotations(annotations: ToolAnnotations) -> Value {
    let hints = [
        ("readOnlyHint", annotations.read_only),
        ("destructiveHint", annotations.destructive),
        ("idempotentHint", annotations.idempotent),
        ("openWorldHint", annotations.open_world),
    ];
    let map: Map<String, Value> = hints
        .into_iter()
        .filter_map(|(key, hint)| hint.map(|h| (key.to_owned(), Value::Bool(h))))
        .collect();
    Value::Object(map)
}

/// What `dialect`'s receiver would refuse in a request declaring `tools`: names, tools per
/// request, properties, nesting, enum sizes, strict-mode counts (see [`lint`]).
///
/// ```
/// use toolsmith::{Dialect, lint_tools, Tool};
///
/// /// Looks up the weather.
/// #[toolsmith::tool(name = "weather.lookup")]
/// fn weather(city: String) -> String {
///     city
/// }
///
/// let tools: [&dyn Tool; 1] = [&Weather];
/// let findings = lint_tools(tools, Dialect::OpenAi { strict: true });
/// assert_eq!(findings.len(), 1);
/// assert_eq!(findings[0].code.as_str(), "tool_name");
/// assert!(lint_tools(tools, Dialect::Gemini).is_empty());
/// ```
pub fn lint_tools<'a>(
    tools: impl IntoIterator<Item = &'a dyn Tool>,
    dialect: Dialect,
) -> Vec<Finding> {
    let tools: Vec<&dyn Tool> = tools.into_iter().collect();
    let lint_tools: Vec<LintTool<'_>> = tools
        .iter()
        .map(|tool| LintTool {
            name: tool.name(),
            parameters: tool.parameters(),
        })
        .collect();
    lint(&lint_tools, dialect)
}
