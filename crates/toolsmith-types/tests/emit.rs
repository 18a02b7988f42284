//! Schema emission: golden JSON Schema 2020-12 for every kind of type, and the tool-parameters
//! object in the reference shape.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolsmith_types::{
    ArrayType, Definitions, Dialect, EmitError, EnumType, Field, IntegerType, MapKeys, MapType,
    NumberType, Pattern, StringType, StructType, TaggedUnion, Type, TypeGraph, emit,
    parameters_schema,
};

const SCHEMA_URI: &str = "https://json-schema.org/draft/2020-12/schema";

/// The schema of a graph without named types, without its `$schema` line.
fn schema_of(ty: Type) -> Value {
    let mut schema = emit(&TypeGraph::new(ty), Dialect::JsonSchema).unwrap();
    let removed = schema.as_object_mut().unwrap().shift_remove("$schema");
    assert_eq!(removed, Some(json!(SCHEMA_URI)));
    schema
}

fn params(graph: &TypeGraph) -> Value {
    parameters_schema(graph, Dialect::JsonSchema).unwrap()
}

fn graph_with(root: Type, defs: impl IntoIterator<Item = (&'static str, Type)>) -> TypeGraph {
    TypeGraph {
        root,
        defs: defs
            .into_iter()
            .map(|(name, ty)| (name.to_owned(), ty))
            .collect::<Definitions>(),
    }
}

fn tree_node() -> TypeGraph {
    graph_with(
        Type::reference("TreeNode"),
        [(
            "TreeNode",
            Type::Struct(
                StructType::new("TreeNode")
                    .describe("A node of a tree")
                    .field(Field::new("label", Type::string()))
                    .field(Field::new(
                        "children",
                        Type::array(Type::reference("TreeNode")),
                    )),
            ),
        )],
    )
}

#[test]
fn whole_document_declares_draft_2020_12() {
    let schema = emit(&TypeGraph::new(Type::Boolean), Dialect::JsonSchema).unwrap();
    assert_eq!(schema, json!({"$schema": SCHEMA_URI, "type": "boolean"}));
}

#[test]
fn string_writes_length_pattern_and_format() {
    let ty = Type::String(StringType {
        min_length: Some(1),
        max_length: Some(20),
        pattern: Some(Pattern::new("^[a-z]+$").unwrap()),
        format: Some("hostname".to_owned()),
    });
    assert_eq!(
        schema_of(ty),
        json!({"type": "string", "minLength": 1, "maxLength": 20, "pattern": "^[a-z]+$", "format": "hostname"})
    );
}

#[test]
fn integer_writes_every_bound() {
    let ty = Type::Integer(IntegerType {
        minimum: Some(-5),
        maximum: Some(50),
        exclusive_minimum: Some(-6),
        exclusive_maximum: Some(51),
        multiple_of: Some(5),
    });
    assert_eq!(
        schema_of(ty),
        json!({"type": "integer", "minimum": -5, "maximum": 50, "exclusiveMinimum": -6, "exclusiveMaximum": 51, "multipleOf": 5})
    );
}

#[test]
fn number_writes_every_bound() {
    let ty = Type::Number(NumberType {
        minimum: Some(0.5),
        maximum: Some(9.5),
        exclusive_minimum: Some(0.0),
        exclusive_maximum: Some(10.0),
        multiple_of: Some(0.25),
    });
    assert_eq!(
        schema_of(ty),
        json!({"type": "number", "minimum": 0.5, "maximum": 9.5, "exclusiveMinimum": 0.0, "exclusiveMaximum": 10.0, "multipleOf": 0.25})
    );
}

#[test]
fn boolean_and_any() {
    assert_eq!(schema_of(Type::Boolean), json!({"type": "boolean"}));
    assert_eq!(schema_of(Type::Any), json!({}));
}

#[test]
fn string_enum_keeps_declaration_order_and_description() {
    let ty = Type::Enum(EnumType::strings(["pending", "in_progress", "done"]).describe("Status"));
    assert_eq!(
        schema_of(ty),
        json!({"type": "string", "enum": ["pending", "in_progress", "done"], "description": "Status"})
    );
}

#[test]
fn enum_aliases_are_never_emitted() {
    let ty = Type::Enum(EnumType::strings(["high", "low"]).alias("high", "urgent"));
    assert_eq!(
        schema_of(ty),
        json!({"type": "string", "enum": ["high", "low"]})
    );
}

#[test]
fn integer_enum_is_typed_integer() {
    let ty = Type::Enum(EnumType::integers([1, 2, 3]));
    assert_eq!(schema_of(ty), json!({"type": "integer", "enum": [1, 2, 3]}));
}

#[test]
fn struct_is_closed_with_fields_in_order() {
    let ty = Type::Struct(
        StructType::new("Point")
            .describe("A point")
            .field(Field::new("y", Type::integer()).describe("Vertical"))
            .field(Field::new("x", Type::integer()))
            .field(Field::new("label", Type::string()).default_value(json!("origin"))),
    );
    assert_eq!(
        schema_of(ty),
        json!({
            "type": "object",
            "title": "Point",
            "description": "A point",
            "properties": {
                "y": {"type": "integer", "description": "Vertical"},
                "x": {"type": "integer"},
                "label": {"type": "string", "default": "origin"}
            },
            "required": ["y", "x"],
            "additionalProperties": false
        })
    );
}

#[test]
fn struct_property_order_is_declaration_order() {
    let ty = Type::Struct(
        StructType::anonymous()
            .field(Field::new("zeta", Type::Boolean))
            .field(Field::new("alpha", Type::Boolean)),
    );
    let schema = schema_of(ty);
    let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["zeta", "alpha"]);
}

#[test]
fn struct_with_additional_values_writes_their_schema() {
    let mut open = StructType::anonymous().field(Field::new("id", Type::integer()));
    open.additional = Some(Box::new(Type::string()));
    assert_eq!(
        schema_of(Type::Struct(open.clone())),
        json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}},
            "required": ["id"],
            "additionalProperties": {"type": "string"}
        })
    );
    open.additional = Some(Box::new(Type::Any));
    assert_eq!(
        schema_of(Type::Struct(open))["additionalProperties"],
        json!(true)
    );
}

#[test]
fn field_description_wins_over_its_type_description() {
    let ty = Type::Struct(
        StructType::anonymous().field(
            Field::new(
                "status",
                Type::Enum(EnumType::strings(["a"]).describe("From the type")),
            )
            .describe("From the field"),
        ),
    );
    assert_eq!(
        schema_of(ty)["properties"]["status"],
        json!({"type": "string", "enum": ["a"], "description": "From the field"})
    );
}

#[test]
fn array_writes_items_length_bounds_and_uniqueness() {
    let ty = Type::Array(ArrayType {
        items: Box::new(Type::string()),
        min_items: Some(1),
        max_items: Some(3),
        unique_items: true,
    });
    assert_eq!(
        schema_of(ty),
        json!({
            "type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3,
            "uniqueItems": true
        })
    );
}

#[test]
fn map_writes_value_schema_as_additional_properties() {
    assert_eq!(
        schema_of(Type::map(Type::integer())),
        json!({"type": "object", "additionalProperties": {"type": "integer"}})
    );
    assert_eq!(
        schema_of(Type::map(Type::Any)),
        json!({"type": "object", "additionalProperties": true})
    );
}

#[test]
fn map_with_enum_keys_writes_property_names() {
    let ty = Type::Map(MapType {
        keys: MapKeys::Enum(EnumType::strings(["low", "high"])),
        values: Box::new(Type::number()),
    });
    assert_eq!(
        schema_of(ty),
        json!({
            "type": "object",
            "additionalProperties": {"type": "number"},
            "propertyNames": {"enum": ["low", "high"]}
        })
    );
}

#[test]
fn map_of_union_values() {
    let ty = Type::map(Type::Union(vec![Type::string(), Type::integer()]));
    assert_eq!(
        schema_of(ty),
        json!({
            "type": "object",
            "additionalProperties": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
        })
    );
}

#[test]
fn nilable_scalar_is_a_type_array() {
    let ty = Type::nilable(Type::String(StringType {
        max_length: Some(5),
        ..StringType::default()
    }));
    assert_eq!(
        schema_of(ty),
        json!({"type": ["string", "null"], "maxLength": 5})
    );
}

#[test]
fn nilable_enum_includes_null_in_enum() {
    let ty = Type::nilable(Type::Enum(EnumType::strings(["metric", "imperial"])));
    assert_eq!(
        schema_of(ty),
        json!({"type": ["string", "null"], "enum": ["metric", "imperial", null]})
    );
}

#[test]
fn nilable_struct_is_a_type_array() {
    let ty = Type::nilable(Type::Struct(
        StructType::anonymous().field(Field::new("a", Type::Boolean)),
    ));
    assert_eq!(
        schema_of(ty),
        json!({
            "type": ["object", "null"],
            "properties": {"a": {"type": "boolean"}},
            "required": ["a"],
            "additionalProperties": false
        })
    );
}

#[test]
fn nilable_reference_is_any_of_with_null() {
    let graph = graph_with(
        Type::nilable(Type::reference("Leaf")),
        [("Leaf", Type::Boolean)],
    );
    assert_eq!(
        emit(&graph, Dialect::JsonSchema).unwrap(),
        json!({
            "$schema": SCHEMA_URI,
            "anyOf": [{"$ref": "#/$defs/Leaf"}, {"type": "null"}],
            "$defs": {"Leaf": {"type": "boolean"}}
        })
    );
}

#[test]
fn nilable_union_gains_a_null_member() {
    let ty = Type::nilable(Type::Union(vec![Type::string(), Type::integer()]));
    assert_eq!(
        schema_of(ty),
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
    );
}

#[test]
fn untagged_union_is_any_of() {
    let ty = Type::Union(vec![Type::Boolean, Type::array(Type::integer())]);
    assert_eq!(
        schema_of(ty),
        json!({"anyOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "integer"}}]})
    );
}

#[test]
fn tagged_union_variants_start_with_a_required_type_const() {
    let graph = graph_with(
        Type::Tagged(
            TaggedUnion::new()
                .variant(
                    "Circle",
                    Type::Struct(
                        StructType::new("Circle").field(Field::new("radius", Type::number())),
                    ),
                )
                .variant("Square", Type::reference("Square")),
        ),
        [(
            "Square",
            Type::Struct(
                StructType::new("Square")
                    .describe("Four equal sides")
                    .field(Field::new("side", Type::number())),
            ),
        )],
    );
    assert_eq!(
        emit(&graph, Dialect::JsonSchema).unwrap(),
        json!({
            "$schema": SCHEMA_URI,
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "_type": {"type": "string", "const": "Circle"},
                        "radius": {"type": "number"}
                    },
                    "required": ["_type", "radius"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "description": "Four equal sides",
                    "properties": {
                        "_type": {"type": "string", "const": "Square"},
                        "side": {"type": "number"}
                    },
                    "required": ["_type", "side"],
                    "additionalProperties": false
                }
            ]
        })
    );
}

#[test]
fn recursive_tree_node_uses_defs_and_ref() {
    assert_eq!(
        emit(&tree_node(), Dialect::JsonSchema).unwrap(),
        json!({
            "$schema": SCHEMA_URI,
            "$ref": "#/$defs/TreeNode",
            "$defs": {
                "TreeNode": {
                    "type": "object",
                    "description": "A node of a tree",
                    "properties": {
                        "label": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/TreeNode"}}
                    },
                    "required": ["label", "children"],
                    "additionalProperties": false
                }
            }
        })
    );
}

#[test]
fn only_reachable_definitions_are_written() {
    let graph = graph_with(
        Type::array(Type::reference("Used")),
        [("Unused", Type::Boolean), ("Used", Type::integer())],
    );
    let schema = emit(&graph, Dialect::JsonSchema).unwrap();
    assert_eq!(schema["$defs"], json!({"Used": {"type": "integer"}}));
}

#[test]
fn definition_named_unlike_its_struct_keeps_the_struct_name_as_title() {
    let graph = graph_with(
        Type::reference("Alias"),
        [("Alias", Type::Struct(StructType::new("Real")))],
    );
    let schema = emit(&graph, Dialect::JsonSchema).unwrap();
    assert_eq!(schema["$defs"]["Alias"]["title"], json!("Real"));
}

#[test]
fn definition_names_are_escaped_in_references() {
    let graph = graph_with(Type::reference("a/b c~"), [("a/b c~", Type::Boolean)]);
    let schema = emit(&graph, Dialect::JsonSchema).unwrap();
    assert_eq!(schema["$ref"], json!("#/$defs/a~1b%20c~0"));
    assert_eq!(schema["$defs"]["a/b c~"], json!({"type": "boolean"}));
}

#[test]
fn dangling_reference_is_an_error() {
    let graph = TypeGraph::new(Type::array(Type::reference("Missing")));
    assert_eq!(
        emit(&graph, Dialect::JsonSchema),
        Err(EmitError::DanglingRef("Missing".to_owned()))
    );
}

#[test]
fn cycle_of_bare_references_is_dangling() {
    let graph = graph_with(
        Type::reference("A"),
        [("A", Type::reference("B")), ("B", Type::reference("A"))],
    );
    assert!(matches!(
        emit(&graph, Dialect::JsonSchema),
        Err(EmitError::DanglingRef(_))
    ));
}

#[test]
fn union_without_members_is_an_error() {
    let err = emit(
        &TypeGraph::new(Type::array(Type::Union(vec![]))),
        Dialect::JsonSchema,
    )
    .unwrap_err();
    assert!(
        matches!(err, EmitError::InvalidType { ref path, .. } if path == "/items"),
        "{err}"
    );
}

#[test]
fn non_finite_bound_is_an_error() {
    let ty = Type::Number(NumberType {
        maximum: Some(f64::INFINITY),
        ..NumberType::default()
    });
    let err = emit(&TypeGraph::new(ty), Dialect::JsonSchema).unwrap_err();
    assert!(
        matches!(err, EmitError::InvalidType { ref path, .. } if path == "/maximum"),
        "{err}"
    );
}

#[test]
fn tagged_variant_declaring_type_field_is_an_error() {
    let ty = Type::Tagged(TaggedUnion::new().variant(
        "A",
        Type::Struct(StructType::anonymous().field(Field::new("_type", Type::string()))),
    ));
    let err = emit(&TypeGraph::new(ty), Dialect::JsonSchema).unwrap_err();
    assert!(matches!(err, EmitError::InvalidType { .. }), "{err}");
}

#[test]
fn nesting_past_the_limit_is_an_error_not_a_crash() {
    let mut ty = Type::Boolean;
    for _ in 0..200 {
        ty = Type::array(ty);
    }
    let err = emit(&TypeGraph::new(ty), Dialect::JsonSchema).unwrap_err();
    assert!(matches!(err, EmitError::TooDeep { .. }), "{err}");
}

// ---- tool parameters ----

fn weather_lookup() -> TypeGraph {
    TypeGraph::new(Type::Struct(
        StructType::new("WeatherLookup")
            .field(Field::new("city", Type::string()))
            .field(Field::new("units", Type::nilable(Type::string())).optional()),
    ))
}

#[test]
fn weather_lookup_parameters_match_the_reference_shape() {
    assert_eq!(
        params(&weather_lookup()),
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "Parameter city"},
                "units": {"type": ["string", "null"], "description": "Parameter units (optional)"}
            },
            "required": ["city"],
            "additionalProperties": false
        })
    );
}

#[test]
fn optional_field_that_is_not_nilable_keeps_its_type() {
    let graph = TypeGraph::new(Type::Struct(
        StructType::anonymous().field(Field::new("limit", Type::integer()).optional()),
    ));
    assert_eq!(
        params(&graph)["properties"]["limit"],
        json!({"type": "integer", "description": "Parameter limit (optional)"})
    );
}

#[test]
fn real_description_wins_over_the_fallback() {
    let graph = TypeGraph::new(Type::Struct(
        StructType::anonymous()
            .field(Field::new("city", Type::string()).describe("The city to look up"))
            .field(
                Field::new(
                    "units",
                    Type::nilable(Type::Enum(
                        EnumType::strings(["c", "f"]).describe("Temperature scale"),
                    )),
                )
                .optional(),
            ),
    ));
    let schema = params(&graph);
    assert_eq!(
        schema["properties"]["city"]["description"],
        json!("The city to look up")
    );
    assert_eq!(
        schema["properties"]["units"],
        json!({"type": ["string", "null"], "enum": ["c", "f", null], "description": "Temperature scale"})
    );
}

#[test]
fn nested_properties_get_no_fallback_description() {
    let graph = TypeGraph::new(Type::Struct(StructType::anonymous().field(Field::new(
        "inner",
        Type::Struct(StructType::anonymous().field(Field::new("x", Type::integer()))),
    ))));
    assert_eq!(
        params(&graph)["properties"]["inner"]["properties"]["x"],
        json!({"type": "integer"})
    );
}

#[test]
fn parameters_from_a_reference_are_written_in_place() {
    let graph = graph_with(
        Type::reference("Args"),
        [(
            "Args",
            Type::Struct(StructType::new("Args").field(Field::new("q", Type::string()))),
        )],
    );
    assert_eq!(
        params(&graph),
        json!({
            "type": "object",
            "properties": {"q": {"type": "string", "description": "Parameter q"}},
            "required": ["q"],
            "additionalProperties": false
        })
    );
}

#[test]
fn recursive_parameters_include_defs() {
    let schema = params(&tree_node());
    assert_eq!(
        schema["properties"]["children"],
        json!({"type": "array", "items": {"$ref": "#/$defs/TreeNode"}, "description": "Parameter children"})
    );
    assert_eq!(
        schema["$defs"]["TreeNode"]["properties"]["children"],
        json!({"type": "array", "items": {"$ref": "#/$defs/TreeNode"}})
    );
}

#[test]
fn parameters_root_must_be_a_struct() {
    assert_eq!(
        parameters_schema(&TypeGraph::new(Type::string()), Dialect::JsonSchema),
        Err(EmitError::ParametersNotObject("string"))
    );
    assert_eq!(
        parameters_schema(
            &TypeGraph::new(Type::reference("Nowhere")),
            Dialect::JsonSchema
        ),
        Err(EmitError::DanglingRef("Nowhere".to_owned()))
    );
}

/// The reference's `create_task(task: TaskRequest)` tool.
fn task_request() -> TypeGraph {
    let priority = Type::Enum(EnumType::strings(["low", "medium", "high", "critical"]));
    let status = Type::Enum(EnumType::strings(["pending", "in_progress", "completed"]));
    let metadata = Type::Struct(
        StructType::new("TaskMetadata")
            .field(Field::new("id", Type::string()))
            .field(Field::new("priority", Type::reference("Priority")))
            .field(Field::new("tags", Type::array(Type::string())))
            .field(Field::new("estimated_hours", Type::nilable(Type::number())).optional()),
    );
    let request = Type::Struct(
        StructType::new("TaskRequest")
            .field(Field::new("title", Type::string()))
            .field(Field::new("description", Type::string()))
            .field(Field::new("status", Type::reference("TaskStatus")))
            .field(Field::new("metadata", Type::reference("TaskMetadata")))
            .field(Field::new("assignees", Type::array(Type::string()))),
    );
    let task = StructType::anonymous().field(Field::new("task", Type::reference("TaskRequest")));
    graph_with(
        Type::Struct(task),
        [
            ("TaskRequest", request),
            ("TaskStatus", status),
            ("TaskMetadata", metadata),
            ("Priority", priority),
        ],
    )
}

#[test]
fn task_request_parameters() {
    assert_eq!(
        params(&task_request()),
        json!({
            "type": "object",
            "properties": {
                "task": {"$ref": "#/$defs/TaskRequest", "description": "Parameter task"}
            },
            "required": ["task"],
            "additionalProperties": false,
            "$defs": {
                "TaskRequest": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string"},
                        "description": {"type": "string"},
                        "status": {"$ref": "#/$defs/TaskStatus"},
                        "metadata": {"$ref": "#/$defs/TaskMetadata"},
                        "assignees": {"type": "array", "items": {"type": "string"}}
                    },
                    "required": ["title", "description", "status", "metadata", "assignees"],
                    "additionalProperties": false
                },
                "TaskStatus": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                "TaskMetadata": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "priority": {"$ref": "#/$defs/Priority"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "estimated_hours": {"type": ["number", "null"]}
                    },
                    "required": ["id", "priority", "tags"],
                    "additionalProperties": false
                },
                "Priority": {"type": "string", "enum": ["low", "medium", "high", "critical"]}
            }
        })
    );
}

#[test]
fn emitted_schemas_pass_the_2020_12_metaschema() {
    for schema in [
        emit(&tree_node(), Dialect::JsonSchema).unwrap(),
        params(&task_request()),
        params(&weather_lookup()),
    ] {
        assert!(
            jsonschema::draft202012::meta::validate(&schema).is_ok(),
            "{schema:#}"
        );
    }
}

#[test]
fn task_request_schema_accepts_the_reference_arguments() {
    let validator = jsonschema::draft202012::new(&params(&task_request())).unwrap();
    let good = json!({"task": {
        "title": "Ship", "description": "Ship it", "status": "in_progress",
        "metadata": {"id": "T-1", "priority": "high", "tags": ["a"], "estimated_hours": 3.5},
        "assignees": ["ann"]
    }});
    assert!(validator.is_valid(&good));
    let mut bad = good.clone();
    bad["task"]["metadata"]["priority"] = json!("HIGH");
    assert!(!validator.is_valid(&bad));
}
