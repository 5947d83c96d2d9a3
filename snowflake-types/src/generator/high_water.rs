//! The high-water file: one Unix millisecond, written atomically and durably (a temporary
//! file, `fsync`, rename, `fsync` of the directory), read back exactly or refused.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use crate::error::GenerateError;

/// The longest high-water reservation: one hour. The reservation is how far the mark on
/// disk may run ahead of the clock; a longer one is refused when the generator is built
/// (and by the registry's `install()`), with [`GenerateError::HighWater`].
pub const MAX_HIGH_WATER_RESERVE: Duration = Duration::from_secs(3600);

/// Refuses a reservation above [`MAX_HIGH_WATER_RESERVE`], saying why.
pub(crate) fn check_reserve(reserve: Duration) -> Result<(), String> {
    if reserve > MAX_HIGH_WATER_RESERVE {
        return Err(format!(
            "a reserve of {reserve:?} exceeds the maximum of {MAX_HIGH_WATER_RESERVE:?} (MAX_HIGH_WATER_RESERVE)"
        ));
    }
    Ok(())
}

/// A persisted reservation of time: the generator never issues past the mark it wrote,
/// and a new process never issues at or below it.
pub(super) struct HighWater {
    pub(super) path: PathBuf,
    pub(super) reserve_ticks: u64,
    /// The last tick the file reserves (written under `extend_lock`).
    pub(super) reserved: AtomicU64,
}

const MARK_HEADER: &str = "typed-snowflake high-water v1";

/// Reads a high-water file: `None` when it does not exist; an error when it cannot be
/// read or is not exactly what [`write_mark`] writes.
pub(super) fn read_mark(path: &Path) -> Result<Option<i64>, GenerateError> {
    let error = |reason: String| GenerateError::HighWater { path: path.to_owned(), reason, source: None };
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(GenerateError::HighWater {
                path: path.to_owned(),
                reason: "cannot be read".into(),
                source: Some(e.into()),
            });
        }
    };
    let mut lines = text.split('\n');
    let (Some(MARK_HEADER), Some(value), Some(""), None) = (lines.next(), lines.next(), lines.next(), lines.next())
    else {
        return Err(error(format!("is corrupt: expected \"{MARK_HEADER}\" and a Unix millisecond, found {text:?}")));
    };
    match value.parse::<i64>() {
        Ok(ms) if ms >= 0 && value.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(ms)),
        _ => Err(error(format!("is corrupt: {value:?} is not a Unix millisecond"))),
    }
}

/// Raises the mark in a high-water file to at least `mark_ms`, never lowering it; returns
/// whether it wrote the file.
///
/// Two generators of one process can share a file (given the same path): the file then
/// holds the larger of their reservations, which covers both, and a restart resumes above
/// both. One process-wide lock orders the writes (they are rare: one per reservation).
pub(super) fn raise_mark(path: &Path, mark_ms: i64) -> Result<bool, GenerateError> {
    static WRITES: Mutex<()> = Mutex::new(());
    let _guard = WRITES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // A file that cannot be read now was readable at build (or absent): write ours.
    let on_disk = read_mark(path).ok().flatten().unwrap_or(i64::MIN);
    if on_disk >= mark_ms {
        return Ok(false);
    }
    write_mark(path, mark_ms).map(|()| true)
}

/// Writes a high-water file atomically and durably: a temporary file, `fsync`, rename,
/// `fsync` of the directory.
fn write_mark(path: &Path, mark_ms: i64) -> Result<(), GenerateError> {
    let error = |what: &str, e: std::io::Error| GenerateError::HighWater {
        path: path.to_owned(),
        reason: what.to_owned(),
        source: Some(e.into()),
    };
    // `<name>.tmp` beside the file, never `with_extension`: a mark named `x.tmp` would
    // otherwise be its own temporary file, truncated in place.
    let mut tmp_name = path.file_name().map(std::ffi::OsStr::to_os_string).unwrap_or_default();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let mut file = fs::File::create(&tmp).map_err(|e| error("cannot create the temporary file", e))?;
    file.write_all(format!("{MARK_HEADER}\n{mark_ms}\n").as_bytes()).map_err(|e| error("cannot write", e))?;
    file.sync_all().map_err(|e| error("cannot fsync", e))?;
    drop(file);
    fs::rename(&tmp, path).map_err(|e| error("cannot rename the temporary file", e))?;
    // The rename is durable only once the directory entry is: fsync the directory
    // (Unix; elsewhere a directory cannot be opened as a file, and the rename is all there is).
    #[cfg(unix)]
    {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let dir = fs::File::open(dir).map_err(|e| error("cannot open the directory to fsync it", e))?;
        dir.sync_all().map_err(|e| error("cannot fsync the directory", e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{MARK_HEADER, MAX_HIGH_WATER_RESERVE, check_reserve, raise_mark, read_mark, write_mark};
    use crate::error::GenerateError;

    fn dir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "snowflake-hwm-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        dir
    }

    fn reason(error: GenerateError) -> String {
        match error {
            GenerateError::HighWater { reason, .. } => reason,
            other => panic!("expected GenerateError::HighWater, got {other}"),
        }
    }

    #[test]
    fn a_mark_written_reads_back_exactly() {
        let dir = dir();
        let path = dir.join("written.hwm");
        assert_eq!(read_mark(&path), Ok(None), "no file, no mark");
        for mark in [0, 1, 1_700_000_000_123, i64::MAX] {
            write_mark(&path, mark).expect("written");
            assert_eq!(read_mark(&path), Ok(Some(mark)));
            assert_eq!(std::fs::read_to_string(&path).expect("read"), format!("{MARK_HEADER}\n{mark}\n"));
        }
        assert!(!dir.join("written.hwm.tmp").exists(), "the temporary file was renamed");
        std::fs::remove_dir_all(dir).expect("cleaned up");
    }

    #[test]
    fn a_mark_is_raised_never_lowered() {
        let dir = dir();
        let path = dir.join("raised.hwm");
        assert_eq!(raise_mark(&path, 100), Ok(true));
        assert_eq!(raise_mark(&path, 50), Ok(false));
        assert_eq!(raise_mark(&path, 100), Ok(false));
        assert_eq!(read_mark(&path), Ok(Some(100)));
        assert_eq!(raise_mark(&path, 101), Ok(true));
        assert_eq!(read_mark(&path), Ok(Some(101)));
        std::fs::remove_dir_all(dir).expect("cleaned up");
    }

    #[test]
    fn a_mark_named_like_a_temporary_file_is_not_its_own() {
        let dir = dir();
        let path = dir.join("x.tmp");
        write_mark(&path, 42).expect("written");
        assert_eq!(read_mark(&path), Ok(Some(42)));
        std::fs::remove_dir_all(dir).expect("cleaned up");
    }

    #[test]
    fn corrupt_files_are_refused_saying_why() {
        let dir = dir();
        let path = dir.join("corrupt.hwm");
        let cases: &[(&str, &str)] = &[
            ("", "is corrupt: expected"),
            ("1700000000000\n", "is corrupt: expected"),
            ("typed-snowflake high-water v1\n", "is corrupt: expected"),
            ("typed-snowflake high-water v1\n17\n\n", "is corrupt: expected"),
            ("typed-snowflake high-water v1\n17", "is corrupt: expected"),
            ("typed-snowflake high-water v2\n17\n", "is corrupt: expected"),
            ("typed-snowflake high-water v1\n-17\n", "is not a Unix millisecond"),
            ("typed-snowflake high-water v1\n+17\n", "is not a Unix millisecond"),
            ("typed-snowflake high-water v1\n 17\n", "is not a Unix millisecond"),
            ("typed-snowflake high-water v1\n9223372036854775808\n", "is not a Unix millisecond"),
            ("typed-snowflake high-water v1\n\n", "is not a Unix millisecond"),
        ];
        for (text, expected) in cases {
            std::fs::write(&path, text).expect("written");
            let why = reason(read_mark(&path).expect_err(text));
            assert!(why.contains(expected), "{text:?}: {why}");
        }
        std::fs::write(&path, [0xff, 0xfe]).expect("written");
        let Err(GenerateError::HighWater { source: Some(_), .. }) = read_mark(&path) else {
            panic!("bytes that are not UTF-8 are an I/O error with its source")
        };
        std::fs::remove_dir_all(dir).expect("cleaned up");
    }

    #[test]
    fn a_file_that_cannot_be_written_is_an_error_with_its_cause() {
        let dir = dir();
        let path = dir.join("no-such-directory").join("mark.hwm");
        let error = write_mark(&path, 1).expect_err("no directory");
        assert_eq!(reason(error.clone()), "cannot create the temporary file");
        let GenerateError::HighWater { source: Some(_), .. } = error else { panic!("the I/O error is kept") };
        std::fs::remove_dir_all(dir).expect("cleaned up");
    }

    #[test]
    fn reservations_longer_than_the_maximum_are_refused() {
        assert_eq!(check_reserve(MAX_HIGH_WATER_RESERVE), Ok(()));
        let why = check_reserve(MAX_HIGH_WATER_RESERVE + std::time::Duration::from_millis(1)).expect_err("too long");
        assert!(why.contains("MAX_HIGH_WATER_RESERVE"), "{why}");
    }
}
