//! Worker-ID leases in PostgreSQL (feature `lease-postgres`) or MySQL/MariaDB (feature
//! `lease-mysql`): the statements are described on [`SqlLeaseStore`]. This module holds what
//! the databases share (the scan, the rows, timeouts, errors, the runtime); `postgres.rs` and
//! `mysql.rs` each implement [`Backend`] with their statements.

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use sqlx_core::connection::{ConnectOptions, Connection};
use sqlx_core::database::Database;
use sqlx_core::executor::Executor;
use sqlx_core::pool::{Pool, PoolOptions};
use sqlx_core::sql_str::AssertSqlSafe;
use tokio::runtime::Runtime;
use tokio::time::Instant;

use super::store::support::{
    HOST_NAME_BYTES, UnexpectedReply, acquiring, check_namespace, check_space, doing, holder_name,
    install_crypto_provider, listing, new_token, recorded_holder, scan_order, ttl_ms,
};
use super::store::{Claim, DEFAULT_STORE_TIMEOUT, Grant, LeaseError, LeaseStore, StoreFaults, WorkerRecord};
use super::url::{StoreKind, StoreUrl};

#[cfg(feature = "lease-mysql")]
mod mysql;
#[cfg(feature = "lease-postgres")]
mod postgres;

/// The lease table's name unless the builder is given another.
///
/// ```
/// assert_eq!(typed_snowflake::worker::lease::DEFAULT_TABLE, "snowflake_worker_leases");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_TABLE: &str = "snowflake_worker_leases";

/// The PostgreSQL lease table, as the store creates it (idempotent): copy it into a migration
/// where the store's database user may not create tables.
///
/// ```
/// use typed_snowflake::worker::lease::{DEFAULT_TABLE, POSTGRES_TABLE_DDL};
///
/// assert!(POSTGRES_TABLE_DDL.starts_with("CREATE TABLE IF NOT EXISTS snowflake_worker_leases ("));
/// // For another table name, replace the default one.
/// let ddl = POSTGRES_TABLE_DDL.replacen(DEFAULT_TABLE, "ids.worker_leases", 1);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const POSTGRES_TABLE_DDL: &str = "CREATE TABLE IF NOT EXISTS snowflake_worker_leases (
    namespace     VARCHAR(64) NOT NULL,
    worker_id     BIGINT      NOT NULL,
    holder        VARCHAR(64) NOT NULL,
    fence         BIGINT      NOT NULL,
    lease_until   TIMESTAMPTZ NOT NULL,
    high_water_ms BIGINT,
    PRIMARY KEY (namespace, worker_id)
)";

/// The MySQL/MariaDB lease table, as the store creates it (idempotent): copy it into a
/// migration where the store's database user may not create tables. Namespaces and tokens
/// compare byte for byte (`ascii_bin`), `lease_until` is UTC.
///
/// ```
/// use typed_snowflake::worker::lease::MYSQL_TABLE_DDL;
///
/// assert!(MYSQL_TABLE_DDL.starts_with("CREATE TABLE IF NOT EXISTS snowflake_worker_leases ("));
/// assert!(MYSQL_TABLE_DDL.contains("lease_until   DATETIME(3)"));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const MYSQL_TABLE_DDL: &str = "CREATE TABLE IF NOT EXISTS snowflake_worker_leases (
    namespace     VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    worker_id     BIGINT      NOT NULL,
    holder        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    fence         BIGINT      NOT NULL,
    lease_until   DATETIME(3) NOT NULL,
    high_water_ms BIGINT      NULL,
    PRIMARY KEY (namespace, worker_id)
) ENGINE = InnoDB";

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
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn table(mut self, table: impl Into<String>) -> Self {
        self.table = table.into();
        self
    }

    /// Bounds each round trip by `timeout` instead of [`DEFAULT_STORE_TIMEOUT`]: taking a
    /// connection and the statements of one operation, together. The server is told the same
    /// bound, so that it gives up too: PostgreSQL for lock waits and statements, MySQL and
    /// MariaDB for lock waits, rounded up to whole seconds. A zero timeout counts as 1 ms.
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

    /// Connects (within the timeout), and creates the table if it does not exist.
    ///
    /// `postgres://` and `postgresql://` URLs need the feature `lease-postgres`; `mysql://`
    /// and `mariadb://` URLs need `lease-mysql`. TLS is asked for in the URL, through rustls:
    /// PostgreSQL's `sslmode=require|verify-ca|verify-full` (with `sslrootcert=<PEM file>`),
    /// MySQL's and MariaDB's `ssl-mode=REQUIRED|VERIFY_CA|VERIFY_IDENTITY` (with
    /// `ssl-ca=<PEM file>`). A URL that names no CA file uses the one in the environment
    /// variable `SNOWFLAKE_LEASE_CA` when it is set, else the system's trusted roots.
    /// `require`/`REQUIRED` encrypt without checking the server's certificate; the `verify`
    /// modes check it, and refuse a server whose certificate the CA did not sign.
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
        let bad_url = |reason: String| LeaseError::BadUrl { url: shown.clone(), reason, source: None };
        let kind = match url.kind() {
            StoreKind::Postgres => Kind::Postgres,
            StoreKind::MySql => Kind::MySql,
            _ => return Err(bad_url("expected a postgres://, postgresql://, mysql:// or mariadb:// URL".into())),
        };
        // The environment's CA, for a URL that names none of its own.
        let ca = url.ca_file();
        // The driver refused the URL: its error is the cause, as text and as `source()`.
        let driver_refused = |e: sqlx_core::Error| LeaseError::BadUrl {
            url: shown.clone(),
            reason: e.to_string(),
            source: Some(Arc::new(e)),
        };
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
            Kind::Postgres => postgres::options(&url, ca.as_deref())
                .map(|options| runtime.block_on(postgres::connect(options, table, timeout))),
            #[cfg(not(feature = "lease-postgres"))]
            Kind::Postgres => {
                return Err(bad_url("PostgreSQL leases need the feature `lease-postgres` of typed-snowflake".into()));
            }
            #[cfg(feature = "lease-mysql")]
            Kind::MySql => mysql::options(&url, ca.as_deref())
                .map(|options| runtime.block_on(mysql::connect(options, table, timeout))),
            #[cfg(not(feature = "lease-mysql"))]
            Kind::MySql => {
                return Err(bad_url(
                    "MySQL and MariaDB leases need the feature `lease-mysql` of typed-snowflake".into(),
                ));
            }
        };
        let connecting = || format!("connecting and creating table {table}");
        let backend = connected.map_err(driver_refused)?.map_err(|f| f.into_error(&name, connecting(), timeout))?;
        Ok(SqlLeaseStore { runtime: Some(runtime), backend, timeout, name })
    }
}

enum Kind {
    Postgres,
    MySql,
}

/// Worker-ID leases in a PostgreSQL or MySQL/MariaDB table through sqlx, on the database's
/// clock.
///
/// The store owns a small tokio runtime (one worker thread) and a pool of at most two
/// connections, and blocks on each call: **its methods must not be called from inside an async
/// runtime** (tokio panics); call them from a thread of their own or `spawn_blocking`. Each
/// round trip is bounded by the store's timeout; a connection that failed or timed out is closed,
/// and the next call opens another.
///
/// - Acquisition: from a random start, a `SELECT` of the worker IDs held by live leases, up
///   to 1024 at a time; then, for each of the others tried, PostgreSQL runs one
///   `INSERT … ON CONFLICT … DO UPDATE … WHERE lease_until <= now() RETURNING …`; MySQL and
///   MariaDB, which have no conditional upsert, run `INSERT … ON DUPLICATE KEY UPDATE` whose
///   assignments change the row only when its lease has expired, then read the row in the same
///   transaction to learn whether the holder is now this acquisition.
/// - Renewal and release: one `UPDATE … WHERE holder = … AND fence = … AND lease_until > now`;
///   no row matched means the lease is lost. `holder` is `token/host:pid`: the first 16
///   digits of the grant's token and who holds it, for [`list`](LeaseStore::list).
/// - Fencing number: the database's clock in microseconds, or the row's previous fence plus
///   one (or the claim's fence plus one) when that is higher, so it never goes backwards,
///   even when the row was lost. A new row has no high water: the grant says the store has
///   no record of the worker ID, and the holder waits out any earlier one.
///
/// The table ([`POSTGRES_TABLE_DDL`], [`MYSQL_TABLE_DDL`]) is created when the store connects,
/// if it does not exist; put the statement in a migration instead where the application's
/// database user may not create tables. Rows are never deleted: a released lease keeps its
/// fencing number and its high water for the next holder. MySQL and MariaDB keep
/// `lease_until` in UTC as `DATETIME(3)`, written and compared with `UTC_TIMESTAMP(3)` only,
/// so that neither the session time zone nor the year 2038 matter.
///
/// ```no_run
/// use std::time::Duration;
/// use typed_snowflake::worker::lease::{Claim, LeaseStore, SqlLeaseStore};
///
/// let store = SqlLeaseStore::connect("postgres://postgres@127.0.0.1:5432/test")?;
/// let grant = store.acquire(&Claim::new("shop", 32, Duration::from_secs(10)))?;
/// store.renew("shop", &grant, Duration::from_secs(10), grant.store_now_ms)?;
/// store.release("shop", &grant, grant.store_now_ms)?;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SqlLeaseStore {
    /// Taken on drop, to shut it down without blocking.
    runtime: Option<Runtime>,
    backend: Box<dyn Backend>,
    timeout: Duration,
    name: String,
}

impl fmt::Debug for SqlLeaseStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlLeaseStore").field("store", &self.name).field("timeout", &self.timeout).finish()
    }
}

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
    /// Ok::<(), Box<dyn std::error::Error>>(())
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
    fn acquire(&self, claim: &Claim<'_>) -> Result<Grant, LeaseError> {
        let Claim { namespace, space, ttl, prefer, fence_above, .. } = *claim;
        check_namespace(namespace)?;
        check_space(space)?;
        let ttl_ms = ttl_ms(ttl)?;
        let token = new_token();
        let holder = holder_column(&token);
        // Fences are BIGINT: one above i64::MAX - 1 cannot be asked for (nor handed out).
        let fence_above = i64::try_from(fence_above).unwrap_or(i64::MAX - 1).min(i64::MAX - 1);
        for chunk in scan_order(space, prefer) {
            let (from, to) = (worker_id(chunk.start), worker_id(chunk.end));
            let held = self.block_on(|| acquiring(namespace), self.backend.held(namespace, from, to, self.timeout))?;
            let held: HashSet<i64> = held.into_iter().collect();
            for worker in chunk.filter(|&worker| !held.contains(&worker_id(worker))) {
                let won = self.block_on(
                    || acquiring(namespace),
                    self.backend.try_acquire(
                        Attempt { namespace, worker_id: worker_id(worker), holder: &holder, ttl_ms, fence_above },
                        self.timeout,
                    ),
                )?;
                // `None`: taken since `held` was read. On to the next.
                if let Some((fence, previous_high_water_ms, store_now_ms)) = won {
                    let fence = u64::try_from(fence).map_err(|_| {
                        let reply = UnexpectedReply(format!("fence {fence} is negative"));
                        LeaseError::store(&self.name, doing("acquiring", namespace, worker), reply)
                    })?;
                    // A store that cannot say since when it has known the namespace vouches for
                    // no never-used worker ID: the grant then waits out the reservation.
                    let namespace_since_ms = if previous_high_water_ms.is_none() {
                        self.block_on(|| acquiring(namespace), self.backend.since(namespace, self.timeout))
                            .ok()
                            .flatten()
                    } else {
                        None
                    };
                    return Ok(Grant {
                        worker,
                        token,
                        fence,
                        previous_high_water_ms,
                        store_now_ms,
                        namespace_since_ms,
                    });
                }
            }
        }
        Err(LeaseError::NoFreeWorker { namespace: namespace.to_owned(), space })
    }

    fn renew(&self, namespace: &str, grant: &Grant, ttl: Duration, high_water_ms: i64) -> Result<(), LeaseError> {
        check_namespace(namespace)?;
        let ttl_ms = ttl_ms(ttl)?;
        let row = LeaseRow::new(namespace, grant)?;
        let renewed = self.block_on(
            || doing("renewing", namespace, grant.worker),
            self.backend.renew(&row, ttl_ms, high_water_ms, self.timeout),
        )?;
        row.ours(renewed)
    }

    fn release(&self, namespace: &str, grant: &Grant, high_water_ms: i64) -> Result<(), LeaseError> {
        check_namespace(namespace)?;
        let row = LeaseRow::new(namespace, grant)?;
        let released = self.block_on(
            || doing("releasing", namespace, grant.worker),
            self.backend.release(&row, high_water_ms, self.timeout),
        )?;
        row.ours(released)
    }

    fn now_ms(&self) -> Result<i64, LeaseError> {
        self.block_on(|| "reading the clock".to_owned(), self.backend.now_ms(self.timeout))
    }

    fn faults(&self) -> StoreFaults {
        StoreFaults::SQL
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn list(&self, namespace: &str) -> Result<Vec<WorkerRecord>, LeaseError> {
        check_namespace(namespace)?;
        let rows = self.block_on(|| listing(namespace), self.backend.list(namespace, self.timeout))?;
        let mut records = Vec::with_capacity(rows.len());
        for (worker_id, holder, fence, high_water_ms, left_ms) in rows {
            let unexpected = |reply: String| LeaseError::store(&self.name, listing(namespace), UnexpectedReply(reply));
            let worker = u64::try_from(worker_id).map_err(|_| unexpected(format!("worker ID {worker_id}")))?;
            let mut record = WorkerRecord::new(worker).high_water(high_water_ms);
            if left_ms > 0 {
                let fence = u64::try_from(fence).map_err(|_| unexpected(format!("fence {fence} is negative")))?;
                // `token/name`, or a bare token from a holder that recorded no name.
                let name = holder.split_once('/').and_then(|(_, name)| recorded_holder(name));
                let left = Duration::from_millis(left_ms.unsigned_abs());
                record = record.leased_by(name, fence, Some(left));
            }
            records.push(record);
        }
        Ok(records)
    }
}

/// What the `holder` column holds for a grant: its token's first 16 hexadecimal digits (64
/// random bits; the fence, compared with it, tells grants apart as well) and the holder's
/// name, `token/host:pid`: at most 64 bytes, the column's width.
fn holder_column(token: &str) -> String {
    // The longest host name and process ID fit the column, VARCHAR(64).
    const _: () = assert!(16 + 1 + HOST_NAME_BYTES + 1 + 10 <= 64);
    format!("{}/{}", token.get(..16).unwrap_or(token), holder_name())
}

/// A worker ID (or the end of a range of them) as the table stores it: `space` is at most
/// 2^22, so it always fits.
fn worker_id(worker: u64) -> i64 {
    i64::try_from(worker).expect("worker IDs are below 2^22")
}

/// The row a grant holds, as the statements bind it.
struct LeaseRow<'a> {
    namespace: &'a str,
    worker: u64,
    worker_id: i64,
    holder: String,
    fence: i64,
}

impl<'a> LeaseRow<'a> {
    fn new(namespace: &'a str, grant: &'a Grant) -> Result<Self, LeaseError> {
        let lost = || LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker };
        // A grant no store of ours could have handed out holds nothing.
        let worker_id = i64::try_from(grant.worker).map_err(|_| lost())?;
        let fence = i64::try_from(grant.fence).map_err(|_| lost())?;
        Ok(LeaseRow { namespace, worker: grant.worker, worker_id, holder: holder_column(&grant.token), fence })
    }

    /// `Ok` when the statement matched the row, `Lost` when it did not.
    fn ours(&self, matched: bool) -> Result<(), LeaseError> {
        if matched {
            Ok(())
        } else {
            Err(LeaseError::Lost { namespace: self.namespace.to_owned(), worker: self.worker })
        }
    }
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

/// Why an operation failed, before it is given its store and its description.
#[derive(Debug)]
enum Failure {
    /// The store did not answer within the timeout (ours or the database's own).
    Timeout,
    Sql(sqlx_core::Error),
}

impl Failure {
    /// The pool's own timeout and the server's limits are timeouts; the rest is the driver's.
    fn new(error: sqlx_core::Error, is_timeout: fn(&sqlx_core::Error) -> bool) -> Self {
        match error {
            sqlx_core::Error::PoolTimedOut => Failure::Timeout,
            error if is_timeout(&error) => Failure::Timeout,
            error => Failure::Sql(error),
        }
    }

    fn into_error(self, store: &str, what: String, timeout: Duration) -> LeaseError {
        match self {
            Failure::Timeout => LeaseError::Timeout { store: store.to_owned(), what, after: timeout },
            Failure::Sql(error) => LeaseError::store(store, what, error),
        }
    }
}

/// Takes a connection and runs `op` on it, both within `timeout`. A connection whose statement
/// failed or was cut off is closed rather than returned to the pool: a reply may still be on
/// its way, and the server may still hold its locks.
async fn with_connection<DB: Database, T>(
    pool: &Pool<DB>,
    timeout: Duration,
    is_timeout: fn(&sqlx_core::Error) -> bool,
    op: impl AsyncFnOnce(&mut DB::Connection) -> Result<T, sqlx_core::Error>,
) -> Result<T, Failure> {
    let deadline = Instant::now() + timeout;
    let mut connection = tokio::time::timeout_at(deadline, pool.acquire())
        .await
        .map_err(|_| Failure::Timeout)?
        .map_err(|e| Failure::new(e, is_timeout))?;
    let result = tokio::time::timeout_at(deadline, op(&mut connection)).await;
    if !matches!(result, Ok(Ok(_))) {
        connection.close_on_drop();
    }
    result.map_err(|_| Failure::Timeout)?.map_err(|e| Failure::new(e, is_timeout))
}

/// Connects once, outside the pool (whose connection attempts retry a refused connection
/// until the timeout, hiding why), and creates the table if it does not exist, within
/// `timeout`. Two sessions creating the table at once can make one of them fail
/// (PostgreSQL); a second attempt then finds it.
async fn create_table<DB: Database>(
    options: &<DB::Connection as Connection>::Options,
    ddl: &Arc<str>,
    timeout: Duration,
    is_timeout: fn(&sqlx_core::Error) -> bool,
) -> Result<(), Failure>
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    let create = async {
        let mut connection = options.connect().await?;
        let mut retries = 3;
        loop {
            match connection.execute(AssertSqlSafe(ddl.clone())).await {
                Ok(_) => break,
                Err(sqlx_core::Error::Database(_)) if retries > 0 => retries -= 1,
                Err(error) => return Err(error),
            }
        }
        connection.close().await
    };
    tokio::time::timeout(timeout, create).await.map_err(|_| Failure::Timeout)?.map_err(|e| Failure::new(e, is_timeout))
}

/// A pool for the store: two connections at most, each taken within the timeout. A server
/// that refuses connections is tried again until then.
fn pool_options<DB: Database>(timeout: Duration) -> PoolOptions<DB> {
    PoolOptions::new().min_connections(0).max_connections(2).acquire_timeout(timeout)
}

/// A backend's statements, with `{table}` for the table's name.
struct Templates {
    ddl: &'static str,
    acquire: &'static str,
    /// MySQL only: read the row after the upsert.
    read_back: &'static str,
    /// The worker IDs in `$2..$3` whose leases are live.
    held: &'static str,
    renew: &'static str,
    release: &'static str,
    now: &'static str,
    /// A namespace's rows: worker ID, holder, fence, high water, milliseconds left.
    list: &'static str,
    /// Writes the namespace's marker (worker ID -1, the database's clock as its high water)
    /// unless it exists.
    mark: &'static str,
    /// Reads the marker's time.
    since: &'static str,
}

/// The statements, with the table's name written in.
struct Statements {
    ddl: Arc<str>,
    acquire: Arc<str>,
    #[cfg_attr(not(feature = "lease-mysql"), allow(dead_code))]
    read_back: Arc<str>,
    held: Arc<str>,
    renew: Arc<str>,
    release: Arc<str>,
    now: Arc<str>,
    list: Arc<str>,
    mark: Arc<str>,
    since: Arc<str>,
}

impl Statements {
    fn new(table: &str, templates: &Templates) -> Self {
        let with_table = |sql: &str| sql.replace("{table}", table).into();
        Statements {
            ddl: templates.ddl.replacen(DEFAULT_TABLE, table, 1).into(),
            acquire: with_table(templates.acquire),
            read_back: with_table(templates.read_back),
            held: with_table(templates.held),
            renew: with_table(templates.renew),
            release: with_table(templates.release),
            now: with_table(templates.now),
            list: with_table(templates.list),
            mark: with_table(templates.mark),
            since: with_table(templates.since),
        }
    }
}

/// What a won acquisition reads: the fence, the previous high water, the store's clock.
type Won = Option<(i64, Option<i64>, i64)>;

/// One round trip (or one transaction) of a backend, run on the store's runtime.
type Op<'a, T> = Pin<Box<dyn Future<Output = Result<T, Failure>> + 'a>>;

/// What differs between the databases: the statements, how their parameters are bound, and
/// how an acquisition learns whether it won. Everything else (the scan, the rows, timeouts,
/// errors, the runtime) is [`SqlLeaseStore`]'s, once.
trait Backend: Send + Sync {
    /// The worker IDs in `from..to` whose leases are live.
    fn held<'a>(&'a self, namespace: &'a str, from: i64, to: i64, timeout: Duration) -> Op<'a, Vec<i64>>;

    /// Takes `worker_id` if its lease has expired (or it has no row): `Some` when this call won.
    fn try_acquire<'a>(&'a self, attempt: Attempt<'a>, timeout: Duration) -> Op<'a, Won>;

    /// Extends the lease and raises its high water: `true` while the row is still `row`'s.
    fn renew<'a>(&'a self, row: &'a LeaseRow<'a>, ttl_ms: i64, high_water_ms: i64, timeout: Duration) -> Op<'a, bool>;

    /// Records the final high water and frees the row: `true` when it was still `row`'s.
    fn release<'a>(&'a self, row: &'a LeaseRow<'a>, high_water_ms: i64, timeout: Duration) -> Op<'a, bool>;

    /// The database's clock, in Unix milliseconds.
    fn now_ms(&self, timeout: Duration) -> Op<'_, i64>;

    /// The rows of `namespace`, by worker ID.
    fn list<'a>(&'a self, namespace: &'a str, timeout: Duration) -> Op<'a, Vec<Listed>>;

    /// Since when (the database's clock, Unix ms) the table has held `namespace`'s marker row,
    /// written now if it had none.
    fn since<'a>(&'a self, namespace: &'a str, timeout: Duration) -> Op<'a, Option<i64>>;
}

/// A listed row: worker ID, holder, fence, high water, milliseconds left on the lease (0 or
/// less: expired).
type Listed = (i64, String, i64, Option<i64>, i64);

/// One acquisition attempt of one worker ID, as the statements bind it.
#[derive(Clone, Copy)]
struct Attempt<'a> {
    namespace: &'a str,
    worker_id: i64,
    /// The `holder` column's value.
    holder: &'a str,
    ttl_ms: i64,
    fence_above: i64,
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
    fn statements_name_the_table() {
        let templates = Templates {
            ddl: POSTGRES_TABLE_DDL,
            acquire: "INSERT INTO {table}",
            read_back: "",
            held: "SELECT FROM {table}",
            renew: "UPDATE {table}",
            release: "",
            now: "SELECT now()",
            list: "SELECT * FROM {table} WHERE namespace = $1",
            mark: "",
            since: "",
        };
        let sql = Statements::new("ids.leases", &templates);
        assert!(sql.ddl.starts_with("CREATE TABLE IF NOT EXISTS ids.leases ("));
        assert_eq!(&*sql.acquire, "INSERT INTO ids.leases");
        assert_eq!(&*sql.held, "SELECT FROM ids.leases");
        assert_eq!(&*sql.renew, "UPDATE ids.leases");
        assert_eq!(&*sql.list, "SELECT * FROM ids.leases WHERE namespace = $1");
    }

    #[test]
    fn holder_columns_fit_the_column() {
        let token = "0123456789abcdef0123456789abcdef";
        let column = holder_column(token);
        let (short, name) = column.split_once('/').expect("token/name");
        assert_eq!(short, "0123456789abcdef");
        assert_eq!(recorded_holder(name).as_deref(), Some(holder_name()));
        // A grant no store of ours made does not panic.
        assert!(holder_column("é").ends_with(holder_name()));
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
        super::super::store::assert_refusal_named_once(&error);
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
