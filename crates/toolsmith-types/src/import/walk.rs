//! The walk: one pass over a schema document building its [`Type`], each schema read by the
//! form its keywords give it (a `$ref`, a union, an `enum` or `const`, or a typed schema), with
//! the tables of keywords each form may hold, and each liberty taken or refused by the mode.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Map, Value};

use super::all_of::AllOfFail;
use super::reference::{DefsContainer, Pending};
use super::{ImportCode, ImportError, ImportErrors, ImportMode, ImportWarning};
use crate::pointer::pointer_push;
use crate::ty::{
    ArrayType, Definitions, EnumType, EnumValue, EnumVariant, Field, MapKeys, MapType, Pattern,
    StringType, StructType, TYPE_TAG, TaggedUnion, TaggedVariant, Type, TypeGraph,
};

/// Whether `source` is a regular expression by ECMA-262's grammar (with the `u` flag, as JSON
/// Schema 2020-12 reads `pattern`), whatever the linear-time matcher can express of it.
fn is_ecma_regex(source: &str) -> bool {
    regress::Regex::with_flags(source, "u").is_ok()
}

/// How deeply subschemas may nest before import stops with an error.
const MAX_IMPORT_DEPTH: usize = 128;

/// Keywords that only annotate: accepted anywhere and ignored.
pub(super) const ANNOTATIONS: &[&str] = &[
    "$comment",
    "examples",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Keywords accepted only at the root of the document.
pub(super) const ROOT_ONLY: &[&str] = &["$schema", "$id", "$defs", "definitions"];

/// Keywords beside which a schema keeps its meaning, whatever its form.
pub(super) const COMMON: &[&str] = &["description", "title", "default", "nullable"];

const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern", "format"];

const NUMBER_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

const ARRAY_KEYWORDS: &[&str] = &[
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
];

const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
];

const TYPE_NAMES: &[&str] = &[
    "string", "integer", "number", "boolean", "object", "array", "null",
];

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

/// A field's `default`, checked against the field's type once every definition is known.
struct DefaultCheck {
    /// JSON Pointer of the `default` keyword.
    path: String,
    ty: Type,
    default: Value,
}

/// One pass of import over a document.
pub(super) struct Run {
    pub(super) graph: TypeGraph,
    pub(super) warnings: Vec<ImportWarning>,
    /// Defaults that do not fit their field: where, and why.
    pub(super) bad_defaults: Vec<(String, String)>,
}

pub(super) struct Importer<'s, 'd> {
    pub(super) document: &'s Value,
    mode: ImportMode,
    errors: Vec<ImportError>,
    warnings: Vec<ImportWarning>,
    defs: Definitions,
    /// Names referenced so far and where they live; each is imported once.
    pub(super) seen: HashMap<String, DefsContainer>,
    pub(super) pending: VecDeque<Pending<'s>>,
    defaults: Vec<DefaultCheck>,
    /// Schemas gathered by every `allOf` so far.
    pub(super) all_of_parts: usize,
    /// Paths of `default` keywords a lenient import leaves out (found not to fit in a first pass).
    dropped_defaults: &'d HashSet<String>,
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

impl<'s, 'd> Importer<'s, 'd> {
    /// Imports `document` once.
    pub(super) fn run(
        document: &'s Value,
        mode: ImportMode,
        dropped_defaults: &'d HashSet<String>,
    ) -> Result<Run, ImportErrors> {
        let mut importer = Importer {
            document,
            mode,
            errors: Vec::new(),
            warnings: Vec::new(),
            defs: Definitions::default(),
            seen: HashMap::new(),
            pending: VecDeque::new(),
            defaults: Vec::new(),
            all_of_parts: 0,
            dropped_defaults,
        };
        let root = importer.schema(document, "", 0, Site::Root);
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
            defs: std::mem::take(&mut importer.defs),
        };
        if importer.errors.is_empty() {
            for name in graph.dangling_refs() {
                let container = importer
                    .seen
                    .get(&name)
                    .copied()
                    .unwrap_or(DefsContainer::Defs);
                importer.error(
                    &pointer_push(container.pointer(), &name),
                    "a cycle of references that never reaches a schema",
                );
            }
        }
        if !importer.errors.is_empty() {
            return Err(ImportErrors(importer.errors));
        }
        let bad_defaults = importer.check_defaults(&graph);
        Ok(Run {
            graph,
            warnings: importer.warnings,
            bad_defaults,
        })
    }

    pub(super) fn error(&mut self, path: &str, message: impl Into<String>) {
        self.error_coded(path, ImportCode::SchemaInvalid, message);
    }

    fn error_coded(&mut self, path: &str, code: ImportCode, message: impl Into<String>) {
        self.errors.push(ImportError {
            path: path.to_owned(),
            code,
            message: message.into(),
        });
    }

    fn warn(&mut self, path: &str, code: ImportCode, message: String) {
        self.warnings.push(ImportWarning {
            path: path.to_owned(),
            code,
            message,
        });
    }

    /// A reading that is not exact: `what` was found, and a lenient import reads it as
    /// `reading` (and says so); a strict one refuses it. Returns whether to take the reading.
    pub(super) fn liberty(
        &mut self,
        path: &str,
        code: ImportCode,
        what: &str,
        reading: &str,
    ) -> bool {
        match self.mode {
            ImportMode::Lenient => {
                self.warn(path, code, format!("{what}; read as {reading}"));
                true
            }
            ImportMode::Strict => {
                let message = format!("{what}; a strict import does not read it as {reading}");
                self.error_coded(path, code, message);
                false
            }
        }
    }

    /// A keyword the import does not honour: an error in a strict import, ignored (and said)
    /// in a lenient one.
    pub(super) fn unsupported(&mut self, path: &str, code: ImportCode, message: String) {
        match self.mode {
            ImportMode::Lenient => self.warn(path, code, format!("{message}; ignored")),
            ImportMode::Strict => self.error_coded(path, code, message),
        }
    }

    /// Every recorded default that does not fit its field under a strict policy: where, and the
    /// reason coercion gives.
    fn check_defaults(&self, graph: &TypeGraph) -> Vec<(String, String)> {
        let policy = crate::policy::Policy::strict();
        let mut bad = Vec::new();
        for check in &self.defaults {
            let Err(errors) =
                crate::coerce::coerce_default(graph, &check.ty, &check.default, &policy)
            else {
                continue;
            };
            let reasons: Vec<String> = errors
                .iter()
                .take(3)
                .map(|e| {
                    let message = e.message();
                    match message.strip_prefix("arguments: ") {
                        Some(rest) => rest.to_owned(),
                        None => message,
                    }
                })
                .collect();
            let shown = crate::diagnostics::short(&check.default);
            let message = format!(
                "`default` {shown} does not fit its field: {}",
                reasons.join("; ")
            );
            bad.push((check.path.clone(), message));
        }
        bad
    }

    fn schema(&mut self, schema: &Value, path: &str, depth: usize, site: Site) -> Type {
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
                // Where `false` has an exact reading (`items`, `additionalProperties`, a
                // property, an `anyOf` member), the caller reads it before coming here.
                self.error(
                    path,
                    "the `false` schema accepts no value, so nothing could ever be sent here",
                );
                return Type::Any;
            }
            _ => {
                self.error(path, "a schema must be an object or a boolean");
                return Type::Any;
            }
        };
        if object.contains_key("allOf") {
            return match self.all_of(object, path) {
                Ok(merged) => self.schema(&merged, path, depth + 1, site),
                Err(AllOfFail::Nothing { path, message }) => {
                    self.error(&path, message);
                    Type::Any
                }
                Err(AllOfFail::Reported) => Type::Any,
            };
        }
        if let Some(rewritten) = self.any_of_siblings(object, path) {
            return self.schema(&rewritten, path, depth + 1, site);
        }
        if let Some(rewritten) = self.enum_of_items(object, path) {
            return self.schema(&rewritten, path, depth + 1, site);
        }
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
            // Honoured rather than ignored: JSON Schema 2020-12 does not define `nullable`, but
            // whoever wrote it (OpenAPI 3.0, Gemini's schemas, converters from either) means
            // `null` to be allowed, and refusing the `null` they send would refuse valid calls.
            Some(Value::Bool(true)) => {
                let honoured = self.liberty(
                    &pointer_push(path, "nullable"),
                    ImportCode::NullableKeyword,
                    "`nullable: true` is an OpenAPI keyword that JSON Schema 2020-12 does not \
                     define (write `\"type\": [..., \"null\"]`)",
                    "allowing null as well",
                );
                if honoured {
                    ty = Type::nilable(ty);
                }
            }
            Some(_) => self.error(
                &pointer_push(path, "nullable"),
                "`nullable` must be a boolean",
            ),
        }
        ty
    }

    /// `enum` on an array whose values are not arrays: JSON Schema accepts no value, and what
    /// real tool definitions mean (the values each item may take) is the lenient reading, as the
    /// same schema with the `enum` moved into `items`.
    fn enum_of_items(&mut self, object: &Map<String, Value>, path: &str) -> Option<Value> {
        let Some(Value::Array(values)) = object.get("enum") else {
            return None;
        };
        let array_only = match object.get("type") {
            Some(Value::String(t)) => t == "array",
            Some(Value::Array(ts)) => ts == &[Value::from("array")],
            _ => false,
        };
        if !array_only || values.is_empty() || values.iter().any(|v| v.is_array() || v.is_null()) {
            return None;
        }
        let taken = self.liberty(
            &pointer_push(path, "enum"),
            ImportCode::EnumOfItems,
            "`enum` on an array, with values that are not arrays (so JSON Schema accepts no \
             value)",
            "the values each item may take",
        );
        if !taken {
            // Refused, and said: the rest of this schema would only repeat it.
            return Some(Value::Bool(true));
        }
        let mut rewritten = object.clone();
        let values = rewritten.remove("enum").unwrap_or(Value::Null);
        let item_enum = Value::Object(Map::from_iter([("enum".to_owned(), values)]));
        let items = match rewritten.remove("items") {
            None | Some(Value::Bool(true)) => item_enum,
            Some(items) => Value::Object(Map::from_iter([(
                "allOf".to_owned(),
                Value::Array(vec![items, item_enum]),
            )])),
        };
        rewritten.insert("items".to_owned(), items);
        Some(Value::Object(rewritten))
    }

    fn form(&mut self, object: &Map<String, Value>, path: &str) -> Form {
        if object.contains_key("$ref") {
            return Form::Ref;
        }
        match (object.contains_key("anyOf"), object.contains_key("oneOf")) {
            (true, true) => {
                self.error(
                    &pointer_push(path, "oneOf"),
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
                    &pointer_push(path, "const"),
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
                    self.unsupported(
                        &pointer_push(path, key),
                        ImportCode::UnsupportedKeyword,
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
            self.unsupported(
                &pointer_push(path, key),
                ImportCode::UnsupportedKeyword,
                message,
            );
        }
    }

    fn string_keyword(
        &mut self,
        object: &Map<String, Value>,
        keyword: &str,
        path: &str,
    ) -> Option<String> {
        match object.get(keyword)? {
            Value::String(s) => Some(s.clone()),
            _ => {
                self.error(
                    &pointer_push(path, keyword),
                    format!("`{keyword}` must be a string"),
                );
                None
            }
        }
    }

    fn any_of(
        &mut self,
        object: &Map<String, Value>,
        keyword: &str,
        path: &str,
        depth: usize,
    ) -> Type {
        let path = pointer_push(path, keyword);
        let members = match object.get(keyword) {
            Some(Value::Array(members)) if !members.is_empty() => members,
            _ => {
                self.error(&path, format!("`{keyword}` must be a non-empty array"));
                return Type::Any;
            }
        };
        // A `false` member adds nothing to a union: left out, exactly.
        let (nulls, others): (Vec<_>, Vec<_>) = members
            .iter()
            .enumerate()
            .filter(|(_, member)| **member != Value::Bool(false))
            .partition(|(_, member)| is_null_schema(member));
        if others.is_empty() && nulls.is_empty() {
            self.error(&path, "every member is `false`: no value is valid");
            return Type::Any;
        }
        if others.is_empty() {
            self.error(&path, "a schema that only accepts null is not supported");
            return Type::Any;
        }
        let ty = if let Some(tags) = variant_tags(&others) {
            let mut union = TaggedUnion::new();
            for ((i, member), tag) in others.into_iter().zip(tags) {
                let mut ty = self.schema(
                    member,
                    &pointer_push(&path, &i.to_string()),
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
                        &pointer_push(&path, &i.to_string()),
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
        let path_enum = pointer_push(path, "enum");
        let Some(Value::Array(values)) = object.get("enum") else {
            self.error(&path_enum, "`enum` must be an array");
            return Type::Any;
        };
        if values.is_empty() {
            self.error_coded(
                &path_enum,
                ImportCode::EnumEmpty,
                "`enum` lists no values, so no value is valid",
            );
            return Type::Any;
        }
        self.closed_set(object, path, &path_enum, values, true)
    }

    fn constant(&mut self, object: &Map<String, Value>, path: &str) -> Type {
        let path_const = pointer_push(path, "const");
        let value = object.get("const").cloned().unwrap_or(Value::Null);
        self.closed_set(
            object,
            path,
            &path_const,
            std::slice::from_ref(&value),
            false,
        )
    }

    /// The type of an `enum` (`listed`) or a `const` at `at`: the values, of any JSON type,
    /// with `null` made a nilable; values `type` does not allow are a liberty.
    fn closed_set(
        &mut self,
        object: &Map<String, Value>,
        path: &str,
        at: &str,
        values: &[Value],
        listed: bool,
    ) -> Type {
        let keyword = if listed { "enum" } else { "const" };
        let position = |i: usize| {
            if listed {
                pointer_push(at, &i.to_string())
            } else {
                at.to_owned()
            }
        };
        if let Some(i) = values.iter().position(|v| json_depth(v) > MAX_IMPORT_DEPTH) {
            self.error(
                &position(i),
                format!("`{keyword}` value nests deeper than {MAX_IMPORT_DEPTH} levels"),
            );
            return Type::Any;
        }
        let mut types = self.type_names(object, path);
        if let Some(names) = &types {
            let outside: Vec<usize> = (0..values.len())
                .filter(|&i| !values[i].is_null() && !fits(names, json_kind(&values[i])))
                .collect();
            if let Some(&first) = outside.first() {
                let shown: Vec<String> = outside
                    .iter()
                    .take(4)
                    .map(|&i| crate::diagnostics::short(&values[i]))
                    .collect();
                let what = format!(
                    "`{keyword}` value {} is not of `type` {}, so JSON Schema never accepts it",
                    shown.join(", "),
                    names.join(" or ")
                );
                let reading = format!("the `{keyword}` values, whatever `type` says");
                if !self.liberty(
                    &position(first),
                    ImportCode::EnumOutsideType,
                    &what,
                    &reading,
                ) {
                    return Type::Any;
                }
                types = None;
            }
        }
        let mut variants: Vec<EnumVariant> = Vec::new();
        let mut null = false;
        for value in values {
            if value.is_null() {
                null = true;
                continue;
            }
            let value = enum_value(value);
            if !variants.iter().any(|v| v.value == value) {
                variants.push(EnumVariant::new(value));
            }
        }
        // null is valid only where both `enum` and `type` allow it.
        let null = null && types.as_ref().is_none_or(|t| t.contains(&"null"));
        if variants.is_empty() {
            let message = if null {
                "a schema that only accepts null is not supported"
            } else {
                "no value of this `enum` is allowed by `type`, so no value is valid"
            };
            self.error(at, message);
            return Type::Any;
        }
        let ty = Type::Enum(EnumType {
            description: None,
            variants,
        });
        if null { Type::nilable(ty) } else { ty }
    }

    /// The names in `type`, checked; `None` when there is no `type`.
    fn type_names(&mut self, object: &Map<String, Value>, path: &str) -> Option<Vec<&'static str>> {
        let path = pointer_push(path, "type");
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
                        pointer_push(&path, &i.to_string())
                    } else {
                        path.clone()
                    };
                    self.error(&at, format!("unknown type {name}"));
                }
            }
        }
        Some(names)
    }

    fn typed(&mut self, object: &Map<String, Value>, path: &str, depth: usize, site: Site) -> Type {
        let names = match self.type_names(object, path) {
            Some(names) => names,
            None => {
                let has = |keywords: &[&str]| keywords.iter().any(|k| object.contains_key(*k));
                if has(OBJECT_KEYWORDS) {
                    vec!["object"]
                } else {
                    // JSON Schema applies each constraint to values of its type and lets every
                    // other value through; what a tool definition means is the constrained type.
                    let mut inferred = Vec::new();
                    for (keywords, name) in [
                        (STRING_KEYWORDS, "string"),
                        (NUMBER_KEYWORDS, "number"),
                        (ARRAY_KEYWORDS, "array"),
                    ] {
                        if has(keywords) {
                            inferred.push(name);
                        }
                    }
                    if inferred.is_empty() {
                        return Type::Any;
                    }
                    let reading = format!("type {}", inferred.join(" or "));
                    let what = "constraint keywords without `type`";
                    if !self.liberty(path, ImportCode::TypeInferred, what, &reading) {
                        return Type::Any;
                    }
                    inferred
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
                self.unsupported(
                    &pointer_push(path, key),
                    ImportCode::InapplicableKeyword,
                    format!("`{key}` does not apply to type {}", names.join(" or ")),
                );
            }
        }
        if concrete.is_empty() {
            if object
                .get("type")
                .is_some_and(|t| t.as_array().is_some_and(Vec::is_empty))
            {
                self.error(
                    &pointer_push(path, "type"),
                    "`type` must name at least one type",
                );
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
        object: &Map<String, Value>,
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
                        // A regular expression, but not one matched in linear time: valid JSON
                        // Schema that coercion cannot enforce.
                        Err(e) if is_ecma_regex(source) => {
                            let message = format!("pattern `{source}` cannot be enforced: {e}");
                            let at = pointer_push(path, "pattern");
                            self.unsupported(&at, ImportCode::UnsupportedKeyword, message);
                            None
                        }
                        Err(e) => {
                            let message = format!("pattern `{source}` cannot be used: {e}");
                            self.error(&pointer_push(path, "pattern"), message);
                            None
                        }
                    },
                    Some(_) => {
                        self.error(&pointer_push(path, "pattern"), "`pattern` must be a string");
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
            "array" => self.array(object, path, depth),
            _ => self.object(object, path, depth, site),
        }
    }

    /// An array schema: `items`, `prefixItems` (or the older array of `items`), and the length
    /// bounds. `items: false` is exact: no items past the prefix.
    fn array(&mut self, object: &Map<String, Value>, path: &str, depth: usize) -> Type {
        let items_path = pointer_push(path, "items");
        let (prefix, prefix_path, rest) = match (object.get("prefixItems"), object.get("items")) {
            (Some(prefix), rest) => (Some(prefix), pointer_push(path, "prefixItems"), rest),
            // Before 2020-12, an array of `items` was the prefix.
            (None, Some(prefix @ Value::Array(_))) => (Some(prefix), items_path.clone(), None),
            (None, rest) => (None, String::new(), rest),
        };
        let min_items = self.count(object, "minItems", path);
        let mut max_items = self.count(object, "maxItems", path);
        // `None` for `items: false`: nothing past the prefix.
        let rest_type = match rest {
            None => Some(Type::Any),
            Some(Value::Bool(false)) => None,
            Some(items) => Some(self.schema(items, &items_path, depth + 1, Site::Nested)),
        };
        let prefix_schemas: &[Value] = match prefix {
            None => &[],
            Some(Value::Array(schemas)) => schemas,
            Some(_) => {
                self.error(&prefix_path, "`prefixItems` must be an array of schemas");
                &[]
            }
        };
        let mut members: Vec<Type> = Vec::new();
        let mut cap = None;
        for (i, schema) in prefix_schemas.iter().enumerate() {
            if *schema == Value::Bool(false) {
                // No value fits position `i`: the array stops before it.
                cap = Some(i as u64);
                break;
            }
            let ty = self.schema(
                schema,
                &pointer_push(&prefix_path, &i.to_string()),
                depth + 1,
                Site::Nested,
            );
            if !members.contains(&ty) {
                members.push(ty);
            }
        }
        let exact_prefix = match (&rest_type, members.as_slice()) {
            (_, []) => true,
            (None, [_]) => true,
            (Some(rest), [only]) => rest == only,
            _ => false,
        };
        match rest_type {
            Some(rest) if !members.contains(&rest) && cap.is_none() => members.push(rest),
            Some(_) => {}
            None => cap = cap.or(Some(prefix_schemas.len() as u64)),
        }
        if let Some(cap) = cap {
            max_items = Some(max_items.map_or(cap, |max| max.min(cap)));
            if cap == 0 {
                members.clear();
            }
        }
        if !exact_prefix {
            let taken = self.liberty(
                &prefix_path,
                ImportCode::PrefixItemsAsArray,
                "`prefixItems` gives each position its own schema, which the type model cannot hold",
                "an array whose items may be any of those schemas, in any position",
            );
            if !taken {
                return Type::Any;
            }
        }
        if members.contains(&Type::Any) {
            members = vec![Type::Any];
        }
        let items = match members.len() {
            // Only the empty array: its items' type never matters.
            0 => Type::Any,
            1 => members.remove(0),
            _ => Type::Union(members),
        };
        let unique_items = match object.get("uniqueItems") {
            None => false,
            Some(Value::Bool(unique)) => *unique,
            Some(_) => {
                self.error(
                    &pointer_push(path, "uniqueItems"),
                    "`uniqueItems` must be a boolean",
                );
                false
            }
        };
        Type::Array(ArrayType {
            items: Box::new(items),
            min_items,
            max_items,
            unique_items,
        })
    }

    fn object(
        &mut self,
        object: &Map<String, Value>,
        path: &str,
        depth: usize,
        site: Site,
    ) -> Type {
        let additional = match object.get("additionalProperties") {
            None => None,
            Some(Value::Bool(false)) => Some(None),
            Some(schema) => Some(Some(self.schema(
                schema,
                &pointer_push(path, "additionalProperties"),
                depth + 1,
                Site::Nested,
            ))),
        };
        let empty = Map::new();
        let properties = match object.get("properties") {
            Some(Value::Object(properties)) => properties,
            Some(_) => {
                self.error(
                    &pointer_push(path, "properties"),
                    "`properties` must be an object",
                );
                return Type::Any;
            }
            // `required` alone names keys that must be there: a struct of them (below).
            None if object.contains_key("required") => &empty,
            None => {
                let keys = self.map_keys(object, path);
                return match additional {
                    // No properties and no others: only the empty object.
                    Some(None) => {
                        if keys.is_some() {
                            self.error(
                                &pointer_push(path, "propertyNames"),
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
            }
        };
        if object.contains_key("propertyNames") {
            self.unsupported(
                &pointer_push(path, "propertyNames"),
                ImportCode::UnsupportedKeyword,
                "`propertyNames` is only supported on maps (objects without `properties` or \
                 `required`)"
                    .to_owned(),
            );
        }
        let required = self.required(object, path, site);
        // Keys beyond `properties`: closed where `additionalProperties` is absent and there are
        // `properties` (what a tool definition means), open to anything where there are none.
        let extra: Option<Type> = match &additional {
            Some(extra) => extra.clone(),
            None if !object.contains_key("properties") => Some(Type::Any),
            None => None,
        };
        let mut out = StructType {
            additional: extra.clone().map(Box::new),
            ..StructType::default()
        };
        let properties_path = pointer_push(path, "properties");
        for (name, schema) in properties {
            if site == Site::Variant && name == TYPE_TAG {
                continue;
            }
            let at = pointer_push(&properties_path, name);
            let is_required = required.iter().any(|r| r == name);
            if *schema == Value::Bool(false) {
                // The key must be absent: exactly what a closed struct says of an undeclared key.
                if is_required {
                    self.error(
                        &at,
                        format!("required `{name}` has the schema `false`: no value is valid"),
                    );
                } else if extra.is_some() {
                    self.liberty(
                        &at,
                        ImportCode::ForbiddenKeyAllowed,
                        &format!("`{name}` may not be sent, but the object takes other keys"),
                        "an object where it is one of those other keys",
                    );
                }
                continue;
            }
            let ty = self.schema(schema, &at, depth + 1, Site::Property);
            let description = match schema {
                Value::Object(o) => self.string_keyword(o, "description", &at),
                _ => None,
            };
            let default = self.default(schema, &at, &ty);
            out.fields.push(Field {
                name: name.clone(),
                ty,
                description,
                default,
                required: is_required,
                aliases: Vec::new(),
            });
        }
        // A required key `properties` does not declare is one of the others: a field of their
        // type (of any value where `additionalProperties` is absent, as JSON Schema has it).
        for (i, name) in required.iter().enumerate() {
            if properties.contains_key(name.as_str()) {
                continue;
            }
            let ty = match &additional {
                Some(None) => {
                    self.error(
                        &pointer_push(&pointer_push(path, "required"), &i.to_string()),
                        format!(
                            "required `{name}` is not in `properties`, and \
                             `additionalProperties: false` forbids it: no value is valid"
                        ),
                    );
                    continue;
                }
                Some(Some(ty)) => ty.clone(),
                None => Type::Any,
            };
            out.fields.push(Field::new(name.clone(), ty));
        }
        Type::Struct(out)
    }

    /// A property's `default`, recorded to be checked against the field once every definition
    /// is known; `None` when there is none, or a lenient import leaves it out.
    fn default(&mut self, schema: &Value, at: &str, ty: &Type) -> Option<Value> {
        let default = schema.get("default")?;
        let path = pointer_push(at, "default");
        if json_depth(default) > MAX_IMPORT_DEPTH {
            self.error(
                &path,
                format!("`default` nests deeper than {MAX_IMPORT_DEPTH} levels"),
            );
            return None;
        }
        if self.dropped_defaults.contains(&path) {
            return None;
        }
        self.defaults.push(DefaultCheck {
            path,
            ty: ty.clone(),
            default: default.clone(),
        });
        Some(default.clone())
    }

    /// The names in `required`, each once.
    fn required(&mut self, object: &Map<String, Value>, path: &str, site: Site) -> Vec<String> {
        let path = pointer_push(path, "required");
        let Some(required) = object.get("required") else {
            return Vec::new();
        };
        let Value::Array(names) = required else {
            self.error(&path, "`required` must be an array of names");
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for (i, name) in names.iter().enumerate() {
            match name.as_str() {
                Some(name) if site == Site::Variant && name == TYPE_TAG => {}
                Some(name) if out.iter().any(|n| n == name) => {}
                Some(name) => out.push(name.to_owned()),
                None => self.error(
                    &pointer_push(&path, &i.to_string()),
                    "names must be strings",
                ),
            }
        }
        out
    }

    fn map_keys(&mut self, object: &Map<String, Value>, path: &str) -> Option<MapKeys> {
        let names = object.get("propertyNames")?;
        let path = pointer_push(path, "propertyNames");
        if *names == Value::Bool(true) {
            // Every name is allowed: it says nothing.
            return None;
        }
        let an_enum_of_names = matches!(names, Value::Object(names)
        if names.get("enum").is_some_and(Value::is_array)
            && names.keys().all(|key| {
                matches!(key.as_str(), "enum" | "type" | "description" | "title")
                    || ANNOTATIONS.contains(&key.as_str())
            }));
        if !an_enum_of_names && self.mode == ImportMode::Lenient {
            self.unsupported(
                &path,
                ImportCode::UnsupportedKeyword,
                "`propertyNames` other than an `enum` of names cannot be enforced".to_owned(),
            );
            return None;
        }
        let Value::Object(names) = names else {
            self.error(&path, "`propertyNames` must be an object with an `enum`");
            return None;
        };
        for key in names.keys() {
            if !matches!(key.as_str(), "enum" | "type" | "description" | "title")
                && !ANNOTATIONS.contains(&key.as_str())
            {
                self.error(
                    &pointer_push(&path, key),
                    format!("`{key}` in `propertyNames` is not supported (only `enum`)"),
                );
            }
        }
        if names.get("type").is_some_and(|t| t != "string") {
            self.error(&pointer_push(&path, "type"), "property names are strings");
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
                    &pointer_push(&pointer_push(&path, "enum"), &i.to_string()),
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

/// An `enum` or `const` value as the type model holds it: strings, and integers in the 64-bit
/// signed range (a whole float such as `2.0` is that integer, as JSON Schema has it), as
/// themselves; any other value as JSON.
fn enum_value(value: &Value) -> EnumValue {
    match value {
        Value::String(s) => EnumValue::String(s.clone()),
        Value::Number(n) => match n.as_i64().or_else(|| whole_i64(n.as_f64()?)) {
            Some(i) => EnumValue::Integer(i),
            None => EnumValue::Json(value.clone()),
        },
        other => EnumValue::Json(other.clone()),
    }
}

/// `f` as an `i64`, when it is one exactly.
fn whole_i64(f: f64) -> Option<i64> {
    // Exact: `f` is whole and within the range of i64.
    (f.fract() == 0.0 && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f))
        .then_some(f as i64)
}

/// The JSON Schema type name of a value (`integer` for whole numbers).
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether a value of JSON type `kind` is allowed by the names in `type`.
fn fits(types: &[&str], kind: &str) -> bool {
    types
        .iter()
        .any(|t| *t == kind || (kind == "integer" && *t == "number"))
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
