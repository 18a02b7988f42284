//! The validator backstop: a type read from a JSON Schema refuses what the schema refuses, even
//! where the type model is looser, in coercion's own error shape.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolsmith_types::{
    Arguments, CoerceErrors, Coerced, ErrorCode, ImportCode, ImportOptions, ImportedSchema, Limits,
    Policy,
};

fn lenient(schema: Value) -> ImportedSchema {
    ImportedSchema::new(schema, &ImportOptions::lenient()).expect("imports leniently")
}

fn coerce(schema: &ImportedSchema, arguments: Value) -> Result<Coerced, CoerceErrors> {
    schema.coerce(Arguments::Json(&arguments), &Policy::lenient())
}

fn object(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

/// For each keyword the type model does not hold: the lenient import says it cannot enforce it
/// (or reads it loosely), an instance the schema accepts comes through unchanged, and one it
/// refuses is a `schema_violation` at the offending value, naming the keyword.
#[test]
fn keywords_outside_the_type_model_are_enforced() {
    let cases = [
        (
            "not",
            object(json!({"name": {"type": "string", "not": {"const": "root"}}})),
            json!({"name": "ada"}),
            json!({"name": "root"}),
            "/name",
        ),
        (
            "if",
            json!({
                "type": "object",
                "properties": {"country": {"type": "string"}, "zip": {"type": "string"}},
                "if": {"properties": {"country": {"const": "US"}}, "required": ["country"]},
                "then": {"required": ["zip"]}
            }),
            json!({"country": "US", "zip": "94103"}),
            json!({"country": "US"}),
            "",
        ),
        (
            "contains",
            object(
                json!({"tags": {"type": "array", "items": {"type": "string"},
                                   "contains": {"const": "urgent"}}}),
            ),
            json!({"tags": ["a", "urgent"]}),
            json!({"tags": ["a", "b"]}),
            "/tags",
        ),
        (
            "dependentRequired",
            json!({
                "type": "object",
                "properties": {"card": {"type": "string"}, "billing": {"type": "string"}},
                "dependentRequired": {"card": ["billing"]}
            }),
            json!({"card": "4111", "billing": "here"}),
            json!({"card": "4111"}),
            "",
        ),
        (
            "patternProperties",
            json!({
                "type": "object",
                "patternProperties": {"^x-": {"type": "integer"}}
            }),
            json!({"x-count": 3}),
            json!({"x-count": "three"}),
            "/x-count",
        ),
        (
            "prefixItems",
            object(json!({"point": {"type": "array",
                                    "prefixItems": [{"type": "string"}, {"type": "integer"}]}})),
            json!({"point": ["x", 1]}),
            json!({"point": [1, "x"]}),
            "/point/0",
        ),
        (
            "minContains",
            object(
                json!({"votes": {"type": "array", "items": {"type": "string"},
                                    "contains": {"const": "yes"}, "minContains": 2}}),
            ),
            json!({"votes": ["yes", "no", "yes"]}),
            json!({"votes": ["yes", "no"]}),
            "/votes",
        ),
    ];
    for (keyword, schema, good, bad, at) in cases {
        let imported = lenient(schema);
        let taken = coerce(&imported, good.clone()).unwrap_or_else(|e| panic!("{keyword}: {e}"));
        assert_eq!(taken.value, good, "{keyword}");
        let errors = coerce(&imported, bad.clone()).expect_err(keyword);
        let first = &errors.0[0];
        assert_eq!(
            first.code,
            ErrorCode::SchemaViolation,
            "{keyword}: {errors}"
        );
        assert_eq!(first.path, at, "{keyword}: {errors}");
        // The rule's place in the schema names the keyword (`then` for `if`/`then`).
        let named = if keyword == "if" { "/then" } else { keyword };
        let message = first.message();
        assert!(message.contains(named), "{keyword}: {message}");
    }
}

#[test]
fn the_error_names_the_rule_and_where_it_is() {
    let imported = lenient(object(
        json!({"name": {"type": "string", "not": {"const": "root"}}}),
    ));
    let errors = coerce(&imported, json!({"name": "root"})).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors}");
    let error = &errors.0[0];
    assert_eq!(error.input, Some(json!("root")));
    let message = error.message();
    assert!(
        message.starts_with(
            "`name`: expected a value that satisfies the schema's `not` at /properties/name/not"
        ),
        "{message}"
    );
    assert!(message.ends_with(", got \"root\""), "{message}");
    let as_json = error.to_json();
    assert_eq!(as_json["code"], "schema_violation");
    assert_eq!(as_json["path"], "/name");
}

/// The backstop checks what coercion made: a repaired value that the schema accepts comes
/// through with its repair recorded; one it refuses is refused as repaired.
#[test]
fn the_coerced_value_is_what_is_checked() {
    let imported = lenient(object(
        json!({"count": {"type": "integer", "not": {"const": 0}}}),
    ));
    let taken = imported
        .coerce(Arguments::Text(r#"{"count": "42"}"#), &Policy::lenient())
        .unwrap();
    assert_eq!(taken.value, json!({"count": 42}));
    assert_eq!(taken.repairs.len(), 1, "{:?}", taken.repairs);

    let errors = imported
        .coerce(Arguments::Text(r#"{"count": "0"}"#), &Policy::lenient())
        .unwrap_err();
    assert_eq!(errors.0[0].code, ErrorCode::SchemaViolation);
    assert_eq!(errors.0[0].input, Some(json!(0)));
}

/// A value that does not fit the type gets coercion's errors, which say what to send; the
/// validator is not asked about a value coercion refused.
#[test]
fn coercion_errors_come_first() {
    let imported = lenient(object(
        json!({"count": {"type": "integer", "not": {"const": 0}}}),
    ));
    let errors = coerce(&imported, json!({"count": "many"})).unwrap_err();
    assert_eq!(errors.0[0].code, ErrorCode::IntParsing, "{errors}");
    assert!(
        errors.iter().all(|e| e.code != ErrorCode::SchemaViolation),
        "{errors}"
    );
}

#[test]
fn errors_are_capped_by_the_policy() {
    let imported = lenient(json!({
        "type": "object",
        "patternProperties": {"^n": {"type": "integer", "not": {"const": 0}}}
    }));
    let arguments: serde_json::Map<String, Value> =
        (0..10).map(|i| (format!("n{i}"), json!(0))).collect();
    let mut policy = Policy::lenient();
    policy.limits = Limits {
        max_errors: 3,
        ..Limits::default()
    };
    let errors = imported
        .coerce(Arguments::Json(&Value::Object(arguments)), &policy)
        .unwrap_err();
    assert_eq!(errors.len(), 4, "{errors}");
    assert!(
        errors.0[..3]
            .iter()
            .all(|e| e.code == ErrorCode::SchemaViolation)
    );
    assert_eq!(errors.0[3].code, ErrorCode::TooManyErrors);
    assert!(errors.0[3].message().contains("7 more"), "{errors}");
}

/// A schema nothing could stand behind is refused at import, in both modes.
#[test]
fn a_schema_the_validator_cannot_compile_is_refused() {
    let schema = json!({"$schema": "https://example.com/private-meta", "type": "object"});
    for options in [ImportOptions::strict(), ImportOptions::lenient()] {
        let errors = ImportedSchema::new(schema.clone(), &options).unwrap_err();
        assert_eq!(errors.0[0].code, ImportCode::SchemaInvalid);
        assert!(
            errors.to_string().contains("validator cannot compile"),
            "{errors}"
        );
    }
}

/// A look-around `pattern` the type cannot enforce (a lenient import warns) is enforced by the
/// backstop; one that backtracks without end on a hostile value is cut off and refused.
#[test]
fn patterns_beyond_the_linear_engine_are_enforced_and_bounded() {
    let imported = lenient(object(
        json!({"word": {"type": "string", "pattern": "^(?!tmp)"}}),
    ));
    assert_eq!(imported.warnings()[0].code, ImportCode::UnsupportedKeyword);
    assert!(coerce(&imported, json!({"word": "final"})).is_ok());
    let errors = coerce(&imported, json!({"word": "tmpfile"})).unwrap_err();
    assert_eq!(errors.0[0].code, ErrorCode::SchemaViolation, "{errors}");

    let hostile = lenient(object(
        json!({"text": {"type": "string", "pattern": "^(?=(a|aa)+$)"}}),
    ));
    let text = format!("{}b", "a".repeat(64));
    let errors = coerce(&hostile, json!({"text": text})).unwrap_err();
    assert_eq!(errors.0[0].code, ErrorCode::SchemaViolation, "{errors}");
}

/// Where the type model holds the whole schema, the backstop agrees with coercion: a strict
/// import has no warnings, and whatever coercion accepts the schema accepts.
#[test]
fn an_exact_import_needs_no_backstop_but_keeps_it() {
    let schema = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "units": {"enum": ["metric", "imperial"]}
        },
        "required": ["city"],
        "additionalProperties": false
    });
    let imported = ImportedSchema::new(schema, &ImportOptions::strict()).unwrap();
    assert!(imported.warnings().is_empty());
    let taken = coerce(
        &imported,
        json!({"city": "Oslo", "days": "3", "units": "Metric"}),
    )
    .unwrap();
    assert_eq!(
        taken.value,
        json!({"city": "Oslo", "days": 3, "units": "metric"})
    );
    let errors = coerce(&imported, json!({"city": "", "days": 30})).unwrap_err();
    assert!(
        errors.iter().all(|e| e.code != ErrorCode::SchemaViolation),
        "{errors}"
    );
}

/// Where a lenient import reads a schema otherwise on purpose (what its author meant, where the
/// literal schema refuses it), the backstop checks the reading, never undoing it.
#[test]
fn the_backstop_never_undoes_a_lenient_reading() {
    let cases = [
        (
            "nullable_keyword",
            object(json!({"note": {"type": "string", "nullable": true, "minLength": 2}})),
            json!({"note": null}),
            json!({"note": "x"}),
        ),
        (
            "enum_of_items",
            object(
                json!({"colors": {"type": "array", "items": {"type": "string"},
                                     "enum": ["red", "blue"]}}),
            ),
            json!({"colors": ["red", "blue"]}),
            json!({"colors": ["green"]}),
        ),
        (
            "enum_outside_type",
            object(json!({"level": {"type": "string", "enum": [1, 2, 3]}})),
            json!({"level": 2}),
            json!({"level": 4}),
        ),
        (
            "forbidden_key_allowed",
            json!({"type": "object", "properties": {"id": false},
                   "additionalProperties": {"type": "integer"}}),
            json!({"id": 7}),
            json!({"id": "seven"}),
        ),
    ];
    for (code, schema, meant, refused) in cases {
        let imported = lenient(schema);
        assert!(
            imported.warnings().iter().any(|w| w.code.as_str() == code),
            "{code}: {:?}",
            imported.warnings()
        );
        let taken = coerce(&imported, meant.clone()).unwrap_or_else(|e| panic!("{code}: {e}"));
        assert_eq!(taken.value, meant, "{code}");
        assert!(coerce(&imported, refused).is_err(), "{code}");
    }
}
