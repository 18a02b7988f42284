//! `deserialize_arguments`: canonical text goes straight to serde, anything else through
//! coercion, with the same result.
//!
//! `Box<RawValue>` tells the two paths apart: from the text it keeps the text byte for byte
//! (spaces included), from a coerced `Value` it holds the compact re-serialization.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;
use toolsmith_types::{
    Arguments, EnumType, ErrorCode, Field, Policy, RepairCode, StructType, TaggedUnion, Type,
    TypeGraph, deserialize_arguments,
};

fn task() -> TypeGraph {
    let metadata = StructType::new("TaskMetadata")
        .field(Field::new("id", Type::string()))
        .field(Field::new(
            "priority",
            Type::Enum(EnumType::strings(["low", "medium", "high"])),
        ))
        .field(Field::new("tags", Type::array(Type::string())))
        .field(Field::new("estimated_hours", Type::nilable(Type::number())).optional());
    let mut graph = TypeGraph::new(Type::Struct(
        StructType::anonymous()
            .field(Field::new("title", Type::string()))
            .field(Field::new("metadata", Type::reference("TaskMetadata")))
            .field(Field::new("notes", Type::string()).default_value(json!(""))),
    ));
    graph
        .defs
        .insert("TaskMetadata".into(), Type::Struct(metadata));
    graph
}

#[derive(Debug, PartialEq)]
enum Taken {
    /// Deserialized from the text as it is.
    AsItIs,
    /// Deserialized from the coerced value.
    Coerced,
}

fn raw(graph: &TypeGraph, text: &str) -> Result<Taken, Vec<ErrorCode>> {
    deserialize_arguments::<Box<RawValue>>(graph, Arguments::Text(text), &Policy::default())
        .map(|d| {
            if d.value.get() == text {
                Taken::AsItIs
            } else {
                Taken::Coerced
            }
        })
        .map_err(|e| e.iter().map(|e| e.code).collect())
}

const CLEAN: &str = r#"{"title": "Ship", "metadata": {"id": "t1", "priority": "high", "tags": ["a"]}, "notes": "n"}"#;

#[test]
fn canonical_text_is_deserialized_as_it_is() {
    assert_eq!(raw(&task(), CLEAN), Ok(Taken::AsItIs));
}

#[test]
fn canonical_text_with_keys_in_another_order_is_still_taken_as_it_is() {
    let text = r#"{"metadata": {"tags": [], "priority": "low", "id": "t1", "estimated_hours": null}, "notes": "", "title": "x"}"#;
    assert_eq!(raw(&task(), text), Ok(Taken::AsItIs));
}

#[test]
fn text_needing_a_repair_goes_through_coercion() {
    let text = CLEAN.replace("\"high\"", "\"HIGH\"");
    assert_eq!(raw(&task(), &text), Ok(Taken::Coerced));
}

#[test]
fn text_missing_a_field_with_a_default_goes_through_coercion() {
    let text = r#"{"title": "Ship", "metadata": {"id": "t1", "priority": "high", "tags": []}}"#;
    assert_eq!(raw(&task(), text), Ok(Taken::Coerced));
}

#[test]
fn text_with_a_duplicate_key_goes_through_coercion_and_is_rejected() {
    let text =
        r#"{"title": "a", "title": "b", "metadata": {"id": "t1", "priority": "high", "tags": []}}"#;
    assert_eq!(raw(&task(), text), Err(vec![ErrorCode::DuplicateKey]));
}

#[test]
fn invalid_text_reports_every_coercion_error() {
    let text = r#"{"title": true, "metadata": {"id": "t1", "priority": "urgent", "tags": []}}"#;
    assert_eq!(
        raw(&task(), text),
        Err(vec![ErrorCode::StringType, ErrorCode::Enum])
    );
}

#[test]
fn a_tagged_value_with_its_tag_first_is_taken_as_it_is() {
    let circle = StructType::new("Circle").field(Field::new("radius", Type::number()));
    let square = StructType::new("Square").field(Field::new("side", Type::number()));
    let shape = Type::Tagged(
        TaggedUnion::new()
            .variant("Circle", Type::Struct(circle))
            .variant("Square", Type::Struct(square)),
    );
    let graph = TypeGraph::new(Type::Struct(
        StructType::anonymous().field(Field::new("shape", shape)),
    ));
    let tagged = r#"{"shape": {"_type": "Square", "side": 2.5}}"#;
    assert_eq!(raw(&graph, tagged), Ok(Taken::AsItIs));
    let untagged = r#"{"shape": {"side": 2.5}}"#;
    assert_eq!(raw(&graph, untagged), Ok(Taken::Coerced));
}

#[derive(Debug, Deserialize, PartialEq)]
struct Metadata {
    id: String,
    priority: String,
    tags: Vec<String>,
    estimated_hours: Option<f64>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Task {
    title: String,
    metadata: Metadata,
    notes: String,
}

#[test]
fn both_paths_build_the_same_rust_value_and_report_repairs() {
    let policy = Policy::default();
    let clean = deserialize_arguments::<Task>(&task(), Arguments::Text(CLEAN), &policy).unwrap();
    assert!(clean.repairs.is_empty());
    let messy = CLEAN
        .replace("\"high\"", "\"HIGH\"")
        .replace("[\"a\"]", "\"a\"");
    let repaired =
        deserialize_arguments::<Task>(&task(), Arguments::Text(&messy), &policy).unwrap();
    assert_eq!(repaired.value, clean.value);
    let codes: Vec<_> = repaired.repairs.iter().map(|r| r.code).collect();
    assert_eq!(codes, [RepairCode::EnumCase, RepairCode::WrapInArray]);
}

#[test]
fn a_rust_type_that_disagrees_with_the_description_is_a_type_mismatch() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Wrong {
        title: u32,
    }
    let errors =
        deserialize_arguments::<Wrong>(&task(), Arguments::Text(CLEAN), &Policy::default())
            .unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors.0[0].code, ErrorCode::TypeMismatch);
    assert!(errors.0[0].message().contains("u32"), "{}", errors);
}

#[test]
fn json_arguments_are_deserialized_through_coercion() {
    let value = json!({"title": "Ship", "metadata": {"id": "t1", "priority": "High", "tags": []}});
    let out = deserialize_arguments::<Task>(&task(), Arguments::Json(&value), &Policy::default())
        .unwrap();
    assert_eq!(out.value.metadata.priority, "high");
    assert_eq!(out.value.notes, "");
}

#[test]
fn a_key_that_coercion_would_rename_is_not_taken_as_it_is() {
    let graph = TypeGraph::new(Type::Struct(StructType {
        fields: vec![Field::new("user_name", Type::string()).optional()],
        additional: Some(Box::new(Type::Any)),
        ..StructType::anonymous()
    }));
    let text = r#"{"userName": "ada"}"#;
    assert_eq!(raw(&graph, text), Ok(Taken::Coerced));
    let out = deserialize_arguments::<serde_json::Value>(
        &graph,
        Arguments::Text(text),
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(out.value, json!({"user_name": "ada"}));
    assert_eq!(out.repairs[0].code, RepairCode::KeyRenamed);
}
