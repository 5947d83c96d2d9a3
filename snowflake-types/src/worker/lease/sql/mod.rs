//! Worker-ID leases in PostgreSQL or MySQL/MariaDB ([`SqlLeaseStore`]): the store here, what
//! the two databases share in `backend.rs`, each one's statements in `postgres.rs`, `mysql.rs`.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Runtime;

use super::store::support::{UnexpectedReply, check_query, check_write, install_crypto_provider, reading, writing};
use super::store::{Cas, DEFAULT_STORE_TIMEOUT, LeaseError, LeaseStore, Query, Slot, Snapshot, Written};
use super::url::{StoreKind, StoreUrl};

mod backend;
#[cfg(feature = "lease-mysql")]
mod mysql;
#[cfg(feature = "lease-postgres")]
mod postgres;

use backend::{Backend, Failure, RowCas, Rows, SlotRange};
pub use backend::{DEFAULT_TABLE, MYSQL_TABLE_DDL, POSTGRES_TABLE_DDL};

/// The `slot` of a namespace's marker row.
const MARKER_SLOT: i64 = -1;
/// Rows a read returns beside the slots': the highest worker ID with a record, the database's
/// clock, its incarnation.
const HIGHEST_ROW: i64 = -2;
const CLOCK_ROW: i64 = -3;
const INCARNATION_ROW: i64 = -4;

/// How a [`SqlLeaseStore`] connects: the table and the timeout.
///
/// ```no_run
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::SqlLeaseStore;
///
/// let store = SqlLeaseStore::builder("postgres://postgres@127.0.0.1:5432/test")
///     .table("ids.worker_leases")
///     .timeout(Duration::from_millis(500))
///     .connect()?;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
#[must_use]
pub struct SqlLeaseStoreBuilder {
    /// The URL, or why it is not one: told at `connect`.
    url: Result<StoreUrl, LeaseError>,
    table: String,
    timeout: Duration,
}

/// The URL without its password.
impl fmt::Debug for SqlLeaseStoreBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlLeaseStoreBuilder")
            .field("url", &self.url.as_ref().map(ToString::to_string))
            .field("table", &self.table)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl SqlLeaseStoreBuilder {
    /// Keeps the leases in `table` (an identifier, or `schema.table`) instead of
    /// [`DEFAULT_TABLE`].
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{LeaseError, SqlLeaseStore};
    ///
    /// let err = SqlLeaseStore::builder("postgres://127.0.0.1/test").table("leases; DROP TABLE users").connect();
    /// assert!(matches!(err, Err(LeaseError::BadTable { .. })));
    /// ```
    pub fn table(mut self, table: impl Into<String>) -> Self {
        self.table = table.into();
        self
    }

    /// Bounds each call by `timeout` instead of [`DEFAULT_STORE_TIMEOUT`], and taking the
    /// connection (opening it included) by as much again. The server is told the same bound for
    /// lock waits (and PostgreSQL for statements), MySQL's rounded up to whole seconds. A zero
    /// timeout counts as 1 ms.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use typed_snowflake::worker::lease::SqlLeaseStore;
    ///
    /// let store = SqlLeaseStore::builder("mysql://root@127.0.0.1:3306/test").timeout(Duration::from_secs(1)).connect()?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// Connects (within the timeout), creates the table if it does not exist, and checks that
    /// it has the columns of [`POSTGRES_TABLE_DDL`] or [`MYSQL_TABLE_DDL`]: a table of an
    /// earlier version of this crate is refused with [`LeaseError::BadTable`], whose message
    /// gives the statement to create the new one. TLS is asked for in the URL, as
    /// `docs/stores.md` says; a URL that names no CA file uses [`CA_ENV`](super::CA_ENV)'s.
    ///
    /// ```no_run
    /// use typed_snowflake::worker::lease::{LeaseStore, SqlLeaseStore};
    ///
    /// let store = SqlLeaseStore::builder("postgres://postgres@127.0.0.1:5432/test").connect()?;
    /// println!("leases in {}", store.describe());
    /// let store = SqlLeaseStore::builder(
    ///     "postgres://app:secret@db.internal/ids?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem",
    /// )
    /// .connect()?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn connect(self) -> Result<SqlLeaseStore, LeaseError> {
        check_table(&self.table)?;
        install_crypto_provider();
        let url = self.url?;
        let shown = url.to_string();
        let bad_url = |reason: &str| url.bad(reason, None);
        let kind = url.kind();
        if !matches!(kind, StoreKind::Postgres | StoreKind::MySql) {
            return Err(bad_url("expected a postgres://, postgresql://, mysql:// or mariadb:// URL"));
        }
        // The environment's CA, for a URL that names none of its own.
        let ca = url.ca_file();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("snowflake-lease-sql")
            .enable_all()
            .build()
            .map_err(|e| LeaseError::store(&shown, "starting the store's runtime", e))?;
        let name = format!("{shown} (table {})", self.table);
        let (table, timeout) = (self.table.as_str(), self.timeout);
        let connected: Result<Result<Box<dyn Backend>, Failure>, sqlx_core::Error> = match kind {
            #[cfg(feature = "lease-postgres")]
            StoreKind::Postgres => postgres::options(&url, ca.as_deref())
                .map(|options| runtime.block_on(postgres::connect(options, table, timeout))),
            #[cfg(not(feature = "lease-postgres"))]
            StoreKind::Postgres => {
                return Err(bad_url("PostgreSQL leases need the feature `lease-postgres` of typed-snowflake"));
            }
            #[cfg(feature = "lease-mysql")]
            _ => mysql::options(&url, ca.as_deref())
                .map(|options| runtime.block_on(mysql::connect(options, table, timeout))),
            #[cfg(not(feature = "lease-mysql"))]
            _ => {
                return Err(bad_url("MySQL and MariaDB leases need the feature `lease-mysql` of typed-snowflake"));
            }
        };
        let connecting = || format!("connecting and creating table {table}");
        let backend = match connected.map_err(|e| url.bad(e.to_string(), Some(Arc::new(e))))? {
            Ok(backend) => backend,
            Err(Failure::OldTable) => return Err(old_table(table, kind)),
            Err(failure) => return Err(failure.into_error(&name, connecting(), timeout)),
        };
        Ok(SqlLeaseStore { runtime: Some(runtime), backend, timeout, name })
    }
}

/// The error for a table that has the columns of an earlier version of this crate.
fn old_table(table: &str, kind: StoreKind) -> LeaseError {
    let ddl = if kind == StoreKind::Postgres { POSTGRES_TABLE_DDL } else { MYSQL_TABLE_DDL };
    let ddl = ddl.replacen(DEFAULT_TABLE, table, 1);
    LeaseError::BadTable {
        table: table.to_owned(),
        reason: format!(
            "it exists without the columns (namespace, slot, value): a table of an earlier version of \
             typed-snowflake keeps leases in another shape, which this version cannot read. Its rows are not \
             needed (holders of a namespace whose records are gone wait as the lease rules say, and never issue \
             an ID twice): stop its holders, then drop or rename it (`ALTER TABLE {table} RENAME TO ...`) and \
             let the store create it, or create it yourself with:\n{ddl}"
        ),
    }
}

/// Worker-ID leases in a PostgreSQL or MySQL/MariaDB table through sqlx: the store contract
/// ([`LeaseStore`]), one row per slot ([`POSTGRES_TABLE_DDL`], [`MYSQL_TABLE_DDL`]), on the
/// database's clock. The read, the all-or-nothing write, the incarnation (which a table restored
/// from a logical dump does not change: fence after it) and the faults: `docs/stores.md`.
///
/// The store owns a small tokio runtime (one worker thread) and one connection, and blocks on
/// each call: **its methods must not be called from inside an async runtime** (tokio
/// panics); call them from a thread of their own or `spawn_blocking`. Threads take turns on the
/// connection; one whose call failed or timed out is closed, and the next call opens another.
///
/// ```no_run
/// use typed_snowflake::worker::lease::{LeaseStore, SqlLeaseStore};
/// use typed_snowflake::worker::lease::store::{Cas, Query, Slot, Written};
///
/// let store = SqlLeaseStore::connect("postgres://postgres@127.0.0.1:5432/test")?;
/// assert_eq!(store.write("shop", &[Cas::new(Slot::Worker(3), None, "a")])?, Written::Done);
/// let read = store.read("shop", &Query::workers(0..32))?;
/// assert_eq!(read.record(3), Some("a"));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SqlLeaseStore {
    /// Taken on drop, to shut it down without blocking.
    runtime: Option<Runtime>,
    backend: Box<dyn Backend>,
    timeout: Duration,
    name: String,
}

super::store::support::store_debug!(SqlLeaseStore);

impl Drop for SqlLeaseStore {
    fn drop(&mut self) {
        // Not `drop(runtime)`: that blocks, and panics inside an async context.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl SqlLeaseStore {
    /// A builder for a store at `url`, to choose the table or the timeout.
    ///
    /// ```no_run
    /// use typed_snowflake::worker::lease::SqlLeaseStore;
    ///
    /// let store = SqlLeaseStore::builder("mariadb://root@127.0.0.1:3306/test").table("worker_leases").connect()?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder(url: impl Into<String>) -> SqlLeaseStoreBuilder {
        Self::builder_with(StoreUrl::parse(&url.into()))
    }

    /// A builder for a store at a URL already parsed.
    ///
    /// ```no_run
    /// use typed_snowflake::worker::lease::{SqlLeaseStore, StoreUrl};
    ///
    /// let url = StoreUrl::parse("postgres://postgres@127.0.0.1:5432/test")?;
    /// let store = SqlLeaseStore::builder_from_url(url).table("worker_leases").connect()?;
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder_from_url(url: StoreUrl) -> SqlLeaseStoreBuilder {
        Self::builder_with(Ok(url))
    }

    fn builder_with(url: Result<StoreUrl, LeaseError>) -> SqlLeaseStoreBuilder {
        SqlLeaseStoreBuilder { url, table: DEFAULT_TABLE.to_owned(), timeout: DEFAULT_STORE_TIMEOUT }
    }

    /// Connects to `url` with the default table and timeout, creating the table if it does
    /// not exist.
    ///
    /// ```
    /// use typed_snowflake::worker::lease::{LeaseError, SqlLeaseStore};
    ///
    /// let err = SqlLeaseStore::connect("redis://127.0.0.1:6379").unwrap_err();
    /// assert!(matches!(err, LeaseError::BadUrl { .. }));
    /// ```
    pub fn connect(url: &str) -> Result<Self, LeaseError> {
        Self::builder(url).connect()
    }

    fn block_on<T>(
        &self,
        what: impl FnOnce() -> String,
        future: impl Future<Output = Result<T, Failure>>,
    ) -> Result<T, LeaseError> {
        let runtime = self.runtime.as_ref().expect("the runtime lives until the store is dropped");
        runtime.block_on(future).map_err(|failure| failure.into_error(&self.name, what(), self.timeout))
    }
}

impl LeaseStore for SqlLeaseStore {
    fn read(&self, namespace: &str, query: &Query) -> Result<Snapshot, LeaseError> {
        check_query(namespace, query)?;
        let range = SlotRange { from: slot_id(query.workers.start), to: slot_id(query.workers.end) };
        let rows = self
            .block_on(|| reading(namespace, query), self.backend.read(namespace, range, query.highest, self.timeout))?;
        snapshot(rows).map_err(|reply| LeaseError::store(&self.name, reading(namespace, query), UnexpectedReply(reply)))
    }

    fn write(&self, namespace: &str, ops: &[Cas<'_>]) -> Result<Written, LeaseError> {
        check_write(namespace, ops)?;
        // Rows are locked in one order, the marker first: two writes never wait on each other
        // in a cycle.
        let mut rows: Vec<RowCas<'_>> = ops
            .iter()
            .map(|op| RowCas {
                slot: match op.slot {
                    Slot::Marker => MARKER_SLOT,
                    Slot::Worker(worker) => slot_id(worker),
                },
                expect: op.expect,
                value: op.value,
            })
            .collect();
        rows.sort_by_key(|row| row.slot);
        let done = self.block_on(|| writing(namespace, ops), self.backend.write(namespace, &rows, self.timeout))?;
        Ok(if done { Written::Done } else { Written::Conflict })
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn warnings(&self) -> Result<Vec<String>, LeaseError> {
        self.block_on(|| "reading the server's durability settings".to_owned(), self.backend.warnings(self.timeout))
    }
}

/// The snapshot a read's rows make, or why they are an unexpected reply.
fn snapshot(rows: Rows) -> Result<Snapshot, String> {
    let (mut now_ms, mut incarnation, mut marker, mut highest) = (None, None, None, None);
    let mut records = Vec::new();
    for (slot, value) in rows {
        match (slot, value) {
            (MARKER_SLOT, value) => marker = value,
            (HIGHEST_ROW, value) => {
                highest = value.map(|v| v.parse::<u64>().map_err(|_| format!("highest {v:?}"))).transpose()?;
            }
            (CLOCK_ROW, Some(value)) => now_ms = Some(value.parse::<i64>().map_err(|_| format!("clock {value:?}"))?),
            (INCARNATION_ROW, value) => incarnation = Some(value.unwrap_or_default()),
            (slot, Some(value)) if slot >= 0 => records.push((u64::try_from(slot).expect("slot >= 0"), value)),
            (slot, value) => return Err(format!("slot {slot}: {value:?}")),
        }
    }
    records.sort();
    let incarnation = incarnation.ok_or("no incarnation")?;
    now_ms.ok_or("no clock")?;
    if incarnation.len() > 128 || !incarnation.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'|') {
        return Err(format!("incarnation {incarnation:?}"));
    }
    Ok(Snapshot::new(now_ms, incarnation).with_marker(marker).with_records(records).with_highest(highest))
}

/// A worker ID (or the end of a range of them) as the table stores it.
fn slot_id(worker: u64) -> i64 {
    i64::try_from(worker).expect("worker IDs are below 2^22")
}

/// Checks a table name: an identifier of at most 63 bytes (`[A-Za-z_][A-Za-z0-9_]*`), or two
/// joined by a dot (`schema.table`). It is written into statements unquoted.
fn check_table(table: &str) -> Result<(), LeaseError> {
    let bad = |reason: &str| LeaseError::BadTable { table: table.to_owned(), reason: reason.to_owned() };
    let parts: Vec<&str> = table.split('.').collect();
    if parts.len() > 2 {
        return Err(bad("at most one dot, between a schema and a table"));
    }
    for part in parts {
        if part.is_empty() {
            return Err(bad("an empty name"));
        }
        if part.len() > 63 {
            return Err(bad("a name longer than 63 bytes"));
        }
        if part.starts_with(|c: char| c.is_ascii_digit())
            || !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(bad("expected letters, digits and _, not starting with a digit"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_builder_never_shows_the_password() {
        let builder = SqlLeaseStore::builder("postgres://app:s3cret@db.internal:5432/ids").table("ids.leases");
        let shown = format!("{builder:?} {builder:#?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("postgres://app@db.internal:5432/ids"), "{shown}");
    }

    /// The rows of a read: the clock's, the incarnation's, and `more`.
    fn rows(incarnation: &str, more: &[(i64, Option<&str>)]) -> Rows {
        let mut rows =
            vec![(CLOCK_ROW, Some("1700000000000".to_owned())), (INCARNATION_ROW, Some(incarnation.to_owned()))];
        rows.extend(more.iter().map(|&(slot, value)| (slot, value.map(str::to_owned))));
        rows
    }

    #[test]
    fn a_reads_rows_make_its_snapshot() {
        let read = snapshot(rows(
            "pg-7-tl1",
            &[(5, Some("e")), (MARKER_SLOT, Some("m")), (0, Some("a")), (HIGHEST_ROW, Some("9"))],
        ))
        .expect("a snapshot");
        assert_eq!(read.now_ms, Some(1_700_000_000_000));
        assert_eq!(read.incarnation, "pg-7-tl1");
        assert_eq!(read.marker.as_deref(), Some("m"));
        assert_eq!(read.records, [(0, "a".to_owned()), (5, "e".to_owned())]);
        assert_eq!(read.highest, Some(9));
        // No marker, no highest worker ID asked for or none with a record, an incarnation of
        // 128 characters, every printable one but `|`.
        let longest: String = (0x20u8..0x7f).filter(|&b| b != b'|').map(char::from).cycle().take(128).collect();
        let read = snapshot(rows(&longest, &[(HIGHEST_ROW, None)])).expect("a snapshot");
        assert_eq!((read.marker, read.highest, read.incarnation), (None, None, longest));
    }

    #[test]
    fn rows_no_read_of_this_store_returns_are_refused_naming_them() {
        for (rows, told) in [
            (rows("i", &[(-7, Some("x"))]), "slot -7: Some(\"x\")"),
            (rows("i", &[(3, None)]), "slot 3: None"),
            (rows("i", &[(HIGHEST_ROW, Some("-1"))]), "highest \"-1\""),
            (rows("i", &[(CLOCK_ROW, Some("noon"))]), "clock \"noon\""),
            (vec![(INCARNATION_ROW, Some("i".to_owned()))], "no clock"),
            (vec![(CLOCK_ROW, Some("1".to_owned()))], "no incarnation"),
            (rows(&"i".repeat(129), &[]), "incarnation"),
            (rows("pg|1", &[]), "incarnation \"pg|1\""),
            (rows("pg\n1", &[]), "incarnation"),
            (rows("pg\u{7f}", &[]), "incarnation"),
        ] {
            let refused = snapshot(rows).expect_err(told);
            assert!(refused.starts_with(told), "{refused} is not {told}");
        }
    }

    #[test]
    fn table_names() {
        for good in ["snowflake_worker_leases", "ids.worker_leases", "_t1", &"t".repeat(63)] {
            assert!(check_table(good).is_ok(), "{good}");
        }
        for bad in ["", "a.b.c", ".t", "t.", "1t", "t-1", "t;DROP TABLE x", "\"t\"", "t t", &"t".repeat(64)] {
            let err = check_table(bad).unwrap_err();
            assert!(err.to_string().starts_with(&format!("bad lease table name {bad:?}: ")), "{err}");
        }
    }

    #[test]
    fn an_old_table_is_refused_with_the_statement_of_the_new_one() {
        let err = old_table("ids.leases", StoreKind::MySql);
        let message = err.to_string();
        assert!(message.starts_with("bad lease table name \"ids.leases\": it exists without the columns"), "{message}");
        assert!(message.contains("CREATE TABLE IF NOT EXISTS ids.leases ("), "{message}");
        assert!(message.contains("VARBINARY(512)"), "{message}");
    }

    #[test]
    fn urls_are_checked_before_connecting() {
        let err = SqlLeaseStore::connect("redis://:secret@127.0.0.1:6379").unwrap_err();
        assert!(matches!(err, LeaseError::BadUrl { .. }), "{err}");
        assert!(!err.to_string().contains("secret"), "{err}");
        let err = SqlLeaseStore::builder("postgres://127.0.0.1/test").table("a b").connect().unwrap_err();
        assert!(matches!(err, LeaseError::BadTable { .. }), "{err}");
    }

    #[cfg(feature = "lease-postgres")]
    #[test]
    fn a_bad_url_keeps_the_drivers_error_as_its_source() {
        use std::error::Error as _;
        // A URL this crate reads whole, with a parameter value sqlx refuses.
        let err = SqlLeaseStore::connect("postgres://app:secret@127.0.0.1/test?sslmode=nonsense").unwrap_err();
        let LeaseError::BadUrl { reason, source: Some(driver), .. } = &err else { panic!("{err:?}") };
        assert!(driver.downcast_ref::<sqlx_core::Error>().is_some(), "{driver:?}");
        assert_eq!(err.source().map(|cause| cause.to_string()).as_deref(), Some(reason.as_str()));
        assert!(!err.to_string().contains("secret"), "{err}");
        // A scheme this crate refuses has no driver error behind it.
        let err = SqlLeaseStore::connect("redis://127.0.0.1:6379").unwrap_err();
        assert!(matches!(err, LeaseError::BadUrl { source: None, .. }) && err.source().is_none(), "{err:?}");
    }

    #[test]
    fn a_refused_connection_names_its_cause_once() {
        // Nothing listens on port 1.
        let url = if cfg!(feature = "lease-postgres") {
            "postgres://app@127.0.0.1:1/test"
        } else {
            "mysql://app@127.0.0.1:1/test"
        };
        let error = SqlLeaseStore::connect(url).unwrap_err();
        assert!(error.to_string().starts_with("lease store "), "{error}");
        super::super::testing::assert_refusal_named_once(&error);
    }

    #[cfg(not(feature = "lease-mysql"))]
    #[test]
    fn a_disabled_backend_names_its_feature() {
        let err = SqlLeaseStore::connect("mysql://root@127.0.0.1:3306/test").unwrap_err();
        assert!(err.to_string().contains("feature `lease-mysql`"), "{err}");
    }

    #[cfg(not(feature = "lease-postgres"))]
    #[test]
    fn a_disabled_backend_names_its_feature() {
        let err = SqlLeaseStore::connect("postgres://postgres@127.0.0.1:5432/test").unwrap_err();
        assert!(err.to_string().contains("feature `lease-postgres`"), "{err}");
    }

    #[test]
    fn a_ca_named_in_the_url_is_told_apart() {
        let named = |url: &str, keys: &[&str]| StoreUrl::parse(url).unwrap().names_param(keys);
        assert!(named("postgres://db/ids?sslmode=verify-full&sslrootcert=/etc/ca.pem", &["sslrootcert"]));
        assert!(named("mysql://db/ids?ssl-mode=VERIFY_CA&SSL-CA=/ca.pem", &["ssl-ca"]));
        assert!(!named("postgres://db/ids?sslmode=require", &["sslrootcert"]));
        assert!(!named("postgres://db/sslrootcert", &["sslrootcert"]));
        assert!(!named("postgres://db/ids?x=sslrootcert", &["sslrootcert"]));
    }
}
