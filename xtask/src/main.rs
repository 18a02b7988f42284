//! Project automation for the toolsmith workspace, run as `cargo xtask <task>`:
//!
//! - `ci`: the one command that says whether the tree is healthy (format, set-up, the
//!   dependency checks, clippy, tests with doctests, docs without warnings, a short soak of the
//!   HTTP server, a short fuzz run, the real-model run);
//! - `fuzz [TARGET] [--seconds N]`: build and run the cargo-fuzz targets in `fuzz/`;
//! - `deny`: license, ban and source checks of the dependency tree with cargo-deny;
//! - `layers`: each workspace crate's dependencies against the layers of ARCHITECTURE.md;
//! - `setup`: the real peer programs tests and benchmarks run against (a Python venv; Node 22
//!   and the MCP conformance suite), and cargo-deny (compiled once into `target/xtask-tools`);
//! - `bench [NAME...]`: the benchmarks (all, or those named), output passed through;
//! - `e2e`: the agent against a real local model (built once into `target/peers/llm`);
//! - `soak [--ci] [--seconds N] [--clients N]`: the MCP HTTP server under load and faults, alone and
//!   behind HAProxy (the `soak` program in `xtask/soak`);
//! - `conformance [--only server|client] [--expected-failures FILE] [--expected-client-failures
//!   FILE] [--server-command PROGRAM [ARG...]]`: the MCP conformance suite against toolsmith's
//!   conformance server and its MCP client, each side judged by a list of the scenarios expected
//!   to fail.
//!
//! xtask is a developer tool and must never be needed at run time: no crate of the workspace
//! depends on it, and nothing toolsmith ships calls it. It starts other programs only with an
//! argument vector, never through a shell, and by a full path: a name is looked up in the
//! absolute directories of `PATH` only, never in the current directory. Exit codes: 0 success (or a task that honestly
//! skipped, saying why), 1 a failed step, 2 a usage error.

mod bench;
mod ci;
mod conformance;
mod deny;
mod e2e;
mod fuzz;
mod layers;
mod modules;
mod peers;
mod process;
mod soak;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  ci                          fmt check, layers, set-up, deny, clippy -D warnings, tests (with
                              doctests), the conformance suite, docs without warnings, a
                              15 s soak per part, a 20 s fuzz run per target, then e2e
  setup                       install the peers tests run against into target/peers/venv,
                              Node 22 and the MCP conformance suite into target/peers/node,
                              and cargo-deny into target/xtask-tools (compiled once)
  fuzz [TARGET] [--seconds N] build and run the fuzz targets (all when TARGET is omitted)
                              for N seconds each (default 20)
  deny                        cargo-deny check licenses bans sources (installs cargo-deny
                              first, as setup does, when it is not there)
  layers                      each workspace crate's declared dependencies against the
                              layers of ARCHITECTURE.md (which crates it may use, whether
                              it may pull an async runtime)
  bench [NAME...]             run the benchmarks (all when no NAME is given)
  e2e                         the agent against a real local model served on 127.0.0.1
                              (builds llama-cpp-python into target/peers/llm once, ~5 min)
  soak [--ci] [--seconds N] [--clients N]
                              `toolsmith mcp --http` (release build) under N clients (200),
                              slow-header clients and an idle-connection burst for N seconds
                              (60), then two instances behind HAProxy with one killed and
                              restarted; prints throughput, latency, failures, RSS, a verdict
                              (--ci: CI's run, 15 s and 100 clients on debug builds)
  conformance [--only server|client] [--expected-failures FILE]
              [--expected-client-failures FILE] [--server-command PROGRAM [ARG...]]
                              the MCP conformance suite's server scenarios against the
                              example conformance_server of toolsmith-mcp (or the server
                              PROGRAM starts; `{port}` in its arguments becomes a free port
                              of 127.0.0.1), judged by xtask/conformance/expected-failures.txt,
                              and its client scenarios against the example conformance_client,
                              judged by xtask/conformance/expected-client-failures.txt
  help                        print this message";

/// Why a task did not succeed.
#[derive(Debug, PartialEq, Eq)]
pub enum Error {
    /// The command line was wrong (exit 2).
    Usage(String),
    /// A step ran and failed (exit 1).
    Failed(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Usage(message) => write!(f, "{message}\n\n{USAGE}"),
            Error::Failed(message) => f.write_str(message),
        }
    }
}

/// A task and its options, as read from the command line.
#[derive(Debug, PartialEq, Eq)]
enum Task {
    Ci,
    Fuzz(fuzz::Options),
    Deny,
    Layers,
    Setup,
    Bench(Vec<String>),
    E2e,
    Soak(soak::Options),
    Conformance(conformance::Options),
    Help,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = parse(&args).and_then(|task| run(task, &workspace_root()));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: error: {error}");
            match error {
                Error::Usage(_) => ExitCode::from(2),
                Error::Failed(_) => ExitCode::FAILURE,
            }
        }
    }
}

fn parse(args: &[String]) -> Result<Task, Error> {
    let Some((task, rest)) = args.split_first() else {
        return Err(Error::Usage("no task given".to_owned()));
    };
    let no_options = |task: Task| {
        if let Some(extra) = rest.first() {
            Err(Error::Usage(format!("unexpected argument `{extra}`")))
        } else {
            Ok(task)
        }
    };
    match task.as_str() {
        "ci" => no_options(Task::Ci),
        "fuzz" => fuzz::Options::parse(rest).map(Task::Fuzz),
        "deny" => no_options(Task::Deny),
        "layers" => no_options(Task::Layers),
        "setup" => no_options(Task::Setup),
        "bench" => bench::parse(rest).map(Task::Bench),
        "e2e" => no_options(Task::E2e),
        "soak" => soak::Options::parse(rest).map(Task::Soak),
        "conformance" => conformance::Options::parse(rest).map(Task::Conformance),
        "help" | "-h" | "--help" => Ok(Task::Help),
        other => Err(Error::Usage(format!("unknown task `{other}`"))),
    }
}

fn run(task: Task, root: &Path) -> Result<(), Error> {
    match task {
        Task::Ci => ci::run(root),
        Task::Fuzz(options) => fuzz::run(root, &options),
        Task::Deny => deny::run(root),
        Task::Layers => layers::run(root),
        Task::Setup => setup(root),
        Task::Bench(names) => bench::run(root, &names),
        Task::E2e => e2e::run(root),
        Task::Soak(options) => soak::run(root, &options),
        Task::Conformance(options) => conformance::run(root, &options),
        Task::Help => {
            println!("{USAGE}");
            Ok(())
        }
    }
}

/// The workspace root: xtask lives one level below it.
fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}

/// `cargo xtask setup`: the peer environments (Python, then Node), then cargo-deny.
fn setup(root: &Path) -> Result<(), Error> {
    peers::ensure(root)?;
    peers::ensure_node(root)?;
    deny::ensure(root).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn simple_tasks_parse() {
        assert_eq!(parse(&args(&["ci"])), Ok(Task::Ci));
        assert_eq!(parse(&args(&["deny"])), Ok(Task::Deny));
        assert_eq!(parse(&args(&["setup"])), Ok(Task::Setup));
        assert_eq!(parse(&args(&["bench"])), Ok(Task::Bench(Vec::new())));
        assert_eq!(parse(&args(&["e2e"])), Ok(Task::E2e));
        assert_eq!(
            parse(&args(&["soak"])),
            Ok(Task::Soak(soak::Options::default()))
        );
        assert_eq!(
            parse(&args(&["conformance"])),
            Ok(Task::Conformance(conformance::Options::default()))
        );
        assert_eq!(parse(&args(&["--help"])), Ok(Task::Help));
    }

    #[test]
    fn missing_task_is_a_usage_error() {
        assert!(matches!(parse(&[]), Err(Error::Usage(_))));
    }

    #[test]
    fn unknown_task_is_a_usage_error() {
        assert!(matches!(parse(&args(&["deploy"])), Err(Error::Usage(_))));
    }

    #[test]
    fn extra_argument_to_a_simple_task_is_a_usage_error() {
        assert!(matches!(
            parse(&args(&["ci", "--fast"])),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn workspace_root_holds_the_workspace_manifest() {
        assert!(workspace_root().join("Cargo.toml").is_file());
        assert!(workspace_root().join("xtask").is_dir());
    }
}
