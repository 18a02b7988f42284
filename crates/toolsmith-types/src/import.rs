//! JSON Schema import: building a [`TypeGraph`] from the schema subset tool definitions use.

use serde_json::Value;

use crate::ty::TypeGraph;

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
/// # Errors
/// Every keyword it does not understand or cannot represent, each with its path: nothing is
/// silently misread.
pub fn import(schema: &Value) -> Result<TypeGraph, ImportErrors> {
    let _ = schema;
    todo!("import")
}
