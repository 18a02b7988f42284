//! Starting programs: always an argument vector, never a shell.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Error;

/// The cargo that started xtask (so `cargo +nightly xtask` stays on nightly), else `cargo` found
/// on `PATH` (see [`program`]).
pub fn cargo() -> Result<OsString, Error> {
    match std::env::var_os("CARGO") {
        Some(cargo) => Ok(cargo),
        None => program("cargo").map(PathBuf::into_os_string),
    }
}

/// The program `name`, found in an absolute directory of `PATH`, to start by its full path.
///
/// A bare name handed to [`Command::new`] is searched by the system in every `PATH` entry,
/// and an empty or relative one (`.`, `bin`) means the current directory: a program planted in
/// a checkout would run. Resolving names here first keeps that from happening.
pub fn program(name: &str) -> Result<PathBuf, Error> {
    find_on_path(name).ok_or_else(|| {
        Error::Failed(format!(
            "`{name}` was not found in any absolute directory of PATH (relative entries, which \
             name the current directory, are not searched)"
        ))
    })
}

/// The command line of `command`, for messages.
pub fn describe(command: &Command) -> String {
    let program = Path::new(command.get_program())
        .file_name()
        .unwrap_or_else(|| command.get_program())
        .to_string_lossy()
        .into_owned();
    std::iter::once(program)
        .chain(command.get_args().map(quote))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote(arg: &OsStr) -> String {
    let text = arg.to_string_lossy();
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=+./:@,".contains(c))
    {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Runs `command` with the terminal's standard streams, failing on a non-zero exit.
pub fn run(command: &mut Command) -> Result<(), Error> {
    let line = describe(command);
    eprintln!("$ {line}");
    let status = command
        .status()
        .map_err(|e| Error::Failed(format!("could not start `{line}`: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::Failed(format!("`{line}` failed ({status})")))
    }
}

/// Runs `command` and returns its standard output, failing on a non-zero exit.
pub fn output(command: &mut Command) -> Result<String, Error> {
    let line = describe(command);
    let out = command
        .output()
        .map_err(|e| Error::Failed(format!("could not start `{line}`: {e}")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(Error::Failed(format!(
            "`{line}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// The executable `name` in an absolute directory of `PATH` (never the current directory).
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    find_in(name, &std::env::var_os("PATH")?)
}

/// The executable `name` in an absolute directory of the `PATH` value `path`; empty and
/// relative entries are skipped.
fn find_in(name: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// Whether `path` is a file this process could execute.
pub fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// `PATH` with `dir` in front of it.
pub fn path_with(dir: &Path) -> Result<OsString, Error> {
    let current = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&current));
    std::env::join_paths(dirs)
        .map_err(|e| Error::Failed(format!("cannot add {} to PATH: {e}", dir.display())))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn described_command_quotes_arguments_with_spaces() {
        let mut command = Command::new("/usr/bin/cargo");
        command.args(["fuzz", "run", "a b", "-max_total_time=20"]);
        assert_eq!(
            describe(&command),
            "cargo fuzz run 'a b' -max_total_time=20"
        );
    }

    #[test]
    fn missing_program_is_not_found_on_path() {
        assert_eq!(find_on_path("xtask-no-such-program-anywhere"), None);
        assert!(matches!(
            program("xtask-no-such-program-anywhere"),
            Err(Error::Failed(message)) if message.contains("absolute directory of PATH")
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_program_is_found_in_an_absolute_path_entry_and_never_through_a_relative_one() {
        let dir = std::env::temp_dir().join(format!("xtask-find-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tool = dir.join("xtask-planted-tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // The same directory spelled relative to the current one, as `.` or `bin` would be.
        let cwd = std::env::current_dir().unwrap();
        let up: PathBuf = cwd.components().skip(1).map(|_| "..").collect();
        let relative = up.join(dir.strip_prefix("/").unwrap());
        assert!(is_executable(&relative.join("xtask-planted-tool")));
        let found = |path: &Path| find_in("xtask-planted-tool", path.as_os_str());
        assert_eq!(found(&relative), None);
        assert_eq!(found(&dir), Some(tool.clone()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
