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
///
/// Unless the command sets its own, it runs with [`search_path`]: cargo, and what cargo starts
/// (`cargo fuzz` looks `cargo-fuzz` up), then never search the current directory either.
pub fn run(command: &mut Command) -> Result<(), Error> {
    keep_to_absolute_path(command)?;
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

/// Runs `command` and returns its standard output, failing on a non-zero exit; its `PATH` is
/// as [`run`] sets it.
pub fn output(command: &mut Command) -> Result<String, Error> {
    keep_to_absolute_path(command)?;
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

/// The `PATH` xtask's children run with: `front` (when given) first, then the absolute entries
/// of xtask's own `PATH`; its empty and relative entries, which name the current directory, are
/// dropped.
pub fn search_path(front: Option<&Path>) -> Result<OsString, Error> {
    search_path_from(front, &std::env::var_os("PATH").unwrap_or_default())
}

fn search_path_from(front: Option<&Path>, current: &OsStr) -> Result<OsString, Error> {
    let dirs = front
        .map(Path::to_path_buf)
        .into_iter()
        .chain(std::env::split_paths(current).filter(|dir| dir.is_absolute()));
    std::env::join_paths(dirs).map_err(|e| Error::Failed(format!("cannot make PATH: {e}")))
}

/// Gives `command` [`search_path`] unless it sets its own `PATH`; with no absolute entry left,
/// none at all (an empty `PATH` would be one empty entry: the current directory).
fn keep_to_absolute_path(command: &mut Command) -> Result<(), Error> {
    if !command.get_envs().any(|(name, _)| name == "PATH") {
        let path = search_path(None)?;
        if path.is_empty() {
            command.env_remove("PATH");
        } else {
            command.env("PATH", path);
        }
    }
    Ok(())
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
    fn the_childrens_path_keeps_only_absolute_entries_after_the_one_put_first() {
        let path = search_path_from(
            Some(Path::new("/w/target/xtask-tools/bin")),
            OsStr::new(":.:/usr/bin:bin:/bin:"),
        );
        assert_eq!(path, Ok("/w/target/xtask-tools/bin:/usr/bin:/bin".into()));
        assert_eq!(
            search_path_from(None, OsStr::new(".:/usr/bin")),
            Ok("/usr/bin".into())
        );
    }

    #[test]
    fn a_command_without_its_own_path_gets_the_absolute_one() {
        let mut command = Command::new("/bin/true");
        keep_to_absolute_path(&mut command).unwrap();
        let set: Vec<_> = command.get_envs().collect();
        assert_eq!(set.len(), 1);
        assert_eq!(set[0].0, "PATH");
        assert_eq!(set[0].1, Some(search_path(None).unwrap().as_os_str()));

        let mut own = Command::new("/bin/true");
        own.env("PATH", "/opt/bin");
        keep_to_absolute_path(&mut own).unwrap();
        let set: Vec<_> = own.get_envs().collect();
        assert_eq!(set, [(OsStr::new("PATH"), Some(OsStr::new("/opt/bin")))]);
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
