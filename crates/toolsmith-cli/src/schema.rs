//! `toolsmith schema`: the schemas of registered tools, or a JSON Schema file re-emitted.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::Value;
use toolsmith::{Dialect, Registry, Tool, emit};

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
}

impl SchemaArgs {
    /// The schemas asked for; `registry` is asked for only when they are tools'.
    pub fn run<'r>(
        &self,
        registry: impl FnOnce() -> Result<&'r Registry, UsageError>,
    ) -> Result<Outcome, UsageError> {
        match &self.from_json_schema {
            Some(path) => from_json_schema(path),
            None => tool_schemas(registry()?, &self.tools),
        }
    }
}

/// The envelopes of the tools `names` (all of them when empty), in that order, as a JSON array.
fn tool_schemas(registry: &Registry, names: &[String]) -> Result<Outcome, UsageError> {
    let tools: Vec<&dyn Tool> = if names.is_empty() {
        registry.iter().map(|entry| entry.tool().as_ref()).collect()
    } else {
        names
            .iter()
            .map(|name| find_tool(registry, name).map(AsRef::as_ref))
            .collect::<Result<_, _>>()?
    };
    let schemas = tools
        .into_iter()
        .map(tool_schema)
        .collect::<Result<_, _>>()?;
    Outcome::document(&Value::Array(schemas))
}

/// The schema printed for one tool: its OpenAI-style function envelope.
fn tool_schema(tool: &dyn Tool) -> Result<Value, UsageError> {
    tool.call_schema().map_err(|error| UsageError::Emit {
        tool: tool.name().to_owned(),
        error,
    })
}

/// The canonical JSON Schema re-emission of the file at `path`.
fn from_json_schema(path: &Path) -> Result<Outcome, UsageError> {
    let graph = load_schema(path)?;
    let emitted = emit(&graph, Dialect::JsonSchema).map_err(|error| UsageError::WriteBack {
        path: path.to_path_buf(),
        error,
    })?;
    Outcome::document(&emitted)
}
