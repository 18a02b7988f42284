//! Running gh: one argv, no shell, a deadline, and errors that say what happened without ever
//! showing a token.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use toolsmith::Context;

use crate::error::{GitHubError, Stop};
use crate::locate::{self, Program};

/// How long gh may run before it is killed, unless the toolset is told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The environment variables gh reads a token from; their values are never shown.
const TOKEN_VARIABLES: &[&str] = &[
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
];

/// How often a running gh's call is looked at, to stop gh once the call is cancelled or past
/// its deadline: the most a caller that gave up waits for gh to be gone. A look is a few
/// atomic reads; the wait between looks sleeps until gh exits or the slice ends.
const WATCH: Duration = Duration::from_millis(20);

/// The most of gh's error output an error quotes.
const MAX_QUOTED: usize = 2000;

/// How to start gh: which program, with what extra environment, for how long at most.
#[derive(Clone)]
pub(crate) struct Gh {
    pub(crate) program: Program,
    pub(crate) timeout: Duration,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) dir: Option<PathBuf>,
}

/// Shows the environment's names only: a value may be a token.
impl fmt::Debug for Gh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<_> = self.env.iter().map(|(name, _)| name).collect();
        f.debug_struct("Gh")
            .field("program", &self.program)
            .field("timeout", &self.timeout)
            .field("env", &names)
            .field("dir", &self.dir)
            .finish()
    }
}

impl Default for Gh {
    fn default() -> Self {
        Gh {
            program: Program::default(),
            timeout: DEFAULT_TIMEOUT,
            env: Vec::new(),
            dir: None,
        }
    }
}

impl Gh {
    /// Runs gh with `args` and returns what it printed on standard output.
    ///
    /// The program is located anew on every call, in the `PATH` the child will see: a lookup
    /// is a handful of `stat` calls, nothing beside starting gh, and a result kept from an
    /// earlier call would go stale when gh is installed, moved or upgraded while a long-lived
    /// server runs.
    ///
    /// gh is killed, and the call answered [`GitHubError::Stopped`], once `context` is
    /// cancelled or its deadline passes (looked at every [`WATCH`]); and answered
    /// [`GitHubError::Timeout`] once the toolset's own timeout passes.
    pub(crate) fn run(&self, args: &[OsString], context: &Context) -> Result<String, GitHubError> {
        let command = self.describe(args);
        let program = self.program.locate(self.path_variable().as_deref())?;
        let mut expression = duct::cmd(&program, args)
            .stdin_null()
            .stdout_capture()
            .stderr_capture()
            .unchecked()
            // Never wait for a person: no prompts, no update check, no pager.
            .env("GH_PROMPT_DISABLED", "1")
            .env("GH_NO_UPDATE_NOTIFIER", "1")
            .env("GH_PAGER", "")
            .env("NO_COLOR", "1");
        for (name, value) in &self.env {
            expression = expression.env(name, value);
        }
        if let Some(dir) = &self.dir {
            expression = expression.dir(dir);
        }
        let handle = expression
            .start()
            .map_err(|error| self.start_error(&program, &error))?;
        // Kill, then reap, so that no gh outlives the call.
        let stop = |error: GitHubError| {
            let _ = handle.kill();
            let _ = handle.wait();
            Err(error)
        };
        // A timeout too long to be a deadline (`Duration::MAX`) is no deadline.
        let deadline = Instant::now().checked_add(self.timeout);
        let output = loop {
            // Waited for in slices, the call's context looked at between them: a call
            // cancelled or past its deadline stops gh within a slice.
            let slice = Instant::now().checked_add(WATCH);
            let until = match (deadline, slice) {
                (Some(deadline), Some(slice)) => Some(deadline.min(slice)),
                (deadline, slice) => deadline.or(slice),
            };
            let waited = match until {
                Some(until) => handle.wait_deadline(until),
                None => handle.wait().map(Some),
            };
            match waited {
                Ok(Some(output)) => break output,
                Ok(None) => {}
                Err(error) => {
                    return stop(GitHubError::Io {
                        command,
                        message: self.redact(&error.to_string()),
                    });
                }
            }
            if let Some(why) = stopped(context) {
                return stop(GitHubError::Stopped { command, why });
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return stop(GitHubError::Timeout {
                    command,
                    after: self.timeout,
                });
            }
        };
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let stdout = String::from_utf8_lossy(&output.stdout);
            let said = if stderr.trim().is_empty() {
                stdout
            } else {
                stderr
            };
            return Err(GitHubError::Failed {
                command,
                status: output
                    .status
                    .code()
                    .map_or_else(|| "killed by a signal".to_owned(), |c| c.to_string()),
                stderr: quote(&self.redact(said.trim())),
            });
        }
        String::from_utf8(output.stdout.clone()).map_err(|_| GitHubError::UnexpectedOutput {
            command,
            reason: "it is not UTF-8 text".to_owned(),
        })
    }

    /// The `PATH` gh will run with: the last one set with the toolset's environment, else the
    /// process's own.
    fn path_variable(&self) -> Option<OsString> {
        self.env
            .iter()
            .rev()
            .find(|(name, _)| name == "PATH")
            .map(|(_, value)| value.clone())
            .or_else(|| std::env::var_os("PATH"))
    }

    fn start_error(&self, program: &std::path::Path, error: &io::Error) -> GitHubError {
        locate::start_error(program, error).unwrap_or_else(|| GitHubError::Io {
            command: program.display().to_string(),
            message: self.redact(&error.to_string()),
        })
    }

    /// How a command is shown in an error: `gh` and its arguments (which hold only checked
    /// values, never a token).
    pub(crate) fn describe(&self, args: &[OsString]) -> String {
        let mut out = String::from("gh");
        for arg in args {
            out.push(' ');
            let arg = arg.to_string_lossy();
            if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || c == '"') {
                out.push_str(&format!("{arg:?}"));
            } else {
                out.push_str(&arg);
            }
        }
        out
    }

    /// `text` with the value of every token variable (the toolset's, then the process's)
    /// replaced by `[redacted]`.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for name in TOKEN_VARIABLES {
            let configured = self
                .env
                .iter()
                .filter(|(key, _)| key == OsStr::new(name))
                .map(|(_, value)| value.clone());
            for value in configured.chain(std::env::var_os(name)) {
                let value = value.to_string_lossy();
                // A token too short to be one would redact ordinary words.
                if value.trim().len() >= 4 {
                    out = out.replace(value.trim(), "[redacted]");
                }
            }
        }
        out
    }
}

/// Text cut to [`MAX_QUOTED`] characters.
fn quote(text: &str) -> String {
    if text.chars().count() <= MAX_QUOTED {
        text.to_owned()
    } else {
        let head: String = text.chars().take(MAX_QUOTED).collect();
        format!("{head}... (cut)")
    }
}

/// Why `context`'s call has stopped waiting, if it has.
fn stopped(context: &Context) -> Option<Stop> {
    if context.is_cancelled_by_caller() {
        Some(Stop::Cancelled)
    } else if context.is_past_deadline() {
        Some(Stop::DeadlinePassed)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn gh_with_token(token: &str) -> Gh {
        Gh {
            env: vec![("GH_TOKEN".into(), token.into())],
            ..Gh::default()
        }
    }

    #[test]
    fn a_configured_token_is_redacted() {
        let gh = gh_with_token("ghp_secret123");
        assert_eq!(
            gh.redact("HTTP 401: bad token ghp_secret123 (https://x)"),
            "HTTP 401: bad token [redacted] (https://x)"
        );
    }

    #[test]
    fn debug_output_names_the_environment_but_never_shows_a_value() {
        let shown = format!("{:?}", gh_with_token("ghp_secret123"));
        assert!(shown.contains("\"GH_TOKEN\""), "{shown}");
        assert!(!shown.contains("ghp_secret123"), "{shown}");
    }

    #[test]
    fn a_token_too_short_to_be_one_redacts_nothing() {
        assert_eq!(gh_with_token("a").redact("a cat"), "a cat");
    }

    #[test]
    fn a_missing_program_says_how_to_install_gh() {
        let gh = Gh {
            program: Program::from_user("/nonexistent/gh".into()),
            ..Gh::default()
        };
        let error = gh.run(&["--version".into()], &Context::new()).unwrap_err();
        assert!(matches!(error, GitHubError::GhMissing { .. }), "{error:?}");
        let message = error.to_string();
        assert!(
            message.contains("`/nonexistent/gh` does not exist"),
            "{message}"
        );
        assert!(message.contains("https://cli.github.com"), "{message}");
    }

    #[test]
    fn a_command_is_shown_with_quoted_words_where_they_hold_spaces() {
        let args: Vec<OsString> = ["issue", "list", "--label=good first issue"]
            .into_iter()
            .map(OsString::from)
            .collect();
        assert_eq!(
            Gh::default().describe(&args),
            "gh issue list \"--label=good first issue\""
        );
    }

    #[test]
    fn long_error_output_is_cut() {
        let quoted = quote(&"x".repeat(MAX_QUOTED + 10));
        assert!(quoted.ends_with("... (cut)"));
        assert_eq!(quoted.chars().count(), MAX_QUOTED + "... (cut)".len());
    }
}
