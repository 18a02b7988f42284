//! JSON Schema import: each keyword of the tool-definition subset, and each rejection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolsmith_types::{
    ArrayType, Dialect, EnumType, EnumValue, EnumVariant, Field, ImportOptions, IntegerType,
    MapKeys, MapType, NumberType, Pattern, StringType, StructType, TaggedUnion, Type, TypeGraph,
    emit, import, import_with,
};

fn root(schema: Value) -> Type {
    import(&schema).unwrap().root
}

/// The paths of every error import reports.
fn error_paths(schema: Value) -> Vec<String> {
    import(&schema)
        .unwrap_err()
        .iter()
        .map(|e| e.path.clone())
        .collect()
}

fn closed(fields: Vec<Field>) -> Type {
    Type::Struct(StructType {
        fields,
        ..StructType::default()
    })
}

// ---- scalars ----

#[test]
fn string_with_constraints() {
    let ty = root(json!({
        "type": "string", "minLength": 2, "maxLength": 8, "pattern": "^[a-z]+$", "format": "hostname"
    }));
    assert_eq!(
        ty,
        Type::String(StringType {
            min_length: Some(2),
            max_length: Some(8),
            pattern: Some(Pattern::new("^[a-z]+$").unwrap()),
            format: Some("hostname".to_owned()),
        })
    );
}

#[test]
fn integer_with_bounds() {
    let ty = root(json!({
        "type": "integer", "minimum": 1, "maximum": 10, "exclusiveMinimum": 0,
        "exclusiveMaximum": 11, "multipleOf": 3
    }));
    assert_eq!(
        ty,
        Type::Integer(IntegerType {
            minimum: Some(1),
            maximum: Some(10),
            exclusive_minimum: Some(0),
            exclusive_maximum: Some(11),
            multiple_of: Some(3),
        })
    );
}

#[test]
fn unsigned_64_bit_integer_bounds_are_exact() {
    let ty = root(json!({
        "type": "integer",
        "minimum": 9223372036854775808u64,
        "maximum": 10000000000000000000u64
    }));
    assert_eq!(
        ty,
        Type::Integer(IntegerType::range(
            9_223_372_036_854_775_808,
            10_000_000_000_000_000_000
        ))
    );
    let graph = TypeGraph::new(ty);
    let policy = toolsmith_types::Policy::default();
    assert!(toolsmith_types::coerce(&graph, &json!(10000000000000000000u64), &policy).is_ok());
    let errors =
        toolsmith_types::coerce(&graph, &json!(18446744073709551615u64), &policy).unwrap_err();
    assert_eq!(errors.0[0].code.as_str(), "less_than_equal");
}

#[test]
fn integer_bound_past_the_64_bit_range_is_no_bound_on_the_open_side() {
    let ty = root(json!({"type": "integer", "minimum": 0, "maximum": 1e30}));
    assert_eq!(
        ty,
        Type::Integer(IntegerType {
            minimum: Some(0),
            ..IntegerType::default()
        })
    );
    assert_eq!(
        error_paths(json!({"type": "integer", "minimum": 1e30})),
        ["/minimum"]
    );
}

#[test]
fn fractional_integer_bound_is_rejected() {
    assert_eq!(
        error_paths(json!({"type": "integer", "minimum": 1.5})),
        ["/minimum"]
    );
}

#[test]
fn number_with_bounds() {
    let ty =
        root(json!({"type": "number", "minimum": 0.5, "exclusiveMaximum": 2, "multipleOf": 0.5}));
    assert_eq!(
        ty,
        Type::Number(NumberType {
            minimum: Some(0.5),
            exclusive_maximum: Some(2.0),
            multiple_of: Some(0.5),
            ..NumberType::default()
        })
    );
}

#[test]
fn draft4_boolean_exclusive_minimum_makes_minimum_exclusive() {
    let ty = root(json!({"type": "integer", "minimum": 0, "exclusiveMinimum": true}));
    assert_eq!(
        ty,
        Type::Integer(IntegerType {
            exclusive_minimum: Some(0),
            ..IntegerType::default()
        })
    );
}

#[test]
fn boolean_type() {
    assert_eq!(root(json!({"type": "boolean"})), Type::Boolean);
}

#[test]
fn empty_schema_and_true_are_any() {
    assert_eq!(root(json!({})), Type::Any);
    assert_eq!(root(json!(true)), Type::Any);
    assert_eq!(root(json!({"description": "anything"})), Type::Any);
}

#[test]
fn type_array_with_null_is_nilable() {
    assert_eq!(
        root(json!({"type": ["string", "null"]})),
        Type::nilable(Type::string())
    );
}

#[test]
fn type_array_of_two_types_is_a_union_sharing_constraints() {
    let ty = root(json!({"type": ["string", "integer"], "maxLength": 3, "minimum": 0}));
    assert_eq!(
        ty,
        Type::Union(vec![
            Type::String(StringType {
                max_length: Some(3),
                ..StringType::default()
            }),
            Type::Integer(IntegerType {
                minimum: Some(0),
                ..IntegerType::default()
            }),
        ])
    );
}

#[test]
fn nullable_true_is_honoured_with_a_warning_by_a_lenient_import_and_refused_by_a_strict_one() {
    // `nullable` is OpenAPI's, not JSON Schema 2020-12's: whoever wrote it means null to be
    // allowed, so a lenient import honours it, and says so.
    let schema = json!({"type": "integer", "nullable": true});
    let imported = import_with(&schema, &ImportOptions::lenient()).unwrap();
    assert_eq!(imported.graph.root, Type::nilable(Type::integer()));
    let warnings: Vec<_> = imported
        .warnings
        .iter()
        .map(|w| (w.path.as_str(), w.code.as_str()))
        .collect();
    assert_eq!(warnings, [("/nullable", "nullable_keyword")]);
    let refused = import(&schema).unwrap_err();
    assert_eq!(refused.0[0].path, "/nullable");
    assert_eq!(refused.0[0].code.as_str(), "nullable_keyword");
    assert!(refused.0[0].message.contains("OpenAPI"), "{refused}");
    // `nullable: false` says nothing JSON Schema would not.
    assert_eq!(
        root(json!({"type": "integer", "nullable": false})),
        Type::integer()
    );
}

// ---- enums and const ----

#[test]
fn string_enum_keeps_order() {
    assert_eq!(
        root(json!({"type": "string", "enum": ["b", "a", "c"], "description": "Letters"})),
        Type::Enum(EnumType::strings(["b", "a", "c"]).describe("Letters"))
    );
}

#[test]
fn integer_enum() {
    assert_eq!(
        root(json!({"type": "integer", "enum": [3, 1]})),
        Type::Enum(EnumType::integers([3, 1]))
    );
}

#[test]
fn enum_with_null_and_null_type_is_a_nilable_enum() {
    assert_eq!(
        root(json!({"type": ["string", "null"], "enum": ["metric", "imperial", null]})),
        Type::nilable(Type::Enum(EnumType::strings(["metric", "imperial"])))
    );
}

#[test]
fn enum_without_null_stays_required_even_under_a_null_type() {
    // What JSON Schema says: `enum` does not allow null, so null is invalid.
    assert_eq!(
        root(json!({"type": ["string", "null"], "enum": ["a"]})),
        Type::Enum(EnumType::strings(["a"]))
    );
}

#[test]
fn enum_value_that_does_not_fit_type_is_rejected() {
    assert_eq!(
        error_paths(json!({"type": "string", "enum": ["a", 1]})),
        ["/enum/1"]
    );
}

#[test]
fn enum_of_floats_objects_arrays_and_booleans_holds_them_as_json_values() {
    assert_eq!(
        root(json!({"enum": [1.5, {"a": 1}, [1, 2], false, 7, 2.0]})),
        Type::Enum(EnumType {
            description: None,
            variants: [
                EnumValue::Json(json!(1.5)),
                EnumValue::Json(json!({"a": 1})),
                EnumValue::Json(json!([1, 2])),
                EnumValue::Json(json!(false)),
                EnumValue::Integer(7),
                // A whole float is that integer, as JSON Schema has it.
                EnumValue::Integer(2),
            ]
            .into_iter()
            .map(EnumVariant::new)
            .collect(),
        })
    );
}

#[test]
fn an_empty_enum_is_an_import_error_not_anything() {
    let errors = import(&json!({"enum": []})).unwrap_err();
    assert_eq!(errors.0[0].path, "/enum");
    assert_eq!(errors.0[0].code.as_str(), "enum_empty");
    let lenient = import_with(
        &json!({"type": "string", "enum": []}),
        &ImportOptions::lenient(),
    );
    assert_eq!(lenient.unwrap_err().0[0].code.as_str(), "enum_empty");
}

#[test]
fn string_const_is_a_one_value_enum() {
    assert_eq!(
        root(json!({"const": "only"})),
        Type::Enum(EnumType::strings(["only"]))
    );
}

#[test]
fn const_of_any_json_value_is_a_one_value_enum_of_it() {
    for value in [
        json!(true),
        json!(2.5),
        json!({"mode": "fast"}),
        json!([1, "a"]),
    ] {
        assert_eq!(
            root(json!({ "const": value })),
            Type::Enum(EnumType {
                description: None,
                variants: vec![EnumVariant::new(EnumValue::Json(value.clone()))],
            })
        );
    }
    assert_eq!(error_paths(json!({"const": null})), ["/const"]);
}

// ---- objects ----

#[test]
fn properties_and_required_make_a_closed_struct() {
    let ty = root(json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city"},
            "days": {"type": "integer", "default": 3}
        },
        "required": ["city"]
    }));
    assert_eq!(
        ty,
        closed(vec![
            Field::new("city", Type::string()).describe("The city"),
            Field::new("days", Type::integer()).default_value(json!(3)),
        ])
    );
}

#[test]
fn properties_without_type_mean_an_object() {
    assert_eq!(
        root(json!({"properties": {"a": {"type": "boolean"}}, "required": ["a"]})),
        closed(vec![Field::new("a", Type::Boolean)])
    );
}

#[test]
fn title_names_the_struct_and_description_describes_it() {
    let ty = root(
        json!({"type": "object", "title": "Point", "description": "A point", "properties": {}}),
    );
    assert_eq!(
        ty,
        Type::Struct(StructType::new("Point").describe("A point"))
    );
}

#[test]
fn additional_properties_true_opens_a_struct() {
    let Type::Struct(s) = root(json!({
        "type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true
    })) else {
        panic!("a struct")
    };
    assert_eq!(s.additional, Some(Box::new(Type::Any)));
}

#[test]
fn additional_properties_schema_types_extra_keys() {
    let Type::Struct(s) = root(json!({
        "type": "object", "properties": {"a": {"type": "string"}},
        "additionalProperties": {"type": "integer"}
    })) else {
        panic!("a struct")
    };
    assert_eq!(s.additional, Some(Box::new(Type::integer())));
}

#[test]
fn object_without_properties_is_a_map_of_anything() {
    assert_eq!(root(json!({"type": "object"})), Type::map(Type::Any));
}

#[test]
fn object_without_properties_is_a_map_of_additional_properties() {
    assert_eq!(
        root(json!({"type": "object", "additionalProperties": {"type": "number"}})),
        Type::map(Type::number())
    );
}

#[test]
fn object_allowing_no_keys_is_an_empty_struct() {
    assert_eq!(
        root(json!({"type": "object", "additionalProperties": false})),
        Type::Struct(StructType::anonymous())
    );
}

#[test]
fn property_names_enum_gives_enum_keys() {
    assert_eq!(
        root(json!({
            "type": "object", "additionalProperties": {"type": "integer"},
            "propertyNames": {"enum": ["low", "high"]}
        })),
        Type::Map(MapType {
            keys: MapKeys::Enum(EnumType::strings(["low", "high"])),
            values: Box::new(Type::integer()),
        })
    );
}

#[test]
fn property_names_pattern_is_rejected() {
    assert_eq!(
        error_paths(json!({"type": "object", "propertyNames": {"pattern": "^a"}})),
        ["/propertyNames/pattern", "/propertyNames"]
    );
}

#[test]
fn required_name_missing_from_properties_is_a_required_field_of_any_value() {
    // JSON Schema: the key must be there, and `properties` says nothing of its value.
    assert_eq!(
        root(json!({"type": "object", "properties": {}, "required": ["ghost"]})),
        closed(vec![Field::new("ghost", Type::Any)])
    );
    // ... unless `additionalProperties` types (or forbids) the keys beyond `properties`.
    let typed = root(json!({
        "type": "object", "properties": {}, "required": ["n"],
        "additionalProperties": {"type": "integer"}
    }));
    assert_eq!(
        typed,
        Type::Struct(StructType {
            fields: vec![Field::new("n", Type::integer())],
            additional: Some(Box::new(Type::integer())),
            ..StructType::default()
        })
    );
    assert_eq!(
        error_paths(json!({
            "type": "object", "properties": {}, "required": ["ghost"],
            "additionalProperties": false
        })),
        ["/required/0"]
    );
}

// ---- arrays ----

#[test]
fn items_length_bounds_and_uniqueness() {
    assert_eq!(
        root(json!({
            "type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4,
            "uniqueItems": true
        })),
        Type::Array(ArrayType {
            items: Box::new(Type::string()),
            min_items: Some(1),
            max_items: Some(4),
            unique_items: true,
        })
    );
}

#[test]
fn array_without_items_holds_anything() {
    assert_eq!(root(json!({"type": "array"})), Type::array(Type::Any));
}

#[test]
fn tuple_items_are_rejected() {
    assert_eq!(
        error_paths(json!({"type": "array", "items": [{"type": "string"}]})),
        ["/items"]
    );
}

// ---- unions ----

#[test]
fn any_of_with_null_is_nilable() {
    assert_eq!(
        root(json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})),
        Type::nilable(Type::integer())
    );
}

#[test]
fn any_of_scalars_is_a_union() {
    assert_eq!(
        root(json!({"anyOf": [{"type": "string"}, {"type": "boolean"}]})),
        Type::Union(vec![Type::string(), Type::Boolean])
    );
}

#[test]
fn one_of_is_read_as_a_union() {
    assert_eq!(
        root(json!({"oneOf": [{"type": "string"}, {"type": "boolean"}]})),
        Type::Union(vec![Type::string(), Type::Boolean])
    );
}

#[test]
fn any_of_variants_with_type_const_is_a_tagged_union() {
    let ty = root(json!({"anyOf": [
        {"type": "object", "properties": {
            "_type": {"type": "string", "const": "Circle"}, "radius": {"type": "number"}
        }, "required": ["_type", "radius"], "additionalProperties": false},
        {"type": "object", "title": "Box", "properties": {
            "_type": {"type": "string", "enum": ["Square"]}, "side": {"type": "number"}
        }, "required": ["_type", "side"]}
    ]}));
    assert_eq!(
        ty,
        Type::Tagged(
            TaggedUnion::new()
                .variant(
                    "Circle",
                    Type::Struct(
                        StructType::new("Circle").field(Field::new("radius", Type::number()))
                    ),
                )
                .variant(
                    "Square",
                    Type::Struct(StructType::new("Box").field(Field::new("side", Type::number()))),
                )
        )
    );
}

#[test]
fn objects_with_an_optional_type_property_stay_an_untagged_union() {
    let ty = root(json!({"anyOf": [
        {"type": "object", "properties": {"_type": {"const": "A"}}},
        {"type": "object", "properties": {"_type": {"const": "B"}}}
    ]}));
    assert!(
        matches!(ty, Type::Union(ref members) if members.len() == 2),
        "{ty:?}"
    );
}

// ---- references ----

#[test]
fn ref_into_defs_is_a_named_definition() {
    let graph = import(&json!({
        "type": "array", "items": {"$ref": "#/$defs/Tag"},
        "$defs": {"Tag": {"type": "string"}, "Unused": {"type": "integer"}}
    }))
    .unwrap();
    assert_eq!(graph.root, Type::array(Type::reference("Tag")));
    assert_eq!(graph.defs.len(), 1);
    assert_eq!(graph.defs["Tag"], Type::string());
}

#[test]
fn ref_into_definitions_is_a_named_definition() {
    let graph = import(&json!({
        "$ref": "#/definitions/Flag", "definitions": {"Flag": {"type": "boolean"}}
    }))
    .unwrap();
    assert_eq!(graph.root, Type::reference("Flag"));
    assert_eq!(graph.defs["Flag"], Type::Boolean);
}

#[test]
fn recursive_definition_imports_as_a_recursive_type() {
    let graph = import(&json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {"type": "object", "properties": {
            "label": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
        }, "required": ["label", "children"]}}
    }))
    .unwrap();
    assert_eq!(
        graph.defs["Node"],
        Type::Struct(
            StructType::new("Node")
                .field(Field::new("label", Type::string()))
                .field(Field::new("children", Type::array(Type::reference("Node"))))
        )
    );
    assert!(graph.dangling_refs().is_empty());
}

#[test]
fn escaped_definition_names_round_trip() {
    let graph = TypeGraph {
        root: Type::reference("a/b c~"),
        defs: [("a/b c~".to_owned(), Type::Boolean)].into_iter().collect(),
    };
    let schema = emit(&graph, Dialect::JsonSchema).unwrap();
    assert_eq!(import(&schema).unwrap(), graph);
}

#[test]
fn ref_to_a_missing_definition_is_rejected() {
    assert_eq!(error_paths(json!({"$ref": "#/$defs/Nope"})), ["/$ref"]);
}

#[test]
fn ref_outside_defs_is_rejected() {
    assert_eq!(
        error_paths(json!({"$ref": "https://example.com/schema.json"})),
        ["/$ref"]
    );
    assert_eq!(
        error_paths(json!({"$ref": "#/$defs/A/properties/b", "$defs": {"A": {}}})),
        ["/$ref"]
    );
}

#[test]
fn cycle_of_bare_references_is_rejected() {
    assert_eq!(
        error_paths(
            json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}})
        ),
        ["/$defs/A", "/$defs/B"]
    );
}

#[test]
fn defs_below_the_root_are_rejected() {
    assert_eq!(
        error_paths(json!({"type": "array", "items": {"$defs": {}}})),
        ["/items/$defs"]
    );
}

#[test]
fn keyword_beside_ref_is_rejected_but_description_is_kept() {
    assert_eq!(
        error_paths(
            json!({"$ref": "#/$defs/A", "minimum": 1, "$defs": {"A": {"type": "integer"}}})
        ),
        ["/minimum"]
    );
    assert!(
        import(&json!({"$ref": "#/$defs/A", "description": "an A", "$defs": {"A": {}}})).is_ok()
    );
}

// ---- annotations and rejections ----

#[test]
fn annotation_keywords_are_ignored() {
    let ty = root(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:x",
        "$comment": "c", "title": "T", "type": "string", "examples": ["a"],
        "deprecated": false, "readOnly": false, "writeOnly": false
    }));
    assert_eq!(ty, Type::string());
}

#[test]
fn every_unsupported_keyword_is_reported_at_its_path() {
    for keyword in [
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "patternProperties",
        "prefixItems",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contains",
        "uniqueItems",
        "minProperties",
        "$anchor",
        "x-custom",
    ] {
        let mut schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        schema["properties"]["a"][keyword] = json!({});
        let errors = import(&schema).unwrap_err();
        assert_eq!(errors.len(), 1, "{keyword}: {errors}");
        assert_eq!(errors.0[0].path, format!("/properties/a/{keyword}"));
        assert!(
            errors.0[0].message.contains(keyword),
            "{}",
            errors.0[0].message
        );
    }
}

#[test]
fn all_errors_are_collected() {
    let paths = error_paths(json!({
        "type": "object",
        "properties": {
            "a": {"allOf": []},
            "b": {"type": "array", "items": {"not": {}}},
            "c": {"type": "strin"}
        }
    }));
    assert_eq!(
        paths,
        [
            "/properties/a/allOf",
            "/properties/b/items/not",
            "/properties/c/type"
        ]
    );
}

#[test]
fn constraint_for_another_type_is_rejected() {
    assert_eq!(
        error_paths(json!({"type": "string", "minimum": 1})),
        ["/minimum"]
    );
}

#[test]
fn constraint_without_type_is_rejected() {
    assert_eq!(error_paths(json!({"minLength": 1})), [""]);
}

#[test]
fn invalid_pattern_is_rejected() {
    assert_eq!(
        error_paths(json!({"type": "string", "pattern": "("})),
        ["/pattern"]
    );
    // Not a regular expression in either mode: a validator refuses the schema too.
    for source in ["(", "a{2,1}", "[b-a]", "\\", "(?x)a"] {
        let schema = json!({"type": "string", "pattern": source});
        assert!(
            import_with(&schema, &ImportOptions::lenient()).is_err(),
            "{source}"
        );
    }
}

#[test]
fn a_pattern_the_linear_matcher_cannot_express_is_not_enforced_with_a_warning_by_a_lenient_import()
{
    for source in [
        "(?<=x)a",
        "(?=a)a",
        "(?!b)a",
        "(?<!x)a",
        "(a)\\1",
        "(?<n>a)\\k<n>",
    ] {
        let schema =
            json!({"type": "object", "properties": {"s": {"type": "string", "pattern": source}}});
        let imported = import_with(&schema, &ImportOptions::lenient())
            .unwrap_or_else(|e| panic!("{source}: {e}"));
        let field = match &imported.graph.root {
            Type::Struct(st) => &st.fields[0],
            other => panic!("{other:?}"),
        };
        assert_eq!(field.ty, Type::string(), "{source}: no pattern is enforced");
        let [warning] = &imported.warnings[..] else {
            panic!("{source}: one warning: {:?}", imported.warnings);
        };
        assert_eq!(
            (warning.path.as_str(), warning.code.as_str()),
            ("/properties/s/pattern", "unsupported_keyword"),
        );
        assert!(
            warning
                .message
                .starts_with(&format!("pattern `{source}` cannot be enforced: "))
                && warning.message.ends_with("; ignored"),
            "{}",
            warning.message
        );
        // A strict import refuses what it cannot enforce.
        let refused = import(&schema).unwrap_err();
        assert_eq!(refused.0[0].path, "/properties/s/pattern", "{source}");
        assert_eq!(refused.0[0].code.as_str(), "unsupported_keyword");
    }
}

#[test]
fn false_schema_is_read_exactly_where_it_has_a_reading_and_refused_where_nothing_is_valid() {
    // `items: false`: no items at all.
    assert_eq!(
        root(json!({"type": "array", "items": false})),
        Type::Array(ArrayType {
            items: Box::new(Type::Any),
            min_items: None,
            max_items: Some(0),
            unique_items: false,
        })
    );
    // A `false` member adds nothing to a union.
    assert_eq!(
        root(json!({"anyOf": [{"type": "string"}, false]})),
        Type::string()
    );
    // A `false` property in a closed object: the key must be absent, as any undeclared key.
    assert_eq!(
        root(json!({"type": "object", "properties": {"a": {"type": "string"}, "b": false}})),
        closed(vec![Field::new("a", Type::string()).optional()])
    );
    // Where nothing could ever be sent.
    assert_eq!(error_paths(json!(false)), [""]);
    assert_eq!(
        error_paths(json!({"type": "object", "properties": {"b": false}, "required": ["b"]})),
        ["/properties/b"]
    );
}

#[test]
fn schema_that_only_accepts_null_is_rejected() {
    assert_eq!(error_paths(json!({"type": "null"})), [""]);
}

#[test]
fn deeply_nested_schema_is_an_error_not_a_stack_overflow() {
    let mut schema = json!({"type": "string"});
    for _ in 0..10_000 {
        // Built by hand: `json!` would re-serialize the nested value at every level.
        let mut level = serde_json::Map::new();
        level.insert("type".to_owned(), json!("array"));
        level.insert("items".to_owned(), schema);
        schema = Value::Object(level);
    }
    let errors = import(&schema).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert!(
        errors.0[0].message.contains("deeper than 128"),
        "{}",
        errors.0[0]
    );
    assert_eq!(errors.0[0].path.matches("/items").count(), 129);
    // Dropping a 10 000-level value recursively would itself overflow a test thread's stack.
    std::mem::forget(schema);
}

#[test]
fn deeply_nested_default_is_rejected() {
    let mut default = json!(1);
    for _ in 0..200 {
        default = json!([default]);
    }
    let schema = json!({"type": "object", "properties": {"a": {"default": default}}});
    assert_eq!(error_paths(schema), ["/properties/a/default"]);
}

#[test]
fn error_renders_with_its_path() {
    let errors = import(&json!({"not": {}})).unwrap_err();
    assert_eq!(errors.to_string(), "/not: unsupported keyword `not`");
}

// ---- round trip of the reference shapes ----

#[test]
fn weather_lookup_parameters_import() {
    let ty = root(json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "Parameter city"},
            "units": {"type": ["string", "null"], "description": "Parameter units (optional)"}
        },
        "required": ["city"]
    }));
    assert_eq!(
        ty,
        closed(vec![
            Field::new("city", Type::string()).describe("Parameter city"),
            Field::new("units", Type::nilable(Type::string()))
                .describe("Parameter units (optional)")
                .optional(),
        ])
    );
}

#[test]
fn property_names_beyond_an_enum_are_not_enforced_with_a_warning_by_a_lenient_import() {
    for names in [
        json!({"pattern": "^a"}),
        json!({"maxLength": 3}),
        json!({"const": "a"}),
        json!(false),
    ] {
        let schema = json!({"type": "object", "propertyNames": names});
        let imported = import_with(&schema, &ImportOptions::lenient())
            .unwrap_or_else(|e| panic!("{names}: {e}"));
        assert_eq!(
            imported.graph.root,
            Type::Map(MapType::new(Type::Any)),
            "{names}"
        );
        let warnings: Vec<_> = imported
            .warnings
            .iter()
            .map(|w| (w.path.as_str(), w.code.as_str()))
            .collect();
        assert_eq!(
            warnings,
            [("/propertyNames", "unsupported_keyword")],
            "{names}"
        );
        assert!(import(&schema).is_err(), "{names}");
    }
    // `true` allows every name: nothing to enforce, in either mode.
    let schema = json!({"type": "object", "propertyNames": true});
    assert_eq!(root(schema), Type::Map(MapType::new(Type::Any)));
}

#[test]
fn a_fractional_multiple_of_an_integer_is_not_enforced_with_a_warning_by_a_lenient_import() {
    let schema = json!({"type": "integer", "multipleOf": 0.5});
    let imported = import_with(&schema, &ImportOptions::lenient()).unwrap();
    assert_eq!(imported.graph.root, Type::integer());
    assert_eq!(imported.warnings[0].path, "/multipleOf");
    assert_eq!(imported.warnings[0].code.as_str(), "unsupported_keyword");
    assert!(import(&schema).is_err());
    // Not a number greater than 0: no schema at all, in either mode.
    for bad in [json!(0), json!(-2), json!("2")] {
        let schema = json!({"type": "integer", "multipleOf": bad});
        assert!(
            import_with(&schema, &ImportOptions::lenient()).is_err(),
            "{bad}"
        );
    }
}
