//! What import reports: the stable [`ImportCode`] of each finding, the [`ImportError`]s that
//! refuse a schema (together, [`ImportErrors`]) and the [`ImportWarning`]s of a lenient import,
//! each with its JSON Pointer into the schema and rendered as `path: message`.

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
