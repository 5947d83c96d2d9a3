//! The MySQL and MariaDB backend: one `SELECT` reads; one batch of statements in one
//! transaction writes ([`Sql::write`]).

use std::fmt::Write as _;
use std::time::Duration;

use sqlx_core::connection::{ConnectOptions, Connection};
use sqlx_core::from_row::FromRow;
use sqlx_core::raw_sql::raw_sql;
use sqlx_core::row::Row;
use sqlx_core::sql_str::AssertSqlSafe;
use sqlx_mysql::{MySql, MySqlConnectOptions, MySqlDatabaseError};

use super::super::url::StoreUrl;
use super::backend::{
    Backend, Failure, Link, MYSQL_TABLE_DDL, Op, RowCas, Rows, SlotRange, TableDdl, create_table, is_printable,
};

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

/// The incarnation of a MariaDB server, and of a MySQL one.
const MARIADB_INCARNATION: &str =
    concat!("CONCAT('mariadb-', @@server_id, '-', COALESCE(", started!("information_schema.GLOBAL_STATUS"), ", ''))");
const MYSQL_INCARNATION: &str =
    concat!("CONCAT('mysql-', @@server_uuid, '-', COALESCE(", started!("performance_schema.global_status"), ", ''))");

/// The statements, with the table's name, the server's incarnation and each call's values
/// written in (as [`Backend`] says), and unprepared: a prepared statement cannot hold several.
struct Sql {
    table: String,
    incarnation: &'static str,
    /// The session's `innodb_lock_wait_timeout`, set by each write.
    lock_wait: u64,
}

impl Sql {
    /// The rows of [`Rows`], in one statement: one snapshot (InnoDB's consistent read).
    fn read(&self, namespace: &str, range: SlotRange, highest: bool) -> String {
        let (table, ns, incarnation) = (&self.table, namespace_literal(namespace), self.incarnation);
        let SlotRange { from, to } = range;
        format!(
            "SELECT slot, value FROM {table} WHERE namespace = {ns} AND (slot = -1 OR (slot >= {from} AND slot < {to}))
            UNION ALL SELECT -2, CAST((SELECT MAX(slot) FROM {table} WHERE namespace = {ns} AND slot >= 0) AS BINARY)
                FROM DUAL WHERE {highest}
            UNION ALL SELECT -3, CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000 AS BINARY)
            UNION ALL SELECT -4, CAST({incarnation} AS BINARY)"
        )
    }

    /// Every compare-and-set of `rows` or none, in one transaction sent as one batch, whose
    /// last statement answers whether all matched. The rows the updates expect are locked
    /// and compared first (`@snowflake_lease_matched`); each creation is made only if they
    /// all matched, and a row that exists makes it a conflict (`INSERT IGNORE`, counted in
    /// `@snowflake_lease_created<i>`); the updates are made only if every creation was; of
    /// two creations, one made without the other is deleted again. A statement that fails
    /// ends the batch inside the transaction: the connection is then closed, which rolls it
    /// back. The batch first bounds the session's lock waits, which only writes have.
    fn write(&self, namespace: &str, rows: &[RowCas<'_>]) -> String {
        let (table, ns) = (&self.table, namespace_literal(namespace));
        let (updates, creations): (Vec<&RowCas<'_>>, Vec<&RowCas<'_>>) =
            rows.iter().partition(|row| row.expect.is_some());
        let mut sql = format!("SET SESSION innodb_lock_wait_timeout = {};\nSTART TRANSACTION;\n", self.lock_wait);
        if updates.is_empty() {
            sql.push_str("SET @snowflake_lease_matched = 0;\n");
        } else {
            let holds: Vec<String> = updates
                .iter()
                .filter_map(|row| {
                    let expect = row.expect?;
                    Some(format!("(slot = {} AND value = {})", row.slot, value_literal(expect)))
                })
                .collect();
            let _ = writeln!(
                sql,
                "SELECT COUNT(*) INTO @snowflake_lease_matched FROM {table} WHERE namespace = {ns} AND ({}) FOR UPDATE;",
                holds.join(" OR ")
            );
        }
        let matched = format!("@snowflake_lease_matched = {}", updates.len());
        for (i, row) in creations.iter().enumerate() {
            let value = value_literal(row.value);
            let _ = writeln!(
                sql,
                "INSERT IGNORE INTO {table} (namespace, slot, value) SELECT {ns}, {}, {value} FROM DUAL WHERE {matched};
                SET @snowflake_lease_created{i} = ROW_COUNT() > 0;",
                row.slot
            );
        }
        let created = match creations.len() {
            0 => "TRUE".to_owned(),
            1 => "@snowflake_lease_created0".to_owned(),
            _ => "@snowflake_lease_created0 AND @snowflake_lease_created1".to_owned(),
        };
        for row in &updates {
            let _ = writeln!(
                sql,
                "UPDATE {table} SET value = {} WHERE namespace = {ns} AND slot = {} AND {matched} AND {created};",
                value_literal(row.value),
                row.slot
            );
        }
        if let [first, second] = creations[..] {
            let _ = writeln!(
                sql,
                "DELETE FROM {table} WHERE namespace = {ns} AND NOT ({created})
                    AND ((slot = {} AND @snowflake_lease_created0) OR (slot = {} AND @snowflake_lease_created1));",
                first.slot, second.slot
            );
        }
        let _ = write!(sql, "COMMIT;\nSELECT CAST(({matched}) AND ({created}) AS SIGNED);");
        sql
    }
}

/// A namespace as a MySQL literal: its bytes in hexadecimal, as ASCII text (the column's
/// character set, whose collation then decides the comparison). Nothing in it is read as
/// an escape, whatever `sql_mode` says.
fn namespace_literal(namespace: &str) -> String {
    format!("_ascii {}", value_literal(namespace))
}

/// A value as a MySQL literal: its bytes in hexadecimal, a binary string as the column is.
fn value_literal(text: &str) -> String {
    assert!(is_printable(text) && !text.is_empty(), "only printable ASCII is written into a statement");
    let hex: String = text.bytes().map(|byte| format!("{byte:02x}")).collect();
    format!("X'{hex}'")
}

/// The URL's options, read by sqlx (as `mysql://`: MariaDB speaks the same protocol), with the
/// CA file of the environment when the URL names none.
pub(super) fn options(url: &StoreUrl, ca: Option<&str>) -> Result<MySqlConnectOptions, sqlx_core::Error> {
    let options: MySqlConnectOptions = url.driver_url("mysql", &[]).parse()?;
    Ok(match ca {
        Some(ca) if !url.names_param(&["ssl-ca", "sslca"]) => options.ssl_ca(ca),
        _ => options,
    })
}

/// Creates the table and checks its columns, and asks the server whether it is MariaDB or
/// MySQL; the store's connection is opened by its first call.
pub(super) async fn connect(
    options: MySqlConnectOptions,
    table: &str,
    timeout: Duration,
) -> Result<Box<dyn Backend>, Failure> {
    // Whole seconds, at least 1: the server's lock-wait bound backs up ours.
    let lock_wait = (timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0)).max(1);
    create_table::<MySql>(&options, &TableDdl::new(table, MYSQL_TABLE_DDL), timeout, is_timeout, is_old).await?;
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
    let incarnation = if version.contains("MariaDB") { MARIADB_INCARNATION } else { MYSQL_INCARNATION };
    let sql = Sql { table: table.to_owned(), incarnation, lock_wait };
    // The store's connection is opened in two round trips (the server's greeting, the
    // login), without sqlx's `SET` of the session's SQL mode, time zone and character set:
    // the statements use none of them (no `||`, no `TIMESTAMP` column, ASCII only).
    let options =
        options.pipes_as_concat(false).no_engine_substitution(false).timezone(None::<String>).set_names(false);
    Ok(Box::new(My { link: Link::new(options, is_timeout), sql }))
}

struct My {
    link: Link<MySql>,
    sql: Sql,
}

/// The server's own limits: 1205 a lock wait over `innodb_lock_wait_timeout`, 1969
/// (MariaDB) and 3024 (MySQL) a statement over its time limit.
fn is_timeout(error: &sqlx_core::Error) -> bool {
    matches!(error_number(error), Some(1205 | 1969 | 3024))
}

/// 1054: a column the table does not have.
fn is_old(error: &sqlx_core::Error) -> bool {
    error_number(error) == Some(1054)
}

fn error_number(error: &sqlx_core::Error) -> Option<u16> {
    error.as_database_error()?.try_downcast_ref::<MySqlDatabaseError>().map(MySqlDatabaseError::number)
}

impl Backend for My {
    fn read<'a>(&'a self, namespace: &'a str, range: SlotRange, highest: bool, timeout: Duration) -> Op<'a, Rows> {
        let sql = self.sql.read(namespace, range, highest);
        Box::pin(self.link.call(timeout, async move |c| {
            let rows = raw_sql(AssertSqlSafe(sql)).fetch_all(c).await?;
            rows.iter()
                .map(|row| {
                    let (slot, value) = <(i64, Option<Vec<u8>>)>::from_row(row)?;
                    let value = value.map(String::from_utf8).transpose();
                    value.map(|value| (slot, value)).map_err(|e| sqlx_core::Error::Decode(Box::new(e)))
                })
                .collect()
        }))
    }

    fn write<'a>(&'a self, namespace: &'a str, rows: &'a [RowCas<'a>], timeout: Duration) -> Op<'a, bool> {
        let sql = self.sql.write(namespace, rows);
        Box::pin(self.link.call(timeout, async move |c| {
            // The batch's rows: the last statement's answer.
            let rows = raw_sql(AssertSqlSafe(sql)).fetch_all(c).await?;
            Ok(rows.last().ok_or(sqlx_core::Error::RowNotFound)?.try_get::<i64, _>(0)? == 1)
        }))
    }

    fn warnings(&self, timeout: Duration) -> Op<'_, Vec<String>> {
        Box::pin(self.link.call(timeout, async |c| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_hexadecimal() {
        assert_eq!(value_literal("a'\\"), "X'61275c'");
        assert_eq!(namespace_literal("shop"), "_ascii X'73686f70'");
    }

    #[test]
    fn a_write_is_one_batch_in_one_transaction() {
        let sql = Sql { table: "t".into(), incarnation: MARIADB_INCARNATION, lock_wait: 2 };
        let rows = [RowCas { slot: -1, expect: Some("m1"), value: "m2" }, RowCas { slot: 3, expect: None, value: "w" }];
        let write = sql.write("ns", &rows);
        let order = [
            "SET SESSION innodb_lock_wait_timeout = 2;",
            "START TRANSACTION;",
            "SELECT COUNT(*) INTO @snowflake_lease_matched FROM t WHERE namespace = _ascii X'6e73' AND ((slot = -1 AND value = X'6d31')) FOR UPDATE;",
            "INSERT IGNORE INTO t (namespace, slot, value) SELECT _ascii X'6e73', 3, X'77' FROM DUAL WHERE @snowflake_lease_matched = 1;",
            "UPDATE t SET value = X'6d32' WHERE namespace = _ascii X'6e73' AND slot = -1 AND @snowflake_lease_matched = 1 AND @snowflake_lease_created0;",
            "COMMIT;",
            "SELECT CAST((@snowflake_lease_matched = 1) AND (@snowflake_lease_created0) AS SIGNED);",
        ];
        let mut rest = write.as_str();
        for statement in order {
            let at = rest.find(statement).unwrap_or_else(|| panic!("{statement} in order in:\n{write}"));
            rest = &rest[at + statement.len()..];
        }
        assert!(!write.contains("DELETE"), "{write}");
        // Two creations: one made without the other is undone.
        let both = [RowCas { slot: -1, expect: None, value: "m" }, RowCas { slot: 3, expect: None, value: "w" }];
        let write = sql.write("ns", &both);
        assert!(write.contains("SET @snowflake_lease_matched = 0;"), "{write}");
        assert!(write.contains("DELETE FROM t WHERE namespace = _ascii X'6e73' AND NOT (@snowflake_lease_created0 AND @snowflake_lease_created1)"), "{write}");
    }
}
