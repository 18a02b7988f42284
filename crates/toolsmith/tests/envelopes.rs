//! Each receiver's declaration of a tool, and calls answering what a dialect asked for.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolsmith::{
    Arguments, Context, Dialect, EnvelopeError, Policy, Tool, ToolExt, ToolType, envelope,
    lint_tools,
};

#[derive(Debug, Serialize, Deserialize, ToolType)]
enum Level {
    Low,
    High,
}

/// The result of a check.
#[derive(Debug, Serialize, Deserialize, ToolType)]
struct Report {
    /// Whether every check passed.
    ok: bool,
}

/// Checks a host.
#[toolsmith::tool(read_only)]
fn check(
    host: String,
    level: Option<Level>,
    #[param(default = 3)] retries: u8,
    labels: Option<BTreeMap<String, String>>,
) -> Report {
    let _ = (host, level, retries, labels);
    Report { ok: true }
}

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[test]
fn each_receiver_gets_its_own_wrapper() {
    let wrappers = [
        (
            Dialect::JsonSchema,
            vec!["name", "description", "parameters"],
        ),
        (Dialect::OpenAi { strict: false }, vec!["type", "function"]),
        (Dialect::OpenAi { strict: true }, vec!["type", "function"]),
        (
            Dialect::Anthropic { strict: false },
            vec!["name", "description", "input_schema"],
        ),
        (
            Dialect::Anthropic { strict: true },
            vec!["name", "description", "input_schema", "strict"],
        ),
        (Dialect::Gemini, vec!["name", "description", "parameters"]),
        (
            Dialect::Mcp,
            vec![
                "name",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
            ],
        ),
    ];
    for (dialect, expected) in wrappers {
        assert_eq!(
            keys(&envelope(&Check, dialect).unwrap()),
            expected,
            "{dialect}"
        );
    }
}

#[test]
fn openai_strict_function_says_strict_and_the_plain_one_does_not() {
    let strict = envelope(&Check, Dialect::OpenAi { strict: true }).unwrap();
    assert_eq!(
        keys(&strict["function"]),
        ["name", "description", "parameters", "strict"]
    );
    let plain = envelope(&Check, Dialect::OpenAi { strict: false }).unwrap();
    assert_eq!(
        keys(&plain["function"]),
        ["name", "description", "parameters"]
    );
}

#[test]
fn mcp_declares_the_output_schema_and_annotations() {
    let declared = envelope(&Check, Dialect::Mcp).unwrap();
    assert_eq!(
        declared["outputSchema"]["properties"]["ok"]["type"],
        "boolean"
    );
    assert_eq!(declared["annotations"], json!({"readOnlyHint": true}));
}

/// Says hi.
#[toolsmith::tool]
fn hi() -> String {
    "hi".into()
}

#[test]
fn mcp_leaves_out_output_schema_and_annotations_a_tool_does_not_have() {
    assert_eq!(
        keys(&envelope(&Hi, Dialect::Mcp).unwrap()),
        ["name", "description", "inputSchema"]
    );
}

/// A name only some receivers take.
#[toolsmith::tool(name = "net.check")]
fn dotted() {}

#[test]
fn a_name_the_receiver_refuses_is_an_error_naming_its_pattern() {
    let error = envelope(&Dotted, Dialect::Anthropic { strict: false }).unwrap_err();
    assert!(matches!(error, EnvelopeError::Name(_)));
    assert!(
        error.to_string().contains("^[A-Za-z0-9_-]{1,64}$"),
        "{error}"
    );
    assert!(envelope(&Dotted, Dialect::Mcp).is_ok());
    assert!(envelope(&Dotted, Dialect::Gemini).is_ok());
}

#[test]
fn lint_tools_finds_what_the_receiver_refuses() {
    let tools: [&dyn Tool; 2] = [&Dotted, &Check];
    let findings = lint_tools(tools, Dialect::OpenAi { strict: true });
    let codes: Vec<&str> = findings.iter().map(|f| f.code.as_str()).collect();
    assert_eq!(codes, ["tool_name"]);
    assert!(lint_tools(tools, Dialect::Mcp).is_empty());
}

#[test]
fn a_call_in_a_strict_dialect_wire_shape_is_the_canonical_call() {
    // What an OpenAI strict model sends: every field present, null for those it leaves out, the
    // map as key/value entries.
    let wire = json!({
        "host": "db1",
        "level": null,
        "retries": null,
        "labels": [{"key": "env", "value": "prod"}],
    });
    let policy = Policy::strict().with_dialect(Dialect::OpenAi { strict: true });
    let output = Check
        .call_blocking(
            Arguments::Json(&wire),
            Context::new().with_policy(policy.clone()),
        )
        .unwrap();
    assert_eq!(output.structured, Some(json!({"ok": true})));
    assert!(output.repairs.is_empty(), "{:?}", output.repairs);
}

#[test]
fn the_same_wire_shape_is_repaired_when_the_dialect_is_not_said() {
    let wire = json!({"host": "db1", "level": null, "retries": null, "labels": null});
    let output = Check
        .call_blocking(Arguments::Json(&wire), Context::new())
        .unwrap();
    assert_eq!(output.structured, Some(json!({"ok": true})));
    let refused = Check
        .call_blocking(
            Arguments::Json(&wire),
            Context::new().with_policy(Policy::strict()),
        )
        .unwrap_err();
    assert_eq!(refused.code(), "invalid_arguments");
}

/// Notes, for the declaration cache of a toolset's tools.
#[derive(Default)]
struct Notes;

#[toolsmith::toolset]
impl Notes {
    /// Reads a note.
    #[tool]
    fn read(&self, id: u32) -> String {
        id.to_string()
    }
}

#[test]
fn a_declaration_is_written_once_and_then_lent_out() {
    let mut registry = toolsmith::Registry::new();
    registry.add_toolset(Notes).unwrap();
    registry.add(std::sync::Arc::new(Check)).unwrap();
    for entry in &registry {
        for dialect in Dialect::ALL {
            let first = entry.declaration(dialect).unwrap();
            let again = entry.declaration(dialect).unwrap();
            assert!(matches!(again, Cow::Borrowed(_)), "{dialect}");
            // The same allocation each time, and what `envelope` writes.
            assert!(std::ptr::eq(first.as_ref(), again.as_ref()), "{dialect}");
            assert_eq!(*again, envelope(entry.tool().as_ref(), dialect).unwrap());
        }
    }
}

#[test]
fn a_refused_declaration_is_refused_again_from_the_cache() {
    /// A tool whose name OpenAI refuses.
    #[toolsmith::tool(name = "notes.read")]
    fn dotted() -> String {
        String::new()
    }
    let mut registry = toolsmith::Registry::new();
    registry.add(std::sync::Arc::new(Dotted)).unwrap();
    let entry = registry.entry("notes.read").unwrap();
    for _ in 0..2 {
        let error = entry
            .declaration(Dialect::OpenAi { strict: false })
            .unwrap_err();
        assert!(matches!(error, EnvelopeError::Name(_)), "{error}");
    }
}
