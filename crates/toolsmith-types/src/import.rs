//! JSON Schema import: building a [`TypeGraph`] from the schema subset tool definitions use.
//!
//! Import reads each schema with its most faithful reading in the type model. Where that reading
//! is exact, both modes take it (`allOf` whose members merge, `anyOf` beside other keywords as
//! each member merged with them, `required` beside no `properties`, `const` and `enum` of any
//! JSON value, `uniqueItems`, `false` as `items`, as a property of a closed object or as a member
//! of `anyOf`). Where it is not (a pragmatic reading, a keyword the
//! model cannot enforce) an [`ImportMode::Lenient`] import takes it and reports it as an
//! [`ImportWarning`] with its JSON Pointer and a stable [`ImportCode`]; an
//! [`ImportMode::Strict`] import (what [`import`] does) refuses it with an [`ImportError`] of the
//! same code. Nothing is read differently without one or the other. Keywords that only annotate
//! (`$comment`, `examples`, `deprecated`, ...) are accepted and ignored.
//!
//! Choices where JSON Schema is looser than a tool definition means:
//! - an object schema with `properties` is closed unless `additionalProperties` is `true` or a
//!   schema; an object schema without `properties` is a map (of `additionalProperties`, or of
//!   anything), or a struct of its `required` keys that takes other keys too;
//! - `properties` or `required` without `type` mean an object;
//! - `oneOf` is read as `anyOf` (tool unions are disjoint in practice);
//! - a property's `description` describes the field; elsewhere it describes the type, and is
//!   kept where the type model has room for one (structs, enums, tagged unions) and dropped
//!   elsewhere (the `items` of an array, a map's values, a member of an untagged union): a
//!   description never changes which values are valid.
//!
//! The liberties a lenient import takes, each a warning (and in a strict import an error):
//! - `enum` on an `array` whose values are not arrays: the values of each item
//!   (`enum_of_items`);
//! - `enum` values outside `type` (`{"type": "boolean", "enum": ["True", "False"]}`): the
//!   values as listed (`enum_outside_type`);
//! - constraint keywords without `type` (`{"minimum": 1}`): the type they constrain
//!   (`type_inferred`); JSON Schema would let values of every other type through;
//! - `prefixItems` (or an array of `items`): an array whose items are any of the listed schemas,
//!   positions not enforced (`prefix_items_as_array`);
//! - `allOf` whose members do not merge exactly (`all_of_inexact`);
//! - `nullable: true`, an OpenAPI keyword that JSON Schema 2020-12 does not define: honoured,
//!   since whoever wrote it means `null` to be allowed (`nullable_keyword`);
//! - a property whose schema is `false` in an object that takes other keys: the key is then one
//!   of those (`forbidden_key_allowed`);
//! - a `default` that does not fit its field: dropped (`default_invalid`);
//! - keywords it cannot honour (`not`, `if`, `patternProperties`, `minProperties`, ...), or that
//!   do not apply to the schema's type: ignored (`unsupported_keyword`, `inapplicable_keyword`);
//!   so is a `pattern` that is an ECMA-262 regular expression the linear-time matcher cannot
//!   express (look-around, back-references): not enforced, and the warning says so. A `pattern`
//!   that is no regular expression at all is an error in both modes, as for a validator.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Map, Value};

use crate::pointer::{decode_fragment_segment, pointer_push};
use crate::ty::{
    ArrayType, Definitions, EnumType, EnumValue, EnumVariant, Field, IntegerType, MapKeys, MapType,
    NumberType, Pattern, StringType, StructType, TYPE_TAG, TaggedUnion, TaggedVariant, Type,
    TypeGraph,
};

/// Whether `source` is a regular expression by ECMA-262's grammar (with the `u` flag, as JSON
/// Schema 2020-12 reads `pattern`), whatever the linear-time matcher can express of it.
fn is_ecma_regex(source: &str) -> bool {
    regress::Regex::with_flags(source, "u").is_ok()
}

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

/// The stable code of an [`ImportError`] or [`ImportWarning`]: what kind of problem, or which
/// liberty a lenient import took.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, strum::IntoStaticStr, strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[non_exhaustive]
pub enum ImportCode {
    /// The schema is malformed, or describes what no value can satisfy; no mode reads it.
    SchemaInvalid,
    /// `enum` with no values: nothing is valid.
    EnumEmpty,
    /// A `default` that does not fit its own field (type, bounds, length, ...).
    DefaultInvalid,
    /// A keyword that would change which values are valid and that the type model cannot hold;
    /// a lenient import ignores it.
    UnsupportedKeyword,
    /// A constraint keyword for a type the schema does not allow (`minimum` on a string), which
    /// JSON Schema ignores; so does a lenient import.
    InapplicableKeyword,
    /// `enum` on an array whose values are not arrays, read as the values of each item.
    EnumOfItems,
    /// `enum` values that `type` does not allow (so JSON Schema accepts none of them), read as
    /// the values listed.
    EnumOutsideType,
    /// Constraint keywords without `type`, read as the type they constrain.
    TypeInferred,
    /// `prefixItems` (or an array of `items`), read as an array whose items are any of them.
    PrefixItemsAsArray,
    /// `allOf` members that do not merge into one schema exactly.
    AllOfInexact,
    /// `nullable: true`, an OpenAPI keyword, honoured in a JSON Schema document.
    NullableKeyword,
    /// A property whose schema is `false`, in an object that accepts other keys.
    ForbiddenKeyAllowed,
}

impl ImportCode {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl std::fmt::Display for ImportCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `path: message`, with `(root)` for the empty pointer: how every import finding renders.
fn render_finding(path: &str, message: &str) -> String {
    let path = if path.is_empty() { "(root)" } else { path };
    format!("{path}: {message}")
}

/// One thing in a schema that import could not read, with where it is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImportError {
    /// JSON Pointer into the schema document.
    pub path: String,
    /// What kind of problem (for a liberty a strict import refuses, the liberty's code).
    pub code: ImportCode,
    /// What is wrong, in words.
    pub message: String,
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&render_finding(&self.path, &self.message))
    }
}

/// A liberty a lenient import took (a reading that is pragmatic rather than exact, a keyword it
/// cannot enforce), with where it is.
///
/// ```
/// use serde_json::json;
/// use toolsmith_types::{import_with, ImportOptions};
///
/// let imported = import_with(&json!({"minimum": 1}), &ImportOptions::lenient())?;
/// let warning = &imported.warnings[0];
/// assert_eq!((warning.path.as_str(), warning.code.as_str()), ("", "type_inferred"));
/// assert_eq!(
///     warning.to_string(),
///     "(root): constraint keywords without `type`; read as type number (type_inferred)"
/// );
/// # Ok::<(), toolsmith_types::ImportErrors>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImportWarning {
    /// JSON Pointer into the schema document.
    pub path: String,
    /// Which liberty.
    pub code: ImportCode,
    /// What was found and how it was read, in words.
    pub message: String,
}

impl std::fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let line = render_finding(&self.path, &self.message);
        write!(f, "{line} ({})", self.code)
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

/// Whether import takes liberties with what the type model cannot hold exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImportMode {
    /// Only exact readings: every liberty is an error (what [`import`] does).
    #[default]
    Strict,
    /// The most faithful reading of every valid schema, each liberty an [`ImportWarning`].
    Lenient,
}

/// How to import a schema: see [`import_with`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportOptions {
    /// Strict (the default) or lenient.
    pub mode: ImportMode,
}

impl ImportOptions {
    /// Exact readings only.
    pub fn strict() -> Self {
        ImportOptions {
            mode: ImportMode::Strict,
        }
    }

    /// Every valid schema, each liberty reported.
    pub fn lenient() -> Self {
        ImportOptions {
            mode: ImportMode::Lenient,
        }
    }
}

/// What [`import_with`] made of a schema: the type, and every liberty taken to read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The type the schema describes.
    pub graph: TypeGraph,
    /// Every liberty taken, in document order (always empty for a strict import).
    pub warnings: Vec<ImportWarning>,
}

/// Builds the type a JSON Schema describes, reading only what the type model holds exactly: a
/// strict [`import_with`], for callers that have nowhere to show warnings.
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
/// let unsupported = import(&json!({"not": {"type": "string"}})).unwrap_err();
/// assert_eq!(unsupported.0[0].path, "/not");
/// assert_eq!(unsupported.0[0].code.as_str(), "unsupported_keyword");
/// # Ok::<(), toolsmith_types::ImportErrors>(())
/// ```
///
/// # Errors
/// Every keyword it does not understand or cannot represent exactly, each with its path and
/// code: nothing is silently misread. Subschemas nested deeper than 128 levels are an error too.
pub fn import(schema: &Value) -> Result<TypeGraph, ImportErrors> {
    import_with(schema, &ImportOptions::strict()).map(|imported| imported.graph)
}

/// Builds the type a JSON Schema describes, as `options` say: strict (exact readings only, as
/// [`import`]) or lenient (every valid schema, with each liberty taken an [`ImportWarning`]).
///
/// ```
/// use serde_json::json;
/// use toolsmith_types::{import_with, ImportOptions, Type};
///
/// // A real-world schema: `enum` on the array where each item's values were meant.
/// let schema = json!({"type": "array", "items": {"type": "string"}, "enum": ["red", "blue"]});
/// let imported = import_with(&schema, &ImportOptions::lenient())?;
/// let Type::Array(array) = &imported.graph.root else { panic!("an array") };
/// assert!(matches!(*array.items, Type::Enum(_)));
/// assert_eq!(imported.warnings[0].code.as_str(), "enum_of_items");
///
/// let refused = import_with(&schema, &ImportOptions::strict()).unwrap_err();
/// assert_eq!(refused.0[0].code.as_str(), "enum_of_items");
/// # Ok::<(), toolsmith_types::ImportErrors>(())
/// ```
///
/// # Errors
/// What no mode can read (a malformed schema, one that accepts no value, a `$ref` outside the
/// document's definitions, nesting deeper than 128 levels), and in a strict import every
/// liberty; each with its path and code.
pub fn import_with(schema: &Value, options: &ImportOptions) -> Result<Imported, ImportErrors> {
    let none = HashSet::new();
    let first = Importer::run(schema, options.mode, &none)?;
    if first.bad_defaults.is_empty() {
        return Ok(Imported {
            graph: first.graph,
            warnings: first.warnings,
        });
    }
    if options.mode == ImportMode::Strict {
        let errors = first
            .bad_defaults
            .into_iter()
            .map(|(path, message)| ImportError {
                path,
                code: ImportCode::DefaultInvalid,
                message,
            });
        return Err(ImportErrors(errors.collect()));
    }
    // Lenient: the same document again, without the defaults that do not fit. (The type of a
    // field does not depend on its default, so nothing else changes.)
    let dropped: HashSet<String> = first.bad_defaults.iter().map(|(p, _)| p.clone()).collect();
    let second = Importer::run(schema, options.mode, &dropped)?;
    let mut warnings = second.warnings;
    warnings.extend(
        first
            .bad_defaults
            .into_iter()
            .map(|(path, message)| ImportWarning {
                path,
                code: ImportCode::DefaultInvalid,
                message: format!("{message}; left out, so the field has no default"),
            }),
    );
    Ok(Imported {
        graph: second.graph,
        warnings,
    })
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

/// A field's `default`, checked against the field's type once every definition is known.
struct DefaultCheck {
    /// JSON Pointer of the `default` keyword.
    path: String,
    ty: Type,
    default: Value,
}

/// One pass of import over a document.
struct Run {
    graph: TypeGraph,
    warnings: Vec<ImportWarning>,
    /// Defaults that do not fit their field: where, and why.
    bad_defaults: Vec<(String, String)>,
}

struct Importer<'s, 'd> {
    document: &'s Value,
    mode: ImportMode,
    errors: Vec<ImportError>,
    warnings: Vec<ImportWarning>,
    defs: Definitions,
    /// Names referenced so far and where they live; each is imported once.
    seen: HashMap<String, DefsContainer>,
    pending: VecDeque<Pending<'s>>,
    defaults: Vec<DefaultCheck>,
    /// Schemas gathered by every `allOf` so far.
    all_of_parts: usize,
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

/// Most schemas one `allOf` may gather (its members, the definitions they refer to, and their
/// own `allOf` members), which bounds a definition that includes itself.
const MAX_ALL_OF_PARTS: usize = 64;

/// Most schemas every `allOf` of one document may gather together. Merging writes referenced
/// definitions in place, so without this bound, definitions whose properties each merge the next
/// definition would cost time exponential in their number.
const MAX_ALL_OF_TOTAL: usize = 4096;

impl<'s, 'd> Importer<'s, 'd> {
    /// Imports `document` once.
    fn run(
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

    fn error(&mut self, path: &str, message: impl Into<String>) {
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
    fn liberty(&mut self, path: &str, code: ImportCode, what: &str, reading: &str) -> bool {
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
    fn unsupported(&mut self, path: &str, code: ImportCode, message: String) {
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

    /// `allOf` as one schema: the members' keywords merged into the schema around them. The
    /// merge is exact where keywords constrain the value independently, which is the usual case
    /// (`allOf` around one `$ref` to describe it, objects assembled from parts); what does not
    /// merge exactly is a liberty (`all_of_inexact`). `None` when refused (and said).
    fn all_of(&mut self, object: &Map<String, Value>, path: &str) -> Result<Value, AllOfFail> {
        let at = pointer_push(path, "allOf");
        let members = match object.get("allOf") {
            Some(Value::Array(members)) if !members.is_empty() => members,
            _ => {
                self.error(&at, "`allOf` must be a non-empty array");
                return Err(AllOfFail::Reported);
            }
        };
        let mut base = object.clone();
        base.remove("allOf");
        let annotation = |k: &String| {
            COMMON.contains(&k.as_str())
                || ANNOTATIONS.contains(&k.as_str())
                || ROOT_ONLY.contains(&k.as_str())
        };
        // One `$ref` beside nothing but annotations: the reference itself, keeping its name.
        let real: Vec<&Value> = members
            .iter()
            .filter(|m| **m != Value::Bool(true))
            .collect();
        if let [Value::Object(only)] = real[..]
            && only.contains_key("$ref")
            && only.keys().all(|k| k == "$ref" || annotation(k))
            && base.keys().all(annotation)
        {
            let mut merged = only.clone();
            merged.extend(base);
            return Ok(Value::Object(merged));
        }

        let mut merged = Map::new();
        let mut parts: Vec<(String, Map<String, Value>)> = vec![(path.to_owned(), base)];
        let mut queue: VecDeque<(String, Value)> = members
            .iter()
            .enumerate()
            .map(|(i, m)| (pointer_push(&at, &i.to_string()), m.clone()))
            .collect();
        let mut gathered = 0;
        while let Some((here, member)) = queue.pop_front() {
            gathered += 1;
            self.all_of_parts += 1;
            if self.all_of_parts > MAX_ALL_OF_TOTAL {
                self.error(
                    &at,
                    format!("the document's `allOf`s gather more than {MAX_ALL_OF_TOTAL} schemas"),
                );
                return Err(AllOfFail::Reported);
            }
            if gathered > MAX_ALL_OF_PARTS {
                self.error(
                    &at,
                    format!("`allOf` gathers more than {MAX_ALL_OF_PARTS} schemas"),
                );
                return Err(AllOfFail::Reported);
            }
            let mut member = match member {
                Value::Bool(true) => continue,
                Value::Bool(false) => {
                    return Err(AllOfFail::Nothing {
                        path: here,
                        message: "an `allOf` member is `false`: no value is valid".to_owned(),
                    });
                }
                Value::Object(member) => member,
                _ => {
                    self.error(&here, "a schema must be an object or a boolean");
                    return Err(AllOfFail::Reported);
                }
            };
            if let Some(target) = member.remove("$ref") {
                let ref_path = pointer_push(&here, "$ref");
                let body = target
                    .as_str()
                    .and_then(|t| self.definition_body(t))
                    .cloned();
                match body {
                    Some(body) => queue.push_back((ref_path, body)),
                    None => {
                        self.error(
                            &ref_path,
                            format!(
                                "{target} points at no definition under `$defs` or `definitions`"
                            ),
                        );
                        return Err(AllOfFail::Reported);
                    }
                }
            }
            if let Some(inner) = member.remove("allOf") {
                let inner_at = pointer_push(&here, "allOf");
                let Value::Array(inner) = inner else {
                    self.error(&inner_at, "`allOf` must be a non-empty array");
                    return Err(AllOfFail::Reported);
                };
                for (j, m) in inner.into_iter().enumerate() {
                    queue.push_back((pointer_push(&inner_at, &j.to_string()), m));
                }
            }
            parts.push((here, member));
        }

        let mut inexact: Vec<(String, String)> = Vec::new();
        for (here, part) in &parts {
            for (key, value) in part {
                let Some(existing) = merged.get_mut(key) else {
                    merged.insert(key.clone(), value.clone());
                    continue;
                };
                if existing == value {
                    continue;
                }
                match merge_keyword(key, existing, value) {
                    Merge::Done => {}
                    Merge::Nothing => {
                        return Err(AllOfFail::Nothing {
                            path: pointer_push(here, key),
                            message: format!(
                                "`{key}` leaves no value in common with the rest of `allOf`"
                            ),
                        });
                    }
                    Merge::Inexact => inexact.push((pointer_push(here, key), key.clone())),
                }
            }
        }
        // `additionalProperties` sees only the `properties` beside it: merged, it would also
        // admit what the other parts declare.
        let declared: HashSet<&String> = parts
            .iter()
            .filter_map(|(_, p)| p.get("properties").and_then(Value::as_object))
            .flat_map(Map::keys)
            .collect();
        for (here, part) in &parts {
            let closes = part
                .get("additionalProperties")
                .is_some_and(|a| *a != Value::Bool(true));
            let own: HashSet<&String> = part
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            if closes && declared.iter().any(|name| !own.contains(name)) {
                inexact.push((
                    pointer_push(here, "additionalProperties"),
                    "additionalProperties".to_owned(),
                ));
            }
        }
        let mut refused = false;
        for (here, key) in inexact {
            let what = if key == "additionalProperties" {
                "`additionalProperties` in an `allOf` part only admits the properties declared \
                 beside it"
                    .to_owned()
            } else {
                format!("`{key}` differs between `allOf` parts, and one schema holds one")
            };
            let reading = if key == "additionalProperties" {
                "admitting the properties of every part"
            } else {
                "the first of them"
            };
            refused |= !self.liberty(&here, ImportCode::AllOfInexact, &what, reading);
        }
        if refused {
            Err(AllOfFail::Reported)
        } else {
            Ok(Value::Object(merged))
        }
    }

    /// `anyOf` (or `oneOf`) beside keywords that constrain the value too: each member merged
    /// with them, as `A and (B or C)` is `(A and B) or (A and C)`; a member that leaves no value
    /// beside them is left out. As exact as the merges (see [`Importer::all_of`]); where a merge
    /// goes wrong, its paths run through `/anyOf/<i>/allOf/0` (the keywords beside) and
    /// `/anyOf/<i>/allOf/1` (the member).
    fn any_of_siblings(&mut self, object: &Map<String, Value>, path: &str) -> Option<Value> {
        let keyword = match (object.contains_key("anyOf"), object.contains_key("oneOf")) {
            (true, false) => "anyOf",
            (false, true) => "oneOf",
            // Both: `form` reports it.
            _ => return None,
        };
        let Some(Value::Array(members)) = object.get(keyword) else {
            return None;
        };
        let (mut rest, mut siblings) = (Map::new(), Map::new());
        for (key, value) in object {
            let k = key.as_str();
            if k == keyword
                || COMMON.contains(&k)
                || ANNOTATIONS.contains(&k)
                || ROOT_ONLY.contains(&k)
            {
                rest.insert(key.clone(), value.clone());
            } else {
                siblings.insert(key.clone(), value.clone());
            }
        }
        if siblings.is_empty() || members.is_empty() {
            return None;
        }
        let at = pointer_push(path, keyword);
        let mut merged_members = Vec::with_capacity(members.len());
        for (i, member) in members.iter().enumerate() {
            if *member == Value::Bool(false) {
                continue;
            }
            let both = Value::Array(vec![Value::Object(siblings.clone()), member.clone()]);
            let wrapper = Map::from_iter([("allOf".to_owned(), both)]);
            match self.all_of(&wrapper, &pointer_push(&at, &i.to_string())) {
                Ok(merged) => merged_members.push(merged),
                // This member allows no value the keywords beside it allow.
                Err(AllOfFail::Nothing { .. }) => {}
                Err(AllOfFail::Reported) => return Some(Value::Bool(true)),
            }
        }
        if merged_members.is_empty() {
            self.error(
                &at,
                format!("no member of `{keyword}` allows a value the keywords beside it allow"),
            );
            return Some(Value::Bool(true));
        }
        rest.insert(keyword.to_owned(), Value::Array(merged_members));
        Some(Value::Object(rest))
    }

    /// The body of the definition `target` (`#/$defs/<name>` or `#/definitions/<name>`) points at.
    fn definition_body(&self, target: &str) -> Option<&'s Value> {
        let (container, name) = parse_ref(target).ok()?;
        self.document.get(container.keyword())?.get(&name)
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

    fn reference(&mut self, object: &Map<String, Value>, path: &str) -> Type {
        let path = pointer_push(path, "$ref");
        let Some(Value::String(target)) = object.get("$ref") else {
            self.error(&path, "`$ref` must be a string");
            return Type::Any;
        };
        let (container, name) = match parse_ref(target) {
            Ok(parsed) => parsed,
            Err(message) => {
                self.error(&path, message);
                return Type::Any;
            }
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
            path: pointer_push(container.pointer(), &name),
        });
        Type::Ref(name)
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
                &pointer_push(path, keyword),
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
                // Valid JSON Schema (`multipleOf: 0.5` of an integer) the integer type cannot
                // hold.
                None if value.as_f64().is_some_and(|f| f.is_finite() && f > 0.0) => {
                    self.unsupported(
                        &pointer_push(path, "multipleOf"),
                        ImportCode::UnsupportedKeyword,
                        format!(
                            "`multipleOf: {value}` of an integer cannot be enforced (only a \
                             whole number can)"
                        ),
                    );
                }
                None => self.error(
                    &pointer_push(path, "multipleOf"),
                    "`multipleOf` must be a number greater than 0",
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
                    &pointer_push(path, "multipleOf"),
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
                    self.error(
                        &pointer_push(path, keyword),
                        format!("`{keyword}` {reason}"),
                    );
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
                        &pointer_push(path, keyword),
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

/// What a `$ref` names: `#/$defs/<name>` or `#/definitions/<name>`, or why it cannot be read.
fn parse_ref(target: &str) -> Result<(DefsContainer, String), String> {
    let parsed = [DefsContainer::Defs, DefsContainer::Definitions]
        .into_iter()
        .find_map(|c| {
            let rest = target.strip_prefix("#/")?.strip_prefix(c.keyword())?;
            Some((c, rest.strip_prefix('/')?))
        });
    let Some((container, segment)) = parsed else {
        return Err(format!(
            "`{target}`: only references to `#/$defs/<name>` or `#/definitions/<name>` are supported"
        ));
    };
    match decode_fragment_segment(segment) {
        Some(name) => Ok((container, name)),
        None => Err(format!(
            "`{target}`: only references to a whole definition are supported"
        )),
    }
}

/// Why an `allOf` did not merge.
enum AllOfFail {
    /// Already reported (an error, or a liberty a strict import refuses).
    Reported,
    /// Its parts leave no value valid: where, and why (for the caller to report, or, for a
    /// member of an `anyOf`, to leave the member out).
    Nothing {
        /// JSON Pointer of the part that leaves nothing.
        path: String,
        /// Why.
        message: String,
    },
}

/// How one keyword of an `allOf` part merged into the keyword already gathered.
enum Merge {
    /// Exactly: the gathered value now says what both did.
    Done,
    /// The two leave no value valid.
    Nothing,
    /// Not exactly: the gathered value is kept as it was.
    Inexact,
}

/// Merges `value` into `existing`, two different values of `key` in parts of one `allOf`.
fn merge_keyword(key: &str, existing: &mut Value, value: &Value) -> Merge {
    let both = |a: Value, b: Value| {
        Value::Object(Map::from_iter([(
            "allOf".to_owned(),
            Value::Array(vec![a, b]),
        )]))
    };
    match key {
        "properties" => {
            let (Value::Object(mine), Value::Object(theirs)) = (&mut *existing, value) else {
                return Merge::Inexact;
            };
            for (name, schema) in theirs {
                match mine.get_mut(name) {
                    None => {
                        mine.insert(name.clone(), schema.clone());
                    }
                    Some(old) if old == schema => {}
                    Some(old) => *old = both(std::mem::take(old), schema.clone()),
                }
            }
            Merge::Done
        }
        "required" => {
            let (Value::Array(mine), Value::Array(theirs)) = (&mut *existing, value) else {
                return Merge::Inexact;
            };
            for name in theirs {
                if !mine.contains(name) {
                    mine.push(name.clone());
                }
            }
            Merge::Done
        }
        "type" => {
            let names = |v: &Value| -> Option<Vec<String>> {
                match v {
                    Value::String(t) => Some(vec![t.clone()]),
                    Value::Array(ts) => ts.iter().map(|t| t.as_str().map(str::to_owned)).collect(),
                    _ => None,
                }
            };
            let (Some(mine), Some(theirs)) = (names(existing), names(value)) else {
                return Merge::Inexact;
            };
            let mut common: Vec<String> = Vec::new();
            for t in &mine {
                let kept = if theirs.contains(t) {
                    t.as_str()
                } else if (t == "integer" && theirs.iter().any(|o| o == "number"))
                    || (t == "number" && theirs.iter().any(|o| o == "integer"))
                {
                    "integer"
                } else {
                    continue;
                };
                if !common.iter().any(|c| c == kept) {
                    common.push(kept.to_owned());
                }
            }
            *existing = match common.len() {
                0 => return Merge::Nothing,
                1 => Value::String(common.remove(0)),
                _ => Value::Array(common.into_iter().map(Value::String).collect()),
            };
            Merge::Done
        }
        "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "maximum"
        | "exclusiveMaximum" | "maxLength" | "maxItems" => {
            let (Some(mine), Some(theirs)) = (existing.as_f64(), value.as_f64()) else {
                return Merge::Inexact;
            };
            let lower = key.starts_with("min") || key == "exclusiveMinimum";
            if (lower && theirs > mine) || (!lower && theirs < mine) {
                *existing = value.clone();
            }
            Merge::Done
        }
        "items" | "additionalProperties" | "propertyNames" => {
            match (&*existing, value) {
                (Value::Array(_), _) | (_, Value::Array(_)) => return Merge::Inexact,
                (Value::Bool(false), _) | (_, Value::Bool(true)) => {}
                (_, Value::Bool(false)) | (Value::Bool(true), _) => *existing = value.clone(),
                _ => *existing = both(std::mem::take(existing), value.clone()),
            }
            Merge::Done
        }
        "enum" => {
            let (Value::Array(mine), Value::Array(theirs)) = (&mut *existing, value) else {
                return Merge::Inexact;
            };
            mine.retain(|v| theirs.contains(v));
            if mine.is_empty() {
                Merge::Nothing
            } else {
                Merge::Done
            }
        }
        // Annotations: the first one found (the schema's own, then its members' in order).
        "description" | "title" | "default" => Merge::Done,
        k if ANNOTATIONS.contains(&k) => Merge::Done,
        _ => Merge::Inexact,
    }
}

/// Whether a value of JSON type `kind` is allowed by the names in `type`.
fn fits(types: &[&str], kind: &str) -> bool {
    types
        .iter()
        .any(|t| *t == kind || (kind == "integer" && *t == "number"))
}

/// An integer bound from a JSON number: a whole number, with bounds past the 64-bit range that
/// every 64-bit integer satisfies read as no bound. `low` is true for lower bounds.
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
