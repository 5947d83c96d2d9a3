//! The SQL lease store against a real PostgreSQL (`DATABASE_URL_PG`), each test in a table of
//! its own, dropped at the end: the conformance suite and the planted bugs, the table's
//! shape, a row locked by another session, a server that never answers, the durability
//! warnings. The tests are written once for both SQL databases, in
//! `common/sql_lease_store.rs`.

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
    pool: sqlx::PgPool,
    url: servers::pg_url,
    name: "postgres",
    placeholders: ("$1", "$2"),
    columns_query: "SELECT column_name::text, data_type::text FROM information_schema.columns
                    WHERE table_name = $1 ORDER BY ordinal_position",
    columns: [("namespace", "character varying"), ("slot", "bigint"), ("value", "character varying")],
    column_type: |t| t,
    old_table: "CREATE TABLE {} (namespace VARCHAR(64) NOT NULL, worker_id BIGINT NOT NULL,
        holder VARCHAR(64) NOT NULL, fence BIGINT NOT NULL, lease_until TIMESTAMPTZ NOT NULL,
        high_water_ms BIGINT, PRIMARY KEY (namespace, worker_id))",
    incarnation: "pg-",
    silent_url: "postgres://postgres@{}/test",
    down_url: "postgres://app:secret@{}/test",
    down_shown: "postgres://app@127.0.0.1:",
}

/// A session whose commits the server acknowledges before they are durable: the store says
/// what it costs, and what to set.
#[test]
fn a_session_without_synchronous_commit_is_warned_about() {
    let Some(url) = servers::pg_url() else { return };
    let table = format!("t{}_warned", std::process::id());
    let store = SqlLeaseStore::builder(&url).table(&table).connect().expect("connecting");
    assert_eq!(store.warnings().expect("the settings"), Vec::<String>::new());
    let separator = if url.contains('?') { '&' } else { '?' };
    let off = format!("{url}{separator}options=-c%20synchronous_commit%3Doff");
    let store = SqlLeaseStore::builder(&off).table(&table).connect().expect("connecting");
    let warnings = store.warnings().expect("the settings");
    assert!(warnings.len() == 1 && warnings[0].contains("synchronous_commit to on"), "{warnings:?}");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let pool = sqlx::PgPool::connect(&url).await.expect("connecting");
        sqlx::query(AssertSqlSafe(format!("DROP TABLE IF EXISTS {table}"))).execute(&pool).await.expect("dropping");
    });
}

/// The incarnation is the server's system identifier and the timeline it writes on: a
/// promoted standby, which keeps the identifier, is a new incarnation only through its
/// timeline (the slow tier promotes one, `faults/lease_sql_incarnation.rs`). This server was
/// never promoted, so its last checkpoint names the timeline it writes on.
#[test]
fn the_incarnation_names_the_system_and_the_timeline() {
    let Some(url) = servers::pg_url() else { return };
    let table = format!("t{}_incarnation", std::process::id());
    let store = SqlLeaseStore::builder(&url).table(&table).connect().expect("connecting");
    let incarnation = store.read("shop", &Query::workers(0..1)).expect("a read").incarnation;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let (system, timeline): (String, String) = runtime.block_on(async {
        let pool = sqlx::PgPool::connect(&url).await.expect("connecting");
        let row = sqlx::query_as(
            "SELECT (SELECT system_identifier FROM pg_control_system())::text,
                    (SELECT timeline_id FROM pg_control_checkpoint())::text",
        )
        .fetch_one(&pool)
        .await
        .expect("the server's identity");
        sqlx::query(AssertSqlSafe(format!("DROP TABLE IF EXISTS {table}"))).execute(&pool).await.expect("dropping");
        row
    });
    assert_eq!(incarnation, format!("pg-{system}-tl{timeline}"));
}
