//! Lossless numbers: every number is decided on the digits that were sent, never on what a
//! 64-bit float made of them. Argument text keeps its literals (`1.10`, `1e2`, `-0`, digits past
//! 64 bits, `1e-400`); a value that arrives already parsed is decided on its `Number`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith_types::{
    Arguments, CoerceErrors, Coerced, Describe, Dialect, Field, LintTool, NumberType, Policy,
    StructType, Type, TypeGraph, coerce, coerce_arguments, deserialize_arguments, lint,
    parameters_schema,
};

/// Arguments with one field `x` of type `ty`.
fn one(ty: Type) -> TypeGraph {
    TypeGraph::new(Type::Struct(
        StructType::anonymous().field(Field::new("x", ty)),
    ))
}

fn text(graph: &TypeGraph, arguments: &str) -> Result<Coerced, CoerceErrors> {
    coerce_arguments(graph, Arguments::Text(arguments), &Policy::default())
}

/// The value of `x` coerced from `{"x": <literal>}`, with the codes of its repairs.
fn accepted(ty: Type, literal: &str) -> (Value, Vec<&'static str>) {
    let arguments = format!(r#"{{"x": {literal}}}"#);
    match text(&one(ty), &arguments) {
        Ok(out) => (
            out.value["x"].clone(),
            out.repairs.iter().map(|r| r.code.as_str()).collect(),
        ),
        Err(errors) => panic!("{arguments} was rejected:\n{errors}"),
    }
}

/// The one error of `{"x": <literal>}`: its code and what it expected.
fn rejected(ty: Type, literal: &str) -> (&'static str, String) {
    let arguments = format!(r#"{{"x": {literal}}}"#);
    match text(&one(ty), &arguments) {
        Ok(out) => panic!("{arguments} was accepted as {}", out.value),
        Err(errors) => {
            assert_eq!(errors.len(), 1, "{errors}");
            let error = &errors.0[0];
            assert_eq!(error.path, "/x");
            (error.code.as_str(), error.expected.clone())
        }
    }
}

fn multiple_of(m: f64) -> Type {
    Type::Number(NumberType {
        multiple_of: Some(m),
        ..NumberType::default()
    })
}

// ---------------------------------------------------------------------------------------------
// Integers

#[test]
fn an_integer_literal_below_i64_min_is_out_of_range_not_clamped() {
    let (code, expected) = rejected(Type::integer(), "-9223372036854775809");
    assert_eq!(code, "int_out_of_range");
    assert!(expected.contains("-9223372036854775809"), "{expected}");
    assert!(expected.contains("from -9223372036854775808 to 18446744073709551615"));
}

#[test]
fn an_integer_literal_above_u64_max_is_out_of_range() {
    for literal in ["18446744073709551616", "99999999999999999999999"] {
        assert_eq!(rejected(Type::integer(), literal).0, "int_out_of_range");
    }
}

#[test]
fn integer_literals_across_i64_and_u64_are_exact() {
    for literal in [
        "-9223372036854775808",
        "18446744073709551615",
        "9007199254740993",
    ] {
        let (value, repairs) = accepted(Type::integer(), literal);
        assert_eq!(value.to_string(), literal);
        assert!(repairs.is_empty());
    }
}

#[test]
fn a_whole_float_for_an_integer_is_a_recorded_repair() {
    for (literal, n) in [
        ("5.0", 5),
        ("1e3", 1000),
        ("-2.50e1", -25),
        ("9007199254740992.0", 1_i64 << 53),
    ] {
        let (value, repairs) = accepted(Type::integer(), literal);
        assert_eq!(value, json!(n), "{literal}");
        assert!(value.is_i64(), "{literal} becomes an integer");
        assert_eq!(repairs, ["int_from_float"], "{literal}");
    }
    let strict = coerce_arguments(
        &one(Type::integer()),
        Arguments::Text(r#"{"x": 5.0}"#),
        &Policy::strict(),
    );
    assert_eq!(strict.unwrap_err().0[0].code.as_str(), "repair_refused");
}

#[test]
fn a_whole_float_past_2_pow_53_is_an_error_asking_for_the_digits() {
    // 9007199254740993.0 is read as the float 9007199254740992: the digits sent say otherwise.
    let (code, expected) = rejected(Type::integer(), "9007199254740993.0");
    assert_eq!(code, "int_from_float");
    assert!(expected.contains("digits (9007199254740993)"), "{expected}");
    assert_eq!(rejected(Type::integer(), "1e19").0, "int_from_float");
    // Without a literal (a value already parsed), the float itself is past 2^53.
    let errors = coerce(
        &one(Type::integer()),
        &json!({"x": 9007199254740994.0}),
        &Policy::default(),
    );
    assert_eq!(errors.unwrap_err().0[0].code.as_str(), "int_from_float");
}

#[test]
fn a_float_literal_is_whole_only_when_its_digits_are() {
    // The float nearest 1.0000000000000000001 is 1.0; the digits have a fraction.
    assert_eq!(
        rejected(Type::integer(), "1.0000000000000000001").0,
        "int_from_float"
    );
    assert_eq!(rejected(Type::integer(), "42.5").0, "int_from_float");
}

#[test]
fn a_whole_float_for_an_integer_enum_is_a_recorded_repair_too() {
    let levels = Type::Enum(toolsmith_types::EnumType::integers([1, 2, 3]));
    let (value, repairs) = accepted(levels.clone(), "2.0");
    assert_eq!((value, repairs), (json!(2), vec!["int_from_float"]));
    let (value, repairs) = accepted(levels, "2");
    assert_eq!((value, repairs.len()), (json!(2), 0));
}

#[test]
fn minus_zero_for_an_integer_is_zero() {
    let (value, repairs) = accepted(Type::integer(), "-0");
    assert_eq!((value, repairs.len()), (json!(0), 0));
}

#[test]
fn an_i64_parameter_states_its_bound_and_refuses_past_it_at_the_field() {
    #[derive(Debug, Deserialize)]
    struct Args {
        x: i64,
    }
    let graph = one(i64::describe(&mut Default::default()));
    for literal in ["9223372036854775808", "18446744073709551615"] {
        let arguments = format!(r#"{{"x": {literal}}}"#);
        let errors =
            deserialize_arguments::<Args>(&graph, Arguments::Text(&arguments), &Policy::default())
                .unwrap_err();
        let codes: Vec<_> = errors
            .iter()
            .map(|e| (e.path.as_str(), e.code.as_str()))
            .collect();
        assert_eq!(codes, [("/x", "less_than_equal")], "{literal}");
        assert_eq!(errors.0[0].expected, "at most 9223372036854775807");
    }
    let max = r#"{"x": 9223372036854775807}"#;
    let out = deserialize_arguments::<Args>(&graph, Arguments::Text(max), &Policy::default());
    assert_eq!(out.unwrap().value.x, i64::MAX);
}

// ---------------------------------------------------------------------------------------------
// Numbers for strings

#[test]
fn a_number_for_a_string_is_written_as_the_literal_that_was_sent() {
    for literal in [
        "1.10",
        "1e2",
        "-0",
        "98249283749234923749234923749234923749234923749234923",
        "-9223372036854775809",
        "0.30000000000000001",
        "42",
    ] {
        let (value, repairs) = accepted(Type::string(), literal);
        assert_eq!(value, json!(literal));
        assert_eq!(repairs, ["string_from_number"]);
    }
}

#[test]
fn a_number_for_a_string_keeps_its_literal_through_text_repairs() {
    // Read by the near-JSON parser (single quotes), and inside double-encoded arguments.
    let graph = one(Type::string());
    let near = text(&graph, "{'x': 1.10}").unwrap();
    assert_eq!(near.value, json!({"x": "1.10"}));
    let double = text(&graph, r#""{\"x\": 1e2}""#).unwrap();
    assert_eq!(double.value, json!({"x": "1e2"}));
}

#[test]
fn a_number_for_a_string_keeps_its_literal_inside_json_sent_as_text() {
    let graph = one(Type::array(Type::string()));
    let out = text(&graph, r#"{"x": "[1.10, 1e2, -0, 7]"}"#).unwrap();
    assert_eq!(out.value, json!({"x": ["1.10", "1e2", "-0", "7"]}));
    let graph = one(Type::array(Type::integer()));
    let errors = text(&graph, r#"{"x": "[-9223372036854775809]"}"#).unwrap_err();
    assert_eq!(errors.0[0].code.as_str(), "int_out_of_range");
}

#[test]
fn a_number_for_a_string_deserializes_to_its_literal() {
    #[derive(Debug, Deserialize)]
    struct Args {
        x: String,
    }
    let graph = one(Type::string());
    let out = deserialize_arguments::<Args>(
        &graph,
        Arguments::Text(r#"{"x": 1.10}"#),
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(out.value.x, "1.10");
}

#[test]
fn a_parsed_number_that_cannot_be_written_back_exactly_is_an_error_for_a_string() {
    // A value already parsed has no literal: a float past 2^53 may be longer digits, rounded.
    let graph = one(Type::string());
    let errors = coerce(
        &graph,
        &json!({"x": 9.824928374923492e52}),
        &Policy::default(),
    )
    .unwrap_err();
    assert_eq!(errors.0[0].code.as_str(), "string_type");
    let out = coerce(&graph, &json!({"x": 2.5}), &Policy::default()).unwrap();
    assert_eq!(out.value, json!({"x": "2.5"}));
    let out = coerce(
        &graph,
        &json!({"x": 18446744073709551615u64}),
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(out.value, json!({"x": "18446744073709551615"}));
}

// ---------------------------------------------------------------------------------------------
// Numbers

#[test]
fn a_number_too_small_for_a_float_is_an_error_not_zero() {
    for sent in ["1e-400", r#""1e-400""#, "-2.5e-999"] {
        let (code, expected) = rejected(Type::number(), sent);
        assert_eq!(code, "float_out_of_range", "{sent}");
        assert!(expected.contains("would be read as 0"), "{expected}");
    }
    for zero in ["0", "0.0", "-0", "0e-400", "0.000"] {
        assert_eq!(accepted(Type::number(), zero).1.len(), 0, "{zero}");
    }
}

#[test]
fn a_number_too_small_for_a_float_is_refused_on_the_fast_path_too() {
    #[derive(Debug, Deserialize)]
    struct Args {
        #[allow(dead_code)]
        x: f64,
    }
    let graph = one(Type::number());
    let errors = deserialize_arguments::<Args>(
        &graph,
        Arguments::Text(r#"{"x": 1e-400}"#),
        &Policy::default(),
    )
    .unwrap_err();
    assert_eq!(errors.0[0].code.as_str(), "float_out_of_range");
    let zero = deserialize_arguments::<Args>(
        &graph,
        Arguments::Text(r#"{"x": -0.0}"#),
        &Policy::default(),
    )
    .unwrap();
    assert!(zero.value.x == 0.0 && zero.value.x.is_sign_negative());
}

#[test]
fn multiple_of_does_not_tolerate_more_as_the_quotient_grows() {
    assert_eq!(rejected(multiple_of(1.0), "1000000000.5").0, "multiple_of");
    assert_eq!(rejected(multiple_of(1.0), "2.5").1, "a multiple of 1");
    for whole in ["1000000000", "1e9", "1.5e300", "-7"] {
        assert!(accepted(multiple_of(1.0), whole).1.is_empty(), "{whole}");
    }
}

#[test]
fn multiple_of_is_decided_exactly_on_the_decimals_sent() {
    let tenth = || multiple_of(0.1);
    for multiple in ["0.3", "0.7", "-1.1", "1e300", "0", r#""0.3""#] {
        let _ = accepted(tenth(), multiple);
    }
    for not in ["0.25", "0.30000000000000001", "1e-20"] {
        assert_eq!(rejected(tenth(), not).0, "multiple_of", "{not}");
    }
    assert_eq!(rejected(multiple_of(0.25), "0.3").0, "multiple_of");
    let _ = accepted(multiple_of(0.25), "0.75");
}

#[test]
fn multiple_of_is_decided_alike_on_the_fast_path() {
    let graph = one(multiple_of(1.0));
    for (arguments, ok) in [
        (r#"{"x": 1000000000.5}"#, false),
        (r#"{"x": 1000000000}"#, true),
        (r#"{"x": 3.0}"#, true),
    ] {
        let out =
            deserialize_arguments::<Value>(&graph, Arguments::Text(arguments), &Policy::default());
        assert_eq!(out.is_ok(), ok, "{arguments}");
    }
    // Values already parsed are decided on their shortest decimal.
    let out = coerce(
        &one(multiple_of(0.1)),
        &json!({"x": 0.3}),
        &Policy::default(),
    );
    assert!(out.is_ok());
    let out = coerce(
        &one(multiple_of(1.0)),
        &json!({"x": 1000000000.5}),
        &Policy::default(),
    );
    assert!(out.is_err());
}

#[test]
fn an_i64_bound_is_emitted_in_every_dialect_and_lints_clean() {
    let graph = one(i64::describe(&mut Default::default()));
    for dialect in Dialect::ALL {
        let schema = parameters_schema(&graph, dialect).unwrap();
        let x = &schema["properties"]["x"];
        match dialect {
            // Bounds it cannot state go into the description.
            Dialect::Anthropic { strict: true } => {
                assert!(x.get("maximum").is_none(), "{x}");
                let description = x["description"].as_str().unwrap_or_default();
                assert!(description.contains("9223372036854775807"), "{x}");
            }
            _ => assert_eq!(x["maximum"], json!(i64::MAX), "{dialect:?}: {x}"),
        }
        let tools = [LintTool {
            name: "bounded",
            parameters: &graph,
        }];
        assert_eq!(lint(&tools, dialect), [], "{dialect:?}");
    }
}
