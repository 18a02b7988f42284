//! Test support for the toolsmith workspace: where the real peer programs are.
//!
//! Tests that talk to a real peer (the MCP Python SDK, the `gh` CLI, ...) find it here. The
//! peers are installed by `cargo xtask setup` (which `cargo xtask ci` runs first) into one
//! Python virtual environment, `target/peers/venv` under the workspace root, or wherever
//! `TOOLSMITH_PEERS` points. When a peer is missing, [`require`] fails the test if
//! `TOOLSMITH_REQUIRE_PEERS` is set (CI sets it, so a missing install step cannot pass
//! silently) and otherwise says the test was skipped and why.
//!
//! This crate is only ever a dev-dependency: it must never be a dependency of a crate that
//! toolsmith ships, and it starts no process itself.

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

/// The peer environment: `TOOLSMITH_PEERS`, else `target/peers/venv` under the workspace root.
pub fn peers_dir() -> PathBuf {
    std::env::var_os("TOOLSMITH_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target").join("peers").join("venv"))
}

/// The executable `name` in the peer environment's `bin`, when it is there.
pub fn peer(name: &str) -> Option<PathBuf> {
    let candidate = peers_dir().join("bin").join(name);
    is_executable(&candidate).then_some(candidate)
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
    use super::*;

    #[test]
    fn the_workspace_root_holds_the_workspace_manifest() {
        assert!(workspace_root().join("Cargo.toml").is_file());
        assert!(workspace_root().join("crates").is_dir());
    }

    #[test]
    fn a_program_that_no_peer_provides_is_not_found() {
        assert_eq!(peer("toolsmith-no-such-peer"), None);
    }
}
