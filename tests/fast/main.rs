//! The fast tier: every integration test of the facade that waits for nothing real (no TTL
//! run out, no server killed, restarted or paused), linked once as one test binary. The
//! README's test command runs it. Each file is a module under the features it needs, so the
//! binary builds with any set of features and runs what they allow.
//!
//! Tests that need a server read its URL (`DATABASE_URL_PG`, `DATABASE_URL_MYSQL`,
//! `REDIS_URL`); without it they print a `SKIPPED:` line, and under `CI` they fail. Tests
//! that need a fresh process (the registry, a lease from the environment) run this binary
//! again through `child`, each for its own module's `child` entry.
//!
//! Nothing here configures a process-wide thing in this process (the registry, a global
//! `tracing` subscriber or `metrics` recorder): `tests/events.rs` and
//! `tests/high_water_paths.rs` do, each in a binary of its own. The slow tier is
//! `tests/faults/main.rs`.

// The helpers every module may use, shared once (each module imports what it needs).
#[path = "../common/child.rs"]
mod child;
#[path = "../common/conformance.rs"]
mod conformance;
#[path = "../common/ids.rs"]
mod ids;
#[path = "../common/planted.rs"]
mod planted;
#[path = "../common/proxy.rs"]
mod proxy;
#[path = "../common/servers.rs"]
mod servers;
#[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
#[macro_use]
#[path = "../common/sql_lease_store.rs"]
mod sql_lease_store;
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
#[path = "../common/sqlx.rs"]
mod sqlx_common;
#[cfg(any(feature = "diesel-postgres", feature = "diesel-mysql", feature = "diesel-sqlite"))]
#[macro_use]
#[path = "../common/diesel.rs"]
mod diesel_common;

// Layouts, presets, decoding.
// Prefixed IDs (`ord_…`): the text form, its order, its errors, serde.
// Both text forms' fast paths against plain references (`text_forms`).
#[cfg(feature = "serde")]
mod derived_schemes;
mod generic;
mod layout;
mod layout64;
#[cfg(feature = "serde")]
mod prefixed;
mod presets;
#[cfg(all(feature = "chrono", feature = "time", feature = "jiff"))]
mod proptest_dates;
mod proptest_layout;
#[cfg(feature = "serde")]
mod proptest_layout64;
mod score;
#[cfg(feature = "serde")]
mod text_forms;

// The reference lease store against the conformance suite.
mod lease_memory;
mod lease_rules_doc;

// Generation: concurrency, clocks, batches, the high-water file, the registry.
#[cfg(feature = "tokio")]
mod generate_async;
mod generate_batch;
mod generate_clock;
mod generate_concurrency;
mod generate_restart;
mod registry_check;
mod registry_env;
mod registry_limits;

// The lease stores' contract against the shared servers (no fault injected).
#[cfg(feature = "lease-mysql")]
mod lease_store_mysql;
#[cfg(feature = "lease-postgres")]
mod lease_store_postgres;
#[cfg(feature = "lease-redis")]
mod lease_store_redis;
#[cfg(feature = "lease-zookeeper")]
mod lease_store_zookeeper;

// Integrations.
#[cfg(feature = "async-graphql")]
mod async_graphql;
#[cfg(feature = "diesel-mysql")]
mod diesel_mysql;
#[cfg(feature = "diesel-postgres")]
mod diesel_postgres;
#[cfg(feature = "diesel-sqlite")]
mod diesel_sqlite;
#[cfg(all(
    feature = "serde",
    feature = "schemars",
    feature = "sqlx-sqlite",
    feature = "redis",
    feature = "chrono",
    feature = "time",
    feature = "jiff"
))]
mod glob_import;
#[cfg(all(
    feature = "serde",
    feature = "schemars",
    feature = "utoipa",
    feature = "async-graphql",
    feature = "sqlx-postgres",
    feature = "sqlx-mysql",
    feature = "sqlx-sqlite",
    feature = "sqlx08-postgres",
    feature = "sqlx08-mysql",
    feature = "diesel-postgres",
    feature = "diesel-mysql",
    feature = "diesel-sqlite",
    feature = "sea-orm",
    feature = "tokio-postgres",
    feature = "redis"
))]
mod integrations_hygiene;
#[cfg(feature = "tokio-postgres")]
mod postgres_types;
#[cfg(feature = "public-id")]
mod public_id;
#[cfg(feature = "redis")]
mod redis;
#[cfg(feature = "schemars")]
mod schemars;
#[cfg(feature = "sea-orm")]
mod sea_orm;
#[cfg(feature = "serde")]
mod serde;
#[cfg(feature = "sqlx08-mysql")]
mod sqlx08_mysql;
#[cfg(feature = "sqlx08-postgres")]
mod sqlx08_postgres;
#[cfg(feature = "sqlx-mysql")]
mod sqlx_mysql;
#[cfg(feature = "sqlx-postgres")]
mod sqlx_postgres;
#[cfg(feature = "sqlx-sqlite")]
mod sqlx_sqlite;
#[cfg(all(feature = "utoipa", feature = "schemars"))]
mod utoipa;
