//! What the SQL store ([`super::SqlLeaseStore`]) and its backends (`postgres.rs`, `mysql.rs`)
//! share: the table, the rows, the failures, the connection and the table's creation.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use sqlx_core::connection::{ConnectOptions, Connection};
use sqlx_core::database::Database;
use sqlx_core::executor::Executor;
use sqlx_core::sql_str::AssertSqlSafe;

use super::super::store::LeaseError;
use super::super::store::support::UnexpectedReply;

/// The lease table's name unless the builder is given another.
///
/// ```
/// assert_eq!(typed_snowflake::worker::lease::DEFAULT_TABLE, "snowflake_worker_leases");
/// ```
pub const DEFAULT_TABLE: &str = "snowflake_worker_leases";

/// The PostgreSQL lease table, as the store creates it (idempotent): copy it into a migration
/// where the store's database user may not create tables. The rows: `docs/stores.md`.
///
/// ```
/// use typed_snowflake::worker::lease::DEFAULT_TABLE;
/// use typed_snowflake::worker::lease::admin::POSTGRES_TABLE_DDL;
///
/// assert!(POSTGRES_TABLE_DDL.starts_with("CREATE TABLE IF NOT EXISTS snowflake_worker_leases ("));
/// assert!(POSTGRES_TABLE_DDL.contains("PRIMARY KEY (namespace, slot)"));
/// // For another table name, replace the default one.
/// let ddl = POSTGRES_TABLE_DDL.replacen(DEFAULT_TABLE, "ids.worker_leases", 1);
/// ```
pub const POSTGRES_TABLE_DDL: &str = "CREATE TABLE IF NOT EXISTS snowflake_worker_leases (
    namespace VARCHAR(64)  NOT NULL,
    slot      BIGINT       NOT NULL,
    value     VARCHAR(512) NOT NULL,
    PRIMARY KEY (namespace, slot)
)";

/// The MySQL/MariaDB lease table, as [`POSTGRES_TABLE_DDL`]; namespaces and values compare byte
/// for byte (`ascii_bin`, `VARBINARY`: no collation pads or folds them).
///
/// ```
/// use typed_snowflake::worker::lease::admin::MYSQL_TABLE_DDL;
///
/// assert!(MYSQL_TABLE_DDL.starts_with("CREATE TABLE IF NOT EXISTS snowflake_worker_leases ("));
/// assert!(MYSQL_TABLE_DDL.contains("value     VARBINARY(512)"));
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
    /// The server's limits are timeouts; the rest is the driver's.
    pub(super) fn new(error: sqlx_core::Error, is_timeout: fn(&sqlx_core::Error) -> bool) -> Self {
        if is_timeout(&error) { Failure::Timeout } else { Failure::Sql(error) }
    }

    pub(super) fn into_error(self, store: &str, what: String, timeout: Duration) -> LeaseError {
        match self {
            Failure::Timeout => LeaseError::Timeout { store: store.to_owned(), what, after: timeout },
            Failure::OldTable => LeaseError::store(store, what, UnexpectedReply("the table has other columns".into())),
            Failure::Sql(error) => LeaseError::store(store, what, error),
        }
    }
}

/// The store's one connection: opened by the first call, lent to one call at a time, and
/// closed after a call that failed or was cut off (a reply may still be on its way, and the
/// server may still hold its locks), so that the next call opens another. Not a sqlx pool,
/// which tests each connection with a round trip of its own when it is returned.
pub(super) struct Link<DB: Database> {
    options: <DB::Connection as Connection>::Options,
    open: tokio::sync::Mutex<Option<DB::Connection>>,
    is_timeout: fn(&sqlx_core::Error) -> bool,
}

impl<DB: Database> Link<DB> {
    /// A link that opens its connection with `options`; `is_timeout` tells the server's own
    /// time limits among its errors.
    pub(super) fn new(
        options: <DB::Connection as Connection>::Options,
        is_timeout: fn(&sqlx_core::Error) -> bool,
    ) -> Self {
        Link { options, open: tokio::sync::Mutex::new(None), is_timeout }
    }

    /// Takes the connection within `timeout` (waiting for the call before, or opening one),
    /// then runs `op`, one round trip, within `timeout` again.
    pub(super) async fn call<T>(
        &self,
        timeout: Duration,
        op: impl AsyncFnOnce(&mut DB::Connection) -> Result<T, sqlx_core::Error>,
    ) -> Result<T, Failure> {
        let taking = async {
            let mut open = self.open.lock().await;
            if open.is_none() {
                *open = Some(self.options.connect().await?);
            }
            Ok::<_, sqlx_core::Error>(open)
        };
        let mut open = tokio::time::timeout(timeout, taking)
            .await
            .map_err(|_| Failure::Timeout)?
            .map_err(|e| Failure::new(e, self.is_timeout))?;
        let connection = open.as_mut().expect("opened above");
        let result = tokio::time::timeout(timeout, op(connection)).await;
        if !matches!(result, Ok(Ok(_))) {
            // Dropped, not closed politely: closing waits for the server.
            *open = None;
        }
        result.map_err(|_| Failure::Timeout)?.map_err(|e| Failure::new(e, self.is_timeout))
    }
}

/// Connects once, creates the table if it does not exist and checks its columns, within
/// `timeout`. Two sessions creating the table at once can make one of them fail
/// (PostgreSQL); a second attempt then finds it. `is_old`: whether an error of the
/// columns' check says a column is missing.
pub(super) async fn create_table<DB: Database>(
    options: &<DB::Connection as Connection>::Options,
    sql: &TableDdl,
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

/// The statements that create the table and check its columns, with its name written in.
pub(super) struct TableDdl {
    pub(super) ddl: String,
    /// Fails unless the table has the columns of the DDL.
    pub(super) shape: String,
}

impl TableDdl {
    pub(super) fn new(table: &str, ddl: &str) -> Self {
        TableDdl {
            ddl: ddl.replacen(DEFAULT_TABLE, table, 1),
            shape: format!("SELECT namespace, slot, value FROM {table} WHERE 1 = 0"),
        }
    }
}

/// One round trip of a backend, run on the store's runtime.
pub(super) type Op<'a, T> = Pin<Box<dyn Future<Output = Result<T, Failure>> + 'a>>;

/// A read's rows: the slot (or one of the extra rows: [`super::HIGHEST_ROW`],
/// [`super::CLOCK_ROW`], [`super::INCARNATION_ROW`]) and its text.
pub(super) type Rows = Vec<(i64, Option<String>)>;

/// What differs between the databases: the statements. Every method is one statement (or, for
/// MySQL, one batch), its values written in as literals and sent unprepared: one round trip,
/// on a new connection too (a prepared statement takes two there).
pub(super) trait Backend: Send + Sync {
    /// The rows of one read, in one statement.
    fn read<'a>(&'a self, namespace: &'a str, range: SlotRange, highest: bool, timeout: Duration) -> Op<'a, Rows>;

    /// Every compare-and-set of `rows` (one or two, in distinct slots, ascending) or none,
    /// in one round trip: whether they all matched.
    fn write<'a>(&'a self, namespace: &'a str, rows: &'a [RowCas<'a>], timeout: Duration) -> Op<'a, bool>;

    /// The server's settings that can lose acknowledged writes, in plain words.
    fn warnings(&self, timeout: Duration) -> Op<'_, Vec<String>>;
}

/// Whether a text may be written into a statement as a literal: printable ASCII, as the
/// store's checks of namespaces and values leave it. The backends' quoting asserts it.
pub(super) fn is_printable(text: &str) -> bool {
    text.bytes().all(|b| (0x20..0x7f).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_statements_name_the_table() {
        let sql = TableDdl::new("ids.leases", POSTGRES_TABLE_DDL);
        assert!(sql.ddl.starts_with("CREATE TABLE IF NOT EXISTS ids.leases ("));
        assert_eq!(sql.shape, "SELECT namespace, slot, value FROM ids.leases WHERE 1 = 0");
    }
}
