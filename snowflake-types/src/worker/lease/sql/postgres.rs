//! The PostgreSQL backend: a conditional upsert that returns the row only when it took it.

use std::time::Duration;

use sqlx_core::sql_str::AssertSqlSafe;
use sqlx_postgres::{PgConnectOptions, PgPool, Postgres};

use super::super::url::StoreUrl;
use super::{
    Attempt, Backend, Failure, LeaseRow, Listed, Op, Statements, Templates, Won, create_table, pool_options,
    with_connection,
};

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
        WHERE namespace = $1 AND worker_id = $2 AND holder = $3 AND fence = $4 AND lease_until > to_timestamp(0)",
    release: "UPDATE {table}
        SET lease_until = to_timestamp(0), high_water_ms = $5
        WHERE namespace = $1 AND worker_id = $2 AND holder = $3 AND fence = $4 AND lease_until > to_timestamp(0)",
    now: "SELECT floor(extract(epoch FROM now()) * 1000)::bigint",
    list: "SELECT worker_id, holder, fence, high_water_ms,
            floor(extract(epoch FROM lease_until) * 1000)::bigint - floor(extract(epoch FROM now()) * 1000)::bigint
        FROM {table} WHERE namespace = $1 AND worker_id >= 0 ORDER BY worker_id",
    mark: "INSERT INTO {table} (namespace, worker_id, holder, fence, lease_until, high_water_ms)
        VALUES ($1, -1, '', 0, to_timestamp(0), floor(extract(epoch FROM now()) * 1000)::bigint)
        ON CONFLICT (namespace, worker_id) DO NOTHING",
    since: "SELECT high_water_ms FROM {table} WHERE namespace = $1 AND worker_id = -1",
};

/// The URL's options (`sslmode`, `sslrootcert` and the rest, read by sqlx), with the CA file
/// of the environment when the URL names none.
pub(super) fn options(url: &StoreUrl, ca: Option<&str>) -> Result<PgConnectOptions, sqlx_core::Error> {
    let options: PgConnectOptions = url.driver_url("postgres", &[]).parse()?;
    Ok(match ca {
        Some(ca) if !url.names_param(&["sslrootcert", "ssl-root-cert", "ssl-ca"]) => options.ssl_root_cert(ca),
        _ => options,
    })
}

/// Creates the table, then opens the pool lazily.
pub(super) async fn connect(
    options: PgConnectOptions,
    table: &str,
    timeout: Duration,
) -> Result<Box<dyn Backend>, Failure> {
    let limit = format!("{}ms", timeout.as_millis());
    let options = options
        .application_name("typed-snowflake lease")
        .options([("lock_timeout", limit.as_str()), ("statement_timeout", limit.as_str())]);
    let sql = Statements::new(table, &SQL);
    create_table::<Postgres>(&options, &sql.ddl, timeout, is_timeout).await?;
    Ok(Box::new(Pg { pool: pool_options(timeout).connect_lazy_with(options), sql }))
}

struct Pg {
    pool: PgPool,
    sql: Statements,
}

/// The server's own limits: `55P03` a lock wait over `lock_timeout`, `57014` a statement
/// over `statement_timeout`.
fn is_timeout(error: &sqlx_core::Error) -> bool {
    error.as_database_error().and_then(|e| e.code()).is_some_and(|code| code == "55P03" || code == "57014")
}

impl Backend for Pg {
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
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            sqlx_core::query_as::query_as(AssertSqlSafe(self.sql.acquire.clone()))
                .bind(attempt.namespace)
                .bind(attempt.worker_id)
                .bind(attempt.holder)
                .bind(attempt.ttl_ms)
                .bind(attempt.fence_above)
                .fetch_optional(c)
                .await
        }))
    }

    fn renew<'a>(&'a self, row: &'a LeaseRow<'a>, ttl_ms: i64, high_water_ms: i64, timeout: Duration) -> Op<'a, bool> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            let done = sqlx_core::query::query(AssertSqlSafe(self.sql.renew.clone()))
                .bind(row.namespace)
                .bind(row.worker_id)
                .bind(row.holder.as_str())
                .bind(row.fence)
                .bind(ttl_ms)
                .bind(high_water_ms)
                .execute(c)
                .await?;
            Ok(done.rows_affected() == 1)
        }))
    }

    fn release<'a>(&'a self, row: &'a LeaseRow<'a>, high_water_ms: i64, timeout: Duration) -> Op<'a, bool> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            let done = sqlx_core::query::query(AssertSqlSafe(self.sql.release.clone()))
                .bind(row.namespace)
                .bind(row.worker_id)
                .bind(row.holder.as_str())
                .bind(row.fence)
                .bind(high_water_ms)
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
