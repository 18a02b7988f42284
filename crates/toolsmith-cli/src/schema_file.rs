//! A JSON Schema file read and imported as a type ([`load_schema`]), or kept beside its type for
//! the validator backstop ([`load_checked_schema`]), each liberty the import took a line for
//! stderr.

use std::path::Path;

use serde_json::Value;
use toolsmith::{ImportOptions, ImportWarning, ImportedSchema, TypeGraph, import_with};

use crate::error::UsageError;

/// Reads, parses and imports a JSON Schema file: leniently unless `strict`, with every liberty
/// the import took as a line for stderr.
pub fn load_schema(path: &Path, strict: bool) -> Result<(TypeGraph, Vec<String>), UsageError> {
    let schema = read_schema(path)?;
    let imported =
        import_with(&schema, &import_options(strict)).map_err(|errors| UsageError::Import {
            path: path.to_path_buf(),
            errors,
        })?;
    let warnings = warning_lines(path, &imported.warnings);
    Ok((imported.graph, warnings))
}

/// As [`load_schema`], keeping the schema for the validator backstop: what coercing values
/// against a schema file uses, so that the keywords the type cannot hold are enforced too.
pub fn load_checked_schema(
    path: &Path,
    strict: bool,
) -> Result<(ImportedSchema, Vec<String>), UsageError> {
    let schema = read_schema(path)?;
    let imported = ImportedSchema::new(schema, &import_options(strict)).map_err(|errors| {
        UsageError::Import {
            path: path.to_path_buf(),
            errors,
        }
    })?;
    let mut warnings = warning_lines(path, imported.warnings());
    if !warnings.is_empty() {
        warnings.push(format!(
            "toolsmith: note: `{}`: every coerced value is then checked against the schema \
             itself, so what the type reads loosely above is still enforced",
            path.display()
        ));
    }
    Ok((imported, warnings))
}

fn read_schema(path: &Path) -> Result<Value, UsageError> {
    let text = std::fs::read_to_string(path).map_err(|error| UsageError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    serde_json::from_str(&text).map_err(|error| UsageError::NotJson {
        path: path.to_path_buf(),
        error,
    })
}

fn import_options(strict: bool) -> ImportOptions {
    if strict {
        ImportOptions::strict()
    } else {
        ImportOptions::lenient()
    }
}

/// Every liberty an import took, each a line for stderr.
fn warning_lines(path: &Path, warnings: &[ImportWarning]) -> Vec<String> {
    warnings
        .iter()
        .map(|warning| format!("toolsmith: warning: `{}`: {warning}", path.display()))
        .collect()
}
