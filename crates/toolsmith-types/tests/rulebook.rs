//! The coercion rulebook (`coercion-rulebook.md`), one behaviour per test: what toolsmith
//! accepts, repairs or rejects when a model sends a value for a type.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolsmith_types::{
    ArrayType, CoerceErrors, Coerced, EnumType, Field, IntegerType, Limits, MapKeys, MapType,
    NumberType, Pattern, Policy, StringType, StructType, TaggedUnion, Type, TypeGraph, UnknownKeys,
    coerce,
};

// ---------------------------------------------------------------------------------------------
// Helpers

fn coerce_with(ty: &Type, input: &Value, policy: &Policy) -> Result<Coerced, CoerceErrors> {
    coerce(&TypeGraph::new(ty.clone()), input, policy)
}

/// Coerces leniently and expects success.
fn accepted(ty: &Type, input: Value) -> Coerced {
    match coerce_with(ty, &input, &Policy::default()) {
        Ok(out) => out,
        Err(errors) => panic!("{input} was rejected as {ty:?}:\n{errors}"),
    }
}

/// Coerces leniently and expects failure.
fn rejected(ty: &Type, input: Value) -> CoerceErrors {
    rejected_under(ty, input, &Policy::default())
}

fn rejected_under(ty: &Type, input: Value, policy: &Policy) -> CoerceErrors {
    match coerce_with(ty, &input, policy) {
        Ok(out) => panic!("{input} was accepted as {:?}", out.value),
        Err(errors) => errors,
    }
}

/// The (path, code) of every repair, in order.
fn repairs(out: &Coerced) -> Vec<(&str, &'static str)> {
    out.repairs
        .iter()
        .map(|r| (r.path.as_str(), r.code.as_str()))
        .collect()
}

/// The (path, code) of every error, in order.
fn errors(errors: &CoerceErrors) -> Vec<(&str, &'static str)> {
    errors
        .iter()
        .map(|e| (e.path.as_str(), e.code.as_str()))
        .collect()
}

/// Asserts `input` coerces to `value` with exactly `codes` repaired at the root.
fn assert_repaired(ty: &Type, input: Value, value: Value, codes: &[&str]) {
    let out = accepted(ty, input.clone());
    assert_eq!(out.value, value, "value of {input}");
    let expected: Vec<(&str, &str)> = codes.iter().map(|c| ("", *c)).collect();
    assert_eq!(repairs(&out), expected, "repairs of {input}");
}

/// Asserts `input` is accepted unchanged (as `value`) with no repair.
fn assert_accepted(ty: &Type, input: Value, value: Value) {
    assert_repaired(ty, input, value, &[]);
}

/// Asserts `input` is rejected with exactly one error, `code` at the root.
fn assert_rejected(ty: &Type, input: Value, code: &str) {
    let errs = rejected(ty, input.clone());
    assert_eq!(errors(&errs), [("", code)], "errors of {input}");
}

fn object(fields: Vec<Field>) -> Type {
    Type::Struct(StructType {
        fields,
        ..StructType::anonymous()
    })
}

fn priority() -> Type {
    Type::Enum(EnumType::strings(["low", "medium", "high"]))
}

/// Drops a deeply nested value without deep recursion.
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// `[[[...]]]` nested `depth` times around `0`.
fn nested_arrays(depth: usize) -> Value {
    let mut value = json!(0);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

// ---------------------------------------------------------------------------------------------
// Scalars

#[test]
fn integer_from_whole_float_is_repaired_to_the_integer() {
    let out = accepted(&Type::integer(), json!(42.0));
    assert_eq!(out.value, json!(42));
    assert!(out.value.is_i64());
    assert_eq!(repairs(&out), [("", "int_from_float")]);
}

#[test]
fn integer_from_float_with_fraction_is_rejected() {
    assert_rejected(&Type::integer(), json!(42.5), "int_from_float");
}

#[test]
fn integer_from_decimal_text_is_repaired() {
    for (text, n) in [("42", 42), (" -42 ", -42), ("+42", 42), ("42.0", 42)] {
        assert_repaired(
            &Type::integer(),
            json!(text),
            json!(n),
            &["int_from_string"],
        );
    }
}

#[test]
fn integer_from_other_numeric_spellings_is_rejected() {
    for text in ["1e3", "0x10", "1_000", "1,234", "$5", "50%", "", "forty"] {
        assert_rejected(&Type::integer(), json!(text), "int_parsing");
    }
}

#[test]
fn integer_and_number_reject_booleans() {
    assert_rejected(&Type::integer(), json!(true), "int_type");
    assert_rejected(&Type::number(), json!(false), "float_type");
}

#[test]
fn integer_accepts_the_whole_signed_and_unsigned_64_bit_range() {
    assert_accepted(&Type::integer(), json!(i64::MIN), json!(i64::MIN));
    assert_accepted(&Type::integer(), json!(u64::MAX), json!(u64::MAX));
}

#[test]
fn integer_outside_the_64_bit_range_is_rejected() {
    let too_big: Value = serde_json::from_str("18446744073709551616").unwrap();
    let too_small: Value = serde_json::from_str("-10000000000000000000").unwrap();
    assert_rejected(&Type::integer(), too_big, "int_out_of_range");
    assert_rejected(&Type::integer(), too_small, "int_out_of_range");
    assert_rejected(
        &Type::integer(),
        json!("99999999999999999999999"),
        "int_out_of_range",
    );
}

#[test]
fn number_from_integer_is_accepted_unchanged() {
    assert_accepted(&Type::number(), json!(42), json!(42));
    assert_accepted(&Type::number(), json!(2.5), json!(2.5));
}

#[test]
fn number_from_decimal_text_is_repaired() {
    for (text, n) in [
        ("3.25", 3.25),
        (" 2.5 ", 2.5),
        ("+1.5", 1.5),
        ("1e3", 1000.0),
    ] {
        assert_repaired(
            &Type::number(),
            json!(text),
            json!(n),
            &["number_from_string"],
        );
    }
}

#[test]
fn number_from_text_with_units_separators_or_words_is_rejected() {
    for text in ["$5", "1,5", "ten", "5 kg"] {
        assert_rejected(&Type::number(), json!(text), "float_parsing");
    }
}

#[test]
fn number_from_nan_or_infinity_text_is_rejected() {
    for text in ["nan", "NaN", "inf", "-inf", "Infinity"] {
        assert_rejected(&Type::number(), json!(text), "finite_number");
    }
}

#[test]
fn boolean_from_true_or_false_text_in_any_case_is_repaired() {
    assert_repaired(
        &Type::Boolean,
        json!("true"),
        json!(true),
        &["bool_from_string"],
    );
    assert_repaired(
        &Type::Boolean,
        json!(" FALSE "),
        json!(false),
        &["bool_from_string"],
    );
    assert_repaired(
        &Type::Boolean,
        json!("True"),
        json!(true),
        &["bool_from_string"],
    );
}

#[test]
fn boolean_from_yes_no_on_off_and_one_zero_is_repaired() {
    for (text, b) in [
        ("yes", true),
        ("NO", false),
        ("On", true),
        ("off", false),
        ("1", true),
        ("0", false),
    ] {
        assert_repaired(&Type::Boolean, json!(text), json!(b), &["bool_from_string"]);
    }
    assert_repaired(&Type::Boolean, json!(1), json!(true), &["bool_from_int"]);
    assert_repaired(&Type::Boolean, json!(0), json!(false), &["bool_from_int"]);
}

#[test]
fn boolean_from_letters_other_numbers_or_words_is_rejected() {
    for input in [
        json!("t"),
        json!("f"),
        json!("y"),
        json!("n"),
        json!("maybe"),
        json!(2),
        json!(1.0),
    ] {
        assert_rejected(&Type::Boolean, input, "bool_parsing");
    }
    assert_rejected(&Type::Boolean, json!(null), "bool_type");
}

#[test]
fn string_from_integer_or_finite_number_is_repaired_as_decimal_text() {
    assert_repaired(
        &Type::string(),
        json!(42),
        json!("42"),
        &["string_from_number"],
    );
    assert_repaired(
        &Type::string(),
        json!(2.5),
        json!("2.5"),
        &["string_from_number"],
    );
}

#[test]
fn string_from_boolean_object_or_array_of_two_is_rejected() {
    for input in [json!(true), json!({"a": 1}), json!(["a", "b"]), json!(null)] {
        assert_rejected(&Type::string(), input, "string_type");
    }
}

#[test]
fn string_is_accepted_unchanged_never_parsed_trimmed_or_case_folded() {
    for text in [" 42 ", "null", "TRUE", "[1, 2]", "{\"a\": 1}", ""] {
        assert_accepted(&Type::string(), json!(text), json!(text));
    }
}

#[test]
fn scalar_from_one_element_array_is_unwrapped() {
    assert_repaired(
        &Type::integer(),
        json!([5]),
        json!(5),
        &["unwrap_singleton"],
    );
    assert_repaired(
        &Type::string(),
        json!(["a"]),
        json!("a"),
        &["unwrap_singleton"],
    );
    assert_repaired(
        &Type::Boolean,
        json!([true]),
        json!(true),
        &["unwrap_singleton"],
    );
    assert_repaired(
        &priority(),
        json!(["low"]),
        json!("low"),
        &["unwrap_singleton"],
    );
}

#[test]
fn unwrapping_composes_with_the_element_repair() {
    assert_repaired(
        &Type::integer(),
        json!(["7"]),
        json!(7),
        &["unwrap_singleton", "int_from_string"],
    );
}

#[test]
fn scalar_from_array_of_two_or_more_or_an_invalid_element_is_rejected() {
    assert_rejected(&Type::integer(), json!([1, 2]), "int_type");
    assert_rejected(&Type::integer(), json!([]), "int_type");
    assert_rejected(&Type::integer(), json!(["x"]), "int_type");
    assert_rejected(&Type::integer(), json!([[1]]), "int_type");
}

// ---------------------------------------------------------------------------------------------
// Enums

#[test]
fn enum_accepts_its_exact_values_and_declared_aliases() {
    let ty = Type::Enum(EnumType::strings(["low", "medium", "high"]).alias("high", "urgent"));
    assert_accepted(&ty, json!("medium"), json!("medium"));
    assert_accepted(&ty, json!("urgent"), json!("high"));
}

#[test]
fn enum_in_another_case_is_repaired_to_its_declared_spelling() {
    assert_repaired(&priority(), json!("HIGH"), json!("high"), &["enum_case"]);
}

#[test]
fn enum_in_another_word_style_is_repaired_to_its_declared_spelling() {
    let ty = Type::Enum(EnumType::strings(["pending", "in_progress", "completed"]));
    assert_repaired(
        &ty,
        json!("In-Progress"),
        json!("in_progress"),
        &["enum_case"],
    );
    assert_repaired(
        &ty,
        json!("inProgress"),
        json!("in_progress"),
        &["enum_case"],
    );
}

#[test]
fn enum_with_surrounding_spaces_quotes_or_backticks_is_trimmed() {
    for text in [" high ", "\"high\"", "'high'", "`high`", " `\"high\"` "] {
        assert_repaired(&priority(), json!(text), json!("high"), &["enum_trimmed"]);
    }
    assert_repaired(
        &priority(),
        json!("`HIGH`"),
        json!("high"),
        &["enum_trimmed", "enum_case"],
    );
}

#[test]
fn integer_enum_from_numeric_text_is_repaired() {
    let ty = Type::Enum(EnumType::integers([1, 2, 3]));
    assert_accepted(&ty, json!(2), json!(2));
    assert_repaired(&ty, json!("2"), json!(2), &["enum_from_scalar"]);
}

#[test]
fn string_enum_from_boolean_or_number_naming_one_value_is_repaired() {
    let booleans = Type::Enum(EnumType::strings(["True", "False"]));
    assert_repaired(&booleans, json!(true), json!("True"), &["enum_from_scalar"]);
    let digits = Type::Enum(EnumType::strings(["1", "2"]));
    assert_repaired(&digits, json!(2), json!("2"), &["enum_from_scalar"]);
}

#[test]
fn misspelled_enum_is_rejected_with_allowed_values_and_nearest_one() {
    let ty = object(vec![Field::new("priority", priority())]);
    let errs = rejected(&ty, json!({"priority": "hgih"}));
    assert_eq!(errors(&errs), [("/priority", "enum")]);
    let error = &errs.0[0];
    assert_eq!(error.allowed, ["low", "medium", "high"]);
    assert_eq!(error.did_you_mean.as_deref(), Some("high"));
    assert_eq!(error.input, Some(json!("hgih")));
    assert_eq!(
        error.message(),
        "`priority`: expected one of \"low\", \"medium\", \"high\", got \"hgih\" \
         (did you mean \"high\"?)"
    );
}

#[test]
fn enum_substring_is_rejected() {
    assert_rejected(&priority(), json!("hi"), "enum");
    assert_rejected(&priority(), json!("very high"), "enum");
}

#[test]
fn enum_text_matching_two_values_after_normalisation_is_rejected() {
    let ty = Type::Enum(EnumType::strings(["Open", "OPEN"]));
    assert_rejected(&ty, json!("open"), "enum");
    let styles = Type::Enum(EnumType::strings(["in_progress", "in-progress"]));
    assert_rejected(&styles, json!("InProgress"), "enum");
}

// ---------------------------------------------------------------------------------------------
// Arrays

#[test]
fn array_from_text_holding_a_json_array_is_parsed() {
    let ty = Type::array(Type::integer());
    assert_repaired(&ty, json!("[1, 2]"), json!([1, 2]), &["parsed_json_string"]);
}

#[test]
fn array_from_json_text_is_parsed_before_wrapping() {
    let ty = Type::array(Type::string());
    assert_repaired(
        &ty,
        json!("[\"a\", \"b\"]"),
        json!(["a", "b"]),
        &["parsed_json_string"],
    );
}

#[test]
fn single_value_exactly_valid_as_element_is_wrapped() {
    assert_repaired(
        &Type::array(Type::string()),
        json!("urgent"),
        json!(["urgent"]),
        &["wrap_in_array"],
    );
    assert_repaired(
        &Type::array(Type::integer()),
        json!(5),
        json!([5]),
        &["wrap_in_array"],
    );
}

#[test]
fn strings_are_never_split_when_wrapped() {
    assert_repaired(
        &Type::array(Type::string()),
        json!("a, b"),
        json!(["a, b"]),
        &["wrap_in_array"],
    );
    assert_rejected(&Type::array(Type::integer()), json!("1, 2"), "list_type");
}

#[test]
fn single_value_that_needs_a_repair_is_not_wrapped() {
    assert_rejected(&Type::array(Type::integer()), json!("7"), "list_type");
}

#[test]
fn array_with_invalid_elements_reports_one_error_per_failing_index() {
    let errs = rejected(&Type::array(Type::integer()), json!([1, "x", 3, 2.5, true]));
    assert_eq!(
        errors(&errs),
        [
            ("/1", "int_parsing"),
            ("/3", "int_from_float"),
            ("/4", "int_type")
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Maps

#[test]
fn map_from_text_holding_a_json_object_is_parsed() {
    let ty = Type::map(Type::integer());
    assert_repaired(
        &ty,
        json!("{\"a\": 1}"),
        json!({"a": 1}),
        &["parsed_json_string"],
    );
}

#[test]
fn map_sent_as_key_value_entries_is_accepted_as_a_map_with_a_repair_outside_the_strict_dialects() {
    // The wire shape of the dialects that write maps so (see tests/dialects.rs); under the
    // default policy, a recorded repair.
    let ty = Type::map(Type::integer());
    let input = json!([{"key": "a", "value": 1}, {"value": 2, "key": "b"}]);
    assert_repaired(&ty, input, json!({"a": 1, "b": 2}), &["map_from_entries"]);
    assert_repaired(&ty, json!([]), json!({}), &["map_from_entries"]);
}

#[test]
fn map_entries_with_a_duplicate_key_are_rejected_at_the_entry() {
    let ty = Type::map(Type::integer());
    let input = json!([{"key": "a", "value": 1}, {"key": "a", "value": 2}]);
    let errs = rejected(&ty, input);
    assert_eq!(errors(&errs), [("/1", "duplicate_key")]);
}

#[test]
fn map_entry_errors_are_reported_at_the_entry_value() {
    let ty = Type::map(Type::integer());
    let errs = rejected(&ty, json!([{"key": "a", "value": "x"}]));
    assert_eq!(errors(&errs), [("/0/value", "int_parsing")]);
}

#[test]
fn null_as_a_map_value_that_is_not_nullable_is_rejected() {
    let errs = rejected(&Type::map(Type::integer()), json!({"a": 1, "b": null}));
    assert_eq!(errors(&errs), [("/b", "int_type")]);
    let nullable = Type::map(Type::nilable(Type::integer()));
    assert_accepted(&nullable, json!({"b": null}), json!({"b": null}));
}

#[test]
fn map_with_enum_keys_gives_keys_their_declared_spelling() {
    let ty = Type::Map(MapType {
        keys: MapKeys::Enum(EnumType::strings(["low", "high"])),
        values: Box::new(Type::integer()),
    });
    let out = accepted(&ty, json!({"low": 1, "HIGH": 2}));
    assert_eq!(out.value, json!({"low": 1, "high": 2}));
    assert_eq!(repairs(&out), [("/HIGH", "enum_case")]);
}

#[test]
fn map_with_enum_keys_rejects_two_keys_naming_the_same_value() {
    let ty = Type::Map(MapType {
        keys: MapKeys::Enum(EnumType::strings(["low", "high"])),
        values: Box::new(Type::integer()),
    });
    let errs = rejected(&ty, json!({"high": 1, "HIGH": 2}));
    assert_eq!(errors(&errs), [("/HIGH", "duplicate_key")]);
}

#[test]
fn map_with_enum_keys_rejects_an_undeclared_key_at_its_path() {
    let ty = Type::Map(MapType {
        keys: MapKeys::Enum(EnumType::strings(["low", "high"])),
        values: Box::new(Type::integer()),
    });
    let errs = rejected(&ty, json!({"low": 1, "hihg": 2}));
    assert_eq!(errors(&errs), [("/hihg", "enum")]);
    assert_eq!(errs.0[0].did_you_mean.as_deref(), Some("high"));
}

// ---------------------------------------------------------------------------------------------
// Structs

fn weather() -> Type {
    object(vec![
        Field::new("city", Type::string()),
        Field::new("units", Type::string()).optional(),
    ])
}

#[test]
fn struct_from_text_holding_a_json_object_is_parsed() {
    assert_repaired(
        &weather(),
        json!("{\"city\": \"Paris\"}"),
        json!({"city": "Paris"}),
        &["parsed_json_string"],
    );
}

#[test]
fn null_for_a_required_non_nullable_array_map_or_struct_is_rejected() {
    let ty = object(vec![
        Field::new("list", Type::array(Type::string())),
        Field::new("dict", Type::map(Type::string())),
        Field::new("place", weather()),
    ]);
    let errs = rejected(&ty, json!({"list": null, "dict": null, "place": null}));
    assert_eq!(
        errors(&errs),
        [
            ("/list", "list_type"),
            ("/dict", "dict_type"),
            ("/place", "dict_type")
        ]
    );
}

#[test]
fn unknown_struct_key_is_rejected_with_valid_names_and_suggestion() {
    let errs = rejected(&weather(), json!({"city": "Paris", "unitz": "metric"}));
    assert_eq!(errors(&errs), [("/unitz", "extra_forbidden")]);
    let error = &errs.0[0];
    assert_eq!(error.allowed, ["city", "units"]);
    assert_eq!(error.did_you_mean.as_deref(), Some("units"));
    assert_eq!(
        error.message(),
        "`unitz`: unknown field; valid fields are \"city\", \"units\" (did you mean \"units\"?)"
    );
}

#[test]
fn unknown_struct_key_is_dropped_when_the_policy_ignores_unknown_keys() {
    let policy = Policy {
        unknown_keys: UnknownKeys::Ignore,
        ..Policy::default()
    };
    let input = json!({"city": "Paris", "unitz": "metric"});
    let out = coerce_with(&weather(), &input, &policy).unwrap();
    assert_eq!(out.value, json!({"city": "Paris"}));
    assert_eq!(repairs(&out), [("/unitz", "extra_ignored")]);
}

#[test]
fn struct_with_an_additional_type_keeps_undeclared_keys_coerced() {
    let ty = Type::Struct(StructType {
        additional: Some(Box::new(Type::integer())),
        ..StructType::anonymous().field(Field::new("a", Type::integer()))
    });
    let out = accepted(&ty, json!({"extra": "2", "a": 1}));
    assert_eq!(out.value, json!({"a": 1, "extra": 2}));
    assert_eq!(repairs(&out), [("/extra", "int_from_string")]);
}

#[test]
fn key_differing_only_in_case_or_style_is_renamed() {
    let ty = object(vec![Field::new("user_name", Type::string())]);
    for key in ["userName", "UserName", "user-name", "USER_NAME"] {
        let out = accepted(&ty, json!({key: "ada"}));
        assert_eq!(out.value, json!({"user_name": "ada"}));
        assert_eq!(repairs(&out), [(format!("/{key}").as_str(), "key_renamed")]);
    }
}

#[test]
fn key_in_another_style_next_to_its_declared_spelling_is_unknown() {
    let ty = object(vec![Field::new("user_name", Type::string())]);
    let errs = rejected(&ty, json!({"user_name": "ada", "userName": "bob"}));
    assert_eq!(errors(&errs), [("/userName", "extra_forbidden")]);
}

#[test]
fn missing_required_field_is_rejected() {
    let errs = rejected(&weather(), json!({"units": "metric"}));
    assert_eq!(errors(&errs), [("/city", "missing")]);
    assert_eq!(errs.0[0].input, None);
    assert_eq!(
        errs.0[0].message(),
        "`city`: missing required field; expected a string"
    );
}

#[test]
fn missing_optional_field_is_accepted_and_its_default_filled_in() {
    let ty = object(vec![
        Field::new("city", Type::string()),
        Field::new("units", Type::string()).optional(),
        Field::new("days", Type::integer()).default_value(json!(3)),
    ]);
    assert_accepted(
        &ty,
        json!({"city": "Paris"}),
        json!({"city": "Paris", "days": 3}),
    );
}

#[test]
fn null_for_a_nullable_field_is_accepted_as_null() {
    let ty = object(vec![Field::new("note", Type::nilable(Type::string()))]);
    assert_accepted(&ty, json!({"note": null}), json!({"note": null}));
}

#[test]
fn null_for_an_optional_non_nullable_field_is_treated_as_omitted() {
    let ty = object(vec![
        Field::new("units", Type::string()).optional(),
        Field::new("days", Type::integer()).default_value(json!(3)),
    ]);
    let out = accepted(&ty, json!({"units": null, "days": null}));
    assert_eq!(out.value, json!({"days": 3}));
    assert_eq!(
        repairs(&out),
        [("/units", "null_as_omitted"), ("/days", "null_as_omitted")]
    );
}

#[test]
fn invalid_value_in_an_optional_field_is_rejected_not_dropped() {
    let ty = object(vec![Field::new("days", Type::integer()).optional()]);
    let errs = rejected(&ty, json!({"days": "soon"}));
    assert_eq!(errors(&errs), [("/days", "int_parsing")]);
}

#[test]
fn named_struct_accepts_its_own_type_tag_and_drops_it() {
    let ty = Type::Struct(StructType::new("Weather").field(Field::new("city", Type::string())));
    assert_accepted(
        &ty,
        json!({"_type": "Weather", "city": "Oslo"}),
        json!({"city": "Oslo"}),
    );
    let out = accepted(&ty, json!({"_type": "weather", "city": "Oslo"}));
    assert_eq!(out.value, json!({"city": "Oslo"}));
    assert_eq!(repairs(&out), [("/_type", "union_tag_case")]);
    let errs = rejected(&ty, json!({"_type": "Forecast", "city": "Oslo"}));
    assert_eq!(errors(&errs), [("/_type", "union_tag_invalid")]);
    assert_eq!(errs.0[0].allowed, ["Weather"]);
}

// ---------------------------------------------------------------------------------------------
// Unions discriminated by `_type`

fn pet() -> Type {
    Type::Tagged(
        TaggedUnion::new()
            .variant(
                "Cat",
                object(vec![
                    Field::new("name", Type::string()),
                    Field::new("lives", Type::integer()),
                ]),
            )
            .variant(
                "Dog",
                object(vec![
                    Field::new("name", Type::string()),
                    Field::new("good", Type::Boolean),
                ]),
            ),
    )
}

#[test]
fn valid_type_tag_checks_only_that_variant_with_paths_passing_through() {
    let ty = object(vec![Field::new("pet", pet())]);
    let errs = rejected(
        &ty,
        json!({"pet": {"_type": "Cat", "name": "Tom", "lives": "many"}}),
    );
    assert_eq!(errors(&errs), [("/pet/lives", "int_parsing")]);
}

#[test]
fn tagged_value_is_canonical_with_type_first_then_declared_fields() {
    let out = accepted(&pet(), json!({"lives": 9, "name": "Tom", "_type": "Cat"}));
    let keys: Vec<&String> = out.value.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["_type", "name", "lives"]);
    assert!(out.repairs.is_empty());
}

#[test]
fn type_tag_in_the_wrong_case_is_repaired() {
    let out = accepted(&pet(), json!({"_type": "dog", "name": "Rex", "good": true}));
    assert_eq!(
        out.value,
        json!({"_type": "Dog", "name": "Rex", "good": true})
    );
    assert_eq!(repairs(&out), [("/_type", "union_tag_case")]);
}

#[test]
fn unknown_type_tag_is_rejected_listing_the_valid_tags() {
    let errs = rejected(&pet(), json!({"_type": "Dogs", "name": "Rex"}));
    assert_eq!(errors(&errs), [("/_type", "union_tag_invalid")]);
    assert_eq!(errs.0[0].allowed, ["Cat", "Dog"]);
    assert_eq!(errs.0[0].did_you_mean.as_deref(), Some("Dog"));
}

#[test]
fn missing_type_tag_is_inferred_when_exactly_one_variant_accepts_the_value_as_is() {
    let out = accepted(&pet(), json!({"name": "Rex", "good": true}));
    assert_eq!(
        out.value,
        json!({"_type": "Dog", "name": "Rex", "good": true})
    );
    assert_eq!(repairs(&out), [("/_type", "union_tag_inferred")]);
}

#[test]
fn missing_type_tag_is_rejected_when_no_or_several_variants_fit() {
    let errs = rejected(&pet(), json!({"name": "Rex"}));
    assert_eq!(errors(&errs), [("", "union_tag_not_found")]);
    assert_eq!(errs.0[0].allowed, ["Cat", "Dog"]);
    // Fits only with a repair: not inferred.
    let errs = rejected(&pet(), json!({"name": "Rex", "good": "yes"}));
    assert_eq!(errors(&errs), [("", "union_tag_not_found")]);
}

// ---------------------------------------------------------------------------------------------
// Untagged unions

#[test]
fn untagged_union_takes_the_first_member_accepting_the_value_as_is() {
    let ty = Type::Union(vec![Type::string(), Type::integer()]);
    assert_accepted(&ty, json!(42), json!(42));
    assert_accepted(&ty, json!("42"), json!("42"));
}

#[test]
fn untagged_union_falls_back_to_the_first_member_accepting_with_repairs() {
    let ty = Type::Union(vec![Type::integer(), Type::Boolean]);
    assert_repaired(&ty, json!("yes"), json!(true), &["bool_from_string"]);
}

#[test]
fn untagged_union_no_member_accepts_is_rejected_naming_the_members() {
    let ty = Type::Union(vec![Type::integer(), Type::array(Type::string())]);
    let errs = rejected(&ty, json!({"a": 1}));
    assert_eq!(errors(&errs), [("", "union_no_match")]);
    assert_eq!(errs.0[0].expected, "an integer or an array");
}

// ---------------------------------------------------------------------------------------------
// Constraints and canonical form

#[test]
fn integer_bounds_and_multiple_are_checked_after_coercion() {
    let ty = Type::Integer(IntegerType {
        multiple_of: Some(5),
        ..IntegerType::range(10, 100)
    });
    assert_repaired(&ty, json!("20"), json!(20), &["int_from_string"]);
    assert_rejected(&ty, json!("5"), "greater_than_equal");
    assert_rejected(&ty, json!(105), "less_than_equal");
    assert_rejected(&ty, json!(12), "multiple_of");
    let exclusive = Type::Integer(IntegerType {
        exclusive_minimum: Some(0),
        exclusive_maximum: Some(10),
        ..IntegerType::default()
    });
    assert_rejected(&exclusive, json!(0), "greater_than");
    assert_rejected(&exclusive, json!(10), "less_than");
}

#[test]
fn number_bounds_and_multiple_are_checked_after_coercion() {
    let ty = Type::Number(NumberType {
        minimum: Some(0.0),
        maximum: Some(1.0),
        multiple_of: Some(0.1),
        ..NumberType::default()
    });
    assert_accepted(&ty, json!(0.3), json!(0.3));
    assert_rejected(&ty, json!("-0.5"), "greater_than_equal");
    assert_rejected(&ty, json!(1.5), "less_than_equal");
    assert_rejected(&ty, json!(0.25), "multiple_of");
    let errs = rejected(&ty, json!(2));
    assert_eq!(errs.0[0].expected, "at most 1");
}

#[test]
fn string_length_in_characters_and_pattern_are_checked() {
    let ty = Type::String(StringType {
        min_length: Some(2),
        max_length: Some(5),
        pattern: Some(Pattern::new("^[a-zé]+$").unwrap()),
        format: None,
    });
    assert_accepted(&ty, json!("héllo"), json!("héllo"));
    assert_rejected(&ty, json!("a"), "string_too_short");
    assert_rejected(&ty, json!("abcdef"), "string_too_long");
    assert_rejected(&ty, json!("ab1"), "string_pattern_mismatch");
}

#[test]
fn array_item_count_bounds_are_checked() {
    let ty = Type::Array(ArrayType {
        min_items: Some(2),
        max_items: Some(3),
        ..ArrayType::new(Type::integer())
    });
    assert_accepted(&ty, json!([1, 2]), json!([1, 2]));
    let errs = rejected(&ty, json!([1]));
    assert_eq!(errors(&errs), [("", "too_short")]);
    assert_eq!(errs.0[0].expected, "at least 2 items");
    assert_rejected(&ty, json!([1, 2, 3, 4]), "too_long");
}

#[test]
fn canonical_struct_lists_declared_fields_in_declaration_order() {
    let out = accepted(&weather(), json!({"units": "metric", "city": "Oslo"}));
    let keys: Vec<&String> = out.value.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["city", "units"]);
    assert!(out.repairs.is_empty());
}

#[test]
fn canonical_array_keeps_valid_elements_around_a_repaired_one() {
    let out = accepted(&Type::array(Type::integer()), json!([1, "2", 3]));
    assert_eq!(out.value, json!([1, 2, 3]));
    assert_eq!(repairs(&out), [("/1", "int_from_string")]);
}

#[test]
fn canonical_value_coerces_to_itself_without_repairs() {
    let out = accepted(&task_request(), messy_task());
    assert!(!out.repairs.is_empty());
    let again = accepted(&task_request(), out.value.clone());
    assert_eq!(again.value, out.value);
    assert!(again.repairs.is_empty(), "{:?}", again.repairs);
}

// ---------------------------------------------------------------------------------------------
// Limits

fn tree() -> TypeGraph {
    let mut graph = TypeGraph::new(Type::reference("Node"));
    graph.defs.insert(
        "Node".to_owned(),
        Type::Struct(
            StructType::new("Node")
                .field(Field::new("children", Type::array(Type::reference("Node")))),
        ),
    );
    graph
}

#[test]
fn nesting_past_the_depth_limit_is_rejected_for_a_recursive_type_without_crashing() {
    let mut input = json!({"children": []});
    for _ in 0..10_000 {
        // Built by hand: `json!` would copy `input` recursively.
        let mut node = serde_json::Map::new();
        node.insert("children".to_owned(), Value::Array(vec![input]));
        input = Value::Object(node);
    }
    let errs = coerce(&tree(), &input, &Policy::default()).unwrap_err();
    dismantle(input);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs.0[0].code.as_str(), "too_deep");
    assert_eq!(errs.0[0].path.matches("/children/0").count(), 64);
}

#[test]
fn nesting_past_the_depth_limit_is_rejected_for_arrays_and_any_without_crashing() {
    let input = nested_arrays(10_000);
    for ty in [Type::Any, Type::nilable(Type::array(Type::Any))] {
        let errs = coerce(&TypeGraph::new(ty), &input, &Policy::default()).unwrap_err();
        assert_eq!(errors(&errs).len(), 1);
        assert_eq!(errs.0[0].code.as_str(), "too_deep");
        assert_eq!(errs.0[0].path.split('/').count(), 130);
    }
    let mut recursive = TypeGraph::new(Type::reference("Nested"));
    recursive.defs.insert(
        "Nested".to_owned(),
        Type::Union(vec![
            Type::integer(),
            Type::array(Type::reference("Nested")),
        ]),
    );
    let errs = coerce(&recursive, &input, &Policy::default()).unwrap_err();
    dismantle(input);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs.0[0].code.as_str(), "too_deep");
    assert_eq!(errs.0[0].path, "/0".repeat(129));
}

#[test]
fn nesting_up_to_the_depth_limit_is_accepted() {
    let input = nested_arrays(128);
    let out = coerce(&TypeGraph::new(Type::Any), &input, &Policy::default()).unwrap();
    assert_eq!(out.value, input);
    let too_deep = nested_arrays(129);
    let errs = coerce(&TypeGraph::new(Type::Any), &too_deep, &Policy::default()).unwrap_err();
    assert_eq!(errors(&errs), [("/0".repeat(129).as_str(), "too_deep")]);
}

#[test]
fn strings_past_the_size_limit_are_rejected() {
    let policy = Policy {
        limits: Limits {
            max_string_bytes: 8,
            ..Limits::default()
        },
        ..Policy::default()
    };
    let ty = object(vec![
        Field::new("a", Type::string()),
        Field::new("b", Type::Any),
    ]);
    let errs = rejected_under(
        &ty,
        json!({"a": "123456789", "b": {"c": "123456789"}}),
        &policy,
    );
    assert_eq!(errors(&errs), [("/a", "too_large"), ("/b/c", "too_large")]);
}

#[test]
fn arrays_and_objects_past_the_item_limit_are_rejected() {
    let policy = Policy {
        limits: Limits {
            max_items: 3,
            ..Limits::default()
        },
        ..Policy::default()
    };
    let ty = object(vec![
        Field::new("a", Type::array(Type::integer())),
        Field::new("b", Type::map(Type::integer())),
    ]);
    let input = json!({"a": [1, 2, 3, 4], "b": {"w": 1, "x": 2, "y": 3, "z": 4}});
    let errs = rejected_under(&ty, input, &policy);
    assert_eq!(errors(&errs), [("/a", "too_large"), ("/b", "too_large")]);
}

#[test]
fn errors_past_the_cap_end_with_one_too_many_errors_error() {
    let policy = Policy {
        limits: Limits {
            max_errors: 3,
            ..Limits::default()
        },
        ..Policy::default()
    };
    let errs = rejected_under(
        &Type::array(Type::integer()),
        Value::Array(vec![json!("a"); 10]),
        &policy,
    );
    assert_eq!(
        errors(&errs),
        [
            ("/0", "int_parsing"),
            ("/1", "int_parsing"),
            ("/2", "int_parsing"),
            ("", "too_many_errors")
        ]
    );
    assert!(errs.0[3].expected.contains("7 more"));
}

#[test]
fn type_recursing_without_nesting_is_an_error_not_a_crash() {
    let mut graph = TypeGraph::new(Type::reference("Loop"));
    graph.defs.insert(
        "Loop".to_owned(),
        Type::Union(vec![Type::reference("Loop"), Type::Boolean]),
    );
    assert!(coerce(&graph, &json!("x"), &Policy::default()).is_err());
    let mut wrapped = TypeGraph::new(Type::reference("List"));
    wrapped
        .defs
        .insert("List".to_owned(), Type::array(Type::reference("List")));
    assert!(coerce(&wrapped, &json!(5), &Policy::default()).is_err());
}

#[test]
fn unions_nested_in_unions_are_bounded_in_work() {
    // Both variants recurse: trying every variant at every level would take 2^60 steps.
    let node = |tag: &str| {
        object(vec![
            Field::new(tag, Type::string()).optional(),
            Field::new("child", Type::reference("Tree")),
        ])
    };
    let mut graph = TypeGraph::new(Type::reference("Tree"));
    graph.defs.insert(
        "Tree".to_owned(),
        Type::Tagged(
            TaggedUnion::new()
                .variant("A", node("a"))
                .variant("B", node("b")),
        ),
    );
    let mut input = json!({});
    for _ in 0..60 {
        let mut parent = serde_json::Map::new();
        parent.insert("child".to_owned(), input);
        input = Value::Object(parent);
    }
    let errs = coerce(&graph, &input, &Policy::default()).unwrap_err();
    assert_eq!(errs.0[0].path, "");
}

#[test]
fn dangling_reference_is_a_schema_error() {
    let graph = TypeGraph::new(object(vec![Field::new("a", Type::reference("Missing"))]));
    let errs = coerce(&graph, &json!({"a": 1}), &Policy::default()).unwrap_err();
    assert_eq!(errors(&errs), [("/a", "schema_invalid")]);
}

// ---------------------------------------------------------------------------------------------
// Policy and reporting

#[test]
fn strict_policy_refuses_every_repair_at_its_path() {
    let ty = object(vec![
        Field::new("count", Type::integer()),
        Field::new("tags", Type::array(Type::string())),
        Field::new("priority", priority()),
    ]);
    let input = json!({"count": "42", "tags": "a", "priority": "HIGH"});
    let errs = rejected_under(&ty, input, &Policy::strict());
    assert_eq!(
        errors(&errs),
        [
            ("/count", "repair_refused"),
            ("/tags", "repair_refused"),
            ("/priority", "repair_refused")
        ]
    );
    assert_eq!(errs.0[0].expected, "an integer");
    assert_eq!(errs.0[0].input, Some(json!("42")));
}

#[test]
fn strict_policy_refuses_each_step_of_a_composed_repair() {
    let errs = rejected_under(&Type::integer(), json!(["7"]), &Policy::strict());
    assert_eq!(
        errors(&errs),
        [("", "repair_refused"), ("", "repair_refused")]
    );
}

#[test]
fn strict_policy_accepts_canonical_input() {
    let canonical = accepted(&task_request(), messy_task()).value;
    let out = coerce_with(&task_request(), &canonical, &Policy::strict()).unwrap();
    assert_eq!(out.value, canonical);
}

#[test]
fn all_errors_are_reported_at_once_in_document_order() {
    let ty = object(vec![
        Field::new("a", Type::integer()),
        Field::new("b", Type::array(Type::Boolean)),
        Field::new("c", priority()),
        Field::new("d", Type::string()),
    ]);
    let input = json!({"b": [true, "maybe"], "a": "x", "zz": 1, "c": "none"});
    let errs = rejected(&ty, input);
    assert_eq!(
        errors(&errs),
        [
            ("/b/1", "bool_parsing"),
            ("/a", "int_parsing"),
            ("/zz", "extra_forbidden"),
            ("/c", "enum"),
            ("/d", "missing"),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// The TaskRequest example

fn task_request() -> Type {
    let metadata = Type::Struct(
        StructType::new("TaskMetadata")
            .field(Field::new("id", Type::string()))
            .field(Field::new("priority", priority()))
            .field(Field::new("tags", Type::array(Type::string())))
            .field(Field::new("estimated_hours", Type::number()).optional()),
    );
    Type::Struct(
        StructType::new("TaskRequest")
            .field(Field::new("title", Type::string()))
            .field(Field::new("description", Type::string()))
            .field(Field::new(
                "status",
                Type::Enum(EnumType::strings(["pending", "in_progress", "completed"])),
            ))
            .field(Field::new("metadata", metadata))
            .field(Field::new("assignees", Type::array(Type::string()))),
    )
}

fn messy_task() -> Value {
    json!({
        "title": "Ship the coercer",
        "description": "Make every rulebook row pass",
        "status": "In-Progress",
        "metadata": {
            "id": "T-1",
            "priority": "HIGH",
            "tags": "[\"core\", \"types\"]",
            "estimated_hours": "3.5"
        },
        "assignees": "ada"
    })
}

#[test]
fn task_request_with_messy_input_is_repaired_into_its_canonical_value() {
    let out = accepted(&task_request(), messy_task());
    assert_eq!(
        out.value,
        json!({
            "title": "Ship the coercer",
            "description": "Make every rulebook row pass",
            "status": "in_progress",
            "metadata": {
                "id": "T-1",
                "priority": "high",
                "tags": ["core", "types"],
                "estimated_hours": 3.5
            },
            "assignees": ["ada"]
        })
    );
    assert_eq!(
        repairs(&out),
        [
            ("/status", "enum_case"),
            ("/metadata/priority", "enum_case"),
            ("/metadata/tags", "parsed_json_string"),
            ("/metadata/estimated_hours", "number_from_string"),
            ("/assignees", "wrap_in_array"),
        ]
    );
}

#[test]
fn task_request_in_canonical_form_is_accepted_unchanged() {
    let input = json!({
        "title": "t",
        "description": "d",
        "status": "pending",
        "metadata": {"id": "1", "priority": "low", "tags": []},
        "assignees": ["ada", "bob"]
    });
    assert_accepted(&task_request(), input.clone(), input);
}

// ---------------------------------------------------------------------------------------------
// Edges between rows

#[test]
fn a_key_naming_a_field_in_another_style_is_renamed_even_where_extra_keys_are_allowed() {
    let ty = Type::Struct(StructType {
        fields: vec![Field::new("user_name", Type::string()).optional()],
        additional: Some(Box::new(Type::Any)),
        ..StructType::anonymous()
    });
    let out = accepted(&ty, json!({"userName": "ada", "other": 1}));
    assert_eq!(out.value, json!({"user_name": "ada", "other": 1}));
    assert_eq!(repairs(&out), [("/userName", "key_renamed")]);
}

#[test]
fn a_declared_enum_value_wins_over_another_values_alias_of_the_same_spelling() {
    let ty = Type::Enum(EnumType::strings(["a", "b"]).alias("a", "b"));
    assert_accepted(&ty, json!("b"), json!("b"));
    let out = coerce_with(&ty, &json!("b"), &Policy::strict()).unwrap();
    assert!(out.repairs.is_empty());
}

#[test]
fn a_long_chain_of_references_resolves() {
    let mut graph = TypeGraph::new(Type::reference("a0"));
    for i in 0..40 {
        graph
            .defs
            .insert(format!("a{i}"), Type::reference(format!("a{}", i + 1)));
    }
    graph.defs.insert("a40".to_owned(), Type::string());
    let out = coerce(&graph, &json!("x"), &Policy::strict()).unwrap();
    assert_eq!(out.value, json!("x"));
}

#[test]
fn a_default_is_filled_in_its_canonical_form() {
    let ty = object(vec![
        Field::new("n", Type::integer()).default_value(json!(5.0)),
    ]);
    let out = accepted(&ty, json!({}));
    assert_eq!(out.value, json!({"n": 5}));
    assert!(out.value["n"].is_i64());
    assert!(out.repairs.is_empty());
}

#[test]
fn a_default_that_does_not_fit_its_field_is_an_error_in_the_type() {
    let ty = object(vec![
        Field::new("n", Type::integer()).default_value(json!("five")),
    ]);
    let errs = rejected(&ty, json!({}));
    assert_eq!(errors(&errs), [("/n", "schema_invalid")]);
    assert!(errs.0[0].message().contains("default"), "{errs}");
    // A value sent for the field does not need the default.
    assert_accepted(&ty, json!({"n": 3}), json!({"n": 3}));
}

#[test]
fn a_default_out_of_its_fields_bounds_is_reported_with_the_bound_it_breaks() {
    // The real reason, not "5 is not a number".
    let ty = object(vec![
        Field::new(
            "n",
            Type::Number(NumberType {
                maximum: Some(3.0),
                ..NumberType::default()
            }),
        )
        .default_value(json!(5)),
    ]);
    let errs = rejected(&ty, json!({}));
    assert_eq!(errors(&errs), [("/n", "schema_invalid")]);
    let message = errs.0[0].message();
    assert!(message.contains("expected at most 3, got 5"), "{message}");
    assert!(!message.contains("not a number"), "{message}");
}

#[test]
fn integer_enum_map_keys_spelled_exactly_need_no_repair() {
    let ty = Type::Map(MapType {
        keys: MapKeys::Enum(EnumType::integers([1, 2])),
        values: Box::new(Type::Boolean),
    });
    let out = coerce_with(&ty, &json!({"1": true, "2": false}), &Policy::strict()).unwrap();
    assert_eq!(out.value, json!({"1": true, "2": false}));
    assert!(out.repairs.is_empty());
    assert_eq!(errors(&rejected(&ty, json!({"3": true}))), [("/3", "enum")]);
}

#[test]
fn ignoring_unknown_keys_still_drops_them_in_strict_mode() {
    let ty = object(vec![Field::new("city", Type::string())]);
    let policy = Policy {
        unknown_keys: UnknownKeys::Ignore,
        ..Policy::strict()
    };
    let out = coerce_with(&ty, &json!({"city": "Paris", "mood": "sunny"}), &policy).unwrap();
    assert_eq!(out.value, json!({"city": "Paris"}));
    assert_eq!(repairs(&out), [("/mood", "extra_ignored")]);
}

#[test]
fn many_values_whose_union_variant_is_inferred_stay_within_the_work_budget() {
    // Ten fields a variant: inferring the tag costs more speculation than one step earns.
    let variant = |name: &str, field: &str| {
        let mut st = StructType::new(name)
            .field(Field::new(field, Type::integer()))
            .field(Field::new("label", Type::string()));
        for i in 0..8 {
            st = st.field(Field::new(format!("note{i}"), Type::string()).optional());
        }
        Type::Struct(st)
    };
    let shape = Type::Tagged(
        TaggedUnion::new()
            .variant("Circle", variant("Circle", "radius"))
            .variant("Square", variant("Square", "side"))
            .variant("Line", variant("Line", "length")),
    );
    let items: Vec<Value> = (0..20_000)
        .map(|i| {
            let mut item = json!({"side": i, "label": "s"});
            for n in 0..8 {
                item[format!("note{n}")] = json!("n");
            }
            item
        })
        .collect();
    let out = accepted(&Type::array(shape), Value::Array(items));
    // One inferred tag a value: the first 100 listed, the rest counted.
    assert_eq!(out.repairs.len(), 101);
    assert_eq!(out.repairs[100].code.as_str(), "too_many_repairs");
    assert_eq!(out.repairs[100].not_shown, Some(19_900));
    assert_eq!(out.value[19_999]["_type"], "Square");
    assert_eq!(out.value[19_999]["note7"], "n");
}
