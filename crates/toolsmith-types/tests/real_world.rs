//! Real-world tool schemas that every JSON Schema validator accepts (`fixtures/real_world/`):
//! each imports leniently with its most faithful reading and a warning for every liberty
//! taken, is refused by a strict import when it needs a liberty, and coerces calls as it means.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolsmith_types::{
    Arguments, CoerceErrors, Coerced, ImportOptions, Policy, Type, TypeGraph, coerce_arguments,
    import, import_with,
};

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/real_world/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The fixture imported leniently, and its warnings as (path, code).
fn lenient(name: &str) -> (TypeGraph, Vec<(String, &'static str)>) {
    let imported = import_with(&fixture(name), &ImportOptions::lenient())
        .unwrap_or_else(|e| panic!("{name} refused:\n{e}"));
    let warnings = imported
        .warnings
        .iter()
        .map(|w| (w.path.clone(), w.code.as_str()))
        .collect();
    (imported.graph, warnings)
}

/// The codes and paths a strict import refuses the fixture with (empty when it accepts it).
fn strict_refusals(name: &str) -> Vec<(String, &'static str)> {
    match import(&fixture(name)) {
        Ok(_) => Vec::new(),
        Err(errors) => errors
            .iter()
            .map(|e| (e.path.clone(), e.code.as_str()))
            .collect(),
    }
}

fn call(graph: &TypeGraph, arguments: Value) -> Result<Coerced, CoerceErrors> {
    coerce_arguments(graph, Arguments::Json(&arguments), &Policy::default())
}

fn codes(errors: &CoerceErrors) -> Vec<(&str, &str)> {
    errors
        .iter()
        .map(|e| (e.path.as_str(), e.code.as_str()))
        .collect()
}

fn owned(pairs: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
    pairs.iter().map(|(p, c)| ((*p).to_owned(), *c)).collect()
}

#[test]
fn each_real_world_pattern_imports_leniently_with_a_warning_for_every_liberty_and_strictly_only_when_exact()
 {
    // (fixture, warnings of a lenient import = refusals of a strict one)
    let table: &[(&str, &[(&str, &'static str)])] = &[
        ("required_without_properties", &[]),
        (
            "enum_on_array",
            &[("/properties/colors/enum", "enum_of_items")],
        ),
        (
            "string_enum_on_boolean",
            &[("/properties/has_parking/enum/0", "enum_outside_type")],
        ),
        (
            "constraint_without_type",
            &[("/properties/count", "type_inferred")],
        ),
        ("all_of", &[]),
        (
            "prefix_items",
            &[("/properties/pair/prefixItems", "prefix_items_as_array")],
        ),
        ("unique_items", &[]),
        ("false_schema", &[]),
        ("const_values", &[]),
        (
            "nullable",
            &[("/properties/note/nullable", "nullable_keyword")],
        ),
    ];
    for (name, liberties) in table {
        let (_, warnings) = lenient(name);
        assert_eq!(warnings, owned(liberties), "{name}: lenient warnings");
        assert_eq!(
            strict_refusals(name),
            owned(liberties),
            "{name}: strict refusals"
        );
    }
}

#[test]
fn required_on_an_object_without_properties_requires_those_keys_and_takes_others() {
    let (graph, _) = lenient("required_without_properties");
    let out = call(&graph, json!({"options": {"mode": "fast", "depth": 2}})).unwrap();
    assert_eq!(out.value, json!({"options": {"mode": "fast", "depth": 2}}));
    let errors = call(&graph, json!({"options": {"depth": 2}})).unwrap_err();
    assert_eq!(codes(&errors), [("/options/mode", "missing")]);
}

#[test]
fn enum_on_an_array_of_strings_constrains_each_item() {
    let (graph, _) = lenient("enum_on_array");
    let out = call(&graph, json!({"colors": ["red", "blue"]})).unwrap();
    assert_eq!(out.value, json!({"colors": ["red", "blue"]}));
    let errors = call(&graph, json!({"colors": ["red", "pink"]})).unwrap_err();
    assert_eq!(codes(&errors), [("/colors/1", "enum")]);
}

#[test]
fn a_string_enum_on_a_boolean_takes_the_strings_and_reads_booleans_as_them() {
    let (graph, _) = lenient("string_enum_on_boolean");
    let out = call(&graph, json!({"has_parking": "dontcare"})).unwrap();
    assert_eq!(out.value, json!({"has_parking": "dontcare"}));
    let out = call(&graph, json!({"has_parking": true})).unwrap();
    assert_eq!(out.value, json!({"has_parking": "True"}));
    assert_eq!(out.repairs[0].code.as_str(), "enum_from_scalar");
}

#[test]
fn a_constraint_without_type_constrains_the_type_it_belongs_to() {
    let (graph, _) = lenient("constraint_without_type");
    assert_eq!(
        call(&graph, json!({"count": 3})).unwrap().value,
        json!({"count": 3})
    );
    let errors = call(&graph, json!({"count": 0})).unwrap_err();
    assert_eq!(codes(&errors), [("/count", "greater_than_equal")]);
}

#[test]
fn all_of_merges_its_members_and_keeps_a_described_reference_a_reference() {
    let (graph, _) = lenient("all_of");
    assert!(graph.defs.contains_key("Units"), "{graph:?}");
    let out = call(&graph, json!({"place": {"city": "Oslo", "country": "NO"}})).unwrap();
    assert_eq!(
        out.value,
        json!({"units": "metric", "place": {"city": "Oslo", "country": "NO"}})
    );
    let errors = call(&graph, json!({"place": {"country": "N"}})).unwrap_err();
    assert_eq!(
        codes(&errors),
        [
            ("/place/country", "string_too_short"),
            ("/place/city", "missing")
        ]
    );
}

#[test]
fn all_of_whose_members_conflict_is_a_liberty_and_one_that_allows_nothing_is_an_error() {
    let two_patterns = json!({"allOf": [
        {"type": "string", "pattern": "^a"},
        {"type": "string", "pattern": "b$"}
    ]});
    let imported = import_with(&two_patterns, &ImportOptions::lenient()).unwrap();
    assert_eq!(imported.warnings[0].path, "/allOf/1/pattern");
    assert_eq!(imported.warnings[0].code.as_str(), "all_of_inexact");
    assert_eq!(
        import(&two_patterns).unwrap_err().0[0].code.as_str(),
        "all_of_inexact"
    );

    let disjoint = json!({"allOf": [{"type": "string"}, {"type": "integer"}]});
    for options in [ImportOptions::strict(), ImportOptions::lenient()] {
        let errors = import_with(&disjoint, &options).unwrap_err();
        assert_eq!(errors.0[0].path, "/allOf/1/type");
        assert_eq!(errors.0[0].code.as_str(), "schema_invalid");
    }
}

#[test]
fn prefix_items_with_items_false_bound_the_length_and_mixed_positions_are_any_of_them() {
    let (graph, _) = lenient("prefix_items");
    assert!(call(&graph, json!({"point": [1.5, 2]})).is_ok());
    let errors = call(&graph, json!({"point": [1, 2, 3]})).unwrap_err();
    assert_eq!(codes(&errors), [("/point", "too_long")]);
    let out = call(&graph, json!({"pair": ["a", 1]})).unwrap();
    assert_eq!(out.value, json!({"pair": ["a", 1]}));
}

#[test]
fn a_false_property_of_a_closed_object_is_a_key_that_may_not_be_sent() {
    let (graph, _) = lenient("false_schema");
    assert!(call(&graph, json!({"name": "a"})).is_ok());
    let errors = call(&graph, json!({"name": "a", "legacy": 1})).unwrap_err();
    assert_eq!(codes(&errors), [("/legacy", "extra_forbidden")]);
}

#[test]
fn const_and_enum_values_of_every_json_type_accept_exactly_those_values() {
    let (graph, _) = lenient("const_values");
    let sent = json!({"version": 2.5, "confirm": true, "mode": {"fast": false}, "size": [2, 2]});
    let out = call(&graph, sent.clone()).unwrap();
    assert_eq!(out.value, sent);
    assert!(out.repairs.is_empty(), "{:?}", out.repairs);
    // Numbers by value, as JSON Schema compares them.
    assert!(call(&graph, json!({"size": [2.0, 2]})).is_ok());
    let errors = call(
        &graph,
        json!({"version": 2.4, "confirm": false, "mode": {"fast": 1}, "size": [3, 3]}),
    )
    .unwrap_err();
    assert_eq!(
        codes(&errors),
        [
            ("/version", "enum"),
            ("/confirm", "enum"),
            ("/mode", "enum"),
            ("/size", "enum")
        ]
    );
    assert!(
        errors.0[1].message().contains("\"true\""),
        "{}",
        errors.0[1].message()
    );
}

#[test]
fn nullable_in_a_2020_12_document_allows_null_with_a_warning() {
    let (graph, _) = lenient("nullable");
    let out = call(&graph, json!({"note": null})).unwrap();
    assert_eq!(out.value, json!({"note": null}));
}

#[test]
fn keywords_import_cannot_honour_are_ignored_with_a_warning_leniently_and_refused_strictly() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "string", "not": {"const": "x"}, "minimum": 3}},
        "patternProperties": {"^x-": {}}
    });
    let imported = import_with(&schema, &ImportOptions::lenient()).unwrap();
    let warnings: Vec<_> = imported
        .warnings
        .iter()
        .map(|w| (w.path.as_str(), w.code.as_str()))
        .collect();
    assert_eq!(
        warnings,
        [
            ("/patternProperties", "unsupported_keyword"),
            ("/properties/a/not", "unsupported_keyword"),
            ("/properties/a/minimum", "inapplicable_keyword"),
        ]
    );
    assert!(
        imported.warnings[1].to_string().contains("ignored"),
        "{}",
        imported.warnings[1]
    );
    assert_eq!(import(&schema).unwrap_err().len(), 3);
}

// ---- defaults ----

#[test]
fn a_default_that_does_not_fit_its_field_is_reported_at_import_with_the_real_reason() {
    let schema = json!({"type": "object", "properties": {
        "limit": {"type": "integer", "maximum": 3, "default": 5},
        "name": {"type": "string", "maxLength": 2, "default": "long"},
        "flag": {"type": "boolean", "default": "yes"},
        "fine": {"type": "integer", "default": 2}
    }});
    let errors = import(&schema).unwrap_err();
    let found: Vec<_> = errors
        .iter()
        .map(|e| (e.path.as_str(), e.code.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("/properties/limit/default", "default_invalid"),
            ("/properties/name/default", "default_invalid"),
            ("/properties/flag/default", "default_invalid"),
        ]
    );
    assert_eq!(
        errors.0[0].message,
        "`default` 5 does not fit its field: expected at most 3, got 5"
    );
    assert!(
        errors.0[1].message.contains("at most 2 characters"),
        "{}",
        errors.0[1]
    );

    // Leniently, each is left out (the field stays optional), and said.
    let imported = import_with(&schema, &ImportOptions::lenient()).unwrap();
    let codes: Vec<_> = imported.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, ["default_invalid"; 3]);
    let out = call(&imported.graph, json!({})).unwrap();
    assert_eq!(out.value, json!({"fine": 2}));
}

#[test]
fn a_whole_float_default_for_an_integer_imports_strictly_as_the_integer() {
    // A default is part of the type, not of a model's input: `5.0` is the integer 5, no repair.
    let schema = json!({"type": "object", "properties": {
        "limit": {"type": "integer", "maximum": 9, "default": 5.0}
    }});
    let graph = import(&schema).unwrap();
    let strict = coerce_arguments(&graph, Arguments::Json(&json!({})), &Policy::strict()).unwrap();
    assert_eq!(strict.value, json!({"limit": 5}));
    assert!(strict.repairs.is_empty(), "{:?}", strict.repairs);
}

#[test]
fn a_default_of_a_referenced_type_is_checked_against_the_definition() {
    let schema = json!({
        "$defs": {"Level": {"type": "string", "enum": ["low", "high"]}},
        "type": "object",
        "properties": {"level": {"$ref": "#/$defs/Level", "default": "medium"}}
    });
    let errors = import(&schema).unwrap_err();
    assert_eq!(errors.0[0].path, "/properties/level/default");
    assert!(
        errors.0[0].message.contains("\"low\", \"high\""),
        "{}",
        errors.0[0]
    );
}

// ---- patterns ----

#[test]
fn pattern_follows_ecma_262_character_classes() {
    let graph = import(&json!({"type": "object", "properties": {
        "code": {"type": "string", "pattern": "^\\d{3}$"},
        "word": {"type": "string", "pattern": "^\\w+$"},
        "spaced": {"type": "string", "pattern": "^a\\sb$"},
        "line": {"type": "string", "pattern": "^.$"},
        "edge": {"type": "string", "pattern": "\\bcat\\b"}
    }}))
    .unwrap();
    let ok = |args: Value| call(&graph, args).is_ok();
    assert!(ok(json!({"code": "123"})));
    assert!(
        !ok(json!({"code": "١٢٣"})),
        "Arabic-Indic digits are not \\d"
    );
    assert!(ok(json!({"word": "snake_case9"})));
    assert!(!ok(json!({"word": "naïve"})), "ï is not \\w");
    assert!(
        ok(json!({"spaced": "a\u{a0}b"})),
        "NBSP is ECMA-262 white space"
    );
    assert!(
        !ok(json!({"spaced": "a\u{85}b"})),
        "NEL is not ECMA-262 white space"
    );
    assert!(
        !ok(json!({"line": "\r"})),
        ". stops at every line terminator"
    );
    assert!(ok(json!({"edge": "a cat!"})));
    assert!(
        ok(json!({"edge": "écat"})),
        "é is not a word character, so a boundary"
    );
}

#[test]
fn pattern_constructs_the_matcher_cannot_express_are_refused_strictly_and_not_enforced_leniently() {
    for (pattern, said) in [("^(?=a)", "look-around"), ("(a)\\1", "back-reference")] {
        let schema = json!({"type": "string", "pattern": pattern});
        let errors = import(&schema).unwrap_err();
        assert_eq!(errors.0[0].path, "/pattern", "{pattern}");
        assert!(
            errors.0[0].message.contains(said),
            "{pattern}: {}",
            errors.0[0]
        );
        // Valid ECMA-262 all the same: a lenient import takes the schema, says what it cannot
        // enforce, and enforces nothing of it.
        let imported = import_with(&schema, &ImportOptions::lenient()).unwrap();
        assert_eq!(imported.graph.root, Type::string(), "{pattern}");
        assert_eq!(imported.warnings[0].path, "/pattern");
        assert!(imported.warnings[0].message.contains(said), "{pattern}");
    }
}

#[test]
fn patterns_that_are_no_ecma_262_regular_expression_are_import_errors() {
    for (pattern, said) in [
        ("(?i)abc", "inline flags"),
        ("\\q", "not an escape"),
        ("[a-", "not closed"),
    ] {
        for options in [ImportOptions::strict(), ImportOptions::lenient()] {
            let errors =
                import_with(&json!({"type": "string", "pattern": pattern}), &options).unwrap_err();
            assert_eq!(errors.0[0].path, "/pattern", "{pattern}");
            assert!(
                errors.0[0].message.contains(said),
                "{pattern}: {}",
                errors.0[0]
            );
        }
    }
}

#[test]
fn pattern_class_syntax_of_the_regex_crate_is_read_as_ecma_262_characters() {
    // `&&` and `--` are set operations for the regex crate, characters for ECMA-262.
    let graph = import(&json!({"type": "object", "properties": {
        "amp": {"type": "string", "pattern": "^[a&&b]+$"},
        "nested": {"type": "string", "pattern": "^[[]$"}
    }}))
    .unwrap();
    assert!(call(&graph, json!({"amp": "a&b"})).is_ok());
    assert!(call(&graph, json!({"nested": "["})).is_ok());
}

// ---- free-form objects ----

#[test]
fn a_free_form_object_does_not_silently_take_an_array_for_an_object() {
    let graph =
        import(&json!({"type": "object", "properties": {"meta": {"type": "object"}}})).unwrap();
    for (sent, read) in [
        (json!([]), json!({})),
        (json!([{"key": "a", "value": 1}]), json!({"a": 1})),
    ] {
        let out = call(&graph, json!({"meta": sent})).unwrap();
        assert_eq!(out.value, json!({"meta": read}));
        let repairs: Vec<_> = out.repairs.iter().map(|r| r.code.as_str()).collect();
        assert_eq!(repairs, ["map_from_entries"]);
        let strict = coerce_arguments(
            &graph,
            Arguments::Json(&json!({"meta": sent})),
            &Policy::strict(),
        );
        assert_eq!(codes(&strict.unwrap_err()), [("/meta", "repair_refused")]);
    }
    // Where the dialect sends maps as entries, they are its wire shape.
    let openai = Policy::strict().with_dialect(toolsmith_types::Dialect::OpenAi { strict: true });
    let out = coerce_arguments(&graph, Arguments::Json(&json!({"meta": []})), &openai).unwrap();
    assert_eq!(out.value, json!({"meta": {}}));
    assert!(out.repairs.is_empty());
}

#[test]
fn every_lenient_reading_emits_a_schema_a_strict_import_reads_back_as_the_same_type() {
    for name in [
        "required_without_properties",
        "enum_on_array",
        "string_enum_on_boolean",
        "constraint_without_type",
        "all_of",
        "prefix_items",
        "unique_items",
        "false_schema",
        "const_values",
        "nullable",
        "any_of_beside_properties",
    ] {
        let (graph, _) = lenient(name);
        let emitted = toolsmith_types::emit(&graph, toolsmith_types::Dialect::JsonSchema).unwrap();
        let again = import(&emitted).unwrap_or_else(|e| panic!("{name}: {e}\n{emitted:#}"));
        assert_eq!(again.root, graph.root, "{name}");
        // And every receiver can be given it.
        for dialect in toolsmith_types::Dialect::ALL {
            toolsmith_types::parameters_schema(&graph, dialect)
                .unwrap_or_else(|e| panic!("{name} in {dialect}: {e}"));
        }
    }
}

#[test]
fn unique_items_refuses_an_item_equal_to_an_earlier_one_after_coercion() {
    let (graph, _) = lenient("unique_items");
    assert!(call(&graph, json!({"tags": ["a", "b"]})).is_ok());
    let errors = call(&graph, json!({"tags": ["a", "b", "a"]})).unwrap_err();
    assert_eq!(codes(&errors), [("/tags/2", "duplicate_item")]);
    assert!(
        errors.0[0].message().contains("item 0"),
        "{}",
        errors.0[0].message()
    );
    // Equal as JSON Schema compares: numbers by value, keys in any order.
    let any = import(&json!({"type": "object", "properties": {
        "xs": {"type": "array", "uniqueItems": true}
    }}))
    .unwrap();
    let errors = call(&any, json!({"xs": [1, 1.0]})).unwrap_err();
    assert_eq!(codes(&errors), [("/xs/1", "duplicate_item")]);
    let errors = call(&any, json!({"xs": [{"a": 1, "b": 2}, {"b": 2, "a": 1}]})).unwrap_err();
    assert_eq!(codes(&errors), [("/xs/1", "duplicate_item")]);
    assert!(call(&any, json!({"xs": [1, "1", [1]]})).is_ok());
}

#[test]
fn all_of_merges_that_would_multiply_without_end_are_an_error_not_a_hang() {
    // Each definition's two properties both merge the next definition: 2^40 schemas in place.
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = json!({"allOf": [{"$ref": format!("#/$defs/D{}", i + 1)}, {"type": "object"}]});
        defs.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {"a": next.clone(), "b": next}}),
        );
    }
    defs.insert("D40".to_owned(), json!({"type": "object"}));
    let schema = json!({"$defs": defs, "allOf": [{"$ref": "#/$defs/D0"}, {"type": "object"}]});
    let errors = import_with(&schema, &ImportOptions::lenient()).unwrap_err();
    assert!(errors.to_string().contains("gather more than"), "{errors}");
}

#[test]
fn any_of_beside_other_keywords_is_each_member_merged_with_them() {
    // "Send an email or a phone number": two objects, each requiring one.
    let (graph, _) = lenient("any_of_beside_properties");
    assert!(call(&graph, json!({"contact": {"email": "a@b.c"}})).is_ok());
    assert!(
        call(
            &graph,
            json!({"contact": {"phone": "123", "email": "a@b.c"}})
        )
        .is_ok()
    );
    let errors = call(&graph, json!({"contact": {}})).unwrap_err();
    assert_eq!(codes(&errors), [("/contact", "union_no_match")]);

    // A member the keywords beside it exclude (null, beside `type: string`) is left out.
    let graph = import(&json!({"type": "object", "properties": {"name": {
        "type": "string", "anyOf": [{"type": "null"}, {"minLength": 2}]
    }}}))
    .unwrap();
    assert!(call(&graph, json!({"name": "Al"})).is_ok());
    let strict = coerce_arguments(
        &graph,
        Arguments::Json(&json!({"name": null})),
        &Policy::strict(),
    );
    assert_eq!(codes(&strict.unwrap_err()), [("/name", "repair_refused")]);
    let errors = call(&graph, json!({"name": "A"})).unwrap_err();
    assert_eq!(codes(&errors), [("/name", "string_too_short")]);
}

#[test]
fn ecma_262_pattern_syntax_reads_as_ecma_262_means_it() {
    use toolsmith_types::Pattern;
    let cases: &[(&str, &[&str], &[&str])] = &[
        (r"^[^\d]+$", &["abc", "٣"], &["a1"]),
        (r"^[\w-]+$", &["a-b_c"], &["a b", "é"]),
        (r"^\u00e9$", &["é"], &["e"]),
        (r"^\u{1F600}$", &["😀"], &["x"]),
        (r"^\uD83D\uDE00$", &["😀"], &["x"]),
        (r"^a{2,}$", &["aa", "aaa"], &["a"]),
        (r"^a{$", &["a{"], &["a"]),
        (r"^a\/b$", &["a/b"], &["ab"]),
        (r"^(?<word>\w+)$", &["hi"], &["hi there"]),
        (r"^[\s\S]$", &["\n", "x"], &["xy"]),
        (r"^[+--]$", &["+", ",", "-"], &["a"]),
        (r"^\cJ$", &["\n"], &["J"]),
        (r"^[]$", &[], &["", "a"]),
        (r"^[^]$", &["a", "\n"], &[""]),
    ];
    for (source, matching, not_matching) in cases {
        let pattern = Pattern::new(*source).unwrap_or_else(|e| panic!("{source}: {e}"));
        assert_eq!(pattern.as_str(), *source);
        for text in *matching {
            assert!(pattern.is_match(text), "{source} should match {text:?}");
        }
        for text in *not_matching {
            assert!(
                !pattern.is_match(text),
                "{source} should not match {text:?}"
            );
        }
    }
    for source in [r"\uD83D", r"\x4", r"\u{110000}", r"a\", r"[\B]"] {
        assert!(Pattern::new(source).is_err(), "{source}");
    }
}
