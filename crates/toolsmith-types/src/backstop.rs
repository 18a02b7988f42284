//! [`ImportedSchema`]: a type read from a JSON Schema, with the schema kept and compiled by a
//! full validator, the backstop behind coercion.
//!
//! The type model cannot hold every JSON Schema keyword, so a lenient import reads some as
//! warnings and enforces nothing for them (`not`, `if`/`then`/`else`, `contains`,
//! `dependentRequired`, `patternProperties`, `unevaluatedProperties`, `prefixItems` read as an
//! array of any of them, ...). Coercion reads a value by the type; the validator then checks
//! what coercion made against the schema itself, and its findings come back as coercion's own
//! errors (path, code, words), so a tool defined by a JSON Schema refuses what its schema
//! refuses even where the type is looser.
//!
//! The validator runs without its network and file features: a `$ref` it cannot resolve within
//! the document is an import error, never a fetch. Its `pattern` engine runs in linear time
//! where it can and bounds its backtracking where a pattern needs it (look-around), so no value
//! a model sends makes a check run away.

use std::fmt;

use serde_json::Value;

use crate::arguments::{Arguments, coerce_arguments};
use crate::coerce::Coerced;
use crate::diagnostics::{CoerceError, CoerceErrors, ErrorCode};
use crate::import::{
    ImportCode, ImportError, ImportErrors, ImportOptions, ImportWarning, Imported, import_with,
};
use crate::pointer::unescape_segment;
use crate::policy::{Limits, Policy};
use crate::ty::TypeGraph;

/// The most backtracking steps one `pattern` match may take. Only a pattern the linear-time
/// engine cannot run (look-around, back-references) backtracks at all; past the limit the
/// value is refused, saying so, rather than matched for as long as a hostile string makes it
/// take.
const BACKTRACK_LIMIT: usize = 100_000;

/// A type read from a JSON Schema, and the schema itself compiled by a JSON Schema validator:
/// what a tool whose parameters are a JSON Schema (one defined at run time, a remote tool, the
/// CLI's `coerce --schema`) coerces its arguments with.
///
/// [`coerce`](ImportedSchema::coerce) reads arguments by the imported type, with its repairs,
/// and then checks the value against the schema, so that keywords outside the type model are
/// enforced too; their failures are [`ErrorCode::SchemaViolation`] errors in the usual shape.
///
/// ```
/// use serde_json::json;
/// use toolsmith_types::{Arguments, ImportOptions, ImportedSchema, Policy};
///
/// // `not` is outside the type model: a lenient import warns and reads `name` as any string.
/// let schema = json!({
///     "type": "object",
///     "properties": {"name": {"type": "string", "not": {"const": "root"}}},
///     "required": ["name"]
/// });
/// let parameters = ImportedSchema::new(schema, &ImportOptions::lenient())?;
/// assert_eq!(parameters.warnings()[0].code.as_str(), "unsupported_keyword");
///
/// let policy = Policy::lenient();
/// let ok = parameters.coerce(Arguments::Text(r#"{"name": "ada"}"#), &policy).unwrap();
/// assert_eq!(ok.value, json!({"name": "ada"}));
///
/// // The type alone would take "root"; the schema does not.
/// let refused = parameters.coerce(Arguments::Text(r#"{"name": "root"}"#), &policy).unwrap_err();
/// assert_eq!(refused.0[0].path, "/name");
/// assert_eq!(refused.0[0].code.as_str(), "schema_violation");
/// # Ok::<(), toolsmith_types::ImportErrors>(())
/// ```
#[derive(Clone)]
pub struct ImportedSchema {
    imported: Imported,
    schema: Value,
    validator: jsonschema::Validator,
}

impl ImportedSchema {
    /// Imports `schema` as `options` say and compiles it for the backstop.
    ///
    /// # Errors
    /// What [`import_with`] refuses, and a schema the validator cannot compile (a `$ref` it
    /// cannot resolve within the document, a `pattern` no engine here reads): then nothing
    /// could stand behind the type, and the schema is refused rather than half enforced.
    pub fn new(schema: Value, options: &ImportOptions) -> Result<Self, ImportErrors> {
        let imported = import_with(&schema, options)?;
        let as_read = as_read(&schema, &imported.warnings);
        let validator = jsonschema::options()
            .with_pattern_options(
                jsonschema::PatternOptions::fancy_regex().backtrack_limit(BACKTRACK_LIMIT),
            )
            .build(&as_read)
            .map_err(|error| {
                ImportErrors(vec![ImportError {
                    path: error.schema_path().as_str().to_owned(),
                    code: ImportCode::SchemaInvalid,
                    message: format!("a JSON Schema validator cannot compile the schema: {error}"),
                }])
            })?;
        Ok(ImportedSchema {
            imported,
            schema,
            validator,
        })
    }

    /// The type coercion reads values by.
    pub fn graph(&self) -> &TypeGraph {
        &self.imported.graph
    }

    /// Every liberty the import took (empty for a strict import): where the type is looser or
    /// other than the schema, and the backstop alone enforces the schema.
    pub fn warnings(&self) -> &[ImportWarning] {
        &self.imported.warnings
    }

    /// The schema as it was given.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Reads `arguments` by the type under `policy` (repairs and all), then checks the value
    /// against the schema.
    ///
    /// # Errors
    /// Coercion's errors, when the value does not fit the type; otherwise every place the
    /// coerced value breaks the schema (up to the policy's `max_errors`).
    pub fn coerce(
        &self,
        arguments: Arguments<'_>,
        policy: &Policy,
    ) -> Result<Coerced, CoerceErrors> {
        let coerced = coerce_arguments(&self.imported.graph, arguments, policy)?;
        self.check(&coerced.value, &policy.limits)?;
        Ok(coerced)
    }

    /// Reads `value` by the type under `policy`, then checks the result against the schema: as
    /// [`coerce`](ImportedSchema::coerce), for a value of any JSON type (a tool's output, a
    /// value under a root that is not an object).
    ///
    /// # Errors
    /// As [`coerce`](ImportedSchema::coerce).
    pub fn coerce_value(&self, value: &Value, policy: &Policy) -> Result<Coerced, CoerceErrors> {
        let coerced = crate::coerce::coerce(&self.imported.graph, value, policy)?;
        self.check(&coerced.value, &policy.limits)?;
        Ok(coerced)
    }

    /// Checks `value` against the schema: the backstop alone, for a value already in the
    /// type's shape.
    ///
    /// # Errors
    /// Every place `value` breaks the schema, as [`ErrorCode::SchemaViolation`] errors, up to
    /// `limits.max_errors` (then one [`ErrorCode::TooManyErrors`] says how many more).
    pub fn check(&self, value: &Value, limits: &Limits) -> Result<(), CoerceErrors> {
        if self.validator.is_valid(value) {
            return Ok(());
        }
        let mut errors = Vec::new();
        let mut more = 0usize;
        for error in self.validator.iter_errors(value) {
            if errors.len() < limits.max_errors {
                errors.push(violation(&error));
            } else {
                more += 1;
            }
        }
        if errors.is_empty() {
            // The validator's two answers disagree; the quick one said no.
            errors.push(CoerceError::new(
                "",
                ErrorCode::SchemaViolation,
                Some(value.clone()),
                "a value the tool's JSON Schema accepts",
            ));
        }
        if more > 0 {
            errors.push(CoerceError::new(
                "",
                ErrorCode::TooManyErrors,
                None,
                format!(
                    "at most {} problems reported at once; {more} more not shown",
                    limits.max_errors
                ),
            ));
        }
        Err(CoerceErrors(errors))
    }
}

/// The schema the validator checks values against: the schema as given, except where a
/// lenient import read it otherwise on purpose, because read literally it refuses what its
/// author meant to allow. There the schema is made to say what the import read, so that the
/// backstop enforces what the type cannot hold and never undoes a reading:
///
/// - `nullable: true` (OpenAPI's): `null` is allowed besides what the schema says;
/// - `enum` on an array of non-array values: the values of each item, which the type checks,
///   so the array's own `enum` goes;
/// - `enum` or `const` values outside `type`: the values, whatever `type` says, so `type` goes;
/// - a property whose schema is `false` in an object that takes other keys: one of those keys.
///
/// The other liberties read a schema more loosely than it says or exactly as it says, and the
/// validator then enforces the schema as written.
fn as_read(schema: &Value, warnings: &[ImportWarning]) -> Value {
    let mut read = schema.clone();
    let mut nullable = Vec::new();
    for warning in warnings {
        let path = warning.path.as_str();
        match warning.code {
            ImportCode::EnumOfItems => {
                if let Some(Value::Object(object)) =
                    parent(path, 1).and_then(|p| read.pointer_mut(p))
                {
                    object.remove("enum");
                }
            }
            ImportCode::EnumOutsideType => {
                // At `.../const`, or at the first value outside, `.../enum/N`.
                let up = if path.ends_with("/const") { 1 } else { 2 };
                if let Some(Value::Object(object)) =
                    parent(path, up).and_then(|p| read.pointer_mut(p))
                {
                    object.remove("type");
                }
            }
            ImportCode::ForbiddenKeyAllowed => {
                if let Some(property) = read.pointer_mut(path) {
                    *property = Value::Bool(true);
                }
            }
            ImportCode::NullableKeyword => {
                if let Some(at) = parent(path, 1) {
                    nullable.push(at);
                }
            }
            _ => {}
        }
    }
    // Last, and the deepest first: wrapping a schema moves what is inside it, and every place
    // above is still where it was.
    nullable.sort_by_key(|at| std::cmp::Reverse(at.matches('/').count()));
    for at in nullable {
        if let Some(subschema) = read.pointer_mut(at) {
            let mut inner = std::mem::take(subschema);
            if let Value::Object(object) = &mut inner {
                object.remove("nullable");
            }
            *subschema = serde_json::json!({"anyOf": [inner, {"type": "null"}]});
        }
    }
    read
}

/// `path` without its last `levels` segments, when it has that many.
fn parent(path: &str, levels: usize) -> Option<&str> {
    let mut at = path;
    for _ in 0..levels {
        at = &at[..at.rfind('/')?];
    }
    Some(at)
}

impl fmt::Debug for ImportedSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImportedSchema")
            .field("graph", &self.imported.graph)
            .field("warnings", &self.imported.warnings)
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// One finding of the validator as a coercion error: where in the value, the value there, and
/// which rule of the schema (its keyword and place) it breaks, in the validator's words.
fn violation(error: &jsonschema::ValidationError<'_>) -> CoerceError {
    let rule = error.schema_path().as_str();
    // The place in the schema ends with the keyword broken (`/properties/name/not`); the
    // error's kind may name a keyword that stands for it (`required` for `dependentRequired`).
    let keyword = match rule.rsplit_once('/') {
        Some((_, last)) if !last.is_empty() => unescape_segment(last),
        _ => error.kind().keyword().to_owned(),
    };
    let rule = if rule.is_empty() { "/" } else { rule };
    CoerceError::new(
        error.instance_path().as_str(),
        ErrorCode::SchemaViolation,
        Some(error.instance().clone().into_owned()),
        format!("a value that satisfies the schema's `{keyword}` at {rule} ({error})"),
    )
}
