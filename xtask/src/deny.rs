//! `cargo xtask deny`: the dependency tree's licenses, bans and sources, checked by cargo-deny
//! against `deny.toml`.
//!
//! cargo-deny is a pinned version that `cargo xtask setup` installs (compiled from crates.io,
//! a few minutes) into `target/xtask-tools`, where a second run finds it and installs nothing;
//! the check runs that binary, never one found on `PATH`, so every machine checks with the same
//! rules. The advisories check needs the network at check time and is deliberately not run.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Error, process};

/// The cargo-deny release installed and run.
pub const VERSION: &str = "0.20.2";

/// Where cargo-deny is installed: `target/xtask-tools/bin/cargo-deny` under the workspace root.
pub fn binary(root: &Path) -> PathBuf {
    tools_dir(root).join("bin").join("cargo-deny")
}

fn tools_dir(root: &Path) -> PathBuf {
    root.join("target").join("xtask-tools")
}

/// Makes sure cargo-deny [`VERSION`] is installed under `target/`; returns its path.
pub fn ensure(root: &Path) -> Result<PathBuf, Error> {
    let binary = binary(root);
    if installed_version(&binary).as_deref() == Some(VERSION) {
        return Ok(binary);
    }
    println!("setup: installing cargo-deny {VERSION} into target/xtask-tools (once)");
    let mut install = Command::new(process::cargo()?);
    install
        .args([
            "install",
            "--locked",
            "cargo-deny",
            "--version",
            VERSION,
            "--root",
        ])
        .arg(tools_dir(root))
        .current_dir(root);
    process::run(&mut install)?;
    match installed_version(&binary) {
        Some(version) if version == VERSION => Ok(binary),
        other => Err(Error::Failed(format!(
            "after installing cargo-deny {VERSION}, {} reports version {}",
            binary.display(),
            other.as_deref().unwrap_or("nothing")
        ))),
    }
}

/// Runs `cargo-deny check licenses bans sources` from the workspace root, installing
/// cargo-deny first when it is not there yet.
pub fn run(root: &Path) -> Result<(), Error> {
    let deny = ensure(root)?;
    let mut command = Command::new(deny);
    command
        .args(["check", "licenses", "bans", "sources"])
        // cargo-deny reads the tree with `cargo metadata`: the same cargo as everything else.
        .env("CARGO", process::cargo()?)
        .current_dir(root);
    process::run(&mut command)
}

/// The version the cargo-deny at `binary` reports, when there is one that runs.
fn installed_version(binary: &Path) -> Option<String> {
    if !process::is_executable(binary) {
        return None;
    }
    let said = process::output(Command::new(binary).arg("--version")).ok()?;
    parse_version(&said)
}

/// The version in `cargo-deny --version`'s answer (`cargo-deny 0.20.2`).
fn parse_version(said: &str) -> Option<String> {
    let mut words = said.split_whitespace();
    (words.next()? == "cargo-deny")
        .then(|| words.next().map(str::to_owned))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_deny_lives_under_target() {
        assert_eq!(
            binary(Path::new("/w")),
            Path::new("/w/target/xtask-tools/bin/cargo-deny")
        );
    }

    #[test]
    fn the_version_is_read_from_cargo_denys_answer() {
        assert_eq!(
            parse_version("cargo-deny 0.20.2\n").as_deref(),
            Some("0.20.2")
        );
        assert_eq!(parse_version("something else 0.20.2"), None);
        assert_eq!(parse_version(""), None);
    }

    #[test]
    fn a_missing_binary_has_no_version() {
        assert_eq!(
            installed_version(Path::new("/nonexistent/cargo-deny")),
            None
        );
    }
}
