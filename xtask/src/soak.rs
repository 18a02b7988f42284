//! `cargo xtask soak [--ci] [--seconds N] [--clients N]`: the MCP HTTP server under load and
//! faults, alone and behind HAProxy, by the `soak` program (`xtask/soak`).
//!
//! It builds `toolsmith` and `soak` in release (the figures are a release build's), makes sure
//! HAProxy is installed under `target/peers/haproxy`, and runs `soak`, whose output (the
//! figures, then the verdict) passes through; its exit status is the task's. CI runs a short
//! version on debug builds ([`Options::ci`], also `--ci`): its verdict counts, its figures do not.
//!
//! HAProxy comes from Debian's packages without touching the system: `apt-get download` fetches
//! the package and the libraries it needs that a base system lacks ([`HAPROXY_PACKAGES`]),
//! `dpkg -x` unpacks them under `target/peers/haproxy/root`, and HAProxy runs from there with
//! `LD_LIBRARY_PATH` pointing at the unpacked libraries. A stamp file holding the package list
//! makes a second run free.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Error, process};

/// The Debian packages HAProxy runs from: itself, and the libraries it links that a base
/// system lacks (Lua, OpenTracing); the rest (libc, OpenSSL, PCRE2, systemd's) every Debian has.
pub const HAPROXY_PACKAGES: &[&str] = &[
    "haproxy",
    "liblua5.3-0",
    "libopentracing-c-wrapper0",
    "libopentracing1",
];

/// How the binaries are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// `--release`: for the figures.
    Release,
    /// The dev profile: CI's short run, on what its tests already built.
    Debug,
}

/// What `cargo xtask soak` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// How long each part runs, in seconds.
    pub seconds: u64,
    /// Concurrent clients calling tools.
    pub clients: u64,
    /// Clients sending their headers one byte a second.
    pub slow_clients: u64,
    /// How the binaries are built.
    pub profile: Profile,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seconds: 60,
            clients: 200,
            slow_clients: 10,
            profile: Profile::Release,
        }
    }
}

impl Options {
    /// CI's short run: 15 s a part, 100 clients (more than the 64 calls a server runs at once,
    /// so that its queue is used), debug builds.
    pub fn ci() -> Options {
        Options {
            seconds: 15,
            clients: 100,
            slow_clients: 5,
            profile: Profile::Debug,
        }
    }

    /// Reads `--ci` (CI's short run, [`Options::ci`]), then `--seconds N` and `--clients N`.
    pub fn parse(args: &[String]) -> Result<Options, Error> {
        let ci = args.first().is_some_and(|first| first == "--ci");
        let mut options = if ci {
            Options::ci()
        } else {
            Options::default()
        };
        let mut rest = args.iter().skip(usize::from(ci));
        while let Some(flag) = rest.next() {
            let target = match flag.as_str() {
                "--seconds" => &mut options.seconds,
                "--clients" => &mut options.clients,
                other => return Err(Error::Usage(format!("unexpected argument `{other}`"))),
            };
            *target = rest
                .next()
                .and_then(|value| value.parse().ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| Error::Usage(format!("`{flag}` takes a count above zero")))?;
        }
        Ok(options)
    }
}

/// Builds the binaries, installs HAProxy and runs the soak test.
pub fn run(root: &Path, options: &Options) -> Result<(), Error> {
    let target = process::target_dir(root);
    let mut build = Command::new(process::cargo()?);
    build.args(["build", "-p", "toolsmith-cli", "-p", "soak", "--bins"]);
    if options.profile == Profile::Release {
        build.arg("--release");
    }
    build.current_dir(root);
    process::run(&mut build)?;
    let bin = target.join(match options.profile {
        Profile::Release => "release",
        Profile::Debug => "debug",
    });
    let haproxy = ensure_haproxy(root)?;
    let mut soak = Command::new(bin.join("soak"));
    soak.arg("--toolsmith")
        .arg(bin.join("toolsmith"))
        .arg("--haproxy")
        .arg(&haproxy.program)
        .arg("--haproxy-libs")
        .arg(&haproxy.library_path)
        .arg("--workdir")
        .arg(target.join("soak"))
        .args(["--seconds", &options.seconds.to_string()])
        .args(["--clients", &options.clients.to_string()])
        .args(["--slow-clients", &options.slow_clients.to_string()])
        .current_dir(root);
    process::run(&mut soak)
}

/// HAProxy unpacked under `target/peers/haproxy`.
#[derive(Debug)]
pub struct Haproxy {
    /// The `haproxy` binary.
    pub program: PathBuf,
    /// `LD_LIBRARY_PATH` for it: the unpacked library directories.
    pub library_path: OsString,
}

/// Where HAProxy's packages are unpacked.
fn haproxy_dir(root: &Path) -> PathBuf {
    root.join("target").join("peers").join("haproxy")
}

/// Makes sure HAProxy is unpacked under `target/peers/haproxy` and runs; downloads and
/// unpacks [`HAPROXY_PACKAGES`] when it is not.
pub fn ensure_haproxy(root: &Path) -> Result<Haproxy, Error> {
    let dir = haproxy_dir(root);
    let unpacked = dir.join("root");
    let stamp = dir.join("toolsmith-packages.txt");
    let wanted = HAPROXY_PACKAGES.join("\n");
    let installed = || -> Result<Haproxy, Error> {
        let haproxy = Haproxy {
            program: unpacked.join("usr").join("sbin").join("haproxy"),
            library_path: library_path(&unpacked.join("usr").join("lib"))?,
        };
        let mut version = Command::new(&haproxy.program);
        version
            .arg("-v")
            .env("LD_LIBRARY_PATH", &haproxy.library_path);
        process::output(&mut version)?;
        Ok(haproxy)
    };
    if std::fs::read_to_string(&stamp).is_ok_and(|have| have == wanted)
        && let Ok(haproxy) = installed()
    {
        return Ok(haproxy);
    }
    println!(
        "soak: installing HAProxy from Debian's packages into {}",
        dir.display()
    );
    let debs = dir.join("debs");
    for stale in [&debs, &unpacked] {
        if stale.exists() {
            std::fs::remove_dir_all(stale)
                .map_err(|e| Error::Failed(format!("cannot remove {}: {e}", stale.display())))?;
        }
    }
    std::fs::create_dir_all(&debs)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", debs.display())))?;
    let download = || {
        let mut command = Command::new(process::program("apt-get")?);
        command
            .arg("download")
            .args(HAPROXY_PACKAGES)
            .current_dir(&debs);
        process::run(&mut command)
    };
    // A fresh machine may have no package lists yet.
    download().or_else(|_| {
        process::run(Command::new(process::program("apt-get")?).arg("update"))?;
        download()
    })?;
    let entries = std::fs::read_dir(&debs)
        .map_err(|e| Error::Failed(format!("cannot read {}: {e}", debs.display())))?;
    let dpkg_deb = process::program("dpkg-deb")?;
    for deb in entries.flatten().map(|entry| entry.path()) {
        if deb.extension().is_some_and(|ext| ext == "deb") {
            let mut unpack = Command::new(&dpkg_deb);
            unpack.arg("-x").arg(&deb).arg(&unpacked);
            process::run(&mut unpack)?;
        }
    }
    let haproxy = installed()?;
    std::fs::write(&stamp, wanted)
        .map_err(|e| Error::Failed(format!("cannot write {}: {e}", stamp.display())))?;
    Ok(haproxy)
}

/// The directories of `lib` that hold shared libraries (the multiarch one,
/// `x86_64-linux-gnu`), as `LD_LIBRARY_PATH`.
fn library_path(lib: &Path) -> Result<OsString, Error> {
    let holds_libraries = |dir: &Path| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|entry| entry.file_name().to_string_lossy().contains(".so"))
        })
    };
    let dirs: Vec<PathBuf> = std::fs::read_dir(lib)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir() && holds_libraries(path))
        .collect();
    std::env::join_paths(dirs)
        .map_err(|e| Error::Failed(format!("cannot make a library path: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_default_is_a_minute_of_two_hundred_clients_on_release_builds() {
        let options = Options::parse(&[]);
        assert_eq!(options, Ok(Options::default()));
        assert_eq!(Options::default().seconds, 60);
        assert_eq!(Options::default().clients, 200);
        assert_eq!(Options::default().profile, Profile::Release);
    }

    #[test]
    fn seconds_and_clients_are_read() {
        let options = Options::parse(&args(&["--seconds", "10", "--clients", "20"]));
        assert!(matches!(
            options,
            Ok(Options {
                seconds: 10,
                clients: 20,
                ..
            })
        ));
    }

    #[test]
    fn ci_is_the_short_run_on_debug_builds_and_may_be_changed() {
        assert_eq!(Options::parse(&args(&["--ci"])), Ok(Options::ci()));
        assert_eq!(Options::ci().profile, Profile::Debug);
        assert!(matches!(
            Options::parse(&args(&["--ci", "--seconds", "5"])),
            Ok(Options {
                seconds: 5,
                profile: Profile::Debug,
                ..
            })
        ));
        assert!(matches!(
            Options::parse(&args(&["--seconds", "5", "--ci"])),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn zero_or_missing_counts_and_unknown_flags_are_usage_errors() {
        for wrong in [
            &["--seconds", "0"][..],
            &["--seconds"],
            &["--clients", "many"],
            &["--fast"],
        ] {
            assert!(
                matches!(Options::parse(&args(wrong)), Err(Error::Usage(_))),
                "{wrong:?}"
            );
        }
    }

    #[test]
    fn haproxy_lives_under_target_peers() {
        assert_eq!(
            haproxy_dir(Path::new("/w")),
            Path::new("/w/target/peers/haproxy")
        );
    }
}
