//! What the SQL store ([`super::SqlLeaseStore`]) and its backends (`postgres.rs`, `mysql.rs`)
//! share, below both: the table, the statements, the rows a read gives and the
//! compare-and-sets a write binds, the failures, and the steps every backend runs (a
//! connection within the timeout, the table's creation, one write in one transaction).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use sqlx_core::connection::{ConnectOptions, Connection};
use sqlx_core::database::Database;
use sqlx_core::executor::Executor;
use sqlx_core::pool::{Pool, PoolOptions};
use sqlx_core::sql_str::AssertSqlSafe;
use tokio::time::Instant;

use super::super::store::LeaseError;
use super::super::store::support::UnexpectedReply;

/// The lease table's name unless the builder is given another.
///
/// ```
/// assert_eq!(typed_snowflake::worker::lease::DEFAULT_TABLE, "snowflake_worker_leases");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_TABLE: &str = "snowflake_worker_leases";

/// The PostgreSQL lease table, as the store creates it (idempotent): copy it into a migration
/// where the store's database user may not create tables. One row per slot of a namespace:
/// `slot` -1 holds the namespace's marker, `slot` n the record of worker ID n; `value` is
/// the line the lease protocol wrote, kept as it is.
///
/// ```
/// use typed_snowflake::worker::lease::{DEFAULT_TABLE, POSTGRES_TABLE_DDL};
///
/// assert!(POSTGRES_TABLE_DDL.starts_with("CREATE TABLE IF NOT EXISTS snowflake_worker_leases ("));
/// assert!(POSTGRES_TABLE_DDL.contains("PRIMARY KEY (namespace, slot)"));
/// // For another table name, replace the default one.
/// let ddl = POSTGRES_TABLE_DDL.replacen(DEFAULT_TABLE, "ids.worker_leases", 1);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const POSTGRES_TABLE_DDL: &str = "CREATE TABLE IF NOT EXISTS snowflake_worker_leases (
    namespace VARCHAR(64)  NOT NULL,
    slot      BIGINT       NOT NULL,
    value     VARCHAR(512) NOT NULL,
    PRIMARY KEY (namespace, slot)
)";

/// The MySQL/MariaDB lease table, as the store creates it (idempotent): copy it into a
/// migration where the store's database user may not create tables. One row per slot of a
/// namespace (`slot` -1: the marker; n: worker ID n). Namespaces compare byte for byte
/// (`ascii_bin`), and so do values (`VARBINARY`: no collation pads or folds them).
///
/// ```
/// use typed_snowflake::worker::lease::MYSQL_TABLE_DDL;
///
/// assert!(MYSQL_TABLE_DDL.starts_with("CREATE TABLE IF NOT EXISTS snowflake_worker_leases ("));
/// assert!(MYSQL_TABLE_DDL.contains("value     VARBINARY(512)"));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const MYSQL_TABLE_DDL: &str = "CREATE TABLE IF NOT EXISTS snowflake_worker_leases (
    namespace VARCHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    slot      BIGINT         NOT NULL,
    value     VARBINARY(512) NOT NULL,
    PRIMARY KEY (namespace, slot)
) ENGINE = InnoDB";

/// The worker IDs a read asks for, as the table stores them: `from..to`.
#[derive(Clone, Copy, Debug)]
pub(super) struct SlotRange {
    pub(super) from: i64,
    pub(super) to: i64,
}

/// One compare-and-set as the statements bind it.
#[derive(Clone, Copy, Debug)]
pub(super) struct RowCas<'a> {
    pub(super) slot: i64,
    pub(super) expect: Option<&'a str>,
    pub(super) value: &'a str,
}

/// The planted bugs of one call (all off without the feature `planted-bugs`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Bugs {
    pub(super) cas_ignores_expect: bool,
    pub(super) create_overwrites: bool,
    pub(super) write_not_atomic: bool,
    pub(super) namespace_case_insensitive: bool,
    pub(super) range_end_inclusive: bool,
    pub(super) values_trimmed: bool,
}

/// Why an operation failed, before it is given its store and its description.
#[derive(Debug)]
pub(super) enum Failure {
    /// The store did not answer within the timeout (ours or the database's own).
    Timeout,
    /// The table exists with the columns of an earlier version.
    OldTable,
    Sql(sqlx_core::Error),
}

impl Failure {
    /// The pool's own timeout and the server's limits are timeouts; the rest is the driver's.
    pub(super) fn new(error: sqlx_core::Error, is_timeout: fn(&sqlx_core::Error) -> bool) -> Self {
        match error {
            sqlx_core::Error::PoolTimedOut => Failure::Timeout,
            error if is_timeout(&error) => Failure::Timeout,
            error => Failure::Sql(error),
        }
    }

    pub(super) fn into_error(self, store: &str, what: String, timeout: Duration) -> LeaseError {
        match self {
            Failure::Timeout => LeaseError::Timeout { store: store.to_owned(), what, after: timeout },
            Failure::OldTable => LeaseError::store(store, what, UnexpectedReply("the table has other columns".into())),
            Failure::Sql(error) => LeaseError::store(store, what, error),
        }
    }
}

/// Takes a connection and runs `op` on it, both within `timeout`. A connection whose statement
/// failed or was cut off is closed rather than returned to the pool: a reply may still be on
/// its way, and the server may still hold its locks.
pub(super) async fn with_connection<DB: Database, T>(
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
/// until the timeout, hiding why), creates the table if it does not exist and checks its
/// columns, within `timeout`. Two sessions creating the table at once can make one of them
/// fail (PostgreSQL); a second attempt then finds it. `is_old`: whether an error of the
/// columns' check says a column is missing.
pub(super) async fn create_table<DB: Database>(
    options: &<DB::Connection as Connection>::Options,
    sql: &Statements,
    timeout: Duration,
    is_timeout: fn(&sqlx_core::Error) -> bool,
    is_old: fn(&sqlx_core::Error) -> bool,
) -> Result<(), Failure>
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    let create = async {
        let mut connection = options.connect().await?;
        let mut retries = 3;
        loop {
            match connection.execute(AssertSqlSafe(sql.ddl.clone())).await {
                Ok(_) => break,
                Err(sqlx_core::Error::Database(_)) if retries > 0 => retries -= 1,
                Err(error) => return Err(error),
            }
        }
        let shape = connection.execute(AssertSqlSafe(sql.shape.clone())).await.map(drop);
        connection.close().await?;
        shape
    };
    match tokio::time::timeout(timeout, create).await.map_err(|_| Failure::Timeout)? {
        Ok(()) => Ok(()),
        Err(error) if is_old(&error) => Err(Failure::OldTable),
        Err(error) => Err(Failure::new(error, is_timeout)),
    }
}

/// A pool for the store: two connections at most, each taken within the timeout. A server
/// that refuses connections is tried again until then.
pub(super) fn pool_options<DB: Database>(timeout: Duration) -> PoolOptions<DB> {
    PoolOptions::new().min_connections(0).max_connections(2).acquire_timeout(timeout)
}

/// A backend's statements, with `{table}` for the table's name.
pub(super) struct Templates {
    pub(super) ddl: &'static str,
    /// Fails unless the table has the columns of the DDL.
    pub(super) shape: &'static str,
    /// The marker's and the records' rows, the clock's and the incarnation's, the highest
    /// worker ID's when asked: see each backend for its parameters.
    pub(super) read: &'static str,
    pub(super) create: &'static str,
    pub(super) update: &'static str,
    /// Planted bugs: an update without the comparison, a creation that overwrites.
    pub(super) update_any: &'static str,
    pub(super) upsert: &'static str,
}

/// The statements, with the table's name written in.
pub(super) struct Statements {
    pub(super) ddl: Arc<str>,
    pub(super) shape: Arc<str>,
    pub(super) read: Arc<str>,
    pub(super) create: Arc<str>,
    pub(super) update: Arc<str>,
    pub(super) update_any: Arc<str>,
    pub(super) upsert: Arc<str>,
}

impl Statements {
    pub(super) fn new(table: &str, templates: &Templates) -> Self {
        let with_table = |sql: &str| sql.replace("{table}", table).into();
        Statements {
            ddl: templates.ddl.replacen(DEFAULT_TABLE, table, 1).into(),
            shape: with_table(templates.shape),
            read: with_table(templates.read),
            create: with_table(templates.create),
            update: with_table(templates.update),
            update_any: with_table(templates.update_any),
            upsert: with_table(templates.upsert),
        }
    }

    /// The read with the planted bugs' changes.
    pub(super) fn read(&self, bugs: Bugs) -> Arc<str> {
        let mut read = self.read.to_string();
        if bugs.range_end_inclusive {
            read = read.replacen("slot < ", "slot <= ", 1);
        }
        if bugs.namespace_case_insensitive {
            read = read.replacen("WHERE namespace = ", "WHERE lower(namespace) = lower(", 1).replacen(
                "AND (slot = -1",
                ") AND (slot = -1",
                1,
            );
        }
        read.into()
    }
}

/// One round trip (or one transaction) of a backend, run on the store's runtime.
pub(super) type Op<'a, T> = Pin<Box<dyn Future<Output = Result<T, Failure>> + 'a>>;

/// A read's rows: the slot (or one of the extra rows: [`super::HIGHEST_ROW`],
/// [`super::CLOCK_ROW`], [`super::INCARNATION_ROW`]) and its text.
pub(super) type Rows = Vec<(i64, Option<String>)>;

/// What differs between the databases: the statements, how their parameters are bound, and
/// how a duplicate row shows. Everything else is [`super::SqlLeaseStore`]'s, once.
pub(super) trait Backend: Send + Sync {
    /// The rows of one read, in one statement.
    fn read<'a>(
        &'a self,
        namespace: &'a str,
        range: SlotRange,
        highest: bool,
        bugs: Bugs,
        timeout: Duration,
    ) -> Op<'a, Rows>;

    /// Every compare-and-set of `rows` or none: whether they all matched.
    fn write<'a>(&'a self, namespace: &'a str, rows: &'a [RowCas<'a>], bugs: Bugs, timeout: Duration) -> Op<'a, bool>;

    /// The server's settings that can lose acknowledged writes, in plain words.
    fn warnings(&self, timeout: Duration) -> Op<'_, Vec<String>>;
}

/// Runs the compare-and-sets of one write on `connection` in one transaction (or, with the
/// planted bug `write-not-atomic`, each alone): whether all matched. `one` runs one of them,
/// answering whether it matched its row.
pub(super) async fn write_all<DB: Database>(
    connection: &mut DB::Connection,
    rows: &[RowCas<'_>],
    bugs: Bugs,
    one: impl AsyncFn(&mut DB::Connection, RowCas<'_>) -> Result<bool, sqlx_core::Error>,
) -> Result<bool, sqlx_core::Error> {
    if rows.len() == 1 || bugs.write_not_atomic {
        for row in rows {
            if !one(&mut *connection, *row).await? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    let mut tx = connection.begin().await?;
    for row in rows {
        if !one(&mut *tx, *row).await? {
            tx.rollback().await?;
            return Ok(false);
        }
    }
    tx.commit().await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_name_the_table() {
        let templates = Templates {
            ddl: POSTGRES_TABLE_DDL,
            shape: "SELECT namespace, slot, value FROM {table} WHERE 1 = 0",
            read: "SELECT slot, value FROM {table} WHERE namespace = $1 AND (slot = -1 OR (slot >= $2 AND slot < $3))",
            create: "INSERT INTO {table}",
            update: "UPDATE {table}",
            update_any: "",
            upsert: "",
        };
        let sql = Statements::new("ids.leases", &templates);
        assert!(sql.ddl.starts_with("CREATE TABLE IF NOT EXISTS ids.leases ("));
        assert_eq!(&*sql.shape, "SELECT namespace, slot, value FROM ids.leases WHERE 1 = 0");
        assert_eq!(&*sql.create, "INSERT INTO ids.leases");
        assert_eq!(&*sql.update, "UPDATE ids.leases");
        assert_eq!(sql.read(Bugs::default()), sql.read);
        let planted = Bugs { range_end_inclusive: true, namespace_case_insensitive: true, ..Bugs::default() };
        assert_eq!(
            &*sql.read(planted),
            "SELECT slot, value FROM ids.leases WHERE lower(namespace) = lower($1 ) AND (slot = -1 OR (slot >= $2 AND slot <= $3))"
        );
    }
}
