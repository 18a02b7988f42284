//! What a tool returning an `Option` of text says, and field aliases read through a tool call.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, dead_code)]

use serde::Deserialize;
use toolsmith::{Arguments, Context, Policy, Tool, ToolExt};

/// Finds a user's name by id.
#[toolsmith::tool]
fn find_name(id: u32) -> Option<String> {
    (id == 1).then(|| "Ada".to_owned())
}

/// Finds a user's name by id, or fails.
#[toolsmith::tool]
fn try_find_name(id: u32) -> Result<Option<&'static str>, String> {
    match id {
        0 => Err("no user 0".to_owned()),
        1 => Ok(Some("Ada")),
        _ => Ok(None),
    }
}

fn call(tool: &dyn Tool, text: &str) -> Result<toolsmith::ToolOutput, toolsmith::ToolError> {
    tool.call_blocking(Arguments::Text(text), Context::new())
}

#[test]
fn some_text_renders_as_the_text_itself() {
    let output = call(&FindName, r#"{"id": 1}"#).unwrap();
    assert_eq!(output.as_text(), "Ada");
    assert_eq!(output.structured, None);
    assert!(FindName.output().is_none());
}

#[test]
fn none_renders_as_empty_text() {
    let output = call(&FindName, r#"{"id": 2}"#).unwrap();
    assert_eq!(output.as_text(), "");
    assert_eq!(output.structured, None);
}

#[test]
fn a_result_of_optional_text_renders_the_text_and_fails_with_the_error() {
    assert_eq!(call(&TryFindName, r#"{"id": 1}"#).unwrap().as_text(), "Ada");
    assert_eq!(call(&TryFindName, r#"{"id": 2}"#).unwrap().as_text(), "");
    let error = call(&TryFindName, r#"{"id": 0}"#).unwrap_err();
    assert!(
        matches!(error, toolsmith::ToolError::Failed { ref message, .. } if message == "no user 0")
    );
}

/// A colour, spelled either way.
#[derive(Debug, Deserialize, toolsmith::ToolType)]
struct Paint {
    #[serde(alias = "colour")]
    color: String,
}

/// Paints a wall.
#[toolsmith::tool(type_name = "PaintWall")]
fn paint(paint: Paint) -> String {
    format!("painted {}", paint.color)
}

#[test]
fn a_tool_reads_a_field_sent_under_its_serde_alias_without_a_repair() {
    for policy in [Policy::default(), Policy::strict()] {
        let output = PaintWall
            .call_blocking(
                Arguments::Text(r#"{"paint": {"colour": "red"}}"#),
                Context::new().with_policy(policy.clone()),
            )
            .unwrap();
        assert_eq!(output.as_text(), "painted red");
        assert!(output.repairs.is_empty());
    }
}
