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
/// two different types described under the same name share the first one's definition.
pub fn define(
    defs: &mut Definitions,
    name: &str,
    build: impl FnOnce(&mut Definitions) -> Type,
) -> Type {
    if !defs.contains_key(name) {
        // Reserve the slot first: a recursive `build` sees the name and stops there.
        defs.insert(name.to_owned(), Type::Any);
        let ty = build(defs);
        defs.insert(name.to_owned(), ty);
    }
    Type::Ref(name.to_owned())
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
                // Coercion keeps every integer in the 64-bit range already; only a narrower
                // bound tells the model something.
                let (min, max) = (i128::from(<$t>::MIN as i64), <$t>::MAX as i128);
                Type::Integer(IntegerType {
                    minimum: (min > i128::from(i64::MIN)).then_some(min),
                    maximum: (max < i128::from(u64::MAX) && max != i128::from(i64::MAX))
                        .then_some(max),
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
    fn describe(defs: &mut Definitions) -> Type {
        T::describe(defs)
    }
}

impl<T: Describe + ?Sized> Describe for &T {
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
