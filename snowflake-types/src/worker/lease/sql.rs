//! Worker-ID leases in PostgreSQL (feature `sqlx-postgres`) or MySQL/MariaDB (feature
//! `sqlx-mysql`): the statements are described on [`SqlLeaseStore`].

use std::collections::HashSet;
use std::future::Future;
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
    UnexpectedReply, acquiring, check_namespace, check_space, doing, new_token, redact_url, scan_order, ttl_ms,
};
use super::store::{Claim, DEFAULT_STORE_TIMEOUT, Grant, LeaseError, LeaseStore};

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
#[derive(Clone, Debug)]
#[must_use]
pub struct SqlLeaseStoreBuilder {
    url: String,
    table: String,
    timeout: Duration,
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
    /// `postgres://` and `postgresql://` URLs need the feature `sqlx-postgres`; `mysql://` and
    /// `mariadb://` URLs need `sqlx-mysql`. TLS is not supported.
    ///
    /// ```no_run
    /// use typed_snowflake::worker::lease::{LeaseStore, SqlLeaseStore};
    ///
    /// let store = SqlLeaseStore::builder("postgres://postgres@127.0.0.1:5432/test").connect()?;
    /// println!("leases in {}", store.describe());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn connect(self) -> Result<SqlLeaseStore, LeaseError> {
        check_table(&self.table)?;
        let shown = redact_url(&self.url);
        let bad_url = |reason: String| LeaseError::BadUrl { url: shown.clone(), reason, source: None };
        // The driver refused the URL: its error is the cause, as text and as `source()`.
        #[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql"))]
        let driver_refused = |e: sqlx_core::Error| LeaseError::BadUrl {
            url: shown.clone(),
            reason: e.to_string(),
            source: Some(Arc::new(e)),
        };
        let scheme = self.url.split_once("://").map(|(scheme, _)| scheme.to_ascii_lowercase());
        let kind = match scheme.as_deref() {
            Some("postgres" | "postgresql") => Kind::Postgres,
            Some("mysql" | "mariadb") => Kind::MySql,
            _ => return Err(bad_url("expected a postgres://, postgresql://, mysql:// or mariadb:// URL".into())),
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("snowflake-lease-sql")
            .enable_all()
            .build()
            .map_err(|e| LeaseError::store(&shown, "starting the store's runtime", e))?;
        let name = format!("{shown} (table {})", self.table);
        let connecting = || format!("connecting and creating table {}", self.table);
        let backend = match kind {
            #[cfg(feature = "sqlx-postgres")]
            Kind::Postgres => {
                let options = self.url.parse().map_err(driver_refused)?;
                Backend::Postgres(
                    runtime
                        .block_on(postgres::Backend::connect(options, &self.table, self.timeout))
                        .map_err(|f| f.into_error(&name, connecting(), self.timeout))?,
                )
            }
            #[cfg(not(feature = "sqlx-postgres"))]
            Kind::Postgres => {
                return Err(bad_url("PostgreSQL leases need the feature `sqlx-postgres` of typed-snowflake".into()));
            }
            #[cfg(feature = "sqlx-mysql")]
            Kind::MySql => {
                // sqlx reads `mysql://`; MariaDB speaks the same protocol.
                let url = match self.url.split_once("://") {
                    Some((_, rest)) => format!("mysql://{rest}"),
                    None => self.url.clone(),
                };
                let options = url.parse().map_err(driver_refused)?;
                Backend::MySql(
                    runtime
                        .block_on(mysql::Backend::connect(options, &self.table, self.timeout))
                        .map_err(|f| f.into_error(&name, connecting(), self.timeout))?,
                )
            }
            #[cfg(not(feature = "sqlx-mysql"))]
            Kind::MySql => {
                return Err(bad_url(
                    "MySQL and MariaDB leases need the feature `sqlx-mysql` of typed-snowflake".into(),
                ));
            }
        };
        Ok(SqlLeaseStore { runtime: Some(runtime), backend, timeout: self.timeout, name })
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
///   no row matched means the lease is lost.
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
    backend: Backend,
    timeout: Duration,
    name: String,
}

impl std::fmt::Debug for SqlLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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
        SqlLeaseStoreBuilder { url: url.into(), table: DEFAULT_TABLE.to_owned(), timeout: DEFAULT_STORE_TIMEOUT }
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
        // Fences are BIGINT: one above i64::MAX - 1 cannot be asked for (nor handed out).
        let fence_above = i64::try_from(fence_above).unwrap_or(i64::MAX - 1).min(i64::MAX - 1);
        for chunk in scan_order(space, prefer) {
            let (from, to) = (worker_id(chunk.start), worker_id(chunk.end));
            let held = self.block_on(|| acquiring(namespace), self.backend.held(namespace, from, to, self.timeout))?;
            let held: HashSet<i64> = held.into_iter().collect();
            for worker in chunk.filter(|&worker| !held.contains(&worker_id(worker))) {
                let won = self.block_on(
                    || acquiring(namespace),
                    self.backend.try_acquire(namespace, worker_id(worker), &token, ttl_ms, fence_above, self.timeout),
                )?;
                // `None`: taken since `held` was read. On to the next.
                if let Some((fence, previous_high_water_ms, store_now_ms)) = won {
                    let fence = u64::try_from(fence).map_err(|_| {
                        let reply = UnexpectedReply(format!("fence {fence} is negative"));
                        LeaseError::store(&self.name, doing("acquiring", namespace, worker), reply)
                    })?;
                    return Ok(Grant { worker, token, fence, previous_high_water_ms, store_now_ms });
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

    fn describe(&self) -> String {
        self.name.clone()
    }
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
    holder: &'a str,
    fence: i64,
}

impl<'a> LeaseRow<'a> {
    fn new(namespace: &'a str, grant: &'a Grant) -> Result<Self, LeaseError> {
        let lost = || LeaseError::Lost { namespace: namespace.to_owned(), worker: grant.worker };
        // A grant no store of ours could have handed out holds nothing.
        let worker_id = i64::try_from(grant.worker).map_err(|_| lost())?;
        let fence = i64::try_from(grant.fence).map_err(|_| lost())?;
        Ok(LeaseRow { namespace, worker: grant.worker, worker_id, holder: &grant.token, fence })
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
}

/// The statements, with the table's name written in.
struct Statements {
    ddl: Arc<str>,
    acquire: Arc<str>,
    #[cfg_attr(not(feature = "sqlx-mysql"), allow(dead_code))]
    read_back: Arc<str>,
    held: Arc<str>,
    renew: Arc<str>,
    release: Arc<str>,
    now: Arc<str>,
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
        }
    }
}

enum Backend {
    #[cfg(feature = "sqlx-postgres")]
    Postgres(postgres::Backend),
    #[cfg(feature = "sqlx-mysql")]
    MySql(mysql::Backend),
}

/// What a won acquisition reads: the fence, the previous high water, the store's clock.
type Won = Option<(i64, Option<i64>, i64)>;

impl Backend {
    async fn held(&self, namespace: &str, from: i64, to: i64, timeout: Duration) -> Result<Vec<i64>, Failure> {
        match self {
            #[cfg(feature = "sqlx-postgres")]
            Backend::Postgres(backend) => backend.held(namespace, from, to, timeout).await,
            #[cfg(feature = "sqlx-mysql")]
            Backend::MySql(backend) => backend.held(namespace, from, to, timeout).await,
        }
    }

    async fn try_acquire(
        &self,
        namespace: &str,
        worker_id: i64,
        token: &str,
        ttl_ms: i64,
        fence_above: i64,
        timeout: Duration,
    ) -> Result<Won, Failure> {
        match self {
            #[cfg(feature = "sqlx-postgres")]
            Backend::Postgres(backend) => {
                backend.try_acquire(namespace, worker_id, token, ttl_ms, fence_above, timeout).await
            }
            #[cfg(feature = "sqlx-mysql")]
            Backend::MySql(backend) => {
                backend.try_acquire(namespace, worker_id, token, ttl_ms, fence_above, timeout).await
            }
        }
    }

    async fn renew(
        &self,
        row: &LeaseRow<'_>,
        ttl_ms: i64,
        high_water_ms: i64,
        timeout: Duration,
    ) -> Result<bool, Failure> {
        match self {
            #[cfg(feature = "sqlx-postgres")]
            Backend::Postgres(backend) => backend.renew(row, ttl_ms, high_water_ms, timeout).await,
            #[cfg(feature = "sqlx-mysql")]
            Backend::MySql(backend) => backend.renew(row, ttl_ms, high_water_ms, timeout).await,
        }
    }

    async fn release(&self, row: &LeaseRow<'_>, high_water_ms: i64, timeout: Duration) -> Result<bool, Failure> {
        match self {
            #[cfg(feature = "sqlx-postgres")]
            Backend::Postgres(backend) => backend.release(row, high_water_ms, timeout).await,
            #[cfg(feature = "sqlx-mysql")]
            Backend::MySql(backend) => backend.release(row, high_water_ms, timeout).await,
        }
    }

    async fn now_ms(&self, timeout: Duration) -> Result<i64, Failure> {
        match self {
            #[cfg(feature = "sqlx-postgres")]
            Backend::Postgres(backend) => backend.now_ms(timeout).await,
            #[cfg(feature = "sqlx-mysql")]
            Backend::MySql(backend) => backend.now_ms(timeout).await,
        }
    }
}

#[cfg(feature = "sqlx-postgres")]
mod postgres {
    use std::time::Duration;

    use sqlx_core::sql_str::AssertSqlSafe;
    use sqlx_postgres::{PgConnectOptions, PgPool, Postgres};

    use super::{Failure, LeaseRow, Statements, Templates, Won, create_table, pool_options, with_connection};

    const SQL: Templates = Templates {
        ddl: super::POSTGRES_TABLE_DDL,
        acquire: "INSERT INTO {table} AS lease (namespace, worker_id, holder, fence, lease_until)
            VALUES ($1, $2, $3, GREATEST(floor(extract(epoch FROM now()) * 1000000)::bigint, $5 + 1),
                    now() + $4 * interval '1 millisecond')
            ON CONFLICT (namespace, worker_id) DO UPDATE
            SET holder = excluded.holder, fence = GREATEST(lease.fence + 1, excluded.fence),
                lease_until = excluded.lease_until
            WHERE lease.lease_until <= now()
            RETURNING fence, high_water_ms, floor(extract(epoch FROM now()) * 1000)::bigint",
        read_back: "",
        held: "SELECT worker_id FROM {table}
            WHERE namespace = $1 AND worker_id >= $2 AND worker_id < $3 AND lease_until > now()",
        renew: "UPDATE {table}
            SET lease_until = now() + $5 * interval '1 millisecond',
                high_water_ms = COALESCE(GREATEST(high_water_ms, $6), $6)
            WHERE namespace = $1 AND worker_id = $2 AND holder = $3 AND fence = $4 AND lease_until > now()",
        release: "UPDATE {table}
            SET lease_until = now(), high_water_ms = $5
            WHERE namespace = $1 AND worker_id = $2 AND holder = $3 AND fence = $4 AND lease_until > now()",
        now: "SELECT floor(extract(epoch FROM now()) * 1000)::bigint",
    };

    pub(super) struct Backend {
        pool: PgPool,
        sql: Statements,
    }

    /// The server's own limits: `55P03` a lock wait over `lock_timeout`, `57014` a statement
    /// over `statement_timeout`.
    fn is_timeout(error: &sqlx_core::Error) -> bool {
        error.as_database_error().and_then(|e| e.code()).is_some_and(|code| code == "55P03" || code == "57014")
    }

    impl Backend {
        pub(super) async fn connect(
            options: PgConnectOptions,
            table: &str,
            timeout: Duration,
        ) -> Result<Self, Failure> {
            let limit = format!("{}ms", timeout.as_millis());
            let options = options
                .application_name("typed-snowflake lease")
                .options([("lock_timeout", limit.as_str()), ("statement_timeout", limit.as_str())]);
            let sql = Statements::new(table, &SQL);
            create_table::<Postgres>(&options, &sql.ddl, timeout, is_timeout).await?;
            Ok(Backend { pool: pool_options(timeout).connect_lazy_with(options), sql })
        }

        pub(super) async fn held(
            &self,
            namespace: &str,
            from: i64,
            to: i64,
            timeout: Duration,
        ) -> Result<Vec<i64>, Failure> {
            with_connection(&self.pool, timeout, is_timeout, async |c| {
                sqlx_core::query_scalar::query_scalar(AssertSqlSafe(self.sql.held.clone()))
                    .bind(namespace)
                    .bind(from)
                    .bind(to)
                    .fetch_all(c)
                    .await
            })
            .await
        }

        pub(super) async fn try_acquire(
            &self,
            namespace: &str,
            worker_id: i64,
            token: &str,
            ttl_ms: i64,
            fence_above: i64,
            timeout: Duration,
        ) -> Result<Won, Failure> {
            with_connection(&self.pool, timeout, is_timeout, async |c| {
                sqlx_core::query_as::query_as(AssertSqlSafe(self.sql.acquire.clone()))
                    .bind(namespace)
                    .bind(worker_id)
                    .bind(token)
                    .bind(ttl_ms)
                    .bind(fence_above)
                    .fetch_optional(c)
                    .await
            })
            .await
        }

        pub(super) async fn renew(
            &self,
            row: &LeaseRow<'_>,
            ttl_ms: i64,
            high_water_ms: i64,
            timeout: Duration,
        ) -> Result<bool, Failure> {
            with_connection(&self.pool, timeout, is_timeout, async |c| {
                let done = sqlx_core::query::query(AssertSqlSafe(self.sql.renew.clone()))
                    .bind(row.namespace)
                    .bind(row.worker_id)
                    .bind(row.holder)
                    .bind(row.fence)
                    .bind(ttl_ms)
                    .bind(high_water_ms)
                    .execute(c)
                    .await?;
                Ok(done.rows_affected() == 1)
            })
            .await
        }

        pub(super) async fn release(
            &self,
            row: &LeaseRow<'_>,
            high_water_ms: i64,
            timeout: Duration,
        ) -> Result<bool, Failure> {
            with_connection(&self.pool, timeout, is_timeout, async |c| {
                let done = sqlx_core::query::query(AssertSqlSafe(self.sql.release.clone()))
                    .bind(row.namespace)
                    .bind(row.worker_id)
                    .bind(row.holder)
                    .bind(row.fence)
                    .bind(high_water_ms)
                    .execute(c)
                    .await?;
                Ok(done.rows_affected() == 1)
            })
            .await
        }

        pub(super) async fn now_ms(&self, timeout: Duration) -> Result<i64, Failure> {
            with_connection(&self.pool, timeout, is_timeout, async |c| {
                sqlx_core::query_scalar::query_scalar(AssertSqlSafe(self.sql.now.clone())).fetch_one(c).await
            })
            .await
        }
    }
}

#[cfg(feature = "sqlx-mysql")]
mod mysql {
    use std::time::Duration;

    use sqlx_core::connection::Connection;
    use sqlx_core::executor::Executor;
    use sqlx_core::sql_str::AssertSqlSafe;
    use sqlx_mysql::{MySql, MySqlConnectOptions, MySqlDatabaseError, MySqlPool};

    use super::{Failure, LeaseRow, Statements, Templates, Won, create_table, pool_options, with_connection};

    /// Unix milliseconds of `UTC_TIMESTAMP(3)`, by calendar arithmetic that no time zone
    /// touches.
    macro_rules! utc_now_ms {
        () => {
            "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000"
        };
    }

    const SQL: Templates = Templates {
        ddl: super::MYSQL_TABLE_DDL,
        // MySQL assigns left to right: every test reads the old `lease_until`, which is
        // assigned last.
        acquire: "INSERT INTO {table} (namespace, worker_id, holder, fence, lease_until)
            VALUES (?, ?, ?,
                    GREATEST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)), ? + 1),
                    UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND)
            ON DUPLICATE KEY UPDATE
              holder = IF(lease_until <= UTC_TIMESTAMP(3), VALUES(holder), holder),
              fence = IF(lease_until <= UTC_TIMESTAMP(3), GREATEST(fence + 1, VALUES(fence)), fence),
              lease_until = IF(lease_until <= UTC_TIMESTAMP(3), VALUES(lease_until), lease_until)",
        read_back: concat!(
            "SELECT holder, fence, high_water_ms, ",
            utc_now_ms!(),
            " FROM {table} WHERE namespace = ? AND worker_id = ?"
        ),
        held: "SELECT worker_id FROM {table}
            WHERE namespace = ? AND worker_id >= ? AND worker_id < ? AND lease_until > UTC_TIMESTAMP(3)",
        renew: "UPDATE {table}
            SET lease_until = UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND,
                high_water_ms = COALESCE(GREATEST(high_water_ms, ?), ?)
            WHERE namespace = ? AND worker_id = ? AND holder = ? AND fence = ? AND lease_until > UTC_TIMESTAMP(3)",
        release: "UPDATE {table}
            SET high_water_ms = COALESCE(?, ?), lease_until = UTC_TIMESTAMP(3)
            WHERE namespace = ? AND worker_id = ? AND holder = ? AND fence = ? AND lease_until > UTC_TIMESTAMP(3)",
        now: concat!("SELECT ", utc_now_ms!()),
    };

    pub(super) struct Backend {
        pool: MySqlPool,
        sql: Statements,
    }

    /// The server's own limits: 1205 a lock wait over `innodb_lock_wait_timeout`, 1969
    /// (MariaDB) and 3024 (MySQL) a statement over its time limit.
    fn is_timeout(error: &sqlx_core::Error) -> bool {
        error
            .as_database_error()
            .and_then(|e| e.try_downcast_ref::<MySqlDatabaseError>())
            .is_some_and(|e| matches!(e.number(), 1205 | 1969 | 3024))
    }

    impl Backend {
        pub(super) async fn connect(
            options: MySqlConnectOptions,
            table: &str,
            timeout: Duration,
        ) -> Result<Self, Failure> {
            // Whole seconds, at least 1: the server's lock-wait bound backs up ours.
            let lock_wait = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
            let session = format!("SET SESSION innodb_lock_wait_timeout = {}", lock_wait.max(1));
            let sql = Statements::new(table, &SQL);
            create_table::<MySql>(&options, &sql.ddl, timeout, is_timeout).await?;
            let pool = pool_options::<MySql>(timeout)
                .after_connect(move |c, _| {
                    let session = AssertSqlSafe(session.clone());
                    Box::pin(async move { c.execute(session).await.map(drop) })
                })
                .connect_lazy_with(options);
            Ok(Backend { pool, sql })
        }

        pub(super) async fn held(
            &self,
            namespace: &str,
            from: i64,
            to: i64,
            timeout: Duration,
        ) -> Result<Vec<i64>, Failure> {
            with_connection(&self.pool, timeout, is_timeout, async |c| {
                sqlx_core::query_scalar::query_scalar(AssertSqlSafe(self.sql.held.clone()))
                    .bind(namespace)
                    .bind(from)
                    .bind(to)
                    .fetch_all(c)
                    .await
            })
            .await
        }

        pub(super) async fn try_acquire(
            &self,
            namespace: &str,
            worker_id: i64,
            token: &str,
            ttl_ms: i64,
            fence_above: i64,
            timeout: Duration,
        ) -> Result<Won, Failure> {
            let row: (String, i64, Option<i64>, i64) = with_connection(&self.pool, timeout, is_timeout, async |c| {
                let mut tx = c.begin().await?;
                sqlx_core::query::query(AssertSqlSafe(self.sql.acquire.clone()))
                    .bind(namespace)
                    .bind(worker_id)
                    .bind(token)
                    .bind(fence_above)
                    .bind(ttl_ms * 1000)
                    .execute(&mut *tx)
                    .await?;
                let row = sqlx_core::query_as::query_as(AssertSqlSafe(self.sql.read_back.clone()))
                    .bind(namespace)
                    .bind(worker_id)
                    .fetch_one(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(row)
            })
            .await?;
            let (holder, fence, high_water_ms, now_ms) = row;
            Ok((holder == token).then_some((fence, high_water_ms, now_ms)))
        }

        pub(super) async fn renew(
            &self,
            row: &LeaseRow<'_>,
            ttl_ms: i64,
            high_water_ms: i64,
            timeout: Duration,
        ) -> Result<bool, Failure> {
            with_connection(&self.pool, timeout, is_timeout, async |c| {
                // The client reports rows matched, not rows changed (CLIENT_FOUND_ROWS): a
                // renewal that changes nothing within one millisecond still counts.
                let done = sqlx_core::query::query(AssertSqlSafe(self.sql.renew.clone()))
                    .bind(ttl_ms * 1000)
                    .bind(high_water_ms)
                    .bind(high_water_ms)
                    .bind(row.namespace)
                    .bind(row.worker_id)
                    .bind(row.holder)
                    .bind(row.fence)
                    .execute(c)
                    .await?;
                Ok(done.rows_affected() == 1)
            })
            .await
        }

        pub(super) async fn release(
            &self,
            row: &LeaseRow<'_>,
            high_water_ms: i64,
            timeout: Duration,
        ) -> Result<bool, Failure> {
            with_connection(&self.pool, timeout, is_timeout, async |c| {
                let done = sqlx_core::query::query(AssertSqlSafe(self.sql.release.clone()))
                    .bind(high_water_ms)
                    .bind(high_water_ms)
                    .bind(row.namespace)
                    .bind(row.worker_id)
                    .bind(row.holder)
                    .bind(row.fence)
                    .execute(c)
                    .await?;
                Ok(done.rows_affected() == 1)
            })
            .await
        }

        pub(super) async fn now_ms(&self, timeout: Duration) -> Result<i64, Failure> {
            with_connection(&self.pool, timeout, is_timeout, async |c| {
                sqlx_core::query_scalar::query_scalar(AssertSqlSafe(self.sql.now.clone())).fetch_one(c).await
            })
            .await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        };
        let sql = Statements::new("ids.leases", &templates);
        assert!(sql.ddl.starts_with("CREATE TABLE IF NOT EXISTS ids.leases ("));
        assert_eq!(&*sql.acquire, "INSERT INTO ids.leases");
        assert_eq!(&*sql.held, "SELECT FROM ids.leases");
        assert_eq!(&*sql.renew, "UPDATE ids.leases");
    }

    #[test]
    fn urls_are_checked_before_connecting() {
        let err = SqlLeaseStore::connect("redis://:secret@127.0.0.1:6379").unwrap_err();
        assert!(matches!(err, LeaseError::BadUrl { .. }), "{err}");
        assert!(!err.to_string().contains("secret"), "{err}");
        let err = SqlLeaseStore::builder("postgres://127.0.0.1/test").table("a b").connect().unwrap_err();
        assert!(matches!(err, LeaseError::BadTable { .. }), "{err}");
    }

    #[cfg(feature = "sqlx-postgres")]
    #[test]
    fn a_bad_url_keeps_the_drivers_error_as_its_source() {
        use std::error::Error as _;
        let err = SqlLeaseStore::connect("postgres://app:secret@127.0.0.1:notaport/test").unwrap_err();
        let LeaseError::BadUrl { reason, source: Some(driver), .. } = &err else { panic!("{err:?}") };
        assert!(driver.downcast_ref::<sqlx_core::Error>().is_some(), "{driver:?}");
        assert_eq!(err.source().map(|cause| cause.to_string()).as_deref(), Some(reason.as_str()));
        // A scheme this crate refuses has no driver error behind it.
        let err = SqlLeaseStore::connect("redis://127.0.0.1:6379").unwrap_err();
        assert!(matches!(err, LeaseError::BadUrl { source: None, .. }) && err.source().is_none(), "{err:?}");
    }

    #[test]
    fn a_refused_connection_names_its_cause_once() {
        // Nothing listens on port 1.
        let url = if cfg!(feature = "sqlx-postgres") {
            "postgres://app@127.0.0.1:1/test"
        } else {
            "mysql://app@127.0.0.1:1/test"
        };
        let error = SqlLeaseStore::connect(url).unwrap_err();
        assert!(error.to_string().starts_with("lease store "), "{error}");
        super::super::store::assert_refusal_named_once(&error);
    }

    #[cfg(not(feature = "sqlx-mysql"))]
    #[test]
    fn a_disabled_backend_names_its_feature() {
        let err = SqlLeaseStore::connect("mysql://root@127.0.0.1:3306/test").unwrap_err();
        assert!(err.to_string().contains("feature `sqlx-mysql`"), "{err}");
    }

    #[cfg(not(feature = "sqlx-postgres"))]
    #[test]
    fn a_disabled_backend_names_its_feature() {
        let err = SqlLeaseStore::connect("postgres://postgres@127.0.0.1:5432/test").unwrap_err();
        assert!(err.to_string().contains("feature `sqlx-postgres`"), "{err}");
    }
}
