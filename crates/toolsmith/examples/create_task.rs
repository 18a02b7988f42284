//! The reference's task tool: a nested struct parameter with enums, optional fields and a default,
//! returning a struct (so the tool has an output type).
//!
//! Run it with `cargo run -p toolsmith --example create_task`.

use serde::{Deserialize, Serialize};
use toolsmith::{Arguments, Context, ToolExt, ToolType};

/// How urgent a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToolType)]
pub enum Priority {
    /// Whenever there is time.
    Low,
    /// This week.
    Medium,
    /// Today.
    High,
    /// Drop everything.
    Critical,
}

/// Where a task stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToolType)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started.
    #[default]
    Todo,
    /// Being worked on.
    InProgress,
    /// Finished.
    Done,
}

/// Bookkeeping about a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolType)]
pub struct TaskMetadata {
    /// Labels to file the task under.
    pub tags: Vec<String>,
    /// How long the task should take, in hours.
    pub estimated_hours: Option<f64>,
    /// Who does it.
    pub assignee: Option<String>,
}

/// A task to create.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolType)]
pub struct TaskRequest {
    /// A short title.
    pub title: String,
    /// What needs doing, in detail.
    pub description: Option<String>,
    /// How urgent it is.
    pub priority: Priority,
    /// Where the task starts.
    #[serde(default)]
    pub status: Status,
    /// Tags, estimate and assignee.
    pub metadata: TaskMetadata,
}

/// The task as created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolType)]
pub struct TaskCreated {
    /// The new task's id.
    pub id: u64,
    /// A one-line summary of what was created.
    pub summary: String,
}

/// Creates a task in the tracker.
#[toolsmith::tool(idempotent = false)]
pub fn create_task(task: TaskRequest) -> Result<TaskCreated, String> {
    if task.title.trim().is_empty() {
        return Err("a task needs a title".to_owned());
    }
    Ok(TaskCreated {
        id: 1,
        summary: format!(
            "{} ({:?}, {:?}, {} tags)",
            task.title,
            task.priority,
            task.status,
            task.metadata.tags.len()
        ),
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "{}",
        serde_json::to_string_pretty(&toolsmith::envelope(
            &CreateTask,
            toolsmith::Dialect::OpenAi { strict: false }
        )?)?
    );
    // What models actually send: a shouting enum, a number as text, tags as a JSON string.
    let sent = r#"{"task": {"title": "Ship it", "priority": "HIGH", "status": "In-Progress",
        "metadata": {"tags": "[\"release\"]", "estimated_hours": "3.5"}}}"#;
    let output = CreateTask.call_blocking(Arguments::Text(sent), Context::new())?;
    println!("{}", output.as_text());
    for repair in &output.repairs {
        println!("repaired: {}", repair.message());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;
    use toolsmith::Tool;
    use toolsmith::{Describe, testing};

    use super::*;

    #[test]
    fn envelopes_match_golden_in_every_dialect() {
        testing::assert_envelopes_golden(&[&CreateTask], "tests/golden/create_task");
    }

    #[test]
    fn schema_matches_golden() {
        testing::assert_schema_golden(&CreateTask, "tests/golden/create_task.json");
    }

    #[test]
    fn output_type_is_the_returned_struct() {
        let output = CreateTask
            .output()
            .expect("a struct return describes an output");
        assert_eq!(output, &TaskCreated::type_graph());
    }

    #[test]
    fn shouting_enum_inside_the_nested_struct_becomes_the_variant() {
        let output = testing::call(
            &CreateTask,
            json!({"task": {"title": "Ship", "priority": "HIGH", "metadata": {"tags": []}}}),
        )
        .unwrap();
        assert_eq!(
            output.structured,
            Some(json!({"id": 1, "summary": "Ship (High, Todo, 0 tags)"}))
        );
        let repaired: Vec<_> = output
            .repairs
            .iter()
            .map(|r| (r.path.as_str(), r.code.as_str()))
            .collect();
        assert_eq!(repaired, [("/task/priority", "enum_case")]);
    }

    #[test]
    fn status_is_filled_from_its_serde_default() {
        let schema =
            toolsmith::parameters_schema(CreateTask.parameters(), toolsmith::Dialect::JsonSchema)
                .unwrap();
        assert_eq!(schema["properties"]["task"]["$ref"], "#/$defs/TaskRequest");
        let text = testing::call_text(
            &CreateTask,
            json!({"task": {"title": "T", "priority": "Low", "metadata": {"tags": ["a"]}}}),
        );
        assert_eq!(
            text.unwrap(),
            r#"{"id":1,"summary":"T (Low, Todo, 1 tags)"}"#
        );
    }

    #[test]
    fn every_bad_field_is_reported_at_once() {
        let error = testing::call_text(
            &CreateTask,
            json!({"task": {"title": "T", "priority": "urgent", "status": "doing", "metadata": {}}}),
        )
        .unwrap_err();
        assert!(error.contains("`task.priority`"), "{error}");
        assert!(error.contains("`task.status`"), "{error}");
        assert!(error.contains("`task.metadata.tags`"), "{error}");
    }

    #[test]
    fn a_failure_the_tool_reports_is_a_failed_error() {
        let error = testing::call(
            &CreateTask,
            json!({"task": {"title": " ", "priority": "Low", "metadata": {"tags": []}}}),
        )
        .unwrap_err();
        assert_eq!(error.code(), "failed");
        assert_eq!(
            error.to_model_message(),
            "Tool `create_task` failed: a task needs a title"
        );
    }
}
