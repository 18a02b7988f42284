//! The processes a soak run starts (`toolsmith mcp --http`, HAProxy): started with an argument
//! vector, watched, measured, and killed when their handle is dropped, however the run ends.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a server may take to say where it listens.
const STARTUP: Duration = Duration::from_secs(20);
/// How many of a process's log lines are kept for the report (the last ones).
const KEPT_LINES: usize = 20;

/// A child process that is killed (SIGKILL) and reaped when dropped.
pub struct Guarded {
    name: String,
    child: Child,
    /// What it printed on stderr after its first line: a count and the last lines.
    log: Arc<Mutex<Log>>,
}

/// A process's stderr, as far as a report needs it.
#[derive(Debug, Default, Clone)]
pub struct Log {
    /// Lines read.
    pub lines: usize,
    /// The last [`KEPT_LINES`] of them.
    pub last: Vec<String>,
}

impl Guarded {
    /// Starts `command` with no stdin or stdout and its stderr read line by line; returns it
    /// and a channel of its stderr's lines (the first `first_lines` of them; the rest only go
    /// to its [`Log`]).
    fn spawn(
        name: &str,
        mut command: Command,
        first_lines: usize,
    ) -> Result<(Guarded, Receiver<String>), String> {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {name} ({}): {e}", describe(&command)))?;
        let log = Arc::new(Mutex::new(Log::default()));
        let (lines, receiver) = mpsc::channel();
        if let Some(stderr) = child.stderr.take() {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for (index, line) in BufReader::new(stderr)
                    .lines()
                    .map_while(Result::ok)
                    .enumerate()
                {
                    if index < first_lines {
                        let _ = lines.send(line);
                        continue;
                    }
                    if let Ok(mut log) = log.lock() {
                        log.lines += 1;
                        if log.last.len() == KEPT_LINES {
                            log.last.remove(0);
                        }
                        log.last.push(line);
                    }
                }
            });
        }
        let guarded = Guarded {
            name: name.to_owned(),
            child,
            log,
        };
        Ok((guarded, receiver))
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Its exit status, if it has exited.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// What it printed on stderr after its first line.
    pub fn log(&self) -> Log {
        self.log.lock().map(|log| log.clone()).unwrap_or_default()
    }

    /// Kills it at once (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        // Only this child, by its own handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends it SIGTERM (with the system's `kill` program, found on `PATH`) and waits up to
    /// `within` for it to exit; its exit status, or why there is none.
    pub fn terminate(&mut self, within: Duration) -> Result<ExitStatus, String> {
        let kill = find_on_path("kill").ok_or("`kill` is not on PATH")?;
        let status = Command::new(kill)
            .args(["-s", "TERM", &self.pid().to_string()])
            .status()
            .map_err(|e| format!("cannot run kill: {e}"))?;
        if !status.success() {
            return Err(format!("kill -s TERM {} failed ({status})", self.pid()));
        }
        let started = Instant::now();
        while started.elapsed() < within {
            if let Some(status) = self.exit_status() {
                return Ok(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!(
            "{} did not exit within {:.0} s of SIGTERM",
            self.name,
            within.as_secs_f64()
        ))
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        if self.is_running() {
            self.kill();
        }
    }
}

/// The resident memory of process `pid`, in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

/// How to start `toolsmith mcp --http`.
#[derive(Debug, Clone)]
pub struct ServerCommand {
    /// The `toolsmith` binary.
    pub toolsmith: PathBuf,
    /// util-linux's `prlimit`, to start it with at most `nofile` open files.
    pub prlimit: PathBuf,
    /// Its limit of open files (soft and hard).
    pub nofile: u64,
}

/// `toolsmith mcp --http` running.
pub struct Server {
    pub process: Guarded,
    /// Where it listens, as it announced.
    pub addr: SocketAddr,
}

impl Server {
    /// Starts `toolsmith mcp --http LISTEN` (under `prlimit --nofile`) and waits for the line
    /// that says where it listens.
    pub fn start(name: &str, how: &ServerCommand, listen: &str) -> Result<Server, String> {
        let mut command = Command::new(&how.prlimit);
        command
            .arg(format!("--nofile={0}:{0}", how.nofile))
            .arg(&how.toolsmith)
            .args(["mcp", "--http", listen]);
        let (process, lines) = Guarded::spawn(name, command, 1)?;
        let line = lines.recv_timeout(STARTUP).map_err(|_| {
            format!(
                "{name} did not say where it listens within {} s",
                STARTUP.as_secs()
            )
        })?;
        let addr = line
            .strip_prefix("toolsmith: listening on http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .and_then(|addr| addr.parse().ok())
            .ok_or_else(|| format!("{name} printed {line:?}, not its address"))?;
        Ok(Server { process, addr })
    }
}

/// HAProxy, as installed by `cargo xtask soak` (its libraries beside it).
#[derive(Debug, Clone)]
pub struct HaproxyCommand {
    /// The `haproxy` binary.
    pub program: PathBuf,
    /// Where the libraries it needs and the system lacks are (`LD_LIBRARY_PATH`), if anywhere.
    pub library_path: Option<OsString>,
}

impl HaproxyCommand {
    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        if let Some(path) = &self.library_path {
            command.env("LD_LIBRARY_PATH", path);
        }
        command
    }

    /// Checks the configuration file `config` (`haproxy -c`).
    pub fn check(&self, config: &Path) -> Result<(), String> {
        let mut command = self.command();
        command.arg("-c").arg("-f").arg(config);
        let out = command
            .output()
            .map_err(|e| format!("cannot run {}: {e}", describe(&command)))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "HAProxy refuses {}: {}{}",
                config.display(),
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// Starts HAProxy in the foreground (`-db`) on `config`.
    pub fn start(&self, config: &Path) -> Result<Guarded, String> {
        let mut command = self.command();
        command.arg("-db").arg("-f").arg(config);
        Guarded::spawn("haproxy", command, 0).map(|(process, _)| process)
    }
}

/// The program `name` in an absolute directory of `PATH`, to start by its full path: an empty
/// or relative entry names the current directory, where a planted program would run.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// `command` as a line, for messages.
fn describe(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}
