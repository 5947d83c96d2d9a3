//! The MySQL and MariaDB backend: one `SELECT` reads, `INSERT` creates a slot (a duplicate key
//! is a conflict), `UPDATE … WHERE value = ?` updates one.

use std::time::Duration;

use sqlx_core::connection::{ConnectOptions, Connection};
use sqlx_core::executor::Executor;
use sqlx_core::sql_str::AssertSqlSafe;
use sqlx_mysql::{MySql, MySqlConnectOptions, MySqlConnection, MySqlDatabaseError, MySqlPool};

use super::super::url::StoreUrl;
use super::backend::{
    Backend, Bugs, Failure, MYSQL_TABLE_DDL, Op, RowCas, Rows, SlotRange, Statements, Templates, create_table,
    pool_options, with_connection, write_all,
};

/// Unix milliseconds of `UTC_TIMESTAMP(3)`, by calendar arithmetic that no time zone
/// touches.
macro_rules! utc_now_ms {
    () => {
        "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000"
    };
}

/// The read, with the incarnation's expression for the server's flavour. Parameters: the
/// namespace, the worker IDs `from..to`, the namespace again, whether to say the highest.
/// One statement: one snapshot (InnoDB's consistent read).
macro_rules! read {
    ($incarnation:expr) => {
        concat!(
            "SELECT slot, value FROM {table} WHERE namespace = ? AND (slot = -1 OR (slot >= ? AND slot < ?))
            UNION ALL SELECT -2, CAST((SELECT MAX(slot) FROM {table} WHERE namespace = ? AND slot >= 0) AS BINARY)
                FROM DUAL WHERE ?
            UNION ALL SELECT -3, CAST(",
            utc_now_ms!(),
            " AS BINARY)
            UNION ALL SELECT -4, CAST(",
            $incarnation,
            " AS BINARY)"
        )
    };
}

/// The server's start time in Unix seconds: the statement's own time less the uptime, both
/// whole seconds of the same clock, so two statements of one run of the server agree.
macro_rules! started {
    ($status_table:literal) => {
        concat!(
            "UNIX_TIMESTAMP() - (SELECT CAST(VARIABLE_VALUE AS SIGNED) FROM ",
            $status_table,
            " WHERE VARIABLE_NAME = 'UPTIME')"
        )
    };
}

const MARIADB_READ: &str = read!(concat!(
    "CONCAT('mariadb-', @@server_id, '-', COALESCE(",
    started!("information_schema.GLOBAL_STATUS"),
    ", ''))"
));
const MYSQL_READ: &str = read!(concat!(
    "CONCAT('mysql-', @@server_uuid, '-', COALESCE(",
    started!("performance_schema.global_status"),
    ", ''))"
));

const SQL: Templates = Templates {
    ddl: MYSQL_TABLE_DDL,
    shape: "SELECT namespace, slot, value FROM {table} WHERE 1 = 0",
    read: MARIADB_READ,
    create: "INSERT INTO {table} (namespace, slot, value) VALUES (?, ?, ?)",
    update: "UPDATE {table} SET value = ? WHERE namespace = ? AND slot = ? AND value = ?",
    update_any: "UPDATE {table} SET value = ? WHERE namespace = ? AND slot = ? AND ? IS NOT NULL",
    upsert: "INSERT INTO {table} (namespace, slot, value) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE value = VALUES(value)",
};

/// The URL's options (`ssl-mode`, `ssl-ca` and the rest, read by sqlx), with the CA file of
/// the environment when the URL names none. sqlx reads `mysql://`; MariaDB speaks the same
/// protocol.
pub(super) fn options(url: &StoreUrl, ca: Option<&str>) -> Result<MySqlConnectOptions, sqlx_core::Error> {
    // sqlx reads `mariadb://` as `mysql://`.
    let options: MySqlConnectOptions = url.driver_url("mysql", &[]).parse()?;
    Ok(match ca {
        Some(ca) if !url.names_param(&["ssl-ca", "sslca"]) => options.ssl_ca(ca),
        _ => options,
    })
}

/// Creates the table and checks its columns, asks the server whether it is MariaDB or MySQL,
/// then opens the pool lazily; each connection bounds its lock waits.
pub(super) async fn connect(
    options: MySqlConnectOptions,
    table: &str,
    timeout: Duration,
) -> Result<Box<dyn Backend>, Failure> {
    // Whole seconds, at least 1: the server's lock-wait bound backs up ours.
    let lock_wait = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
    let session = format!("SET SESSION innodb_lock_wait_timeout = {}", lock_wait.max(1));
    let mut sql = Statements::new(table, &SQL);
    create_table::<MySql>(&options, &sql, timeout, is_timeout, is_old).await?;
    let version = async {
        let mut connection = options.connect().await?;
        let version: String =
            sqlx_core::query_scalar::query_scalar("SELECT VERSION()").fetch_one(&mut connection).await?;
        connection.close().await?;
        Ok::<_, sqlx_core::Error>(version)
    };
    let version = tokio::time::timeout(timeout, version)
        .await
        .map_err(|_| Failure::Timeout)?
        .map_err(|e| Failure::new(e, is_timeout))?;
    if !version.contains("MariaDB") {
        sql.read = MYSQL_READ.replace("{table}", table).into();
    }
    let pool = pool_options::<MySql>(timeout)
        .after_connect(move |c, _| {
            let session = AssertSqlSafe(session.clone());
            Box::pin(async move { c.execute(session).await.map(drop) })
        })
        .connect_lazy_with(options);
    Ok(Box::new(My { pool, sql }))
}

struct My {
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

/// 1054: a column the table does not have.
fn is_old(error: &sqlx_core::Error) -> bool {
    error
        .as_database_error()
        .and_then(|e| e.try_downcast_ref::<MySqlDatabaseError>())
        .is_some_and(|e| e.number() == 1054)
}

impl My {
    /// One compare-and-set: whether it matched its row.
    async fn one(
        &self,
        c: &mut MySqlConnection,
        namespace: &str,
        row: RowCas<'_>,
        bugs: Bugs,
    ) -> Result<bool, sqlx_core::Error> {
        let Some(expect) = row.expect else {
            let sql = if bugs.create_overwrites { &self.sql.upsert } else { &self.sql.create };
            let inserted = sqlx_core::query::query(AssertSqlSafe(sql.clone()))
                .bind(namespace)
                .bind(row.slot)
                .bind(row.value)
                .execute(c)
                .await;
            return match inserted {
                Ok(done) => Ok(done.rows_affected() >= 1),
                // The row exists: the slot held something.
                Err(sqlx_core::Error::Database(e)) if e.is_unique_violation() => Ok(false),
                Err(e) => Err(e),
            };
        };
        let sql = if bugs.cas_ignores_expect { &self.sql.update_any } else { &self.sql.update };
        // The client reports rows matched, not rows changed (CLIENT_FOUND_ROWS): a value
        // written again as it is still counts.
        let done = sqlx_core::query::query(AssertSqlSafe(sql.clone()))
            .bind(row.value)
            .bind(namespace)
            .bind(row.slot)
            .bind(expect)
            .execute(c)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}

impl Backend for My {
    fn read<'a>(
        &'a self,
        namespace: &'a str,
        range: SlotRange,
        highest: bool,
        bugs: Bugs,
        timeout: Duration,
    ) -> Op<'a, Rows> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            let rows: Vec<(i64, Option<Vec<u8>>)> = sqlx_core::query_as::query_as(AssertSqlSafe(self.sql.read(bugs)))
                .bind(namespace)
                .bind(range.from)
                .bind(range.to)
                .bind(namespace)
                .bind(highest)
                .fetch_all(c)
                .await?;
            rows.into_iter()
                .map(|(slot, value)| {
                    let value = value.map(String::from_utf8).transpose();
                    value.map(|value| (slot, value)).map_err(|e| sqlx_core::Error::Decode(Box::new(e)))
                })
                .collect()
        }))
    }

    fn write<'a>(&'a self, namespace: &'a str, rows: &'a [RowCas<'a>], bugs: Bugs, timeout: Duration) -> Op<'a, bool> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            write_all::<MySql>(c, rows, bugs, async |c, row| self.one(c, namespace, row, bugs).await).await
        }))
    }

    fn warnings(&self, timeout: Duration) -> Op<'_, Vec<String>> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async |c| {
            let flush: i64 =
                sqlx_core::query_scalar::query_scalar("SELECT CAST(@@innodb_flush_log_at_trx_commit AS SIGNED)")
                    .fetch_one(c)
                    .await?;
            Ok(if flush == 1 {
                Vec::new()
            } else {
                vec![format!(
                    "innodb_flush_log_at_trx_commit is {flush}: a crash may lose lease writes the server \
                     acknowledged in its last second, and nothing tells the holders; set it to 1"
                )]
            })
        }))
    }
}
