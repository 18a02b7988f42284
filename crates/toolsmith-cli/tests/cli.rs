//! The `toolsmith` binary, run as a user runs it: arguments, stdin, stdout, stderr, exit code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {:?}", self.stdout))
    }

    /// The `(path, code)` of every error printed.
    fn error_codes(&self) -> Vec<(String, String)> {
        let out = self.json();
        let errors = out["errors"].as_array().expect("an `errors` array");
        errors
            .iter()
            .map(|e| {
                assert!(e["message"].is_string(), "every error has a message: {e}");
                (
                    e["path"].as_str().unwrap().to_owned(),
                    e["code"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn toolsmith(args: &[&str], stdin: &str) -> Run {
    toolsmith_bytes(args, stdin.as_bytes())
}

fn toolsmith_bytes(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolsmith");
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The binary may exit before reading everything; a broken pipe is not this test's concern.
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("toolsmith finishes");
    writer.join().unwrap();
    Run {
        code: out.status.code().expect("exited, not killed by a signal"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn coerce_weather(arguments: &str) -> Run {
    toolsmith(
        &["coerce", "--schema", &fixture("weather.json"), arguments],
        "",
    )
}

#[test]
fn valid_arguments_print_the_canonical_value_and_repairs() {
    let run = coerce_weather(r#"{"city": "Paris", "days": "3"}"#);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let out = run.json();
    assert_eq!(
        out["value"],
        json!({"city": "Paris", "days": 3, "units": "metric"})
    );
    let repairs = out["repairs"].as_array().unwrap();
    assert_eq!(repairs.len(), 1);
    assert_eq!(repairs[0]["path"], "/days");
    assert_eq!(repairs[0]["code"], "int_from_string");
    assert_eq!(repairs[0]["from"], "3");
    assert_eq!(repairs[0]["to"], 3);
}

#[test]
fn canonical_arguments_need_no_repairs() {
    let run = coerce_weather(r#"{"city": "Oslo", "days": 2, "units": "imperial"}"#);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.json(),
        json!({"value": {"city": "Oslo", "days": 2, "units": "imperial"}, "repairs": []})
    );
}

#[test]
fn invalid_arguments_exit_1_with_every_error() {
    let run = coerce_weather(r#"{"days": "many", "units": "kelvin", "country": "FR"}"#);
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    let mut codes = run.error_codes();
    codes.sort();
    let expected = [
        ("/city", "missing"),
        ("/country", "extra_forbidden"),
        ("/days", "int_parsing"),
        ("/units", "enum"),
    ];
    assert_eq!(
        codes,
        expected.map(|(path, code)| (path.to_owned(), code.to_owned()))
    );
    assert!(
        run.stderr.is_empty(),
        "invalid arguments are not a usage problem"
    );
}

#[test]
fn enum_error_lists_the_allowed_values() {
    let run = coerce_weather(r#"{"city": "Rome", "days": 1, "units": "metrc"}"#);
    assert_eq!(run.code, 1);
    let error = &run.json()["errors"][0];
    assert_eq!(error["allowed"], json!(["metric", "imperial"]));
    assert_eq!(error["did_you_mean"], "metric");
}

#[test]
fn arguments_are_read_from_stdin_when_omitted() {
    let run = toolsmith(
        &["coerce", "--schema", &fixture("weather.json")],
        r#"{"city": "Lima", "days": 4}"#,
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.json()["value"]["city"], "Lima");
}

#[test]
fn arguments_are_read_from_stdin_given_a_dash() {
    let run = toolsmith(
        &["coerce", "--schema", &fixture("weather.json"), "-"],
        r#"{"city": "Kyiv", "days": 5}"#,
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.json()["value"]["days"], 5);
}

#[test]
fn arguments_that_are_not_json_exit_1() {
    let run = coerce_weather(r#"{"city": "Paris", "days": "#);
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert_eq!(
        run.error_codes(),
        [("".to_owned(), "json_invalid".to_owned())]
    );
}

#[test]
fn arguments_that_are_not_utf8_exit_1() {
    let run = toolsmith_bytes(
        &["coerce", "--schema", &fixture("weather.json")],
        b"{\"city\": \"Par\xffis\", \"days\": 1}",
    );
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert_eq!(
        run.error_codes(),
        [("".to_owned(), "json_invalid".to_owned())]
    );
}

#[test]
fn arguments_nested_past_any_limit_exit_1_without_crashing() {
    let depth = 100_000;
    let text = format!(
        r#"{{"city": "Paris", "days": 1, "x": {}{}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let run = toolsmith(&["coerce", "--schema", &fixture("weather.json")], &text);
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert!(!run.error_codes().is_empty());
}

#[test]
fn strict_flag_refuses_repairs() {
    let run = toolsmith(
        &[
            "coerce",
            "--strict",
            "--schema",
            &fixture("weather.json"),
            r#"{"city": "Paris", "days": "3"}"#,
        ],
        "",
    );
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert_eq!(
        run.error_codes(),
        [("/days".to_owned(), "repair_refused".to_owned())]
    );
}

#[test]
fn ignore_unknown_flag_drops_undeclared_keys_as_a_repair() {
    let run = toolsmith(
        &[
            "coerce",
            "--ignore-unknown",
            "--schema",
            &fixture("weather.json"),
            r#"{"city": "Paris", "days": 3, "country": "FR"}"#,
        ],
        "",
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let out = run.json();
    assert_eq!(
        out["value"],
        json!({"city": "Paris", "days": 3, "units": "metric"})
    );
    assert_eq!(out["repairs"][0]["code"], "extra_ignored");
    assert_eq!(out["repairs"][0]["path"], "/country");
}

#[test]
fn missing_schema_file_is_a_usage_error() {
    let run = toolsmith(
        &["coerce", "--schema", &fixture("no_such_schema.json"), "{}"],
        "",
    );
    assert_eq!(run.code, 2);
    assert!(run.stdout.is_empty());
    assert!(run.stderr.contains("no_such_schema.json"), "{}", run.stderr);
}

#[test]
fn schema_file_that_is_not_json_is_a_usage_error() {
    let run = toolsmith(&["coerce", "--schema", &fixture("not_json.json"), "{}"], "");
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("is not JSON"), "{}", run.stderr);
}

#[test]
fn schema_that_does_not_import_strictly_is_a_usage_error_naming_every_keyword() {
    let run = toolsmith(
        &[
            "coerce",
            "--schema",
            &fixture("unsupported_keywords.json"),
            "--strict-import",
            "{}",
        ],
        "",
    );
    assert_eq!(run.code, 2);
    assert!(run.stdout.is_empty());
    assert!(run.stderr.contains("dependentRequired"), "{}", run.stderr);
    assert!(run.stderr.contains("contains"), "{}", run.stderr);
}

#[test]
fn schema_whose_root_is_not_an_object_is_a_usage_error() {
    let run = toolsmith(&["coerce", "--schema", &fixture("list.json"), "[]"], "");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("must describe an object"),
        "{}",
        run.stderr
    );
}

#[test]
fn coerce_without_a_schema_is_a_usage_error() {
    let run = toolsmith(&["coerce", "{}"], "");
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--schema"), "{}", run.stderr);
}

/// `toolsmith schema --from-json-schema FIXTURE` prints exactly the GOLDEN fixture.
fn assert_reemits(fixture_name: &str, golden_name: &str) {
    let run = toolsmith(
        &["schema", "--from-json-schema", &fixture(fixture_name)],
        "",
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let golden = std::fs::read_to_string(fixture(golden_name)).unwrap();
    assert_eq!(run.stdout.trim_end(), golden.trim_end());
}

#[test]
fn schema_is_reemitted_in_canonical_form() {
    assert_reemits("weather.json", "weather.canonical.json");
}

#[test]
fn schema_with_definitions_is_reemitted_with_defs_refs_and_nullable_types() {
    assert_reemits("create_task.json", "create_task.canonical.json");
}

#[test]
fn canonical_schema_reemits_unchanged() {
    assert_reemits("weather.canonical.json", "weather.canonical.json");
    assert_reemits("create_task.canonical.json", "create_task.canonical.json");
}

#[test]
fn schema_command_reports_import_errors_as_usage_errors() {
    let run = toolsmith(
        &[
            "schema",
            "--from-json-schema",
            &fixture("unsupported_keywords.json"),
            "--strict-import",
        ],
        "",
    );
    assert_eq!(run.code, 2);
    assert!(run.stdout.is_empty());
    assert!(run.stderr.contains("dependentRequired"), "{}", run.stderr);
}

/// The warning lines on stderr, as (pointer, code).
fn warnings(stderr: &str) -> Vec<(String, String)> {
    stderr
        .lines()
        .filter_map(|line| line.strip_prefix("toolsmith: warning: "))
        .map(|line| {
            let (_, rest) = line.split_once("`: ").expect("the file, then the finding");
            let (pointer, _) = rest.split_once(": ").unwrap();
            let code = rest.rsplit_once(" (").unwrap().1.trim_end_matches(')');
            (pointer.to_owned(), code.to_owned())
        })
        .collect()
}

#[test]
fn schema_from_a_real_world_file_prints_its_reading_and_the_liberties_on_stderr() {
    let run = toolsmith(
        &["schema", "--from-json-schema", &fixture("real_world.json")],
        "",
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        warnings(&run.stderr),
        [
            (
                "/properties/colors/enum".to_owned(),
                "enum_of_items".to_owned()
            ),
            (
                "/properties/note/nullable".to_owned(),
                "nullable_keyword".to_owned()
            ),
        ]
    );
    let schema = run.json();
    assert_eq!(
        schema["properties"]["colors"]["items"],
        json!({"type": "string", "enum": ["red", "blue"]})
    );
    assert_eq!(
        schema["properties"]["note"]["type"],
        json!(["string", "null"])
    );

    // Ignored keywords are said too, and `--strict-import` refuses them.
    let run = toolsmith(
        &[
            "schema",
            "--from-json-schema",
            &fixture("unsupported_keywords.json"),
        ],
        "",
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        warnings(&run.stderr),
        [
            (
                "/dependentRequired".to_owned(),
                "unsupported_keyword".to_owned()
            ),
            (
                "/properties/tags/contains".to_owned(),
                "unsupported_keyword".to_owned()
            ),
        ]
    );
}

#[test]
fn coerce_against_a_real_world_file_prints_the_import_warnings_on_stderr() {
    let schema = fixture("real_world.json");
    let run = toolsmith(
        &["coerce", "--schema", &schema, r#"{"colors": ["red"]}"#],
        "",
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.json()["value"], json!({"colors": ["red"]}));
    assert_eq!(warnings(&run.stderr).len(), 2, "{}", run.stderr);
    let run = toolsmith(
        &["coerce", "--schema", &schema, r#"{"colors": ["green"]}"#],
        "",
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.error_codes(),
        [("/colors/0".to_owned(), "enum".to_owned())]
    );
    let run = toolsmith(
        &[
            "coerce",
            "--schema",
            &schema,
            "--strict-import",
            r#"{"colors": ["red"]}"#,
        ],
        "",
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("enum_of_items") || run.stderr.contains("`enum` on an array"),
        "{}",
        run.stderr
    );
}

#[test]
fn list_json_prints_a_json_array_of_the_linked_tools() {
    let run = toolsmith(&["list", "--json"], "");
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let tools = run.json();
    let tools = tools.as_array().expect("a JSON array");
    for tool in tools {
        assert!(tool["name"].is_string(), "every tool has a name: {tool}");
    }
}

#[test]
fn schema_from_json_schema_is_converted_into_the_dialect_asked_for() {
    let run = toolsmith(
        &[
            "schema",
            "--from-json-schema",
            &fixture("create_task.json"),
            "--dialect",
            "gemini",
        ],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = run.stdout;
    for refused in [
        "\"$ref\"",
        "\"$defs\"",
        "\"const\"",
        "\"additionalProperties\"",
        "\"$schema\"",
    ] {
        assert!(
            !text.contains(refused),
            "gemini output has {refused}: {text}"
        );
    }
    let converted: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(converted["type"], "object");
}

#[test]
fn schema_lint_of_a_file_checks_a_tool_name_only_when_given_one() {
    let file = fixture("weather.json");
    let lint = [
        "schema",
        "--from-json-schema",
        &file,
        "--lint",
        "--dialect",
        "openai",
    ];
    let unnamed = toolsmith(&lint, "");
    assert_eq!(
        (unnamed.code, unnamed.stdout.as_str()),
        (0, ""),
        "{}",
        unnamed.stderr
    );
    let named = toolsmith(&[&lint[..], &["--name", "weather.v2"]].concat(), "");
    assert_eq!(named.code, 1);
    assert_eq!(
        named.stdout,
        "tool `weather.v2`: the name does not match ^[A-Za-z0-9_-]{1,64}$ (openai)\n"
    );
}

/// `toolsmith coerce` against `numbers.json` (an integer `delta`, a string `id`, a number
/// `ratio` and a number `step` with `multipleOf: 1`).
fn coerce_numbers(arguments: &str) -> Run {
    toolsmith(
        &["coerce", "--schema", &fixture("numbers.json"), arguments],
        "",
    )
}

#[test]
fn numbers_are_decided_on_the_digits_that_were_sent() {
    let rejected = [
        (
            r#"{"delta": -9223372036854775809}"#,
            "/delta",
            "int_out_of_range",
        ),
        (
            r#"{"delta": 18446744073709551616}"#,
            "/delta",
            "int_out_of_range",
        ),
        (
            r#"{"delta": 9007199254740993.0}"#,
            "/delta",
            "int_from_float",
        ),
        (r#"{"ratio": 1e-400}"#, "/ratio", "float_out_of_range"),
        (r#"{"ratio": "1e-400"}"#, "/ratio", "float_out_of_range"),
        (r#"{"step": 1000000000.5}"#, "/step", "multiple_of"),
    ];
    for (arguments, path, code) in rejected {
        let run = coerce_numbers(arguments);
        assert_eq!(run.code, 1, "{arguments}: {}", run.stdout);
        assert_eq!(
            run.error_codes(),
            [(path.to_owned(), code.to_owned())],
            "{arguments}"
        );
    }
    let asks_for_digits = coerce_numbers(r#"{"delta": 9007199254740993.0}"#).json();
    let message = asks_for_digits["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("written as digits (9007199254740993)"),
        "{message}"
    );
}

#[test]
fn a_number_for_a_string_becomes_the_literal_that_was_sent() {
    let id = "98249283749234923749234923749234923749234923749234923";
    for literal in ["1.10", "1e2", "-0", id] {
        let run = coerce_numbers(&format!(r#"{{"id": {literal}}}"#));
        assert_eq!(run.code, 0, "{literal}: {}", run.stdout);
        let out = run.json();
        assert_eq!(out["value"], json!({"id": literal}));
        assert_eq!(out["repairs"][0]["code"], "string_from_number");
    }
}

#[test]
fn a_whole_float_for_an_integer_is_a_repair_that_strict_refuses() {
    for literal in ["1e3", "5.0"] {
        let arguments = format!(r#"{{"delta": {literal}, "step": 1e9}}"#);
        let run = coerce_numbers(&arguments);
        assert_eq!(run.code, 0, "{literal}: {}", run.stdout);
        let out = run.json();
        assert!(out["value"]["delta"].is_i64(), "{}", out["value"]);
        assert_eq!(out["repairs"][0]["code"], "int_from_float");
        let strict = toolsmith(
            &[
                "coerce",
                "--strict",
                "--schema",
                &fixture("numbers.json"),
                &arguments,
            ],
            "",
        );
        assert_eq!(
            strict.error_codes(),
            [("/delta".to_owned(), "repair_refused".to_owned())]
        );
    }
}

#[test]
fn call_prints_the_output_on_stdout_and_each_repair_on_stderr() {
    let arguments = r#"{"text": "a b", "words_only": "true"}"#;
    let run = toolsmith(&["call", "text_wc", arguments], "");
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Words: 2\n");
    // The one repair `--json` reports, as a line.
    let json = toolsmith(&["call", "--json", "text_wc", arguments], "").json();
    let repair = json["repairs"][0]["message"].as_str().unwrap();
    assert!(repair.starts_with("`words_only`: "), "{repair}");
    assert_eq!(run.stderr, format!("toolsmith: repaired {repair}\n"));
    let quiet = toolsmith(&["call", "--quiet", "text_wc", arguments], "");
    assert_eq!((quiet.code, quiet.stderr.as_str()), (0, ""));
}

/// Runs the binary with its stdout a pipe whose reader is already gone, as in `toolsmith list |
/// head` once head has read its lines.
fn toolsmith_into_closed_pipe(args: &[&str]) -> (i32, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("toolsmith finishes");
    (
        out.status.code().expect("exited, not killed by a signal"),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_closed_stdout_ends_every_command_quietly_with_its_own_status() {
    let weather = fixture("weather.json");
    let cases: [(&[&str], i32); 9] = [
        (&["list"], 0),
        (&["list", "--json"], 0),
        (&["schema"], 0),
        (&["schema", "text_wc", "--dialect", "mcp"], 0),
        (&["schema", "--from-json-schema", &weather], 0),
        (&["call", "text_wc", r#"{"text": "a b"}"#], 0),
        (&["call", "--json", "text_wc", r#"{"txt": "a b"}"#], 1),
        (
            &[
                "coerce",
                "--schema",
                &weather,
                r#"{"city": "Paris", "days": 2}"#,
            ],
            0,
        ),
        (&["--help"], 0),
    ];
    for (args, expected) in cases {
        let (code, stderr) = toolsmith_into_closed_pipe(args);
        assert_eq!((code, stderr.as_str()), (expected, ""), "{args:?}");
    }
}
