//! The `toolsmith` command line.
//!
//! It only reads its arguments and files, calls the libraries, and prints what they return: every
//! decision about types, schemas and coercion lives in `toolsmith-types`, where a library user
//! gets the same behaviour. It never panics on user input.
//!
//! Exit codes: 0 success; 1 the tool arguments given are invalid (the errors are printed as JSON
//! on stdout); 2 a usage problem (a bad command line, a schema file that cannot be read or
//! imported), with the message on stderr.

mod commands;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands::{Outcome, UsageError};

/// Define LLM tools once, typed and described; inspect their schemas and coerce their arguments.
#[derive(Debug, Parser)]
#[command(name = "toolsmith", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Coerce tool arguments against a JSON Schema.
    ///
    /// Prints one JSON object: `{"value": ..., "repairs": [...]}` when the arguments are valid
    /// (exit 0), `{"errors": [...]}` when they are not (exit 1).
    Coerce {
        /// The JSON Schema of the arguments; its root must be `type: object`.
        #[arg(long, value_name = "FILE")]
        schema: PathBuf,
        /// The arguments as JSON text; read from stdin when omitted or `-`.
        #[arg(value_name = "ARGS_JSON")]
        arguments: Option<String>,
        /// Refuse every repair: anything not already canonical is an error.
        #[arg(long)]
        strict: bool,
        /// Drop keys the schema does not declare instead of rejecting them.
        #[arg(long)]
        ignore_unknown: bool,
    },
    /// Print a schema in its canonical form.
    Schema {
        /// Import this JSON Schema file and print its canonical re-emission.
        #[arg(long = "from-json-schema", value_name = "FILE")]
        from_json_schema: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Coerce {
            schema,
            arguments,
            strict,
            ignore_unknown,
        } => commands::coerce(&commands::CoerceOptions {
            schema,
            arguments,
            strict,
            ignore_unknown,
        }),
        Command::Schema { from_json_schema } => commands::schema(&from_json_schema),
    };
    match result {
        Ok(Outcome::Success(text)) => print(&text, ExitCode::SUCCESS),
        Ok(Outcome::Invalid(text)) => print(&text, ExitCode::from(1)),
        Err(error) => fail(&error),
    }
}

fn print(text: &str, code: ExitCode) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Ok(()) => code,
        Err(e) => fail(&UsageError::Message(format!("cannot write to stdout: {e}"))),
    }
}

fn fail(error: &UsageError) -> ExitCode {
    // Nothing more can be reported if stderr is gone too.
    let _ = writeln!(std::io::stderr().lock(), "toolsmith: error: {error}");
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
