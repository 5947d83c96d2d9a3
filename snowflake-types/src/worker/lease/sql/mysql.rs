//! The MySQL and MariaDB backend: an upsert whose assignments change the row only when its
//! lease has expired, then a read of the row in the same transaction to learn who holds it.

use std::time::Duration;

use sqlx_core::connection::Connection;
use sqlx_core::executor::Executor;
use sqlx_core::sql_str::AssertSqlSafe;
use sqlx_mysql::{MySql, MySqlConnectOptions, MySqlDatabaseError, MySqlPool};

use super::super::url::StoreUrl;
use super::{
    Attempt, Backend, Failure, LeaseRow, Listed, Op, Statements, Templates, Won, create_table, pool_options,
    with_connection,
};

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
        WHERE namespace = ? AND worker_id = ? AND holder = ? AND fence = ? AND lease_until > '1970-01-01 00:00:01'",
    release: "UPDATE {table}
        SET high_water_ms = COALESCE(?, ?), lease_until = '1970-01-01 00:00:01'
        WHERE namespace = ? AND worker_id = ? AND holder = ? AND fence = ? AND lease_until > '1970-01-01 00:00:01'",
    now: concat!("SELECT ", utc_now_ms!()),
    list: "SELECT worker_id, holder, fence, high_water_ms,
            TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), lease_until) DIV 1000
        FROM {table} WHERE namespace = ? AND worker_id >= 0 ORDER BY worker_id",
    mark: concat!(
        "INSERT INTO {table} (namespace, worker_id, holder, fence, lease_until, high_water_ms)
        VALUES (?, -1, '', 0, '1970-01-01 00:00:01', ",
        utc_now_ms!(),
        ") ON DUPLICATE KEY UPDATE worker_id = worker_id"
    ),
    since: "SELECT high_water_ms FROM {table} WHERE namespace = ? AND worker_id = -1",
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

/// Creates the table, then opens the pool lazily; each connection bounds its lock waits.
pub(super) async fn connect(
    options: MySqlConnectOptions,
    table: &str,
    timeout: Duration,
) -> Result<Box<dyn Backend>, Failure> {
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

impl Backend for My {
    fn held<'a>(&'a self, namespace: &'a str, from: i64, to: i64, timeout: Duration) -> Op<'a, Vec<i64>> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            sqlx_core::query_scalar::query_scalar(AssertSqlSafe(self.sql.held.clone()))
                .bind(namespace)
                .bind(from)
                .bind(to)
                .fetch_all(c)
                .await
        }))
    }

    fn try_acquire<'a>(&'a self, attempt: Attempt<'a>, timeout: Duration) -> Op<'a, Won> {
        Box::pin(async move {
            let row: (String, i64, Option<i64>, i64) = with_connection(&self.pool, timeout, is_timeout, async |c| {
                let mut tx = c.begin().await?;
                sqlx_core::query::query(AssertSqlSafe(self.sql.acquire.clone()))
                    .bind(attempt.namespace)
                    .bind(attempt.worker_id)
                    .bind(attempt.holder)
                    .bind(attempt.fence_above)
                    .bind(attempt.ttl_ms * 1000)
                    .execute(&mut *tx)
                    .await?;
                let row = sqlx_core::query_as::query_as(AssertSqlSafe(self.sql.read_back.clone()))
                    .bind(attempt.namespace)
                    .bind(attempt.worker_id)
                    .fetch_one(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(row)
            })
            .await?;
            let (holder, fence, high_water_ms, now_ms) = row;
            Ok((holder == attempt.holder).then_some((fence, high_water_ms, now_ms)))
        })
    }

    fn renew<'a>(&'a self, row: &'a LeaseRow<'a>, ttl_ms: i64, high_water_ms: i64, timeout: Duration) -> Op<'a, bool> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            // The client reports rows matched, not rows changed (CLIENT_FOUND_ROWS): a
            // renewal that changes nothing within one millisecond still counts.
            let done = sqlx_core::query::query(AssertSqlSafe(self.sql.renew.clone()))
                .bind(ttl_ms * 1000)
                .bind(high_water_ms)
                .bind(high_water_ms)
                .bind(row.namespace)
                .bind(row.worker_id)
                .bind(row.holder.as_str())
                .bind(row.fence)
                .execute(c)
                .await?;
            Ok(done.rows_affected() == 1)
        }))
    }

    fn release<'a>(&'a self, row: &'a LeaseRow<'a>, high_water_ms: i64, timeout: Duration) -> Op<'a, bool> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            let done = sqlx_core::query::query(AssertSqlSafe(self.sql.release.clone()))
                .bind(high_water_ms)
                .bind(high_water_ms)
                .bind(row.namespace)
                .bind(row.worker_id)
                .bind(row.holder.as_str())
                .bind(row.fence)
                .execute(c)
                .await?;
            Ok(done.rows_affected() == 1)
        }))
    }

    fn now_ms(&self, timeout: Duration) -> Op<'_, i64> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async |c| {
            sqlx_core::query_scalar::query_scalar(AssertSqlSafe(self.sql.now.clone())).fetch_one(c).await
        }))
    }

    fn list<'a>(&'a self, namespace: &'a str, timeout: Duration) -> Op<'a, Vec<Listed>> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            sqlx_core::query_as::query_as(AssertSqlSafe(self.sql.list.clone())).bind(namespace).fetch_all(c).await
        }))
    }

    fn since<'a>(&'a self, namespace: &'a str, timeout: Duration) -> Op<'a, Option<i64>> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            sqlx_core::query::query(AssertSqlSafe(self.sql.mark.clone())).bind(namespace).execute(&mut *c).await?;
            let since: Option<Option<i64>> =
                sqlx_core::query_scalar::query_scalar(AssertSqlSafe(self.sql.since.clone()))
                    .bind(namespace)
                    .fetch_optional(&mut *c)
                    .await?;
            Ok(since.flatten())
        }))
    }
}
