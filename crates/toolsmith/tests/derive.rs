//! `#[derive(ToolType)]`: the described type, the coercion and serde agree on every spelling.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, dead_code)]

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolsmith::{Describe, Dialect, Policy, Type, TypeGraph, coerce, emit};

/// Coerces `value` by the type's own graph, then lets serde read it, as a tool call does.
fn through<T: Describe + serde::de::DeserializeOwned>(value: Value) -> T {
    let coerced =
        coerce(&T::type_graph(), &value, &Policy::default()).unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_value(coerced.value).unwrap()
}

/// The schema of a named type: its definition.
fn schema<T: Describe>() -> Value {
    let graph = T::type_graph();
    let mut document = emit(&graph, Dialect::JsonSchema).unwrap();
    match &graph.root {
        Type::Ref(name) => document["$defs"][name].take(),
        _ => document,
    }
}

#[derive(Debug, PartialEq, Deserialize, toolsmith::ToolType)]
#[serde(rename_all = "camelCase")]
struct Renamed {
    due_date: String,
    #[serde(rename = "ID")]
    id: u32,
    r#type: String,
}

#[test]
fn rename_all_and_rename_are_the_names_in_schema_and_coercion() {
    let schema = schema::<Renamed>();
    let names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["dueDate", "ID", "type"]);
    let value: Renamed = through(json!({"dueDate": "tomorrow", "ID": "7", "type": "x"}));
    assert_eq!(
        value,
        Renamed {
            due_date: "tomorrow".into(),
            id: 7,
            r#type: "x".into()
        }
    );
}

#[derive(Debug, PartialEq, Deserialize, toolsmith::ToolType, strum::Display, strum::EnumString)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "kebab-case")]
enum Level {
    /// Barely matters.
    LowPriority,
    #[serde(alias = "urgent")]
    High,
    #[serde(skip)]
    Hidden,
}

#[test]
fn unit_enum_values_follow_serde_beside_strum_and_aliases_are_accepted() {
    let schema = schema::<Level>();
    assert_eq!(schema["enum"], json!(["LOW_PRIORITY", "HIGH"]));
    assert_eq!(through::<Level>(json!("urgent")), Level::High);
    assert_eq!(through::<Level>(json!("low_priority")), Level::LowPriority);
    // strum keeps its own spelling for Display; it is not what the model sends.
    assert_eq!(Level::LowPriority.to_string(), "low-priority");
}

#[test]
fn variant_docs_describe_enum_values() {
    let Type::Enum(e) = Level::type_graph().defs["Level"].clone() else {
        panic!()
    };
    assert_eq!(
        e.variants[0].description.as_deref(),
        Some("Barely matters.")
    );
}

#[derive(Debug, PartialEq, Deserialize, Serialize, Default, toolsmith::ToolType)]
#[serde(default)]
struct Settings {
    retries: u8,
    label: String,
}

#[test]
fn container_default_fills_every_field_from_default() {
    let schema = schema::<Settings>();
    assert_eq!(schema["required"], json!([]));
    assert_eq!(schema["properties"]["retries"]["default"], 0);
    assert_eq!(
        through::<Settings>(json!({"label": "x"})),
        Settings {
            retries: 0,
            label: "x".into()
        }
    );
}

fn three() -> u8 {
    3
}

#[derive(Debug, PartialEq, Deserialize, toolsmith::ToolType)]
struct WithDefaults {
    #[serde(default = "three")]
    retries: u8,
    #[serde(skip)]
    cache: Option<String>,
    /// An optional note.
    note: Option<String>,
}

#[test]
fn field_defaults_and_skips_follow_serde() {
    let schema = schema::<WithDefaults>();
    assert_eq!(schema["properties"]["retries"]["default"], 3);
    assert!(schema["properties"].get("cache").is_none());
    assert_eq!(schema["required"], json!([]));
    assert_eq!(
        through::<WithDefaults>(json!({})),
        WithDefaults {
            retries: 3,
            cache: None,
            note: None
        }
    );
}

#[derive(Debug, PartialEq, Deserialize, toolsmith::ToolType)]
struct Email(String);

#[test]
fn newtype_describes_as_what_it_wraps() {
    assert_eq!(Email::type_graph().root, Type::string());
    assert_eq!(through::<Email>(json!("a@b.c")), Email("a@b.c".into()));
}

#[derive(Debug, PartialEq, Deserialize, toolsmith::ToolType)]
#[serde(
    tag = "_type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
enum Command {
    /// Moves the cursor.
    MoveTo {
        line_number: u32,
    },
    Clear,
}

#[test]
fn data_enum_is_a_type_tagged_union_that_serde_reads() {
    let schema = schema::<Command>();
    let tags: Vec<&Value> = schema["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["properties"]["_type"]["const"])
        .collect();
    assert_eq!(tags, [&json!("move_to"), &json!("clear")]);
    assert_eq!(
        through::<Command>(json!({"_type": "move_to", "lineNumber": "4"})),
        Command::MoveTo { line_number: 4 }
    );
    assert_eq!(
        through::<Command>(json!({"_type": "clear"})),
        Command::Clear
    );
}

#[derive(Deserialize, toolsmith::ToolType)]
#[serde(tag = "_type")]
enum BadCommand {
    Insert(Email),
}

#[test]
fn newtype_variant_must_hold_a_struct_to_be_emitted() {
    // `Insert(Email)` holds a string, which `_type` cannot tag; emission says so.
    let error = emit(&BadCommand::type_graph(), Dialect::JsonSchema).unwrap_err();
    assert!(error.to_string().contains("variant `Insert`"), "{error}");
}

mod a {
    #[derive(serde::Deserialize, toolsmith::ToolType)]
    pub struct Options {
        pub verbose: bool,
    }
}

mod b {
    #[derive(serde::Deserialize, toolsmith::ToolType)]
    pub struct Options {
        pub depth: u8,
    }
}

#[derive(Deserialize, toolsmith::ToolType)]
struct Both {
    first: a::Options,
    second: b::Options,
    again: a::Options,
}

#[test]
fn two_types_with_one_name_get_two_definitions() {
    let graph = Both::type_graph();
    let names: Vec<&String> = graph.defs.keys().collect();
    assert_eq!(names, ["Both", "Options", "Options2"]);
    let schema = emit(&graph, Dialect::JsonSchema).unwrap();
    assert_eq!(
        schema["$defs"]["Both"]["properties"]["again"]["$ref"],
        "#/$defs/Options"
    );
    assert_eq!(schema["$defs"]["Options2"]["required"], json!(["depth"]));
}

#[derive(Debug, PartialEq, Deserialize, toolsmith::ToolType)]
struct Page<T> {
    items: Vec<T>,
}

#[derive(Deserialize, toolsmith::ToolType)]
struct Pages {
    words: Page<String>,
    counts: Page<u8>,
}

#[test]
fn each_instantiation_of_a_generic_type_is_its_own_definition() {
    let graph: TypeGraph = Pages::type_graph();
    let schema = emit(&graph, Dialect::JsonSchema).unwrap();
    assert_eq!(
        schema["$defs"]["Page"]["properties"]["items"]["items"]["type"],
        "string"
    );
    assert_eq!(
        schema["$defs"]["Page2"]["properties"]["items"]["items"]["type"],
        "integer"
    );
}

#[derive(Debug, PartialEq, Deserialize, toolsmith::ToolType)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

#[test]
fn recursive_type_refers_to_itself_and_coerces_at_depth() {
    let graph = Tree::type_graph();
    assert!(graph.dangling_refs().is_empty());
    let tree: Tree = through(
        json!({"label": "a", "children": [{"label": "b", "children": [{"label": 3, "children": []}]}]}),
    );
    assert_eq!(tree.children[0].children[0].label, "3");
}

#[derive(Debug, PartialEq, Deserialize, toolsmith::ToolType)]
#[serde(transparent)]
struct Wrapped {
    inner: String,
    #[serde(skip)]
    cache: Option<u8>,
}

#[test]
fn transparent_struct_is_its_one_field() {
    assert_eq!(Wrapped::type_graph().root, Type::string());
    assert_eq!(
        through::<Wrapped>(json!("x")),
        Wrapped {
            inner: "x".into(),
            cache: None
        }
    );
}

#[derive(Deserialize, toolsmith::ToolType)]
struct Raw {
    v: String,
}

#[derive(Debug, PartialEq, Deserialize, toolsmith::ToolType)]
#[serde(from = "Raw")]
struct Converted {
    value: String,
}

impl From<Raw> for Converted {
    fn from(raw: Raw) -> Self {
        Converted {
            value: raw.v.to_uppercase(),
        }
    }
}

#[test]
fn a_type_serde_reads_from_another_is_described_as_that_other() {
    assert_eq!(schema::<Converted>()["required"], json!(["v"]));
    assert_eq!(
        through::<Converted>(json!({"v": "a"})),
        Converted { value: "A".into() }
    );
}

#[derive(Debug, PartialEq, Deserialize, toolsmith::ToolType)]
struct Patch {
    id: u32,
    extra: Option<Value>,
}

#[test]
fn an_optional_untyped_field_may_be_left_out() {
    assert_eq!(schema::<Patch>()["required"], json!(["id"]));
    assert_eq!(
        through::<Patch>(json!({"id": 1})),
        Patch { id: 1, extra: None }
    );
}

#[derive(Debug, PartialEq, Deserialize, toolsmith::ToolType)]
struct Paint {
    #[serde(alias = "colour", alias = "hue")]
    color: String,
    #[serde(default)]
    coats: u8,
}

#[test]
fn a_field_alias_is_read_as_serde_reads_it_and_left_out_of_the_schema() {
    for key in ["color", "colour", "hue"] {
        let value: Paint = through(json!({ key: "red" }));
        assert_eq!(
            value,
            serde_json::from_value(json!({ key: "red" })).unwrap()
        );
        assert_eq!(value.color, "red");
    }
    let strict = coerce(
        &Paint::type_graph(),
        &json!({"colour": "red"}),
        &Policy::strict(),
    )
    .unwrap();
    assert_eq!(strict.value, json!({"color": "red", "coats": 0}));
    assert!(strict.repairs.is_empty());
    let names: Vec<String> = schema::<Paint>()["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(names, ["color", "coats"]);
}

#[test]
fn a_field_sent_under_its_name_and_an_alias_is_refused_as_serde_refuses_it() {
    let both = json!({"color": "red", "colour": "blue"});
    assert!(serde_json::from_value::<Paint>(both.clone()).is_err());
    let errors = coerce(&Paint::type_graph(), &both, &Policy::default()).unwrap_err();
    let codes: Vec<_> = errors
        .iter()
        .map(|e| (e.path.as_str(), e.code.as_str()))
        .collect();
    assert_eq!(codes, [("/colour", "duplicate_key")]);
}
