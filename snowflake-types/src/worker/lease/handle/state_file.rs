//! The lease state file ([`WorkerLeaseBuilder::state_file`](super::WorkerLeaseBuilder::state_file)),
//! read, written whole (a crash leaves the old file or the new one) and locked (`<path>.lock`).
//! Its first line says where it was written; a file read anywhere else is not resumed
//! (`docs/lease-rules.md` rule 11).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::worker::lease::protocol::saved::Saved;

/// The lock on a state file, held for as long as the lease thread runs.
#[derive(Debug)]
pub(super) struct StateFile {
    path: PathBuf,
    /// The first line of every file written here: the host, its boot, the file's path.
    origin: String,
    _lock: File,
}

/// Where a state file is written or read: `host <name> boot <id> path <absolute path>`; the
/// kernel's boot ID tells a clone with the same host name apart.
fn origin(host: &str, path: &Path) -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_owned());
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    format!("host {host} boot {} path {}", boot.trim(), dir.join(name).display())
}

/// Why a state file cannot be used.
fn unusable(path: &Path, why: impl std::fmt::Display) -> String {
    format!("the lease state file {} cannot be used: {why}", path.display())
}

impl StateFile {
    /// Locks the state file at `path` and reads the grant it holds, if written here.
    pub(super) fn open(path: &Path, host: &str) -> Result<(StateFile, Option<Saved>), String> {
        StateFile::open_at(path, &origin(host, path))
    }

    /// [`StateFile::open`], for a file written at `origin`.
    fn open_at(path: &Path, origin: &str) -> Result<(StateFile, Option<Saved>), String> {
        let lock_path = with_suffix(path, ".lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| unusable(path, format_args!("its lock file {}: {e}", lock_path.display())))?;
        lock.try_lock().map_err(|e| match e {
            std::fs::TryLockError::WouldBlock => unusable(path, "another process holds it (its lock file is locked)"),
            std::fs::TryLockError::Error(e) => unusable(path, e),
        })?;
        let saved = match std::fs::read_to_string(path) {
            Ok(text) => {
                let mut lines = text.lines();
                lines.next().filter(|at| *at == origin).and_then(|_| lines.next().and_then(Saved::decode))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(unusable(path, e)),
        };
        Ok((StateFile { path: path.to_owned(), origin: origin.to_owned(), _lock: lock }, saved))
    }

    /// Writes `saved` durably: a temporary file, synced, renamed, the directory synced.
    pub(super) fn write(&self, saved: &Saved) -> io::Result<()> {
        let temporary = with_suffix(&self.path, ".tmp");
        let mut file = File::create(&temporary)?;
        file.write_all(format!("{}\n{}\n", self.origin, saved.encode()).as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, &self.path)?;
        sync_directory(&self.path)
    }

    /// Removes the file (durably), once a release is acknowledged.
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
            releasing: false,
        }
    }

    #[test]
    fn a_state_file_is_read_back_where_it_was_written_only_and_locked_while_held() {
        let dir = std::env::temp_dir().join(format!("snowflake-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let path = dir.join("lease");
        let (file, before) = StateFile::open(&path, "web-1").expect("a new file");
        assert_eq!(before, None);
        file.write(&saved()).expect("written");
        let second = StateFile::open(&path, "web-1").expect_err("a second process");
        assert!(second.contains("another process holds it"), "{second}");
        drop(file);
        let (file, read) = StateFile::open(&path, "web-1").expect("the file again");
        assert_eq!(read, Some(saved()));
        drop(file);
        let (file, copied) = StateFile::open(&path, "web-2").expect("the file on another host");
        assert_eq!(copied, None, "a copy from another host is not resumed");
        drop(file);
        // A copy at another path of the same host, and the same file on a machine booted apart
        // (a clone with the same host name): neither is resumed.
        let copy = dir.join("lease-copy");
        std::fs::copy(&path, &copy).expect("copied");
        let (other, copied) = StateFile::open(&copy, "web-1").expect("the copy");
        assert_eq!(copied, None, "a copy at another path is not resumed");
        drop(other);
        let clone = origin("web-1", &path).replace(" boot ", " boot another-");
        let (file, cloned) = StateFile::open_at(&path, &clone).expect("the file on a clone");
        assert_eq!(cloned, None, "a clone's boot differs");
        file.remove().expect("removed");
        drop(file);
        std::fs::write(&path, format!("{}\ns2|garbage\n", origin("web-1", &path))).expect("hostile");
        assert_eq!(StateFile::open(&path, "web-1").expect("opened").1, None);
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    #[test]
    fn a_releasing_file_reads_back_as_such() {
        let releasing = Saved { releasing: true, ..saved() };
        assert_eq!(Saved::decode(&releasing.encode()), Some(releasing));
        for hostile in ["", "s2", "s2|2|ns|3|t|1|1|1|r", "s1|ns|3|t|1|1|1|r", "s2|0|ns|x|t|1|1|1|r"] {
            assert_eq!(Saved::decode(hostile), None, "{hostile}");
        }
    }
}
