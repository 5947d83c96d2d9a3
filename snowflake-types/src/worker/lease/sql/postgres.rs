//! The PostgreSQL backend: one `SELECT` reads; one statement of data-modifying `WITH` queries
//! writes ([`Sql::write`]).

use std::time::Duration;

use sqlx_core::from_row::FromRow;
use sqlx_core::raw_sql::raw_sql;
use sqlx_core::row::Row;
use sqlx_core::sql_str::AssertSqlSafe;
use sqlx_postgres::{PgConnectOptions, Postgres};

use super::super::url::StoreUrl;
use super::backend::{
    Backend, Failure, Link, Op, POSTGRES_TABLE_DDL, RowCas, Rows, SlotRange, TableDdl, create_table, is_printable,
};

/// What the final `SELECT` of a write casts to `boolean` when one of its two creations
/// conflicted and the other did not: the error undoes the statement, which is a conflict.
const APPLIED_IN_PART: &str = "a lease write applied in part, undone";

/// The incarnation: `pg-<system identifier>-tl<timeline>`, the timeline its current WAL file's
/// name begins with, not the last checkpoint's, which names the old one for minutes after a
/// promotion (`docs/stores.md`); in recovery, where the WAL functions fail, the restartpoint's.
const INCARNATION: &str = "'pg-' || (SELECT system_identifier FROM pg_control_system())::text || '-tl' || CASE
                WHEN pg_is_in_recovery() THEN (SELECT timeline_id FROM pg_control_checkpoint())::text
                ELSE ('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::bigint::text END";

/// The statements, with the table's name and each call's values written in (as [`Backend`]
/// says).
struct Sql {
    table: String,
}

impl Sql {
    /// The rows of [`Rows`], in one statement: one snapshot.
    fn read(&self, namespace: &str, range: SlotRange, highest: bool) -> String {
        let (table, ns) = (&self.table, literal(namespace));
        let SlotRange { from, to } = range;
        format!(
            "SELECT slot, value::text FROM {table} WHERE namespace = {ns} AND (slot = -1 OR (slot >= {from} AND slot < {to}))
            UNION ALL SELECT -2, (SELECT max(slot) FROM {table} WHERE namespace = {ns} AND slot >= 0)::text WHERE {highest}
            UNION ALL SELECT -3, floor(extract(epoch FROM now()) * 1000)::bigint::text
            UNION ALL SELECT -4, {INCARNATION}"
        )
    }

    /// Every compare-and-set of `rows` or none, in one statement whose answer is whether all
    /// matched. `cur` locks the rows that exist (`FOR UPDATE` waits for a writer of one, then
    /// reads its newest version), so `ok` judges every op on values nobody changes until the
    /// statement ends; then the creations (`ON CONFLICT DO NOTHING`: a row created since the
    /// statement's snapshot is a conflict), then the updates, only if every creation was
    /// made. What can still conflict is a creation, against a row created since the
    /// snapshot: of one creation and an update, neither is then written; of two creations,
    /// the one made is undone by failing the statement ([`APPLIED_IN_PART`]).
    fn write(&self, namespace: &str, rows: &[RowCas<'_>]) -> String {
        let (table, ns) = (&self.table, literal(namespace));
        let ops: Vec<String> = rows
            .iter()
            .map(|row| {
                let expect = row.expect.map_or_else(|| "NULL".to_owned(), literal);
                format!("({}::bigint, {expect}::text, {}::text)", row.slot, literal(row.value))
            })
            .collect();
        let slots: Vec<String> = rows.iter().map(|row| row.slot.to_string()).collect();
        let (ops, slots, n) = (ops.join(", "), slots.join(", "), rows.len());
        let creations = rows.iter().filter(|row| row.expect.is_none()).count();
        format!(
            "WITH op (slot, expect, value) AS (VALUES {ops}),
            cur AS (SELECT slot, value FROM {table} WHERE namespace = {ns} AND slot IN ({slots}) FOR UPDATE),
            ok AS (
                SELECT count(*) = {n} AS ok FROM op LEFT JOIN cur USING (slot)
                WHERE CASE WHEN op.expect IS NULL THEN cur.slot IS NULL ELSE cur.value = op.expect END
            ),
            created AS (
                INSERT INTO {table} (namespace, slot, value)
                SELECT {ns}, slot, value FROM op WHERE expect IS NULL AND (SELECT ok FROM ok)
                ON CONFLICT (namespace, slot) DO NOTHING
                RETURNING slot
            ),
            updated AS (
                UPDATE {table} AS t SET value = op.value FROM op
                WHERE t.namespace = {ns} AND t.slot = op.slot AND op.expect IS NOT NULL
                    AND (SELECT ok FROM ok) AND (SELECT count(*) FROM created) = {creations}
                RETURNING t.slot
            ),
            applied AS (SELECT (SELECT count(*) FROM created) + (SELECT count(*) FROM updated) AS n)
            SELECT CASE n WHEN {n} THEN true WHEN 0 THEN false
                ELSE ('{APPLIED_IN_PART}: ' || n || ' of {n}')::boolean END
            FROM applied"
        )
    }
}

/// A text as a PostgreSQL literal, `E'…'`: backslashes and quotes escaped, so that it reads
/// the same whatever `standard_conforming_strings` says. Only printable ASCII comes here
/// (namespaces and values are checked first).
fn literal(text: &str) -> String {
    assert!(is_printable(text), "only printable ASCII is written into a statement");
    format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// The URL's options, read by sqlx, with the CA file of the environment when the URL names none.
pub(super) fn options(url: &StoreUrl, ca: Option<&str>) -> Result<PgConnectOptions, sqlx_core::Error> {
    let options: PgConnectOptions = url.driver_url("postgres", &[]).parse()?;
    Ok(match ca {
        Some(ca) if !url.names_param(&["sslrootcert", "ssl-root-cert", "ssl-ca"]) => options.ssl_root_cert(ca),
        _ => options,
    })
}

/// Creates the table and checks its columns; the store's connection is opened by its first
/// call.
pub(super) async fn connect(
    options: PgConnectOptions,
    table: &str,
    timeout: Duration,
) -> Result<Box<dyn Backend>, Failure> {
    let limit = format!("{}ms", timeout.as_millis());
    let options = options
        .application_name("typed-snowflake lease")
        .options([("lock_timeout", limit.as_str()), ("statement_timeout", limit.as_str())]);
    create_table::<Postgres>(&options, &TableDdl::new(table, POSTGRES_TABLE_DDL), timeout, is_timeout, is_old).await?;
    Ok(Box::new(Pg { link: Link::new(options, is_timeout), sql: Sql { table: table.to_owned() } }))
}

struct Pg {
    link: Link<Postgres>,
    sql: Sql,
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

/// `22P02` with [`APPLIED_IN_PART`]: a write that undid itself, a conflict.
fn is_applied_in_part(error: &sqlx_core::Error) -> bool {
    error
        .as_database_error()
        .is_some_and(|e| e.code().as_deref() == Some("22P02") && e.message().contains(APPLIED_IN_PART))
}

impl Backend for Pg {
    fn read<'a>(&'a self, namespace: &'a str, range: SlotRange, highest: bool, timeout: Duration) -> Op<'a, Rows> {
        let sql = self.sql.read(namespace, range, highest);
        Box::pin(self.link.call(timeout, async move |c| {
            let rows = raw_sql(AssertSqlSafe(sql)).fetch_all(c).await?;
            rows.iter().map(<(i64, Option<String>)>::from_row).collect()
        }))
    }

    fn write<'a>(&'a self, namespace: &'a str, rows: &'a [RowCas<'a>], timeout: Duration) -> Op<'a, bool> {
        let sql = self.sql.write(namespace, rows);
        Box::pin(self.link.call(timeout, async move |c| match raw_sql(AssertSqlSafe(sql)).fetch_all(c).await {
            Ok(rows) => rows.first().ok_or(sqlx_core::Error::RowNotFound)?.try_get::<bool, _>(0),
            Err(error) if is_applied_in_part(&error) => Ok(false),
            Err(error) => Err(error),
        }))
    }

    fn warnings(&self, timeout: Duration) -> Op<'_, Vec<String>> {
        Box::pin(self.link.call(timeout, async |c| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_quotes_and_backslashes_alone() {
        assert_eq!(literal("shop"), "E'shop'");
        assert_eq!(literal(r"r1|'x'\n\\"), r"E'r1|''x''\\n\\\\'");
        let every: String = (0x20u8..0x7f).map(char::from).collect();
        let quoted = literal(&every);
        assert_eq!(quoted.len(), every.len() + 5, "{quoted}");
    }

    #[test]
    #[should_panic(expected = "only printable ASCII")]
    fn a_newline_never_reaches_a_statement() {
        let _ = literal("a\nb");
    }

    #[test]
    fn a_write_is_one_statement_with_its_values_written_in() {
        let sql = Sql { table: "ids.leases".into() };
        let rows =
            [RowCas { slot: -1, expect: Some("m'1"), value: "m2" }, RowCas { slot: 3, expect: None, value: "w" }];
        let write = sql.write("shop", &rows);
        assert!(write.starts_with("WITH op (slot, expect, value) AS (VALUES (-1::bigint, E'm''1'::text, E'm2'::text), (3::bigint, NULL::text, E'w'::text)),"), "{write}");
        assert!(write.contains("FROM ids.leases WHERE namespace = E'shop' AND slot IN (-1, 3) FOR UPDATE"), "{write}");
        assert!(write.contains("ON CONFLICT (namespace, slot) DO NOTHING"), "{write}");
        assert!(write.contains("(SELECT count(*) FROM created) = 1"), "{write}");
        assert!(!write.contains(';'), "one statement: {write}");
    }

    #[test]
    fn a_read_takes_the_range_without_its_end() {
        let sql = Sql { table: "t".into() };
        let read = sql.read("shop", SlotRange { from: 0, to: 32 }, true);
        assert!(read.contains("WHERE namespace = E'shop' AND (slot = -1 OR (slot >= 0 AND slot < 32))"), "{read}");
        assert!(read.contains("WHERE true"), "{read}");
    }
}
