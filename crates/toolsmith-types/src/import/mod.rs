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

mod all_of;
mod bounds;
mod reference;
mod vocabulary;
mod walk;

use std::collections::HashSet;

use serde_json::Value;

use crate::ty::TypeGraph;

pub use vocabulary::{ImportCode, ImportError, ImportErrors, ImportWarning};
use walk::Importer;

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
