//! [`ServeError`]: why serving could not start or stopped.

use std::fmt;

use toolsmith::{EnvelopeError, RegistryError};

/// Why a server could not start, or stopped early.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServeError {
    /// The registry could not be built (say, two tools share a name).
    Registry(RegistryError),
    /// A tool cannot be declared to MCP clients (its name or its schema).
    Declare(EnvelopeError),
    /// A tool's MCP envelope does not read as rmcp's tool declaration.
    Declaration {
        /// The tool.
        tool: String,
        /// Why.
        error: serde_json::Error,
    },
    /// A setting of the [`McpConfig`](crate::McpConfig) cannot serve (a zero limit, an allowed
    /// host or origin that does not read as one).
    InvalidConfig {
        /// The setting, as its `McpConfig` method names it (`max_connections`, ...).
        setting: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The async runtime could not start.
    Runtime(std::io::Error),
    /// The HTTP address could not be resolved or bound.
    Bind {
        /// The address, as given.
        addr: String,
        /// Why.
        error: std::io::Error,
    },
    /// The handlers of the signals that stop the server could not be installed.
    Signal(std::io::Error),
    /// The client never completed the MCP handshake, or the connection broke.
    Connection(String),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Registry(error) => write!(f, "{error}"),
            ServeError::Declare(error) => write!(f, "{error}"),
            ServeError::Declaration { tool, error } => {
                write!(
                    f,
                    "tool `{tool}` cannot be declared to MCP clients: {error}"
                )
            }
            ServeError::InvalidConfig { setting, problem } => {
                write!(f, "the server setting `{setting}` {problem}")
            }
            ServeError::Runtime(error) => write!(f, "cannot start the async runtime: {error}"),
            ServeError::Bind { addr, error } => write!(f, "cannot listen on `{addr}`: {error}"),
            ServeError::Signal(error) => {
                write!(
                    f,
                    "cannot install the handlers of SIGINT and SIGTERM: {error}"
                )
            }
            ServeError::Connection(why) => write!(f, "MCP connection failed: {why}"),
        }
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServeError::Registry(error) => Some(error),
            ServeError::Declare(error) => Some(error),
            ServeError::Runtime(error) | ServeError::Signal(error) => Some(error),
            ServeError::Bind { error, .. } => Some(error),
            ServeError::Declaration { error, .. } => Some(error),
            ServeError::InvalidConfig { .. } | ServeError::Connection(_) => None,
        }
    }
}

impl From<RegistryError> for ServeError {
    fn from(error: RegistryError) -> Self {
        ServeError::Registry(error)
    }
}

impl From<EnvelopeError> for ServeError {
    fn from(error: EnvelopeError) -> Self {
        ServeError::Declare(error)
    }
}
