//! Generators for the property laws: arbitrary type graphs, canonical values that fit them,
//! messy variants of those values, arbitrary JSON; what "equivalent type" means once a type
//! has gone through JSON Schema and back; each dialect's rules as checks on an emitted schema,
//! and its wire shape of a value; and golden files.
#![allow(dead_code)]

use std::collections::HashSet;
use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolsmith_types::{
    ArrayType, Definitions, Dialect, EnumType, Field, IntegerType, MapKeys, MapType, NumberType,
    Pattern, Policy, StringType, StructType, TYPE_TAG, TaggedUnion, TaggedVariant, Type, TypeGraph,
    coerce,
};

/// The recursive definition every generated graph carries.
pub const NODE: &str = "Node";
/// A definition generated like any other type (never recursive).
pub const ITEM: &str = "Item";

/// Patterns generated for strings, each with one value it matches.
const PATTERNS: &[(&str, &str)] = &[
    ("^[a-z]+$", "a"),
    ("^[0-9]{3}-[0-9]{4}$", "555-1234"),
    ("^(red|green|blue)$", "red"),
];

const FIELD_NAMES: &[&str] = &["city", "units", "count", "tags", "id", "note"];
const TAGS: &[&str] = &["Circle", "Square", "Triangle"];

// ---------------------------------------------------------------------------------------------
// Types

fn arb_string_type() -> impl Strategy<Value = StringType> {
    prop_oneof![
        Just(StringType::default()),
        (0u64..3, prop::option::of(0u64..4)).prop_map(|(min, extra)| StringType {
            min_length: Some(min),
            max_length: extra.map(|e| min + e),
            ..StringType::default()
        }),
        (0..PATTERNS.len()).prop_map(|i| StringType {
            pattern: Some(Pattern::new(PATTERNS[i].0).unwrap()),
            ..StringType::default()
        }),
        prop::sample::select(vec!["date-time", "email"]).prop_map(|f| StringType {
            format: Some(f.to_owned()),
            ..StringType::default()
        }),
    ]
}

fn arb_integer_type() -> impl Strategy<Value = IntegerType> {
    prop_oneof![
        Just(IntegerType::default()),
        (
            -50i128..50,
            0i128..100,
            any::<bool>(),
            any::<bool>(),
            prop::option::of(1u64..6)
        )
            .prop_map(|(low, width, exclusive_low, exclusive_high, multiple_of)| {
                // Wide enough that a multiple of `multiple_of` lies strictly inside.
                let high = low + width + 12;
                IntegerType {
                    minimum: (!exclusive_low).then_some(low),
                    exclusive_minimum: exclusive_low.then_some(low),
                    maximum: (!exclusive_high).then_some(high),
                    exclusive_maximum: exclusive_high.then_some(high),
                    multiple_of,
                }
            }),
        (-1000i128..1000).prop_map(|min| IntegerType {
            minimum: Some(min),
            ..IntegerType::default()
        }),
    ]
}

fn arb_number_type() -> impl Strategy<Value = NumberType> {
    prop_oneof![
        Just(NumberType::default()),
        (
            -40i32..40,
            0i32..40,
            any::<bool>(),
            prop::option::of(prop::sample::select(vec![0.25, 0.5, 2.0]))
        )
            .prop_map(|(low, width, exclusive, multiple_of)| {
                let low = f64::from(low) / 4.0;
                let high = low + f64::from(width) / 4.0 + 5.0;
                NumberType {
                    minimum: (!exclusive).then_some(low),
                    exclusive_minimum: exclusive.then_some(low),
                    maximum: Some(high),
                    multiple_of,
                    ..NumberType::default()
                }
            }),
    ]
}

fn arb_enum_type() -> impl Strategy<Value = EnumType> {
    let description = prop::option::of(Just("One of a few".to_owned()));
    prop_oneof![
        (
            prop::sample::subsequence(vec!["low", "medium", "high", "in_progress"], 1..4),
            description.clone()
        )
            .prop_map(|(values, description)| EnumType {
                description,
                ..EnumType::strings(values)
            }),
        (
            prop::sample::subsequence(vec![1i64, 2, 3, 10], 1..4),
            description.clone()
        )
            .prop_map(|(values, description)| EnumType {
                description,
                ..EnumType::integers(values)
            }),
        // `const` and `enum` of any JSON value.
        (
            prop::sample::subsequence(
                vec![
                    serde_json::json!(true),
                    serde_json::json!(2.5),
                    serde_json::json!({"mode": "fast"}),
                    serde_json::json!([1, 2]),
                    serde_json::json!(false),
                ],
                1..4
            ),
            description
        )
            .prop_map(|(values, description)| EnumType {
                description,
                variants: values
                    .into_iter()
                    .map(|v| toolsmith_types::EnumVariant::new(toolsmith_types::EnumValue::Json(v)))
                    .collect(),
            }),
    ]
}

fn arb_scalar() -> impl Strategy<Value = Type> {
    prop_oneof![
        arb_string_type().prop_map(Type::String),
        arb_integer_type().prop_map(Type::Integer),
        arb_number_type().prop_map(Type::Number),
        Just(Type::Boolean),
        arb_enum_type().prop_map(Type::Enum),
    ]
}

fn arb_leaf(refs: bool) -> BoxedStrategy<Type> {
    if refs {
        prop_oneof![
            6 => arb_scalar(),
            1 => Just(Type::Any),
            1 => Just(Type::reference(NODE)),
            1 => Just(Type::reference(ITEM)),
        ]
        .boxed()
    } else {
        prop_oneof![6 => arb_scalar(), 1 => Just(Type::Any)].boxed()
    }
}

fn arb_struct(inner: BoxedStrategy<Type>) -> impl Strategy<Value = StructType> {
    let field = (
        inner,
        any::<bool>(),
        prop::option::of(Just("What this field holds".to_owned())),
        any::<bool>(),
    );
    (
        prop::collection::vec(field, 0..4),
        prop::option::of(Just("Thing".to_owned())),
        prop::option::of(Just("An object".to_owned())),
        prop_oneof![3 => Just(None), 1 => Just(Some(Type::Any)), 1 => Just(Some(Type::string()))],
    )
        .prop_map(|(fields, name, description, additional)| StructType {
            name,
            description,
            fields: fields
                .into_iter()
                .enumerate()
                .map(|(i, (ty, required, description, with_default))| {
                    let mut field = Field::new(FIELD_NAMES[i], ty);
                    field.description = description;
                    if !required {
                        field.required = false;
                        if with_default {
                            field.default = default_for(&field.ty);
                        }
                    }
                    field
                })
                .collect(),
            additional: additional.map(Box::new),
        })
}

/// One member type per JSON kind, so at most one member accepts any canonical value exactly.
fn arb_union() -> impl Strategy<Value = Type> {
    let kinds: Vec<BoxedStrategy<Type>> = vec![
        prop_oneof![
            arb_string_type().prop_map(Type::String),
            Just(Type::Enum(EnumType::strings(["on", "off"])))
        ]
        .boxed(),
        prop_oneof![
            arb_integer_type().prop_map(Type::Integer),
            arb_number_type().prop_map(Type::Number)
        ]
        .boxed(),
        Just(Type::Boolean).boxed(),
        Just(Type::array(Type::string())).boxed(),
        Just(Type::Struct(
            StructType::anonymous().field(Field::new("id", Type::integer())),
        ))
        .boxed(),
    ];
    prop::sample::subsequence((0..kinds.len()).collect::<Vec<_>>(), 2..4)
        .prop_flat_map(move |chosen| {
            chosen
                .into_iter()
                .map(|i| kinds[i].clone())
                .collect::<Vec<_>>()
        })
        .prop_map(Type::Union)
}

fn arb_type(refs: bool) -> BoxedStrategy<Type> {
    arb_leaf(refs)
        .prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                arb_struct(inner.clone()).prop_map(Type::Struct),
                (
                    inner.clone(),
                    0u64..2,
                    prop::option::of(0u64..3),
                    any::<bool>()
                )
                    .prop_map(|(items, min, extra, unique)| {
                        Type::Array(ArrayType {
                            items: Box::new(items),
                            min_items: (min > 0).then_some(min),
                            max_items: extra.map(|e| min + e),
                            // Unique only without a minimum, so that a value always exists.
                            unique_items: unique && min == 0,
                        })
                    }),
                (inner.clone(), any::<bool>()).prop_map(|(values, enum_keys)| {
                    Type::Map(MapType {
                        keys: if enum_keys {
                            MapKeys::Enum(EnumType::strings(["north", "south"]))
                        } else {
                            MapKeys::String
                        },
                        values: Box::new(values),
                    })
                }),
                inner.clone().prop_map(Type::nilable),
                (
                    prop::collection::vec(arb_struct(inner.clone()), 1..3),
                    prop::option::of(Just("Shapes".to_owned())),
                    any::<bool>(),
                )
                    .prop_map(|(structs, description, named)| {
                        Type::Tagged(TaggedUnion {
                            description,
                            variants: structs
                                .into_iter()
                                .enumerate()
                                .map(|(i, mut s)| {
                                    s.name = named.then(|| TAGS[i].to_owned());
                                    TaggedVariant {
                                        tag: TAGS[i].to_owned(),
                                        ty: Type::Struct(s),
                                    }
                                })
                                .collect(),
                        })
                    }),
                arb_union(),
            ]
        })
        .boxed()
}

/// The recursive definition: a tree node.
pub fn node_type() -> Type {
    Type::Struct(
        StructType::new(NODE)
            .describe("A node of a tree")
            .field(Field::new("label", Type::string()))
            .field(Field::new("children", Type::array(Type::reference(NODE))))
            .field(Field::new("parent", Type::nilable(Type::reference(NODE))).optional()),
    )
}

/// Arbitrary type graphs: every kind of type, constraints, a recursive definition and a plain one.
pub fn arb_graph() -> impl Strategy<Value = TypeGraph> {
    (arb_type(true), arb_type(false)).prop_map(|(root, item)| {
        let item = match item {
            Type::Struct(mut s) => {
                s.name = Some(ITEM.to_owned());
                Type::Struct(s)
            }
            other => other,
        };
        let mut defs = Definitions::default();
        defs.insert(NODE.to_owned(), node_type());
        defs.insert(ITEM.to_owned(), item);
        TypeGraph { root, defs }
    })
}

// ---------------------------------------------------------------------------------------------
// Values

/// The inclusive integer range an integer type allows, clipped to keep values readable.
fn integer_range(t: &IntegerType) -> (i64, i64) {
    let mut low = -1_000_000i128;
    let mut high = 1_000_000i128;
    if let Some(m) = t.minimum {
        low = low.max(m);
    }
    if let Some(m) = t.exclusive_minimum {
        low = low.max(m + 1);
    }
    if let Some(m) = t.maximum {
        high = high.min(m);
    }
    if let Some(m) = t.exclusive_maximum {
        high = high.min(m - 1);
    }
    // Within ±1e6 after the clipping above.
    (low as i64, high as i64)
}

/// Values of a number type are drawn from the grid of quarters, which binary floats hold exactly.
fn number_grid(t: &NumberType) -> (i64, i64, i64) {
    let step = t.multiple_of.unwrap_or(0.25);
    let quarters = |x: f64| x / step;
    let mut low = -4000.0f64;
    let mut high = 4000.0f64;
    if let Some(m) = t.minimum {
        low = low.max(quarters(m).ceil());
    }
    if let Some(m) = t.exclusive_minimum {
        low = low.max((quarters(m) + 1.0).floor());
    }
    if let Some(m) = t.maximum {
        high = high.min(quarters(m).floor());
    }
    if let Some(m) = t.exclusive_maximum {
        high = high.min((quarters(m) - 1.0).ceil());
    }
    ((step * 4.0) as i64, low as i64, high as i64)
}

fn number_at(step_quarters: i64, n: i64) -> Value {
    Value::from(n as f64 * step_quarters as f64 / 4.0)
}

/// A fixed value of a scalar type, used as a field default.
pub fn default_for(ty: &Type) -> Option<Value> {
    match ty {
        Type::String(_) | Type::Integer(_) | Type::Number(_) | Type::Boolean | Type::Enum(_) => {
            Some(minimal(&TypeGraph::new(Type::Any), ty))
        }
        _ => None,
    }
}

/// The smallest canonical value of `ty`: where value generation stops recursing.
pub fn minimal(graph: &TypeGraph, ty: &Type) -> Value {
    match ty {
        Type::String(s) => match &s.pattern {
            Some(p) => {
                let example = PATTERNS
                    .iter()
                    .find(|(source, _)| *source == p.as_str())
                    .map_or("", |(_, example)| example);
                Value::String(example.to_owned())
            }
            None => Value::String("a".repeat(s.min_length.unwrap_or(0) as usize)),
        },
        Type::Integer(i) => {
            let (low, _) = integer_range(i);
            let k = i.multiple_of.unwrap_or(1) as i64;
            Value::from(low.div_euclid(k) * k + if low.rem_euclid(k) == 0 { 0 } else { k })
        }
        Type::Number(n) => {
            let (step, low, _) = number_grid(n);
            number_at(step, low)
        }
        Type::Boolean => Value::Bool(false),
        Type::Enum(e) => e.variants[0].value.to_json(),
        Type::Struct(s) => {
            let mut out = Map::new();
            for field in &s.fields {
                if let Some(default) = &field.default {
                    out.insert(field.name.clone(), default.clone());
                } else if field.required {
                    out.insert(field.name.clone(), minimal(graph, &field.ty));
                }
            }
            Value::Object(out)
        }
        Type::Array(a) => Value::Array(
            (0..a.min_items.unwrap_or(0))
                .map(|_| minimal(graph, &a.items))
                .collect(),
        ),
        Type::Map(_) => Value::Object(Map::new()),
        Type::Nilable(_) | Type::Any => Value::Null,
        Type::Tagged(u) => tagged_value(&u.variants[0].tag, minimal(graph, &u.variants[0].ty)),
        Type::Union(members) => minimal(graph, &members[0]),
        Type::Ref(name) => minimal(graph, &graph.defs[name]),
    }
}

fn tagged_value(tag: &str, fields: Value) -> Value {
    let mut out = Map::new();
    out.insert(TYPE_TAG.to_owned(), Value::String(tag.to_owned()));
    if let Value::Object(fields) = fields {
        out.extend(fields);
    }
    Value::Object(out)
}

/// Canonical values of `ty`: plain JSON in the type's shape that meets every constraint, with
/// defaults filled in and tags present. `budget` bounds how often references are followed.
pub fn arb_value(graph: &TypeGraph, ty: &Type, budget: u32) -> BoxedStrategy<Value> {
    match ty {
        Type::String(s) => match &s.pattern {
            // proptest generates whole matches, so the anchors are dropped for generation.
            Some(p) => proptest::string::string_regex(
                p.as_str().trim_start_matches('^').trim_end_matches('$'),
            )
            .unwrap()
            .prop_map(Value::String)
            .boxed(),
            None => {
                let min = s.min_length.unwrap_or(0) as usize;
                let max = s.max_length.map_or(min + 6, |m| m as usize);
                prop::collection::vec(any::<char>(), min..=max)
                    .prop_map(|chars| Value::String(chars.into_iter().collect()))
                    .boxed()
            }
        },
        Type::Integer(i) => {
            let (low, high) = integer_range(i);
            let k = i.multiple_of.unwrap_or(1) as i64;
            let first = low.div_euclid(k) + i64::from(low.rem_euclid(k) != 0);
            let last = high.div_euclid(k);
            (first..=last).prop_map(move |m| Value::from(m * k)).boxed()
        }
        Type::Number(n) => {
            let (step, low, high) = number_grid(n);
            (low..=high).prop_map(move |q| number_at(step, q)).boxed()
        }
        Type::Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
        Type::Enum(e) => {
            let values: Vec<Value> = e.variants.iter().map(|v| v.value.to_json()).collect();
            prop::sample::select(values).boxed()
        }
        Type::Struct(s) => struct_value(graph, s, budget),
        Type::Array(a) => {
            let min = a.min_items.unwrap_or(0) as usize;
            let max = a.max_items.map_or(min + 3, |m| m as usize);
            let unique = a.unique_items;
            prop::collection::vec(arb_value(graph, &a.items, budget), min..=max)
                .prop_map(move |mut items| {
                    if unique {
                        // Each value once, numbers compared by value.
                        let mut seen = std::collections::HashSet::new();
                        items.retain(|item| seen.insert(unique_key(item)));
                    }
                    Value::Array(items)
                })
                .boxed()
        }
        Type::Map(m) => {
            let keys: Vec<String> = match &m.keys {
                MapKeys::String => vec!["k1".into(), "k 2".into(), "ключ".into()],
                MapKeys::Enum(e) => e.variants.iter().map(|v| v.value.to_string()).collect(),
            };
            prop::collection::btree_map(
                prop::sample::select(keys),
                arb_value(graph, &m.values, budget),
                0..3,
            )
            .prop_map(|entries| Value::Object(entries.into_iter().collect()))
            .boxed()
        }
        Type::Nilable(inner) => prop_oneof![
            1 => Just(Value::Null),
            3 => arb_value(graph, inner, budget),
        ]
        .boxed(),
        Type::Tagged(u) => {
            let variants: Vec<BoxedStrategy<Value>> = u
                .variants
                .iter()
                .map(|v| {
                    let tag = v.tag.clone();
                    arb_value(graph, &v.ty, budget)
                        .prop_map(move |fields| tagged_value(&tag, fields))
                        .boxed()
                })
                .collect();
            one_of(variants)
        }
        Type::Union(members) => one_of(
            members
                .iter()
                .map(|m| arb_value(graph, m, budget))
                .collect(),
        ),
        Type::Ref(name) => {
            let target = &graph.defs[name];
            if budget == 0 {
                Just(minimal(graph, target)).boxed()
            } else {
                arb_value(graph, target, budget - 1)
            }
        }
        Type::Any => arb_json().boxed(),
    }
}

fn one_of(options: Vec<BoxedStrategy<Value>>) -> BoxedStrategy<Value> {
    let count = options.len();
    (0..count)
        .prop_flat_map(move |i| options[i].clone())
        .boxed()
}

fn struct_value(graph: &TypeGraph, s: &StructType, budget: u32) -> BoxedStrategy<Value> {
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = s
        .fields
        .iter()
        .map(|field| {
            let name = field.name.clone();
            let value = arb_value(graph, &field.ty, budget);
            if field.required || field.default.is_some() {
                // A field with a default is always present in the canonical value.
                value.prop_map(move |v| Some((name.clone(), v))).boxed()
            } else {
                prop::option::of(value)
                    .prop_map(move |v| v.map(|v| (name.clone(), v)))
                    .boxed()
            }
        })
        .collect();
    let extra = match &s.additional {
        Some(extra) => prop::collection::btree_map(
            prop::sample::select(vec!["extra1".to_owned(), "extra2".to_owned()]),
            arb_value(graph, extra, budget),
            0..2,
        )
        .boxed(),
        None => Just(Default::default()).boxed(),
    };
    (fields, extra)
        .prop_map(|(fields, extra)| {
            let mut out: Map<String, Value> = fields.into_iter().flatten().collect();
            out.extend(extra);
            Value::Object(out)
        })
        .boxed()
}

/// Arbitrary JSON, small.
pub fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-zA-Z0-9 _.,-]{0,8}".prop_map(Value::String),
        prop::sample::select(vec![
            "true",
            "42",
            "3.5",
            "[1]",
            "{\"a\":1}",
            "null",
            "HIGH",
            "_type"
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Arbitrary type graphs with no recursive type: [`NODE`] is defined without referring to
/// itself, for dialects that refuse recursion.
pub fn arb_acyclic_graph() -> impl Strategy<Value = TypeGraph> {
    arb_graph().prop_map(|mut graph| {
        let leaf = StructType::new(NODE).field(Field::new("label", Type::string()));
        graph.defs.insert(NODE.to_owned(), Type::Struct(leaf));
        graph
    })
}

/// `graph` as the one field `x` of a parameters object.
pub fn as_parameters(graph: &TypeGraph) -> TypeGraph {
    let root = Type::Struct(StructType::anonymous().field(Field::new("x", graph.root.clone())));
    TypeGraph {
        root,
        defs: graph.defs.clone(),
    }
}

/// Whether `ty` reaches the definition `name`, directly or through other definitions.
pub fn reaches(graph: &TypeGraph, ty: &Type, name: &str) -> bool {
    let mut seen = HashSet::new();
    let mut pending = vec![ty];
    while let Some(ty) = pending.pop() {
        let mut refs = Vec::new();
        collect_refs(ty, &mut refs);
        for target in refs {
            if target == name {
                return true;
            }
            if let Some(def) = graph.defs.get(&target)
                && seen.insert(target)
            {
                pending.push(def);
            }
        }
    }
    false
}

/// A graph with one canonical value of its root.
pub fn arb_graph_and_value() -> impl Strategy<Value = (TypeGraph, Value)> {
    arb_graph().prop_flat_map(|graph| {
        let value = arb_value(&graph, &graph.root, 2);
        (Just(graph), value)
    })
}

/// A graph with an input a model might send for it: a canonical value made messy in ways
/// lenient coercion repairs (numbers and booleans as text, shouting, one-element arrays), or
/// arbitrary JSON.
pub fn arb_graph_and_input() -> impl Strategy<Value = (TypeGraph, Value)> {
    prop_oneof![
        3 => (arb_graph_and_value(), any::<u64>())
            .prop_map(|((graph, value), seed)| (graph, perturb(&value, &mut Lcg(seed)))),
        1 => (arb_graph(), arb_json()),
    ]
}

/// A tiny deterministic generator, so a messy input shrinks with its seed.
pub struct Lcg(pub u64);

impl Lcg {
    fn roll(&mut self, sides: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % sides
    }
}

/// `value` with some scalars respelled the way models get them wrong.
pub fn perturb(value: &Value, rng: &mut Lcg) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(|v| perturb(v, rng)).collect()),
        Value::Object(map) => {
            // Keys in another case or style, or the `_type` tag dropped: what coercion renames
            // and infers.
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                let key = match rng.roll(8) {
                    0 => k.to_uppercase(),
                    1 => k.replace('_', ""),
                    _ if k == "_type" && rng.roll(4) == 0 => continue,
                    _ => k.clone(),
                };
                out.insert(key, perturb(v, rng));
            }
            Value::Object(out)
        }
        scalar => match rng.roll(6) {
            0 => match scalar {
                Value::Number(n) => Value::String(n.to_string()),
                Value::Bool(b) => Value::String(if *b { "TRUE" } else { "false" }.to_owned()),
                other => other.clone(),
            },
            1 => match scalar {
                Value::String(s) => Value::String(s.to_uppercase()),
                other => other.clone(),
            },
            2 => Value::Array(vec![scalar.clone()]),
            _ => scalar.clone(),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Equivalence

/// `graph` as JSON Schema can carry it, so that `normalize(import(emit(g))) == normalize(g)`:
/// - enum aliases and per-value descriptions are dropped (never emitted), and map-key enums
///   are their string values without a description (`propertyNames` holds only the values);
/// - a field's description and its type's own description share one schema object: the field
///   keeps the first of them, the type none;
/// - a tagged-union variant that refers to a struct holds the struct itself (variants are
///   written in place), and an anonymous variant struct is named after its tag;
/// - an anonymous struct defined by name is named after its definition;
/// - `Nilable(Nilable(t))` is `Nilable(t)`, `Nilable(Any)` is `Any`, a one-member union is its
///   member;
/// - only the definitions reachable from the root are kept.
pub fn normalize(graph: &TypeGraph) -> TypeGraph {
    let root = normalize_type(graph, &graph.root);
    let mut defs = Definitions::default();
    let mut queue = Vec::new();
    collect_refs(&root, &mut queue);
    while let Some(name) = queue.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        let Some(ty) = graph.defs.get(&name) else {
            continue;
        };
        let mut ty = normalize_type(graph, ty);
        if let Type::Struct(s) = &mut ty
            && s.name.is_none()
        {
            s.name = Some(name.clone());
        }
        collect_refs(&ty, &mut queue);
        defs.insert(name, ty);
    }
    TypeGraph { root, defs }
}

fn normalize_type(graph: &TypeGraph, ty: &Type) -> Type {
    match ty {
        Type::Enum(e) => Type::Enum(EnumType {
            description: e.description.clone(),
            variants: e
                .variants
                .iter()
                .map(|v| toolsmith_types::EnumVariant::new(v.value.clone()))
                .collect(),
        }),
        Type::Struct(s) => Type::Struct(StructType {
            name: s.name.clone(),
            description: s.description.clone(),
            fields: s
                .fields
                .iter()
                .map(|f| {
                    let mut ty = normalize_type(graph, &f.ty);
                    let own = take_description(&mut ty);
                    Field {
                        name: f.name.clone(),
                        ty,
                        description: f.description.clone().or(own),
                        default: f.default.clone(),
                        required: f.required,
                        aliases: f.aliases.clone(),
                    }
                })
                .collect(),
            additional: s
                .additional
                .as_ref()
                .map(|t| Box::new(normalize_type(graph, t))),
        }),
        Type::Array(a) => Type::Array(ArrayType {
            items: Box::new(normalize_type(graph, &a.items)),
            ..a.clone()
        }),
        Type::Map(m) => Type::Map(MapType {
            keys: match &m.keys {
                MapKeys::String => MapKeys::String,
                MapKeys::Enum(e) => MapKeys::Enum(EnumType::strings(
                    e.variants.iter().map(|v| v.value.to_string()),
                )),
            },
            values: Box::new(normalize_type(graph, &m.values)),
        }),
        Type::Nilable(inner) => Type::nilable(normalize_type(graph, inner)),
        Type::Tagged(u) => Type::Tagged(TaggedUnion {
            description: u.description.clone(),
            variants: u
                .variants
                .iter()
                .map(|v| {
                    let mut ty = normalize_type(graph, graph.resolve(&v.ty).unwrap_or(&v.ty));
                    if let Type::Struct(s) = &mut ty
                        && s.name.is_none()
                    {
                        s.name = Some(v.tag.clone());
                    }
                    TaggedVariant {
                        tag: v.tag.clone(),
                        ty,
                    }
                })
                .collect(),
        }),
        Type::Union(members) if members.len() == 1 => normalize_type(graph, &members[0]),
        Type::Union(members) => {
            Type::Union(members.iter().map(|m| normalize_type(graph, m)).collect())
        }
        other => other.clone(),
    }
}

/// Removes and returns the description a type writes into its own schema object.
fn take_description(ty: &mut Type) -> Option<String> {
    match ty {
        Type::Enum(e) => e.description.take(),
        Type::Struct(s) => s.description.take(),
        Type::Tagged(u) => u.description.take(),
        Type::Nilable(inner) => take_description(inner),
        _ => None,
    }
}

fn collect_refs(ty: &Type, out: &mut Vec<String>) {
    match ty {
        Type::Ref(name) => out.push(name.clone()),
        Type::Struct(s) => {
            for f in &s.fields {
                collect_refs(&f.ty, out);
            }
            if let Some(extra) = &s.additional {
                collect_refs(extra, out);
            }
        }
        Type::Array(a) => collect_refs(&a.items, out),
        Type::Map(m) => collect_refs(&m.values, out),
        Type::Nilable(inner) => collect_refs(inner, out),
        Type::Tagged(u) => {
            for v in &u.variants {
                collect_refs(&v.ty, out);
            }
        }
        Type::Union(members) => {
            for m in members {
                collect_refs(m, out);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Golden files

/// Compares `actual` with the golden file `tests/golden/<name>`; with `UPDATE_GOLDEN=1` in the
/// environment, writes `actual` there instead.
pub fn assert_golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to write it)",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{} differs (run with UPDATE_GOLDEN=1 to rewrite it)\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

// ---------------------------------------------------------------------------------------------
// Dialect rules, as checks on an emitted schema (`dialects.md`)

/// A check of one rule: the JSON Pointers where `schema` breaks it (empty when it holds).
pub type RuleCheck = fn(&Value) -> Vec<String>;

/// Calls `visit` with every schema object in `schema` (the root, properties, items, `anyOf`
/// members, schema-valued `additionalProperties`, `propertyNames`, `$defs`) and its pointer.
pub fn each_schema(schema: &Value, visit: &mut impl FnMut(&str, &Map<String, Value>)) {
    fn walk(schema: &Value, pointer: &str, visit: &mut impl FnMut(&str, &Map<String, Value>)) {
        let Value::Object(object) = schema else {
            return;
        };
        visit(pointer, object);
        for keyword in ["items", "additionalProperties", "propertyNames"] {
            if let Some(child) = object.get(keyword) {
                walk(child, &format!("{pointer}/{keyword}"), visit);
            }
        }
        for keyword in ["properties", "$defs"] {
            if let Some(Value::Object(children)) = object.get(keyword) {
                for (name, child) in children {
                    walk(child, &format!("{pointer}/{keyword}/{name}"), visit);
                }
            }
        }
        if let Some(Value::Array(members)) = object.get("anyOf") {
            for (i, member) in members.iter().enumerate() {
                walk(member, &format!("{pointer}/anyOf/{i}"), visit);
            }
        }
    }
    walk(schema, "", visit);
}

/// The pointers of the schema objects for which `breaks` holds.
fn breaking(schema: &Value, breaks: impl Fn(&Map<String, Value>) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    each_schema(schema, &mut |pointer, object| {
        if breaks(object) {
            out.push(pointer.to_owned());
        }
    });
    out
}

/// The pointers of schema objects holding any of `keywords`.
fn holding(schema: &Value, keywords: &[&str]) -> Vec<String> {
    breaking(schema, |object| {
        keywords.iter().any(|k| object.contains_key(*k))
    })
}

fn is_object_schema(object: &Map<String, Value>) -> bool {
    match object.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => false,
    }
}

/// The root is `type: object`, not `anyOf`.
pub fn root_is_object(schema: &Value) -> Vec<String> {
    let ok = schema["type"] == json!("object") && schema.get("anyOf").is_none();
    if ok { vec![] } else { vec![String::new()] }
}

/// Every object lists every property in `required`, in property order.
pub fn every_property_required(schema: &Value) -> Vec<String> {
    breaking(schema, |object| {
        let Some(Value::Object(properties)) = object.get("properties") else {
            return false;
        };
        let names: Vec<Value> = properties.keys().map(|k| json!(k)).collect();
        object.get("required") != Some(&Value::Array(names))
    })
}

/// Every object says `additionalProperties: false`.
pub fn objects_closed(schema: &Value) -> Vec<String> {
    // An `enum` of objects is a closed set of values, not an object shape to close (closing it
    // would forbid the keys of its own values).
    breaking(schema, |object| {
        is_object_schema(object)
            && !object.contains_key("enum")
            && object.get("additionalProperties") != Some(&json!(false))
    })
}

/// No `additionalProperties` keyword anywhere.
pub fn no_additional_properties(schema: &Value) -> Vec<String> {
    holding(schema, &["additionalProperties"])
}

/// No object stands for a map (`additionalProperties` holding a schema).
pub fn no_map_objects(schema: &Value) -> Vec<String> {
    breaking(schema, |object| {
        object
            .get("additionalProperties")
            .is_some_and(|extra| !extra.is_boolean())
    })
}

/// Every `_type` property is a string with a one-value `enum`.
pub fn tags_are_one_value_enums(schema: &Value) -> Vec<String> {
    breaking(schema, |object| {
        object
            .get("properties")
            .and_then(|p| p.get(TYPE_TAG))
            .is_some_and(|tag| {
                tag["type"] != json!("string")
                    || tag["enum"].as_array().is_none_or(|v| v.len() != 1)
            })
    })
}

/// Every `_type` property is a string `const`.
pub fn tags_are_const(schema: &Value) -> Vec<String> {
    breaking(schema, |object| {
        object
            .get("properties")
            .and_then(|p| p.get(TYPE_TAG))
            .is_some_and(|tag| tag["type"] != json!("string") || !tag["const"].is_string())
    })
}

/// No `$ref` has sibling keywords.
pub fn no_ref_siblings(schema: &Value) -> Vec<String> {
    breaking(schema, |object| {
        object.contains_key("$ref") && object.len() > 1
    })
}

/// None of OpenAI strict mode's unsupported keywords.
pub fn no_openai_strict_unsupported_keywords(schema: &Value) -> Vec<String> {
    holding(schema, &["allOf", "not", "if", "then", "else", "default"])
}

/// No numeric or length bounds (strict Anthropic tools).
pub fn no_bounds(schema: &Value) -> Vec<String> {
    holding(
        schema,
        &[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
        ],
    )
}

/// No `$ref`, `$defs` or `$schema`.
pub fn no_refs(schema: &Value) -> Vec<String> {
    holding(schema, &["$ref", "$defs", "$schema"])
}

/// No `const`.
pub fn no_const(schema: &Value) -> Vec<String> {
    holding(schema, &["const"])
}

/// No `type` naming several types.
pub fn no_type_arrays(schema: &Value) -> Vec<String> {
    breaking(schema, |object| {
        object.get("type").is_some_and(Value::is_array)
    })
}

/// Every enum is `type: string` with string values only.
pub fn string_enums_only(schema: &Value) -> Vec<String> {
    breaking(schema, |object| {
        object.get("enum").is_some_and(|values| {
            object.get("type") != Some(&json!("string"))
                || values
                    .as_array()
                    .is_none_or(|v| !v.iter().all(Value::is_string))
        })
    })
}

/// No `format` but `date-time` and `enum`, and none of the keywords Gemini's schema object
/// lacks.
pub fn only_gemini_keywords(schema: &Value) -> Vec<String> {
    let mut out = holding(
        schema,
        &["exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
    );
    out.extend(breaking(schema, |object| {
        object
            .get("format")
            .is_some_and(|f| f != "date-time" && f != "enum")
    }));
    out
}

/// Every property left out of `required` is `nullable: true`.
pub fn optional_properties_nullable(schema: &Value) -> Vec<String> {
    breaking(schema, |object| {
        let Some(Value::Object(properties)) = object.get("properties") else {
            return false;
        };
        let required = object["required"].as_array().cloned().unwrap_or_default();
        properties
            .iter()
            .any(|(name, p)| !required.contains(&json!(name)) && p["nullable"] != json!(true))
    })
}

/// The rules of `dialect`'s row in `dialects.md` that a parameters schema can be checked for
/// (JSON Schema validity is checked separately).
pub fn rule_checks(dialect: Dialect) -> Vec<(&'static str, RuleCheck)> {
    let mut checks: Vec<(&'static str, RuleCheck)> = Vec::new();
    if dialect != Dialect::JsonSchema {
        checks.push(("root is an object", root_is_object));
    }
    match dialect {
        Dialect::OpenAi { strict } => {
            checks.push(("no $ref siblings", no_ref_siblings));
            if strict {
                checks.push(("every property required", every_property_required));
                checks.push(("objects closed", objects_closed));
                checks.push(("maps as entries", no_map_objects));
                checks.push(("_type as one-value enum", tags_are_one_value_enums));
                checks.push((
                    "no unsupported keywords",
                    no_openai_strict_unsupported_keywords,
                ));
            } else {
                checks.push(("_type as const", tags_are_const));
            }
        }
        Dialect::Anthropic { strict } => {
            checks.push(("_type as const", tags_are_const));
            if strict {
                checks.push(("objects closed", objects_closed));
                checks.push(("maps as entries", no_map_objects));
                checks.push(("no bounds", no_bounds));
            }
        }
        Dialect::Gemini => {
            checks.push(("no $ref", no_refs));
            checks.push(("no const", no_const));
            checks.push(("no additionalProperties", no_additional_properties));
            checks.push(("no type arrays", no_type_arrays));
            checks.push(("string enums only", string_enums_only));
            checks.push(("only Gemini keywords", only_gemini_keywords));
            checks.push(("optional is nullable", optional_properties_nullable));
            checks.push(("_type as one-value enum", tags_are_one_value_enums));
        }
        _ => checks.push(("_type as const", tags_are_const)),
    }
    checks
}

/// Every rule of `dialect` that `schema` breaks, with where.
pub fn rule_violations(dialect: Dialect, schema: &Value) -> Vec<String> {
    rule_checks(dialect)
        .into_iter()
        .flat_map(|(rule, check)| {
            check(schema)
                .into_iter()
                .map(move |at| format!("{rule} at {at:?}"))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Wire shapes (`dialects.md`): a canonical value as a model answering a dialect sends it

/// How a dialect's wire shape differs from the canonical value.
#[derive(Debug, Clone, Copy)]
pub struct Wire {
    /// Maps travel as `[{"key": .., "value": ..}]`.
    pub maps_as_entries: bool,
    /// An omitted optional field travels as `null` (the schema offered `null` for it).
    pub null_for_omitted: bool,
    /// Integer enum values travel as their decimal text.
    pub enums_as_strings: bool,
    /// Objects are closed: a struct's additional keys cannot be sent.
    pub closed_objects: bool,
}

/// The wire shape of `dialect`, from the table.
pub fn wire(dialect: Dialect) -> Wire {
    let canonical = Wire {
        maps_as_entries: false,
        null_for_omitted: false,
        enums_as_strings: false,
        closed_objects: false,
    };
    match dialect {
        Dialect::OpenAi { strict: true } => Wire {
            maps_as_entries: true,
            null_for_omitted: true,
            closed_objects: true,
            ..canonical
        },
        Dialect::Anthropic { strict: true } => Wire {
            maps_as_entries: true,
            closed_objects: true,
            ..canonical
        },
        Dialect::Gemini => Wire {
            maps_as_entries: true,
            null_for_omitted: true,
            enums_as_strings: true,
            ..canonical
        },
        _ => canonical,
    }
}

/// `value`, canonical for `ty`, in the wire shape: what a model sends, and the canonical value
/// that stands for (the same, but where the wire cannot tell: `null` for an omitted optional
/// field that allows `null` reads as `null`; additional keys a closed object cannot carry are
/// gone).
pub fn to_wire(graph: &TypeGraph, ty: &Type, value: &Value, wire: Wire) -> (Value, Value) {
    match (ty, value) {
        (Type::Ref(name), _) => to_wire(graph, &graph.defs[name], value, wire),
        (Type::Nilable(inner), value) if !value.is_null() => to_wire(graph, inner, value, wire),
        (Type::Enum(_), Value::Number(n)) if wire.enums_as_strings => {
            (Value::String(n.to_string()), value.clone())
        }
        (Type::Enum(_), other)
            if wire.enums_as_strings && !other.is_string() && !other.is_null() =>
        {
            (Value::String(other.to_string()), value.clone())
        }
        (Type::Array(a), Value::Array(items)) => {
            let (sent, meant) = items
                .iter()
                .map(|item| to_wire(graph, &a.items, item, wire))
                .unzip();
            (Value::Array(sent), Value::Array(meant))
        }
        (Type::Map(m), Value::Object(entries)) => {
            let mut sent = Vec::new();
            let mut meant = Map::new();
            for (key, item) in entries {
                let (s, m) = to_wire(graph, &m.values, item, wire);
                sent.push((key.clone(), s));
                meant.insert(key.clone(), m);
            }
            let sent = if wire.maps_as_entries {
                Value::Array(
                    sent.into_iter()
                        .map(|(key, value)| json!({"key": key, "value": value}))
                        .collect(),
                )
            } else {
                Value::Object(sent.into_iter().collect())
            };
            (sent, Value::Object(meant))
        }
        (Type::Struct(s), Value::Object(fields)) => struct_to_wire(graph, s, fields, wire),
        (Type::Tagged(u), Value::Object(fields)) => {
            let tag = fields.get(TYPE_TAG).and_then(Value::as_str);
            let variant = u
                .variants
                .iter()
                .find(|v| Some(v.tag.as_str()) == tag)
                .unwrap();
            let Some(Type::Struct(s)) = graph.resolve(&variant.ty) else {
                panic!("variant {} is not a struct", variant.tag);
            };
            struct_to_wire(graph, s, fields, wire)
        }
        (Type::Union(members), _) => {
            // The member coercion picks: the first that takes the value as it is.
            let member = members.iter().find(|m| {
                let graph = TypeGraph {
                    root: (*m).clone(),
                    defs: graph.defs.clone(),
                };
                coerce(&graph, value, &Policy::strict()).is_ok_and(|out| out.value == *value)
            });
            match member {
                Some(member) => to_wire(graph, member, value, wire),
                None => (value.clone(), value.clone()),
            }
        }
        _ => (value.clone(), value.clone()),
    }
}

fn struct_to_wire(
    graph: &TypeGraph,
    s: &StructType,
    fields: &Map<String, Value>,
    wire: Wire,
) -> (Value, Value) {
    let mut sent = Map::new();
    let mut meant = Map::new();
    if let Some(tag) = fields.get(TYPE_TAG) {
        sent.insert(TYPE_TAG.to_owned(), tag.clone());
        meant.insert(TYPE_TAG.to_owned(), tag.clone());
    }
    for field in &s.fields {
        match fields.get(&field.name) {
            Some(value) => {
                let (s, m) = to_wire(graph, &field.ty, value, wire);
                sent.insert(field.name.clone(), s);
                meant.insert(field.name.clone(), m);
            }
            None if wire.null_for_omitted => {
                sent.insert(field.name.clone(), Value::Null);
                if accepts_null(graph, &field.ty) {
                    meant.insert(field.name.clone(), Value::Null);
                }
            }
            None => {}
        }
    }
    let declared = |key: &str| key == TYPE_TAG || s.get(key).is_some();
    if let (Some(extra), false) = (&s.additional, wire.closed_objects) {
        for (key, value) in fields.iter().filter(|(key, _)| !declared(key)) {
            let (s, m) = to_wire(graph, extra, value, wire);
            sent.insert(key.clone(), s);
            meant.insert(key.clone(), m);
        }
    }
    (Value::Object(sent), Value::Object(meant))
}

/// Whether `ty` takes `null` as a value of its own (as coercion decides it).
pub fn accepts_null(graph: &TypeGraph, ty: &Type) -> bool {
    match graph.resolve(ty) {
        Some(Type::Nilable(_) | Type::Any) => true,
        Some(Type::Union(members)) => members.iter().any(|m| accepts_null(graph, m)),
        _ => false,
    }
}

/// `value` as text in which numbers equal by value are spelled alike, for keeping array items
/// unique as JSON Schema compares them.
fn unique_key(value: &Value) -> String {
    match value {
        Value::Number(n) => format!("{:?}", n.as_f64()),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(unique_key).collect::<Vec<_>>().join(",")
        ),
        Value::Object(map) => {
            let mut entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k:?}:{}", unique_key(v)))
                .collect();
            entries.sort();
            format!("{{{}}}", entries.join(","))
        }
        other => other.to_string(),
    }
}
