//! Which file runs as gh: a name is looked up in the absolute directories of `PATH` (never the
//! current directory), a path is used as given.
//!
//! A relative program path handed to a process launcher is a path, not a name: it runs
//! `./gh` from wherever the process (or the child, once it changed directory) happens to be, so
//! an executable planted in an untrusted checkout would run. Resolving the name here, to an
//! absolute path, is what keeps that from happening. An empty or relative `PATH` entry (`.`,
//! `bin`) also means "the current directory", and is skipped for the same reason.
//!
//! The lookup is hand-written rather than taken from a crate because its policy is the point:
//! the `which` crate (like the shell's `which`) searches relative entries, and does not say
//! whether a name was absent or present but not executable.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use crate::error::GitHubError;

/// What the toolset was told to run as gh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Program {
    /// A bare name (no directory separator), looked up on `PATH`.
    Name(OsString),
    /// A path, used as given; a relative one is relative to the process's current directory.
    Path(PathBuf),
}

impl Default for Program {
    fn default() -> Self {
        Program::Name(OsString::from("gh"))
    }
}

impl Program {
    /// `program` as a user wrote it: a bare name such as `gh` is a name, as in a shell; anything
    /// with a directory separator (`./gh`, `/usr/bin/gh`, `bin/gh`) is a path.
    pub(crate) fn from_user(program: PathBuf) -> Program {
        if is_bare_name(&program) {
            Program::Name(program.into_os_string())
        } else {
            Program::Path(program)
        }
    }

    /// The file to start: a name found in `path_variable` (the `PATH` the child will see), or
    /// the given path, made absolute against the process's current directory so that a
    /// directory set for the child does not change which file runs.
    pub(crate) fn locate(&self, path_variable: Option<&OsStr>) -> Result<PathBuf, GitHubError> {
        match self {
            Program::Name(name) => find_on_path(name, path_variable),
            Program::Path(path) => {
                std::path::absolute(path).map_err(|error| GitHubError::GhMissing {
                    program: path.display().to_string(),
                    reason: error.to_string(),
                })
            }
        }
    }
}

/// Whether `program` is one file name with no directory in it.
fn is_bare_name(program: &Path) -> bool {
    let mut components = program.components();
    matches!(
        (components.next(), components.next()),
        (Some(std::path::Component::Normal(_)), None)
    ) && !program
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .any(|&byte| std::path::is_separator(char::from(byte)))
}

/// The first executable file `name` in an absolute directory of `path_variable`.
///
/// A file of that name that cannot be executed (a directory, no execute permission) is passed
/// over, as a shell does, and is what the error names when nothing executable is found.
fn find_on_path(name: &OsStr, path_variable: Option<&OsStr>) -> Result<PathBuf, GitHubError> {
    let file_name = with_exe_suffix(name);
    let mut searched = Vec::new();
    let mut skipped = Vec::new();
    let mut unusable = None;
    for dir in path_variable
        .map(std::env::split_paths)
        .into_iter()
        .flatten()
    {
        if !dir.is_absolute() {
            skipped.push(dir.display().to_string());
            continue;
        }
        let candidate = dir.join(&file_name);
        searched.push(dir.display().to_string());
        let Ok(meta) = std::fs::metadata(&candidate) else {
            continue;
        };
        match not_executable_because(&meta) {
            None => return Ok(candidate),
            Some(reason) => {
                unusable.get_or_insert((candidate, reason));
            }
        }
    }
    if let Some((candidate, reason)) = unusable {
        return Err(GitHubError::GhNotExecutable {
            program: candidate.display().to_string(),
            reason: reason.to_owned(),
        });
    }
    Err(GitHubError::GhNotOnPath {
        name: name.to_string_lossy().into_owned(),
        path_set: path_variable.is_some(),
        searched,
        skipped,
    })
}

/// `name` with the platform's executable suffix (`.exe` on Windows, nothing elsewhere).
fn with_exe_suffix(name: &OsStr) -> OsString {
    let mut file_name = name.to_owned();
    if Path::new(name).extension().is_none() {
        file_name.push(std::env::consts::EXE_SUFFIX);
    }
    file_name
}

/// Why a file with this metadata cannot be started, or `None` when it can.
fn not_executable_because(meta: &std::fs::Metadata) -> Option<&'static str> {
    if meta.is_dir() {
        return Some("it is a directory");
    }
    if !meta.is_file() {
        return Some("it is not a regular file");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 == 0 {
            return Some("it has no execute permission");
        }
    }
    None
}

/// The error for a located `program` that the system would not start.
pub(crate) fn start_error(program: &Path, error: &io::Error) -> Option<GitHubError> {
    /// `ENOEXEC` on Linux, macOS and the BSDs: the file is not a format the kernel runs.
    const EXEC_FORMAT_ERROR: i32 = 8;
    let shown = program.display().to_string();
    let meta = std::fs::metadata(program);
    if let Ok(meta) = &meta
        && let Some(reason) = not_executable_because(meta)
    {
        return Some(GitHubError::GhNotExecutable {
            program: shown,
            reason: reason.to_owned(),
        });
    }
    match error.kind() {
        io::ErrorKind::NotFound if meta.is_err() => Some(GitHubError::GhMissing {
            program: shown,
            reason: "no such file".to_owned(),
        }),
        // The file is there: what is missing is a script's interpreter or a loader.
        io::ErrorKind::NotFound => Some(GitHubError::GhNotExecutable {
            program: shown,
            reason: format!(
                "the system could not start it ({error}; a script's interpreter may be missing)"
            ),
        }),
        io::ErrorKind::PermissionDenied => Some(GitHubError::GhNotExecutable {
            program: shown,
            reason: format!("the system refused to start it ({error})"),
        }),
        _ if error.raw_os_error() == Some(EXEC_FORMAT_ERROR) => {
            Some(GitHubError::GhNotExecutable {
                program: shown,
                reason: format!("it is not a program this system runs ({error})"),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_bare_name_is_a_name_and_anything_with_a_separator_is_a_path() {
        assert_eq!(Program::from_user("gh".into()), Program::Name("gh".into()));
        for path in ["./gh", "bin/gh", "/usr/bin/gh", "gh/", "..", "."] {
            assert!(
                matches!(Program::from_user(path.into()), Program::Path(_)),
                "{path}"
            );
        }
    }

    #[test]
    fn the_default_program_is_the_name_gh() {
        assert_eq!(Program::default(), Program::Name("gh".into()));
    }

    #[test]
    fn an_unset_path_finds_nothing_and_says_path_is_not_set() {
        let error = Program::default().locate(None).unwrap_err();
        assert_eq!(
            error,
            GitHubError::GhNotOnPath {
                name: "gh".into(),
                path_set: false,
                searched: Vec::new(),
                skipped: Vec::new(),
            }
        );
    }

    #[test]
    fn relative_and_empty_entries_are_skipped_and_named() {
        let error = Program::default()
            .locate(Some(OsStr::new(":.:bin:/nonexistent-toolsmith-dir")))
            .unwrap_err();
        let GitHubError::GhNotOnPath {
            searched, skipped, ..
        } = &error
        else {
            panic!("{error:?}");
        };
        assert_eq!(searched, &["/nonexistent-toolsmith-dir"]);
        assert_eq!(skipped, &["", ".", "bin"]);
    }

    #[test]
    fn a_long_path_is_named_up_to_a_bound() {
        let mut dirs: Vec<String> = (0..40).map(|i| format!("/nonexistent-{i}")).collect();
        dirs.extend((0..20).map(|i| format!("relative-{i}")));
        let error = Program::default()
            .locate(Some(OsStr::new(&dirs.join(":"))))
            .unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("/nonexistent-15, and 24 more directories)"),
            "{message}"
        );
        assert!(!message.contains("/nonexistent-16"), "{message}");
        assert!(
            message.contains("\"relative-15\", and 4 more were not searched"),
            "{message}"
        );
        assert!(!message.contains("relative-16"), "{message}");
    }

    #[test]
    fn a_relative_path_is_made_absolute_against_the_current_directory() {
        let located = Program::from_user("bin/gh".into()).locate(None).unwrap();
        assert_eq!(located, std::env::current_dir().unwrap().join("bin/gh"));
    }

    #[test]
    fn a_missing_file_that_failed_to_start_is_missing() {
        let error = io::Error::from(io::ErrorKind::NotFound);
        assert!(matches!(
            start_error(Path::new("/nonexistent/gh"), &error),
            Some(GitHubError::GhMissing { .. })
        ));
    }

    #[test]
    fn a_directory_is_not_executable() {
        let error = io::Error::from(io::ErrorKind::PermissionDenied);
        let dir = std::env::temp_dir();
        assert_eq!(
            start_error(&dir, &error),
            Some(GitHubError::GhNotExecutable {
                program: dir.display().to_string(),
                reason: "it is a directory".into(),
            })
        );
    }
}
