//! Dialects (`dialects.md`): the names of the dialects, golden parameters of the reference's
//! example tools in every dialect, each row of the rules table checked on those examples (one
//! behaviour per test), and each dialect's wire shapes read back into the canonical value.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use toolsmith_types::{
    Definitions, Dialect, EmitError, EnumType, Field, IntegerType, NumberType, Policy, StringType,
    StructType, TaggedUnion, Type, TypeGraph, coerce, emit, parameters_schema,
};

use support::{RuleCheck, assert_golden};

// ---------------------------------------------------------------------------------------------
// The examples

fn graph_with(root: Type, defs: impl IntoIterator<Item = (&'static str, Type)>) -> TypeGraph {
    TypeGraph {
        root,
        defs: defs
            .into_iter()
            .map(|(name, ty)| (name.to_owned(), ty))
            .collect::<Definitions>(),
    }
}

/// `get_weather(city, units = "celsius", days: Option<u8>)`.
fn weather_lookup() -> TypeGraph {
    TypeGraph::new(Type::Struct(
        StructType::new("WeatherLookup")
            .field(Field::new("city", Type::string()).describe("The city to look up"))
            .field(
                Field::new(
                    "units",
                    Type::Enum(EnumType::strings(["celsius", "fahrenheit"])),
                )
                .describe("Temperature units")
                .default_value(json!("celsius")),
            )
            .field(
                Field::new(
                    "days",
                    Type::nilable(Type::Integer(IntegerType::range(1, 14))),
                )
                .optional(),
            ),
    ))
}

/// The reference's `create_task(task: TaskRequest)`: nested structs, enums and defaults.
fn task_request() -> TypeGraph {
    let priority = Type::Enum(EnumType::strings(["low", "medium", "high", "critical"]));
    let status = Type::Enum(EnumType::strings(["pending", "in_progress", "completed"]));
    let metadata = Type::Struct(
        StructType::new("TaskMetadata")
            .field(Field::new("id", Type::string()))
            .field(
                Field::new("priority", Type::reference("Priority")).default_value(json!("medium")),
            )
            .field(Field::new(
                "points",
                Type::Enum(EnumType::integers([1, 2, 3, 5, 8])),
            ))
            .field(Field::new("tags", Type::array(Type::string())))
            .field(Field::new("estimated_hours", Type::nilable(Type::number())).optional()),
    );
    let request = Type::Struct(
        StructType::new("TaskRequest")
            .describe("A task to create")
            .field(Field::new(
                "title",
                Type::String(StringType {
                    max_length: Some(80),
                    ..StringType::default()
                }),
            ))
            .field(
                Field::new("status", Type::reference("TaskStatus")).default_value(json!("pending")),
            )
            .field(Field::new("metadata", Type::reference("TaskMetadata")))
            .field(Field::new("assignees", Type::array(Type::string()))),
    );
    graph_with(
        Type::Struct(
            StructType::anonymous().field(Field::new("task", Type::reference("TaskRequest"))),
        ),
        [
            ("TaskRequest", request),
            ("TaskStatus", status),
            ("TaskMetadata", metadata),
            ("Priority", priority),
        ],
    )
}

/// A shape: `Circle { radius > 0 }` or `Rectangle { width, height }`.
fn shape_defs() -> [(&'static str, Type); 2] {
    let positive = || {
        Type::Number(NumberType {
            exclusive_minimum: Some(0.0),
            ..NumberType::default()
        })
    };
    let shape = Type::Tagged(
        TaggedUnion::new()
            .variant(
                "Circle",
                Type::Struct(StructType::new("Circle").field(Field::new("radius", positive()))),
            )
            .variant("Rectangle", Type::reference("Rectangle")),
    );
    let rectangle = Type::Struct(
        StructType::new("Rectangle")
            .describe("Four right angles")
            .field(Field::new("width", positive()))
            .field(Field::new("height", positive())),
    );
    [("Shape", shape), ("Rectangle", rectangle)]
}

/// `area(shape: Shape, label: Option<String>)`.
fn union_parameter() -> TypeGraph {
    graph_with(
        Type::Struct(
            StructType::anonymous()
                .field(
                    Field::new("shape", Type::reference("Shape")).describe("The shape to measure"),
                )
                .field(Field::new("label", Type::string()).optional()),
        ),
        shape_defs(),
    )
}

/// `draw(layers: HashMap<String, Shape>)`.
fn map_of_unions() -> TypeGraph {
    graph_with(
        Type::Struct(
            StructType::anonymous()
                .field(Field::new("layers", Type::map(Type::reference("Shape")))),
        ),
        shape_defs(),
    )
}

/// `outline(root: TreeNode)`, a node holding `Vec<TreeNode>`.
fn recursive_tree() -> TypeGraph {
    graph_with(
        Type::Struct(
            StructType::anonymous().field(Field::new("root", Type::reference("TreeNode"))),
        ),
        [(
            "TreeNode",
            Type::Struct(
                StructType::new("TreeNode")
                    .describe("A node of an outline")
                    .field(Field::new("label", Type::string()))
                    .field(Field::new(
                        "children",
                        Type::array(Type::reference("TreeNode")),
                    )),
            ),
        )],
    )
}

fn examples() -> [(&'static str, TypeGraph); 5] {
    [
        ("weather_lookup", weather_lookup()),
        ("task_request", task_request()),
        ("union_parameter", union_parameter()),
        ("map_of_unions", map_of_unions()),
        ("recursive_tree", recursive_tree()),
    ]
}

/// The parameters of every example the dialect can write.
fn written_in(dialect: Dialect) -> Vec<(&'static str, Value)> {
    examples()
        .into_iter()
        .filter_map(|(name, graph)| parameters_schema(&graph, dialect).ok().map(|s| (name, s)))
        .collect()
}

/// Asserts that every example written in `dialect` keeps the rule `check` tests.
fn assert_rule(dialect: Dialect, check: RuleCheck) {
    let written = written_in(dialect);
    assert_eq!(written.len(), expressible(dialect), "{dialect}");
    for (name, schema) in written {
        let broken = check(&schema);
        assert!(
            broken.is_empty(),
            "{name} in {dialect} breaks it at {broken:?}\n{schema:#}"
        );
    }
}

/// How many examples a dialect can write: all but the recursive one where recursion is refused.
fn expressible(dialect: Dialect) -> usize {
    match dialect {
        Dialect::Gemini | Dialect::Anthropic { strict: true } => 4,
        _ => 5,
    }
}

const OPENAI_STRICT: Dialect = Dialect::OpenAi { strict: true };
const ANTHROPIC_STRICT: Dialect = Dialect::Anthropic { strict: true };

// ---------------------------------------------------------------------------------------------
// Names

#[test]
fn every_dialect_has_its_command_line_name() {
    let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.as_str()).collect();
    assert_eq!(
        names,
        [
            "json-schema",
            "openai",
            "openai-strict",
            "anthropic",
            "anthropic-strict",
            "gemini",
            "mcp"
        ]
    );
}

#[test]
fn a_command_line_name_parses_to_its_dialect() {
    for dialect in Dialect::ALL {
        assert_eq!(dialect.to_string().parse::<Dialect>(), Ok(dialect));
    }
}

#[test]
fn a_name_parses_in_any_case_and_with_underscores_or_spaces_for_dashes() {
    let cases = [
        ("OpenAI", Dialect::OpenAi { strict: false }),
        ("OPENAI", Dialect::OpenAi { strict: false }),
        ("openai_strict", Dialect::OpenAi { strict: true }),
        ("OpenAI-Strict", Dialect::OpenAi { strict: true }),
        ("Anthropic Strict", Dialect::Anthropic { strict: true }),
        ("JSON_Schema", Dialect::JsonSchema),
        ("Gemini", Dialect::Gemini),
        (" MCP ", Dialect::Mcp),
    ];
    for (name, dialect) in cases {
        assert_eq!(name.parse::<Dialect>(), Ok(dialect), "{name}");
    }
}

#[test]
fn an_unknown_name_is_refused_listing_the_valid_ones() {
    for name in ["openia", "openai--strict", "openaistrict", "open-ai", ""] {
        let error = name.parse::<Dialect>().unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "unknown dialect `{name}`; expected one of json-schema, openai, openai-strict, \
                 anthropic, anthropic-strict, gemini, mcp"
            )
        );
    }
}

#[test]
fn the_default_dialect_is_canonical_json_schema() {
    assert_eq!(Dialect::default(), Dialect::JsonSchema);
}

// ---------------------------------------------------------------------------------------------
// Golden files: `UPDATE_GOLDEN=1 cargo test -p toolsmith-types --test dialects` rewrites them

/// The golden file of one example in one dialect: its parameters, or the error refusing them.
fn golden_text(graph: &TypeGraph, dialect: Dialect) -> String {
    let value = match parameters_schema(graph, dialect) {
        Ok(schema) => schema,
        Err(error) => json!({ "error": error.to_string() }),
    };
    serde_json::to_string_pretty(&value).unwrap() + "\n"
}

fn assert_golden_in_every_dialect(example: &str, graph: &TypeGraph) {
    for dialect in Dialect::ALL {
        assert_golden(
            &format!("{example}/{dialect}.json"),
            &golden_text(graph, dialect),
        );
    }
}

#[test]
fn weather_lookup_matches_its_golden_files() {
    assert_golden_in_every_dialect("weather_lookup", &weather_lookup());
}

#[test]
fn task_request_matches_its_golden_files() {
    assert_golden_in_every_dialect("task_request", &task_request());
}

#[test]
fn union_parameter_matches_its_golden_files() {
    assert_golden_in_every_dialect("union_parameter", &union_parameter());
}

#[test]
fn map_of_unions_matches_its_golden_files() {
    assert_golden_in_every_dialect("map_of_unions", &map_of_unions());
}

#[test]
fn recursive_tree_matches_its_golden_files() {
    assert_golden_in_every_dialect("recursive_tree", &recursive_tree());
}

#[test]
fn golden_parameters_are_valid_2020_12_except_geminis() {
    for dialect in Dialect::ALL.into_iter().filter(|d| *d != Dialect::Gemini) {
        for (name, schema) in written_in(dialect) {
            let verdict =
                jsonschema::draft202012::meta::validate(&schema).map_err(|e| e.to_string());
            assert!(verdict.is_ok(), "{name} in {dialect}: {verdict:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The rules table, one row at a time

#[test]
fn every_receiver_gets_an_object_at_the_root() {
    for dialect in Dialect::ALL.into_iter().skip(1) {
        assert_rule(dialect, support::root_is_object);
    }
}

#[test]
fn a_whole_document_for_a_receiver_refuses_a_root_that_is_not_an_object() {
    let list = TypeGraph::new(Type::array(Type::string()));
    for dialect in Dialect::ALL.into_iter().skip(1) {
        assert_eq!(
            emit(&list, dialect),
            Err(EmitError::RootNotObject {
                dialect,
                found: "array".to_owned()
            }),
        );
    }
}

#[test]
fn a_whole_document_for_a_receiver_writes_a_root_reference_in_place() {
    let graph = TypeGraph {
        root: Type::reference("TreeNode"),
        defs: recursive_tree().defs,
    };
    let schema = emit(&graph, Dialect::Mcp).unwrap();
    assert_eq!(schema["type"], json!("object"));
    assert_eq!(
        schema["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/TreeNode"})
    );
    assert!(schema.get("$schema").is_none());
}

#[test]
fn openai_strict_lists_every_property_in_required() {
    assert_rule(OPENAI_STRICT, support::every_property_required);
}

#[test]
fn openai_strict_makes_an_optional_field_a_union_with_null() {
    let schema = parameters_schema(&weather_lookup(), OPENAI_STRICT).unwrap();
    assert_eq!(
        schema["properties"]["units"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(
        schema["properties"]["units"]["enum"],
        json!(["celsius", "fahrenheit", null])
    );
}

#[test]
fn openai_strict_closes_every_object() {
    assert_rule(OPENAI_STRICT, support::objects_closed);
}

#[test]
fn openai_strict_sends_a_map_as_key_value_entries() {
    assert_rule(OPENAI_STRICT, support::no_map_objects);
    let schema = parameters_schema(&map_of_unions(), OPENAI_STRICT).unwrap();
    let layers = &schema["properties"]["layers"];
    assert_eq!(layers["type"], json!("array"));
    assert_eq!(layers["items"]["required"], json!(["key", "value"]));
    assert_eq!(
        layers["items"]["properties"]["key"],
        json!({"type": "string"})
    );
}

#[test]
fn openai_strict_spells_the_type_tag_as_a_one_value_enum() {
    assert_rule(OPENAI_STRICT, support::tags_are_one_value_enums);
}

#[test]
fn openai_strict_leaves_out_unsupported_keywords() {
    assert_rule(
        OPENAI_STRICT,
        support::no_openai_strict_unsupported_keywords,
    );
}

#[test]
fn openai_strict_moves_a_default_into_the_description() {
    let schema = parameters_schema(&weather_lookup(), OPENAI_STRICT).unwrap();
    assert_eq!(
        schema["properties"]["units"]["description"],
        json!("Temperature units (default: \"celsius\")")
    );
}

#[test]
fn openai_strict_says_a_default_once_where_the_description_states_it() {
    let flag = |description: &str, default: Value| {
        Field::new("flag", Type::Boolean)
            .optional()
            .describe(description)
            .default_value(default)
    };
    let limit = |description: &str| {
        Field::new("limit", Type::integer())
            .optional()
            .describe(description)
            .default_value(json!(20))
    };
    let state = |description: &str| {
        Field::new("state", Type::string())
            .optional()
            .describe(description)
            .default_value(json!("open"))
    };
    let graph = TypeGraph::new(Type::Struct(
        StructType::anonymous()
            .field(flag(
                "Match letters in either case (default true)",
                json!(true),
            ))
            .field(limit("At most this many; defaults to 20."))
            .field(state("Which state (default: `open`)")),
    ));
    let schema = parameters_schema(&graph, OPENAI_STRICT).unwrap();
    let described = |name: &str| schema["properties"][name]["description"].clone();
    assert_eq!(
        described("flag"),
        json!("Match letters in either case (default true)")
    );
    assert_eq!(
        described("limit"),
        json!("At most this many; defaults to 20.")
    );
    assert_eq!(described("state"), json!("Which state (default: `open`)"));

    // A description that names another value, or the word alone, gets the default said.
    let graph = TypeGraph::new(Type::Struct(
        StructType::anonymous()
            .field(flag("Sort (default false, unlike grep)", json!(true)))
            .field(limit("At most this many (default 200)"))
            .field(state("By default, open ones")),
    ));
    let schema = parameters_schema(&graph, OPENAI_STRICT).unwrap();
    let described = |name: &str| schema["properties"][name]["description"].clone();
    assert_eq!(
        described("flag"),
        json!("Sort (default false, unlike grep) (default: true)")
    );
    assert_eq!(
        described("limit"),
        json!("At most this many (default 200) (default: 20)")
    );
    assert_eq!(
        described("state"),
        json!("By default, open ones (default: \"open\")")
    );
}

#[test]
fn openai_writes_no_ref_with_sibling_keywords() {
    assert_rule(Dialect::OpenAi { strict: false }, support::no_ref_siblings);
    assert_rule(OPENAI_STRICT, support::no_ref_siblings);
}

#[test]
fn openai_keeps_recursion_as_references() {
    let schema = parameters_schema(&recursive_tree(), OPENAI_STRICT).unwrap();
    assert_eq!(
        schema["properties"]["root"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/TreeNode"})
    );
    assert!(schema["$defs"]["TreeNode"].is_object());
}

#[test]
fn openai_not_strict_keeps_optional_fields_out_of_required() {
    let schema = parameters_schema(&weather_lookup(), Dialect::OpenAi { strict: false }).unwrap();
    assert_eq!(schema["required"], json!(["city"]));
    assert_eq!(schema["properties"]["units"]["default"], json!("celsius"));
}

#[test]
fn anthropic_writes_the_canonical_schema() {
    for (_, graph) in examples() {
        assert_eq!(
            parameters_schema(&graph, Dialect::Anthropic { strict: false }),
            parameters_schema(&graph, Dialect::JsonSchema)
        );
    }
}

#[test]
fn anthropic_strict_closes_every_object() {
    assert_rule(ANTHROPIC_STRICT, support::objects_closed);
}

#[test]
fn anthropic_strict_sends_a_map_as_key_value_entries() {
    assert_rule(ANTHROPIC_STRICT, support::no_map_objects);
}

#[test]
fn anthropic_strict_leaves_out_numeric_and_length_bounds() {
    assert_rule(ANTHROPIC_STRICT, support::no_bounds);
    let schema = parameters_schema(&weather_lookup(), ANTHROPIC_STRICT).unwrap();
    assert_eq!(
        schema["properties"]["days"],
        json!({"type": ["integer", "null"], "description": "Parameter days (optional) (minimum: 1, maximum: 14)"})
    );
}

#[test]
fn anthropic_strict_keeps_optional_fields_out_of_required() {
    let schema = parameters_schema(&weather_lookup(), ANTHROPIC_STRICT).unwrap();
    assert_eq!(schema["required"], json!(["city"]));
}

#[test]
fn anthropic_strict_refuses_a_recursive_type() {
    assert_eq!(
        parameters_schema(&recursive_tree(), ANTHROPIC_STRICT),
        Err(EmitError::Recursive {
            path: "/properties/root".to_owned(),
            name: "TreeNode".to_owned(),
            dialect: ANTHROPIC_STRICT,
        })
    );
}

#[test]
fn gemini_inlines_every_reference() {
    assert_rule(Dialect::Gemini, support::no_refs);
}

#[test]
fn gemini_refuses_a_recursive_type() {
    let error = parameters_schema(&recursive_tree(), Dialect::Gemini).unwrap_err();
    assert_eq!(
        error.to_string(),
        "/properties/root: `TreeNode` refers to itself, and gemini does not allow recursive types"
    );
}

#[test]
fn gemini_spells_null_as_nullable_not_a_type_array() {
    assert_rule(Dialect::Gemini, support::no_type_arrays);
    let schema = parameters_schema(&weather_lookup(), Dialect::Gemini).unwrap();
    assert_eq!(schema["properties"]["days"]["nullable"], json!(true));
}

#[test]
fn gemini_makes_an_optional_field_nullable_and_leaves_it_out_of_required() {
    assert_rule(Dialect::Gemini, support::optional_properties_nullable);
    let schema = parameters_schema(&weather_lookup(), Dialect::Gemini).unwrap();
    assert_eq!(schema["required"], json!(["city"]));
}

#[test]
fn gemini_writes_no_additional_properties() {
    assert_rule(Dialect::Gemini, support::no_additional_properties);
}

#[test]
fn gemini_sends_a_map_as_key_value_entries() {
    let schema = parameters_schema(&map_of_unions(), Dialect::Gemini).unwrap();
    assert_eq!(schema["properties"]["layers"]["type"], json!("array"));
    assert_eq!(
        schema["properties"]["layers"]["items"]["required"],
        json!(["key", "value"])
    );
}

#[test]
fn gemini_writes_string_enums_only_spelling_integers_as_text() {
    assert_rule(Dialect::Gemini, support::string_enums_only);
    let schema = parameters_schema(&task_request(), Dialect::Gemini).unwrap();
    assert_eq!(
        schema["properties"]["task"]["properties"]["metadata"]["properties"]["points"],
        json!({"type": "string", "enum": ["1", "2", "3", "5", "8"]})
    );
}

#[test]
fn gemini_writes_no_const() {
    assert_rule(Dialect::Gemini, support::no_const);
    assert_rule(Dialect::Gemini, support::tags_are_one_value_enums);
}

#[test]
fn gemini_leaves_out_keywords_its_schema_lacks() {
    assert_rule(Dialect::Gemini, support::only_gemini_keywords);
    let schema = parameters_schema(&union_parameter(), Dialect::Gemini).unwrap();
    assert_eq!(
        schema["properties"]["shape"]["anyOf"][0]["properties"]["radius"],
        json!({"type": "number", "description": "exclusiveMinimum: 0.0"})
    );
}

#[test]
fn gemini_keeps_only_the_date_time_format() {
    let format = |f: &str| {
        Type::String(StringType {
            format: Some(f.to_owned()),
            ..StringType::default()
        })
    };
    let graph = TypeGraph::new(Type::Struct(
        StructType::anonymous()
            .field(Field::new("at", format("date-time")))
            .field(Field::new("mail", format("email"))),
    ));
    let schema = parameters_schema(&graph, Dialect::Gemini).unwrap();
    assert_eq!(schema["properties"]["at"]["format"], json!("date-time"));
    assert_eq!(
        schema["properties"]["mail"],
        json!({"type": "string", "description": "Parameter mail (format: \"email\")"})
    );
}

#[test]
fn mcp_parameters_state_json_schema_2020_12_and_keep_named_types_in_defs() {
    let schema = parameters_schema(&task_request(), Dialect::Mcp).unwrap();
    assert_eq!(
        schema["$schema"],
        json!("https://json-schema.org/draft/2020-12/schema")
    );
    assert_eq!(
        schema["properties"]["task"],
        json!({"$ref": "#/$defs/TaskRequest", "description": "Parameter task"})
    );
    assert_eq!(schema["$defs"]["TaskRequest"]["type"], json!("object"));
    // A whole document (an output schema) states no dialect: older clients compile it as
    // draft-07.
    let output = emit(&task_request(), Dialect::Mcp).unwrap();
    assert!(output.get("$schema").is_none(), "{output}");
}

#[test]
fn mcp_keeps_a_recursive_type_as_a_reference() {
    let schema = parameters_schema(&recursive_tree(), Dialect::Mcp).unwrap();
    assert_eq!(
        schema["properties"]["root"],
        json!({"$ref": "#/$defs/TreeNode", "description": "Parameter root"})
    );
}

#[test]
fn mcp_keeps_maps_and_the_type_tag_as_declared() {
    assert_rule(Dialect::Mcp, support::tags_are_const);
    let schema = parameters_schema(&map_of_unions(), Dialect::Mcp).unwrap();
    assert_eq!(schema["properties"]["layers"]["type"], json!("object"));
}

#[test]
fn schema_key_order_keeps_the_type_tag_first_and_fields_in_declaration_order() {
    for dialect in Dialect::ALL {
        let schema = parameters_schema(&union_parameter(), dialect).unwrap();
        let circle = match &schema["properties"]["shape"]["anyOf"][0] {
            Value::Null => &schema["$defs"]["Shape"]["anyOf"][0],
            inline => inline,
        };
        let keys: Vec<&String> = circle["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["_type", "radius"], "{dialect}");
    }
}

// ---------------------------------------------------------------------------------------------
// Wire shapes, read back into the canonical value

fn coerced_in(dialect: Dialect, graph: &TypeGraph, input: Value) -> (Value, Vec<&'static str>) {
    let out = coerce(graph, &input, &Policy::strict().with_dialect(dialect))
        .unwrap_or_else(|e| panic!("{input} refused in {dialect}:\n{e}"));
    let codes = out.repairs.iter().map(|r| r.code.as_str()).collect();
    (out.value, codes)
}

#[test]
fn null_for_an_omitted_optional_field_in_openai_strict_fills_its_default_without_a_repair() {
    let input = json!({"city": "Oslo", "units": null, "days": null});
    let (value, repairs) = coerced_in(OPENAI_STRICT, &weather_lookup(), input);
    assert_eq!(
        value,
        json!({"city": "Oslo", "units": "celsius", "days": null})
    );
    assert!(repairs.is_empty(), "{repairs:?}");
}

#[test]
fn null_for_an_omitted_optional_field_without_a_default_leaves_the_key_out() {
    let graph = TypeGraph::new(Type::Struct(
        StructType::anonymous().field(Field::new("limit", Type::integer()).optional()),
    ));
    for dialect in [OPENAI_STRICT, Dialect::Gemini] {
        assert_eq!(
            coerced_in(dialect, &graph, json!({"limit": null})),
            (json!({}), vec![])
        );
    }
}

#[test]
fn null_for_an_omitted_optional_field_stays_a_repair_where_the_schema_did_not_offer_null() {
    let graph = TypeGraph::new(Type::Struct(
        StructType::anonymous().field(Field::new("limit", Type::integer()).optional()),
    ));
    let policy = Policy::default().with_dialect(ANTHROPIC_STRICT);
    let out = coerce(&graph, &json!({"limit": null}), &policy).unwrap();
    assert_eq!(out.value, json!({}));
    assert_eq!(out.repairs[0].code.as_str(), "null_as_omitted");
}

#[test]
fn an_integer_enum_value_sent_as_text_in_gemini_is_read_without_a_repair() {
    let graph = TypeGraph::new(Type::Enum(EnumType::integers([1, 2, 3])));
    assert_eq!(
        coerced_in(Dialect::Gemini, &graph, json!("2")),
        (json!(2), vec![])
    );
}

#[test]
fn an_integer_enum_value_sent_as_padded_text_in_gemini_is_still_a_repair() {
    let graph = TypeGraph::new(Type::Enum(EnumType::integers([1, 2, 3])));
    let policy = Policy::default().with_dialect(Dialect::Gemini);
    let out = coerce(&graph, &json!(" 2"), &policy).unwrap();
    assert_eq!(out.value, json!(2));
    assert!(!out.repairs.is_empty());
}

#[test]
fn a_map_sent_as_key_value_entries_is_the_wire_shape_only_of_dialects_that_write_maps_so() {
    let graph = map_of_unions();
    let input = json!({"layers": [
        {"key": "sun", "value": {"_type": "Circle", "radius": 2.0}},
        {"key": "box", "value": {"_type": "Rectangle", "width": 1.0, "height": 3.0}}
    ]});
    let canonical = json!({"layers": {
        "sun": {"_type": "Circle", "radius": 2.0},
        "box": {"_type": "Rectangle", "width": 1.0, "height": 3.0}
    }});
    for dialect in Dialect::ALL {
        let writes_entries =
            parameters_schema(&graph, dialect).unwrap()["properties"]["layers"]["type"] == "array";
        if writes_entries {
            assert_eq!(
                coerced_in(dialect, &graph, input.clone()),
                (canonical.clone(), vec![]),
                "{dialect}"
            );
        } else {
            let lenient = coerce(&graph, &input, &Policy::lenient().with_dialect(dialect)).unwrap();
            assert_eq!(lenient.value, canonical, "{dialect}");
            let codes: Vec<_> = lenient.repairs.iter().map(|r| r.code.as_str()).collect();
            assert_eq!(codes, ["map_from_entries"], "{dialect}");
            let refused = coerce(&graph, &input, &Policy::strict().with_dialect(dialect));
            assert_eq!(
                refused.unwrap_err().0[0].code.as_str(),
                "repair_refused",
                "{dialect}"
            );
        }
    }
}

#[test]
fn the_wire_shape_of_a_nested_example_reads_back_as_its_canonical_value() {
    let graph = task_request();
    let sent = json!({"task": {
        "title": "Ship", "status": null, "assignees": ["ann"],
        "metadata": {"id": "T-1", "priority": null, "points": "5", "tags": [], "estimated_hours": null}
    }});
    let canonical = json!({"task": {
        "title": "Ship", "status": "pending", "assignees": ["ann"],
        "metadata": {"id": "T-1", "priority": "medium", "points": 5, "tags": [], "estimated_hours": null}
    }});
    assert_eq!(
        coerced_in(Dialect::Gemini, &graph, sent),
        (canonical, vec![])
    );
}
