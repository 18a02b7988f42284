//! A tool states its own argument limits, and every way of calling it reads its arguments under
//! them: the statement replaces the caller's policy's limits for that tool, and only them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith::{
    Arguments, Context, Limits, Policy, Registry, Tool, ToolError, ToolExt, ToolFuture, ToolOutput,
    Toolset, TypeGraph,
};

/// 1.5 MB: more than the default policy's longest string (1 MiB).
const BIG: usize = 1_500_000;

fn documents() -> Limits {
    Limits {
        max_string_bytes: 4 << 20,
        max_input_bytes: 8 << 20,
        ..Limits::default()
    }
}

/// Counts the bytes of a document.
#[toolsmith::tool(limits = documents)]
fn byte_count(document: String) -> usize {
    document.len()
}

/// Counts the bytes of a note.
#[toolsmith::tool]
fn note_length(note: String) -> usize {
    note.len()
}

/// A message with its numbers ungrouped (`1,048,576` as `1048576`), to look for a number in it
/// however the message groups digits.
fn ungrouped(message: &str) -> String {
    message.replace(',', "")
}

fn big_text() -> String {
    "x".repeat(BIG)
}

/// The coercion error codes of a failed call.
fn error_codes(error: &ToolError) -> Vec<String> {
    match error {
        ToolError::InvalidArguments { errors, .. } => errors
            .0
            .iter()
            .map(|e| e.code.as_str().to_owned())
            .collect(),
        other => panic!("not invalid arguments: {other:?}"),
    }
}

#[test]
fn a_tool_stating_larger_limits_takes_a_string_the_default_policy_refuses() {
    let arguments = json!({"document": big_text()});
    let output = ByteCount
        .call_blocking(Arguments::Json(&arguments), Context::new())
        .unwrap();
    assert_eq!(output.as_text(), BIG.to_string());
    let text = arguments.to_string();
    let output = ByteCount
        .call_blocking(Arguments::Text(&text), Context::new())
        .unwrap();
    assert_eq!(output.as_text(), BIG.to_string());
}

#[test]
fn a_tool_stating_no_limits_keeps_the_callers_policy() {
    assert_eq!(NoteLength.limits(), None);
    let error = NoteLength
        .call_blocking(
            Arguments::Json(&json!({"note": big_text()})),
            Context::new(),
        )
        .unwrap_err();
    assert_eq!(error_codes(&error), ["too_large"]);
}

#[test]
fn the_statement_is_checked_too_not_only_the_room_it_gives() {
    let five_mib = "x".repeat(5 << 20);
    let error = ByteCount
        .call_blocking(
            Arguments::Json(&json!({"document": five_mib})),
            Context::new(),
        )
        .unwrap_err();
    assert_eq!(error_codes(&error), ["too_large"]);
    assert!(
        ungrouped(&error.to_model_message()).contains("at most 4194304 bytes"),
        "{error}"
    );
}

#[test]
fn the_statement_replaces_the_policys_limits_even_when_the_policy_is_larger() {
    let mut generous = Policy::default();
    generous.limits.max_string_bytes = usize::MAX;
    let five_mib = "x".repeat(5 << 20);
    let error = ByteCount
        .call_blocking(
            Arguments::Json(&json!({"document": five_mib})),
            Context::new().with_policy(generous),
        )
        .unwrap_err();
    assert_eq!(error_codes(&error), ["too_large"]);
}

#[test]
fn the_statement_keeps_the_policys_mode_unknown_keys_and_dialect() {
    let strict = Policy::strict();
    // A repair is still refused under a strict policy: only the limits changed.
    let error = ByteCount
        .call_blocking(
            Arguments::Json(&json!({"document": 7})),
            Context::new().with_policy(strict),
        )
        .unwrap_err();
    assert_eq!(error_codes(&error), ["repair_refused"]);
    assert_eq!(ByteCount.limits(), Some(documents()));
    assert_eq!(NoteLength.limits(), None);
}

#[test]
fn the_registry_calls_a_tool_under_its_statement() {
    let mut registry = Registry::new();
    registry
        .add(Arc::new(ByteCount))
        .unwrap()
        .add(Arc::new(NoteLength))
        .unwrap();
    let arguments = json!({"document": big_text()});
    let output = registry
        .call_blocking("byte_count", Arguments::Json(&arguments), Context::new())
        .unwrap();
    assert_eq!(output.as_text(), BIG.to_string());
    let error = registry
        .call_blocking(
            "note_length",
            Arguments::Json(&json!({"note": big_text()})),
            Context::new(),
        )
        .unwrap_err();
    assert_eq!(error_codes(&error), ["too_large"]);
}

/// An archive whose limits are set when it is built.
struct ArchiveToolset {
    max_document_bytes: usize,
}

impl ArchiveToolset {
    fn limits(&self) -> Limits {
        Limits {
            max_string_bytes: self.max_document_bytes,
            max_input_bytes: 2 * self.max_document_bytes,
            ..Limits::default()
        }
    }

    fn titles_only(&self) -> Limits {
        Limits {
            max_string_bytes: 10,
            ..Limits::default()
        }
    }
}

#[toolsmith::toolset(register = false, limits = Self::limits)]
impl ArchiveToolset {
    /// Stores a document.
    #[tool]
    fn store(&self, document: String) -> usize {
        document.len()
    }

    /// Finds a document by title.
    #[tool(limits = Self::titles_only)]
    fn find(&self, title: String) -> String {
        title
    }
}

#[test]
fn a_toolset_states_limits_for_all_its_tools_from_its_instance() {
    let tools = ArchiveToolset {
        max_document_bytes: 2 << 20,
    }
    .into_tools();
    let store = &tools[0];
    assert_eq!(store.limits().unwrap().max_string_bytes, 2 << 20);
    let output = store
        .call_blocking(
            Arguments::Json(&json!({"document": big_text()})),
            Context::new(),
        )
        .unwrap();
    assert_eq!(output.as_text(), BIG.to_string());

    // Another instance, another statement.
    let small = ArchiveToolset {
        max_document_bytes: 100,
    }
    .into_tools();
    let error = small[0]
        .call_blocking(
            Arguments::Json(&json!({"document": "y".repeat(101)})),
            Context::new(),
        )
        .unwrap_err();
    assert_eq!(error_codes(&error), ["too_large"]);
}

#[test]
fn a_tool_of_a_toolset_may_state_its_own_limits_instead() {
    let tools = ArchiveToolset {
        max_document_bytes: 2 << 20,
    }
    .into_tools();
    let find = &tools[1];
    assert_eq!(find.limits().unwrap().max_string_bytes, 10);
    let error = find
        .call_blocking(
            Arguments::Json(&json!({"title": "a title too long"})),
            Context::new(),
        )
        .unwrap_err();
    assert_eq!(error_codes(&error), ["too_large"]);
}

/// A counter with a ceiling on what it takes: a tool with state states its limits too.
struct Tally {
    max_label_bytes: usize,
}

impl Tally {
    fn label_limits(&self) -> Limits {
        Limits {
            max_string_bytes: self.max_label_bytes,
            ..Limits::default()
        }
    }
}

#[toolsmith::tool(register = false, limits = Self::label_limits)]
impl Tally {
    /// Counts a label's characters.
    fn tally(&self, label: String) -> usize {
        label.chars().count()
    }
}

#[test]
fn a_tool_with_state_states_limits_from_its_instance() {
    let tally = Tally { max_label_bytes: 3 };
    assert_eq!(tally.limits().unwrap().max_string_bytes, 3);
    assert_eq!(
        toolsmith::testing::call_text(&tally, json!({"label": "abc"})),
        Ok("3".to_owned())
    );
    let error = toolsmith::testing::call(&tally, json!({"label": "abcd"})).unwrap_err();
    assert_eq!(error_codes(&error), ["too_large"]);
}

/// A tool written by hand: it states its limits and reads its arguments under them.
struct Echo {
    parameters: TypeGraph,
}

impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its coerced arguments."
    }
    fn parameters(&self) -> &TypeGraph {
        &self.parameters
    }
    fn limits(&self) -> Option<Limits> {
        Some(documents())
    }
    fn call<'a>(&'a self, arguments: Arguments<'a>, context: Context) -> ToolFuture<'a> {
        // Called directly, the tool applies its statement itself; a registry also would.
        let policy = Policy {
            limits: documents(),
            ..context.policy().clone()
        };
        let coerced = toolsmith::coerce_arguments(&self.parameters, arguments, &policy)
            .map(|coerced| ToolOutput::structured(coerced.value))
            .map_err(|errors| ToolError::InvalidArguments {
                tool: self.name().into(),
                errors,
            });
        ToolFuture::ready(coerced)
    }
}

#[test]
fn a_tool_written_by_hand_reads_its_arguments_under_its_statement() {
    let schema = json!({"type": "object", "properties": {"s": {"type": "string"}}});
    let echo = Echo {
        parameters: toolsmith::import(&schema).unwrap(),
    };
    let mut registry = Registry::new();
    registry.add(Arc::new(echo)).unwrap();
    let output = registry
        .call_blocking(
            "echo",
            Arguments::Json(&json!({"s": big_text()})),
            Context::new(),
        )
        .unwrap();
    assert_eq!(
        output.structured.unwrap()["s"].as_str().map(str::len),
        Some(BIG)
    );
    assert_eq!(
        registry
            .call_blocking("echo", Arguments::Json(&Value::Null), Context::new())
            .unwrap_err()
            .code(),
        "invalid_arguments"
    );
}
