//! Argument text, as a model might send it, coerced against one of a fixed set of types.
//! Nothing may panic: every input ends in a value or in errors. These laws are checked:
//!
//! - `deserialize_arguments`, which reads text it finds canonical straight into the Rust type
//!   (checking it in the same pass), agrees with `coerce_arguments` exactly, numbers too: those
//!   are decided on the literals sent, which only the full coercion sees;
//! - the strict policy accepts exactly what the lenient one accepts without a repair, as the
//!   same value: it refuses every repair and nothing else;
//! - the canonical value is canonical: coerced again (as parsed JSON, under the strict policy)
//!   it comes back unchanged, without a repair;
//! - valid JSON is also coerced as already-parsed arguments (without a law: a parsed value is
//!   decided on its numbers, text on its literals).
//!
//! The first byte of an input chooses the type and the policy the fast path is compared under
//! (`byte % 15`: the type is `% 5`, the policy `/ 5`), the rest is the argument text. So `<`
//! to `@` are the task, shape, tree, numbers and any types under the lenient policy, `A` to
//! `E` the same under the strict one and `F` to `J` with unknown keys ignored. One input is
//! one type and a few readings of its text: a fuzzer's executions go to new texts, not to
//! every type for each text. The types and policies are built once.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolsmith_types::{
    Arguments, EnumType, Field, MapType, NumberType, Policy, StructType, TaggedUnion, Type,
    TypeGraph, UnknownKeys, coerce_arguments, deserialize_arguments,
};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, text)) = data.split_first() else {
        return;
    };
    let choice = usize::from(choice) % (GRAPHS * POLICIES);
    let graph = &graphs()[choice % GRAPHS];
    let policy = &policies()[choice / GRAPHS];
    let text = String::from_utf8_lossy(text);
    let arguments = Arguments::Text(&text);

    let lenient = coerce_arguments(graph, arguments, &policies()[0]);
    let strict = coerce_arguments(graph, arguments, &policies()[1]);
    match (&lenient, &strict) {
        (Ok(l), Ok(s)) => assert!(
            l.repairs.is_empty() && l.value == s.value && s.repairs.is_empty(),
            "strict accepts what lenient repairs or reads otherwise, on {text:?}: {l:?} vs {s:?}"
        ),
        (Ok(l), Err(s)) => assert!(
            !l.repairs.is_empty(),
            "strict refuses what lenient accepts unrepaired, on {text:?}: {l:?} vs {s:?}"
        ),
        (Err(_), Err(_)) => {}
        (Err(l), Ok(s)) => {
            panic!("strict accepts what lenient refuses, on {text:?}: {l:?} vs {s:?}")
        }
    }

    let other;
    let coerced = match choice / GRAPHS {
        0 => &lenient,
        1 => &strict,
        _ => {
            other = coerce_arguments(graph, arguments, policy);
            &other
        }
    };
    let deserialized = deserialize_arguments::<Value>(graph, arguments, policy);
    match (coerced, &deserialized) {
        (Ok(c), Ok(d)) => assert!(
            c.value == d.value && c.repairs == d.repairs,
            "fast path disagrees on {text:?}: {c:?} vs {d:?}"
        ),
        (Err(c), Err(d)) => assert_eq!(c, d, "fast path disagrees on {text:?}"),
        _ => panic!("fast path disagrees on {text:?}: {coerced:?} vs {deserialized:?}"),
    }

    if let Ok(canonical) = coerced {
        let again = coerce_arguments(graph, Arguments::Json(&canonical.value), &policies()[1]);
        match &again {
            Ok(again) => assert!(
                again.value == canonical.value && again.repairs.is_empty(),
                "the canonical value of {text:?} is not canonical: {canonical:?} then {again:?}"
            ),
            Err(errors) => panic!(
                "strict coercion refuses the canonical value of {text:?}: {canonical:?}: {errors:?}"
            ),
        }
    }

    if let Ok(value) = serde_json::from_str::<Value>(&text) {
        let _ = coerce_arguments(graph, Arguments::Json(&value), policy);
    }
});

/// How many types an input may be coerced to.
const GRAPHS: usize = 5;
/// How many policies the fast path is compared under.
const POLICIES: usize = 3;

/// Lenient, strict (the laws rely on this order), and lenient with unknown keys ignored.
fn policies() -> &'static [Policy; POLICIES] {
    static BUILT: OnceLock<[Policy; POLICIES]> = OnceLock::new();
    BUILT.get_or_init(|| {
        [
            Policy::lenient(),
            Policy::strict(),
            Policy {
                unknown_keys: UnknownKeys::Ignore,
                ..Policy::default()
            },
        ]
    })
}

fn graphs() -> &'static [TypeGraph; GRAPHS] {
    static BUILT: OnceLock<[TypeGraph; GRAPHS]> = OnceLock::new();
    BUILT.get_or_init(|| {
        [
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
