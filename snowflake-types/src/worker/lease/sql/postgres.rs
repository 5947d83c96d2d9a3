//! The PostgreSQL backend: one `SELECT` reads, `INSERT … ON CONFLICT DO NOTHING` creates a
//! slot, `UPDATE … WHERE value = $4` updates one.

use std::time::Duration;

use sqlx_core::sql_str::AssertSqlSafe;
use sqlx_postgres::{PgConnectOptions, PgConnection, PgPool, Postgres};

use super::super::url::StoreUrl;
use super::backend::{
    Backend, Bugs, Failure, Op, POSTGRES_TABLE_DDL, RowCas, Rows, SlotRange, Statements, Templates, create_table,
    pool_options, with_connection, write_all,
};

const SQL: Templates = Templates {
    ddl: POSTGRES_TABLE_DDL,
    shape: "SELECT namespace, slot, value FROM {table} WHERE 1 = 0",
    // $1 namespace, $2..$3 the worker IDs, $4 whether to say the highest. One statement: one
    // snapshot.
    read: "SELECT slot, value::text FROM {table} WHERE namespace = $1 AND (slot = -1 OR (slot >= $2 AND slot < $3))
        UNION ALL SELECT -2, (SELECT max(slot) FROM {table} WHERE namespace = $1 AND slot >= 0)::text WHERE $4
        UNION ALL SELECT -3, floor(extract(epoch FROM now()) * 1000)::bigint::text
        UNION ALL SELECT -4, 'pg-' || (SELECT system_identifier FROM pg_control_system())::text
            || '-tl' || (SELECT timeline_id FROM pg_control_checkpoint())::text",
    create: "INSERT INTO {table} (namespace, slot, value) VALUES ($1, $2, $3) ON CONFLICT (namespace, slot) DO NOTHING",
    update: "UPDATE {table} SET value = $3 WHERE namespace = $1 AND slot = $2 AND value = $4",
    update_any: "UPDATE {table} SET value = $3 WHERE namespace = $1 AND slot = $2 AND $4::text IS NOT NULL",
    upsert: "INSERT INTO {table} (namespace, slot, value) VALUES ($1, $2, $3)
        ON CONFLICT (namespace, slot) DO UPDATE SET value = excluded.value",
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

/// Creates the table and checks its columns, then opens the pool lazily.
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
    create_table::<Postgres>(&options, &sql, timeout, is_timeout, is_old).await?;
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

/// `42703`: a column the table does not have.
fn is_old(error: &sqlx_core::Error) -> bool {
    error.as_database_error().and_then(|e| e.code()).is_some_and(|code| code == "42703")
}

impl Pg {
    /// One compare-and-set: whether it matched its row.
    async fn one(
        &self,
        c: &mut PgConnection,
        namespace: &str,
        row: RowCas<'_>,
        bugs: Bugs,
    ) -> Result<bool, sqlx_core::Error> {
        let (sql, expect) = match row.expect {
            None if bugs.create_overwrites => (&self.sql.upsert, None),
            None => (&self.sql.create, None),
            Some(expect) if bugs.cas_ignores_expect => (&self.sql.update_any, Some(expect)),
            Some(expect) => (&self.sql.update, Some(expect)),
        };
        let query = sqlx_core::query::query(AssertSqlSafe(sql.clone())).bind(namespace).bind(row.slot).bind(row.value);
        let query = match expect {
            Some(expect) => query.bind(expect),
            None => query,
        };
        Ok(query.execute(c).await?.rows_affected() == 1)
    }
}

impl Backend for Pg {
    fn read<'a>(
        &'a self,
        namespace: &'a str,
        range: SlotRange,
        highest: bool,
        bugs: Bugs,
        timeout: Duration,
    ) -> Op<'a, Rows> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            sqlx_core::query_as::query_as(AssertSqlSafe(self.sql.read(bugs)))
                .bind(namespace)
                .bind(range.from)
                .bind(range.to)
                .bind(highest)
                .fetch_all(c)
                .await
        }))
    }

    fn write<'a>(&'a self, namespace: &'a str, rows: &'a [RowCas<'a>], bugs: Bugs, timeout: Duration) -> Op<'a, bool> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async move |c| {
            write_all::<Postgres>(c, rows, bugs, async |c, row| self.one(c, namespace, row, bugs).await).await
        }))
    }

    fn warnings(&self, timeout: Duration) -> Op<'_, Vec<String>> {
        Box::pin(with_connection(&self.pool, timeout, is_timeout, async |c| {
            let (synchronous_commit, fsync): (String, String) =
                sqlx_core::query_as::query_as("SELECT current_setting('synchronous_commit'), current_setting('fsync')")
                    .fetch_one(c)
                    .await?;
            let mut warnings = Vec::new();
            if synchronous_commit == "off" {
                warnings.push(
                    "PostgreSQL's synchronous_commit is off for the lease store's sessions: a crash of the server \
                     may lose lease writes it acknowledged, and nothing tells the holders; set synchronous_commit \
                     to on (for the lease store's role or database, at least)"
                        .to_owned(),
                );
            }
            if fsync == "off" {
                warnings.push(
                    "PostgreSQL's fsync is off: a crash of the machine may lose lease writes the server \
                     acknowledged, and nothing tells the holders; turn fsync on"
                        .to_owned(),
                );
            }
            Ok(warnings)
        }))
    }
}
