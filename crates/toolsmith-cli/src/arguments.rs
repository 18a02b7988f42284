//! The tool arguments a command reads: the flags of the [`Policy`] they are coerced under
//! ([`PolicyArgs`], and [`parse_dialect`] for every `--dialect`), and their text, given on the
//! command line or read from stdin ([`argument_text`]).

use std::io::Read;

use clap::Args;
use toolsmith::{CoerceError, Dialect, ErrorCode, Policy, UnknownKeys};

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
