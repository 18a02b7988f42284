//! Starting programs: always an argument vector, never a shell.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

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

/// Runs `command` with no input and its output (both streams) written to the file `log`,
/// for at most `timeout`: its exit status, or `None` when it was still running then and was
/// killed. Its `PATH` is as [`run`] sets it.
pub fn run_logged(
    command: &mut Command,
    log: &Path,
    timeout: Duration,
) -> Result<Option<ExitStatus>, Error> {
    let line = describe(command);
    eprintln!("$ {line} > {}", log.display());
    let file = File::create(log)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", log.display())))?;
    let file_err = file
        .try_clone()
        .map_err(|e| Error::Failed(format!("cannot share {}: {e}", log.display())))?;
    command.stdin(Stdio::null()).stdout(file).stderr(file_err);
    let mut child = Running::spawn(command)?;
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            child.kill();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A child process that is killed (SIGKILL, by its own handle) and reaped when dropped, so
/// that it ends however the task does: success, failure or panic.
#[derive(Debug)]
pub struct Running {
    child: Child,
}

impl Running {
    /// Starts `command`; its `PATH` is as [`run`] sets it.
    pub fn spawn(command: &mut Command) -> Result<Running, Error> {
        keep_to_absolute_path(command)?;
        let child = command
            .spawn()
            .map_err(|e| Error::Failed(format!("could not start `{}`: {e}", describe(command))))?;
        Ok(Running { child })
    }

    /// The child, to take its pipes.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Its exit status, if it has exited.
    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>, Error> {
        self.child
            .try_wait()
            .map_err(|e| Error::Failed(format!("cannot wait for process {}: {e}", self.child.id())))
    }

    /// Kills it at once and reaps it, and kills the processes it started, and theirs (a
    /// wrapper such as `env` or `npx` and the server it starts), as far as Linux's `/proc`
    /// lists them.
    pub fn kill(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        let descendants = descendants(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !descendants.is_empty()
            && let Some(kill) = find_on_path("kill")
        {
            let _ = Command::new(kill)
                .args(["-s", "KILL", "--"])
                .args(descendants.iter().map(u32::to_string))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// The processes `pid` started, and the ones they started, from `/proc/PID/task/TID/children`
/// (empty where the system has no such files).
fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        let tasks = std::fs::read_dir(format!("/proc/{parent}/task"));
        for task in tasks.into_iter().flatten().flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                // Bounded: a process appears once, and a tree is finite.
                if !found.contains(&child) && child != pid {
                    found.push(child);
                    queue.push(child);
                }
            }
        }
    }
    found
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port of 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16, Error> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|e| Error::Failed(format!("no free port on 127.0.0.1: {e}")))
}

/// Cargo's target directory: `CARGO_TARGET_DIR` (relative to the workspace root when it is
/// relative), else `target` under the workspace root.
pub fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map_or_else(|| root.join("target"), |dir| root.join(dir))
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

    #[cfg(target_os = "linux")]
    #[test]
    fn killing_a_process_kills_the_processes_it_started() {
        let Some(sh) = find_on_path("sh") else {
            return;
        };
        // `sh` starts a `sleep` and waits for it: killing only `sh` would leave the `sleep`.
        let mut command = Command::new(sh);
        command.args(["-c", "sleep 30; :"]);
        let mut running = Running::spawn(&mut command).unwrap();
        let started = Instant::now();
        let mut children = Vec::new();
        while children.is_empty() && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
            children = descendants(running.child_mut().id());
        }
        assert_eq!(children.len(), 1, "{children:?}");
        running.kill();
        let gone = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map_or(true, |stat| stat.contains(") Z "))
        };
        let started = Instant::now();
        while !gone(children[0]) && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(children[0]));
    }

    #[cfg(unix)]
    #[test]
    fn a_logged_run_past_its_timeout_is_killed_and_says_so() {
        let dir = std::env::temp_dir().join(format!("xtask-logged-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("out.log");
        let sh = find_on_path("sh").unwrap();
        let started = Instant::now();
        let killed = run_logged(
            Command::new(&sh).args(["-c", "echo started; sleep 30"]),
            &log,
            Duration::from_millis(300),
        );
        assert_eq!(killed.unwrap(), None);
        assert!(started.elapsed() < Duration::from_secs(10));
        let done = run_logged(
            Command::new(&sh).args(["-c", "echo done >&2; exit 3"]),
            &log,
            Duration::from_secs(10),
        );
        assert_eq!(done.unwrap().and_then(|status| status.code()), Some(3));
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "done\n");
        let _ = std::fs::remove_dir_all(&dir);
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
