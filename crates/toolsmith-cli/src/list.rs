//! `toolsmith list`: the registered tools, as an aligned table or as JSON.

use clap::Args;
use serde_json::{Value, json};
use toolsmith::{RegisteredTool, Registry};

use crate::error::UsageError;
use crate::outcome::Outcome;
use crate::select::ToolSelection;
use crate::upstream::Upstreams;

/// The arguments of `toolsmith list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print a JSON array of `{name, toolset, description, annotations}` instead, in registry
    /// order.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    selection: ToolSelection,
    #[command(flatten)]
    pub upstreams: Upstreams,
}

impl ListArgs {
    /// Every tool of `registry` (those selected), in its order.
    pub fn run(&self, registry: &Registry) -> Result<Outcome, UsageError> {
        let registry = self.selection.apply(registry)?;
        let registry = registry.as_ref();
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
        "name": entry.name(),
        "toolset": entry.toolset(),
        "description": tool.description(),
        // MCP's spelling of the hints, as the MCP declaration writes them.
        "annotations": entry
            .declaration(toolsmith::Dialect::Mcp)
            .ok()
            .and_then(|declared| declared.get("annotations").cloned())
            .unwrap_or_else(|| json!({})),
    })
}

/// One line per tool: name, toolset (`-` for none), the description's first sentence, aligned.
fn table(registry: &Registry) -> String {
    let rows: Vec<[&str; 3]> = registry
        .iter()
        .map(|entry| {
            let tool = entry.tool();
            [
                entry.name(),
                entry.toolset().unwrap_or("-"),
                summary(tool.description()),
            ]
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

/// The first sentence of a description's first paragraph (the whole paragraph when it is one
/// sentence), never cut inside one: a sentence ends at `.`, `!` or `?` followed by a space and a
/// word that does not start in lowercase (so `e.g. this` goes on), outside brackets and code
/// spans.
fn summary(description: &str) -> &str {
    let paragraph = description.trim().lines().next().unwrap_or_default().trim();
    let mut depth = 0usize;
    let mut code = false;
    for (at, c) in paragraph.char_indices() {
        match c {
            '`' => code = !code,
            '(' | '[' | '{' if !code => depth += 1,
            ')' | ']' | '}' if !code => depth = depth.saturating_sub(1),
            '.' | '!' | '?' if !code && depth == 0 => {
                let end = at + c.len_utf8();
                let rest = &paragraph[end..];
                let next_word = rest.trim_start().chars().next();
                if rest.starts_with(char::is_whitespace)
                    && !next_word.is_some_and(char::is_lowercase)
                {
                    return &paragraph[..end];
                }
            }
            _ => {}
        }
    }
    paragraph
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn the_summary_is_the_first_sentence_never_cut_inside_one() {
        assert_eq!(
            summary("Adds two numbers. Output: the sum."),
            "Adds two numbers."
        );
        assert_eq!(
            summary("Finds lines (case-insensitive; see `x. Y`). Output: lines."),
            "Finds lines (case-insensitive; see `x. Y`)."
        );
        assert_eq!(
            summary("Reads a file, e.g. a log. Then stops."),
            "Reads a file, e.g. a log."
        );
        assert_eq!(summary("Version 1.5 of it. More."), "Version 1.5 of it.");
        assert_eq!(summary("No full stop\n\nSecond paragraph."), "No full stop");
        assert_eq!(summary("Ends here."), "Ends here.");
        assert_eq!(summary(""), "");
    }
}
