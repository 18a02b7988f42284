//! What a user meets of the argument reader and the schema tools through the real binary:
//! dialect names, repairs that are capped, sizes and positions in errors, a byte-order mark,
//! patterns a lenient import cannot enforce, the memory a request's values may take. Every run
//! is bounded in time.
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
    /// The most memory the process was seen to hold (its peak resident set, in bytes, as
    /// Linux's `/proc` tells while it runs; 0 where that cannot be read). Seen, not measured at
    /// the last instant: never more than the true peak.
    peak_bytes: u64,
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
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_bytes = 0;
    let status = loop {
        peak_bytes = peak_bytes.max(peak_resident_bytes(&status_file));
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
        peak_bytes,
    }
}

/// The peak resident set (`VmHWM`) in a `/proc/PID/status` file, in bytes; 0 when it cannot be
/// read (another system, or the process has gone).
fn peak_resident_bytes(status_file: &str) -> u64 {
    let status = std::fs::read_to_string(status_file).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
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
    // 400 KB of `[1]` for a list of strings: two repairs each, 199,998 in all (and 200,000
    // values, the default limit: the object, the list and two values an item).
    let schema = tags_schema();
    let text = format!("{{\"tags\":[{}]}}", vec!["[1]"; 99_999].join(","));
    let run = toolsmith(&["coerce", "--schema", schema.path(), "-"], text.as_bytes());
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // The value is as large as the input; the repairs are not.
    assert!(
        run.stdout.len() < 1_000_000,
        "{} bytes printed",
        run.stdout.len()
    );
    let out = run.json();
    assert_eq!(out["value"]["tags"].as_array().unwrap().len(), 99_999);
    let repairs = out["repairs"].as_array().unwrap();
    assert_eq!(repairs.len(), 101);
    assert_eq!(repairs[0]["code"], "unwrap_singleton");
    assert_eq!(
        repairs[100],
        serde_json::json!({
            "path": "",
            "code": "too_many_repairs",
            "not_shown": 199_898,
            "message": "arguments: 199898 more repairs were made and not listed"
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

/// The type cannot hold a look-behind (its matcher is linear-time), so a lenient import says so;
/// the schema's validator behind coercion still enforces it, and a strict import refuses it.
#[test]
fn a_lookbehind_pattern_imports_leniently_with_a_warning_and_is_refused_strictly() {
    let schema = SchemaFile::new(
        "lookbehind.schema.json",
        &serde_json::json!({
            "type": "object",
            "properties": {"s": {"type": "string", "pattern": "(?<=x)a"}}
        }),
    );
    let run = toolsmith(
        &["coerce", "--schema", schema.path(), r#"{"s": "xa"}"#],
        b"",
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.json()["value"], serde_json::json!({"s": "xa"}));
    let refused = toolsmith(&["coerce", "--schema", schema.path(), r#"{"s": "b"}"#], b"");
    assert_eq!(refused.code, 1, "stderr: {}", refused.stderr);
    assert_eq!(refused.json()["errors"][0]["code"], "schema_violation");
    assert_eq!(refused.json()["errors"][0]["path"], "/s");
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

// ---------------------------------------------------------------------------------------------
// The values of a request, bounded

/// `{"m": [[1, ...], ...]}`: `rows` rows of `per_row` ones, `2 + rows + rows * per_row` JSON
/// values in all.
fn matrix_text(rows: usize, per_row: usize) -> String {
    let row = format!("[{}]", vec!["1"; per_row].join(","));
    format!("{{\"m\":[{}]}}", vec![row; rows].join(","))
}

fn matrix_schema() -> SchemaFile {
    SchemaFile::new(
        "matrix.schema.json",
        &serde_json::json!({
            "type": "object",
            "properties": {
                "m": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}
            }
        }),
    )
}

/// What the error for arguments past the default limit on values says.
fn past_the_value_limit(sent: &str) -> String {
    format!(
        "arguments: expected at most 200,000 JSON values in all (every string, number, boolean, \
         null, array and object counts; keys do not); {sent} were sent"
    )
}

#[test]
fn coerce_refuses_arguments_past_the_value_limit_saying_how_many_were_sent() {
    // Every array within the item limit, the text within the size limit.
    let schema = matrix_schema();
    let text = matrix_text(4, 50_001);
    let run = toolsmith(&["coerce", "--schema", schema.path(), "-"], text.as_bytes());
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    let errors = run.json()["errors"].clone();
    assert_eq!(errors.as_array().unwrap().len(), 1, "{errors}");
    assert_eq!(errors[0]["code"], "too_large");
    assert_eq!(errors[0]["path"], "");
    assert_eq!(errors[0]["message"], past_the_value_limit("200,010"));
    // One row fewer is within the limit.
    let text = matrix_text(3, 50_001);
    let run = toolsmith(&["coerce", "--schema", schema.path(), "-"], text.as_bytes());
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.json()["value"]["m"].as_array().unwrap().len(), 3);
}

#[test]
fn call_refuses_arguments_past_the_value_limit() {
    // Undeclared, but read before anything is said about it: the reader refuses it first.
    let junk = matrix_text(4, 50_001);
    let text = format!("{{\"text\":\"a b\",\"junk\":{junk}}}");
    let run = toolsmith(&["call", "text_wc", "-"], text.as_bytes());
    assert_eq!(run.code, 1, "stdout: {}", run.stdout);
    let expected = past_the_value_limit("200,012");
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    let run = toolsmith(&["call", "--json", "text_wc", "-"], text.as_bytes());
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    let error = run.json();
    assert_eq!(error["code"], "invalid_arguments", "{error}");
    assert_eq!(error["errors"][0]["code"], "too_large", "{error}");
}

/// A run's peak memory in MB, for messages.
fn megabytes(run: &Run) -> u64 {
    run.peak_bytes >> 20
}

#[test]
#[cfg(target_os = "linux")]
fn eight_megabytes_of_small_values_cost_tens_of_megabytes_not_hundreds() {
    // 8.2 MB of ones in arrays of 100,000: 4.1 million values, every array within the item
    // limit. Read whole, that was a tree of about 300 MB, and `coerce` printed a copy of it.
    const MAX_PEAK: u64 = 96 << 20;
    let rows = matrix_text(41, 100_000);
    let schema = matrix_schema();
    let run = toolsmith(&["coerce", "--schema", schema.path(), "-"], rows.as_bytes());
    assert!(run.peak_bytes > 0, "no peak memory read from /proc");
    assert!(
        run.peak_bytes < MAX_PEAK,
        "coerce held {} MB",
        megabytes(&run)
    );
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert_eq!(
        run.json()["errors"][0]["message"],
        past_the_value_limit("4,100,043")
    );

    // The same values as a tool's array parameter.
    let labels = format!(
        "{{\"repo\":\"a/b\",\"labels\":{}}}",
        &rows[5..rows.len() - 1]
    );
    let run = toolsmith(&["call", "github_list_issues", "-"], labels.as_bytes());
    assert!(
        run.peak_bytes < MAX_PEAK,
        "call held {} MB",
        megabytes(&run)
    );
    assert_eq!(run.code, 1, "stdout: {}", run.stdout);
    assert!(
        run.stderr.contains(&past_the_value_limit("4,100,044")),
        "{}",
        run.stderr
    );
}
