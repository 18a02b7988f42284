//! `toolsmith mcp --stats FILE`: the [`Stats`] of the calls served, written to a file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use toolsmith::{Layer, Registry, Stats};

use crate::error::UsageError;

/// Calls, repairs and errors counted per tool and code, and the file they are written to.
#[derive(Debug)]
pub struct StatsFile {
    path: PathBuf,
    stats: Stats,
    /// One write at a time: a write on SIGUSR1 may still run when the server stops.
    writing: Mutex<()>,
}

impl StatsFile {
    /// Counts for a server, the file written at once (with no calls yet), so that a path that
    /// cannot be written is a usage error before serving rather than a loss at the end.
    pub fn create(path: &Path) -> Result<StatsFile, UsageError> {
        let file = StatsFile {
            path: path.to_path_buf(),
            stats: Stats::new(),
            writing: Mutex::new(()),
        };
        file.write()?;
        Ok(file)
    }

    /// `registry` counting into these stats: the counting layer outside every layer it has
    /// (so that panics, caught by `CatchPanic`, and timeouts count).
    pub fn count(&self, registry: Registry) -> Registry {
        let mut layers: Vec<Arc<dyn Layer>> = vec![Arc::new(self.stats.layer())];
        layers.extend(registry.layers().iter().cloned());
        registry.with_layers(layers)
    }

    /// Where the stats are written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the snapshot ([`Stats::snapshot`]), laid out for reading, atomically: into a
    /// file beside it, then renamed over it, so a reader finds the old snapshot or the new one,
    /// never a part.
    pub fn write(&self) -> Result<(), UsageError> {
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let failed = |error| UsageError::Stats {
            path: self.path.clone(),
            error,
        };
        let mut text = serde_json::to_string_pretty(&self.stats.snapshot())
            .map_err(|error| failed(error.into()))?;
        text.push('\n');
        let Some(name) = self.path.file_name() else {
            return Err(failed(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a file name",
            )));
        };
        let mut temporary_name = std::ffi::OsString::from(".");
        temporary_name.push(name);
        temporary_name.push(format!(".{}.tmp", std::process::id()));
        let temporary = self.path.with_file_name(temporary_name);
        let written = write_synced(&temporary, text.as_bytes())
            .and_then(|()| std::fs::rename(&temporary, &self.path));
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written.map_err(failed)
    }
}

/// `bytes` as the whole of the file at `path`, on disk before this returns.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}
