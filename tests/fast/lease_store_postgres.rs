//! The SQL lease store against a real PostgreSQL (`DATABASE_URL_PG`), each test in a table of
//! its own, dropped at the end: the store's contract, a row locked by another session (the
//! renewal gives up within the store's timeout), a server that never answers. The tests are
//! written once for both SQL databases, in `common/sql_lease_store.rs`.

use crate::lease_store;
use crate::servers;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use lease_store::{HIGH_WATER, TTL, timed_out, unique};
use sqlx::AssertSqlSafe;
use tokio::runtime::Runtime;
use typed_snowflake::worker::lease::{Claim, LeaseError, LeaseStore, SqlLeaseStore};

sql_lease_store_tests! {
    pool: sqlx::PgPool,
    url: servers::pg_url,
    placeholder: "$1",
    an_hour_from_now: "now() + interval '1 hour'",
    columns_query: "SELECT column_name::text, data_type::text FROM information_schema.columns
                    WHERE table_name = $1 ORDER BY ordinal_position",
    columns: [
        ("namespace", "character varying"),
        ("worker_id", "bigint"),
        ("holder", "character varying"),
        ("fence", "bigint"),
        ("lease_until", "timestamp with time zone"),
        ("high_water_ms", "bigint"),
    ],
    column_type: |t| t,
    silent_url: "postgres://postgres@{}/test",
    down_url: "postgres://app:secret@{}/test",
    down_shown: "postgres://app@127.0.0.1:",
}
