//! [`UsageError`]: a problem with how the command was used, printed on stderr (exit 2).

use std::fmt;
use std::path::PathBuf;

use toolsmith::{EmitError, EnvelopeError, ImportErrors, RegistryError};

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
    /// The registry could not be built.
    Registry(RegistryError),
    /// No registered tool has this name.
    UnknownTool {
        name: String,
        /// The nearest registered name, where one is close.
        did_you_mean: Option<String>,
        /// How many tools are registered.
        registered: usize,
    },
    /// A tool's schema cannot be written.
    Emit { tool: String, error: EmitError },
    /// A tool cannot be declared to the receiver asked for.
    Declare(EnvelopeError),
    /// An imported schema file cannot be written back.
    WriteBack { path: PathBuf, error: EmitError },
    /// Stdin could not be read.
    ReadStdin(std::io::Error),
    /// Stdout could not be written.
    Write(std::io::Error),
    /// JSON could not be printed.
    Print(serde_json::Error),
    /// A `--tools`, `--rename` or `--prefix` cannot be applied (a pattern that matches no tool,
    /// a name taken twice).
    Select {
        /// The flag.
        flag: &'static str,
        /// Why.
        error: RegistryError,
    },
    /// The statistics file cannot be written.
    Stats {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The MCP server could not start or stopped early.
    Serve(String),
    /// The agent's base URL cannot be used.
    BaseUrl(String),
    /// The agent's model cannot be asked as set up (no key for the provider's own API, say).
    Model(String),
    /// An MCP server asked for with `--mcp` could not be started, listed or added.
    Upstream(String),
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
            UsageError::Registry(error) => write!(f, "the tools cannot be registered: {error}"),
            UsageError::UnknownTool {
                name,
                did_you_mean,
                registered,
            } => {
                write!(f, "no tool is named `{name}`")?;
                match (did_you_mean, registered) {
                    (Some(near), _) => write!(f, "; did you mean `{near}`?"),
                    (None, 0) => f.write_str(": no tools are registered"),
                    (None, _) => f.write_str("; `toolsmith list` shows every tool"),
                }
            }
            UsageError::Emit { tool, error } => {
                write!(f, "the schema of tool `{tool}` cannot be written: {error}")
            }
            UsageError::Declare(error) => error.fmt(f),
            UsageError::WriteBack { path, error } => {
                write!(f, "`{}` cannot be written back: {error}", path.display())
            }
            UsageError::ReadStdin(error) => {
                write!(f, "cannot read the arguments from stdin: {error}")
            }
            UsageError::Write(error) => write!(f, "cannot write to stdout: {error}"),
            UsageError::Print(error) => write!(f, "cannot print the JSON: {error}"),
            UsageError::Select {
                flag,
                error: RegistryError::DuplicateName { name, .. },
            } => write!(f, "`{flag}`: two tools would be named `{name}`"),
            UsageError::Select { flag, error } => write!(f, "`{flag}`: {error}"),
            UsageError::Stats { path, error } => {
                write!(
                    f,
                    "cannot write the statistics to `{}`: {error}",
                    path.display()
                )
            }
            UsageError::Serve(why) => write!(f, "cannot serve MCP: {why}"),
            UsageError::BaseUrl(why) => write!(f, "--base-url: {why}"),
            UsageError::Model(why) => write!(f, "agent: {why}"),
            UsageError::Upstream(why) => write!(f, "--mcp: {why}"),
        }
    }
}
