//! The README's `toolsmith coerce` example prints what the README shows.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/toolsmith-cli sits two levels below the repository root")
}

/// The text between the first occurrence of `start` and the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).expect("start marker") + start.len();
    let len = text[from..].find(end).expect("end marker");
    &text[from..from + len]
}

#[test]
fn readme_coerce_example_prints_what_the_readme_shows() {
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

    let output = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .current_dir(repo_root())
        .args(["coerce", "--schema", schema_path, arguments])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed, shown);
}
