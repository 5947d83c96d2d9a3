//! The SQL lease store against a real MySQL or MariaDB (`DATABASE_URL_MYSQL`), each test in a
//! table of its own, dropped at the end: the conformance suite and the planted bugs, the
//! table's shape, a row locked by another session, a server that never answers. The tests
//! are written once for both SQL databases, in `common/sql_lease_store.rs`.

use crate::conformance::{Faults, Subject, planted_bugs_fail, run_all};
use crate::planted::Bug;
use crate::servers;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::AssertSqlSafe;
use tokio::runtime::Runtime;
use typed_snowflake::worker::lease::store::{Cas, Query, Slot, Written};
use typed_snowflake::worker::lease::{LeaseError, LeaseStore, SqlLeaseStore};

sql_lease_store_tests! {
    pool: sqlx::MySqlPool,
    url: servers::mysql_url,
    name: "mysql",
    placeholders: ("?", "?"),
    columns_query: "SELECT CAST(column_name AS CHAR), CAST(column_type AS CHAR) FROM information_schema.columns
                    WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position",
    columns: [("namespace", "varchar(64)"), ("slot", "bigint"), ("value", "varbinary(512)")],
    // MariaDB and MySQL 5 show a display width (`bigint(20)`), MySQL 8 does not.
    column_type: |t| t.replace("bigint(20)", "bigint"),
    old_table: "CREATE TABLE {} (namespace VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        worker_id BIGINT NOT NULL, holder VARCHAR(64) NOT NULL, fence BIGINT NOT NULL,
        lease_until DATETIME(3) NOT NULL, high_water_ms BIGINT NULL, PRIMARY KEY (namespace, worker_id))",
    incarnation: "m",
    silent_url: "mysql://root@{}/test",
    down_url: "mariadb://app:secret@{}/test",
    down_shown: "mariadb://app@127.0.0.1:",
}

/// The machine's MariaDB flushes its log at every commit: nothing to warn about.
#[test]
fn a_durable_server_has_no_warning() {
    let Some(url) = servers::mysql_url() else { return };
    let table = format!("t{}_warned", std::process::id());
    let store = SqlLeaseStore::builder(&url).table(&table).connect().expect("connecting");
    assert_eq!(store.warnings().expect("the settings"), Vec::<String>::new());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let pool = sqlx::MySqlPool::connect(&url).await.expect("connecting");
        sqlx::query(AssertSqlSafe(format!("DROP TABLE IF EXISTS {table}"))).execute(&pool).await.expect("dropping");
    });
}
