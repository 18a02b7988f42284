//! The commands: read the inputs, call `toolsmith-types`, and shape what it returns for printing.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolsmith_types::{
    Arguments, CoerceError, CoerceErrors, Dialect, ErrorCode, ImportErrors, Policy, Type,
    TypeGraph, UnknownKeys, coerce_arguments, emit, import,
};

/// What a command prints on stdout, and whether the input it judged was valid.
#[derive(Debug)]
pub enum Outcome {
    /// The command did its job (exit 0).
    Success(String),
    /// The tool arguments are invalid; the text says why (exit 1).
    Invalid(String),
}

/// A problem with how the command was used (exit 2, message on stderr).
#[derive(Debug)]
pub enum UsageError {
    /// A file could not be read.
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A schema file is not JSON.
    NotJson {
        path: PathBuf,
        error: serde_json::Error,
    },
    /// A schema file does not import.
    Import { path: PathBuf, errors: ImportErrors },
    /// The schema of tool arguments is not an object.
    NotObject { path: PathBuf, kind: &'static str },
    /// Anything else, in words.
    Message(String),
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::Read { path, error } => {
                write!(f, "cannot read `{}`: {error}", path.display())
            }
            UsageError::NotJson { path, error } => {
                write!(f, "`{}` is not JSON: {error}", path.display())
            }
            UsageError::Import { path, errors } => {
                write!(f, "`{}` cannot be imported as a schema:", path.display())?;
                for error in &errors.0 {
                    write!(f, "\n  {error}")?;
                }
                Ok(())
            }
            UsageError::NotObject { path, kind } => write!(
                f,
                "`{}` must describe an object (`\"type\": \"object\"`) to describe tool \
                 arguments, not {kind}",
                path.display()
            ),
            UsageError::Message(message) => f.write_str(message),
        }
    }
}

/// The options of `toolsmith coerce`.
#[derive(Debug)]
pub struct CoerceOptions {
    /// The JSON Schema file.
    pub schema: PathBuf,
    /// The argument text; stdin when `None` or `-`.
    pub arguments: Option<String>,
    /// Use the strict policy.
    pub strict: bool,
    /// Ignore unknown keys instead of rejecting them.
    pub ignore_unknown: bool,
}

/// `toolsmith coerce`: the canonical arguments and their repairs, or every error.
pub fn coerce(options: &CoerceOptions) -> Result<Outcome, UsageError> {
    let graph = load_schema(&options.schema)?;
    match graph.resolved_root() {
        Some(Type::Struct(_) | Type::Map(_)) => {}
        other => {
            return Err(UsageError::NotObject {
                path: options.schema.clone(),
                kind: other.map_or("an unresolvable reference", Type::kind),
            });
        }
    }

    let mut policy = if options.strict {
        Policy::strict()
    } else {
        Policy::default()
    };
    if options.ignore_unknown {
        policy.unknown_keys = UnknownKeys::Ignore;
    }

    let text = match options.arguments.as_deref() {
        None | Some("-") => match read_stdin(policy.limits.max_input_bytes)? {
            Ok(text) => text,
            Err(error) => return Ok(invalid(&CoerceErrors(vec![error]))),
        },
        Some(text) => text.to_owned(),
    };

    Ok(
        match coerce_arguments(&graph, Arguments::Text(&text), &policy) {
            Ok(coerced) => Outcome::Success(
                json!({
                    "value": coerced.value,
                    "repairs": coerced.repairs.iter().map(|r| r.to_json()).collect::<Vec<_>>(),
                })
                .to_string(),
            ),
            Err(errors) => invalid(&errors),
        },
    )
}

fn invalid(errors: &CoerceErrors) -> Outcome {
    Outcome::Invalid(json!({ "errors": errors.to_json() }).to_string())
}

/// `toolsmith schema --from-json-schema`: the canonical JSON Schema, pretty-printed.
pub fn schema(path: &Path) -> Result<Outcome, UsageError> {
    let graph = load_schema(path)?;
    let emitted = emit(&graph, Dialect::JsonSchema).map_err(|e| {
        UsageError::Message(format!("`{}` cannot be written back: {e}", path.display()))
    })?;
    serde_json::to_string_pretty(&emitted)
        .map(Outcome::Success)
        .map_err(|e| UsageError::Message(format!("cannot print the schema: {e}")))
}

/// Reads, parses and imports a JSON Schema file.
fn load_schema(path: &Path) -> Result<TypeGraph, UsageError> {
    let text = std::fs::read_to_string(path).map_err(|error| UsageError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    let schema: Value = serde_json::from_str(&text).map_err(|error| UsageError::NotJson {
        path: path.to_path_buf(),
        error,
    })?;
    import(&schema).map_err(|errors| UsageError::Import {
        path: path.to_path_buf(),
        errors,
    })
}

/// Reads argument text from stdin, at most one byte past `limit` so that coercion reports the
/// size instead of this process holding an unbounded input. Text that is not UTF-8 is an
/// invalid-arguments error, not a usage problem.
fn read_stdin(limit: usize) -> Result<Result<String, CoerceError>, UsageError> {
    let mut bytes = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    std::io::stdin()
        .lock()
        .take(cap)
        .read_to_end(&mut bytes)
        .map_err(|e| UsageError::Message(format!("cannot read the arguments from stdin: {e}")))?;
    if bytes.len() > limit {
        // Past the limit the content no longer matters: coercion reports `too_large`.
        return Ok(Ok(String::from_utf8_lossy(&bytes).into_owned()));
    }
    Ok(String::from_utf8(bytes).map_err(|e| {
        CoerceError::new(
            "",
            ErrorCode::JsonInvalid,
            None,
            format!(
                "JSON text in UTF-8 (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    }))
}
