//! Repairs and errors as data: each repair says what happened (nothing is `null` that was not
//! sent), repairs are capped like errors, and no diagnostic grows with the input it is about.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value, json};
use toolsmith_types::{
    Arguments, Coerced, Field, Limits, MapType, Policy, Repair, RepairCode, StructType,
    TaggedUnion, Type, TypeGraph, UnknownKeys, coerce, coerce_arguments, parse_arguments,
};

fn object(fields: Vec<Field>) -> TypeGraph {
    TypeGraph::new(Type::Struct(StructType {
        fields,
        ..StructType::anonymous()
    }))
}

fn with_max_repairs(max_repairs: usize) -> Policy {
    Policy {
        limits: Limits {
            max_repairs,
            ..Limits::default()
        },
        ..Policy::default()
    }
}

/// The (path, code) of every repair, in order.
fn repairs(out: &Coerced) -> Vec<(&str, &'static str)> {
    out.repairs
        .iter()
        .map(|r| (r.path.as_str(), r.code.as_str()))
        .collect()
}

fn tags() -> TypeGraph {
    object(vec![Field::new("tags", Type::array(Type::string()))])
}

/// `{"tags":[[1],[1],...]}`: each element needs two repairs (unwrapped, then written as text).
fn nested_ones(count: usize) -> String {
    format!("{{\"tags\":[{}]}}", vec!["[1]"; count].join(","))
}

// ---------------------------------------------------------------------------------------------
// What each repair says

#[test]
fn a_stripped_code_fence_says_so_and_has_nothing_in_its_place() {
    let text = "```json\n{\"n\": 1}\n```";
    let parsed = parse_arguments(text, &Policy::default()).unwrap();
    let fence = &parsed.repairs[0];
    assert_eq!(fence.code, RepairCode::MarkdownFence);
    assert_eq!(fence.from, Some(json!(text)));
    assert_eq!(fence.to, None);
    assert_eq!(fence.message(), "arguments: removed a markdown code fence");
    let shown = fence.to_json();
    assert_eq!(
        shown,
        json!({
            "path": "",
            "code": "markdown_fence",
            "from": text,
            "message": "arguments: removed a markdown code fence",
        })
    );
}

#[test]
fn a_dropped_key_says_so_with_its_value_and_has_nothing_in_its_place() {
    let graph = object(vec![Field::new("city", Type::string())]);
    let policy = Policy {
        unknown_keys: UnknownKeys::Ignore,
        ..Policy::default()
    };
    let out = coerce(&graph, &json!({"city": "Paris", "mood": 1}), &policy).unwrap();
    assert_eq!(out.value, json!({"city": "Paris"}));
    let dropped = &out.repairs[0];
    assert_eq!(
        (dropped.from.clone(), dropped.to.clone()),
        (Some(json!(1)), None)
    );
    assert_eq!(
        dropped.message(),
        "`mood`: dropped an undeclared key (its value was 1)"
    );
    assert_eq!(dropped.to_json().get("to"), None);
}

#[test]
fn null_read_as_omitted_becomes_the_default_or_nothing() {
    let graph = object(vec![
        Field::new("units", Type::string()).optional(),
        Field::new("days", Type::integer()).default_value(json!(3)),
    ]);
    let out = coerce(
        &graph,
        &json!({"units": null, "days": null}),
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(out.value, json!({"days": 3}));
    let [units, days] = &out.repairs[..] else {
        panic!("two repairs: {:?}", out.repairs);
    };
    assert_eq!(
        (units.from.clone(), units.to.clone()),
        (Some(Value::Null), None)
    );
    assert_eq!(
        units.message(),
        "`units`: treated null as an omitted optional field"
    );
    assert_eq!(days.to, Some(json!(3)));
    assert_eq!(
        days.message(),
        "`days`: treated null as an omitted optional field: null -> 3"
    );
}

#[test]
fn an_inferred_tag_was_not_sent_so_it_has_no_from() {
    let variant = |name: &str, field: &str| {
        Type::Struct(StructType::new(name).field(Field::new(field, Type::integer())))
    };
    let graph = TypeGraph::new(Type::Tagged(
        TaggedUnion::new()
            .variant("Circle", variant("Circle", "radius"))
            .variant("Square", variant("Square", "side")),
    ));
    let out = coerce(&graph, &json!({"side": 2}), &Policy::default()).unwrap();
    let inferred = &out.repairs[0];
    assert_eq!(inferred.code, RepairCode::UnionTagInferred);
    assert_eq!(
        (inferred.from.clone(), inferred.to.clone()),
        (None, Some(json!("Square")))
    );
    assert_eq!(
        inferred.message(),
        "`_type`: inferred the missing `_type`: \"Square\""
    );
    assert_eq!(inferred.to_json().get("from"), None);
}

#[test]
fn after_a_rename_a_value_is_repaired_and_reported_at_the_declared_name() {
    let graph = object(vec![
        Field::new("words_only", Type::Boolean).optional(),
        Field::new("limit", Type::integer()).optional(),
    ]);
    let out = coerce(
        &graph,
        &json!({"Words_Only": "yes", "LIMIT": "x"}),
        &Policy::default(),
    )
    .unwrap_err();
    let codes: Vec<_> = out
        .iter()
        .map(|e| (e.path.as_str(), e.code.as_str()))
        .collect();
    assert_eq!(codes, [("/limit", "int_parsing")]);

    let out = coerce(&graph, &json!({"Words_Only": "yes"}), &Policy::default()).unwrap();
    assert_eq!(out.value, json!({"words_only": true}));
    assert_eq!(
        repairs(&out),
        [
            ("/Words_Only", "key_renamed"),
            ("/words_only", "bool_from_string")
        ]
    );
    assert_eq!(
        out.repairs[0].message(),
        "`Words_Only`: renamed a key to the declared field: \"Words_Only\" -> \"words_only\""
    );
}

// ---------------------------------------------------------------------------------------------
// Repairs are capped like errors

#[test]
fn repairs_past_the_cap_are_counted_and_one_last_entry_says_how_many() {
    let text = nested_ones(100_000);
    let out = coerce_arguments(&tags(), Arguments::Text(&text), &Policy::default()).unwrap();
    assert_eq!(out.value["tags"].as_array().unwrap().len(), 100_000);
    assert!(
        out.value["tags"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t == "1")
    );
    assert_eq!(out.repairs.len(), 101);
    assert_eq!(out.repairs[0].path, "/tags/0");
    assert_eq!(out.repairs[0].code, RepairCode::UnwrapSingleton);
    assert_eq!(out.repairs[1].code, RepairCode::StringFromNumber);
    assert_eq!(out.repairs[99].path, "/tags/49");
    let last = &out.repairs[100];
    assert_eq!(
        (last.path.as_str(), last.code, last.not_shown),
        ("", RepairCode::TooManyRepairs, Some(199_900))
    );
    assert_eq!(
        last.message(),
        "arguments: 199900 more repairs were made and not listed"
    );
    assert_eq!(
        last.to_json(),
        json!({
            "path": "",
            "code": "too_many_repairs",
            "not_shown": 199_900,
            "message": "arguments: 199900 more repairs were made and not listed",
        })
    );
}

#[test]
fn repairs_to_the_text_count_toward_the_cap_and_come_first() {
    let graph = object(vec![Field::new("a", Type::integer())]);
    let out =
        coerce_arguments(&graph, Arguments::Text("{'a': '1'}"), &with_max_repairs(1)).unwrap();
    assert_eq!(out.value, json!({"a": 1}));
    assert_eq!(
        repairs(&out),
        [("", "single_quotes"), ("", "too_many_repairs")]
    );
    assert_eq!(out.repairs[1].not_shown, Some(1));

    let parsed = parse_arguments("{'a': 1,}", &with_max_repairs(1)).unwrap();
    let codes: Vec<_> = parsed.repairs.iter().map(|r| r.code).collect();
    assert_eq!(
        codes,
        [RepairCode::TrailingComma, RepairCode::TooManyRepairs]
    );
}

#[test]
fn a_cap_of_zero_repairs_still_says_that_there_were_repairs() {
    let graph = object(vec![Field::new("a", Type::integer())]);
    let out = coerce(&graph, &json!({"a": ["7"]}), &with_max_repairs(0)).unwrap();
    assert_eq!(out.value, json!({"a": 7}));
    assert_eq!(out.repairs, [Repair::too_many(2)]);
    // Nothing to say, nothing said.
    let clean = coerce(&graph, &json!({"a": 7}), &with_max_repairs(0)).unwrap();
    assert!(clean.repairs.is_empty());
}

#[test]
fn the_cap_holds_where_a_value_is_unwrapped_after_its_element_was_coerced() {
    // `["7"]` for an integer: the element's repair is made first (to see that it fits), the
    // unwrapping is listed first; with room for one, the other is counted.
    let graph = object(vec![Field::new("a", Type::integer())]);
    let out = coerce(&graph, &json!({"a": ["7"]}), &with_max_repairs(1)).unwrap();
    assert_eq!(
        repairs(&out),
        [("/a", "unwrap_singleton"), ("", "too_many_repairs")]
    );
    assert_eq!(out.repairs[1].not_shown, Some(1));
}

#[test]
fn the_cap_counts_dropped_keys_in_strict_mode_too() {
    let graph = object(vec![Field::new("a", Type::integer())]);
    let input: Map<String, Value> = (0..500).map(|i| (format!("k{i}"), json!(i))).collect();
    let policy = Policy {
        unknown_keys: UnknownKeys::Ignore,
        ..Policy::strict()
    };
    let mut input = input;
    input.insert("a".to_owned(), json!(1));
    let out = coerce(&graph, &Value::Object(input), &policy).unwrap();
    assert_eq!(out.repairs.len(), 101);
    assert_eq!(out.repairs[100].not_shown, Some(400));
}

// ---------------------------------------------------------------------------------------------
// No diagnostic grows with the input

#[test]
fn a_path_through_long_keys_is_abridged_so_every_repair_stays_small() {
    // Ten levels of 100,000-character keys, then 100 values that each need a repair.
    let long = "k".repeat(100_000);
    let mut ty = Type::array(Type::integer());
    let mut value = json!(vec!["1"; 100]);
    for _ in 0..10 {
        ty = Type::Map(MapType::new(ty));
        value = json!({ long.clone(): value });
    }
    let graph = TypeGraph::new(Type::Struct(
        StructType::anonymous().field(Field::new("m", ty)),
    ));
    let out = coerce(&graph, &json!({ "m": value }), &Policy::default()).unwrap();
    assert_eq!(out.repairs.len(), 100);
    for repair in &out.repairs {
        assert!(repair.path.len() < 4096, "{} bytes", repair.path.len());
        assert!(repair.path.ends_with('…') || repair.path.contains("…/"));
    }
    let shown: usize = out
        .repairs
        .iter()
        .map(|r| r.to_json().to_string().len())
        .sum();
    assert!(shown < 1_000_000, "{shown} bytes of repairs");
}

#[test]
fn an_error_about_a_large_value_quotes_a_small_part_of_it() {
    let graph = object(vec![Field::new("note", Type::string())]);
    let big: Vec<Value> = (0..64)
        .map(|i| json!({"k": "x".repeat(1000 + i)}))
        .collect();
    let errors = coerce(&graph, &json!({"note": big}), &Policy::default()).unwrap_err();
    let shown = errors.to_json().to_string();
    assert!(shown.len() < 8192, "{} bytes", shown.len());
    assert!(shown.contains('…'), "{shown:.300}");
}

#[test]
fn a_duplicate_key_error_quotes_a_long_key_cut_short() {
    let key = "d".repeat(100_000);
    let text = format!("{{\"{key}\": 1, \"{key}\": 2}}");
    let errors = parse_arguments(&text, &Policy::default()).unwrap_err();
    let shown = errors.to_json().to_string();
    assert_eq!(errors.0[0].code.as_str(), "duplicate_key");
    assert!(shown.len() < 4096, "{} bytes", shown.len());
}

// ---------------------------------------------------------------------------------------------
// The reader stops at the limit on items instead of building what it refuses

#[test]
fn an_array_past_the_item_limit_is_refused_at_its_path_while_it_is_read() {
    let graph = object(vec![Field::new("xs", Type::array(Type::integer()))]);
    let policy = Policy {
        limits: Limits {
            max_items: 1_000,
            ..Limits::default()
        },
        ..Policy::default()
    };
    let text = format!("{{\"xs\": [{}]}}", vec!["1"; 1_001].join(","));
    let errors = coerce_arguments(&graph, Arguments::Text(&text), &policy).unwrap_err();
    let codes: Vec<_> = errors
        .iter()
        .map(|e| (e.path.as_str(), e.code.as_str()))
        .collect();
    assert_eq!(codes, [("/xs", "too_large")]);
    assert_eq!(errors.0[0].expected, "at most 1,000 items; more were sent");
    // As many as the limit are fine, and so is near-JSON within it.
    let text = format!("{{\"xs\": [{}]}}", vec!["1"; 1_000].join(","));
    assert!(coerce_arguments(&graph, Arguments::Text(&text), &policy).is_ok());
    let text = format!("{{xs: [{},],}}", vec!["1"; 1_000].join(","));
    assert!(coerce_arguments(&graph, Arguments::Text(&text), &policy).is_ok());

    // Near-JSON is read by a parser that builds its whole tree: a scan refuses it first.
    let text = format!("{{xs: [{}]}}", vec!["1"; 1_001].join(","));
    let errors = coerce_arguments(&graph, Arguments::Text(&text), &policy).unwrap_err();
    assert_eq!(errors.0[0].code.as_str(), "too_large");
    assert_eq!(
        errors.0[0].expected,
        "argument text whose arrays and objects hold at most 1,000 items each; one sent holds more"
    );
}

// ---------------------------------------------------------------------------------------------
// JSON inside a string: read as JSON, or refused; never another reading

#[test]
fn json_text_in_a_string_too_deep_to_read_is_an_error_naming_the_limit() {
    let graph = object(vec![Field::new("tags", Type::array(Type::Any))]);
    // Shallow JSON text is parsed, as it always was.
    let out = coerce(&graph, &json!({"tags": "[[1]]"}), &Policy::default()).unwrap();
    assert_eq!(out.value, json!({"tags": [[1]]}));
    // Deep JSON text is neither parsed nor wrapped as a string: it is too deep.
    for depth in [200, 10_000] {
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let errors = coerce(&graph, &json!({ "tags": deep }), &Policy::default()).unwrap_err();
        let codes: Vec<_> = errors
            .iter()
            .map(|e| (e.path.as_str(), e.code.as_str()))
            .collect();
        assert_eq!(codes, [("/tags", "too_deep")], "depth {depth}");
        assert!(
            errors.0[0].expected.contains("at most 128 levels"),
            "{}",
            errors.0[0].expected
        );
    }
    // The depth counts from the top of the arguments, as for any other value: `tags` is at
    // depth 1, so 128 arrays reach depth 128, the limit.
    let within = format!("{}{}", "[".repeat(128), "]".repeat(128));
    assert!(coerce(&graph, &json!({ "tags": within }), &Policy::default()).is_ok());
    let past = format!("{}{}", "[".repeat(129), "]".repeat(129));
    assert!(coerce(&graph, &json!({ "tags": past }), &Policy::default()).is_err());
}

#[test]
fn json_text_in_a_string_with_a_key_twice_is_an_error_not_a_string() {
    let graph = object(vec![Field::new(
        "items",
        Type::array(Type::Map(MapType::new(Type::integer()))),
    )]);
    let errors = coerce(
        &graph,
        &json!({"items": r#"[{"a": 1, "a": 2}]"#}),
        &Policy::default(),
    )
    .unwrap_err();
    assert_eq!(errors.0[0].code.as_str(), "duplicate_key");
    assert_eq!(errors.0[0].path, "/items");
    // Text that is not JSON is still a string, wrapped as an array's one item where it fits.
    let strings = object(vec![Field::new("tags", Type::array(Type::string()))]);
    let out = coerce(&strings, &json!({"tags": "[not json"}), &Policy::default()).unwrap();
    assert_eq!(out.value, json!({"tags": ["[not json"]}));
}

// ---------------------------------------------------------------------------------------------
// A size error says the size that was sent

#[test]
fn a_size_error_states_the_size_sent_beside_the_limit() {
    let graph = object(vec![
        Field::new("text", Type::string()).optional(),
        Field::new("xs", Type::array(Type::integer())).optional(),
    ]);
    let policy = Policy {
        limits: Limits {
            max_items: 10,
            ..Limits::default()
        },
        ..Policy::default()
    };
    let text = "x".repeat(1_500_000);
    let errors = coerce(&graph, &json!({ "text": text }), &policy).unwrap_err();
    assert_eq!(
        errors.0[0].message(),
        "`text`: expected a string of at most 1,048,576 bytes; 1,500,000 bytes were sent"
    );
    let errors = coerce(&graph, &json!({"xs": vec![1; 15]}), &policy).unwrap_err();
    assert_eq!(errors.0[0].expected, "at most 10 items; 15 were sent");

    let long = format!("{{\"text\": \"{}\"}}", "y".repeat(9_000_000));
    let errors = coerce_arguments(&graph, Arguments::Text(&long), &Policy::default()).unwrap_err();
    assert_eq!(
        errors.0[0].expected,
        "argument text of at most 8,388,608 bytes; 9,000,012 bytes were sent"
    );
}
