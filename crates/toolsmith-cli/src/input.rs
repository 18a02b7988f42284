//! Reading what a command works on: the policy flags, argument text, schema files, tool names.

use std::io::Read;
use std::path::Path;

use clap::Args;
use serde_json::Value;
use toolsmith::{
    CoerceError, Dialect, ErrorCode, ImportOptions, ImportWarning, ImportedSchema, Policy,
    RegisteredTool, Registry, ToolError, TypeGraph, UnknownKeys, import_with,
};

use crate::error::UsageError;

/// The flags that build the coercion [`Policy`].
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// Refuse every repair: anything not already canonical is an error.
    #[arg(long)]
    strict: bool,
    /// Drop keys the schema does not declare instead of rejecting them.
    #[arg(long)]
    ignore_unknown: bool,
    /// The receiver whose wire shapes the arguments are in (say openai-strict, which sends null
    /// for an omitted optional): those shapes are then read as no repairs.
    #[arg(long, value_name = "DIALECT", value_parser = parse_dialect)]
    dialect: Option<Dialect>,
}

/// A dialect from its command-line name; the error lists the names.
pub fn parse_dialect(name: &str) -> Result<Dialect, String> {
    name.parse::<Dialect>().map_err(|error| error.to_string())
}

impl PolicyArgs {
    /// The policy the flags ask for: the default (lenient) one unless `--strict`.
    pub fn policy(&self) -> Policy {
        let mut policy = if self.strict {
            Policy::strict()
        } else {
            Policy::default()
        };
        if self.ignore_unknown {
            policy.unknown_keys = UnknownKeys::Ignore;
        }
        match self.dialect {
            Some(dialect) => policy.with_dialect(dialect),
            None => policy,
        }
    }
}

/// The argument text `given` on the command line, or read from `stdin` when it is `-`, where
/// argument text of at most `limit` bytes is accepted (the limit of the policy the arguments are
/// read under: for `call`, the tool's own where it states one).
///
/// Text that is not UTF-8, or stdin holding more than `limit` bytes, is an invalid-arguments
/// error, not a usage problem.
pub fn argument_text(
    given: &str,
    stdin: &mut dyn Read,
    limit: usize,
) -> Result<Result<String, CoerceError>, UsageError> {
    if given == "-" {
        read_stdin(stdin, limit)
    } else {
        Ok(Ok(given.to_owned()))
    }
}

/// Reads argument text from stdin, at most one byte past `limit`: this process never holds more
/// than the arguments may be, and a longer input is refused as `too_large` (its size is known
/// only to be over the limit: reading on to count it would be unbounded work).
fn read_stdin(
    stdin: &mut dyn Read,
    limit: usize,
) -> Result<Result<String, CoerceError>, UsageError> {
    let mut bytes = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    stdin
        .take(cap)
        .read_to_end(&mut bytes)
        .map_err(UsageError::ReadStdin)?;
    if bytes.len() > limit {
        return Ok(Err(CoerceError::new(
            "",
            ErrorCode::TooLarge,
            None,
            format!(
                "argument text of at most {limit} bytes; standard input holds over {limit} bytes"
            ),
        )));
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

/// The tool named `name`, or an error naming it with the nearest registered name.
pub fn find_tool<'r>(registry: &'r Registry, name: &str) -> Result<&'r RegisteredTool, UsageError> {
    let did_you_mean = match registry.find(name) {
        Ok(entry) => return Ok(entry),
        Err(ToolError::NotFound { did_you_mean, .. }) => did_you_mean,
        Err(_) => None,
    };
    Err(UsageError::UnknownTool {
        name: name.to_owned(),
        did_you_mean,
        registered: registry.len(),
    })
}
