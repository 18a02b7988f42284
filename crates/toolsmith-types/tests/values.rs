//! The limit on the JSON values of one request's arguments (`Limits::max_values`): every
//! string, number, boolean, null, array and object counts, keys do not, and JSON text read from
//! inside a string counts with the rest. Past it the arguments are one `too_large` error saying
//! the limit and how many were sent, whether they come as text, as near-JSON, encoded twice or
//! already parsed, and whichever way (the checking fast path or the full coercion) reads them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use toolsmith_types::{
    Arguments, CoerceErrors, Field, Limits, Policy, StructType, Type, TypeGraph, coerce,
    coerce_arguments, deserialize_arguments,
};

fn object(fields: Vec<Field>) -> TypeGraph {
    TypeGraph::new(Type::Struct(StructType {
        fields,
        ..StructType::anonymous()
    }))
}

/// `{m: [[integer]]}`.
fn matrix() -> TypeGraph {
    object(vec![Field::new(
        "m",
        Type::array(Type::array(Type::integer())),
    )])
}

/// What `matrix()` describes, as a Rust type.
#[derive(Debug, Deserialize, PartialEq, serde::Serialize)]
struct Matrix {
    m: Vec<Vec<i64>>,
}

/// `{"m": [[1, ...], ...]}` with `rows` rows of `per_row` ones: `2 + rows + rows * per_row`
/// values (the object, `m`, each row and each one).
fn matrix_text(rows: usize, per_row: usize) -> String {
    let row = format!("[{}]", vec!["1"; per_row].join(","));
    format!("{{\"m\":[{}]}}", vec![row; rows].join(","))
}

/// A matrix of one row holding exactly `values` values.
fn matrix_of(values: usize) -> String {
    matrix_text(1, values - 3)
}

fn with_max_values(max_values: usize) -> Policy {
    Policy {
        limits: Limits {
            max_values,
            ..Limits::default()
        },
        ..Policy::default()
    }
}

/// The expectation of the error for arguments past a limit of `max` values.
fn expected(max: &str, sent: &str) -> String {
    format!(
        "at most {max} JSON values in all (every string, number, boolean, null, array and \
         object counts; keys do not); {sent} were sent"
    )
}

/// The one error of a refusal, as (path, code, expected).
fn only_error(errors: &CoerceErrors) -> (&str, &'static str, &str) {
    assert_eq!(errors.len(), 1, "{errors}");
    let error = &errors.0[0];
    (
        error.path.as_str(),
        error.code.as_str(),
        error.expected.as_str(),
    )
}

#[test]
fn arguments_past_the_default_value_limit_are_too_large_saying_how_many_were_sent() {
    assert_eq!(Limits::default().max_values, 200_000);
    // Four rows of 50,001: every array within the item limit, the text within the size limit.
    let text = matrix_text(4, 50_001);
    let errors =
        coerce_arguments(&matrix(), Arguments::Text(&text), &Policy::default()).unwrap_err();
    assert_eq!(
        only_error(&errors),
        ("", "too_large", expected("200,000", "200,010").as_str())
    );
    assert_eq!(
        errors.0[0].message(),
        format!("arguments: expected {}", expected("200,000", "200,010"))
    );
}

#[test]
fn arguments_at_the_value_limit_are_read_and_one_value_more_is_refused() {
    let policy = with_max_values(1_000);
    let at = matrix_of(1_000);
    let out = coerce_arguments(&matrix(), Arguments::Text(&at), &policy).unwrap();
    assert_eq!(out.value["m"][0].as_array().unwrap().len(), 997);
    let past = matrix_of(1_001);
    let errors = coerce_arguments(&matrix(), Arguments::Text(&past), &policy).unwrap_err();
    assert_eq!(
        only_error(&errors),
        ("", "too_large", expected("1,000", "1,001").as_str())
    );
}

#[test]
fn parsed_arguments_are_counted_as_their_text_is_and_get_the_same_answer() {
    let policy = with_max_values(1_000);
    for values in [999, 1_000, 1_001, 5_000] {
        let text = matrix_of(values);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let from_text = coerce_arguments(&matrix(), Arguments::Text(&text), &policy);
        let from_json = coerce_arguments(&matrix(), Arguments::Json(&parsed), &policy);
        assert_eq!(from_text, from_json, "{values} values");
        assert_eq!(
            coerce(&matrix(), &parsed, &policy),
            from_json,
            "{values} values"
        );
        assert_eq!(from_json.is_ok(), values <= 1_000, "{values} values");
    }
}

#[test]
fn near_json_past_the_value_limit_is_refused_before_its_parser_builds_it() {
    let policy = with_max_values(1_000);
    // Unquoted keys, a trailing comma and a comment: read by the near-JSON parser.
    let row = |n: usize| format!("[{}]", vec!["1"; n].join(","));
    let near = |n: usize| format!("{{m: [{}], // rows\n}}", row(n));
    let out = coerce_arguments(&matrix(), Arguments::Text(&near(997)), &policy).unwrap();
    assert_eq!(out.value["m"][0].as_array().unwrap().len(), 997);
    let errors = coerce_arguments(&matrix(), Arguments::Text(&near(1_500)), &policy).unwrap_err();
    assert_eq!(
        only_error(&errors),
        ("", "too_large", expected("1,000", "1,503").as_str())
    );
}

#[test]
fn text_that_is_not_json_past_the_limit_says_only_that_more_were_sent() {
    let policy = with_max_values(1_000);
    let text = format!("{}, and then prose", matrix_of(2_000));
    let errors = coerce_arguments(&matrix(), Arguments::Text(&text), &policy).unwrap_err();
    assert_eq!(
        only_error(&errors),
        (
            "",
            "too_large",
            expected("1,000", "more than 1,000").as_str()
        )
    );
}

#[test]
fn arguments_encoded_twice_are_counted_once_decoded() {
    let policy = with_max_values(1_000);
    let twice = |values| Value::String(matrix_of(values)).to_string();
    let out = coerce_arguments(&matrix(), Arguments::Text(&twice(1_000)), &policy).unwrap();
    assert_eq!(out.repairs[0].code.as_str(), "double_encoded");
    let errors = coerce_arguments(&matrix(), Arguments::Text(&twice(1_001)), &policy).unwrap_err();
    assert_eq!(
        only_error(&errors),
        ("", "too_large", expected("1,000", "1,001").as_str())
    );
}

#[test]
fn json_text_inside_strings_counts_toward_the_arguments_values() {
    let graph = object(vec![
        Field::new("a", Type::array(Type::integer())),
        Field::new("b", Type::array(Type::integer())),
    ]);
    // The object, `a` and `b` are three values; each text read is four more: eleven in all.
    let input = json!({"a": "[1, 2, 3]", "b": "[4, 5, 6]"});
    let text = input.to_string();
    let out = coerce(&graph, &input, &with_max_values(11)).unwrap();
    assert_eq!(out.value, json!({"a": [1, 2, 3], "b": [4, 5, 6]}));
    for arguments in [Arguments::Json(&input), Arguments::Text(&text)] {
        let errors = coerce_arguments(&graph, arguments, &with_max_values(10)).unwrap_err();
        assert_eq!(
            only_error(&errors),
            (
                "/b",
                "too_large",
                "JSON text of at most 3 values here (the arguments hold at most 10 JSON values \
                 in all, JSON text inside strings included); 4 were sent"
            )
        );
    }
}

#[test]
fn json_text_read_for_a_union_member_not_taken_does_not_count() {
    // The first member reads the text and fails on its items; the second reads it again and is
    // taken: the text's two values count once.
    let graph = object(vec![Field::new(
        "a",
        Type::Union(vec![
            Type::array(Type::Boolean),
            Type::array(Type::string()),
        ]),
    )]);
    let input = json!({"a": "[\"x\"]"});
    let out = coerce(&graph, &input, &with_max_values(4)).unwrap();
    assert_eq!(out.value, json!({"a": ["x"]}));
    assert!(coerce(&graph, &input, &with_max_values(3)).is_err());
}

/// `T` read by `deserialize_arguments`, as the canonical JSON value and the repairs, or errors.
fn deserialized<T>(text: &str, policy: &Policy) -> Result<(Value, Vec<String>), CoerceErrors>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    deserialize_arguments::<T>(&matrix(), Arguments::Text(text), policy).map(|d| {
        let codes = d
            .repairs
            .iter()
            .map(|r| r.code.as_str().to_owned())
            .collect();
        (serde_json::to_value(&d.value).unwrap(), codes)
    })
}

#[test]
fn the_fast_path_agrees_with_coercion_at_and_past_the_value_limit() {
    for policy in [with_max_values(100), {
        let mut strict = Policy::strict();
        strict.limits.max_values = 100;
        strict
    }] {
        for values in [98, 99, 100, 101, 102, 150] {
            let clean = matrix_of(values);
            // And arguments that need a repair (a number as text): the full coercion's way.
            let messy = clean.replacen('1', "\"1\"", 1);
            for text in [clean, messy] {
                let coerced =
                    coerce_arguments(&matrix(), Arguments::Text(&text), &policy).map(|c| {
                        let codes = c.repairs.iter().map(|r| r.code.as_str().to_owned());
                        (c.value, codes.collect::<Vec<_>>())
                    });
                assert_eq!(deserialized::<Value>(&text, &policy), coerced, "{text}");
                assert_eq!(deserialized::<Matrix>(&text, &policy), coerced, "{text}");
                if values > 100 {
                    let errors = coerced.unwrap_err();
                    assert_eq!(only_error(&errors).1, "too_large", "{text}");
                }
            }
        }
    }
}

#[test]
fn canonical_text_at_the_value_limit_is_read_as_it_is_and_past_it_refused() {
    // `RawValue` keeps the text byte for byte only when the fast path reads it.
    let policy = with_max_values(100);
    let at = matrix_of(100).replace(',', ", ");
    let raw = deserialize_arguments::<Box<RawValue>>(&matrix(), Arguments::Text(&at), &policy);
    assert_eq!(raw.unwrap().value.get(), at);
    let past = matrix_of(101).replace(',', ", ");
    let errors = deserialize_arguments::<Box<RawValue>>(&matrix(), Arguments::Text(&past), &policy)
        .unwrap_err();
    assert_eq!(
        only_error(&errors),
        ("", "too_large", expected("100", "101").as_str())
    );
}

#[test]
fn blank_text_is_one_value_the_empty_object() {
    let graph = object(vec![]);
    assert!(coerce_arguments(&graph, Arguments::Text(" "), &with_max_values(1)).is_ok());
    let errors = coerce_arguments(&graph, Arguments::Text(" "), &with_max_values(0)).unwrap_err();
    assert_eq!(
        only_error(&errors),
        ("", "too_large", expected("0", "1").as_str())
    );
    let fenced = "```json\n```";
    let errors =
        coerce_arguments(&graph, Arguments::Text(fenced), &with_max_values(0)).unwrap_err();
    assert_eq!(only_error(&errors).1, "too_large");
}
