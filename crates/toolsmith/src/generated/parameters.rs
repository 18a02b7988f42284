//! The parameters type of a tool, built field by field, and its defaults.

use serde::Serialize;
use serde_json::Value;
use toolsmith_types::{Definitions, Field, StructType, Type, TypeGraph};

/// The parameters struct of a tool, from one field per parameter.
pub fn parameters(build: impl FnOnce(&mut Definitions) -> Vec<Field>) -> TypeGraph {
    let mut defs = Definitions::default();
    let mut root = StructType::anonymous();
    root.fields = build(&mut defs);
    TypeGraph {
        root: Type::Struct(root),
        defs,
    }
}

/// A field for a parameter or struct field: optional when serde reads its absence
/// ([`Describe::OPTIONAL`](toolsmith_types::Describe::OPTIONAL), an `Option`) or when it has a default.
pub fn field(
    name: &str,
    ty: Type,
    optional: bool,
    description: Option<&str>,
    default: Option<Option<Value>>,
) -> Field {
    let mut field = Field::new(name, ty);
    field.description = description.map(str::to_owned);
    if optional {
        field = field.optional();
    }
    match default {
        // A default that serializes is written into the schema and filled in by coercion.
        Some(Some(value)) => field = field.default_value(value),
        // One that does not is still a default: serde fills it in.
        Some(None) => field = field.optional(),
        None => {}
    }
    field
}

/// A default value, probed for a JSON form: generated code calls
/// `(&&DefaultValue(&value)).to_json()` with both `Via*Json` traits in scope, so a default whose
/// type is not `Serialize` is still a default (serde fills it in), only not written in the schema.
pub struct DefaultValue<'a, T>(pub &'a T);

/// `T: Serialize`: the default as JSON, or `None` when it does not serialize.
pub trait ViaSerializeJson {
    /// The default as JSON.
    fn to_json(&self) -> Option<Value>;
}
impl<T: Serialize> ViaSerializeJson for &DefaultValue<'_, T> {
    fn to_json(&self) -> Option<Value> {
        serde_json::to_value(self.0).ok()
    }
}

/// Any other type: no JSON form.
pub trait ViaOpaqueJson {
    /// `None`.
    fn to_json(&self) -> Option<Value>;
}
impl<T> ViaOpaqueJson for DefaultValue<'_, T> {
    fn to_json(&self) -> Option<Value> {
        None
    }
}
