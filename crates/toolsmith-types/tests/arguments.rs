//! Argument text: the "Argument text" rows of the coercion rulebook, the near-JSON repairs, the
//! strict policy, the limits, and `coerce_arguments` on top of them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolsmith_types::{
    Arguments, CoerceError, ErrorCode, Field, Limits, Policy, RepairCode, StructType, Type,
    TypeGraph, coerce_arguments, parse_arguments,
};

/// Parses leniently; returns the object and the codes of the repairs, in order.
fn parse(text: &str) -> (Value, Vec<RepairCode>) {
    let parsed = parse_arguments(text, &Policy::default())
        .unwrap_or_else(|e| panic!("{text:?} was rejected: {e}"));
    let codes = parsed.repairs.iter().map(|r| r.code).collect();
    (Value::Object(parsed.value), codes)
}

/// Parses with `policy`; returns the only error.
fn reject_with(text: &str, policy: &Policy) -> CoerceError {
    let errors = match parse_arguments(text, policy) {
        Ok(parsed) => panic!("{text:?} was accepted as {:?}", parsed.value),
        Err(errors) => errors,
    };
    assert_eq!(errors.len(), 1, "{errors}");
    errors.0.into_iter().next().unwrap()
}

fn reject(text: &str) -> CoerceError {
    reject_with(text, &Policy::default())
}

fn with_limits(limits: Limits) -> Policy {
    Policy {
        limits,
        ..Policy::default()
    }
}

// Accept

#[test]
fn json_object_is_accepted_without_repairs() {
    assert_eq!(
        parse(r#"{"city": "Paris", "days": 3}"#),
        (json!({"city": "Paris", "days": 3}), vec![])
    );
}

#[test]
fn empty_text_is_an_empty_object() {
    assert_eq!(parse(""), (json!({}), vec![]));
}

#[test]
fn blank_text_is_an_empty_object() {
    assert_eq!(parse(" \n\t "), (json!({}), vec![]));
}

#[test]
fn integers_stay_integers_with_full_precision() {
    let (value, _) = parse(r#"{"a": 42, "b": 18446744073709551615, "c": -9223372036854775808}"#);
    assert!(value["a"].is_u64());
    assert_eq!(value["b"].as_u64(), Some(u64::MAX));
    assert_eq!(value["c"].as_i64(), Some(i64::MIN));
}

#[test]
fn integers_stay_exact_in_repaired_text() {
    let (value, codes) = parse("{a: 42, b: 18446744073709551615, c: 2.5,}");
    assert_eq!(codes, [RepairCode::TrailingComma, RepairCode::UnquotedKeys]);
    assert!(value["a"].is_u64());
    assert_eq!(value["b"].as_u64(), Some(u64::MAX));
    assert_eq!(value["c"].as_f64(), Some(2.5));
}

#[test]
fn key_order_is_kept() {
    let (value, _) = parse(r#"{"z": 1, "a": 2, "m": 3}"#);
    let keys: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["z", "a", "m"]);
}

// Repair: one kind at a time

#[test]
fn markdown_fence_with_json_tag_is_unwrapped() {
    assert_eq!(
        parse("```json\n{\"city\": \"Paris\"}\n```"),
        (json!({"city": "Paris"}), vec![RepairCode::MarkdownFence])
    );
}

#[test]
fn markdown_fence_without_tag_and_with_surrounding_whitespace_is_unwrapped() {
    assert_eq!(
        parse("\n  ```\n{\"city\": \"Paris\"}\n```  \n"),
        (json!({"city": "Paris"}), vec![RepairCode::MarkdownFence])
    );
}

#[test]
fn markdown_fence_on_one_line_is_unwrapped() {
    assert_eq!(
        parse("```json {\"n\": 1}```"),
        (json!({"n": 1}), vec![RepairCode::MarkdownFence])
    );
}

#[test]
fn trailing_commas_are_dropped() {
    assert_eq!(
        parse(r#"{"tags": ["a", "b",], "n": 1,}"#),
        (
            json!({"tags": ["a", "b"], "n": 1}),
            vec![RepairCode::TrailingComma]
        )
    );
}

#[test]
fn line_and_block_comments_are_removed() {
    let text = "{\n  // the city\n  \"city\": \"Paris\", /* metric */ \"units\": \"C\"\n}";
    assert_eq!(
        parse(text),
        (
            json!({"city": "Paris", "units": "C"}),
            vec![RepairCode::JsonComments]
        )
    );
}

#[test]
fn single_quoted_strings_are_read_as_strings() {
    assert_eq!(
        parse(r#"{'city': 'Paris', "note": "it's"}"#),
        (
            json!({"city": "Paris", "note": "it's"}),
            vec![RepairCode::SingleQuotes]
        )
    );
}

#[test]
fn unquoted_keys_are_read_as_strings() {
    assert_eq!(
        parse(r#"{city: "Paris", max_days: 3}"#),
        (
            json!({"city": "Paris", "max_days": 3}),
            vec![RepairCode::UnquotedKeys]
        )
    );
}

#[test]
fn python_literals_are_read_as_json_literals() {
    assert_eq!(
        parse(r#"{"a": True, "b": [False, None]}"#),
        (
            json!({"a": true, "b": [false, null]}),
            vec![RepairCode::PythonLiterals]
        )
    );
}

#[test]
fn python_words_inside_strings_and_comments_are_left_alone() {
    let text = "{\"a\": \"True\", \"b\": None /* None */, \"c\": 'False'}";
    assert_eq!(
        parse(text),
        (
            json!({"a": "True", "b": null, "c": "False"}),
            vec![
                RepairCode::JsonComments,
                RepairCode::SingleQuotes,
                RepairCode::PythonLiterals
            ]
        )
    );
}

#[test]
fn python_word_in_key_position_stays_a_key() {
    assert_eq!(
        parse("{True: None}"),
        (
            json!({"True": null}),
            vec![RepairCode::UnquotedKeys, RepairCode::PythonLiterals]
        )
    );
}

#[test]
fn double_encoded_object_is_decoded() {
    assert_eq!(
        parse(r#""{\"city\": \"Paris\"}""#),
        (json!({"city": "Paris"}), vec![RepairCode::DoubleEncoded])
    );
}

#[test]
fn every_kind_of_repair_in_one_text_is_recorded_once_in_order() {
    let text =
        "```json\n{\n  // a comment\n  city: 'Paris',\n  metric: True,\n  list: [1, 2,],\n}\n```";
    assert_eq!(
        parse(text),
        (
            json!({"city": "Paris", "metric": true, "list": [1, 2]}),
            vec![
                RepairCode::MarkdownFence,
                RepairCode::JsonComments,
                RepairCode::TrailingComma,
                RepairCode::SingleQuotes,
                RepairCode::UnquotedKeys,
                RepairCode::PythonLiterals,
            ]
        )
    );
}

#[test]
fn text_repairs_are_at_the_root_from_the_original_text() {
    let text = "{\"a\": 1,}";
    let parsed = parse_arguments(text, &Policy::default()).unwrap();
    assert_eq!(parsed.repairs.len(), 1);
    let repair = &parsed.repairs[0];
    assert_eq!(repair.path, "");
    assert_eq!(repair.from, Some(json!(text)));
    // Nothing took the text's place: the result is the arguments as a whole.
    assert_eq!(repair.to, None);
    assert_eq!(repair.message(), "arguments: dropped a trailing comma");
    let shown = repair.to_json();
    assert_eq!(shown.get("to"), None, "{shown}");
}

#[test]
fn comment_markers_inside_strings_are_text() {
    assert_eq!(
        parse(r#"{"url": "http://example.com/*x*/", "n": 1,}"#),
        (
            json!({"url": "http://example.com/*x*/", "n": 1}),
            vec![RepairCode::TrailingComma]
        )
    );
}

// Reject

#[test]
fn truncated_json_is_invalid() {
    let error = reject(r#"{"city": "Paris", "days": 3"#);
    assert_eq!(error.code, ErrorCode::JsonInvalid);
    assert_eq!(error.path, "");
    assert!(error.expected.starts_with("a JSON object of arguments"));
    assert!(
        error.expected.contains("line 1 column"),
        "{}",
        error.expected
    );
}

#[test]
fn prose_before_the_json_is_invalid() {
    assert_eq!(
        reject(r#"Here are the arguments: {"city": "Paris"}"#).code,
        ErrorCode::JsonInvalid
    );
}

#[test]
fn prose_after_the_json_is_invalid() {
    assert_eq!(
        reject(r#"{"city": "Paris"} Let me know if you need more."#).code,
        ErrorCode::JsonInvalid
    );
}

#[test]
fn prose_around_a_fence_is_invalid() {
    assert_eq!(
        reject("Sure:\n```json\n{\"city\": \"Paris\"}\n```").code,
        ErrorCode::JsonInvalid
    );
}

#[test]
fn several_json_values_are_invalid() {
    assert_eq!(reject(r#"{"a": 1} {"b": 2}"#).code, ErrorCode::JsonInvalid);
}

#[test]
fn duplicate_key_is_rejected_at_its_object() {
    let error = reject(r#"{"city": "Paris", "city": "Lyon"}"#);
    assert_eq!(error.code, ErrorCode::DuplicateKey);
    assert_eq!(error.path, "");
    assert_eq!(error.input, Some(json!("city")));
}

#[test]
fn nested_duplicate_key_is_rejected_at_the_nested_object() {
    let error = reject(r#"{"items": [{"id": 1}, {"meta": {"id": 1, "id": 2}}]}"#);
    assert_eq!(error.code, ErrorCode::DuplicateKey);
    assert_eq!(error.path, "/items/1/meta");
}

#[test]
fn duplicate_key_in_repaired_text_is_rejected() {
    let error = reject("{meta: {a: 1, 'a': 2,}}");
    assert_eq!(error.code, ErrorCode::DuplicateKey);
    assert_eq!(error.path, "/meta");
    assert_eq!(error.input, Some(json!("a")));
}

#[test]
fn array_is_not_arguments() {
    let error = reject("[1, 2]");
    assert_eq!(error.code, ErrorCode::ArgumentsType);
    assert_eq!(error.input, Some(json!([1, 2])));
    assert!(
        error.message().contains("not an array"),
        "{}",
        error.message()
    );
}

#[test]
fn number_boolean_and_null_are_not_arguments() {
    for (text, kind) in [("42", "a number"), ("true", "a boolean"), ("null", "null")] {
        let error = reject(text);
        assert_eq!(error.code, ErrorCode::ArgumentsType, "{text}");
        assert!(error.expected.ends_with(kind), "{}", error.expected);
    }
}

#[test]
fn string_that_does_not_hold_an_object_is_not_arguments() {
    for text in [r#""hello""#, r#""[1, 2]""#, r#""""#] {
        let error = reject(text);
        assert_eq!(error.code, ErrorCode::ArgumentsType, "{text}");
        assert!(
            error.expected.ends_with("not a string"),
            "{}",
            error.expected
        );
    }
}

#[test]
fn double_encoding_is_undone_only_once() {
    let twice = serde_json::to_string(&json!(r#"{"a": 1}"#.to_owned())).unwrap();
    let thrice = serde_json::to_string(&json!(twice)).unwrap();
    assert_eq!(reject(&thrice).code, ErrorCode::ArgumentsType);
}

#[test]
fn near_json_beyond_the_named_repairs_is_invalid() {
    for text in [
        r#"{"a": 1 "b": 2}"#,
        r#"{"a": 0x10}"#,
        r#"{"a": +1}"#,
        r#"{"a": .5}"#,
        r#"{"a": NaN}"#,
        r#"{"a": Infinity}"#,
        r#"{"a": undefined}"#,
        r#"{'a': '\x41'}"#,
    ] {
        assert_eq!(reject(text).code, ErrorCode::JsonInvalid, "{text}");
    }
}

#[test]
fn number_out_of_range_is_invalid() {
    assert_eq!(reject(r#"{"a": 1e999}"#).code, ErrorCode::JsonInvalid);
    assert_eq!(reject(r#"{a: 1e999}"#).code, ErrorCode::JsonInvalid);
}

#[test]
fn invalid_json_message_says_where_and_why() {
    let error = reject(r#"{"a": 1, "b": }"#);
    assert_eq!(error.code, ErrorCode::JsonInvalid);
    assert_eq!(error.input, Some(json!(r#"{"a": 1, "b": }"#)));
    assert!(
        error
            .message()
            .starts_with("arguments: expected a JSON object of arguments"),
        "{}",
        error.message()
    );
    assert!(error.expected.contains("column 15"), "{}", error.expected);
}

#[test]
fn invalid_json_input_is_an_excerpt_of_long_text() {
    let text = format!(r#"{{"a": "{}", "b": }}"#, "x".repeat(10_000));
    let error = reject(&text);
    assert_eq!(error.code, ErrorCode::JsonInvalid);
    let input = error.input.unwrap();
    let input = input.as_str().unwrap();
    assert!(input.len() < 200, "{input}");
    assert!(input.ends_with(r#""b": }"#), "{input}");
}

// Strict policy

#[test]
fn strict_policy_accepts_clean_json() {
    let parsed = parse_arguments(r#"{"a": 1}"#, &Policy::strict()).unwrap();
    assert_eq!(Value::Object(parsed.value), json!({"a": 1}));
    assert!(parsed.repairs.is_empty());
}

#[test]
fn strict_policy_accepts_blank_text_as_an_empty_object() {
    let parsed = parse_arguments("  ", &Policy::strict()).unwrap();
    assert!(parsed.value.is_empty());
}

#[test]
fn strict_policy_refuses_each_repair_at_the_root() {
    let errors = parse_arguments("```json\n{\"a\": 1,}\n```", &Policy::strict()).unwrap_err();
    let found: Vec<_> = errors.iter().map(|e| (e.path.as_str(), e.code)).collect();
    assert_eq!(
        found,
        [
            ("", ErrorCode::RepairRefused),
            ("", ErrorCode::RepairRefused)
        ]
    );
    assert!(errors.0[0].expected.contains("code fence"));
    assert!(errors.0[1].expected.contains("trailing comma"));
}

#[test]
fn strict_policy_refuses_double_encoded_arguments() {
    let error = reject_with(r#""{\"a\": 1}""#, &Policy::strict());
    assert_eq!(error.code, ErrorCode::RepairRefused);
}

// Limits

#[test]
fn text_over_the_input_limit_is_too_large() {
    let policy = with_limits(Limits {
        max_input_bytes: 17,
        ..Limits::default()
    });
    assert!(parse_arguments(r#"{"a": "12345678"}"#, &policy).is_ok());
    let error = reject_with(r#"{"a": "123456789"}"#, &policy);
    assert_eq!(error.code, ErrorCode::TooLarge);
}

#[test]
fn nesting_past_the_depth_limit_is_too_deep() {
    let policy = with_limits(Limits {
        max_depth: 2,
        ..Limits::default()
    });
    assert!(parse_arguments(r#"{"a": [{"b": 1}]}"#, &policy).is_ok());
    let error = reject_with(r#"{"a": [{"b": []}]}"#, &policy);
    assert_eq!(error.code, ErrorCode::TooDeep);
    assert_eq!(error.path, "");
}

#[test]
fn nesting_of_the_default_limit_is_accepted() {
    let depth = Limits::default().max_depth;
    let text = format!(r#"{{"a": {}1{}}}"#, "[".repeat(depth), "]".repeat(depth));
    let (value, codes) = parse(&text);
    assert!(codes.is_empty());
    assert!(value["a"].is_array());
    let deeper = format!(
        r#"{{"a": {}1{}}}"#,
        "[".repeat(depth + 1),
        "]".repeat(depth + 1)
    );
    assert_eq!(reject(&deeper).code, ErrorCode::TooDeep);
}

#[test]
fn deep_nesting_with_a_duplicate_key_is_still_rejected() {
    let depth = Limits::default().max_depth;
    let text = format!(
        r#"{{"a": {}{{"k": 1, "k": 2}}{}}}"#,
        "[".repeat(depth - 1),
        "]".repeat(depth - 1)
    );
    assert_eq!(reject(&text).code, ErrorCode::DuplicateKey);
}

#[test]
fn a_megabyte_of_open_brackets_is_too_deep_not_a_crash() {
    assert_eq!(reject(&"[".repeat(1 << 20)).code, ErrorCode::TooDeep);
    assert_eq!(reject(&r#"{"a":"#.repeat(200_000)).code, ErrorCode::TooDeep);
    assert_eq!(reject(&"{a:[".repeat(200_000)).code, ErrorCode::TooDeep);
}

#[test]
fn deep_nesting_inside_a_double_encoded_string_is_too_deep() {
    let inner = format!("{{\"a\": {}", "[".repeat(10_000));
    let text = serde_json::to_string(&json!(inner)).unwrap();
    assert_eq!(reject(&text).code, ErrorCode::TooDeep);
}

#[test]
fn brackets_inside_strings_and_comments_do_not_count_as_nesting() {
    let brackets = "[".repeat(1000);
    let text = format!("{{\"a\": \"{brackets}\", 'b': '{brackets}', /* {brackets} */}}");
    let (value, _) = parse(&text);
    assert_eq!(value["a"].as_str(), Some(brackets.as_str()));
}

#[test]
fn hostile_text_is_an_error_never_a_crash() {
    let long_number = "9".repeat(100_000);
    let unclosed_string = format!("{{\"a\": \"{}", "\\\"".repeat(10_000));
    let hostile = [
        "\"",
        "'",
        "/*",
        "//",
        "`",
        "```",
        "````",
        "``````",
        "```json",
        "\u{0}",
        "{\"a\": \"\u{0}\"}",
        "{\"a\": \"\\ud800\"}",
        "{\"\\",
        "{'\\",
        "{a",
        "{a:",
        "{,}",
        "[,]",
        "{\"a\":1,,}",
        "}{",
        "]]]]",
        "{\"a\": True",
        "True False None",
        "-",
        "1e",
        "\u{feff}{}",
        "{\u{a0}}",
        "é",
        long_number.as_str(),
        unclosed_string.as_str(),
    ];
    for text in hostile {
        for policy in [Policy::lenient(), Policy::strict()] {
            if let Err(errors) = parse_arguments(text, &policy) {
                assert!(!errors.is_empty(), "{text:?}");
            }
        }
    }
}

// coerce_arguments

/// `{count: integer, name?: string}`.
fn counter() -> TypeGraph {
    TypeGraph::new(Type::Struct(
        StructType::new("Counter")
            .field(Field::new("count", Type::integer()))
            .field(Field::new("name", Type::string()).optional()),
    ))
}

#[test]
fn text_arguments_are_coerced_with_text_repairs_first() {
    let out = coerce_arguments(
        &counter(),
        Arguments::Text("```json\n{\"count\": \"42\"}\n```"),
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(out.value, json!({"count": 42}));
    let codes: Vec<_> = out.repairs.iter().map(|r| r.code).collect();
    assert_eq!(
        codes,
        [RepairCode::MarkdownFence, RepairCode::IntFromString]
    );
}

#[test]
fn json_object_arguments_are_coerced_directly() {
    let args = json!({"count": 3, "name": "x"});
    let out = coerce_arguments(&counter(), Arguments::Json(&args), &Policy::default()).unwrap();
    assert_eq!(out.value, args);
    assert!(out.repairs.is_empty());
}

#[test]
fn json_string_arguments_are_read_as_text() {
    let args = json!("{count: 3,}");
    let out = coerce_arguments(&counter(), Arguments::Json(&args), &Policy::default()).unwrap();
    assert_eq!(out.value, json!({"count": 3}));
    let codes: Vec<_> = out.repairs.iter().map(|r| r.code).collect();
    assert_eq!(codes, [RepairCode::TrailingComma, RepairCode::UnquotedKeys]);
}

#[test]
fn json_array_arguments_are_not_arguments() {
    let args = json!([{"count": 3}]);
    let errors =
        coerce_arguments(&counter(), Arguments::Json(&args), &Policy::default()).unwrap_err();
    let codes: Vec<_> = errors.iter().map(|e| e.code).collect();
    assert_eq!(codes, [ErrorCode::ArgumentsType]);
}

#[test]
fn blank_text_arguments_are_checked_for_required_fields() {
    let errors = coerce_arguments(&counter(), Arguments::Text(""), &Policy::default()).unwrap_err();
    let found: Vec<_> = errors.iter().map(|e| (e.path.as_str(), e.code)).collect();
    assert_eq!(found, [("/count", ErrorCode::Missing)]);
}

#[test]
fn strict_policy_reports_refused_text_repairs_beside_value_errors() {
    let errors = coerce_arguments(
        &counter(),
        Arguments::Text("{\"count\": 1.5,}"),
        &Policy::strict(),
    )
    .unwrap_err();
    let found: Vec<_> = errors.iter().map(|e| (e.path.as_str(), e.code)).collect();
    assert_eq!(
        found,
        [
            ("", ErrorCode::RepairRefused),
            ("/count", ErrorCode::IntFromFloat)
        ]
    );
}

#[test]
fn a_repair_of_long_text_holds_the_text_cut_short() {
    let long = "x".repeat(5_000);
    let text = format!(r#"{{"note": "{long}",}}"#);
    let parsed = parse_arguments(&text, &Policy::default()).unwrap();
    assert_eq!(parsed.repairs.len(), 1);
    let from = parsed.repairs[0]
        .from
        .as_ref()
        .and_then(Value::as_str)
        .unwrap();
    assert_eq!(from.chars().count(), 1025);
    assert!(from.starts_with(r#"{"note": "xxx"#) && from.ends_with('…'));
    assert_eq!(parsed.value["note"].as_str().map(str::len), Some(5_000));
}

// ---------------------------------------------------------------------------------------------
// Positions point at the offending token

/// The `line L column C` an invalid text's error names, and the text from there on.
fn position_of_error(text: &str) -> (String, String) {
    let errors = parse_arguments(text, &Policy::default()).unwrap_err();
    let expected = &errors.0[0].expected;
    let at = expected.rfind(" at line ").expect("a position") + 9;
    let position = expected[at..].trim_end_matches(')');
    let (line, column) = position.split_once(" column ").unwrap();
    let (line, column): (usize, usize) = (line.parse().unwrap(), column.parse().unwrap());
    let line_text = text.split('\n').nth(line - 1).unwrap();
    let rest: String = line_text.chars().skip(column - 1).collect();
    (format!("line {line} column {column}"), rest)
}

#[test]
fn every_position_in_an_error_points_at_the_offending_token() {
    let cases = [
        // A number no float holds, strict and near-JSON.
        (r#"{"n":1,"x":1e999}"#, "1e999}"),
        ("{\"n\":1,\n \"x\": -1e999,}", "-1e999,}"),
        // Strict JSON that is wrong, where serde_json stops.
        (r#"{"a": 1 "b": 2}"#, "\"b\": 2}"),
        (r#"{"a": tru}"#, "tru}"),
        (r#"{"a" 1}"#, "1}"),
        (r#"{"a": 1,, "b": 2}"#, ", \"b\""),
        (r#"{"a": [1, 2}"#, "}"),
        // Near-JSON that no repair makes JSON, where jsonc-parser stops.
        (r#"{a: 1, b: 0x10}"#, "0x10}"),
        ("{'a': 1,\n  'b': +1}", "+1}"),
        // Text that is not JSON at all, with characters of more than one byte before it.
        ("{\"é\": 1, \"ü\": ?}", "?}"),
    ];
    for (text, from_there) in cases {
        let (position, rest) = position_of_error(text);
        assert!(
            rest.starts_with(from_there),
            "{text:?}: {position} is at {rest:?}, not at {from_there:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// A byte-order mark, and JSON inside strings

#[test]
fn a_leading_byte_order_mark_is_dropped_without_a_repair() {
    let parsed = parse_arguments("\u{feff}{\"n\": 1}", &Policy::strict()).unwrap();
    assert_eq!(Value::Object(parsed.value), json!({"n": 1}));
    assert!(parsed.repairs.is_empty());
    // Only at the start: elsewhere it is a character like any other.
    assert!(parse_arguments("{\"n\": 1}\u{feff}", &Policy::default()).is_err());
}
