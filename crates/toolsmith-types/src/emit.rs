//! Schema emission: one walk over a [`Type`] that writes JSON Schema in a receiver's dialect.
//!
//! The walk is written once. What differs between receivers is one row of rules per
//! [`Dialect`] (in `dialect.rs`) that the walk consults where a receiver has a say, so a new
//! dialect is a new row in that table, not a copy of the walk. What each dialect does
//! (as each receiver documents its rules):
//!
//! | dialect | optional field | objects | map | `_type` | `$ref` | left out (said in the description) |
//! |---|---|---|---|---|---|---|
//! | `json-schema` | not in `required` | as declared | `additionalProperties` | `const` | `$defs` | — |
//! | `openai` | not in `required` | as declared | `additionalProperties` | `const` | `$defs`; described refs inlined | — |
//! | `openai-strict` | in `required`, nullable | `additionalProperties: false` | `[{key, value}]` | one-value `enum` | `$defs`; described refs inlined | `default`, `uniqueItems` |
//! | `anthropic` | not in `required` | as declared | `additionalProperties` | `const` | `$defs` | — |
//! | `anthropic-strict` | not in `required` | `additionalProperties: false` | `[{key, value}]` | `const` | `$defs`; recursion an error | numeric, length and item-count bounds, `uniqueItems` |
//! | `gemini` | not in `required`, `nullable: true` | no `additionalProperties` | `[{key, value}]` | one-value `enum` | inlined; recursion an error | exclusive bounds, `multipleOf`, `uniqueItems`, formats but `date-time` and `enum` |
//! | `mcp` | not in `required` | as declared | `additionalProperties` | `const` | `$defs` | — |
//!
//! More, per dialect:
//! - Every dialect but `json-schema` wants an object at the root of a whole document ([`emit`]
//!   refuses anything else with [`EmitError::RootNotObject`]) and writes no `$schema`; `mcp`
//!   writes one at the root of a tool's parameters ([`parameters_schema`]), where MCP clients
//!   read which dialect an `inputSchema` is in.
//! - `openai` (not strict) is canonical JSON Schema, except that a `$ref` never has sibling
//!   keywords: OpenAI refuses `{"$ref": .., "description": ..}`, so a described reference is
//!   written in place, one level deep (the same in `openai-strict`).
//! - `openai-strict` and `anthropic-strict` write `additionalProperties: false` on every
//!   object: a struct that accepts additional keys does not offer them there (coercion still
//!   accepts them).
//! - `gemini` spells `null` as `nullable: true` (never a type array), writes every enum value
//!   as a string (integer enums in decimal) and has no `$ref`, `const` or `additionalProperties`.
//! - A keyword a dialect leaves out is not lost: `"keyword: value"` is appended to the schema's
//!   description, in parentheses after any description it has (`"Units (default: \"metric\")"`),
//!   once: a description that states its default already (`"Sort (default false)"`) is left as
//!   it is.
//! - A dialect that refuses recursive types ([`EmitError::Recursive`]) says so at the first
//!   reference to a type that refers to itself.
//!
//! Whatever a dialect changes in the wire shape (maps as `{key, value}` entries, `null` for an
//! omitted optional field, integer enum values as strings) the coercer turns back into the
//! canonical value; give the policy the dialect ([`crate::Policy::with_dialect`]) so that these
//! spellings count as the wire shape they are, not as repairs.

use std::collections::HashSet;

use indexmap::IndexSet;
use serde_json::{Map, Number, Value};

use crate::dialect::{Dialect, NullSpelling, Objects, Optional, Rules};
use crate::pointer::encode_fragment_segment;
use crate::ty::{
    EnumType, EnumValue, Field, MapKeys, MapType, StructType, TYPE_TAG, TaggedUnion, Type,
    TypeGraph, visit_refs,
};

/// How deep a type may nest before emission stops with [`EmitError::TooDeep`].
const MAX_EMIT_DEPTH: usize = 128;

/// The root keyword holding named types; every `$ref` points into it.
const DEFS: &str = "$defs";

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
    /// The type refers to itself, and the dialect cannot say so (Gemini has no `$ref`; strict
    /// Anthropic tools refuse recursion).
    Recursive {
        /// JSON Pointer into the schema being written, where the reference closes the cycle.
        path: String,
        /// The definition that refers to itself.
        name: String,
        /// The dialect that refuses it.
        dialect: Dialect,
    },
    /// The dialect wants an object at the root of a document, and the type is written as
    /// something else.
    RootNotObject {
        /// The dialect that wants an object.
        dialect: Dialect,
        /// What the root is written as instead (`"array"`, `"anyOf"`, ...).
        found: String,
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
            EmitError::Recursive {
                path,
                name,
                dialect,
            } => write!(
                f,
                "{path}: `{name}` refers to itself, and {dialect} does not allow recursive types"
            ),
            EmitError::RootNotObject { dialect, found } => {
                write!(f, "{dialect} wants an object at the root, not {found}")
            }
        }
    }
}

impl std::error::Error for EmitError {}

/// The JSON Schema of `graph` in `dialect`: the root type's schema, with every definition it
/// reaches under `$defs` (and nothing unreachable). In every dialect but
/// [`Dialect::JsonSchema`] the root must be written as an object (a root reference is written
/// in place), and no `$schema` is written.
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
/// A dangling reference, a type nested deeper than 128 levels, a type with no faithful
/// schema ([`EmitError::InvalidType`]), a recursive type in a dialect without recursion
/// ([`EmitError::Recursive`]), or a root that is not an object where the dialect wants one
/// ([`EmitError::RootNotObject`]).
pub fn emit(graph: &TypeGraph, dialect: Dialect) -> Result<Value, EmitError> {
    let mut emitter = Emitter::new(graph, dialect);
    let rules = emitter.rules;
    let root_type = if rules.root_object {
        graph
            .resolved_root()
            .ok_or_else(|| EmitError::DanglingRef(dangling_name(&graph.root)))?
    } else {
        &graph.root
    };
    let root = emitter.schema(root_type)?;
    if rules.root_object && root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(EmitError::RootNotObject {
            dialect,
            found: written_as(&root),
        });
    }
    let mut document = Map::new();
    if let Some(uri) = rules.schema_uri {
        document.insert("$schema".to_owned(), Value::String(uri.to_owned()));
    }
    document.extend(root);
    emitter.finish(document)
}

/// The parameters object of a tool whose arguments are `graph`, in `dialect`: a struct at the
/// root (or a reference to one), in the shape
/// `{"type":"object","properties":{...},"required":[...],"additionalProperties":false}` (the
/// dialect's rules applied: see [`Dialect`]; [`Dialect::Mcp`] states its dialect in `$schema`
/// first). Tool envelopes wrap this object.
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
/// // Gemini: no type arrays, no `additionalProperties`.
/// assert_eq!(
///     parameters_schema(&graph, Dialect::Gemini)?,
///     json!({
///         "type": "object",
///         "properties": {
///             "city": {"type": "string", "description": "Parameter city"},
///             "units": {"type": "string", "nullable": true, "description": "Parameter units (optional)"}
///         },
///         "required": ["city"]
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
    let fields = emitter.struct_schema(fields, shape)?;
    let mut parameters = Map::new();
    if let Some(uri) = emitter.rules.parameters_schema_uri {
        parameters.insert("$schema".to_owned(), Value::String(uri.to_owned()));
    }
    parameters.extend(fields);
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
    dialect: Dialect,
    rules: Rules,
    /// Definitions referenced so far, in the order first met; each is written once.
    reached: IndexSet<String>,
    /// The definitions that refer to themselves, found when first asked.
    recursive: Option<HashSet<String>>,
    /// JSON Pointer of the schema being written, for errors.
    path: String,
    depth: usize,
}

type Schema = Map<String, Value>;

/// What a dialect could not say as keywords in one schema object, for its description.
type Notes = Vec<String>;

impl<'g> Emitter<'g> {
    fn new(graph: &'g TypeGraph, dialect: Dialect) -> Self {
        Emitter {
            graph,
            dialect,
            rules: dialect.rules(),
            reached: IndexSet::new(),
            recursive: None,
            path: String::new(),
            depth: 0,
        }
    }

    /// Writes every reached definition under `$defs`.
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
            let schema = self.descend(&[DEFS, &name], |e| match ty {
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
            document.insert(DEFS.to_owned(), Value::Object(defs));
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
            self.path = crate::pointer::pointer_push(&self.path, segment);
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
            crate::pointer::pointer_push(&self.path, keyword)
        };
        EmitError::InvalidType {
            path,
            reason: reason.into(),
        }
    }

    /// The complete schema of `ty`, its notes written into its description.
    fn schema(&mut self, ty: &Type) -> Result<Schema, EmitError> {
        let mut notes = Notes::new();
        let mut out = self.shape(ty, &mut notes)?;
        describe(&mut out, None, &notes);
        Ok(out)
    }

    /// The schema of `ty` with what the dialect could not write as keywords left in `notes`,
    /// for whoever completes the object to describe.
    fn shape(&mut self, ty: &Type, notes: &mut Notes) -> Result<Schema, EmitError> {
        let mut out = Schema::new();
        match ty {
            Type::String(s) => {
                put(&mut out, "type", "string");
                self.keyword(&mut out, notes, "minLength", s.min_length);
                self.keyword(&mut out, notes, "maxLength", s.max_length);
                let pattern = s.pattern.as_ref().map(|p| p.as_str());
                self.keyword(&mut out, notes, "pattern", pattern);
                if let Some(format) = &s.format {
                    let known = self
                        .rules
                        .formats
                        .is_none_or(|formats| formats.contains(&format.as_str()));
                    if known {
                        put(&mut out, "format", format.as_str());
                    } else {
                        notes.push(note("format", &Value::String(format.clone())));
                    }
                }
            }
            Type::Integer(i) => {
                put(&mut out, "type", "integer");
                if i.multiple_of == Some(0) {
                    return Err(self.invalid("multipleOf", "`multipleOf` must be positive"));
                }
                let bounds = [
                    ("minimum", i.minimum),
                    ("maximum", i.maximum),
                    ("exclusiveMinimum", i.exclusive_minimum),
                    ("exclusiveMaximum", i.exclusive_maximum),
                    ("multipleOf", i.multiple_of.map(i128::from)),
                ];
                for (keyword, bound) in bounds {
                    self.keyword(&mut out, notes, keyword, bound.map(integer_json));
                }
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
                        self.keyword(&mut out, notes, keyword, Some(Value::Number(number)));
                    }
                }
            }
            Type::Boolean => put(&mut out, "type", "boolean"),
            Type::Enum(e) => self.enum_schema(e, &mut out),
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
                self.keyword(&mut out, notes, "minItems", a.min_items);
                self.keyword(&mut out, notes, "maxItems", a.max_items);
                self.keyword(
                    &mut out,
                    notes,
                    "uniqueItems",
                    a.unique_items.then_some(true),
                );
            }
            Type::Map(m) if self.rules.maps_as_entries => return self.map_entries(m),
            Type::Map(m) => {
                put(&mut out, "type", "object");
                let values = self.descend(&["additionalProperties"], |e| e.subschema(&m.values))?;
                out.insert("additionalProperties".to_owned(), values);
                if let MapKeys::Enum(keys) = &m.keys {
                    let mut key_schema = Schema::new();
                    key_schema.insert("enum".to_owned(), key_names(keys));
                    out.insert("propertyNames".to_owned(), Value::Object(key_schema));
                }
            }
            Type::Nilable(inner) => return self.nilable(inner, notes),
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
            Type::Ref(name) => return self.reference(name, notes),
            Type::Any => {}
        }
        Ok(out)
    }

    /// Writes `keyword` when the dialect supports it, else notes it for the description.
    fn keyword(
        &self,
        out: &mut Schema,
        notes: &mut Notes,
        keyword: &str,
        value: Option<impl Into<Value>>,
    ) {
        let Some(value) = value else { return };
        let value = value.into();
        if self.rules.supports(keyword) {
            out.insert(keyword.to_owned(), value);
        } else {
            notes.push(note(keyword, &value));
        }
    }

    /// A schema in a position that also takes a boolean: `true` for [`Type::Any`].
    fn subschema(&mut self, ty: &Type) -> Result<Value, EmitError> {
        match ty {
            Type::Any => Ok(Value::Bool(true)),
            other => self.schema(other).map(Value::Object),
        }
    }

    /// A reference: `$ref` into `$defs`, or the definition written in place where the dialect
    /// inlines it.
    fn reference(&mut self, name: &str, notes: &mut Notes) -> Result<Schema, EmitError> {
        let target = self.definition(name)?;
        if self.rules.inline_refs && !self.is_recursive(name) {
            // No path segment: the definition is written where the reference stood.
            return self.descend(&[], |e| e.shape(target, notes));
        }
        self.reached.insert(name.to_owned());
        let mut out = Schema::new();
        let target = format!("#/{DEFS}/{}", encode_fragment_segment(name));
        out.insert("$ref".to_owned(), Value::String(target));
        Ok(out)
    }

    /// The type the definition `name` stands for, references followed, once the dialect's
    /// rules allow referring to it.
    fn definition(&mut self, name: &str) -> Result<&'g Type, EmitError> {
        let graph = self.graph;
        let target = graph
            .defs
            .get(name)
            .and_then(|ty| graph.resolve(ty))
            .ok_or_else(|| EmitError::DanglingRef(name.to_owned()))?;
        if !self.rules.recursion && self.is_recursive(name) {
            return Err(EmitError::Recursive {
                path: self.path.clone(),
                name: name.to_owned(),
                dialect: self.dialect,
            });
        }
        Ok(target)
    }

    /// Whether the definition `name` refers to itself, directly or through others.
    fn is_recursive(&mut self, name: &str) -> bool {
        let graph = self.graph;
        self.recursive
            .get_or_insert_with(|| recursive_definitions(graph))
            .contains(name)
    }

    fn nilable(&mut self, inner: &Type, notes: &mut Notes) -> Result<Schema, EmitError> {
        let mut schema = self.shape(inner, notes)?;
        if self.rules.null == NullSpelling::NullableKeyword {
            schema.insert("nullable".to_owned(), Value::Bool(true));
            return Ok(schema);
        }
        if schema.is_empty() {
            // The true schema already allows null.
            return Ok(schema);
        }
        let null = Value::String("null".to_owned());
        if let Some(ty) = schema.get_mut("type") {
            add_null(ty, null);
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
        // The inner object becomes a member: it is complete, so it takes its own notes.
        describe(&mut schema, None, &std::mem::take(notes));
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
            if field.required || self.rules.optional == Optional::RequiredNullable {
                required.push(Value::String(field.name.clone()));
            }
        }
        out.insert("properties".to_owned(), Value::Object(properties));
        out.insert("required".to_owned(), Value::Array(required));
        self.close(&mut out, s.additional.as_deref())?;
        Ok(out)
    }

    /// Writes what an object says about keys beyond its properties, as the dialect has it;
    /// `additional` is the type of the values a struct accepts there, if any.
    fn close(&mut self, out: &mut Schema, additional: Option<&Type>) -> Result<(), EmitError> {
        let value = match (self.rules.objects, additional) {
            (Objects::Unstated, _) => return Ok(()),
            (Objects::Closed, _) | (Objects::AsDeclared, None) => Value::Bool(false),
            (Objects::AsDeclared, Some(extra)) => {
                self.descend(&["additionalProperties"], |e| e.subschema(extra))?
            }
        };
        out.insert("additionalProperties".to_owned(), value);
        Ok(())
    }

    /// A field's schema: its type's (nullable where the dialect makes optional fields so), then
    /// its description (the field's own wins over the type's, which wins over `fallback`) with
    /// the notes of what the dialect left out, then its default.
    fn field_schema(
        &mut self,
        field: &Field,
        fallback: Option<String>,
    ) -> Result<Schema, EmitError> {
        let nullable = !field.required && self.rules.optional != Optional::Omitted;
        let described =
            field.description.is_some() || fallback.is_some() || field.default.is_some();
        let mut notes = Notes::new();
        let mut schema = match &field.ty {
            // A `$ref` that would get siblings is written in place, one level deep.
            Type::Ref(name) if described && !nullable && !self.rules.ref_siblings => {
                let target = self.definition(name)?;
                self.descend(&[], |e| e.shape(target, &mut notes))?
            }
            ty if nullable => self.nilable(ty, &mut notes)?,
            ty => self.shape(ty, &mut notes)?,
        };
        let head = field
            .description
            .clone()
            .or_else(|| fallback.filter(|_| !schema.contains_key("description")));
        // Written after the description, which must first hear whether the default was left out
        // (and says it once: not again where the description states it already).
        let text = head
            .as_deref()
            .or_else(|| schema.get("description").and_then(Value::as_str));
        let default = field
            .default
            .clone()
            .filter(|d| self.rules.supports("default") || !text.is_some_and(|t| states(t, d)));
        let mut written = Schema::new();
        self.keyword(&mut written, &mut notes, "default", default);
        describe(&mut schema, head, &notes);
        schema.extend(written);
        Ok(schema)
    }

    /// A map as an array of `{"key": .., "value": ..}` objects, for dialects without maps.
    fn map_entries(&mut self, m: &MapType) -> Result<Schema, EmitError> {
        let entry = self.descend(&["items"], |e| {
            let mut key = Schema::new();
            put(&mut key, "type", "string");
            if let MapKeys::Enum(keys) = &m.keys {
                key.insert("enum".to_owned(), key_names(keys));
            }
            let value = e.descend(&["properties", "value"], |e| e.schema(&m.values))?;
            let mut entry = Schema::new();
            put(&mut entry, "type", "object");
            let properties = Map::from_iter([
                ("key".to_owned(), Value::Object(key)),
                ("value".to_owned(), Value::Object(value)),
            ]);
            entry.insert("properties".to_owned(), Value::Object(properties));
            let required = vec![Value::from("key"), Value::from("value")];
            entry.insert("required".to_owned(), Value::Array(required));
            e.close(&mut entry, None)?;
            Ok(entry)
        })?;
        let mut out = Schema::new();
        put(&mut out, "type", "array");
        out.insert("items".to_owned(), Value::Object(entry));
        Ok(out)
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

    fn enum_schema(&self, e: &EnumType, out: &mut Schema) {
        let (values, ty) = if self.rules.enums_as_strings {
            let values = e
                .variants
                .iter()
                .map(|v| Value::String(v.value.to_string()))
                .collect();
            (values, Value::from("string"))
        } else {
            let values = e.variants.iter().map(|v| v.value.to_json()).collect();
            (values, enum_json_type(e))
        };
        out.insert("type".to_owned(), ty);
        out.insert("enum".to_owned(), Value::Array(values));
        put_opt(out, "description", e.description.as_deref());
    }
}

/// The JSON `type` of an enum's values: one name, or the names of every kind they take.
fn enum_json_type(e: &EnumType) -> Value {
    let mut kinds: Vec<&'static str> = Vec::new();
    for variant in &e.variants {
        let kind = match &variant.value {
            EnumValue::String(_) => "string",
            EnumValue::Integer(_) => "integer",
            EnumValue::Json(Value::Bool(_)) => "boolean",
            EnumValue::Json(Value::Number(n)) if n.is_u64() => "integer",
            EnumValue::Json(Value::Number(_)) => "number",
            EnumValue::Json(Value::Array(_)) => "array",
            EnumValue::Json(Value::Object(_)) => "object",
            EnumValue::Json(Value::String(_)) => "string",
            EnumValue::Json(Value::Null) => "null",
        };
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    // `integer` inside `number` says nothing more.
    if kinds.contains(&"number") {
        kinds.retain(|k| *k != "integer");
    }
    match kinds.as_slice() {
        [] => Value::from("string"),
        [one] => Value::from(*one),
        many => Value::Array(many.iter().map(|k| Value::from(*k)).collect()),
    }
}

/// The keys a map with enum keys allows, as the strings they are in JSON.
fn key_names(keys: &EnumType) -> Value {
    keys.variants
        .iter()
        .map(|v| Value::String(v.value.to_string()))
        .collect()
}

/// Completes an object's description: `head` (else the description it has), then the `notes`
/// of what the dialect left out, in parentheses.
fn describe(out: &mut Schema, head: Option<String>, notes: &[String]) {
    let head = head.or_else(|| {
        out.get("description")
            .filter(|_| !notes.is_empty())
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    let text = match (head, notes.is_empty()) {
        (None, true) => return,
        (Some(head), true) => head,
        (Some(head), false) => format!("{head} ({})", notes.join(", ")),
        (None, false) => notes.join(", "),
    };
    out.insert("description".to_owned(), Value::String(text));
}

/// Whether `description` already says that the default is `value`: `default` (or `defaults`)
/// followed, after `:`, `=`, `is`, `to` or spaces, by the value as JSON (`false`, `20`,
/// `"open"`) or, for a string, by its text bare or in backticks; in any case, ending there.
///
/// So `"Match letters in either case (default true)"` states `true`, and the dialects that
/// leave `default` out do not append `(default: true)` to it.
fn states(description: &str, value: &Value) -> bool {
    let lower = description.to_lowercase();
    let json = value.to_string().to_lowercase();
    let mut spellings = vec![json];
    if let Value::String(text) = value {
        let text = text.to_lowercase();
        spellings.push(format!("`{text}`"));
        spellings.push(text);
    }
    lower.match_indices("default").any(|(at, word)| {
        let rest = &lower[at + word.len()..];
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        let rest = rest.trim_start_matches([' ', ':', '=']);
        let rest = ["is ", "to "]
            .iter()
            .find_map(|w| rest.strip_prefix(w))
            .map_or(rest, str::trim_start);
        spellings.iter().any(|spelled| {
            !spelled.is_empty()
                && rest.strip_prefix(spelled.as_str()).is_some_and(|after| {
                    !after.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
        })
    })
}

/// A keyword left out, as its description says it: `minimum: 1`, `default: "metric"`.
fn note(keyword: &str, value: &Value) -> String {
    format!("{keyword}: {value}")
}

/// What a root schema that is not an object is written as, for [`EmitError::RootNotObject`].
fn written_as(root: &Schema) -> String {
    match root.get("type") {
        Some(Value::String(ty)) => ty.clone(),
        Some(types) => types.to_string(),
        None if root.contains_key("anyOf") => "anyOf".to_owned(),
        None if root.contains_key("$ref") => "a reference".to_owned(),
        None => "an untyped schema".to_owned(),
    }
}

/// The definitions of `graph` that refer to themselves, directly or through other definitions.
fn recursive_definitions(graph: &TypeGraph) -> HashSet<String> {
    let mut recursive = HashSet::new();
    for (name, ty) in &graph.defs {
        // Every definition reachable from `name`'s own type, each visited once.
        let mut seen: HashSet<String> = HashSet::new();
        let mut pending = vec![ty];
        while let Some(ty) = pending.pop() {
            let mut targets = Vec::new();
            visit_refs(ty, &mut |target| targets.push(target.to_owned()));
            for target in targets {
                if target == *name {
                    recursive.insert(name.clone());
                    pending.clear();
                    break;
                }
                if let Some(next) = graph.defs.get(&target)
                    && seen.insert(target)
                {
                    pending.push(next);
                }
            }
        }
    }
    recursive
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

fn put_opt(out: &mut Schema, keyword: &str, value: Option<impl Into<Value>>) {
    if let Some(value) = value {
        put(out, keyword, value);
    }
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
