//! Argument text, as a model might send it, coerced against a fixed set of types under the
//! lenient and the strict policy. Nothing may panic: every input ends in a value or in errors.
//! Valid JSON is also coerced as already-parsed arguments. And `deserialize_arguments`, which
//! reads text it finds canonical straight into the Rust type (checking it in the same pass),
//! must agree with `coerce_arguments` exactly, numbers too: those are decided on the literals
//! sent, which only the full coercion sees.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolsmith_types::{
    Arguments, EnumType, Field, MapType, NumberType, Policy, StructType, TaggedUnion, Type,
    TypeGraph, UnknownKeys, coerce_arguments, deserialize_arguments,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let parsed: Option<Value> = serde_json::from_str(&text).ok();
    for graph in graphs() {
        for policy in policies() {
            let coerced = coerce_arguments(graph, Arguments::Text(&text), policy);
            let deserialized =
                deserialize_arguments::<Value>(graph, Arguments::Text(&text), policy);
            match (&coerced, &deserialized) {
                (Ok(c), Ok(d)) => assert!(
                    c.value == d.value && c.repairs == d.repairs,
                    "fast path disagrees on {text:?}: {c:?} vs {d:?}"
                ),
                (Err(c), Err(d)) => assert_eq!(c, d, "fast path disagrees on {text:?}"),
                _ => panic!("fast path disagrees on {text:?}: {coerced:?} vs {deserialized:?}"),
            }
            if let Some(value) = &parsed {
                let _ = coerce_arguments(graph, Arguments::Json(value), policy);
            }
        }
    }
});

fn policies() -> &'static [Policy] {
    static POLICIES: OnceLock<Vec<Policy>> = OnceLock::new();
    POLICIES.get_or_init(|| {
        vec![
            Policy::lenient(),
            Policy::strict(),
            Policy {
                unknown_keys: UnknownKeys::Ignore,
                ..Policy::default()
            },
        ]
    })
}

fn graphs() -> &'static [TypeGraph] {
    static GRAPHS: OnceLock<Vec<TypeGraph>> = OnceLock::new();
    GRAPHS.get_or_init(|| {
        vec![
            task_request(),
            shape(),
            tree(),
            numbers(),
            TypeGraph::new(Type::Any),
        ]
    })
}

/// A task with a nested struct (by reference), enums, arrays, an optional nullable number and a
/// map of integers.
fn task_request() -> TypeGraph {
    let mut graph = TypeGraph::new(Type::Struct(
        StructType::new("TaskRequest")
            .field(Field::new("title", Type::string()))
            .field(Field::new("description", Type::string()).optional())
            .field(Field::new(
                "status",
                Type::Enum(EnumType::strings(["pending", "in_progress", "completed"])),
            ))
            .field(Field::new("metadata", Type::reference("TaskMetadata")))
            .field(Field::new("assignees", Type::array(Type::string())))
            .field(Field::new("estimates", Type::Map(MapType::new(Type::integer()))).optional()),
    ));
    graph.defs.insert(
        "TaskMetadata".to_owned(),
        Type::Struct(
            StructType::new("TaskMetadata")
                .field(Field::new("id", Type::string()))
                .field(Field::new(
                    "priority",
                    Type::Enum(EnumType::strings(["low", "medium", "high"])),
                ))
                .field(Field::new("tags", Type::array(Type::string())))
                .field(Field::new("estimated_hours", Type::nilable(Type::number())).optional()),
        ),
    );
    graph
}

/// A union of structs told apart by `_type`.
fn shape() -> TypeGraph {
    TypeGraph::new(Type::Struct(
        StructType::new("Draw").field(Field::new(
            "shape",
            Type::Tagged(
                TaggedUnion::new()
                    .variant(
                        "circle",
                        Type::Struct(
                            StructType::new("Circle").field(Field::new("radius", Type::number())),
                        ),
                    )
                    .variant(
                        "rectangle",
                        Type::Struct(
                            StructType::new("Rectangle")
                                .field(Field::new("width", Type::integer()))
                                .field(Field::new("height", Type::integer())),
                        ),
                    ),
            ),
        )),
    ))
}

/// Numbers of every kind: an integer, a string (numbers become their literal), a number with
/// `multipleOf`, and a list of numbers.
fn numbers() -> TypeGraph {
    TypeGraph::new(Type::Struct(
        StructType::new("Numbers")
            .field(Field::new("count", Type::integer()).optional())
            .field(Field::new("code", Type::string()).optional())
            .field(
                Field::new(
                    "step",
                    Type::Number(NumberType {
                        multiple_of: Some(0.5),
                        ..NumberType::default()
                    }),
                )
                .optional(),
            )
            .field(Field::new("ratios", Type::array(Type::number())).optional()),
    ))
}

/// A recursive tree: each node holds a value and optional children of the same type.
fn tree() -> TypeGraph {
    let mut graph = TypeGraph::new(Type::reference("Node"));
    graph.defs.insert(
        "Node".to_owned(),
        Type::Struct(
            StructType::new("Node")
                .field(Field::new("value", Type::integer()))
                .field(Field::new("children", Type::array(Type::reference("Node"))).optional()),
        ),
    );
    graph
}
