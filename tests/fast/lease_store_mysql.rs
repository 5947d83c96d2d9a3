//! The SQL lease store against a real MySQL or MariaDB (`DATABASE_URL_MYSQL`), each test in a
//! table of its own, dropped at the end: the store's contract, a row locked by another session
//! (the renewal gives up within the store's timeout), a server that never answers. The tests
//! are written once for both SQL databases, in `common/sql_lease_store.rs`.

use crate::lease_store;
use crate::servers;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use lease_store::{HIGH_WATER, TTL, timed_out, unique};
use sqlx::AssertSqlSafe;
use tokio::runtime::Runtime;
use typed_snowflake::worker::lease::{Claim, LeaseError, LeaseStore, SqlLeaseStore};

sql_lease_store_tests! {
    pool: sqlx::MySqlPool,
    url: servers::mysql_url,
    placeholder: "?",
    an_hour_from_now: "UTC_TIMESTAMP(3) + INTERVAL 1 HOUR",
    columns_query: "SELECT CAST(column_name AS CHAR), CAST(column_type AS CHAR) FROM information_schema.columns
                    WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position",
    columns: [
        ("namespace", "varchar(64)"),
        ("worker_id", "bigint"),
        ("holder", "varchar(64)"),
        ("fence", "bigint"),
        ("lease_until", "datetime(3)"),
        ("high_water_ms", "bigint"),
    ],
    // MariaDB and MySQL 5 show a display width (`bigint(20)`), MySQL 8 does not.
    column_type: |t| t.replace("bigint(20)", "bigint"),
    silent_url: "mysql://root@{}/test",
    down_url: "mariadb://app:secret@{}/test",
    down_shown: "mariadb://app@127.0.0.1:",
}
