//! `cargo xtask fuzz`: builds and runs the cargo-fuzz targets in `fuzz/`.
//!
//! Seeds are read from `fuzz/seeds/<target>/`; what libFuzzer finds goes to
//! `fuzz/corpus/<target>/` (not versioned). cargo-fuzz is taken from `PATH`, or installed once
//! into `target/xtask-tools`. Nightly is used when rustup has it; otherwise stable with
//! `RUSTC_BOOTSTRAP=1`. `XTASK_FUZZ_TOOLCHAIN=stable` (or `nightly`) overrides the choice.
//!
//! The targets are built without a sanitizer ([`BUILD_OPTIONS`]), optimized and with debug
//! assertions and overflow checks (cargo-fuzz's default); each input is at most
//! [`MAX_INPUT_BYTES`]. Each target's summary gives its executions, their rate, and the coverage
//! (`cov`, edges) and features (`ft`) libFuzzer reached.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::{Error, process};

/// Seconds each target runs when `--seconds` is not given.
pub const DEFAULT_SECONDS: u64 = 20;

/// Longest a single input may run before libFuzzer reports it as a hang.
const INPUT_TIMEOUT_SECONDS: u64 = 10;

/// Largest input libFuzzer makes. Every target's inputs are text a model or a client sends, and
/// an execution costs about its length: 2 KiB holds nesting past every depth limit, a handful
/// of MCP lines and one over the MCP target's 1 KiB line limit, and keeps executions many
/// whatever corpus a run starts from (without it, libFuzzer takes the largest file found
/// there). The MCP target ran at about 2,000 executions a second with 4 KiB inputs and 4,800
/// with 2 KiB, reaching the same coverage in the same time.
const MAX_INPUT_BYTES: usize = 2048;

/// How `cargo fuzz build` and `cargo fuzz run` build the targets.
///
/// No sanitizer: every crate of the workspace forbids unsafe code (the `unsafe_code = "forbid"`
/// lint), so AddressSanitizer, cargo-fuzz's default, looks only for what safe Rust cannot do,
/// while it made `coerce_arguments` 4.7 times slower (2,084 executions a second against 9,782)
/// and `import_schema` 6.8 times (8,368 against 56,910). What is left to find here (panics;
/// overflows, which the debug assertions kept on turn into panics, for 5% of the rate; hangs;
/// runaway memory, which libFuzzer's RSS limit still catches; broken laws) needs no sanitizer.
const BUILD_OPTIONS: &[&str] = &["--sanitizer", "none"];

/// The options of `cargo xtask fuzz`.
#[derive(Debug, PartialEq, Eq)]
pub struct Options {
    /// Only this target; every target when `None`.
    pub target: Option<String>,
    /// How long each target runs.
    pub seconds: u64,
}

impl Options {
    /// Reads `[TARGET] [--seconds N]`.
    pub fn parse(args: &[String]) -> Result<Options, Error> {
        let mut target = None;
        let mut seconds = DEFAULT_SECONDS;
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            if let Some(value) = arg.strip_prefix("--seconds=") {
                seconds = parse_seconds(value)?;
            } else if arg == "--seconds" {
                let value = args
                    .next()
                    .ok_or_else(|| Error::Usage("`--seconds` needs a value".to_owned()))?;
                seconds = parse_seconds(value)?;
            } else if arg.starts_with('-') {
                return Err(Error::Usage(format!("unknown option `{arg}`")));
            } else if target.is_some() {
                return Err(Error::Usage(format!("unexpected argument `{arg}`")));
            } else {
                target = Some(arg.clone());
            }
        }
        Ok(Options { target, seconds })
    }
}

fn parse_seconds(value: &str) -> Result<u64, Error> {
    match value.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Error::Usage(format!(
            "`--seconds` takes a whole number of seconds above 0, not `{value}`"
        ))),
    }
}

/// `cargo xtask fuzz`.
pub fn run(root: &Path, options: &Options) -> Result<(), Error> {
    let fuzzer = Fuzzer::prepare(root)
        .map_err(|Unavailable(reason)| Error::Failed(format!("cannot fuzz: {reason}")))?;
    fuzzer
        .run_all(options.target.as_deref(), options.seconds)
        .map(|_| ())
}

/// Why fuzzing cannot run on this machine (in CI: a reason to skip, not a failure).
#[derive(Debug)]
pub struct Unavailable(pub String);

/// How the fuzz targets are compiled: they need unstable compiler flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Toolchain {
    /// `cargo +nightly fuzz`.
    Nightly,
    /// `cargo fuzz` on stable, with `RUSTC_BOOTSTRAP=1`.
    StableBootstrap,
}

/// A ready fuzzing set-up: cargo-fuzz found and a toolchain chosen.
pub struct Fuzzer {
    root: PathBuf,
    toolchain: Toolchain,
    /// A directory to put in front of `PATH` so `cargo fuzz` finds cargo-fuzz.
    tools_bin: Option<PathBuf>,
}

/// The result of one target's run.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RunLog {
    /// Inputs executed, from libFuzzer's closing line.
    pub executions: Option<u64>,
    /// Seconds libFuzzer reports it ran.
    pub seconds: Option<u64>,
    /// Executions a second, as libFuzzer counts them over the whole run.
    pub rate: Option<u64>,
    /// Coverage reached: edges (`cov`) and features (`ft`), from the last status line.
    pub coverage: Option<u64>,
    /// See [`coverage`](RunLog::coverage).
    pub features: Option<u64>,
    /// Inputs in the corpus at the end.
    pub corpus: Option<u64>,
    /// The input libFuzzer saved after a crash, leak or hang.
    pub artifact: Option<String>,
}

impl RunLog {
    /// Takes what it needs from one line of libFuzzer's output.
    pub fn observe(&mut self, line: &str) {
        let line = line.trim();
        // "Done 123456 runs in 20 second(s)"
        if let Some(rest) = line.strip_prefix("Done ") {
            let mut words = rest.split_whitespace();
            if let (Some(runs), Some("runs"), Some("in"), Some(secs)) =
                (words.next(), words.next(), words.next(), words.next())
                && let Ok(runs) = runs.parse()
            {
                self.executions = Some(runs);
                self.seconds = secs.parse().ok();
            }
        }
        // "#123456\tDONE   cov: 812 ft: 2345 corp: 120/4Kb lim: 4096 exec/s: 4938 rss: 50Mb",
        // and the same fields on every status line before it ("pulse", "NEW", "REDUCE", ...).
        if let Some(rest) = line.strip_prefix('#') {
            let mut words = rest.split_whitespace();
            let (Some(runs), Some(event)) = (words.next(), words.next()) else {
                return;
            };
            let Ok(runs) = runs.parse() else {
                return;
            };
            let mut fields = words;
            while let (Some(name), Some(value)) = (fields.next(), fields.next()) {
                let number = value.split('/').next().and_then(|n| n.parse().ok());
                match name {
                    "cov:" => self.coverage = number.or(self.coverage),
                    "ft:" => self.features = number.or(self.features),
                    "corp:" => self.corpus = number.or(self.corpus),
                    "exec/s:" if event == "DONE" => self.rate = number,
                    _ => {}
                }
            }
            if event == "DONE" {
                self.executions = Some(runs);
            }
        }
        // "stat::average_exec_per_sec:    4938"
        if let Some(rate) = line.strip_prefix("stat::average_exec_per_sec:")
            && let Ok(rate) = rate.trim().parse()
        {
            self.rate = Some(rate);
        }
        // "artifact_prefix='...'; Test unit written to fuzz/artifacts/t/crash-..."
        if let Some((_, path)) = line.split_once("Test unit written to ") {
            self.artifact = Some(path.trim().to_owned());
        }
    }
}

impl Fuzzer {
    /// Finds (or installs) cargo-fuzz and chooses the toolchain.
    pub fn prepare(root: &Path) -> Result<Fuzzer, Unavailable> {
        if !cfg!(any(target_os = "linux", target_os = "macos")) {
            return Err(Unavailable(
                "libFuzzer targets are only run on Linux and macOS".to_owned(),
            ));
        }
        if !root.join("fuzz").join("Cargo.toml").is_file() {
            return Err(Unavailable("fuzz/Cargo.toml does not exist".to_owned()));
        }
        let tools_bin = cargo_fuzz_location(root)?;
        let toolchain = match std::env::var("XTASK_FUZZ_TOOLCHAIN").as_deref() {
            Ok("nightly") => Toolchain::Nightly,
            Ok("stable") => Toolchain::StableBootstrap,
            Ok(other) => {
                return Err(Unavailable(format!(
                    "XTASK_FUZZ_TOOLCHAIN is `{other}`; it may be `stable` or `nightly`"
                )));
            }
            Err(_) if has_nightly() => Toolchain::Nightly,
            Err(_) => Toolchain::StableBootstrap,
        };
        Ok(Fuzzer {
            root: root.to_path_buf(),
            toolchain,
            tools_bin,
        })
    }

    /// `cargo fuzz` on the chosen toolchain, run from the workspace root.
    fn cargo_fuzz(&self) -> Result<Command, Error> {
        let mut command = match self.toolchain {
            Toolchain::Nightly => {
                // `+nightly` is understood by rustup's cargo proxy, which sits beside rustup.
                let proxy = process::find_on_path("rustup")
                    .and_then(|rustup| rustup.parent().map(|dir| dir.join("cargo")))
                    .filter(|cargo| process::is_executable(cargo));
                let cargo = match proxy {
                    Some(proxy) => proxy,
                    None => process::program("cargo")?,
                };
                let mut command = Command::new(cargo);
                command.arg("+nightly");
                command
            }
            Toolchain::StableBootstrap => {
                let mut command = Command::new(process::cargo()?);
                command.env("RUSTC_BOOTSTRAP", "1");
                command
            }
        };
        command.arg("fuzz").current_dir(&self.root);
        command.env("PATH", process::search_path(self.tools_bin.as_deref())?);
        Ok(command)
    }

    /// The targets declared in `fuzz/Cargo.toml`.
    pub fn targets(&self) -> Result<Vec<String>, Error> {
        let mut command = self.cargo_fuzz()?;
        command.arg("list");
        let listed = process::output(&mut command)?;
        Ok(listed
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// Builds, then runs `only` (or every target) for `seconds` each; returns each target's log.
    pub fn run_all(
        &self,
        only: Option<&str>,
        seconds: u64,
    ) -> Result<Vec<(String, RunLog)>, Error> {
        let all = self.targets()?;
        if all.is_empty() {
            return Err(Error::Failed(
                "fuzz/Cargo.toml declares no targets".to_owned(),
            ));
        }
        let selected = match only {
            None => all,
            Some(name) if all.iter().any(|t| t == name) => vec![name.to_owned()],
            Some(name) => {
                return Err(Error::Usage(format!(
                    "no fuzz target `{name}`; the targets are {}",
                    all.join(", ")
                )));
            }
        };
        println!(
            "fuzz: toolchain {}",
            match self.toolchain {
                Toolchain::Nightly => "nightly",
                Toolchain::StableBootstrap => "stable with RUSTC_BOOTSTRAP=1",
            }
        );
        self.build(only)?;
        let mut logs = Vec::with_capacity(selected.len());
        for target in selected {
            let log = self.run_target(&target, seconds)?;
            logs.push((target, log));
        }
        println!("fuzz: summary");
        for (target, log) in &logs {
            println!("  {target}: {}", summary(log, seconds));
        }
        Ok(logs)
    }

    fn build(&self, only: Option<&str>) -> Result<(), Error> {
        self.forget_failed_probe()?;
        let mut command = self.cargo_fuzz()?;
        command.arg("build").args(BUILD_OPTIONS);
        command.args(only);
        process::run(&mut command)
    }

    /// On stable, cargo caches the compiler's answers in `.rustc_info.json`; a cached failure
    /// from a run without `RUSTC_BOOTSTRAP` would break this one.
    fn forget_failed_probe(&self) -> Result<(), Error> {
        if self.toolchain != Toolchain::StableBootstrap {
            return Ok(());
        }
        let info = self
            .root
            .join("fuzz")
            .join("target")
            .join(".rustc_info.json");
        match std::fs::remove_file(&info) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::Failed(format!(
                "cannot remove {}: {e}",
                info.display()
            ))),
        }
    }

    fn run_target(&self, target: &str, seconds: u64) -> Result<RunLog, Error> {
        let fuzz_dir = self.root.join("fuzz");
        let corpus = fuzz_dir.join("corpus").join(target);
        std::fs::create_dir_all(&corpus)
            .map_err(|e| Error::Failed(format!("cannot create {}: {e}", corpus.display())))?;
        let seeds = fuzz_dir.join("seeds").join(target);

        let mut command = self.cargo_fuzz()?;
        command
            .arg("run")
            .args(BUILD_OPTIONS)
            .arg(target)
            .arg(&corpus);
        if seeds.is_dir() {
            command.arg(&seeds);
        }
        command
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-timeout={INPUT_TIMEOUT_SECONDS}"))
            .arg(format!("-max_len={MAX_INPUT_BYTES}"))
            .arg("-print_final_stats=1");

        println!("fuzz: {target} for {seconds} s");
        let line = process::describe(&command);
        eprintln!("$ {line}");
        let started = Instant::now();
        let mut child = command
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::Failed(format!("could not start `{line}`: {e}")))?;

        // libFuzzer reports on stderr: pass every line through and keep what the summary needs.
        let mut log = RunLog::default();
        if let Some(stderr) = child.stderr.take() {
            let mut reader = BufReader::new(stderr);
            let mut buf = Vec::new();
            let mut err = std::io::stderr();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let _ = err.write_all(&buf);
                        log.observe(&String::from_utf8_lossy(&buf));
                    }
                }
            }
        }
        let status = child
            .wait()
            .map_err(|e| Error::Failed(format!("`{line}` did not finish: {e}")))?;
        if log.seconds.is_none() {
            log.seconds = Some(started.elapsed().as_secs());
        }

        if status.success() {
            println!("fuzz: {target}: {}", summary(&log, seconds));
            Ok(log)
        } else {
            let found = match &log.artifact {
                Some(path) => format!("the failing input is {path}"),
                None => "no input was saved (see the output above)".to_owned(),
            };
            Err(Error::Failed(format!(
                "fuzz target `{target}` failed ({status}); {found}"
            )))
        }
    }
}

fn summary(log: &RunLog, requested: u64) -> String {
    let known = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    let runs = log
        .executions
        .map_or_else(|| "an unknown number of".to_owned(), |n| n.to_string());
    format!(
        "{runs} executions in {} s ({}/s), cov {}, ft {}, corpus {}",
        log.seconds.unwrap_or(requested),
        known(log.rate),
        known(log.coverage),
        known(log.features),
        known(log.corpus),
    )
}

/// Where cargo-fuzz is: `None` when it is on `PATH`, else the `bin` directory it was installed to.
fn cargo_fuzz_location(root: &Path) -> Result<Option<PathBuf>, Unavailable> {
    if process::find_on_path("cargo-fuzz").is_some() {
        return Ok(None);
    }
    let tools = root.join("target").join("xtask-tools");
    let bin = tools.join("bin");
    if process::is_executable(&bin.join("cargo-fuzz")) {
        return Ok(Some(bin));
    }
    println!("fuzz: installing cargo-fuzz into target/xtask-tools (once)");
    let cargo = process::cargo().map_err(|e| Unavailable(e.to_string()))?;
    let mut install = Command::new(cargo);
    install
        .args(["install", "cargo-fuzz", "--locked", "--root"])
        .arg(&tools)
        .current_dir(root);
    process::run(&mut install)
        .map_err(|e| Unavailable(format!("cargo-fuzz could not be installed: {e}")))?;
    Ok(Some(bin))
}

/// Whether rustup has a nightly toolchain installed.
fn has_nightly() -> bool {
    let Ok(rustup) = process::program("rustup") else {
        return false;
    };
    let mut command = Command::new(rustup);
    command.args(["toolchain", "list"]);
    process::output(&mut command)
        .map(|list| list.lines().any(|line| line.trim().starts_with("nightly")))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn no_options_fuzz_every_target_for_twenty_seconds() {
        assert_eq!(
            Options::parse(&[]),
            Ok(Options {
                target: None,
                seconds: 20
            })
        );
    }

    #[test]
    fn target_and_seconds_are_read_in_either_order() {
        let expected = Options {
            target: Some("import_schema".to_owned()),
            seconds: 5,
        };
        assert_eq!(
            Options::parse(&args(&["import_schema", "--seconds", "5"])).as_ref(),
            Ok(&expected)
        );
        assert_eq!(
            Options::parse(&args(&["--seconds=5", "import_schema"])),
            Ok(expected)
        );
    }

    #[test]
    fn zero_or_non_numeric_seconds_are_usage_errors() {
        for bad in [["--seconds", "0"], ["--seconds", "ten"]] {
            assert!(matches!(Options::parse(&args(&bad)), Err(Error::Usage(_))));
        }
        assert!(matches!(
            Options::parse(&args(&["--seconds"])),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn two_targets_are_a_usage_error() {
        assert!(matches!(
            Options::parse(&args(&["a", "b"])),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn executions_are_read_from_the_done_line() {
        let mut log = RunLog::default();
        log.observe("#524288\tpulse  cov: 1200 ft: 4000 corp: 300/20Kb exec/s: 26214 rss: 90Mb");
        log.observe("Done 612345 runs in 21 second(s)");
        assert_eq!(log.executions, Some(612_345));
        assert_eq!(log.seconds, Some(21));
    }

    #[test]
    fn executions_are_read_from_the_hash_done_line() {
        let mut log = RunLog::default();
        log.observe("#98765\tDONE   cov: 812 ft: 2345 corp: 120/4Kb lim: 4096 exec/s: 4938");
        assert_eq!(log.executions, Some(98_765));
    }

    #[test]
    fn pulse_lines_are_not_taken_for_the_total() {
        let mut log = RunLog::default();
        log.observe("#1024\tpulse  cov: 10 ft: 12 corp: 3/12b exec/s: 512 rss: 30Mb");
        assert_eq!(log.executions, None);
        assert_eq!(log.rate, None);
        assert_eq!(
            (log.coverage, log.features, log.corpus),
            (Some(10), Some(12), Some(3))
        );
    }

    #[test]
    fn coverage_features_and_rate_are_read_from_the_closing_lines() {
        let mut log = RunLog::default();
        log.observe("#1024\tNEW    cov: 10 ft: 12 corp: 3/12b lim: 4 exec/s: 512 rss: 30Mb L: 3/3");
        log.observe(
            "#98765\tDONE   cov: 812 ft: 2345 corp: 120/4Kb lim: 4096 exec/s: 4938 rss: 50Mb",
        );
        assert_eq!(log.rate, Some(4938));
        log.observe("stat::average_exec_per_sec:     4939");
        assert_eq!(log.rate, Some(4939));
        assert_eq!(
            (log.coverage, log.features, log.corpus),
            (Some(812), Some(2345), Some(120))
        );
        assert_eq!(
            summary(&log, 20),
            "98765 executions in 20 s (4939/s), cov 812, ft 2345, corpus 120"
        );
    }

    #[test]
    fn crash_artifact_path_is_kept() {
        let mut log = RunLog::default();
        log.observe(
            "artifact_prefix='/w/fuzz/artifacts/import_schema/'; Test unit written to \
             /w/fuzz/artifacts/import_schema/crash-da39a3ee",
        );
        assert_eq!(
            log.artifact.as_deref(),
            Some("/w/fuzz/artifacts/import_schema/crash-da39a3ee")
        );
    }
}
