//! [`LanguageModel`]: the one object-safe trait every model implements, and [`LmError`].

use std::fmt;
use std::time::Duration;

use crate::message::{Message, Request};

/// A chat model that can call tools: a conversation and tool declarations in, one assistant
/// message (text, tool calls, or both) out.
///
/// Object-safe and `Send + Sync`: agents hold an `Arc<dyn LanguageModel>`, so a client over HTTP
/// ([`OpenAiCompatible`](crate::OpenAiCompatible)) and a scripted one for tests
/// ([`ScriptedModel`](crate::ScriptedModel)) are interchangeable.
pub trait LanguageModel: Send + Sync {
    /// The model's next message.
    ///
    /// A request may carry a [`deadline`](Request::deadline): a model that waits on something
    /// (a server) stops waiting by then, so that an agent's run deadline holds over its model
    /// calls too.
    ///
    /// # Errors
    /// When the model cannot be reached or its reply cannot be read (see [`LmError`]).
    fn complete(&self, request: &Request<'_>) -> Result<Message, LmError>;
}

/// Why a model gave no message. Never holds an API key: a server's message that quotes the key
/// has it replaced by `[redacted]` before it gets here.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LmError {
    /// The server answered with an error status (after any retries).
    Status {
        /// The HTTP status.
        status: u16,
        /// The server's message (its `error.message`, else the start of its body).
        message: String,
        /// How many requests were made.
        attempts: u32,
    },
    /// The server asked to retry later than this client waits.
    RetryTooLate {
        /// The HTTP status (429 or 5xx).
        status: u16,
        /// How long the server asked to wait.
        retry_after: Duration,
    },
    /// The server could not be reached, or the connection broke.
    Unreachable {
        /// The URL asked.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// No answer came in time.
    Timeout {
        /// The URL asked.
        url: String,
        /// The time allowed per request.
        after: Duration,
    },
    /// The reply is not a chat completion this client can read.
    Malformed {
        /// What is wrong with it.
        reason: String,
    },
    /// A [`ScriptedModel`](crate::ScriptedModel) was asked more often than its script has replies.
    ScriptExhausted {
        /// How many replies the script had.
        replies: usize,
    },
}

impl fmt::Display for LmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LmError::Status {
                status,
                message,
                attempts,
            } => {
                write!(f, "the model server answered HTTP {status}: {message}")?;
                if *attempts > 1 {
                    write!(f, " (after {attempts} attempts)")?;
                }
                Ok(())
            }
            LmError::RetryTooLate {
                status,
                retry_after,
            } => write!(
                f,
                "the model server answered HTTP {status} and asked to retry after {}s, \
                 longer than this client waits",
                retry_after.as_secs()
            ),
            LmError::Unreachable { url, reason } => {
                write!(f, "cannot reach the model server at {url}: {reason}")
            }
            LmError::Timeout { url, after } => write!(
                f,
                "the model server at {url} did not answer within {}s",
                after.as_secs_f64()
            ),
            LmError::Malformed { reason } => {
                write!(f, "the model server's reply cannot be read: {reason}")
            }
            LmError::ScriptExhausted { replies } => write!(
                f,
                "the scripted model was asked for reply {} but its script has {replies}",
                replies + 1
            ),
        }
    }
}

impl std::error::Error for LmError {}
