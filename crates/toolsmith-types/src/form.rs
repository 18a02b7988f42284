//! [`elicitation_schema`]: a type as a form a person fills in, in MCP's restricted elicitation
//! schema (`elicitation/create`'s `requestedSchema`, protocol 2025-11-25).
//!
//! This is a dialect of its own, written apart from [`emit`](crate::emit)'s table of receiver
//! rules: a form is one flat object whose fields are text, numbers, booleans, a choice among
//! strings or a set of such choices, each with at most its bounds, a format, a description and
//! a default (SEP-1034). Nothing nests, nothing refers. A type that a form cannot hold is refused
//! with the field and the reason, never written as something a client would draw differently.

use serde_json::{Map, Value, json};

use crate::emit::EmitError;
use crate::ty::{ArrayType, EnumType, EnumValue, Field, IntegerType, NumberType, StringType};
use crate::{Type, TypeGraph};

/// The string formats a form field may declare.
const FORMATS: [&str; 4] = ["email", "uri", "date", "date-time"];

/// The form that asks a person for a value of `graph`'s type: MCP's restricted elicitation
/// schema, `{"type": "object", "properties": ..., "required": [...]}`.
///
/// The root must be a struct. Each field becomes one property:
/// - a string: `minLength`, `maxLength`, and a `format` among `email`, `uri`, `date` and
///   `date-time`;
/// - an integer or a number: `minimum` and `maximum` (an integer's exclusive bound becomes the
///   inclusive one next to it; the range of `i64` or `u64` itself is left unsaid);
/// - a boolean;
/// - an enum of strings: a single choice, written `enum` when its values have no descriptions
///   and `oneOf` of `{const, title}` (titled, SEP-1330) when every value has one;
/// - an array of such an enum: a choice of several (`items` with `enum` or `anyOf` of
///   `{const, title}`), with `minItems` and `maxItems`.
///
/// A field's description is its `description`, its default its `default` (SEP-1034); a
/// required field that is not nilable is in `required`.
///
/// ```
/// use serde::Deserialize;
/// use serde_json::json;
/// use toolsmith_types::{Describe, elicitation_schema};
/// # use toolsmith_types::{Definitions, EnumType, EnumVariant, EnumValue, Field, StructType, Type};
/// # struct Booking;
/// # impl Describe for Booking {
/// #     fn describe(_: &mut Definitions) -> Type {
/// #         let mut seat = EnumType::strings(["aisle", "window"]);
/// #         seat.variants[0].description = Some("Aisle seat".into());
/// #         seat.variants[1].description = Some("Window seat".into());
/// #         Type::Struct(StructType::new("Booking")
/// #             .field(Field::new("name", Type::string()).describe("Who travels"))
/// #             .field(Field::new("seat", Type::Enum(seat)).optional().default_value(json!("aisle"))))
/// #     }
/// # }
///
/// let form = elicitation_schema(&Booking::type_graph())?;
/// assert_eq!(form, json!({
///     "type": "object",
///     "properties": {
///         "name": {"type": "string", "description": "Who travels"},
///         "seat": {
///             "type": "string",
///             "oneOf": [
///                 {"const": "aisle", "title": "Aisle seat"},
///                 {"const": "window", "title": "Window seat"}
///             ],
///             "default": "aisle"
///         }
///     },
///     "required": ["name"]
/// }));
/// # Ok::<(), toolsmith_types::EmitError>(())
/// ```
///
/// # Errors
/// [`EmitError::InvalidType`] when the root is not a struct (path `""`) or naming the field
/// (`/properties/<name>`) whose type a form cannot hold, and why;
/// [`EmitError::DanglingRef`] for a reference to a missing definition.
pub fn elicitation_schema(graph: &TypeGraph) -> Result<Value, EmitError> {
    let root = resolve(graph, &graph.root)?;
    let Type::Struct(form) = root else {
        return Err(invalid(
            "",
            format!(
                "a form is an object of fields, and this type is {}",
                kind(root)
            ),
        ));
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in &form.fields {
        let path = format!(
            "/properties/{}",
            crate::pointer::encode_fragment_segment(&field.name)
        );
        let (ty, nilable) = match resolve(graph, &field.ty)? {
            Type::Nilable(inner) => (resolve(graph, inner)?, true),
            ty => (ty, false),
        };
        let property = property(graph, field, ty, &path)?;
        if properties.insert(field.name.clone(), property).is_some() {
            return Err(invalid(&path, "two fields have this name"));
        }
        if field.required && !nilable {
            required.push(Value::String(field.name.clone()));
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    Ok(Value::Object(schema))
}

/// One field's property.
fn property(graph: &TypeGraph, field: &Field, ty: &Type, path: &str) -> Result<Value, EmitError> {
    let mut out = match ty {
        Type::String(string) => string_property(string, path)?,
        Type::Integer(integer) => integer_property(integer, path)?,
        Type::Number(number) => number_property(number, path)?,
        Type::Boolean => json_object(json!({"type": "boolean"})),
        Type::Enum(choice) => {
            let mut out = json_object(json!({"type": "string"}));
            let (keyword, values) = choices(choice, path, "oneOf")?;
            out.insert(keyword.into(), values);
            out
        }
        Type::Array(array) => multi_select(graph, array, path)?,
        other => {
            return Err(invalid(
                path,
                format!(
                    "a form holds only text, numbers, booleans, a choice among strings and a \
                     set of such choices, and this field is {}",
                    kind(other)
                ),
            ));
        }
    };
    if let Some(description) = &field.description {
        out.insert("description".into(), json!(description));
    }
    if let Some(default) = &field.default {
        out.insert("default".into(), default.clone());
    }
    Ok(Value::Object(out))
}

fn string_property(string: &StringType, path: &str) -> Result<Map<String, Value>, EmitError> {
    if let Some(pattern) = &string.pattern {
        return Err(invalid(
            path,
            format!(
                "a form field cannot require a pattern (`{}`); check the answer in the tool \
                 instead",
                pattern.as_str()
            ),
        ));
    }
    let mut out = json_object(json!({"type": "string"}));
    put(&mut out, "minLength", string.min_length);
    put(&mut out, "maxLength", string.max_length);
    if let Some(format) = &string.format {
        if !FORMATS.contains(&format.as_str()) {
            return Err(invalid(
                path,
                format!(
                    "a form field's format is one of {}; `{format}` is not",
                    FORMATS.join(", ")
                ),
            ));
        }
        out.insert("format".into(), json!(format));
    }
    Ok(out)
}

fn integer_property(integer: &IntegerType, path: &str) -> Result<Map<String, Value>, EmitError> {
    if integer.multiple_of.is_some() {
        return Err(invalid(path, "a form field cannot require a multiple"));
    }
    let bound = |inclusive: Option<i128>,
                 exclusive: Option<i128>,
                 step: i128,
                 tighter: fn(i128, i128) -> i128| {
        let exclusive = exclusive.and_then(|bound| bound.checked_add(step));
        match (inclusive, exclusive) {
            (Some(a), Some(b)) => Some(tighter(a, b)),
            (a, b) => a.or(b),
        }
    };
    let minimum = bound(integer.minimum, integer.exclusive_minimum, 1, std::cmp::max);
    let maximum = bound(
        integer.maximum,
        integer.exclusive_maximum,
        -1,
        std::cmp::min,
    );
    let mut out = json_object(json!({"type": "integer"}));
    // A bound at or past 64 bits is the Rust type's own range (`i64`, `u64`), which says
    // nothing to a person filling in the form.
    let minimum = minimum.filter(|bound| *bound > i128::from(i64::MIN));
    let maximum = maximum.filter(|bound| *bound < i128::from(i64::MAX));
    for (keyword, bound) in [("minimum", minimum), ("maximum", maximum)] {
        if let Some(bound) = bound.and_then(|bound| i64::try_from(bound).ok()) {
            out.insert(keyword.into(), json!(bound));
        }
    }
    Ok(out)
}

fn number_property(number: &NumberType, path: &str) -> Result<Map<String, Value>, EmitError> {
    if number.exclusive_minimum.is_some() || number.exclusive_maximum.is_some() {
        return Err(invalid(
            path,
            "a form field's bounds are inclusive (`minimum`, `maximum`); an exclusive one \
             cannot be asked for",
        ));
    }
    if number.multiple_of.is_some() {
        return Err(invalid(path, "a form field cannot require a multiple"));
    }
    let mut out = json_object(json!({"type": "number"}));
    for (keyword, bound) in [("minimum", number.minimum), ("maximum", number.maximum)] {
        if let Some(bound) = bound {
            let bound = serde_json::Number::from_f64(bound)
                .ok_or_else(|| invalid(path, "a bound is not a finite number"))?;
            out.insert(keyword.into(), Value::Number(bound));
        }
    }
    Ok(out)
}

/// A choice of several: an array of a string enum.
fn multi_select(
    graph: &TypeGraph,
    array: &ArrayType,
    path: &str,
) -> Result<Map<String, Value>, EmitError> {
    let Type::Enum(choice) = resolve(graph, &array.items)? else {
        return Err(invalid(
            path,
            "a form's list is a set of choices: its items must be an enum of strings",
        ));
    };
    let (keyword, values) = choices(choice, path, "anyOf")?;
    let mut items = Map::new();
    if keyword == "enum" {
        items.insert("type".into(), json!("string"));
    }
    items.insert(keyword.into(), values);
    let mut out = json_object(json!({"type": "array"}));
    out.insert("items".into(), Value::Object(items));
    put(&mut out, "minItems", array.min_items);
    put(&mut out, "maxItems", array.max_items);
    Ok(out)
}

/// An enum's values: `enum` of its strings, or, when every value is described, `titled` (the
/// keyword a titled choice is written under: `oneOf` for one, `anyOf` for several) of
/// `{const, title}`.
fn choices(
    choice: &EnumType,
    path: &str,
    titled: &'static str,
) -> Result<(&'static str, Value), EmitError> {
    let mut values = Vec::with_capacity(choice.variants.len());
    for variant in &choice.variants {
        let EnumValue::String(value) = &variant.value else {
            return Err(invalid(path, "a form's choices are strings"));
        };
        values.push((value, variant.description.as_deref()));
    }
    if values.is_empty() {
        return Err(invalid(path, "a choice needs at least one value"));
    }
    if values.iter().all(|(_, title)| title.is_some()) {
        let options = values
            .into_iter()
            .map(|(value, title)| json!({"const": value, "title": title}))
            .collect();
        Ok((titled, Value::Array(options)))
    } else {
        Ok((
            "enum",
            values.into_iter().map(|(value, _)| json!(value)).collect(),
        ))
    }
}

fn resolve<'g>(graph: &'g TypeGraph, ty: &'g Type) -> Result<&'g Type, EmitError> {
    graph.resolve(ty).ok_or_else(|| match ty {
        Type::Ref(name) => EmitError::DanglingRef(name.clone()),
        _ => EmitError::DanglingRef(String::new()),
    })
}

/// What kind of type `ty` is, in words.
fn kind(ty: &Type) -> &'static str {
    match ty {
        Type::String(_) => "a string",
        Type::Integer(_) => "an integer",
        Type::Number(_) => "a number",
        Type::Boolean => "a boolean",
        Type::Enum(_) => "an enum",
        Type::Struct(_) => "an object",
        Type::Array(_) => "an array",
        Type::Map(_) => "a map",
        Type::Nilable(_) => "a nilable value",
        Type::Tagged(_) => "a tagged union",
        Type::Union(_) => "a union",
        Type::Ref(_) => "a reference",
        Type::Any => "any JSON value",
    }
}

fn invalid(path: &str, reason: impl Into<String>) -> EmitError {
    EmitError::InvalidType {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

fn json_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn put(out: &mut Map<String, Value>, keyword: &str, value: Option<u64>) {
    if let Some(value) = value {
        out.insert(keyword.into(), json!(value));
    }
}
