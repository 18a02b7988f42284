//! `Describe` for the standard types, and the definitions context for named and recursive types.

use std::collections::{BTreeMap, HashMap};

use indexmap::IndexMap;
use toolsmith_types::{
    Definitions, Describe, Field, IntegerType, NumberType, StructType, TaggedUnion, Type, define,
};

fn root<T: Describe + ?Sized>() -> Type {
    T::type_graph().root
}

#[test]
fn strings_describe_as_string() {
    assert_eq!(root::<String>(), Type::string());
    assert_eq!(root::<str>(), Type::string());
    assert_eq!(root::<&str>(), Type::string());
}

#[test]
fn bool_describes_as_boolean() {
    assert_eq!(root::<bool>(), Type::Boolean);
}

#[test]
fn each_integer_type_narrower_than_64_bits_carries_its_range() {
    assert_eq!(root::<u8>(), Type::Integer(IntegerType::range(0, 255)));
    assert_eq!(root::<i8>(), Type::Integer(IntegerType::range(-128, 127)));
    assert_eq!(
        root::<u16>(),
        Type::Integer(IntegerType::range(0, u16::MAX.into()))
    );
    assert_eq!(
        root::<i16>(),
        Type::Integer(IntegerType::range(i16::MIN.into(), i16::MAX.into()))
    );
    assert_eq!(
        root::<u32>(),
        Type::Integer(IntegerType::range(0, u32::MAX.into()))
    );
    assert_eq!(
        root::<i32>(),
        Type::Integer(IntegerType::range(i32::MIN.into(), i32::MAX.into()))
    );
}

#[test]
fn signed_64_bit_integers_state_their_maximum_and_leave_their_minimum_to_the_64_bit_check() {
    let bounded = Type::Integer(IntegerType {
        maximum: Some(i64::MAX.into()),
        ..IntegerType::default()
    });
    assert_eq!(root::<i64>(), bounded);
    assert_eq!(root::<isize>(), bounded);
    assert_eq!(
        root::<u64>(),
        Type::Integer(IntegerType {
            minimum: Some(0),
            ..IntegerType::default()
        })
    );
}

#[test]
fn floats_describe_as_numbers_and_f32_carries_its_range() {
    assert_eq!(root::<f64>(), Type::number());
    assert_eq!(
        root::<f32>(),
        Type::Number(NumberType {
            minimum: Some(f64::from(f32::MIN)),
            maximum: Some(f64::from(f32::MAX)),
            ..NumberType::default()
        })
    );
}

#[test]
fn option_is_nilable_and_never_doubly_so() {
    assert_eq!(root::<Option<bool>>(), Type::nilable(Type::Boolean));
    assert_eq!(root::<Option<Option<bool>>>(), Type::nilable(Type::Boolean));
    assert_eq!(root::<Option<serde_json::Value>>(), Type::Any);
}

#[test]
fn sequences_describe_as_arrays() {
    assert_eq!(root::<Vec<String>>(), Type::array(Type::string()));
    assert_eq!(root::<[bool]>(), Type::array(Type::Boolean));
    assert_eq!(root::<Box<Vec<bool>>>(), Type::array(Type::Boolean));
}

#[test]
fn string_keyed_maps_describe_as_maps() {
    let expected = Type::map(Type::Boolean);
    assert_eq!(root::<HashMap<String, bool>>(), expected);
    assert_eq!(root::<BTreeMap<String, bool>>(), expected);
    assert_eq!(root::<IndexMap<String, bool>>(), expected);
}

#[test]
fn json_value_describes_as_any() {
    assert_eq!(root::<serde_json::Value>(), Type::Any);
}

struct Node;

impl Describe for Node {
    fn describe(defs: &mut Definitions) -> Type {
        define(defs, "Node", |defs| {
            Type::Struct(
                StructType::new("Node")
                    .field(Field::new("label", String::describe(defs)))
                    .field(Field::new("children", Vec::<Node>::describe(defs))),
            )
        })
    }
}

#[test]
fn a_recursive_type_is_defined_once_and_refers_to_itself() {
    let graph = Node::type_graph();
    assert_eq!(graph.root, Type::reference("Node"));
    assert_eq!(graph.defs.len(), 1);
    let Some(Type::Struct(node)) = graph.defs.get("Node") else {
        panic!("Node is not defined as a struct: {:?}", graph.defs);
    };
    assert_eq!(
        node.get("children").map(|f| &f.ty),
        Some(&Type::array(Type::reference("Node")))
    );
    assert!(graph.dangling_refs().is_empty());
}

#[test]
fn a_named_type_used_twice_is_built_once() {
    let mut defs = Definitions::default();
    let mut builds = 0;
    let first = define(&mut defs, "Thing", |_| {
        builds += 1;
        Type::Boolean
    });
    let second = define(&mut defs, "Thing", |_| {
        builds += 1;
        Type::Boolean
    });
    assert_eq!(first, second);
    assert_eq!(builds, 1);
    assert_eq!(defs.get("Thing"), Some(&Type::Boolean));
}

#[test]
fn resolve_follows_references_and_reports_dangling_ones() {
    let mut graph = Node::type_graph();
    assert!(matches!(graph.resolved_root(), Some(Type::Struct(_))));
    graph.root = Type::Tagged(TaggedUnion::new().variant("Gone", Type::reference("Missing")));
    assert_eq!(graph.dangling_refs(), vec!["Missing".to_owned()]);
}

#[test]
fn a_cycle_of_bare_references_resolves_to_nothing_instead_of_looping() {
    let mut graph = toolsmith_types::TypeGraph::new(Type::reference("A"));
    graph.defs.insert("A".into(), Type::reference("B"));
    graph.defs.insert("B".into(), Type::reference("A"));
    assert_eq!(graph.resolved_root(), None);
    assert_eq!(graph.dangling_refs(), vec!["A".to_owned(), "B".to_owned()]);
}
