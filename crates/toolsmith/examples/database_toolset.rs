//! The reference's database toolset: three methods exposed as tools (two with custom names), one
//! kept private, all sharing one in-memory table.
//!
//! Run it with `cargo run -p toolsmith --example database_toolset`.

use std::collections::BTreeMap;
use std::sync::Mutex;

use toolsmith::{Arguments, Context, Policy, ToolExt, Toolset};

/// An in-memory key-value table standing in for a database.
#[derive(Default)]
pub struct DatabaseToolset {
    rows: Mutex<BTreeMap<String, String>>,
}

#[toolsmith::toolset(name = "db")]
impl DatabaseToolset {
    /// Returns the rows whose key starts with a prefix, one `key=value` per line.
    #[tool(read_only)]
    fn query(&self, prefix: String) -> Result<String, String> {
        let rows = self
            .rows
            .lock()
            .map_err(|_| "the table is unavailable".to_owned())?;
        let lines: Vec<String> = rows
            .iter()
            .filter(|(key, _)| key.starts_with(&prefix))
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        Ok(lines.join("\n"))
    }

    #[tool(
        name = "db_put",
        description = "Inserts or replaces a row.",
        idempotent
    )]
    fn insert(&self, key: String, value: String) -> Result<String, String> {
        let mut rows = self
            .rows
            .lock()
            .map_err(|_| "the table is unavailable".to_owned())?;
        let previous = rows.insert(key.clone(), value);
        Ok(match previous {
            Some(old) => format!("replaced {key} (was {old})"),
            None => format!("inserted {key}"),
        })
    }

    #[tool(name = "db_remove", destructive)]
    fn delete(&self, key: String) -> Result<String, String> {
        let mut rows = self
            .rows
            .lock()
            .map_err(|_| "the table is unavailable".to_owned())?;
        match rows.remove(&key) {
            Some(_) => Ok(format!("deleted {key}")),
            None => Err(format!("no row has the key {key}")),
        }
    }

    /// Not a tool: no #[tool] attribute.
    #[allow(dead_code)]
    fn vacuum(&self) {}
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tools = DatabaseToolset::to_tools();
    for tool in &tools {
        println!("{}: {}", tool.name(), tool.description());
    }
    let policy = Policy::default();
    tools[1].call_blocking(
        Arguments::Text(r#"{"key": "user:1", "value": "Ada"}"#),
        Context::new().with_policy(policy.clone()),
    )?;
    println!(
        "{}",
        tools[0]
            .call_blocking(
                Arguments::Text(r#"{"prefix": "user:"}"#),
                Context::new().with_policy(policy.clone())
            )?
            .as_text()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::{Value, json};
    use toolsmith::testing;

    use super::*;

    #[test]
    fn envelopes_match_golden_in_every_dialect() {
        let tools = DatabaseToolset::to_tools();
        let tools: Vec<&dyn toolsmith::Tool> = tools.iter().map(|t| t.as_ref()).collect();
        testing::assert_envelopes_golden(&tools, "tests/golden/database_toolset");
    }

    #[test]
    fn schemas_match_golden() {
        let schemas: Vec<Value> = DatabaseToolset::to_tools()
            .iter()
            .map(|t| {
                serde_json::json!({"type": "function", "function": toolsmith::envelope(&**t, toolsmith::Dialect::JsonSchema).unwrap()})
            })
            .collect();
        testing::assert_golden("tests/golden/database_toolset.json", &Value::Array(schemas));
    }

    #[test]
    fn tools_are_the_marked_methods_in_declaration_order() {
        let names: Vec<String> = DatabaseToolset::to_tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        assert_eq!(names, ["db_query", "db_put", "db_remove"]);
    }

    #[test]
    fn descriptions_come_from_the_attribute_then_the_doc_then_the_method_name() {
        let tools = DatabaseToolset::to_tools();
        assert_eq!(
            tools[0].description(),
            "Returns the rows whose key starts with a prefix, one `key=value` per line."
        );
        assert_eq!(tools[1].description(), "Inserts or replaces a row.");
        assert_eq!(tools[2].description(), "Delete operation");
    }

    #[test]
    fn tools_made_together_share_one_instance() {
        let tools = DatabaseToolset::to_tools();
        testing::call(tools[1].as_ref(), json!({"key": "a", "value": "1"})).unwrap();
        assert_eq!(
            testing::call_text(tools[0].as_ref(), json!({"prefix": ""})).unwrap(),
            "a=1"
        );
        assert_eq!(
            testing::call_text(tools[2].as_ref(), json!({"key": "a"})).unwrap(),
            "deleted a"
        );
    }

    #[test]
    fn a_second_to_tools_starts_from_a_fresh_instance() {
        let first = DatabaseToolset::to_tools();
        testing::call(first[1].as_ref(), json!({"key": "a", "value": "1"})).unwrap();
        let second = DatabaseToolset::to_tools();
        assert_eq!(
            testing::call_text(second[0].as_ref(), json!({"prefix": ""})).unwrap(),
            ""
        );
    }

    #[test]
    fn an_error_the_method_returns_reaches_the_model() {
        let tools = DatabaseToolset::to_tools();
        let error = testing::call_text(tools[2].as_ref(), json!({"key": "nope"})).unwrap_err();
        assert_eq!(error, "Tool `db_remove` failed: no row has the key nope");
    }

    #[test]
    fn the_toolset_is_registered_under_its_name() {
        let registry = toolsmith::registry().unwrap();
        let entry = registry.entry("db_put").expect("Default toolsets register");
        assert_eq!(entry.toolset(), Some("db"));
        assert!(
            entry.source().contains("DatabaseToolset"),
            "{}",
            entry.source()
        );
    }
}
