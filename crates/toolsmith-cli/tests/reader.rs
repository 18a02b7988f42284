//! What a user meets of the argument reader and the schema tools through the real binary:
//! dialect names, repairs that are capped, sizes and positions in errors, a byte-order mark,
//! patterns a lenient import cannot enforce. Every run is bounded in time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest a run may take before it is killed and the test fails.
const DEADLINE: Duration = Duration::from_secs(120);

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {:.2000}", self.stdout))
    }
}

/// Runs the binary with `args`, writing `stdin` to it, killed after [`DEADLINE`].
fn toolsmith(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolsmith");
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    // The binary may exit before reading everything; a broken pipe is not this test's concern.
    let writer = std::thread::spawn(move || drop(pipe.write_all(&input)));
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = Vec::new();
        stdout.read_to_end(&mut text).map(|_| text)
    });
    let err = std::thread::spawn(move || {
        let mut text = Vec::new();
        stderr.read_to_end(&mut text).map(|_| text)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("toolsmith {args:?} ran past {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    writer.join().unwrap();
    Run {
        code: status.code().expect("exited, not killed by a signal"),
        stdout: String::from_utf8(out.join().unwrap().unwrap()).unwrap(),
        stderr: String::from_utf8(err.join().unwrap().unwrap()).unwrap(),
    }
}

/// A JSON Schema file holding `schema`, removed when dropped.
struct SchemaFile(std::path::PathBuf);

impl SchemaFile {
    fn new(name: &str, schema: &Value) -> Self {
        // Tests run at once: each file its own, though two tests use the same schema.
        static SERIAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("toolsmith-reader-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{serial}-{name}"));
        std::fs::write(&path, schema.to_string()).unwrap();
        SchemaFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for SchemaFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

// ---------------------------------------------------------------------------------------------
// Dialect names

#[test]
fn a_dialect_name_is_read_in_any_case() {
    let run = toolsmith(&["schema", "text_wc", "--dialect", "OpenAI"], b"");
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let declared = run.json();
    assert_eq!(declared[0]["type"], "function", "{declared}");
    assert_eq!(declared[0]["function"]["name"], "text_wc");

    let strict = toolsmith(&["schema", "text_wc", "--dialect", "OpenAI_Strict"], b"");
    assert_eq!(strict.code, 0, "stderr: {}", strict.stderr);
    assert_eq!(strict.json()[0]["function"]["strict"], true);
}

#[test]
fn an_unknown_dialect_is_a_usage_error_listing_the_names() {
    let run = toolsmith(&["schema", "text_wc", "--dialect", "openia"], b"");
    assert_eq!(run.code, 2, "stdout: {}", run.stdout);
    assert!(
        run.stderr.contains(
            "expected one of json-schema, openai, openai-strict, anthropic, anthropic-strict, \
             gemini, mcp"
        ),
        "{}",
        run.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// Defaults said once

/// Every `description` in `value`, with its JSON Pointer.
fn descriptions(value: &Value, at: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                match (key.as_str(), item) {
                    ("description", Value::String(text)) => out.push((at.clone(), text.clone())),
                    _ => descriptions(item, format!("{at}/{key}"), out),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                descriptions(item, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn openai_strict_says_each_default_once() {
    let run = toolsmith(&["schema", "--dialect", "openai-strict"], b"");
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let mut found = Vec::new();
    descriptions(&run.json(), String::new(), &mut found);
    let defaults: Vec<_> = found
        .iter()
        .filter(|(_, text)| text.to_lowercase().contains("default"))
        .collect();
    assert!(
        defaults
            .iter()
            .any(|(_, text)| text.contains("(default: 20)")),
        "a default the description does not state is still said: {defaults:#?}"
    );
    for (at, text) in defaults {
        assert_eq!(
            text.to_lowercase().matches("default").count(),
            1,
            "{at}: {text}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Repairs capped, work bounded

fn tags_schema() -> SchemaFile {
    SchemaFile::new(
        "tags.schema.json",
        &serde_json::json!({
            "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["tags"],
            "additionalProperties": false
        }),
    )
}

#[test]
fn coerce_lists_at_most_100_repairs_and_says_how_many_more_there_were() {
    // 400 KB of `[1]` for a list of strings: two repairs each, 200,000 in all.
    let schema = tags_schema();
    let text = format!("{{\"tags\":[{}]}}", vec!["[1]"; 100_000].join(","));
    let run = toolsmith(&["coerce", "--schema", schema.path(), "-"], text.as_bytes());
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // The value is as large as the input; the repairs are not.
    assert!(
        run.stdout.len() < 1_000_000,
        "{} bytes printed",
        run.stdout.len()
    );
    let out = run.json();
    assert_eq!(out["value"]["tags"].as_array().unwrap().len(), 100_000);
    let repairs = out["repairs"].as_array().unwrap();
    assert_eq!(repairs.len(), 101);
    assert_eq!(repairs[0]["code"], "unwrap_singleton");
    assert_eq!(
        repairs[100],
        serde_json::json!({
            "path": "",
            "code": "too_many_repairs",
            "not_shown": 199_900,
            "message": "arguments: 199900 more repairs were made and not listed"
        })
    );
}

// ---------------------------------------------------------------------------------------------
// Positions

#[test]
fn a_number_no_float_holds_is_reported_at_its_own_column() {
    let schema = SchemaFile::new(
        "nx.schema.json",
        &serde_json::json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "x": {"type": "number"}}
        }),
    );
    let run = toolsmith(
        &["coerce", "--schema", schema.path(), r#"{"n":1,"x":1e999}"#],
        b"",
    );
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    let error = &run.json()["errors"][0];
    assert_eq!(error["code"], "json_invalid");
    let expected = error["expected"].as_str().unwrap();
    assert!(
        expected
            .ends_with("the number 1e999 cannot be read: number out of range at line 1 column 12)"),
        "{expected}"
    );
}

// ---------------------------------------------------------------------------------------------
// A byte-order mark on stdin

#[test]
fn arguments_on_stdin_after_a_byte_order_mark_are_read() {
    let run = toolsmith(
        &["call", "text_wc", "-"],
        "\u{feff}{\"text\": \"a b\\nc\"}".as_bytes(),
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim_end(), "Lines: 2, Words: 3, Characters: 5");

    let schema = tags_schema();
    let run = toolsmith(
        &["coerce", "--schema", schema.path(), "--strict", "-"],
        "\u{feff}{\"tags\": [\"a\"]}".as_bytes(),
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.json(),
        serde_json::json!({"value": {"tags": ["a"]}, "repairs": []})
    );
}

// ---------------------------------------------------------------------------------------------
// Sizes

#[test]
fn a_string_past_the_limit_is_refused_stating_its_real_size() {
    let schema = SchemaFile::new(
        "note.schema.json",
        &serde_json::json!({"type": "object", "properties": {"note": {"type": "string"}}}),
    );
    let text = format!("{{\"note\": \"{}\"}}", "x".repeat(1_500_000));
    let run = toolsmith(&["coerce", "--schema", schema.path(), "-"], text.as_bytes());
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    let error = &run.json()["errors"][0];
    assert_eq!(error["code"], "too_large");
    assert_eq!(
        error["message"],
        "`note`: expected a string of at most 1,048,576 bytes; 1,500,000 bytes were sent"
    );
}

// ---------------------------------------------------------------------------------------------
// A pattern the linear-time matcher cannot express

#[test]
fn a_lookbehind_pattern_imports_leniently_with_a_warning_and_is_refused_strictly() {
    let schema = SchemaFile::new(
        "lookbehind.schema.json",
        &serde_json::json!({
            "type": "object",
            "properties": {"s": {"type": "string", "pattern": "(?<=x)a"}}
        }),
    );
    let run = toolsmith(&["coerce", "--schema", schema.path(), r#"{"s": "b"}"#], b"");
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.json()["value"], serde_json::json!({"s": "b"}));
    assert!(
        run.stderr.contains("/properties/s/pattern")
            && run.stderr.contains("cannot be enforced")
            && run.stderr.contains("(unsupported_keyword)"),
        "{}",
        run.stderr
    );

    let strict = toolsmith(
        &[
            "coerce",
            "--schema",
            schema.path(),
            "--strict-import",
            r#"{"s": "b"}"#,
        ],
        b"",
    );
    assert_eq!(strict.code, 2, "stdout: {}", strict.stdout);

    // Not a regular expression at all: refused in both modes.
    let broken = SchemaFile::new(
        "broken.schema.json",
        &serde_json::json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "("}}}),
    );
    let run = toolsmith(&["coerce", "--schema", broken.path(), r#"{"s": "b"}"#], b"");
    assert_eq!(run.code, 2, "stdout: {}", run.stdout);
}
