//! [`Describe`]: how a Rust type tells toolsmith its [`Type`].

use std::collections::{BTreeMap, HashMap};

use indexmap::IndexMap;

use crate::ty::{Definitions, IntegerType, NumberType, Type, TypeGraph};

/// A Rust type that can describe the JSON it (de)serializes as.
///
/// Named types register themselves once in the [`Definitions`] through [`define`] and return a
/// [`Type::Ref`], so a type that contains itself (a tree node holding `Vec<Self>`) terminates.
/// `#[derive(ToolType)]` writes this impl; writing it by hand looks like this:
///
/// ```
/// use toolsmith_types::{define, Definitions, Describe, Field, StructType, Type};
///
/// struct Node { label: String, children: Vec<Node> }
///
/// impl Describe for Node {
///     fn describe(defs: &mut Definitions) -> Type {
///         define(defs, "Node", |defs| {
///             Type::Struct(
///                 StructType::new("Node")
///                     .field(Field::new("label", String::describe(defs)))
///                     .field(Field::new("children", Vec::<Node>::describe(defs))),
///             )
///         })
///     }
/// }
///
/// let graph = Node::type_graph();
/// assert_eq!(graph.root, Type::reference("Node"));
/// assert!(graph.dangling_refs().is_empty());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not describe itself to toolsmith: it has no `Describe` impl",
    label = "this type cannot be a tool parameter or a field of one",
    note = "derive it with `#[derive(ToolType)]` (with serde's `Deserialize`), or implement `Describe` by hand"
)]
pub trait Describe {
    /// Whether a field of this type may be left out, as serde reads a missing `Option<T>` field
    /// as `None`. `false` unless the impl says otherwise; `Option<T>` says `true`.
    const OPTIONAL: bool = false;

    /// The type of `Self`, adding any named types it needs to `defs`.
    fn describe(defs: &mut Definitions) -> Type;

    /// The type of `Self` with every definition it needs.
    fn type_graph() -> TypeGraph {
        let mut defs = Definitions::default();
        let root = Self::describe(&mut defs);
        TypeGraph { root, defs }
    }
}

/// Defines the named type `name` once and returns a reference to it.
///
/// The first call runs `build` (with `name` already reserved, so recursion through `name` ends in
/// a reference); later calls return the reference without building again. A name is one type:
/// two different types described under the same name share the first one's definition, so a type
/// whose short name may clash with another's (any type a derive describes) uses [`define_for`].
pub fn define(
    defs: &mut Definitions,
    name: &str,
    build: impl FnOnce(&mut Definitions) -> Type,
) -> Type {
    if !defs.contains_key(name) {
        reserve_and_build(defs, name.to_owned(), build);
    }
    Type::Ref(name.to_owned())
}

/// Defines the Rust type `T` once, under `name` if that is free and otherwise under `name`
/// followed by the first number that makes it unique (`Options2`), and returns a reference to it.
///
/// This is what `#[derive(ToolType)]` calls: `a::Options` and `b::Options` in one tool become two
/// definitions, while every use of one Rust type refers to its one definition.
///
/// ```
/// use toolsmith_types::{define_for, Definitions, Type};
///
/// mod a { pub struct Options; }
/// mod b { pub struct Options; }
///
/// let mut defs = Definitions::default();
/// assert_eq!(define_for::<a::Options>(&mut defs, "Options", |_| Type::Boolean), Type::reference("Options"));
/// assert_eq!(define_for::<b::Options>(&mut defs, "Options", |_| Type::string()), Type::reference("Options2"));
/// assert_eq!(define_for::<a::Options>(&mut defs, "Options", |_| unreachable!()), Type::reference("Options"));
/// assert_eq!(defs["Options2"], Type::string());
/// ```
pub fn define_for<T: ?Sized>(
    defs: &mut Definitions,
    name: &str,
    build: impl FnOnce(&mut Definitions) -> Type,
) -> Type {
    let owner = std::any::type_name::<T>();
    if let Some(existing) = defs.owned_by(owner) {
        return Type::Ref(existing.to_owned());
    }
    let mut unique = name.to_owned();
    // Each taken name rules out one number, so this ends within `defs.len() + 1` tries.
    let mut n = 2usize;
    while defs.contains_key(&unique) {
        unique = format!("{name}{n}");
        n += 1;
    }
    defs.set_owner(owner, unique.clone());
    reserve_and_build(defs, unique.clone(), build);
    Type::Ref(unique)
}

fn reserve_and_build(
    defs: &mut Definitions,
    name: String,
    build: impl FnOnce(&mut Definitions) -> Type,
) {
    // Reserve the slot first: a recursive `build` sees the name and stops there.
    defs.insert(name.clone(), Type::Any);
    let ty = build(defs);
    defs.insert(name, ty);
}

impl Describe for String {
    fn describe(_: &mut Definitions) -> Type {
        Type::string()
    }
}

impl Describe for str {
    fn describe(_: &mut Definitions) -> Type {
        Type::string()
    }
}

impl Describe for bool {
    fn describe(_: &mut Definitions) -> Type {
        Type::Boolean
    }
}

macro_rules! describe_integer {
    ($($t:ty),*) => {$(
        impl Describe for $t {
            fn describe(_: &mut Definitions) -> Type {
                // Coercion keeps every integer within `i64::MIN..=u64::MAX` already; every
                // narrower bound is stated (`i64`'s maximum too), so a value past it is an
                // error at its field rather than serde's at the root.
                let (min, max) = (i128::from(<$t>::MIN as i64), <$t>::MAX as i128);
                Type::Integer(IntegerType {
                    minimum: (min > i128::from(i64::MIN)).then_some(min),
                    maximum: (max < i128::from(u64::MAX)).then_some(max),
                    ..IntegerType::default()
                })
            }
        }
    )*};
}

describe_integer!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl Describe for f32 {
    fn describe(_: &mut Definitions) -> Type {
        Type::Number(NumberType {
            minimum: Some(f64::from(f32::MIN)),
            maximum: Some(f64::from(f32::MAX)),
            ..NumberType::default()
        })
    }
}

impl Describe for f64 {
    fn describe(_: &mut Definitions) -> Type {
        Type::number()
    }
}

impl<T: Describe> Describe for Option<T> {
    const OPTIONAL: bool = true;

    fn describe(defs: &mut Definitions) -> Type {
        Type::nilable(T::describe(defs))
    }
}

impl<T: Describe> Describe for Vec<T> {
    fn describe(defs: &mut Definitions) -> Type {
        Type::array(T::describe(defs))
    }
}

impl<T: Describe> Describe for [T] {
    fn describe(defs: &mut Definitions) -> Type {
        Type::array(T::describe(defs))
    }
}

impl<T: Describe + ?Sized> Describe for Box<T> {
    const OPTIONAL: bool = T::OPTIONAL;

    fn describe(defs: &mut Definitions) -> Type {
        T::describe(defs)
    }
}

impl<T: Describe + ?Sized> Describe for &T {
    const OPTIONAL: bool = T::OPTIONAL;

    fn describe(defs: &mut Definitions) -> Type {
        T::describe(defs)
    }
}

impl<V: Describe, S> Describe for HashMap<String, V, S> {
    fn describe(defs: &mut Definitions) -> Type {
        Type::map(V::describe(defs))
    }
}

impl<V: Describe> Describe for BTreeMap<String, V> {
    fn describe(defs: &mut Definitions) -> Type {
        Type::map(V::describe(defs))
    }
}

impl<V: Describe, S> Describe for IndexMap<String, V, S> {
    fn describe(defs: &mut Definitions) -> Type {
        Type::map(V::describe(defs))
    }
}

impl Describe for serde_json::Value {
    fn describe(_: &mut Definitions) -> Type {
        Type::Any
    }
}
