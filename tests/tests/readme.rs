//! The README's `toolsmith coerce` example shows what coercion really produces.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use toolsmith_types::{Arguments, Policy, coerce_arguments, import};

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository root")
}

/// The text between the first occurrence of `start` and the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).expect("start marker") + start.len();
    let len = text[from..].find(end).expect("end marker");
    &text[from..from + len]
}

#[test]
fn readme_coerce_example_prints_what_coercion_produces() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let command = between(&readme, "cargo run -p toolsmith-cli -- coerce", "\n\n");
    let schema_path = between(command, "--schema ", " ");
    let arguments = between(command, "'", "'");
    let shown: Value = serde_json::from_str(
        between(&readme, "<!-- readme-example-output", "\n```\n")
            .split_once("```json\n")
            .expect("a json block after the marker")
            .1,
    )
    .expect("the README's output block is JSON");

    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(repo_root().join(schema_path)).unwrap())
            .unwrap();
    let graph = import(&schema).unwrap();
    let coerced = coerce_arguments(&graph, Arguments::Text(arguments), &Policy::default())
        .expect("the README's arguments coerce");
    let produced = json!({
        "value": coerced.value,
        "repairs": coerced.repairs.iter().map(|r| r.to_json()).collect::<Vec<_>>(),
    });
    assert_eq!(shown, produced);
}
