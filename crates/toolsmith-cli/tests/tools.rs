//! `list`, `schema` and `call` run in-process over a registry of tools defined here with the
//! macros: a toolset of two tools, a tool with an optional parameter, one that returns a struct,
//! one that fails, one that panics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use toolsmith::{
    Arguments, Context, Definitions, Field, Registry, RegistryError, StructType, Tool, ToolError,
    ToolFuture, ToolOutput, ToolType, Type, TypeGraph,
};
use toolsmith_cli::{Exit, run};

/// Integer arithmetic.
#[derive(Default)]
struct CalculatorToolset;

#[toolsmith::toolset(name = "calc")]
impl CalculatorToolset {
    /// Adds two integers.
    #[tool(read_only, idempotent)]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    /// Multiplies two integers.
    #[tool(read_only)]
    fn multiply(&self, a: i64, b: i64) -> i64 {
        a * b
    }
}

/// Greets someone by name.
///
/// The greeting defaults to "Hello".
#[toolsmith::tool]
fn greet(
    /// Who to greet.
    name: String,
    /// The word to greet with.
    greeting: Option<String>,
) -> String {
    format!("{}, {name}!", greeting.as_deref().unwrap_or("Hello"))
}

/// How long a text is.
#[derive(Serialize, ToolType)]
struct Counts {
    /// Words, split at whitespace.
    words: usize,
    /// Characters (Unicode scalar values).
    characters: usize,
}

/// Counts the words and characters of a text.
#[toolsmith::tool]
fn text_stats(text: String) -> Counts {
    Counts {
        words: text.split_whitespace().count(),
        characters: text.chars().count(),
    }
}

/// Reads a note by its title.
#[toolsmith::tool(read_only)]
fn read_note(title: String) -> Result<String, String> {
    match title.as_str() {
        "groceries" => Ok("milk, eggs".to_owned()),
        _ => Err(format!("no note is titled {title:?}")),
    }
}

/// Divides one integer by another, rounding toward zero.
#[toolsmith::tool]
fn divide(dividend: i64, divisor: i64) -> i64 {
    // Integer division by zero panics: the bug this tool is here to have.
    dividend / divisor
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add_toolset(CalculatorToolset).unwrap();
    let tools: [Arc<dyn Tool>; 4] = [
        Arc::new(Greet),
        Arc::new(TextStats),
        Arc::new(ReadNote),
        Arc::new(Divide),
    ];
    for tool in tools {
        registry.add(tool).unwrap();
    }
    registry
}

struct Run {
    exit: Exit,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {:?}", self.stdout))
    }
}

/// Runs `toolsmith ARGS` over `registry`, with `stdin`.
fn run_over(registry: Result<&Registry, RegistryError>, args: &[&str], stdin: &[u8]) -> Run {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let argv = std::iter::once("toolsmith").chain(args.iter().copied());
    let exit = run(argv, || registry, &mut &stdin[..], &mut stdout, &mut stderr);
    Run {
        exit,
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: String::from_utf8(stderr).unwrap(),
    }
}

/// Runs `toolsmith ARGS` over the test registry, with `stdin`.
fn toolsmith_with_stdin(args: &[&str], stdin: &[u8]) -> Run {
    run_over(Ok(&registry()), args, stdin)
}

/// Runs `toolsmith ARGS` over the test registry, with nothing on stdin.
fn toolsmith(args: &[&str]) -> Run {
    toolsmith_with_stdin(args, b"")
}

// ---- list ----

#[test]
fn list_prints_one_aligned_line_per_tool_in_registry_order() {
    let run = toolsmith(&["list"]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "\
calc_add       calc  Adds two integers.
calc_multiply  calc  Multiplies two integers.
greet          -     Greets someone by name.
text_stats     -     Counts the words and characters of a text.
read_note      -     Reads a note by its title.
divide         -     Divides one integer by another, rounding toward zero.
"
    );
}

/// Finds the lines of a text that match a pattern, ignoring case unless
/// `ignore_case` is false (e.g. `a` finds `A`). Output: the lines.
#[toolsmith::tool]
fn find(text: String, pattern: String) -> String {
    format!("{text}{pattern}")
}

#[test]
fn list_shows_the_first_sentence_whole_even_where_the_source_wrapped_it() {
    let mut registry = Registry::new();
    registry.add(Arc::new(Find)).unwrap();
    let run = run_over(Ok(&registry), &["list"], b"");
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "find  -  Finds the lines of a text that match a pattern, ignoring case unless \
         `ignore_case` is false (e.g. `a` finds `A`).\n"
    );
}

#[test]
fn list_of_an_empty_registry_prints_nothing() {
    let run = run_over(Ok(&Registry::new()), &["list"], b"");
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "");
}

#[test]
fn list_json_gives_name_toolset_full_description_and_annotations_in_registry_order() {
    let run = toolsmith(&["list", "--json"]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    let out = run.json();
    let names: Vec<&str> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "calc_add",
            "calc_multiply",
            "greet",
            "text_stats",
            "read_note",
            "divide"
        ]
    );
    assert_eq!(
        out[0],
        json!({
            "name": "calc_add",
            "toolset": "calc",
            "description": "Adds two integers.",
            "annotations": {"readOnlyHint": true, "idempotentHint": true},
        })
    );
    // The whole description, not only the first line that `list` shows.
    assert!(Greet.description().lines().count() > 1);
    assert_eq!(
        out[2],
        json!({
            "name": "greet",
            "toolset": null,
            "description": Greet.description(),
            "annotations": {},
        })
    );
}

// ---- schema ----

/// The envelopes the library gives for the tools `names` of the test registry.
fn envelopes(names: &[&str]) -> Value {
    let registry = registry();
    names
        .iter()
        .map(|name| function_schema(registry.get(name).unwrap().as_ref()))
        .collect()
}

#[test]
fn schema_without_tool_names_prints_every_envelope_in_registry_order() {
    let run = toolsmith(&["schema"]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    let registry = registry();
    let names: Vec<&str> = registry.names().collect();
    assert_eq!(run.json(), envelopes(&names));
}

#[test]
fn schema_of_named_tools_prints_their_envelopes_in_the_order_named() {
    let run = toolsmith(&["schema", "greet", "calc_add"]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    let out = run.json();
    assert_eq!(out, envelopes(&["greet", "calc_add"]));
    assert_eq!(
        out[0],
        json!({
            "type": "function",
            "function": {
                "name": "greet",
                "description": Greet.description(),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "Who to greet."},
                        "greeting": {
                            "type": ["string", "null"],
                            "description": "The word to greet with."
                        },
                    },
                    "required": ["name"],
                    "additionalProperties": false,
                },
            },
        })
    );
}

#[test]
fn schema_of_an_unknown_tool_is_a_usage_error_with_the_nearest_name() {
    let run = toolsmith(&["schema", "greet", "calc_ad"]);
    assert_eq!(run.exit, Exit::Usage);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "toolsmith: error: no tool is named `calc_ad`; did you mean `calc_add`?\n"
    );
}

#[test]
fn schema_of_an_unknown_tool_without_a_near_name_points_to_list() {
    let run = toolsmith(&["schema", "weather"]);
    assert_eq!(run.exit, Exit::Usage);
    assert_eq!(
        run.stderr,
        "toolsmith: error: no tool is named `weather`; `toolsmith list` shows every tool\n"
    );
}

#[test]
fn schema_from_json_schema_conflicts_with_tool_names() {
    let run = toolsmith(&["schema", "greet", "--from-json-schema", "schema.json"]);
    assert_eq!(run.exit, Exit::Usage);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
}

/// A tool built by hand whose parameters refer to a definition they do not have.
struct DanglingRefTool {
    parameters: TypeGraph,
}

impl DanglingRefTool {
    fn new() -> Self {
        let mut root = StructType::anonymous();
        root.fields = vec![Field::new("shape", Type::Ref("Shape".to_owned()))];
        DanglingRefTool {
            parameters: TypeGraph {
                root: Type::Struct(root),
                defs: Definitions::default(),
            },
        }
    }
}

impl Tool for DanglingRefTool {
    fn name(&self) -> &str {
        "draw"
    }
    fn description(&self) -> &str {
        "Draws a shape."
    }
    fn parameters(&self) -> &TypeGraph {
        &self.parameters
    }
    fn call<'a>(&'a self, arguments: Arguments<'a>, context: Context) -> ToolFuture<'a> {
        ToolFuture::ready(
            toolsmith::coerce_arguments(&self.parameters, arguments, context.policy())
                .map(|coerced| ToolOutput::structured(coerced.value))
                .map_err(|errors| ToolError::InvalidArguments {
                    tool: self.name().to_owned(),
                    errors,
                }),
        )
    }
}

#[test]
fn schema_of_a_tool_without_a_faithful_schema_is_reported_and_the_others_still_print() {
    let mut registry = Registry::new();
    registry.add(Arc::new(DanglingRefTool::new())).unwrap();
    registry.add(Arc::new(Greet)).unwrap();
    let run = run_over(Ok(&registry), &["schema"], b"");
    assert_eq!(run.exit, Exit::Failure);
    assert_eq!(run.json(), json!([function_schema(&Greet)]));
    assert_eq!(
        run.stderr,
        "toolsmith: error: the schema of tool `draw` cannot be written: \
         reference to undefined type `Shape`\n"
    );
}

// ---- call ----

#[test]
fn call_prints_the_output_text() {
    let run = toolsmith(&["call", "greet", r#"{"name": "Ada", "greeting": "Hi"}"#]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Hi, Ada!\n");
    assert_eq!(run.stderr, "");
}

#[test]
fn call_leaves_an_optional_parameter_out() {
    let run = toolsmith(&["call", "greet", r#"{"name": "Ada"}"#]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Hello, Ada!\n");
}

#[test]
fn call_of_a_toolset_tool_runs_it() {
    let run = toolsmith(&["call", "calc_multiply", r#"{"a": 6, "b": 7}"#]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "42\n");
}

#[test]
fn call_of_a_struct_returning_tool_prints_its_json_text() {
    let run = toolsmith(&["call", "text_stats", r#"{"text": "one two three"}"#]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "{\"words\":3,\"characters\":13}\n");
}

#[test]
fn call_reads_the_arguments_from_stdin_given_a_dash() {
    let run = toolsmith_with_stdin(&["call", "greet", "-"], br#"{"name": "Grace"}"#);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Hello, Grace!\n");
}

#[test]
fn call_without_arguments_sends_an_empty_object() {
    let run = toolsmith_with_stdin(&["call", "greet"], br#"{"name": "not read"}"#);
    assert_eq!(run.exit, Exit::Failure);
    assert_eq!(
        run.stderr,
        "Invalid arguments for tool `greet`. The arguments have 1 problem:\n\
         - `name`: missing required field; expected a string\n"
    );
}

#[test]
fn call_prints_each_repair_on_stderr_one_line_each() {
    let arguments = r#"{"a": "40", "B": 2}"#;
    let run = toolsmith(&["call", "calc_add", arguments]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "42\n");
    // The repairs `--json` reports, each a line of its own, in order.
    let json = toolsmith(&["call", "--json", "calc_add", arguments]).json();
    let lines: Vec<String> = json["repairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|repair| {
            format!(
                "toolsmith: repaired {}",
                repair["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(lines.len(), 2, "{json}");
    assert_eq!(run.stderr, lines.join("\n") + "\n");
    assert!(
        run.stderr.starts_with("toolsmith: repaired `a`: "),
        "{}",
        run.stderr
    );
}

#[test]
fn call_quiet_prints_no_repairs() {
    for quiet in ["--quiet", "-q"] {
        let run = toolsmith(&["call", quiet, "calc_add", r#"{"a": "40", "b": 2}"#]);
        assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
        assert_eq!(run.stdout, "42\n");
        assert_eq!(run.stderr, "");
    }
}

#[test]
fn call_json_puts_the_repairs_in_its_object_not_on_stderr() {
    let run = toolsmith(&["call", "--json", "calc_add", r#"{"a": "40", "b": 2}"#]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(run.json()["repairs"][0]["code"], "int_from_string");
}

#[test]
fn a_repair_line_escapes_the_control_characters_a_model_sent() {
    let run = toolsmith(&[
        "call",
        "--ignore-unknown",
        "calc_add",
        "{\"a\": 1, \"b\": 2, \"\\u001b[31mred\\nline\": 3}",
    ]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{:?}", run.stderr);
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
    assert!(
        run.stderr.contains(r"\u{1b}[31mred\nline"),
        "{:?}",
        run.stderr
    );
}

#[test]
fn call_json_prints_the_text_the_structured_value_and_the_repairs() {
    let run = toolsmith(&["call", "--json", "text_stats", r#"{"text": 42}"#]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    let out = run.json();
    assert_eq!(out["ok"], true);
    assert_eq!(out["text"], "{\"words\":1,\"characters\":2}");
    assert_eq!(out["structured"], json!({"words": 1, "characters": 2}));
    let repairs = out["repairs"].as_array().unwrap();
    assert_eq!(repairs.len(), 1, "{repairs:?}");
    assert_eq!(repairs[0]["path"], "/text");
}

#[test]
fn call_json_of_a_text_tool_has_no_structured_value() {
    let run = toolsmith(&["call", "--json", "greet", r#"{"name": "Ada"}"#]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(
        run.json(),
        json!({"ok": true, "text": "Hello, Ada!", "structured": null, "repairs": []})
    );
}

#[test]
fn call_with_invalid_arguments_prints_the_model_message_on_stderr_and_exits_1() {
    let run = toolsmith(&["call", "calc_add", r#"{"a": 1, "c": 2}"#]);
    assert_eq!(run.exit, Exit::Failure);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "Invalid arguments for tool `calc_add`. The arguments have 2 problems:\n\
         - `c`: unknown field; valid fields are \"a\", \"b\"\n\
         - `b`: missing required field; expected an integer\n"
    );
}

#[test]
fn call_json_with_invalid_arguments_prints_every_error_on_stdout() {
    let run = toolsmith(&["call", "--json", "calc_add", r#"{"a": "one", "b": 2}"#]);
    assert_eq!(run.exit, Exit::Failure);
    assert_eq!(run.stderr, "");
    let out = run.json();
    assert_eq!(out["ok"], false);
    assert_eq!(out["code"], "invalid_arguments");
    assert_eq!(out["tool"], "calc_add");
    assert_eq!(out["errors"][0]["path"], "/a");
    assert_eq!(out["errors"][0]["code"], "int_parsing");
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid arguments for tool `calc_add`")
    );
}

#[test]
fn call_of_a_failing_tool_prints_its_failure_for_the_model_and_exits_1() {
    let run = toolsmith(&["call", "read_note", r#"{"title": "taxes"}"#]);
    assert_eq!(run.exit, Exit::Failure);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "Tool `read_note` failed: no note is titled \"taxes\"\n"
    );
}

#[test]
fn call_json_of_a_failing_tool_prints_the_structured_error() {
    let run = toolsmith(&["call", "--json", "read_note", r#"{"title": "taxes"}"#]);
    assert_eq!(run.exit, Exit::Failure);
    assert_eq!(
        run.json(),
        json!({
            "ok": false,
            "code": "failed",
            "message": "Tool `read_note` failed: no note is titled \"taxes\"",
            "tool": "read_note",
        })
    );
}

#[test]
fn call_of_a_panicking_tool_says_it_crashed_and_exits_1() {
    let run = toolsmith(&["call", "divide", r#"{"dividend": 1, "divisor": 0}"#]);
    assert_eq!(run.exit, Exit::Failure);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "Tool `divide` crashed (attempt to divide by zero); this is a bug in the tool, not in \
         your call.\n"
    );
}

#[test]
fn call_of_an_unknown_tool_is_a_usage_error_with_the_nearest_name() {
    let run = toolsmith(&["call", "--json", "read_notes", "{}"]);
    assert_eq!(run.exit, Exit::Usage);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "toolsmith: error: no tool is named `read_notes`; did you mean `read_note`?\n"
    );
}

#[test]
fn call_strict_refuses_repairs() {
    let run = toolsmith(&[
        "call",
        "--json",
        "--strict",
        "calc_add",
        r#"{"a": "1", "b": 2}"#,
    ]);
    assert_eq!(run.exit, Exit::Failure);
    let out = run.json();
    assert_eq!(out["errors"][0]["path"], "/a");
    assert_eq!(out["errors"][0]["code"], "repair_refused");
}

#[test]
fn call_ignore_unknown_drops_undeclared_keys_as_a_repair() {
    let run = toolsmith(&[
        "call",
        "--json",
        "--ignore-unknown",
        "calc_add",
        r#"{"a": 1, "b": 2, "c": 3}"#,
    ]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    let out = run.json();
    assert_eq!(out["text"], "3");
    assert_eq!(out["repairs"][0]["path"], "/c");
    assert_eq!(out["repairs"][0]["code"], "extra_ignored");
}

#[test]
fn call_with_arguments_on_stdin_that_are_not_utf8_is_invalid_arguments() {
    let run = toolsmith_with_stdin(
        &["call", "--json", "greet", "-"],
        b"{\"name\": \"Ad\xffa\"}",
    );
    assert_eq!(run.exit, Exit::Failure);
    let out = run.json();
    assert_eq!(out["code"], "invalid_arguments");
    assert_eq!(out["errors"][0]["code"], "json_invalid");
}

// ---- the registry and the command line ----

fn duplicate_name_error() -> RegistryError {
    let mut registry = Registry::new();
    registry.add(Arc::new(Greet)).unwrap();
    registry.add(Arc::new(Greet)).unwrap_err()
}

#[test]
fn registry_that_cannot_be_built_is_a_usage_error_saying_why() {
    let error = duplicate_name_error();
    let run = run_over(Err(error.clone()), &["list"], b"");
    assert_eq!(run.exit, Exit::Usage);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        format!("toolsmith: error: the tools cannot be registered: {error}\n")
    );
}

#[test]
fn commands_that_need_no_tools_run_when_the_registry_cannot_be_built() {
    let fixture = format!("{}/tests/fixtures/weather.json", env!("CARGO_MANIFEST_DIR"));
    let run = run_over(
        Err(duplicate_name_error()),
        &["schema", "--from-json-schema", &fixture],
        b"",
    );
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(run.json()["type"], "object");
}

#[test]
fn help_is_printed_on_stdout_with_exit_0() {
    let run = toolsmith(&["call", "--help"]);
    assert_eq!(run.exit, Exit::Success);
    assert!(
        run.stdout.contains("Usage: toolsmith call"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn unknown_command_is_a_usage_error_on_stderr() {
    let run = toolsmith(&["invoke", "greet"]);
    assert_eq!(run.exit, Exit::Usage);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("unrecognized subcommand 'invoke'"),
        "{}",
        run.stderr
    );
}

// ---- schema --dialect and --lint ----

#[test]
fn schema_with_a_dialect_prints_each_tool_in_that_receivers_envelope() {
    let run = toolsmith(&["schema", "--dialect", "anthropic", "calc_add"]);
    assert_eq!(run.exit, Exit::Success, "{}", run.stderr);
    let declared = registry().get("calc_add").unwrap().clone();
    let expected = toolsmith::envelope(
        declared.as_ref(),
        toolsmith::Dialect::Anthropic { strict: false },
    )
    .unwrap();
    assert_eq!(run.json(), json!([expected]));
    assert!(run.json()[0].get("input_schema").is_some());
}

#[test]
fn schema_with_every_dialect_name_prints_an_array_of_every_tool() {
    for dialect in toolsmith::Dialect::ALL {
        let run = toolsmith(&["schema", "--dialect", dialect.as_str(), "calc_add", "greet"]);
        assert_eq!(run.exit, Exit::Success, "{dialect}: {}", run.stderr);
        assert_eq!(run.json().as_array().unwrap().len(), 2, "{dialect}");
    }
}

#[test]
fn schema_with_an_unknown_dialect_is_a_usage_error_listing_the_dialects() {
    let run = toolsmith(&["schema", "--dialect", "openia"]);
    assert_eq!(run.exit, Exit::Usage);
    assert!(run.stderr.contains("openai-strict"), "{}", run.stderr);
}

#[test]
fn lint_of_tools_within_every_limit_prints_nothing_and_exits_0() {
    let run = toolsmith(&[
        "schema",
        "--lint",
        "--dialect",
        "openai-strict",
        "calc_add",
        "greet",
    ]);
    assert_eq!(
        (run.exit, run.stdout.as_str()),
        (Exit::Success, ""),
        "{}",
        run.stderr
    );
}

/// A name OpenAI refuses.
#[toolsmith::tool(name = "net.ping")]
fn dotted() -> String {
    "pong".into()
}

#[test]
fn lint_prints_one_finding_a_line_and_exits_1() {
    let mut registry = registry();
    registry.add(Arc::new(Dotted)).unwrap();
    let run = run_over(
        Ok(&registry),
        &["schema", "--lint", "--dialect", "openai-strict"],
        b"",
    );
    assert_eq!(run.exit, Exit::Failure);
    assert_eq!(
        run.stdout,
        "tool `net.ping`: the name does not match ^[A-Za-z0-9_-]{1,64}$ (openai-strict)\n"
    );
}

#[test]
fn lint_without_a_dialect_checks_every_receiver() {
    let mut registry = Registry::new();
    registry.add(Arc::new(Dotted)).unwrap();
    let run = run_over(Ok(&registry), &["schema", "--lint"], b"");
    assert_eq!(run.exit, Exit::Failure);
    let receivers: Vec<&str> = run
        .stdout
        .lines()
        .map(|line| line.rsplit_once('(').unwrap().1.trim_end_matches(')'))
        .collect();
    assert_eq!(
        receivers,
        ["openai", "openai-strict", "anthropic", "anthropic-strict"]
    );
}

/// Repeats a text.
#[toolsmith::tool]
fn repeat(text: String, #[param(default = 2)] times: u8) -> String {
    text.repeat(usize::from(times))
}

#[test]
fn call_with_a_dialect_reads_its_wire_shapes_as_no_repairs() {
    let mut registry = Registry::new();
    registry.add(Arc::new(Repeat)).unwrap();
    // openai-strict sends every field, null for one the model leaves to its default.
    let args = r#"{"text": "ab", "times": null}"#;
    let strict = run_over(Ok(&registry), &["call", "--strict", "repeat", args], b"");
    assert_eq!(strict.exit, Exit::Failure, "{}", strict.stdout);
    let answered = run_over(
        Ok(&registry),
        &[
            "call",
            "--strict",
            "--dialect",
            "openai-strict",
            "repeat",
            args,
        ],
        b"",
    );
    assert_eq!(
        (answered.exit, answered.stdout.as_str()),
        (Exit::Success, "abab\n")
    );
}

/// What `toolsmith schema` prints for a tool without `--dialect`: the reference's function
/// envelope over canonical JSON Schema.
fn function_schema(tool: &dyn Tool) -> Value {
    json!({"type": "function", "function": toolsmith::envelope(tool, toolsmith::Dialect::JsonSchema).unwrap()})
}

// ---- --tools, --rename, --prefix ----

#[test]
fn list_tools_keeps_the_tools_any_pattern_matches_in_registry_order() {
    let run = toolsmith(&["list", "--tools", "calc_*", "--tools", "greet"]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "\
calc_add       calc  Adds two integers.
calc_multiply  calc  Multiplies two integers.
greet          -     Greets someone by name.
"
    );
}

#[test]
fn a_pattern_that_matches_no_tool_is_a_usage_error_listing_the_tools() {
    let run = toolsmith(&["list", "--tools", "calc_*", "--tools", "gret"]);
    assert_eq!(run.exit, Exit::Usage);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "toolsmith: error: `--tools`: no tool matches `gret`; the tools are: calc_add, \
         calc_multiply, greet, text_stats, read_note, divide\n"
    );
}

#[test]
fn list_json_names_tools_by_their_new_names_renames_first_then_the_prefix() {
    let run = toolsmith(&[
        "list",
        "--json",
        "--tools",
        "calc_*",
        "--rename",
        "calc_add=plus",
        "--prefix",
        "math",
    ]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    let names: Vec<Value> = run
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("math_plus"), json!("math_calc_multiply")]);
}

#[test]
fn schema_declares_a_renamed_tool_under_its_new_name() {
    let run = toolsmith(&["schema", "--rename", "greet=hello", "hello"]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    let mut expected = envelopes(&["greet"]);
    expected[0]["function"]["name"] = json!("hello");
    assert_eq!(run.json(), expected);
}

#[test]
fn schema_lint_checks_the_names_as_renamed() {
    let run = toolsmith(&[
        "schema",
        "--lint",
        "--dialect",
        "openai",
        "--tools",
        "greet",
        "--rename",
        "greet=say.hello",
    ]);
    assert_eq!(run.exit, Exit::Failure, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "tool `say.hello`: the name does not match ^[A-Za-z0-9_-]{1,64}$ (openai)\n"
    );
}

#[test]
fn a_renamed_tools_errors_name_its_new_name() {
    let run = toolsmith(&["call", "--rename", "calc_add=plus", "plus", r#"{"a": 1}"#]);
    assert_eq!(run.exit, Exit::Failure);
    assert!(
        run.stderr.starts_with("Invalid arguments for tool `plus`."),
        "{}",
        run.stderr
    );
    let old = toolsmith(&["call", "--rename", "calc_add=plus", "calc_add", "{}"]);
    assert_eq!(old.exit, Exit::Usage);
    assert_eq!(
        old.stderr,
        "toolsmith: error: no tool is named `calc_add`; `toolsmith list` shows every tool\n"
    );
}

#[test]
fn a_prefixed_tool_is_called_by_its_prefixed_name() {
    let run = toolsmith(&[
        "call",
        "--prefix",
        "m",
        "m_calc_add",
        r#"{"a": 1, "b": "2"}"#,
    ]);
    assert_eq!(run.exit, Exit::Success, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "3\n");
}

#[test]
fn a_rename_that_does_not_read_as_old_equals_new_is_a_usage_error() {
    let run = toolsmith(&["list", "--rename", "greet"]);
    assert_eq!(run.exit, Exit::Usage);
    assert!(run.stderr.contains("must be OLD=NEW"), "{}", run.stderr);
}

#[test]
fn schema_from_json_schema_conflicts_with_a_selection() {
    let run = toolsmith(&[
        "schema",
        "--from-json-schema",
        "schema.json",
        "--tools",
        "greet",
    ]);
    assert_eq!(run.exit, Exit::Usage);
    assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
}

#[test]
fn call_inside_an_async_runtime_is_a_failure_saying_why_not_a_panic() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let run = runtime.block_on(async { toolsmith(&["call", "greet", r#"{"name": "Ada"}"#]) });
    assert_eq!(run.exit, Exit::Failure);
    assert!(
        run.stderr
            .starts_with("Tool `greet` cannot be called now: a blocking call was made from inside an async runtime"),
        "{}",
        run.stderr
    );
}
