//! `toolsmith list`: the registered tools, as an aligned table or as JSON.

use clap::Args;
use serde_json::{Value, json};
use toolsmith::{RegisteredTool, Registry};

use crate::error::UsageError;
use crate::output::Outcome;

/// The arguments of `toolsmith list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print a JSON array of `{name, toolset, description, annotations}` instead, in registry
    /// order.
    #[arg(long)]
    json: bool,
}

impl ListArgs {
    /// Every tool of `registry`, in its order.
    pub fn run(&self, registry: &Registry) -> Result<Outcome, UsageError> {
        if self.json {
            Outcome::document(&Value::Array(registry.iter().map(entry_json).collect()))
        } else {
            Ok(Outcome::Success(table(registry)))
        }
    }
}

fn entry_json(entry: &RegisteredTool) -> Value {
    let tool = entry.tool();
    json!({
        "name": tool.name(),
        "toolset": entry.toolset(),
        "description": tool.description(),
        "annotations": tool.annotations().to_json(),
    })
}

/// One line per tool: name, toolset (`-` for none), first line of the description, aligned.
fn table(registry: &Registry) -> String {
    let rows: Vec<[&str; 3]> = registry
        .iter()
        .map(|entry| {
            let tool = entry.tool();
            let summary = tool.description().lines().next().unwrap_or_default();
            [tool.name(), entry.toolset().unwrap_or("-"), summary.trim()]
        })
        .collect();
    let width = |column: usize| {
        rows.iter()
            .map(|row| row[column].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (name_width, toolset_width) = (width(0), width(1));
    rows.iter()
        .map(|[name, toolset, summary]| {
            let line = format!("{name:<name_width$}  {toolset:<toolset_width$}  {summary}");
            line.trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
