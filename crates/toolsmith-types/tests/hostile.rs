//! Hostile input: what coercion makes of arguments built to be costly (many keys that look like
//! one field, many unknown keys), and how loosely it matches names in another word style.
//! Costs themselves are measured by hand and in benchmarks, never asserted here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value, json};
use toolsmith_types::{
    Arguments, CoerceErrors, Coerced, EnumType, ErrorCode, Field, Limits, Policy, StructType, Type,
    TypeGraph, UnknownKeys, coerce, coerce_arguments,
};

fn object(fields: Vec<Field>) -> TypeGraph {
    TypeGraph::new(Type::Struct(StructType {
        fields,
        ..StructType::anonymous()
    }))
}

fn codes(errors: &CoerceErrors) -> Vec<(&str, &'static str)> {
    errors
        .iter()
        .map(|e| (e.path.as_str(), e.code.as_str()))
        .collect()
}

fn repairs(out: &Coerced) -> Vec<(&str, &'static str)> {
    out.repairs
        .iter()
        .map(|r| (r.path.as_str(), r.code.as_str()))
        .collect()
}

/// 32768 distinct keys made of `a` and `b` in either case with runs of `_`, `-` and spaces
/// around and between them (`a_b`'s "style" under a matcher that deletes separators), never
/// `a_b` itself.
fn keys_like_a_b() -> Vec<String> {
    let runs: Vec<String> = {
        let seps = ["", "_", "-", " "];
        let mut runs = vec![String::new()];
        for _ in 0..3 {
            runs = runs
                .iter()
                .flat_map(|run| seps.iter().map(move |s| format!("{run}{s}")))
                .collect();
        }
        runs.sort();
        runs.dedup();
        runs
    };
    let mut keys = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for lead in &runs {
        for middle in &runs {
            for trail in &runs {
                for a in ["a", "A"] {
                    for b in ["b", "B"] {
                        let key = format!("{lead}{a}{middle}{b}{trail}");
                        if key != "a_b" && seen.insert(key.clone()) {
                            keys.push(key);
                        }
                    }
                }
            }
        }
    }
    keys.truncate(32_768);
    assert_eq!(keys.len(), 32_768);
    keys
}

fn all_x(keys: &[String]) -> Value {
    Value::Object(
        keys.iter()
            .map(|k| (k.clone(), json!("x")))
            .collect::<Map<_, _>>(),
    )
}

#[test]
fn many_keys_looking_like_one_field_are_each_unknown_and_none_renamed() {
    let graph = object(vec![Field::new("a_b", Type::string())]);
    let keys = keys_like_a_b();
    let errors = coerce(&graph, &all_x(&keys), &Policy::default()).unwrap_err();
    // Several keys name `a_b` in some style (`A_B`, `a-b`, `aB`...), so none is renamed; the
    // rest name nothing. Every key is unknown and `a_b` is missing: the first 100 are kept.
    assert_eq!(errors.len(), 101);
    assert!(
        errors
            .iter()
            .take(100)
            .zip(&keys)
            .all(|(e, key)| e.code == ErrorCode::ExtraForbidden
                && e.path == format!("/{}", key.replace('~', "~0").replace('/', "~1")))
    );
    let last = &errors.0[100];
    assert_eq!(last.code, ErrorCode::TooManyErrors);
    assert!(last.expected.contains("32669 more"), "{}", last.expected);
}

/// `policy`, listing every repair however many there are.
fn every_repair_listed(policy: Policy) -> Policy {
    Policy {
        limits: Limits {
            max_repairs: usize::MAX,
            ..policy.limits.clone()
        },
        ..policy
    }
}

#[test]
fn among_many_unknown_keys_the_one_key_naming_a_field_in_another_style_is_renamed() {
    let graph = object(vec![Field::new("a_b", Type::string())]);
    let mut input: Map<String, Value> = (0..32_768).map(|i| (format!("k{i}"), json!(i))).collect();
    input.insert("aB".to_owned(), json!("found"));
    let policy = every_repair_listed(Policy {
        unknown_keys: UnknownKeys::Ignore,
        ..Policy::default()
    });
    let out = coerce(&graph, &Value::Object(input), &policy).unwrap();
    assert_eq!(out.value, json!({"a_b": "found"}));
    assert_eq!(out.repairs.len(), 32_769);
    assert_eq!(repairs(&out)[32_768], ("/aB", "key_renamed"));
}

#[test]
fn many_keys_in_styles_of_one_field_next_to_its_name_leave_the_field_as_sent() {
    let graph = object(vec![Field::new("a_b", Type::string())]);
    let keys = keys_like_a_b();
    let mut input = Map::new();
    input.insert("a_b".to_owned(), json!("kept"));
    if let Value::Object(rest) = all_x(&keys) {
        input.extend(rest);
    }
    let policy = every_repair_listed(Policy {
        unknown_keys: UnknownKeys::Ignore,
        ..Policy::default()
    });
    let out = coerce(&graph, &Value::Object(input), &policy).unwrap();
    assert_eq!(out.value, json!({"a_b": "kept"}));
    assert_eq!(out.repairs.len(), keys.len());
    assert!(
        out.repairs
            .iter()
            .all(|r| r.code.as_str() == "extra_ignored")
    );
}

/// 100,000 keys no struct declares, as argument text.
fn unknown_keys_text(count: usize) -> String {
    let entries: Vec<String> = (0..count).map(|i| format!("\"k{i}\":{i}")).collect();
    format!("{{{}}}", entries.join(","))
}

fn wide_struct(fields: usize) -> TypeGraph {
    object(
        (0..fields)
            .map(|i| Field::new(format!("field_number_{i}"), Type::string()).optional())
            .collect(),
    )
}

#[test]
fn errors_past_the_cap_are_counted_and_the_last_error_says_how_many_were_cut() {
    let text = unknown_keys_text(100_000);
    let errors = coerce_arguments(
        &wide_struct(300),
        Arguments::Text(&text),
        &Policy::default(),
    )
    .unwrap_err();
    assert_eq!(errors.len(), 101);
    for (i, error) in errors.iter().take(100).enumerate() {
        assert_eq!(error.path, format!("/k{i}"));
        assert_eq!(error.code, ErrorCode::ExtraForbidden);
        assert_eq!(error.allowed.len(), 300);
    }
    let last = &errors.0[100];
    assert_eq!(
        (last.path.as_str(), last.code),
        ("", ErrorCode::TooManyErrors)
    );
    assert_eq!(
        last.expected,
        "at most 100 problems reported at once; 99900 more not shown"
    );
}

/// The errors of `input` under a strict policy keeping at most `max_errors`.
fn strict_errors(graph: &TypeGraph, input: &Value, max_errors: usize) -> CoerceErrors {
    let policy = Policy {
        limits: Limits {
            max_errors,
            ..Limits::default()
        },
        ..Policy::strict()
    };
    coerce(graph, input, &policy).unwrap_err()
}

#[test]
fn a_capped_report_keeps_the_first_errors_and_counts_every_other_one() {
    // Each element is a union whose first member fails only on refused repairs (two of them),
    // so it is the member reported, also when the cap was reached before it was tried.
    let pair = Type::Struct(
        StructType::anonymous()
            .field(Field::new("a", Type::integer()))
            .field(Field::new("b", Type::integer())),
    );
    let graph = TypeGraph::new(Type::array(Type::Union(vec![pair, Type::string()])));
    let input = json!([{"a": "1", "b": "2"}, {"a": "1", "b": "2"}, {"a": "1", "b": "2"}, 5]);
    let all = strict_errors(&graph, &input, usize::MAX);
    assert_eq!(all.len(), 7);
    assert!(
        all.iter()
            .take(6)
            .all(|e| e.code == ErrorCode::RepairRefused)
    );
    for max in [0, 1, 2, 3, 5, 6] {
        let capped = strict_errors(&graph, &input, max);
        assert_eq!(capped.len(), max + 1, "cap {max}");
        assert_eq!(capped.0[..max], all.0[..max], "cap {max}");
        let last = &capped.0[max];
        assert_eq!(last.code, ErrorCode::TooManyErrors, "cap {max}");
        let more = format!("; {} more not shown", 7 - max);
        assert!(
            last.expected.ends_with(&more),
            "cap {max}: {}",
            last.expected
        );
    }
    assert_eq!(strict_errors(&graph, &input, 7), all);
}

#[test]
fn a_cap_of_zero_errors_still_says_that_there_were_errors() {
    let policy = Policy {
        limits: Limits {
            max_errors: 0,
            ..Limits::default()
        },
        ..Policy::default()
    };
    let graph = object(vec![Field::new("a", Type::integer())]);
    let errors = coerce(&graph, &json!({"a": "x", "b": 1}), &policy).unwrap_err();
    assert_eq!(codes(&errors), [("", "too_many_errors")]);
    assert!(errors.0[0].expected.contains("2 more"));
}

#[test]
fn a_key_too_long_to_be_a_typo_gets_no_suggestion() {
    let graph = object(vec![Field::new("title", Type::string())]);
    let long = format!("title{}", "x".repeat(100_000));
    let errors = coerce(
        &graph,
        &json!({"title": "t", long.clone(): 1}),
        &Policy::default(),
    )
    .unwrap_err();
    assert_eq!(errors.0[0].code, ErrorCode::ExtraForbidden);
    assert_eq!(errors.0[0].did_you_mean, None);
    let near = coerce(&graph, &json!({"titel": 1}), &Policy::default()).unwrap_err();
    assert_eq!(near.0[0].did_you_mean.as_deref(), Some("title"));
}

// ---------------------------------------------------------------------------------------------
// Word style: case and one separator between words, never characters.

fn status() -> Type {
    Type::Enum(EnumType::strings(["pending", "in_progress", "done"]))
}

#[test]
fn an_enum_value_in_another_word_style_is_matched() {
    let graph = TypeGraph::new(status());
    for text in [
        "In-Progress",
        "IN_PROGRESS",
        "in progress",
        "inProgress",
        "InProgress",
    ] {
        let out = coerce(&graph, &json!(text), &Policy::default()).unwrap();
        assert_eq!(out.value, json!("in_progress"), "{text}");
        assert_eq!(repairs(&out), [("", "enum_case")], "{text}");
    }
}

#[test]
fn an_enum_value_with_separators_inside_words_or_around_them_is_rejected() {
    let graph = TypeGraph::new(status());
    for text in [
        "i_n_progress",
        "--done--",
        "d o n e",
        "_done",
        "done_",
        "in__progress",
        "in-_progress",
        "in_progress-",
        "inprogress",
        "INPROGRESS",
        "in_pro_gress",
        "in-progress_x",
    ] {
        let errors = coerce(&graph, &json!(text), &Policy::default()).unwrap_err();
        assert_eq!(codes(&errors), [("", "enum")], "{text}");
    }
}

#[test]
fn an_enum_value_mixing_separators_is_rejected() {
    let graph = TypeGraph::new(Type::Enum(EnumType::strings(["one_two_three"])));
    assert!(coerce(&graph, &json!("one-two_three"), &Policy::default()).is_err());
    let out = coerce(&graph, &json!("One Two Three"), &Policy::default()).unwrap();
    assert_eq!(out.value, json!("one_two_three"));
}

#[test]
fn a_key_in_another_word_style_is_renamed_and_one_with_split_words_is_unknown() {
    let graph = object(vec![Field::new("title", Type::string()).optional()]);
    for key in ["t_i_t_l_e", "--title--", "t i t l e", "TiTle", "_title"] {
        let errors = coerce(&graph, &json!({key: "x"}), &Policy::default()).unwrap_err();
        assert_eq!(codes(&errors)[0].1, "extra_forbidden", "{key}");
    }
    let graph = object(vec![Field::new("due_date", Type::string())]);
    for key in [
        "dueDate", "DueDate", "DUE_DATE", "due-date", "due date", "Due-Date",
    ] {
        let out = coerce(&graph, &json!({key: "x"}), &Policy::default()).unwrap();
        assert_eq!(out.value, json!({"due_date": "x"}), "{key}");
        assert_eq!(repairs(&out)[0].1, "key_renamed", "{key}");
    }
    for key in ["duedate", "d_ue_date", "due__date", "due_date_"] {
        assert!(
            coerce(&graph, &json!({key: "x"}), &Policy::default()).is_err(),
            "{key}"
        );
    }
}

#[test]
fn acronyms_and_digits_in_camel_case_read_as_words() {
    let graph = object(vec![
        Field::new("http_server", Type::string()),
        Field::new("item2_name", Type::string()),
    ]);
    let out = coerce(
        &graph,
        &json!({"HTTPServer": "a", "item2Name": "b"}),
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(out.value, json!({"http_server": "a", "item2_name": "b"}));
}

// ---------------------------------------------------------------------------------------------
// Field aliases (serde's `alias`).

fn colour() -> TypeGraph {
    object(vec![
        Field::new("color", Type::string()).alias("colour"),
        Field::new("size", Type::integer()).optional(),
    ])
}

#[test]
fn a_field_sent_under_an_alias_is_accepted_without_a_repair_under_its_name() {
    for policy in [Policy::default(), Policy::strict()] {
        let out = coerce(&colour(), &json!({"colour": "red", "size": 2}), &policy).unwrap();
        assert_eq!(out.value, json!({"color": "red", "size": 2}));
        assert!(out.repairs.is_empty());
    }
    let text = r#"{"size": 2, "colour": "red"}"#;
    let out = coerce_arguments(&colour(), Arguments::Text(text), &Policy::strict()).unwrap();
    assert_eq!(out.value, json!({"color": "red", "size": 2}));
}

#[test]
fn a_field_sent_under_its_name_and_an_alias_is_a_duplicate() {
    let errors = coerce(
        &colour(),
        &json!({"color": "red", "colour": "blue"}),
        &Policy::default(),
    )
    .unwrap_err();
    assert_eq!(codes(&errors), [("/colour", "duplicate_key")]);
    let errors = coerce(
        &colour(),
        &json!({"colour": "blue", "color": "red"}),
        &Policy::default(),
    )
    .unwrap_err();
    assert_eq!(codes(&errors), [("/color", "duplicate_key")]);
}

#[test]
fn an_alias_in_another_word_style_is_renamed_as_a_repair() {
    let out = coerce(&colour(), &json!({"Colour": "red"}), &Policy::default()).unwrap();
    assert_eq!(out.value, json!({"color": "red"}));
    assert_eq!(repairs(&out), [("/Colour", "key_renamed")]);
}

#[test]
fn an_alias_is_not_an_extra_key_where_extra_keys_are_allowed() {
    let graph = TypeGraph::new(Type::Struct(StructType {
        additional: Some(Box::new(Type::Any)),
        ..StructType::anonymous().field(Field::new("color", Type::string()).alias("colour"))
    }));
    let text = r#"{"colour": "red", "other": 1}"#;
    let out = coerce_arguments(&graph, Arguments::Text(text), &Policy::default()).unwrap();
    assert_eq!(out.value, json!({"color": "red", "other": 1}));
}
