//! `toolsmith schema`: the schemas of registered tools in a receiver's dialect, a JSON Schema file
//! re-emitted in one, or what each receiver would refuse (`--lint`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::Value;
use toolsmith::{
    Dialect, Finding, FindingCode, LintTool, RegisteredTool, Registry, emit, lint, lint_tools,
};

use crate::arguments::parse_dialect;
use crate::error::UsageError;
use crate::outcome::{Outcome, pretty};
use crate::schema_file::load_schema;
use crate::select::{ToolSelection, find_tool};
use crate::upstream::Upstreams;

/// The arguments of `toolsmith schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The tools whose schemas to print, by name; every registered tool when none is named.
    #[arg(value_name = "TOOL")]
    tools: Vec<String>,
    /// Import this JSON Schema file and print its canonical re-emission instead.
    #[arg(
        long = "from-json-schema",
        value_name = "FILE",
        conflicts_with_all = ["tools", "patterns", "renames", "prefix", "servers"]
    )]
    from_json_schema: Option<PathBuf>,
    /// The receiver to write for: json-schema, openai, openai-strict, anthropic,
    /// anthropic-strict, gemini or mcp. Without it, tools print as OpenAI-style functions over
    /// canonical JSON Schema, and a file as canonical JSON Schema.
    #[arg(long, value_name = "DIALECT", value_parser = parse_dialect)]
    dialect: Option<Dialect>,
    /// Print what the receiver (every receiver, without --dialect) would refuse, one finding a
    /// line, instead of the schemas; exit 1 when there is any.
    #[arg(long)]
    lint: bool,
    /// With --from-json-schema: import the file strictly, refusing what has no exact reading
    /// instead of warning about it on stderr.
    #[arg(long, requires = "from_json_schema")]
    strict_import: bool,
    /// With --from-json-schema --lint: the tool name to check too (a file has none of its own).
    #[arg(long, value_name = "NAME", requires = "from_json_schema")]
    name: Option<String>,
    #[command(flatten)]
    selection: ToolSelection,
    #[command(flatten)]
    pub upstreams: Upstreams,
}

impl SchemaArgs {
    /// The schemas asked for; `registry` is asked for only when they are tools'.
    pub fn run<'r>(
        &self,
        registry: impl FnOnce() -> Result<&'r Registry, UsageError>,
    ) -> Result<Outcome, UsageError> {
        let dialects: Vec<Dialect> = match self.dialect {
            Some(dialect) => vec![dialect],
            None => Dialect::ALL.to_vec(),
        };
        match (&self.from_json_schema, self.lint) {
            (Some(path), false) => from_json_schema(path, self.dialect, self.strict_import),
            (Some(path), true) => {
                lint_file(path, self.name.as_deref(), &dialects, self.strict_import)
            }
            (None, false) => {
                let registry = self.selection.apply(registry()?)?;
                tool_schemas(&registry, &self.tools, self.dialect)
            }
            (None, true) => {
                let registry = self.selection.apply(registry()?)?;
                let tools = named_tools(&registry, &self.tools)?;
                let findings = dialects
                    .iter()
                    .flat_map(|&dialect| {
                        lint_tools(tools.iter().map(|entry| entry.tool().as_ref()), dialect)
                    })
                    .collect();
                Ok(findings_outcome(findings))
            }
        }
    }
}

/// The tools `names` (all of them when empty), in that order.
fn named_tools<'r>(
    registry: &'r Registry,
    names: &[String],
) -> Result<Vec<&'r RegisteredTool>, UsageError> {
    if names.is_empty() {
        return Ok(registry.iter().collect());
    }
    names.iter().map(|name| find_tool(registry, name)).collect()
}

/// Findings one a line on stdout, exit 1; nothing and exit 0 when there are none.
fn findings_outcome(findings: Vec<Finding>) -> Outcome {
    if findings.is_empty() {
        return Outcome::Success(String::new());
    }
    let lines: Vec<String> = findings.iter().map(Finding::message).collect();
    Outcome::Invalid(lines.join("\n"))
}

/// The file's schema linted as a tool's parameters: under `name` when one is given; otherwise
/// the name is not checked, since a file has none of its own.
fn lint_file(
    path: &Path,
    name: Option<&str>,
    dialects: &[Dialect],
    strict_import: bool,
) -> Result<Outcome, UsageError> {
    let (graph, warnings) = load_schema(path, strict_import)?;
    let tool = [LintTool {
        name: name.unwrap_or("parameters"),
        parameters: &graph,
    }];
    let findings = dialects
        .iter()
        .flat_map(|&dialect| lint(&tool, dialect))
        .filter(|finding| name.is_some() || finding.code != FindingCode::ToolName)
        .collect();
    Ok(findings_outcome(findings).after_warnings(warnings))
}

/// The declarations of the tools `names` (all of them when empty), in that order, as a JSON
/// array: in `dialect`'s envelope, or OpenAI-style functions when no dialect is given. A tool the
/// receiver cannot take is left out and reported on stderr (exit 1); the others still print.
fn tool_schemas(
    registry: &Registry,
    names: &[String],
    dialect: Option<Dialect>,
) -> Result<Outcome, UsageError> {
    let mut schemas = Vec::new();
    let mut problems = Vec::new();
    for entry in named_tools(registry, names)? {
        match tool_schema(entry, dialect) {
            Ok(schema) => schemas.push(schema),
            Err(problem) => problems.push(format!("toolsmith: error: {problem}")),
        }
    }
    let done = pretty(&Value::Array(schemas))?;
    if problems.is_empty() {
        return Ok(Outcome::Success(done));
    }
    Ok(Outcome::Partial {
        done,
        problems: problems.join("\n"),
    })
}

/// The schema printed for one tool (the registry's declaration, under the name it has there).
fn tool_schema(entry: &RegisteredTool, dialect: Option<Dialect>) -> Result<Value, UsageError> {
    match dialect {
        Some(dialect) => entry
            .declaration(dialect)
            .map(Cow::into_owned)
            .map_err(UsageError::Declare),
        // The reference's shape: an OpenAI-style function envelope over canonical JSON Schema.
        None => entry
            .declaration(Dialect::JsonSchema)
            .map(|function| serde_json::json!({"type": "function", "function": function}))
            .map_err(|error| match error {
                toolsmith::EnvelopeError::Schema { tool, error } => {
                    UsageError::Emit { tool, error }
                }
                other => UsageError::Declare(other),
            }),
    }
}

/// The JSON Schema file at `path` re-emitted in `dialect` (canonical when none is given).
fn from_json_schema(
    path: &Path,
    dialect: Option<Dialect>,
    strict_import: bool,
) -> Result<Outcome, UsageError> {
    let (graph, warnings) = load_schema(path, strict_import)?;
    let emitted =
        emit(&graph, dialect.unwrap_or_default()).map_err(|error| UsageError::WriteBack {
            path: path.to_path_buf(),
            error,
        })?;
    Ok(Outcome::document(&emitted)?.after_warnings(warnings))
}
