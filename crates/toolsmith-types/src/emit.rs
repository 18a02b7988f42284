//! Schema emission: one walk over a [`Type`] that writes JSON Schema in a receiver's dialect.

use serde_json::Value;

use crate::ty::TypeGraph;

/// Which receiver a schema is written for. A value, not a fork of the emitter: the emitter
/// consults it as it walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Dialect {
    /// Canonical JSON Schema 2020-12: named types as `$defs` + `$ref`.
    #[default]
    JsonSchema,
}

/// Why a type could not be written in a dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmitError {
    /// A reference to a definition the graph does not have.
    DanglingRef(String),
    /// Tool parameters must be an object (a struct); this root is another kind.
    ParametersNotObject(&'static str),
}

impl std::fmt::Display for EmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmitError::DanglingRef(name) => write!(f, "reference to undefined type `{name}`"),
            EmitError::ParametersNotObject(kind) => {
                write!(f, "tool parameters must be an object, not {kind}")
            }
        }
    }
}

impl std::error::Error for EmitError {}

/// The JSON Schema of `graph` in `dialect`.
///
/// # Errors
/// When the graph has a dangling reference.
pub fn emit(graph: &TypeGraph, dialect: Dialect) -> Result<Value, EmitError> {
    let _ = (graph, dialect);
    todo!("emission")
}

/// The parameters object of a tool whose arguments are `graph` (a struct at the root).
///
/// # Errors
/// When the root is not a struct, or the graph has a dangling reference.
pub fn parameters_schema(graph: &TypeGraph, dialect: Dialect) -> Result<Value, EmitError> {
    let _ = (graph, dialect);
    todo!("parameters schema")
}
