//! Generators for the property laws: arbitrary type graphs, canonical values that fit them,
//! messy variants of those values, arbitrary JSON; and what "equivalent type" means once a type
//! has gone through JSON Schema and back.
#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::{Map, Value};
use toolsmith_types::{
    ArrayType, Definitions, EnumType, Field, IntegerType, MapKeys, MapType, NumberType, Pattern,
    StringType, StructType, TYPE_TAG, TaggedUnion, TaggedVariant, Type, TypeGraph,
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
            description
        )
            .prop_map(|(values, description)| EnumType {
                description,
                ..EnumType::integers(values)
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
                (inner.clone(), 0u64..2, prop::option::of(0u64..3)).prop_map(
                    |(items, min, extra)| {
                        Type::Array(ArrayType {
                            items: Box::new(items),
                            min_items: (min > 0).then_some(min),
                            max_items: extra.map(|e| min + e),
                        })
                    }
                ),
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
            prop::collection::vec(arb_value(graph, &a.items, budget), min..=max)
                .prop_map(Value::Array)
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
