//! Starting programs: always an argument vector, never a shell.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Error;

/// The cargo that started xtask (so `cargo +nightly xtask` stays on nightly), else `cargo`.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"))
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

/// The executable `name` in a directory of `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
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
    }
}
