//! Schema emission: one walk over a [`Type`] that writes JSON Schema in a receiver's dialect.
//!
//! The walk is written once. What differs between receivers is a small table of [`Rules`] that the
//! walk consults where a receiver has a say (how a `_type` tag is spelled, how `null` is allowed,
//! where named types live), so a new dialect is a new row in that table, not a copy of the walk.

use indexmap::IndexSet;
use serde_json::{Map, Number, Value};

use crate::ty::{
    EnumType, EnumValue, Field, MapKeys, StructType, TYPE_TAG, TaggedUnion, Type, TypeGraph,
};

/// How deep a type may nest before emission stops with [`EmitError::TooDeep`].
const MAX_EMIT_DEPTH: usize = 128;

/// Which receiver a schema is written for. A value, not a fork of the emitter: the emitter
/// consults it as it walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Dialect {
    /// Canonical JSON Schema 2020-12: named types as `$defs` + `$ref`.
    #[default]
    JsonSchema,
}

impl Dialect {
    /// The rules the walk applies for this dialect: the one table a new dialect is added to.
    fn rules(self) -> Rules {
        match self {
            Dialect::JsonSchema => Rules {
                schema_uri: Some("https://json-schema.org/draft/2020-12/schema"),
                defs_keyword: "$defs",
                tag_as_const: true,
                null_in_type_array: true,
            },
        }
    }
}

/// What a dialect decides during the walk.
#[derive(Debug, Clone, Copy)]
struct Rules {
    /// Written as `$schema` at the root of a whole document ([`emit`], not [`parameters_schema`]).
    schema_uri: Option<&'static str>,
    /// The root keyword holding named types; every `$ref` points into it.
    defs_keyword: &'static str,
    /// The `_type` tag of a tagged-union variant as `const` (otherwise a one-value `enum`).
    tag_as_const: bool,
    /// A nilable type with a `type` keyword adds `"null"` to it (otherwise `anyOf` with null).
    null_in_type_array: bool,
}

/// Why a type could not be written in a dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmitError {
    /// A reference to a definition the graph does not have (or a cycle of bare references).
    DanglingRef(String),
    /// Tool parameters must be an object (a struct); this root is another kind.
    ParametersNotObject(&'static str),
    /// The type nests deeper than 128 levels; `path` is where, in the emitted schema.
    TooDeep {
        /// JSON Pointer into the schema being written.
        path: String,
    },
    /// The type has no faithful schema: a union without members, a bound that is not a finite
    /// number, a non-positive `multipleOf`, two fields with one name, a tagged-union variant that
    /// is not a struct or that declares `_type` itself.
    InvalidType {
        /// JSON Pointer into the schema being written.
        path: String,
        /// What is wrong, in words.
        reason: String,
    },
}

impl std::fmt::Display for EmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmitError::DanglingRef(name) => write!(f, "reference to undefined type `{name}`"),
            EmitError::ParametersNotObject(kind) => {
                write!(f, "tool parameters must be an object, not {kind}")
            }
            EmitError::TooDeep { path } => {
                write!(f, "{path}: type nests deeper than {MAX_EMIT_DEPTH} levels")
            }
            EmitError::InvalidType { path, reason } => write!(f, "{path}: {reason}"),
        }
    }
}

impl std::error::Error for EmitError {}

/// The JSON Schema of `graph` in `dialect`: the root type's schema, with every definition it
/// reaches under `$defs` (and nothing unreachable).
///
/// ```
/// use serde_json::json;
/// use toolsmith_types::{emit, Dialect, Type, TypeGraph};
///
/// let schema = emit(&TypeGraph::new(Type::array(Type::string())), Dialect::JsonSchema)?;
/// assert_eq!(
///     schema,
///     json!({
///         "$schema": "https://json-schema.org/draft/2020-12/schema",
///         "type": "array",
///         "items": {"type": "string"}
///     })
/// );
/// # Ok::<(), toolsmith_types::EmitError>(())
/// ```
///
/// # Errors
/// A dangling reference, a type nested deeper than 128 levels, or a type with no faithful
/// schema ([`EmitError::InvalidType`]).
pub fn emit(graph: &TypeGraph, dialect: Dialect) -> Result<Value, EmitError> {
    let mut emitter = Emitter::new(graph, dialect);
    let root = emitter.schema(&graph.root)?;
    let mut document = Map::new();
    if let Some(uri) = emitter.rules.schema_uri {
        document.insert("$schema".to_owned(), Value::String(uri.to_owned()));
    }
    document.extend(root);
    emitter.finish(document)
}

/// The parameters object of a tool whose arguments are `graph`: a struct at the root (or a
/// reference to one), in the shape
/// `{"type":"object","properties":{...},"required":[...],"additionalProperties":false}`.
///
/// A top-level property with no description of its own (nor one from its type) is described as
/// `"Parameter <name>"`, or `"Parameter <name> (optional)"` when it is not required. A real
/// description always wins, and nested descriptions are written as they are. An optional field
/// is written with its own type: an `Option<T>` field is nilable, so it allows `null` too.
///
/// ```
/// use serde_json::json;
/// use toolsmith_types::{parameters_schema, Dialect, Field, StructType, Type, TypeGraph};
///
/// let graph = TypeGraph::new(Type::Struct(
///     StructType::new("WeatherLookup")
///         .field(Field::new("city", Type::string()))
///         .field(Field::new("units", Type::nilable(Type::string())).optional()),
/// ));
/// assert_eq!(
///     parameters_schema(&graph, Dialect::JsonSchema)?,
///     json!({
///         "type": "object",
///         "properties": {
///             "city": {"type": "string", "description": "Parameter city"},
///             "units": {"type": ["string", "null"], "description": "Parameter units (optional)"}
///         },
///         "required": ["city"],
///         "additionalProperties": false
///     })
/// );
/// # Ok::<(), toolsmith_types::EmitError>(())
/// ```
///
/// # Errors
/// When the root is not a struct ([`EmitError::ParametersNotObject`]), or for the reasons
/// [`emit`] fails.
pub fn parameters_schema(graph: &TypeGraph, dialect: Dialect) -> Result<Value, EmitError> {
    let root = graph.resolved_root().ok_or_else(|| match &graph.root {
        Type::Ref(name) => EmitError::DanglingRef(name.clone()),
        other => EmitError::ParametersNotObject(other.kind()),
    })?;
    let Type::Struct(fields) = root else {
        return Err(EmitError::ParametersNotObject(root.kind()));
    };
    let mut emitter = Emitter::new(graph, dialect);
    let shape = StructShape {
        title: false,
        tag: None,
        fallback_descriptions: true,
    };
    let parameters = emitter.struct_schema(fields, shape)?;
    emitter.finish(parameters)
}

/// How one struct is written, beyond its own fields.
#[derive(Debug, Clone, Copy)]
struct StructShape<'a> {
    /// Write the struct's name as `title` (left out where a `$defs` key or tag already says it).
    title: bool,
    /// The `_type` tag of a tagged-union variant, written as the first, required property.
    tag: Option<&'a str>,
    /// Describe undescribed properties as `"Parameter <name>"` (tool parameters only).
    fallback_descriptions: bool,
}

/// The walk: one pass over a type, writing the schema as it goes.
struct Emitter<'g> {
    graph: &'g TypeGraph,
    rules: Rules,
    /// Definitions referenced so far, in the order first met; each is written once.
    reached: IndexSet<String>,
    /// JSON Pointer of the schema being written, for errors.
    path: String,
    depth: usize,
}

type Schema = Map<String, Value>;

impl<'g> Emitter<'g> {
    fn new(graph: &'g TypeGraph, dialect: Dialect) -> Self {
        Emitter {
            graph,
            rules: dialect.rules(),
            reached: IndexSet::new(),
            path: String::new(),
            depth: 0,
        }
    }

    /// Writes every reached definition under the dialect's definitions keyword.
    fn finish(mut self, mut document: Schema) -> Result<Value, EmitError> {
        let mut defs = Map::new();
        let mut next = 0;
        // Writing a definition can reach more definitions; the set only grows.
        while let Some(name) = self.reached.get_index(next).cloned() {
            next += 1;
            let Some(ty) = self.graph.defs.get(&name) else {
                return Err(EmitError::DanglingRef(name));
            };
            self.path.clear();
            self.depth = 0;
            let schema = self.descend(&[self.rules.defs_keyword, &name], |e| match ty {
                // The `$defs` key already names the struct.
                Type::Struct(s) => e.struct_schema(
                    s,
                    StructShape {
                        title: s.name.as_deref() != Some(name.as_str()),
                        tag: None,
                        fallback_descriptions: false,
                    },
                ),
                other => e.schema(other),
            })?;
            defs.insert(name, Value::Object(schema));
        }
        if !defs.is_empty() {
            document.insert(self.rules.defs_keyword.to_owned(), Value::Object(defs));
        }
        Ok(Value::Object(document))
    }

    /// Runs `write` one level deeper, at `segments` below the current path.
    fn descend<T>(
        &mut self,
        segments: &[&str],
        write: impl FnOnce(&mut Self) -> Result<T, EmitError>,
    ) -> Result<T, EmitError> {
        let saved = self.path.len();
        for segment in segments {
            self.path = crate::diagnostics::pointer_push(&self.path, segment);
        }
        if self.depth >= MAX_EMIT_DEPTH {
            return Err(EmitError::TooDeep {
                path: std::mem::take(&mut self.path),
            });
        }
        self.depth += 1;
        let out = write(self);
        self.depth -= 1;
        self.path.truncate(saved);
        out
    }

    fn invalid(&self, keyword: &str, reason: impl Into<String>) -> EmitError {
        let path = if keyword.is_empty() {
            self.path.clone()
        } else {
            crate::diagnostics::pointer_push(&self.path, keyword)
        };
        EmitError::InvalidType {
            path,
            reason: reason.into(),
        }
    }

    fn schema(&mut self, ty: &Type) -> Result<Schema, EmitError> {
        let mut out = Schema::new();
        match ty {
            Type::String(s) => {
                put(&mut out, "type", "string");
                put_opt(&mut out, "minLength", s.min_length);
                put_opt(&mut out, "maxLength", s.max_length);
                put_opt(&mut out, "pattern", s.pattern.as_ref().map(|p| p.as_str()));
                put_opt(&mut out, "format", s.format.as_deref());
            }
            Type::Integer(i) => {
                put(&mut out, "type", "integer");
                put_opt(&mut out, "minimum", i.minimum.map(integer_json));
                put_opt(&mut out, "maximum", i.maximum.map(integer_json));
                put_opt(
                    &mut out,
                    "exclusiveMinimum",
                    i.exclusive_minimum.map(integer_json),
                );
                put_opt(
                    &mut out,
                    "exclusiveMaximum",
                    i.exclusive_maximum.map(integer_json),
                );
                if i.multiple_of == Some(0) {
                    return Err(self.invalid("multipleOf", "`multipleOf` must be positive"));
                }
                put_opt(&mut out, "multipleOf", i.multiple_of);
            }
            Type::Number(n) => {
                put(&mut out, "type", "number");
                let bounds = [
                    ("minimum", n.minimum),
                    ("maximum", n.maximum),
                    ("exclusiveMinimum", n.exclusive_minimum),
                    ("exclusiveMaximum", n.exclusive_maximum),
                    ("multipleOf", n.multiple_of),
                ];
                for (keyword, bound) in bounds {
                    if let Some(bound) = bound {
                        let number = Number::from_f64(bound).ok_or_else(|| {
                            self.invalid(keyword, format!("`{keyword}` is not a finite number"))
                        })?;
                        if keyword == "multipleOf" && bound <= 0.0 {
                            return Err(self.invalid(keyword, "`multipleOf` must be positive"));
                        }
                        out.insert(keyword.to_owned(), Value::Number(number));
                    }
                }
            }
            Type::Boolean => put(&mut out, "type", "boolean"),
            Type::Enum(e) => enum_schema(e, &mut out),
            Type::Struct(s) => {
                let shape = StructShape {
                    title: true,
                    tag: None,
                    fallback_descriptions: false,
                };
                return self.struct_schema(s, shape);
            }
            Type::Array(a) => {
                put(&mut out, "type", "array");
                let items = self.descend(&["items"], |e| e.schema(&a.items))?;
                out.insert("items".to_owned(), Value::Object(items));
                put_opt(&mut out, "minItems", a.min_items);
                put_opt(&mut out, "maxItems", a.max_items);
            }
            Type::Map(m) => {
                put(&mut out, "type", "object");
                let values = self.descend(&["additionalProperties"], |e| e.subschema(&m.values))?;
                out.insert("additionalProperties".to_owned(), values);
                if let MapKeys::Enum(keys) = &m.keys {
                    let names = keys
                        .variants
                        .iter()
                        .map(|v| Value::String(v.value.to_string()))
                        .collect();
                    let mut key_schema = Schema::new();
                    key_schema.insert("enum".to_owned(), Value::Array(names));
                    out.insert("propertyNames".to_owned(), Value::Object(key_schema));
                }
            }
            Type::Nilable(inner) => return self.nilable(inner),
            Type::Tagged(u) => return self.tagged(u),
            Type::Union(members) => {
                if members.is_empty() {
                    return Err(self.invalid("", "a union with no members accepts nothing"));
                }
                let mut any_of = Vec::with_capacity(members.len());
                for (i, member) in members.iter().enumerate() {
                    let schema = self.descend(&["anyOf", &i.to_string()], |e| e.schema(member))?;
                    any_of.push(Value::Object(schema));
                }
                out.insert("anyOf".to_owned(), Value::Array(any_of));
            }
            Type::Ref(name) => return self.reference(name),
            Type::Any => {}
        }
        Ok(out)
    }

    /// A schema in a position that also takes a boolean: `true` for [`Type::Any`].
    fn subschema(&mut self, ty: &Type) -> Result<Value, EmitError> {
        match ty {
            Type::Any => Ok(Value::Bool(true)),
            other => self.schema(other).map(Value::Object),
        }
    }

    fn reference(&mut self, name: &str) -> Result<Schema, EmitError> {
        let resolves = self
            .graph
            .defs
            .get(name)
            .is_some_and(|ty| self.graph.resolve(ty).is_some());
        if !resolves {
            return Err(EmitError::DanglingRef(name.to_owned()));
        }
        self.reached.insert(name.to_owned());
        let mut out = Schema::new();
        let target = format!(
            "#/{}/{}",
            self.rules.defs_keyword,
            encode_fragment_segment(name)
        );
        out.insert("$ref".to_owned(), Value::String(target));
        Ok(out)
    }

    fn nilable(&mut self, inner: &Type) -> Result<Schema, EmitError> {
        let mut schema = self.schema(inner)?;
        let null = Value::String("null".to_owned());
        if schema.is_empty() {
            // The true schema already allows null.
            return Ok(schema);
        }
        if self.rules.null_in_type_array && schema.contains_key("type") {
            if let Some(ty) = schema.get_mut("type") {
                add_null(ty, null.clone());
            }
            if let Some(Value::Array(values)) = schema.get_mut("enum")
                && !values.contains(&Value::Null)
            {
                values.push(Value::Null);
            }
            return Ok(schema);
        }
        let null_schema = Value::Object(Schema::from_iter([("type".to_owned(), null)]));
        if let Some(Value::Array(members)) = schema.get_mut("anyOf") {
            // A union (or tagged union) takes null as one more member.
            if !members.contains(&null_schema) {
                members.push(null_schema);
            }
            return Ok(schema);
        }
        let mut out = Schema::new();
        out.insert(
            "anyOf".to_owned(),
            Value::Array(vec![Value::Object(schema), null_schema]),
        );
        Ok(out)
    }

    fn tagged(&mut self, union: &TaggedUnion) -> Result<Schema, EmitError> {
        if union.variants.is_empty() {
            return Err(self.invalid("", "a tagged union with no variants accepts nothing"));
        }
        let mut any_of = Vec::with_capacity(union.variants.len());
        for (i, variant) in union.variants.iter().enumerate() {
            let schema = self.descend(&["anyOf", &i.to_string()], |e| {
                let fields = match e.graph.resolve(&variant.ty) {
                    Some(Type::Struct(s)) => s,
                    Some(other) => {
                        return Err(e.invalid(
                            "",
                            format!(
                                "variant `{}` of a tagged union is {}, not a struct",
                                variant.tag,
                                other.kind()
                            ),
                        ));
                    }
                    None => return Err(EmitError::DanglingRef(dangling_name(&variant.ty))),
                };
                // Variants are written in place: the tag is a property the definition lacks.
                let shape = StructShape {
                    title: fields.name.as_deref() != Some(variant.tag.as_str()),
                    tag: Some(&variant.tag),
                    fallback_descriptions: false,
                };
                e.struct_schema(fields, shape)
            })?;
            any_of.push(Value::Object(schema));
        }
        let mut out = Schema::new();
        out.insert("anyOf".to_owned(), Value::Array(any_of));
        put_opt(&mut out, "description", union.description.as_deref());
        Ok(out)
    }

    fn struct_schema(
        &mut self,
        s: &StructType,
        shape: StructShape<'_>,
    ) -> Result<Schema, EmitError> {
        let mut out = Schema::new();
        put(&mut out, "type", "object");
        if shape.title {
            put_opt(&mut out, "title", s.name.as_deref());
        }
        put_opt(&mut out, "description", s.description.as_deref());
        let mut properties = Map::new();
        let mut required = Vec::new();
        if let Some(tag) = shape.tag {
            properties.insert(TYPE_TAG.to_owned(), Value::Object(self.tag_schema(tag)));
            required.push(Value::String(TYPE_TAG.to_owned()));
        }
        for field in &s.fields {
            if properties.contains_key(&field.name) {
                let reason = if shape.tag.is_some() && field.name == TYPE_TAG {
                    "a tagged-union variant declares the `_type` tag as a field".to_owned()
                } else {
                    format!("two fields are named `{}`", field.name)
                };
                return Err(self.invalid("properties", reason));
            }
            let fallback = shape.fallback_descriptions.then(|| {
                if field.required {
                    format!("Parameter {}", field.name)
                } else {
                    format!("Parameter {} (optional)", field.name)
                }
            });
            let schema = self.descend(&["properties", &field.name], |e| {
                e.field_schema(field, fallback)
            })?;
            properties.insert(field.name.clone(), Value::Object(schema));
            if field.required {
                required.push(Value::String(field.name.clone()));
            }
        }
        out.insert("properties".to_owned(), Value::Object(properties));
        out.insert("required".to_owned(), Value::Array(required));
        let additional = match &s.additional {
            None => Value::Bool(false),
            Some(extra) => self.descend(&["additionalProperties"], |e| e.subschema(extra))?,
        };
        out.insert("additionalProperties".to_owned(), additional);
        Ok(out)
    }

    /// A field's schema: its type's, then its description (the field's own wins over the type's,
    /// which wins over `fallback`), then its default.
    fn field_schema(
        &mut self,
        field: &Field,
        fallback: Option<String>,
    ) -> Result<Schema, EmitError> {
        let mut schema = self.schema(&field.ty)?;
        match (&field.description, fallback) {
            (Some(description), _) => put(&mut schema, "description", description.as_str()),
            (None, Some(fallback)) if !schema.contains_key("description") => {
                schema.insert("description".to_owned(), Value::String(fallback));
            }
            _ => {}
        }
        if let Some(default) = &field.default {
            schema.insert("default".to_owned(), default.clone());
        }
        Ok(schema)
    }

    fn tag_schema(&self, tag: &str) -> Schema {
        let mut out = Schema::new();
        put(&mut out, "type", "string");
        if self.rules.tag_as_const {
            put(&mut out, "const", tag);
        } else {
            out.insert(
                "enum".to_owned(),
                Value::Array(vec![Value::String(tag.to_owned())]),
            );
        }
        out
    }
}

fn enum_schema(e: &EnumType, out: &mut Schema) {
    let strings = e
        .variants
        .iter()
        .any(|v| matches!(v.value, EnumValue::String(_)));
    let integers = e
        .variants
        .iter()
        .any(|v| matches!(v.value, EnumValue::Integer(_)));
    let ty = match (strings, integers) {
        (true, true) => Value::Array(vec![
            Value::String("string".to_owned()),
            Value::String("integer".to_owned()),
        ]),
        (false, true) => Value::String("integer".to_owned()),
        _ => Value::String("string".to_owned()),
    };
    out.insert("type".to_owned(), ty);
    let values = e.variants.iter().map(|v| v.value.to_json()).collect();
    out.insert("enum".to_owned(), Value::Array(values));
    put_opt(out, "description", e.description.as_deref());
}

/// Adds `"null"` to a `type` keyword's value, once.
fn add_null(ty: &mut Value, null: Value) {
    match ty {
        Value::Array(types) => {
            if !types.contains(&null) {
                types.push(null);
            }
        }
        single => {
            if *single != null {
                let first = std::mem::take(single);
                *single = Value::Array(vec![first, null]);
            }
        }
    }
}

/// The name a type that does not resolve refers to, for [`EmitError::DanglingRef`].
fn dangling_name(ty: &Type) -> String {
    match ty {
        Type::Ref(name) => name.clone(),
        other => other.kind().to_owned(),
    }
}

fn put(out: &mut Schema, keyword: &str, value: impl Into<Value>) {
    out.insert(keyword.to_owned(), value.into());
}

/// An integer bound as JSON: exact within the 64-bit range (signed or unsigned), the nearest
/// number beyond it.
fn integer_json(bound: i128) -> Value {
    if let Ok(i) = i64::try_from(bound) {
        Value::from(i)
    } else if let Ok(u) = u64::try_from(bound) {
        Value::from(u)
    } else {
        Value::from(bound as f64)
    }
}

fn put_opt(out: &mut Schema, keyword: &str, value: Option<impl Into<Value>>) {
    if let Some(value) = value {
        put(out, keyword, value);
    }
}

/// A definition name as one segment of a `$ref` fragment: JSON Pointer escaping, then
/// percent-encoding of every byte a URI fragment may not hold.
pub(crate) fn encode_fragment_segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c if c.is_ascii_alphanumeric() || "-._!$&'()*+,;=:@".contains(c) => out.push(c),
            c => {
                let mut buf = [0u8; 4];
                for byte in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{byte:02X}"));
                }
            }
        }
    }
    out
}
