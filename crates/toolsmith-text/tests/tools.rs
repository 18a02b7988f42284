//! The text toolset's behaviour, through `Tool::call` with JSON arguments as a model sends them
//! (booleans and numbers as strings included).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith::{Arguments, Context, Tool, ToolError, ToolExt, ToolOutput, Toolset};
use toolsmith_text::{DEFAULT_MAX_INPUT_BYTES, DEFAULT_MAX_PATTERN_BYTES, TextProcessingToolset};

fn tool_of(tools: &[Arc<dyn Tool>], name: &str) -> Arc<dyn Tool> {
    tools
        .iter()
        .find(|tool| tool.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
        .clone()
}

fn tool(name: &str) -> Arc<dyn Tool> {
    tool_of(&TextProcessingToolset::to_tools(), name)
}

fn call(name: &str, arguments: Value) -> Result<ToolOutput, ToolError> {
    tool(name).call_blocking(Arguments::Json(&arguments), Context::new())
}

/// The output text of a call that must succeed.
fn text(name: &str, arguments: Value) -> String {
    match call(name, arguments) {
        Ok(output) => output.as_text().into_owned(),
        Err(error) => panic!("{name} failed: {}", error.to_model_message()),
    }
}

fn structured(name: &str, arguments: Value) -> Value {
    call(name, arguments)
        .unwrap()
        .structured
        .expect("structured output")
}

/// The message a model reads for a call that must fail as the tool's own failure.
fn failure(name: &str, arguments: Value) -> String {
    match call(name, arguments) {
        Ok(output) => panic!("{name} succeeded with {:?}", output.as_text()),
        Err(error @ ToolError::Failed { .. }) => error.to_model_message(),
        Err(other) => panic!("{name} failed, but not as the tool: {other:?}"),
    }
}

// ---- The toolset ----

#[test]
fn the_toolset_is_named_text_and_has_the_eight_tools_in_order() {
    let names: Vec<String> = TextProcessingToolset::to_tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "text_grep",
            "text_wc",
            "text_rg",
            "text_extract_lines",
            "text_filter_lines",
            "text_unique_lines",
            "text_sort_lines",
            "text_summarize_text",
        ]
    );
    assert_eq!(<TextProcessingToolset as Toolset>::NAME, "text");
}

#[test]
fn the_toolset_is_registered_by_linking_the_crate() {
    let registry = toolsmith::registry().unwrap();
    let registered = registry.entry("text_grep").expect("text_grep registered");
    assert_eq!(registered.toolset(), Some("text"));
}

#[test]
fn every_tool_documents_its_output_and_every_parameter() {
    for tool in TextProcessingToolset::to_tools() {
        assert!(
            tool.description().contains("Output"),
            "{} does not describe its output: {}",
            tool.name(),
            tool.description()
        );
        let schema =
            toolsmith::parameters_schema(tool.parameters(), toolsmith::Dialect::JsonSchema)
                .unwrap();
        for (name, property) in schema["properties"].as_object().unwrap() {
            let description = property["description"].as_str().unwrap_or_default();
            assert!(
                !description.starts_with("Parameter "),
                "{}.{name} has only the fallback description",
                tool.name()
            );
        }
    }
}

#[test]
fn every_tool_is_read_only_and_idempotent() {
    for tool in TextProcessingToolset::to_tools() {
        let hints = tool.annotations();
        assert_eq!(hints.read_only, Some(true), "{}", tool.name());
        assert_eq!(hints.idempotent, Some(true), "{}", tool.name());
    }
}

// ---- text_grep ----

const FRUIT: &str = "Apple pie\nbanana split\napple tart\ncherry\n";

#[test]
fn grep_lists_matching_lines_in_order_ignoring_case_by_default() {
    assert_eq!(
        text("text_grep", json!({"text": FRUIT, "pattern": "apple"})),
        "Apple pie\napple tart"
    );
}

#[test]
fn grep_matches_case_when_ignore_case_is_the_string_false() {
    assert_eq!(
        text(
            "text_grep",
            json!({"text": FRUIT, "pattern": "apple", "ignore_case": "false"})
        ),
        "apple tart"
    );
}

#[test]
fn grep_count_only_counts_matching_lines_not_matches() {
    let args = json!({"text": "a a a\nb\na\n", "pattern": "a", "count_only": "true"});
    assert_eq!(
        text("text_grep", args.clone()),
        "Found 2 matches for pattern 'a'"
    );
    assert_eq!(
        structured("text_grep", args),
        json!({"pattern": "a", "matching_lines": 2})
    );
}

#[test]
fn grep_without_matches_says_so_naming_the_pattern() {
    assert_eq!(
        text("text_grep", json!({"text": FRUIT, "pattern": "kiwi"})),
        "No matches found for pattern 'kiwi'"
    );
    assert_eq!(
        text(
            "text_grep",
            json!({"text": FRUIT, "pattern": "kiwi", "count_only": true})
        ),
        "Found 0 matches for pattern 'kiwi'"
    );
}

#[test]
fn grep_on_empty_text_finds_nothing_even_for_a_pattern_that_matches_everything() {
    assert_eq!(
        text("text_grep", json!({"text": "", "pattern": ""})),
        "No matches found for pattern ''"
    );
    assert_eq!(
        text(
            "text_grep",
            json!({"text": "", "pattern": "^", "count_only": true})
        ),
        "Found 0 matches for pattern '^'"
    );
}

#[test]
fn grep_counts_a_last_line_without_newline_and_no_line_after_a_final_newline() {
    let count = |text: &str| {
        structured(
            "text_grep",
            json!({"text": text, "pattern": "^", "count_only": true}),
        )["matching_lines"]
            .clone()
    };
    assert_eq!(count("a\nb"), 2);
    assert_eq!(count("a\nb\n"), 2);
    assert_eq!(count("a\n\nb\n"), 3);
}

#[test]
fn grep_leaves_the_carriage_return_of_crlf_lines_out_of_the_line() {
    let crlf = "one\r\ntwo\r\nthree\r\n";
    assert_eq!(
        text("text_grep", json!({"text": crlf, "pattern": "o$"})),
        "two"
    );
    assert_eq!(
        text("text_grep", json!({"text": crlf, "pattern": r"\r"})),
        "No matches found for pattern '\\r'"
    );
    assert_eq!(
        text("text_grep", json!({"text": crlf, "pattern": r"^t\w+$"})),
        "two\nthree"
    );
}

#[test]
fn grep_matches_unicode_text_and_folds_unicode_case() {
    let text_ = "Straße\nÉCOLE\nnaïve café\n日本語のテキスト\n";
    assert_eq!(
        text("text_grep", json!({"text": text_, "pattern": "école"})),
        "ÉCOLE"
    );
    assert_eq!(
        text("text_grep", json!({"text": text_, "pattern": "テキスト$"})),
        "日本語のテキスト"
    );
    assert_eq!(
        text(
            "text_grep",
            json!({"text": text_, "pattern": r"^\w+\s\w+$"})
        ),
        "naïve café"
    );
}

#[test]
fn a_pattern_that_would_match_across_lines_matches_no_line() {
    assert_eq!(
        text("text_grep", json!({"text": "a\nb\n", "pattern": "a\nb"})),
        "No matches found for pattern 'a\nb'"
    );
    assert_eq!(
        text(
            "text_grep",
            json!({"text": "a\nb\nab\n", "pattern": r"a\s*b"})
        ),
        "ab"
    );
}

#[test]
fn an_invalid_pattern_is_an_error_naming_it_and_the_problem_never_no_matches() {
    let message = failure("text_grep", json!({"text": FRUIT, "pattern": "(apple"}));
    assert_eq!(
        message,
        "Tool `text_grep` failed: invalid regex pattern '(apple': unclosed group (at character 1)"
    );
    let message = failure("text_grep", json!({"text": FRUIT, "pattern": "a{2,1}"}));
    assert!(
        message.contains("invalid regex pattern 'a{2,1}'"),
        "{message}"
    );
    assert!(message.contains("invalid"), "{message}");
    let message = failure("text_rg", json!({"text": FRUIT, "pattern": "[z-a]"}));
    assert!(
        message.contains("invalid regex pattern '[z-a]': invalid character class range"),
        "{message}"
    );
    let message = failure(
        "text_filter_lines",
        json!({"text": FRUIT, "pattern": r"\p{Nope}"}),
    );
    assert!(
        message.contains(r"invalid regex pattern '\p{Nope}'"),
        "{message}"
    );
}

#[test]
fn look_around_and_backreferences_are_reported_as_unsupported() {
    let message = failure("text_grep", json!({"text": FRUIT, "pattern": "(?=apple)"}));
    assert!(message.contains("look-around"), "{message}");
    let message = failure("text_grep", json!({"text": FRUIT, "pattern": r"(a)\1"}));
    assert!(
        message.contains("backreferences are not supported"),
        "{message}"
    );
}

#[test]
fn a_pattern_over_the_regex_size_limit_is_a_clear_error() {
    let message = failure(
        "text_grep",
        json!({"text": FRUIT, "pattern": r"\w{1000}{1000}"}),
    );
    assert!(
        message.contains(r"the regex pattern '\w{1000}{1000}' is too big"),
        "{message}"
    );
    assert!(message.contains("10485760 bytes"), "{message}");
}

#[test]
fn the_regex_size_limit_is_configurable() {
    let tools = TextProcessingToolset::default()
        .with_regex_size_limit(10_000)
        .into_tools();
    let error = tool_of(&tools, "text_grep")
        .call_blocking(
            Arguments::Json(&json!({"text": FRUIT, "pattern": r"\w{50}"})),
            Context::new(),
        )
        .unwrap_err();
    assert!(
        error
            .to_model_message()
            .contains("size limit of 10000 bytes"),
        "{error}"
    );
}

/// Text whose lines hold what a shell would take for flags, quoting, substitution, command
/// separators: a pattern for each is an ordinary regex matched against the lines.
const HOSTILE: &str =
    "-v\n--count\n'; echo INJECTED; echo '\n\"quoted\"\n$(date)\n`id`\na;b\n-e x\nplain\n";

#[test]
fn hostile_patterns_are_ordinary_patterns() {
    let grep = |pattern: &str| {
        text(
            "text_grep",
            json!({"text": HOSTILE, "pattern": pattern, "ignore_case": "false"}),
        )
    };
    // Leading dashes are not flags: no inverting, no counting.
    assert_eq!(grep("-v"), "-v");
    assert_eq!(grep("--count"), "--count");
    assert_eq!(grep("-e"), "-e x");
    // Quotes and separators are characters to match, not the end of an argument.
    assert_eq!(grep("'; echo INJECTED; echo '"), "'; echo INJECTED; echo '");
    assert_eq!(grep("\"quoted\""), "\"quoted\"");
    assert_eq!(grep("a;b"), "a;b");
    assert_eq!(grep(";"), "'; echo INJECTED; echo '\na;b");
    // `$` is the end-of-line anchor, so `$(date)` matches nothing; escaped, it is the text.
    assert_eq!(grep("$(date)"), "No matches found for pattern '$(date)'");
    assert_eq!(grep(r"\$\(date\)"), "$(date)");
    assert_eq!(grep("`id`"), "`id`");
    // A newline in a pattern matches a newline, which no line holds.
    assert_eq!(
        grep("-v\n--count"),
        "No matches found for pattern '-v\n--count'"
    );
}

#[test]
fn hostile_patterns_are_ordinary_patterns_for_every_pattern_tool() {
    let pattern = "'; echo INJECTED; echo '";
    assert_eq!(
        text("text_rg", json!({"text": HOSTILE, "pattern": pattern})),
        "3:'; echo INJECTED; echo '"
    );
    assert_eq!(
        text(
            "text_filter_lines",
            json!({"text": HOSTILE, "pattern": "^-", "invert": "true"})
        ),
        "'; echo INJECTED; echo '\n\"quoted\"\n$(date)\n`id`\na;b\nplain"
    );
}

// ---- text_wc ----

#[test]
fn wc_counts_lines_words_and_characters() {
    let args = json!({"text": "a b\nc"});
    assert_eq!(
        text("text_wc", args.clone()),
        "Lines: 2, Words: 3, Characters: 5"
    );
    assert_eq!(
        structured("text_wc", args),
        json!({"lines": 2, "words": 3, "characters": 5})
    );
}

#[test]
fn wc_reports_only_what_is_asked_for() {
    let wc = |flags: Value| {
        let mut args = json!({"text": "one two\nthree\n"});
        args.as_object_mut()
            .unwrap()
            .extend(flags.as_object().unwrap().clone());
        text("text_wc", args)
    };
    assert_eq!(wc(json!({"lines_only": "true"})), "Lines: 2");
    assert_eq!(wc(json!({"words_only": true})), "Words: 3");
    assert_eq!(wc(json!({"chars_only": "True"})), "Characters: 14");
    assert_eq!(
        wc(json!({"lines_only": "false", "words_only": "false"})),
        "Lines: 2, Words: 3, Characters: 14"
    );
    assert_eq!(
        wc(json!({"lines_only": true, "chars_only": true})),
        "Lines: 2, Characters: 14"
    );
}

#[test]
fn wc_of_empty_text_is_all_zero() {
    assert_eq!(
        text("text_wc", json!({"text": ""})),
        "Lines: 0, Words: 0, Characters: 0"
    );
}

#[test]
fn wc_counts_a_last_line_without_newline_once_and_whitespace_only_lines() {
    assert_eq!(
        text("text_wc", json!({"text": "a\n"})),
        "Lines: 1, Words: 1, Characters: 2"
    );
    assert_eq!(
        text("text_wc", json!({"text": "\n \n\t"})),
        "Lines: 3, Words: 0, Characters: 4"
    );
}

#[test]
fn wc_counts_crlf_lines_once_and_their_carriage_returns_as_characters() {
    assert_eq!(
        text("text_wc", json!({"text": "a b\r\nc\r\n"})),
        "Lines: 2, Words: 3, Characters: 8"
    );
}

#[test]
fn wc_counts_unicode_characters_not_bytes_and_unicode_whitespace_between_words() {
    // U+3000 (ideographic space) and U+00A0 (no-break space) separate words.
    assert_eq!(
        text(
            "text_wc",
            json!({"text": "héllo wörld\n日本\u{3000}語\u{a0}x"})
        ),
        "Lines: 2, Words: 5, Characters: 18"
    );
}

#[test]
fn wc_refuses_a_boolean_it_cannot_read() {
    let error = call("text_wc", json!({"text": "a", "lines_only": "maybe"})).unwrap_err();
    assert!(
        matches!(error, ToolError::InvalidArguments { .. }),
        "{error:?}"
    );
    assert!(error.to_model_message().contains("`lines_only`"), "{error}");
}

// ---- text_rg ----

const LOG: &str = "start\nerror: disk\nok\nok\nok\nerror: net\nok\nERROR: cpu\nend";

#[test]
fn rg_prints_matching_lines_with_their_line_numbers() {
    // As ripgrep: without context there are no groups to separate.
    assert_eq!(
        text("text_rg", json!({"text": LOG, "pattern": "error"})),
        "2:error: disk\n6:error: net"
    );
}

#[test]
fn rg_with_context_keeps_adjacent_lines_in_one_group_and_separates_the_others() {
    assert_eq!(
        text(
            "text_rg",
            json!({"text": "a\na\nb\nc\nd\na", "pattern": "a", "context": "1"})
        ),
        "1:a\n2:a\n3-b\n--\n5-d\n6:a"
    );
    assert_eq!(
        text(
            "text_rg",
            json!({"text": "a\nb\nc\na", "pattern": "a", "context": "1"})
        ),
        "1:a\n2-b\n3-c\n4:a"
    );
}

#[test]
fn rg_is_case_sensitive_unless_ignore_case_is_the_string_true() {
    assert_eq!(
        text(
            "text_rg",
            json!({"text": LOG, "pattern": "^error", "ignore_case": "true"})
        ),
        "2:error: disk\n6:error: net\n8:ERROR: cpu"
    );
}

#[test]
fn rg_shows_context_lines_with_dashes_and_merges_overlapping_groups() {
    assert_eq!(
        text(
            "text_rg",
            json!({"text": LOG, "pattern": "error", "context": "1"})
        ),
        "1-start\n2:error: disk\n3-ok\n--\n5-ok\n6:error: net\n7-ok"
    );
    assert_eq!(
        text(
            "text_rg",
            json!({"text": LOG, "pattern": "error", "context": 2, "ignore_case": true})
        ),
        "1-start\n2:error: disk\n3-ok\n4-ok\n5-ok\n6:error: net\n7-ok\n8:ERROR: cpu\n9-end"
    );
}

#[test]
fn rg_context_is_clipped_at_both_ends_of_the_text() {
    assert_eq!(
        text(
            "text_rg",
            json!({"text": "a\nb\nc", "pattern": "b", "context": 1000000})
        ),
        "1-a\n2:b\n3-c"
    );
}

#[test]
fn rg_numbers_crlf_lines_and_unicode_lines_like_any_other() {
    assert_eq!(
        text(
            "text_rg",
            json!({"text": "α\r\nβ\r\nγ\r\n", "pattern": "γ$"})
        ),
        "3:γ"
    );
}

#[test]
fn rg_without_matches_says_so_and_refuses_a_negative_context() {
    assert_eq!(
        text("text_rg", json!({"text": "", "pattern": "x"})),
        "No matches found for pattern 'x'"
    );
    let error = call(
        "text_rg",
        json!({"text": "x", "pattern": "x", "context": -1}),
    )
    .unwrap_err();
    assert!(error.to_model_message().contains("`context`"), "{error}");
}

#[test]
fn rg_counts_matching_lines_in_its_structured_output() {
    assert_eq!(
        structured(
            "text_rg",
            json!({"text": LOG, "pattern": "ok", "context": 1})
        ),
        json!({"pattern": "ok", "matching_lines": 4})
    );
}

// ---- text_extract_lines ----

const NUMBERED: &str = "one\ntwo\nthree\nfour\nfive";

#[test]
fn extract_lines_returns_an_inclusive_one_based_range() {
    assert_eq!(
        text(
            "text_extract_lines",
            json!({"text": NUMBERED, "start_line": "2", "end_line": "4"})
        ),
        "two\nthree\nfour"
    );
    assert_eq!(
        structured(
            "text_extract_lines",
            json!({"text": NUMBERED, "start_line": 2, "end_line": 4})
        ),
        json!({"start_line": 2, "end_line": 4, "total_lines": 5})
    );
}

#[test]
fn extract_lines_without_end_line_returns_one_line() {
    assert_eq!(
        text(
            "text_extract_lines",
            json!({"text": NUMBERED, "start_line": 1})
        ),
        "one"
    );
    assert_eq!(
        text(
            "text_extract_lines",
            json!({"text": NUMBERED, "start_line": 5})
        ),
        "five"
    );
}

#[test]
fn extract_lines_clips_a_range_at_the_end_of_the_text() {
    let args = json!({"text": "a\r\nb\r\n", "start_line": 2, "end_line": 100});
    assert_eq!(text("text_extract_lines", args.clone()), "b");
    assert_eq!(
        structured("text_extract_lines", args),
        json!({"start_line": 2, "end_line": 2, "total_lines": 2})
    );
}

#[test]
fn extract_lines_refuses_a_start_before_line_one() {
    assert_eq!(
        failure(
            "text_extract_lines",
            json!({"text": NUMBERED, "start_line": 0})
        ),
        "Tool `text_extract_lines` failed: start_line must be 1 or more (lines are numbered from 1), not 0"
    );
    assert!(
        failure(
            "text_extract_lines",
            json!({"text": NUMBERED, "start_line": "-3", "end_line": 2})
        )
        .contains("not -3")
    );
}

#[test]
fn extract_lines_refuses_an_end_before_the_start() {
    assert_eq!(
        failure(
            "text_extract_lines",
            json!({"text": NUMBERED, "start_line": 3, "end_line": 2})
        ),
        "Tool `text_extract_lines` failed: end_line (2) must not be less than start_line (3)"
    );
}

#[test]
fn extract_lines_refuses_a_start_past_the_last_line() {
    assert_eq!(
        failure(
            "text_extract_lines",
            json!({"text": NUMBERED, "start_line": 6, "end_line": 9})
        ),
        "Tool `text_extract_lines` failed: start_line 6 is past the end of the text, which has 5 lines"
    );
    assert!(
        failure("text_extract_lines", json!({"text": "", "start_line": 1}))
            .contains("which has 0 lines")
    );
    assert!(
        failure(
            "text_extract_lines",
            json!({"text": "x", "start_line": i64::MAX})
        )
        .contains("which has 1 line")
    );
}

#[test]
fn extract_lines_refuses_a_line_number_that_is_not_an_integer() {
    let error = call(
        "text_extract_lines",
        json!({"text": NUMBERED, "start_line": "2.5"}),
    )
    .unwrap_err();
    assert!(
        matches!(error, ToolError::InvalidArguments { .. }),
        "{error:?}"
    );
}

// ---- text_filter_lines ----

#[test]
fn filter_lines_keeps_matching_lines_ignoring_case_by_default() {
    let args = json!({"text": FRUIT, "pattern": "^a"});
    assert_eq!(
        text("text_filter_lines", args.clone()),
        "Apple pie\napple tart"
    );
    assert_eq!(
        structured("text_filter_lines", args),
        json!({"pattern": "^a", "kept_lines": 2, "total_lines": 4})
    );
}

#[test]
fn filter_lines_inverted_keeps_the_others_and_case_can_matter() {
    assert_eq!(
        text(
            "text_filter_lines",
            json!({"text": FRUIT, "pattern": "apple", "invert": "true", "ignore_case": "false"})
        ),
        "Apple pie\nbanana split\ncherry"
    );
}

#[test]
fn filter_lines_with_nothing_kept_is_empty() {
    assert_eq!(
        text(
            "text_filter_lines",
            json!({"text": FRUIT, "pattern": "kiwi"})
        ),
        ""
    );
    assert_eq!(
        text(
            "text_filter_lines",
            json!({"text": "", "pattern": "", "invert": true})
        ),
        ""
    );
}

#[test]
fn filter_lines_strips_crlf_endings_and_keeps_empty_lines_as_lines() {
    assert_eq!(
        text(
            "text_filter_lines",
            json!({"text": "a\r\n\r\nb\r\n", "pattern": "^$"})
        ),
        ""
    );
    assert_eq!(
        structured(
            "text_filter_lines",
            json!({"text": "a\r\n\r\nb\r\n", "pattern": "^$"})
        )["kept_lines"],
        1
    );
    assert_eq!(
        text(
            "text_filter_lines",
            json!({"text": "a\r\n\r\nb", "pattern": "^$", "invert": true})
        ),
        "a\nb"
    );
}

// ---- text_unique_lines ----

#[test]
fn unique_lines_keeps_first_occurrences_in_order_by_default() {
    let args = json!({"text": "b\na\nb\nc\na\n"});
    assert_eq!(text("text_unique_lines", args.clone()), "b\na\nc");
    assert_eq!(
        structured("text_unique_lines", args),
        json!({"unique_lines": 3, "total_lines": 5})
    );
}

#[test]
fn unique_lines_sorted_when_preserve_order_is_the_string_false() {
    assert_eq!(
        text(
            "text_unique_lines",
            json!({"text": "b\na\nb\nB\na", "preserve_order": "false"})
        ),
        "B\na\nb"
    );
}

#[test]
fn unique_lines_treats_crlf_and_lf_endings_of_one_line_as_one_line() {
    assert_eq!(
        text("text_unique_lines", json!({"text": "x\r\nx\ny\r\ny"})),
        "x\ny"
    );
}

#[test]
fn unique_lines_tells_unicode_lines_apart_by_their_characters() {
    assert_eq!(
        text(
            "text_unique_lines",
            json!({"text": "é\ne\u{301}\né\n", "preserve_order": true})
        ),
        "é\ne\u{301}"
    );
    assert_eq!(text("text_unique_lines", json!({"text": ""})), "");
}

// ---- text_sort_lines ----

#[test]
fn sort_lines_sorts_by_byte_order() {
    let args = json!({"text": "pear\nApple\nbanana\napple\n"});
    assert_eq!(
        text("text_sort_lines", args.clone()),
        "Apple\napple\nbanana\npear"
    );
    assert_eq!(
        structured("text_sort_lines", args),
        json!({"total_lines": 4})
    );
}

#[test]
fn sort_lines_reverses_after_sorting() {
    assert_eq!(
        text(
            "text_sort_lines",
            json!({"text": "b\nc\na", "reverse": "true"})
        ),
        "c\nb\na"
    );
}

#[test]
fn sort_lines_numeric_orders_by_leading_number_and_puts_lines_without_one_last_in_order() {
    assert_eq!(
        text(
            "text_sort_lines",
            json!({"text": "10 ten\nzebra\n9 nine\n-1.5 minus\napple\n 2 two\n9 again", "numeric": "true"})
        ),
        "-1.5 minus\n 2 two\n9 nine\n9 again\n10 ten\nzebra\napple"
    );
}

#[test]
fn sort_lines_numeric_reversed_reverses_the_whole_sorted_order() {
    assert_eq!(
        text(
            "text_sort_lines",
            json!({"text": "2\nx\n10\ny\n1", "numeric": true, "reverse": "true"})
        ),
        "y\nx\n10\n2\n1"
    );
}

#[test]
fn sort_lines_handles_empty_text_crlf_and_unicode() {
    assert_eq!(text("text_sort_lines", json!({"text": ""})), "");
    assert_eq!(
        text("text_sort_lines", json!({"text": "é\r\nz\r\ne\r\n"})),
        "e\nz\né"
    );
}

// ---- text_summarize_text ----

#[test]
fn summarize_text_reports_counts_averages_and_top_words() {
    let args = json!({"text": "The cat and the hat.\nThe END of the tale\n"});
    assert_eq!(
        text("text_summarize_text", args.clone()),
        "Text Summary:\n  Lines: 2\n  Words: 10\n  Characters: 41\n  \
         Average line length: 19.50\n  Average word length: 3.10\n  Most frequent words:\n    \
         the: 4\n    and: 1\n    cat: 1\n    end: 1\n    hat: 1"
    );
    assert_eq!(
        structured("text_summarize_text", args),
        json!({
            "lines": 2, "words": 10, "characters": 41,
            "average_line_length": 19.5, "average_word_length": 3.1,
            "most_frequent_words": [
                {"word": "the", "count": 4}, {"word": "and", "count": 1},
                {"word": "cat", "count": 1}, {"word": "end", "count": 1},
                {"word": "hat", "count": 1},
            ],
        })
    );
}

#[test]
fn summarize_text_of_empty_text_has_zero_averages_and_no_words() {
    assert_eq!(
        text("text_summarize_text", json!({"text": ""})),
        "Text Summary:\n  Lines: 0\n  Words: 0\n  Characters: 0\n  \
         Average line length: 0.00\n  Average word length: 0.00\n  Most frequent words: (none)"
    );
}

#[test]
fn summarize_text_lowercases_with_unicode_rules_and_ignores_short_words() {
    let summary = structured(
        "text_summarize_text",
        json!({"text": "ÉTÉ été Été ok ok ok an\r\nΣΟΦΙΑ σοφια"}),
    );
    assert_eq!(
        summary["most_frequent_words"],
        json!([{"word": "été", "count": 3}, {"word": "σοφια", "count": 2}])
    );
    // The CRLF line ending is not part of the line's length.
    assert_eq!(summary["average_line_length"], 17.0);
}

// ---- Limits ----

/// The arguments every tool needs, around `text`.
fn arguments_for(tool: &dyn Tool, text: &str) -> Value {
    let schema =
        toolsmith::parameters_schema(tool.parameters(), toolsmith::Dialect::JsonSchema).unwrap();
    let mut args = json!({"text": text});
    for (key, value) in [("pattern", json!("x")), ("start_line", json!(1))] {
        if schema["properties"].get(key).is_some() {
            args[key] = value;
        }
    }
    args
}

#[test]
fn the_input_size_limit_is_configurable_and_stated_to_every_caller() {
    let tools = TextProcessingToolset::default()
        .with_max_input_bytes(8)
        .into_tools();
    for tool in &tools {
        assert_eq!(
            tool.limits().unwrap().max_string_bytes,
            8,
            "{}",
            tool.name()
        );
        let error = tool
            .call_blocking(
                Arguments::Json(&arguments_for(tool.as_ref(), "123456789")),
                Context::new(),
            )
            .unwrap_err();
        let ToolError::InvalidArguments { errors, .. } = &error else {
            panic!("{}: {error:?}", tool.name());
        };
        assert_eq!(errors.0.len(), 1, "{error}");
        assert_eq!(errors.0[0].code.as_str(), "too_large", "{error}");
        assert_eq!(errors.0[0].path, "/text", "{error}");
        assert!(
            error.to_model_message().contains("at most 8 bytes"),
            "{error}"
        );
    }
    let fits = tool_of(&tools, "text_wc")
        .call_blocking(
            Arguments::Json(&json!({"text": "12345678"})),
            Context::new(),
        )
        .unwrap();
    assert_eq!(fits.as_text(), "Lines: 1, Words: 1, Characters: 8");
}

#[test]
fn a_method_called_from_rust_checks_the_input_size_itself() {
    let toolset = TextProcessingToolset::default().with_max_input_bytes(8);
    let error = toolset.wc("123456789", false, false, false).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the text is 9 bytes, more than the 8 bytes this toolset accepts; send a smaller part of it"
    );
}

#[test]
fn the_default_input_limit_is_64_mib_whatever_the_callers_policy() {
    assert_eq!(DEFAULT_MAX_INPUT_BYTES, 64 << 20);
    let wc = tool("text_wc");
    // 1.5 MB: more than the default policy's longest string.
    let document = "word ".repeat(300_000);
    let output = wc
        .call_blocking(Arguments::Json(&json!({"text": document})), Context::new())
        .unwrap();
    assert_eq!(
        output.as_text(),
        "Lines: 1, Words: 300000, Characters: 1500000"
    );
    // As argument text, escaped the most JSON can escape it (six bytes a byte).
    let escaped = json!({"text": "\u{1}".repeat(1 << 20)}).to_string();
    assert!(escaped.len() > 6 << 20);
    let output = wc
        .call_blocking(Arguments::Text(&escaped), Context::new())
        .unwrap();
    assert_eq!(output.as_text(), "Lines: 1, Words: 1, Characters: 1048576");

    let just_over = "x".repeat(DEFAULT_MAX_INPUT_BYTES + 1);
    let error = wc
        .call_blocking(Arguments::Json(&json!({"text": just_over})), Context::new())
        .unwrap_err();
    assert!(
        error
            .to_model_message()
            .replace(',', "")
            .contains("at most 67108864 bytes"),
        "{error}"
    );
}

#[test]
fn a_pattern_longer_than_the_limit_is_refused_before_it_is_parsed() {
    let long = "ab".repeat(DEFAULT_MAX_PATTERN_BYTES / 2 + 1);
    for name in ["text_grep", "text_rg", "text_filter_lines"] {
        let message = failure(name, json!({"text": FRUIT, "pattern": long}));
        assert_eq!(
            message,
            format!(
                "Tool `{name}` failed: the regex pattern is {} bytes, more than the 65536 bytes \
                 this toolset accepts; use a shorter pattern",
                long.len()
            )
        );
    }
    let tools = TextProcessingToolset::default()
        .with_max_pattern_bytes(4)
        .into_tools();
    let grep = tool_of(&tools, "text_grep");
    let error = grep
        .call_blocking(
            Arguments::Json(&json!({"text": FRUIT, "pattern": "apple"})),
            Context::new(),
        )
        .unwrap_err();
    assert!(
        error
            .to_model_message()
            .contains("5 bytes, more than the 4"),
        "{error}"
    );
    assert!(
        grep.call_blocking(
            Arguments::Json(&json!({"text": FRUIT, "pattern": "appl"})),
            Context::new(),
        )
        .is_ok()
    );
}
