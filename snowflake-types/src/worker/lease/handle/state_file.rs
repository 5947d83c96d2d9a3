//! The lease state file ([`WorkerLeaseBuilder::state_file`](super::WorkerLeaseBuilder::state_file)):
//! where a holder keeps its grant across a restart, so that a process restarted while its
//! store does not answer resumes on its worker ID. What it holds and how it is resumed is the
//! holder machine's (`Saved`, `Machine::resume`); this file reads, writes and locks it.
//!
//! The file is two lines: the host it was written on, and the grant. It is written whole to a
//! temporary file, synced, and renamed over the old one, so a crash leaves the old file or the
//! new one, never half of one. A file written on another host (a copy) is not resumed, and a
//! second process on the same file is refused by a lock (`<path>.lock`) that the first holds
//! while it runs.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::worker::lease::protocol::holder::Saved;

/// The lock on a state file, held for as long as the lease thread runs.
#[derive(Debug)]
pub(super) struct StateFile {
    path: PathBuf,
    _lock: File,
}

/// Why a state file cannot be used.
pub(super) fn unusable(path: &Path, why: impl std::fmt::Display) -> String {
    format!("the lease state file {} cannot be used: {why}", path.display())
}

impl StateFile {
    /// Locks the state file at `path` (creating its lock file) and reads the grant it holds,
    /// if any was written on this host. Refused when another process holds the lock.
    pub(super) fn open(path: &Path, host: &str) -> Result<(StateFile, Option<Saved>), String> {
        let lock_path = with_suffix(path, ".lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| unusable(path, format_args!("its lock file {}: {e}", lock_path.display())))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(unusable(path, "another process holds it (its lock file is locked)"));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(unusable(path, e)),
        }
        let saved = match std::fs::read_to_string(path) {
            Ok(text) => {
                let mut lines = text.lines();
                let written_on = lines.next().and_then(|line| line.strip_prefix("host "));
                let saved = lines.next().and_then(Saved::decode);
                saved.filter(|_| written_on == Some(host))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(unusable(path, e)),
        };
        Ok((StateFile { path: path.to_owned(), _lock: lock }, saved))
    }

    /// Writes `saved` durably: a temporary file, synced, renamed over the file, the directory
    /// synced.
    pub(super) fn write(&self, host: &str, saved: &Saved) -> io::Result<()> {
        let temporary = with_suffix(&self.path, ".tmp");
        let mut file = File::create(&temporary)?;
        file.write_all(format!("host {host}\n{}\n", saved.encode()).as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, &self.path)?;
        sync_directory(&self.path)
    }

    /// Removes the file (durably): before a release, after which resuming the grant would
    /// issue above what the release recorded.
    pub(super) fn remove(&self) -> io::Result<()> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => sync_directory(&self.path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn sync_directory(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved() -> Saved {
        let record = "r1|3|5|1000|61000|0000000000000001|0123456789abcdef0123456789abcdef|h:1";
        Saved {
            namespace: "ns".into(),
            worker: 3,
            token: "0123456789abcdef0123456789abcdef".into(),
            value: record.into(),
            bound_ms: 61_000,
            valid_until_ms: 59_000,
            issued_limit_ms: 7_000,
        }
    }

    #[test]
    fn a_state_file_is_read_back_on_its_host_only_and_locked_while_held() {
        let dir = std::env::temp_dir().join(format!("snowflake-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let path = dir.join("lease");
        let (file, before) = StateFile::open(&path, "web-1").expect("a new file");
        assert_eq!(before, None);
        file.write("web-1", &saved()).expect("written");
        let second = StateFile::open(&path, "web-1").expect_err("a second process");
        assert!(second.contains("another process holds it"), "{second}");
        drop(file);
        let (file, read) = StateFile::open(&path, "web-1").expect("the file again");
        assert_eq!(read, Some(saved()));
        drop(file);
        let (file, copied) = StateFile::open(&path, "web-2").expect("the file on another host");
        assert_eq!(copied, None, "a copy from another host is not resumed");
        file.remove().expect("removed");
        drop(file);
        std::fs::write(&path, "host web-1\ns1|garbage\n").expect("hostile");
        assert_eq!(StateFile::open(&path, "web-1").expect("opened").1, None);
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }
}
