//! `toolsmith schema`: the schemas of registered tools in a receiver's dialect, a JSON Schema file
//! re-emitted in one, or what each receiver would refuse (`--lint`).

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::Value;
use toolsmith::{Dialect, Finding, LintTool, Registry, Tool, emit, envelope, lint, lint_tools};

use crate::error::UsageError;
use crate::input::{find_tool, load_schema};
use crate::output::Outcome;

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
        conflicts_with = "tools"
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
}

fn parse_dialect(name: &str) -> Result<Dialect, String> {
    name.parse::<Dialect>().map_err(|error| error.to_string())
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
            (Some(path), false) => from_json_schema(path, self.dialect),
            (Some(path), true) => lint_file(path, &dialects),
            (None, false) => tool_schemas(registry()?, &self.tools, self.dialect),
            (None, true) => {
                let registry = registry()?;
                let tools = named_tools(registry, &self.tools)?;
                let findings = dialects
                    .iter()
                    .flat_map(|&dialect| lint_tools(tools.iter().copied(), dialect))
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
) -> Result<Vec<&'r dyn Tool>, UsageError> {
    if names.is_empty() {
        return Ok(registry.iter().map(|entry| entry.tool().as_ref()).collect());
    }
    names
        .iter()
        .map(|name| find_tool(registry, name).map(AsRef::as_ref))
        .collect()
}

/// Findings one a line on stdout, exit 1; nothing and exit 0 when there are none.
fn findings_outcome(findings: Vec<Finding>) -> Outcome {
    if findings.is_empty() {
        return Outcome::Success(String::new());
    }
    let lines: Vec<String> = findings.iter().map(Finding::message).collect();
    Outcome::Invalid(lines.join("\n"))
}

/// The file's schema linted as the parameters of a tool named after the file.
fn lint_file(path: &Path, dialects: &[Dialect]) -> Result<Outcome, UsageError> {
    let graph = load_schema(path)?;
    let name = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .map_or("parameters", |stem| {
            stem.strip_suffix(".schema").unwrap_or(stem)
        });
    let tool = [LintTool {
        name,
        parameters: &graph,
    }];
    let findings = dialects
        .iter()
        .flat_map(|&dialect| lint(&tool, dialect))
        .collect();
    Ok(findings_outcome(findings))
}

/// The declarations of the tools `names` (all of them when empty), in that order, as a JSON
/// array: in `dialect`'s envelope, or OpenAI-style functions when no dialect is given.
fn tool_schemas(
    registry: &Registry,
    names: &[String],
    dialect: Option<Dialect>,
) -> Result<Outcome, UsageError> {
    let schemas = named_tools(registry, names)?
        .into_iter()
        .map(|tool| tool_schema(tool, dialect))
        .collect::<Result<_, _>>()?;
    Outcome::document(&Value::Array(schemas))
}

/// The schema printed for one tool.
fn tool_schema(tool: &dyn Tool, dialect: Option<Dialect>) -> Result<Value, UsageError> {
    match dialect {
        Some(dialect) => envelope(tool, dialect).map_err(UsageError::Declare),
        None => tool.call_schema().map_err(|error| UsageError::Emit {
            tool: tool.name().to_owned(),
            error,
        }),
    }
}

/// The JSON Schema file at `path` re-emitted in `dialect` (canonical when none is given).
fn from_json_schema(path: &Path, dialect: Option<Dialect>) -> Result<Outcome, UsageError> {
    let graph = load_schema(path)?;
    let emitted =
        emit(&graph, dialect.unwrap_or_default()).map_err(|error| UsageError::WriteBack {
            path: path.to_path_buf(),
            error,
        })?;
    Outcome::document(&emitted)
}
