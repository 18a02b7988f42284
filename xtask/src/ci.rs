//! `cargo xtask ci`: every check, in order, stopping at the first failure.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::{Error, conformance, deny, e2e, fuzz, layers, process, soak};

/// Seconds each fuzz target runs in CI.
const FUZZ_SECONDS: u64 = 20;

/// One check: a cargo command, or one of xtask's own tasks.
enum Check {
    Cargo {
        args: &'static [&'static str],
        env: &'static [(&'static str, &'static str)],
    },
    Fuzz,
    /// `cargo xtask setup`: the peers the tests run against, and cargo-deny.
    Setup,
    /// `cargo xtask deny`: licenses, bans and sources of the dependency tree.
    Deny,
    /// `cargo xtask layers`: each crate's dependencies against the layers.
    Layers,
    /// `cargo xtask e2e`: the agent against a real local model.
    E2e,
    /// `cargo xtask soak`, short and on debug builds.
    Soak,
    /// `cargo xtask conformance`: the MCP conformance suite against the example server and the
    /// example client.
    Conformance,
}

const STEPS: &[(&str, Check)] = &[
    (
        "fmt",
        Check::Cargo {
            args: &["fmt", "--all", "--", "--check"],
            env: &[],
        },
    ),
    ("layers", Check::Layers),
    ("setup", Check::Setup),
    ("deny", Check::Deny),
    (
        "clippy",
        Check::Cargo {
            args: &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
            env: &[],
        },
    ),
    (
        "test",
        Check::Cargo {
            args: &["test", "--workspace"],
            // A test whose peer is missing fails here instead of skipping.
            env: &[("TOOLSMITH_REQUIRE_PEERS", "1")],
        },
    ),
    ("conformance", Check::Conformance),
    (
        "doc",
        Check::Cargo {
            args: &["doc", "--workspace", "--no-deps"],
            env: &[("RUSTDOCFLAGS", "-D warnings")],
        },
    ),
    ("soak", Check::Soak),
    ("fuzz", Check::Fuzz),
    ("e2e", Check::E2e),
];

/// Runs every step; the first failure ends the run with its message.
pub fn run(root: &Path) -> Result<(), Error> {
    let started = Instant::now();
    report_disk(root);
    let mut timings = Vec::with_capacity(STEPS.len());
    for (index, (name, check)) in STEPS.iter().enumerate() {
        println!("==> [{}/{}] {name}", index + 1, STEPS.len());
        let step_started = Instant::now();
        let result = match check {
            Check::Cargo { args, env } => process::cargo().and_then(|cargo| {
                let mut command = Command::new(cargo);
                command
                    .args(*args)
                    .envs(env.iter().copied())
                    .current_dir(root);
                process::run(&mut command)
            }),
            Check::Fuzz => fuzz_smoke(root),
            Check::Setup => crate::setup(root),
            Check::Deny => deny::run(root),
            Check::Layers => layers::run(root),
            Check::E2e => e2e::run(root),
            Check::Soak => soak::run(root, &soak::Options::ci()),
            Check::Conformance => conformance::ci(root),
        };
        let elapsed = step_started.elapsed();
        if let Err(error) = result {
            println!("<== {name}: FAILED after {}", seconds(elapsed));
            // A linker killed by SIGBUS or an `No space left on device` is a full disk, not a
            // bug in the code: say how much room was left.
            report_disk(root);
            return Err(Error::Failed(format!(
                "ci stopped at step `{name}`: {error}"
            )));
        }
        println!("<== {name}: ok in {}", seconds(elapsed));
        timings.push((*name, elapsed));
    }
    println!("ci: all {} steps passed", STEPS.len());
    for (name, elapsed) in &timings {
        println!("  {name:<11} {:>9}", seconds(*elapsed));
    }
    println!("  {:<11} {:>9}", "total", seconds(started.elapsed()));
    Ok(())
}

/// Every fuzz target for a short while, or a line saying why fuzzing is skipped.
fn fuzz_smoke(root: &Path) -> Result<(), Error> {
    match fuzz::Fuzzer::prepare(root) {
        Ok(fuzzer) => fuzzer.run_all(None, FUZZ_SECONDS).map(|_| ()),
        Err(fuzz::Unavailable(reason)) => {
            println!("fuzz: skipped ({reason})");
            Ok(())
        }
    }
}

/// One line of `df` for the target directory's file system, so a run that fills the disk says
/// so. Best effort: a machine without `df` prints why instead.
fn report_disk(root: &Path) {
    let target = process::target_dir(root);
    let probe = if target.exists() {
        target
    } else {
        root.to_path_buf()
    };
    let report = process::program("df").and_then(|df| {
        process::output(
            Command::new(df)
                .arg("-h")
                .arg("--output=avail,size,target")
                .arg(&probe),
        )
    });
    match report {
        Ok(text) => {
            let line = text.lines().nth(1).unwrap_or("").trim().to_owned();
            println!("ci: disk free at {}: {line}", probe.display());
        }
        Err(error) => println!("ci: disk free unknown ({error})"),
    }
}

fn seconds(elapsed: Duration) -> String {
    format!("{:.1} s", elapsed.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_run_in_the_documented_order() {
        let names: Vec<&str> = STEPS.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names,
            [
                "fmt",
                "layers",
                "setup",
                "deny",
                "clippy",
                "test",
                "conformance",
                "doc",
                "soak",
                "fuzz",
                "e2e"
            ]
        );
    }

    #[test]
    fn doc_step_denies_warnings() {
        let doc = STEPS.iter().find(|(name, _)| *name == "doc");
        assert!(matches!(
            doc,
            Some((_, Check::Cargo { env, .. })) if env.contains(&("RUSTDOCFLAGS", "-D warnings"))
        ));
    }
}
