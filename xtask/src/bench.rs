//! `cargo xtask bench [NAME...]`: the benchmarks, each against its peer in the same run.
//!
//! A benchmark is a cargo bench target; one that needs a peer program installed first names a
//! `prepare` step, which runs before it (and may install the peer, as `setup` does).

use std::path::Path;
use std::process::Command;

use crate::{Error, process};

/// A step that installs or builds what a benchmark compares against.
type Prepare = fn(&Path) -> Result<(), Error>;

/// One benchmark `cargo xtask bench` knows.
struct Bench {
    /// The name on the command line.
    name: &'static str,
    /// The package and bench target that run it.
    package: &'static str,
    target: &'static str,
    /// Runs first: installs or builds what the benchmark compares against.
    prepare: Option<Prepare>,
}

const BENCHES: &[Bench] = &[
    Bench {
        name: "coerce",
        package: "toolsmith-types",
        target: "coerce",
        prepare: Some(peer_environment),
    },
    Bench {
        name: "registry",
        package: "toolsmith",
        target: "registry",
        prepare: None,
    },
    Bench {
        name: "text",
        package: "toolsmith-text",
        target: "text",
        prepare: Some(install_ripgrep),
    },
    Bench {
        name: "github",
        package: "toolsmith-github",
        target: "overhead",
        prepare: Some(install_peers),
    },
    Bench {
        name: "mcp",
        package: "toolsmith-mcp",
        target: "mcp",
        // The MCP Python SDK server it is compared against.
        prepare: Some(install_peers),
    },
    Bench {
        name: "gateway",
        package: "toolsmith-cli",
        target: "gateway",
        // The MCP Python SDK server it stands in front of.
        prepare: Some(install_peers),
    },
    Bench {
        name: "memory",
        package: "toolsmith-cli",
        target: "memory",
        prepare: None,
    },
    Bench {
        name: "agent",
        package: "toolsmith-agent",
        target: "react",
        prepare: None,
    },
];

/// Installs ripgrep from the machine's package manager when `rg` is not on `PATH` (grep, wc,
/// sort and awk come with the base system).
fn install_ripgrep(_root: &Path) -> Result<(), Error> {
    if process::find_on_path("rg").is_some() {
        return Ok(());
    }
    println!("bench text: installing ripgrep");
    let install = || {
        let mut command = Command::new(process::program("apt-get")?);
        command.args(["install", "-y", "ripgrep"]);
        process::run(&mut command)
    };
    // A fresh machine may have no package lists yet.
    install().or_else(|_| {
        process::run(Command::new(process::program("apt-get")?).arg("update"))?;
        install()
    })
}

/// Installs the peer programs (`gh`, the MCP Python SDK), as `cargo xtask setup` does.
fn install_peers(root: &Path) -> Result<(), Error> {
    crate::peers::ensure(root).map(|_| ())
}

/// Makes the peer environment (pydantic, for `coerce`); when it cannot be made (no network),
/// says so and goes on: the benchmark then prints its peer as not measured.
fn peer_environment(root: &Path) -> Result<(), Error> {
    if let Err(error) = crate::peers::ensure(root) {
        println!("bench: no peer environment ({error}); the peer is left out");
    }
    Ok(())
}

/// Reads the benchmark names; each must be known.
pub fn parse(args: &[String]) -> Result<Vec<String>, Error> {
    for name in args {
        if !BENCHES.iter().any(|bench| bench.name == name) {
            let known: Vec<&str> = BENCHES.iter().map(|bench| bench.name).collect();
            return Err(Error::Usage(format!(
                "unknown benchmark `{name}` (known: {})",
                known.join(", ")
            )));
        }
    }
    Ok(args.to_vec())
}

/// Runs the named benchmarks in the table's order, or all of them when `names` is empty.
pub fn run(root: &Path, names: &[String]) -> Result<(), Error> {
    let chosen = BENCHES
        .iter()
        .filter(|bench| names.is_empty() || names.iter().any(|name| name == bench.name));
    for bench in chosen {
        println!("==> bench {}", bench.name);
        if let Some(prepare) = bench.prepare {
            prepare(root)?;
        }
        let mut command = Command::new(process::cargo()?);
        command
            .args(["bench", "-p", bench.package, "--bench", bench.target])
            .current_dir(root);
        process::run(&mut command)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_benchmarks_parse_and_unknown_ones_are_usage_errors() {
        assert_eq!(parse(&["coerce".to_owned()]), Ok(vec!["coerce".to_owned()]));
        assert!(matches!(parse(&["nope".to_owned()]), Err(Error::Usage(_))));
    }

    #[test]
    fn benchmark_names_are_unique() {
        for (i, a) in BENCHES.iter().enumerate() {
            assert!(
                BENCHES[i + 1..].iter().all(|b| b.name != a.name),
                "{}",
                a.name
            );
        }
    }
}
