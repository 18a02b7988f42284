//! JSON Schema import: building a [`TypeGraph`] from the schema subset tool definitions use.
//!
//! Import reads what it understands and reports everything else: a keyword that would change
//! which values are valid but that the type model cannot hold (`allOf`, `not`, `if`,
//! `patternProperties`, ...) is an error at its JSON Pointer, never silently dropped. Keywords
//! that only annotate (`$comment`, `examples`, `deprecated`, ...) are accepted and ignored.
//!
//! Choices where JSON Schema is looser than a tool definition means:
//! - an object schema with `properties` is closed unless `additionalProperties` is `true` or a
//!   schema; an object schema without `properties` is a map (of `additionalProperties`, or of
//!   anything);
//! - `properties` or `required` without `type` mean an object;
//! - `oneOf` is read as `anyOf` (tool unions are disjoint in practice);
//! - a property's `description` describes the field; elsewhere it describes the type, and is
//!   kept where the type model has room for one (structs, enums, tagged unions) and dropped
//!   elsewhere (the `items` of an array, a map's values, a member of an untagged union): a
//!   description never changes which values are valid.

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value};

use crate::ty::{
    ArrayType, Definitions, EnumType, EnumValue, EnumVariant, Field, IntegerType, MapKeys, MapType,
    NumberType, Pattern, StringType, StructType, TYPE_TAG, TaggedUnion, TaggedVariant, Type,
    TypeGraph,
};

/// How deeply subschemas may nest before import stops with an error.
const MAX_IMPORT_DEPTH: usize = 128;

/// Keywords that only annotate: accepted anywhere and ignored.
const ANNOTATIONS: &[&str] = &[
    "$comment",
    "examples",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Keywords accepted only at the root of the document.
const ROOT_ONLY: &[&str] = &["$schema", "$id", "$defs", "definitions"];

/// Keywords beside which a schema keeps its meaning, whatever its form.
const COMMON: &[&str] = &["description", "title", "default", "nullable"];

const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern", "format"];
const NUMBER_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];
const ARRAY_KEYWORDS: &[&str] = &["items", "minItems", "maxItems"];
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
];
const TYPE_NAMES: &[&str] = &[
    "string", "integer", "number", "boolean", "object", "array", "null",
];

/// One thing in a schema that import could not read, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// JSON Pointer into the schema document.
    pub path: String,
    /// What is wrong, in words.
    pub message: String,
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.message)
    }
}

/// Every problem found in one schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportErrors(pub Vec<ImportError>);

impl ImportErrors {
    /// The errors, in the order they were found.
    pub fn iter(&self) -> std::slice::Iter<'_, ImportError> {
        self.0.iter()
    }

    /// How many errors.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for ImportErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ImportErrors {}

/// Builds the type a JSON Schema describes.
///
/// Named types under `$defs` (or `definitions`) that the schema reaches through `$ref` become
/// definitions of the graph, so recursive schemas import as recursive types.
///
/// ```
/// use serde_json::json;
/// use toolsmith_types::{import, Type};
///
/// let graph = import(&json!({
///     "type": "object",
///     "properties": {
///         "city": {"type": "string", "description": "The city"},
///         "units": {"type": ["string", "null"], "enum": ["metric", "imperial", null]}
///     },
///     "required": ["city"]
/// }))?;
/// let Type::Struct(s) = &graph.root else { panic!("a struct") };
/// assert_eq!(s.fields[0].description.as_deref(), Some("The city"));
/// assert!(matches!(s.fields[1].ty, Type::Nilable(_)));
/// assert!(!s.fields[1].required);
///
/// let unsupported = import(&json!({"allOf": [{"type": "string"}]})).unwrap_err();
/// assert_eq!(unsupported.0[0].path, "/allOf");
/// # Ok::<(), toolsmith_types::ImportErrors>(())
/// ```
///
/// # Errors
/// Every keyword it does not understand or cannot represent, each with its path: nothing is
/// silently misread. Subschemas nested deeper than 128 levels are an error too.
pub fn import(schema: &Value) -> Result<TypeGraph, ImportErrors> {
    let mut importer = Importer::new(schema);
    let root = importer.schema(schema, "", 0, Site::Root);
    while let Some(pending) = importer.pending.pop_front() {
        let mut ty = importer.schema(pending.schema, &pending.path, 0, Site::Definition);
        if let Type::Struct(s) = &mut ty
            && s.name.is_none()
        {
            s.name = Some(pending.name.clone());
        }
        importer.defs.insert(pending.name, ty);
    }
    let graph = TypeGraph {
        root,
        defs: importer.defs,
    };
    if importer.errors.is_empty() {
        for name in graph.dangling_refs() {
            let container = importer
                .seen
                .get(&name)
                .copied()
                .unwrap_or(DefsContainer::Defs);
            importer.errors.push(ImportError {
                path: crate::diagnostics::pointer_push(container.pointer(), &name),
                message: "a cycle of references that never reaches a schema".to_owned(),
            });
        }
    }
    if importer.errors.is_empty() {
        Ok(graph)
    } else {
        Err(ImportErrors(importer.errors))
    }
}

/// Where a subschema sits, which decides what it may hold and where its annotations go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Site {
    /// The document root: may hold `$defs` and `$schema`.
    Root,
    /// The body of a named definition.
    Definition,
    /// A property's schema: its `description` belongs to the field.
    Property,
    /// A variant of a tagged union: its `_type` property is the tag, not a field.
    Variant,
    /// Anywhere else: items, map values, union members.
    Nested,
}

/// Which root keyword a definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DefsContainer {
    Defs,
    Definitions,
}

impl DefsContainer {
    fn keyword(self) -> &'static str {
        match self {
            DefsContainer::Defs => "$defs",
            DefsContainer::Definitions => "definitions",
        }
    }

    fn pointer(self) -> &'static str {
        match self {
            DefsContainer::Defs => "/$defs",
            DefsContainer::Definitions => "/definitions",
        }
    }
}

/// A definition referenced and not imported yet.
struct Pending<'s> {
    name: String,
    schema: &'s Value,
    path: String,
}

struct Importer<'s> {
    document: &'s Value,
    errors: Vec<ImportError>,
    defs: Definitions,
    /// Names referenced so far and where they live; each is imported once.
    seen: HashMap<String, DefsContainer>,
    pending: VecDeque<Pending<'s>>,
}

/// The form a schema object takes, chosen by its leading keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Ref,
    AnyOf(&'static str),
    Enum,
    Const,
    Typed,
}

impl<'s> Importer<'s> {
    fn new(document: &'s Value) -> Self {
        Importer {
            document,
            errors: Vec::new(),
            defs: Definitions::default(),
            seen: HashMap::new(),
            pending: VecDeque::new(),
        }
    }

    fn error(&mut self, path: &str, message: impl Into<String>) {
        self.errors.push(ImportError {
            path: path.to_owned(),
            message: message.into(),
        });
    }

    fn schema(&mut self, schema: &'s Value, path: &str, depth: usize, site: Site) -> Type {
        if depth > MAX_IMPORT_DEPTH {
            self.error(
                path,
                format!("schema nests deeper than {MAX_IMPORT_DEPTH} levels"),
            );
            return Type::Any;
        }
        let object = match schema {
            Value::Object(object) => object,
            Value::Bool(true) => return Type::Any,
            Value::Bool(false) => {
                self.error(
                    path,
                    "the `false` schema (nothing is valid) is not supported",
                );
                return Type::Any;
            }
            _ => {
                self.error(path, "a schema must be an object or a boolean");
                return Type::Any;
            }
        };
        let form = self.form(object, path);
        self.check_keywords(object, path, site, form);
        let mut ty = match form {
            Form::Ref => self.reference(object, path),
            Form::AnyOf(keyword) => self.any_of(object, keyword, path, depth),
            Form::Enum => self.enumeration(object, path),
            Form::Const => self.constant(object, path),
            Form::Typed => self.typed(object, path, depth, site),
        };
        if let Some(title) = self.string_keyword(object, "title", path) {
            name_struct(&mut ty, title);
        }
        if site != Site::Property
            && let Some(description) = self.string_keyword(object, "description", path)
        {
            describe(&mut ty, description);
        }
        match object.get("nullable") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => ty = Type::nilable(ty),
            Some(_) => self.error(&pointer(path, "nullable"), "`nullable` must be a boolean"),
        }
        ty
    }

    fn form(&mut self, object: &Map<String, Value>, path: &str) -> Form {
        if object.contains_key("$ref") {
            return Form::Ref;
        }
        match (object.contains_key("anyOf"), object.contains_key("oneOf")) {
            (true, true) => {
                self.error(
                    &pointer(path, "oneOf"),
                    "`anyOf` and `oneOf` together are not supported",
                );
                return Form::AnyOf("anyOf");
            }
            (true, false) => return Form::AnyOf("anyOf"),
            (false, true) => return Form::AnyOf("oneOf"),
            (false, false) => {}
        }
        if object.contains_key("enum") {
            if object.contains_key("const") {
                self.error(
                    &pointer(path, "const"),
                    "`const` beside `enum` is not supported",
                );
            }
            return Form::Enum;
        }
        if object.contains_key("const") {
            return Form::Const;
        }
        Form::Typed
    }

    /// Reports every keyword that is unknown, misplaced, or meaningless in this form.
    fn check_keywords(&mut self, object: &Map<String, Value>, path: &str, site: Site, form: Form) {
        for key in object.keys() {
            let key = key.as_str();
            if ANNOTATIONS.contains(&key) || COMMON.contains(&key) {
                continue;
            }
            if ROOT_ONLY.contains(&key) {
                if site != Site::Root {
                    self.error(
                        &pointer(path, key),
                        format!("`{key}` is only supported at the root of the document"),
                    );
                }
                continue;
            }
            let typed = key == "type"
                || STRING_KEYWORDS.contains(&key)
                || NUMBER_KEYWORDS.contains(&key)
                || ARRAY_KEYWORDS.contains(&key)
                || OBJECT_KEYWORDS.contains(&key);
            let accepted = match form {
                Form::Ref => key == "$ref",
                Form::AnyOf(keyword) => key == keyword,
                Form::Enum => key == "enum" || key == "type" || key == "format",
                Form::Const => key == "const" || key == "type" || key == "format",
                Form::Typed => typed,
            };
            if accepted {
                continue;
            }
            let understood = typed || ["$ref", "anyOf", "oneOf", "enum", "const"].contains(&key);
            let message = match form {
                _ if !understood => format!("unsupported keyword `{key}`"),
                Form::Ref => format!("`{key}` beside `$ref` is not supported"),
                Form::AnyOf(keyword) => format!("`{key}` beside `{keyword}` is not supported"),
                Form::Enum | Form::Const => {
                    format!("`{key}` beside `enum` or `const` is not supported")
                }
                Form::Typed => format!("unsupported keyword `{key}`"),
            };
            self.error(&pointer(path, key), message);
        }
    }

    fn string_keyword(
        &mut self,
        object: &'s Map<String, Value>,
        keyword: &str,
        path: &str,
    ) -> Option<String> {
        match object.get(keyword)? {
            Value::String(s) => Some(s.clone()),
            _ => {
                self.error(
                    &pointer(path, keyword),
                    format!("`{keyword}` must be a string"),
                );
                None
            }
        }
    }

    fn reference(&mut self, object: &Map<String, Value>, path: &str) -> Type {
        let path = pointer(path, "$ref");
        let Some(Value::String(target)) = object.get("$ref") else {
            self.error(&path, "`$ref` must be a string");
            return Type::Any;
        };
        let parsed = [DefsContainer::Defs, DefsContainer::Definitions]
            .into_iter()
            .find_map(|c| {
                let rest = target.strip_prefix("#/")?.strip_prefix(c.keyword())?;
                Some((c, rest.strip_prefix('/')?))
            });
        let Some((container, segment)) = parsed else {
            self.error(
                &path,
                format!("`{target}`: only references to `#/$defs/<name>` or `#/definitions/<name>` are supported"),
            );
            return Type::Any;
        };
        let Some(name) = decode_fragment_segment(segment) else {
            self.error(
                &path,
                format!("`{target}`: only references to a whole definition are supported"),
            );
            return Type::Any;
        };
        match self.seen.get(&name) {
            Some(known) if *known == container => return Type::Ref(name),
            Some(_) => {
                self.error(
                    &path,
                    format!("`{name}` is defined under both `$defs` and `definitions`"),
                );
                return Type::Any;
            }
            None => {}
        }
        let document = self.document;
        let Some(schema) = document
            .get(container.keyword())
            .and_then(|defs| defs.get(&name))
        else {
            self.error(&path, format!("`{target}` points at no definition"));
            return Type::Any;
        };
        self.seen.insert(name.clone(), container);
        self.pending.push_back(Pending {
            name: name.clone(),
            schema,
            path: crate::diagnostics::pointer_push(container.pointer(), &name),
        });
        Type::Ref(name)
    }

    fn any_of(
        &mut self,
        object: &'s Map<String, Value>,
        keyword: &str,
        path: &str,
        depth: usize,
    ) -> Type {
        let path = pointer(path, keyword);
        let members = match object.get(keyword) {
            Some(Value::Array(members)) if !members.is_empty() => members,
            _ => {
                self.error(&path, format!("`{keyword}` must be a non-empty array"));
                return Type::Any;
            }
        };
        let (nulls, others): (Vec<_>, Vec<_>) = members
            .iter()
            .enumerate()
            .partition(|(_, member)| is_null_schema(member));
        if others.is_empty() {
            self.error(&path, "a schema that only accepts null is not supported");
            return Type::Any;
        }
        let ty = if let Some(tags) = variant_tags(&others) {
            let mut union = TaggedUnion::new();
            for ((i, member), tag) in others.into_iter().zip(tags) {
                let mut ty = self.schema(
                    member,
                    &pointer(&path, &i.to_string()),
                    depth + 1,
                    Site::Variant,
                );
                if let Type::Struct(s) = &mut ty
                    && s.name.is_none()
                {
                    s.name = Some(tag.to_owned());
                }
                union.variants.push(TaggedVariant {
                    tag: tag.to_owned(),
                    ty,
                });
            }
            Type::Tagged(union)
        } else {
            let mut types: Vec<Type> = others
                .into_iter()
                .map(|(i, member)| {
                    self.schema(
                        member,
                        &pointer(&path, &i.to_string()),
                        depth + 1,
                        Site::Nested,
                    )
                })
                .collect();
            if types.len() == 1 {
                types.remove(0)
            } else {
                Type::Union(types)
            }
        };
        if nulls.is_empty() {
            ty
        } else {
            Type::nilable(ty)
        }
    }

    fn enumeration(&mut self, object: &Map<String, Value>, path: &str) -> Type {
        let path_enum = pointer(path, "enum");
        let Some(Value::Array(values)) = object.get("enum") else {
            self.error(&path_enum, "`enum` must be an array");
            return Type::Any;
        };
        let types = self.type_names(object, path);
        let mut variants: Vec<EnumVariant> = Vec::new();
        let mut null = false;
        for (i, value) in values.iter().enumerate() {
            if value.is_null() {
                null = true;
                continue;
            }
            let Some((value, kind)) = enum_value(value) else {
                self.error(
                    &pointer(&path_enum, &i.to_string()),
                    "enum values must be strings, integers or null",
                );
                continue;
            };
            if let Some(types) = &types
                && !fits(types, kind)
            {
                self.error(
                    &pointer(&path_enum, &i.to_string()),
                    format!("enum value {value} does not fit `type`"),
                );
                continue;
            }
            if !variants.iter().any(|v| v.value == value) {
                variants.push(EnumVariant::new(value));
            }
        }
        // null is valid only where both `enum` and `type` allow it.
        let null = null && types.as_ref().is_none_or(|t| t.contains(&"null"));
        if variants.is_empty() {
            if null {
                self.error(
                    &path_enum,
                    "a schema that only accepts null is not supported",
                );
            }
            return Type::Any;
        }
        let ty = Type::Enum(EnumType {
            description: None,
            variants,
        });
        if null { Type::nilable(ty) } else { ty }
    }

    fn constant(&mut self, object: &Map<String, Value>, path: &str) -> Type {
        let path_const = pointer(path, "const");
        let types = self.type_names(object, path);
        let Some((value, kind)) = object.get("const").and_then(enum_value) else {
            self.error(&path_const, "`const` must be a string or an integer");
            return Type::Any;
        };
        if let Some(types) = types
            && !fits(&types, kind)
        {
            self.error(&path_const, format!("`const` {value} does not fit `type`"));
            return Type::Any;
        }
        Type::Enum(EnumType {
            description: None,
            variants: vec![EnumVariant::new(value)],
        })
    }

    /// The names in `type`, checked; `None` when there is no `type`.
    fn type_names(&mut self, object: &Map<String, Value>, path: &str) -> Option<Vec<&'static str>> {
        let path = pointer(path, "type");
        let raw: Vec<&Value> = match object.get("type")? {
            Value::Array(names) => names.iter().collect(),
            single => vec![single],
        };
        let mut names = Vec::new();
        for (i, name) in raw.into_iter().enumerate() {
            let known = name
                .as_str()
                .and_then(|n| TYPE_NAMES.iter().copied().find(|t| *t == n));
            match known {
                Some(n) if !names.contains(&n) => names.push(n),
                Some(_) => {}
                None => {
                    let at = if object.get("type").is_some_and(Value::is_array) {
                        pointer(&path, &i.to_string())
                    } else {
                        path.clone()
                    };
                    self.error(&at, format!("unknown type {name}"));
                }
            }
        }
        Some(names)
    }

    fn typed(
        &mut self,
        object: &'s Map<String, Value>,
        path: &str,
        depth: usize,
        site: Site,
    ) -> Type {
        let names = match self.type_names(object, path) {
            Some(names) => names,
            None => {
                let has = |keywords: &[&str]| keywords.iter().any(|k| object.contains_key(*k));
                if has(OBJECT_KEYWORDS) {
                    vec!["object"]
                } else if has(ARRAY_KEYWORDS) || has(STRING_KEYWORDS) || has(NUMBER_KEYWORDS) {
                    self.error(
                        path,
                        "constraint keywords without `type` are not supported: add a `type`",
                    );
                    return Type::Any;
                } else {
                    return Type::Any;
                }
            }
        };
        let nullable = names.contains(&"null");
        let concrete: Vec<&str> = names.iter().copied().filter(|n| *n != "null").collect();
        // A constraint keyword must apply to at least one listed type.
        for key in object.keys() {
            let family = if STRING_KEYWORDS.contains(&key.as_str()) {
                if key == "format" {
                    // An annotation: kept on strings, ignored elsewhere.
                    continue;
                }
                &["string"][..]
            } else if NUMBER_KEYWORDS.contains(&key.as_str()) {
                &["integer", "number"][..]
            } else if ARRAY_KEYWORDS.contains(&key.as_str()) {
                &["array"][..]
            } else if OBJECT_KEYWORDS.contains(&key.as_str()) {
                &["object"][..]
            } else {
                continue;
            };
            if !concrete.iter().any(|t| family.contains(t)) {
                self.error(
                    &pointer(path, key),
                    format!("`{key}` does not apply to type {}", names.join(" or ")),
                );
            }
        }
        if concrete.is_empty() {
            if object
                .get("type")
                .is_some_and(|t| t.as_array().is_some_and(Vec::is_empty))
            {
                self.error(&pointer(path, "type"), "`type` must name at least one type");
            } else if !names.is_empty() {
                self.error(path, "a schema that only accepts null is not supported");
            }
            return Type::Any;
        }
        let mut members: Vec<Type> = concrete
            .into_iter()
            .map(|name| self.of_type(name, object, path, depth, site))
            .collect();
        let ty = if members.len() == 1 {
            members.remove(0)
        } else {
            Type::Union(members)
        };
        if nullable { Type::nilable(ty) } else { ty }
    }

    fn of_type(
        &mut self,
        name: &str,
        object: &'s Map<String, Value>,
        path: &str,
        depth: usize,
        site: Site,
    ) -> Type {
        match name {
            "string" => {
                let pattern = match object.get("pattern") {
                    None => None,
                    Some(Value::String(source)) => match Pattern::new(source.as_str()) {
                        Ok(pattern) => Some(pattern),
                        Err(e) => {
                            self.error(&pointer(path, "pattern"), format!("invalid pattern: {e}"));
                            None
                        }
                    },
                    Some(_) => {
                        self.error(&pointer(path, "pattern"), "`pattern` must be a string");
                        None
                    }
                };
                Type::String(StringType {
                    min_length: self.count(object, "minLength", path),
                    max_length: self.count(object, "maxLength", path),
                    pattern,
                    format: self.string_keyword(object, "format", path),
                })
            }
            "integer" => self.integer(object, path),
            "number" => self.number(object, path),
            "boolean" => Type::Boolean,
            "array" => {
                let items = match object.get("items") {
                    None => Type::Any,
                    Some(items @ Value::Array(_)) => {
                        let _ = items;
                        self.error(
                            &pointer(path, "items"),
                            "tuple `items` (an array of schemas) is not supported",
                        );
                        Type::Any
                    }
                    Some(items) => {
                        self.schema(items, &pointer(path, "items"), depth + 1, Site::Nested)
                    }
                };
                Type::Array(ArrayType {
                    items: Box::new(items),
                    min_items: self.count(object, "minItems", path),
                    max_items: self.count(object, "maxItems", path),
                })
            }
            _ => self.object(object, path, depth, site),
        }
    }

    /// A non-negative whole number keyword (`minLength`, `maxItems`, ...).
    fn count(&mut self, object: &Map<String, Value>, keyword: &str, path: &str) -> Option<u64> {
        let value = object.get(keyword)?;
        let count = value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
                .map(|f| f as u64)
        });
        if count.is_none() {
            self.error(
                &pointer(path, keyword),
                format!("`{keyword}` must be a non-negative whole number"),
            );
        }
        count
    }

    fn integer(&mut self, object: &Map<String, Value>, path: &str) -> Type {
        let [minimum, maximum, exclusive_minimum, exclusive_maximum] =
            self.bounds(object, path, integer_bound);
        let mut out = IntegerType {
            minimum,
            maximum,
            exclusive_minimum,
            exclusive_maximum,
            multiple_of: None,
        };
        if let Some(value) = object.get("multipleOf") {
            match value.as_u64().filter(|m| *m > 0).or_else(|| {
                value
                    .as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= u64::MAX as f64)
                    .map(|f| f as u64)
            }) {
                Some(m) => out.multiple_of = Some(m),
                None => self.error(
                    &pointer(path, "multipleOf"),
                    "`multipleOf` of an integer must be a positive whole number",
                ),
            }
        }
        Type::Integer(out)
    }

    fn number(&mut self, object: &Map<String, Value>, path: &str) -> Type {
        let [minimum, maximum, exclusive_minimum, exclusive_maximum] =
            self.bounds(object, path, |value, _| match value.as_f64() {
                Some(bound) if bound.is_finite() => Ok(Some(bound)),
                _ => Err("must be a number"),
            });
        let mut out = NumberType {
            minimum,
            maximum,
            exclusive_minimum,
            exclusive_maximum,
            multiple_of: None,
        };
        if let Some(value) = object.get("multipleOf") {
            match value.as_f64().filter(|m| m.is_finite() && *m > 0.0) {
                Some(m) => out.multiple_of = Some(m),
                None => self.error(
                    &pointer(path, "multipleOf"),
                    "`multipleOf` must be a positive number",
                ),
            }
        }
        Type::Number(out)
    }

    /// `minimum`, `maximum`, `exclusiveMinimum` and `exclusiveMaximum`, each read by `read`
    /// (told whether it is a lower bound), with the draft-4 boolean spelling folded in.
    fn bounds<T>(
        &mut self,
        object: &Map<String, Value>,
        path: &str,
        read: impl Fn(&Value, bool) -> Result<Option<T>, &'static str>,
    ) -> [Option<T>; 4] {
        let draft4 = self.draft4_exclusive(object, path);
        let [
            mut minimum,
            mut maximum,
            mut exclusive_minimum,
            mut exclusive_maximum,
        ] = [None, None, None, None];
        for (keyword, low) in [
            ("minimum", true),
            ("maximum", false),
            ("exclusiveMinimum", true),
            ("exclusiveMaximum", false),
        ] {
            let Some(value) = object.get(keyword) else {
                continue;
            };
            if value.is_boolean() {
                continue; // draft-4 spelling, folded in below
            }
            let bound = match read(value, low) {
                Ok(bound) => bound,
                Err(reason) => {
                    self.error(&pointer(path, keyword), format!("`{keyword}` {reason}"));
                    continue;
                }
            };
            let slot = match keyword {
                "minimum" if draft4.0 => &mut exclusive_minimum,
                "maximum" if draft4.1 => &mut exclusive_maximum,
                "minimum" => &mut minimum,
                "maximum" => &mut maximum,
                "exclusiveMinimum" => &mut exclusive_minimum,
                _ => &mut exclusive_maximum,
            };
            *slot = bound;
        }
        [minimum, maximum, exclusive_minimum, exclusive_maximum]
    }

    /// The draft-4 (OpenAPI 3.0) spelling `exclusiveMinimum: true`, which makes `minimum`
    /// exclusive: (minimum exclusive, maximum exclusive).
    fn draft4_exclusive(&mut self, object: &Map<String, Value>, path: &str) -> (bool, bool) {
        let mut flag = |keyword: &str, bound: &str| match object.get(keyword) {
            Some(Value::Bool(true)) => {
                if !object.contains_key(bound) {
                    self.error(
                        &pointer(path, keyword),
                        format!("`{keyword}: true` needs a `{bound}`"),
                    );
                }
                true
            }
            _ => false,
        };
        (
            flag("exclusiveMinimum", "minimum"),
            flag("exclusiveMaximum", "maximum"),
        )
    }

    fn object(
        &mut self,
        object: &'s Map<String, Value>,
        path: &str,
        depth: usize,
        site: Site,
    ) -> Type {
        let additional = match object.get("additionalProperties") {
            None => None,
            Some(Value::Bool(false)) => Some(None),
            Some(schema) => Some(Some(self.schema(
                schema,
                &pointer(path, "additionalProperties"),
                depth + 1,
                Site::Nested,
            ))),
        };
        let Some(properties) = object.get("properties") else {
            if object.contains_key("required") {
                self.error(
                    &pointer(path, "required"),
                    "`required` without `properties` is not supported",
                );
            }
            let keys = self.map_keys(object, path);
            return match additional {
                // No properties and no others: only the empty object.
                Some(None) => {
                    if keys.is_some() {
                        self.error(
                            &pointer(path, "propertyNames"),
                            "`propertyNames` on an object that allows no keys",
                        );
                    }
                    Type::Struct(StructType::anonymous())
                }
                Some(Some(values)) => Type::Map(MapType {
                    keys: keys.unwrap_or(MapKeys::String),
                    values: Box::new(values),
                }),
                None => Type::Map(MapType {
                    keys: keys.unwrap_or(MapKeys::String),
                    values: Box::new(Type::Any),
                }),
            };
        };
        if object.contains_key("propertyNames") {
            self.error(
                &pointer(path, "propertyNames"),
                "`propertyNames` is only supported on maps (objects without `properties`)",
            );
        }
        let Value::Object(properties) = properties else {
            self.error(
                &pointer(path, "properties"),
                "`properties` must be an object",
            );
            return Type::Any;
        };
        let required = self.required(object, properties, path, site);
        let mut out = StructType {
            additional: additional.flatten().map(Box::new),
            ..StructType::default()
        };
        let properties_path = pointer(path, "properties");
        for (name, schema) in properties {
            if site == Site::Variant && name == TYPE_TAG {
                continue;
            }
            let at = pointer(&properties_path, name);
            let ty = self.schema(schema, &at, depth + 1, Site::Property);
            let description = match schema {
                Value::Object(o) => self.string_keyword(o, "description", &at),
                _ => None,
            };
            let default = match schema.get("default") {
                Some(value) if json_depth(value) > MAX_IMPORT_DEPTH => {
                    self.error(
                        &pointer(&at, "default"),
                        format!("`default` nests deeper than {MAX_IMPORT_DEPTH} levels"),
                    );
                    None
                }
                other => other.cloned(),
            };
            out.fields.push(Field {
                name: name.clone(),
                ty,
                description,
                default,
                required: required.contains(&name.as_str()),
                aliases: Vec::new(),
            });
        }
        Type::Struct(out)
    }

    /// The names in `required`, each checked against `properties`.
    fn required(
        &mut self,
        object: &'s Map<String, Value>,
        properties: &Map<String, Value>,
        path: &str,
        site: Site,
    ) -> Vec<&'s str> {
        let path = pointer(path, "required");
        let Some(required) = object.get("required") else {
            return Vec::new();
        };
        let Value::Array(names) = required else {
            self.error(&path, "`required` must be an array of names");
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, name) in names.iter().enumerate() {
            match name.as_str() {
                Some(name) if site == Site::Variant && name == TYPE_TAG => {}
                Some(name) if properties.contains_key(name) => out.push(name),
                Some(name) => self.error(
                    &pointer(&path, &i.to_string()),
                    format!("required `{name}` is not in `properties`"),
                ),
                None => self.error(&pointer(&path, &i.to_string()), "names must be strings"),
            }
        }
        out
    }

    fn map_keys(&mut self, object: &Map<String, Value>, path: &str) -> Option<MapKeys> {
        let names = object.get("propertyNames")?;
        let path = pointer(path, "propertyNames");
        let Value::Object(names) = names else {
            self.error(&path, "`propertyNames` must be an object with an `enum`");
            return None;
        };
        for key in names.keys() {
            if !matches!(key.as_str(), "enum" | "type" | "description" | "title")
                && !ANNOTATIONS.contains(&key.as_str())
            {
                self.error(
                    &pointer(&path, key),
                    format!("`{key}` in `propertyNames` is not supported (only `enum`)"),
                );
            }
        }
        if names.get("type").is_some_and(|t| t != "string") {
            self.error(&pointer(&path, "type"), "property names are strings");
        }
        let Some(Value::Array(values)) = names.get("enum") else {
            self.error(&path, "`propertyNames` must have an `enum` of strings");
            return None;
        };
        let mut keys = Vec::new();
        for (i, value) in values.iter().enumerate() {
            match value.as_str() {
                Some(s) if !keys.contains(&s) => keys.push(s),
                Some(_) => {}
                None => self.error(
                    &pointer(&pointer(&path, "enum"), &i.to_string()),
                    "property names must be strings",
                ),
            }
        }
        Some(MapKeys::Enum(EnumType::strings(keys)))
    }
}

/// Whether `schema` is `{"type": "null"}`, perhaps with annotations.
fn is_null_schema(schema: &Value) -> bool {
    let Value::Object(o) = schema else {
        return false;
    };
    o.get("type").and_then(Value::as_str) == Some("null")
        && o.keys().all(|k| {
            k == "type" || k == "description" || k == "title" || ANNOTATIONS.contains(&k.as_str())
        })
}

/// The `_type` tags of union members when every member is a tagged-union variant: an object
/// schema whose required `_type` property is one constant string, each tag distinct.
fn variant_tags<'v>(members: &[(usize, &'v Value)]) -> Option<Vec<&'v str>> {
    let mut tags: Vec<&'v str> = Vec::with_capacity(members.len());
    for (_, member) in members {
        let object = member.as_object()?;
        if object.get("type").is_some_and(|t| t != "object") {
            return None;
        }
        let tag_schema = object.get("properties")?.get(TYPE_TAG)?.as_object()?;
        let tag = match (tag_schema.get("const"), tag_schema.get("enum")) {
            (Some(Value::String(tag)), None) => tag.as_str(),
            (None, Some(Value::Array(values))) if values.len() == 1 => values[0].as_str()?,
            _ => return None,
        };
        let tag_keys_ok = tag_schema.keys().all(|k| {
            matches!(
                k.as_str(),
                "type" | "const" | "enum" | "description" | "title"
            )
        });
        let required = object
            .get("required")?
            .as_array()?
            .iter()
            .any(|n| n == TYPE_TAG);
        if !tag_keys_ok
            || !required
            || tag_schema.get("type").is_some_and(|t| t != "string")
            || tags.contains(&tag)
        {
            return None;
        }
        tags.push(tag);
    }
    Some(tags)
}

/// Sets the description of the type under any `Nilable`, where the type has one.
fn describe(ty: &mut Type, description: String) {
    match ty {
        Type::Enum(e) => e.description = Some(description),
        Type::Struct(s) => s.description = Some(description),
        Type::Tagged(u) => u.description = Some(description),
        Type::Nilable(inner) => describe(inner, description),
        _ => {}
    }
}

/// Names the struct under any `Nilable`.
fn name_struct(ty: &mut Type, name: String) {
    match ty {
        Type::Struct(s) => s.name = Some(name),
        Type::Nilable(inner) => name_struct(inner, name),
        _ => {}
    }
}

fn pointer(base: &str, segment: &str) -> String {
    crate::diagnostics::pointer_push(base, segment)
}

/// An integer bound from a JSON number: a whole number, with bounds past the 64-bit range that
/// every 64-bit integer satisfies read as no bound. `low` is true for lower bounds.
/// An `enum` or `const` value the type model holds, with the name of its JSON type.
fn enum_value(value: &Value) -> Option<(EnumValue, &'static str)> {
    match value {
        Value::String(s) => Some((EnumValue::String(s.clone()), "string")),
        Value::Number(n) => n.as_i64().map(|i| (EnumValue::Integer(i), "integer")),
        _ => None,
    }
}

/// Whether a value of JSON type `kind` is allowed by the names in `type`.
fn fits(types: &[&str], kind: &str) -> bool {
    types
        .iter()
        .any(|t| *t == kind || (kind == "integer" && *t == "number"))
}

fn integer_bound(value: &Value, low: bool) -> Result<Option<i128>, &'static str> {
    if let Some(i) = value.as_i64() {
        return Ok(Some(i128::from(i)));
    }
    if let Some(u) = value.as_u64() {
        return Ok(Some(i128::from(u)));
    }
    let Some(f) = value.as_f64() else {
        return Err("must be a number");
    };
    if f.fract() != 0.0 {
        return Err("of an integer must be a whole number");
    }
    // Past the 64-bit range: no bound on one side, nothing valid on the other.
    if f >= 18_446_744_073_709_551_616.0 {
        return if low {
            Err("is past the 64-bit integer range")
        } else {
            Ok(None)
        };
    }
    if f < -9_223_372_036_854_775_808.0 {
        return if low {
            Ok(None)
        } else {
            Err("is past the 64-bit integer range")
        };
    }
    // Exact: `f` is whole and within the range of i128.
    Ok(Some(f as i128))
}

/// How deeply a JSON value nests, counted without recursion.
fn json_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        if depth > MAX_IMPORT_DEPTH {
            break;
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// Undoes [`crate::emit`]'s encoding of a definition name: percent-decoding, then JSON Pointer
/// unescaping. `None` when the segment is not one whole, well-formed name.
fn decode_fragment_segment(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3)?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    let text = String::from_utf8(decoded).ok()?;
    if text.contains('/') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next()? {
                '0' => out.push('~'),
                '1' => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}
