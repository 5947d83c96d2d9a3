//! The slow tier: the lease stores tested the way they fail, with real processes and real
//! waiting (TTLs run out, renewals cut off). Private servers of the tests' own (redis-server
//! killed, restarted empty and paused; Sentinel; etcd and ZooKeeper clusters; TLS servers), a
//! proxy that stalls and drops, holders in child processes, churn, a process killed and
//! restarted. It is a test binary that `cargo test` leaves out (`test = false` in
//! `Cargo.toml`); run it with
//!
//! ```sh
//! cargo test --workspace --all-features --test 'faults*'
//! ```
//!
//! which also runs `faults_events` (`events_lease.rs`, a binary of its own: it installs a
//! global `tracing` subscriber and `metrics` recorder, which would collect every other test's
//! events) and `snowflake-server`'s `faults` (servers whose store goes away). `.ci/run`
//! runs both tiers. Child processes run this binary again through `child`, each for its own
//! module's `child` entry.

// The helpers every module may use, shared once (each module imports what it needs).
#[path = "../common/child.rs"]
mod child;
#[path = "../common/conformance.rs"]
mod conformance;
#[path = "../common/faults.rs"]
mod faults;
#[path = "../common/planted.rs"]
mod planted;
#[path = "../common/proxy.rs"]
mod proxy;
#[path = "../common/rng.rs"]
mod rng;
#[path = "../common/servers.rs"]
mod servers;
#[path = "../common/tls.rs"]
mod tls;

// Real processes on Redis, PostgreSQL and MariaDB: churn, renewals cut off, a stopped Redis.
#[cfg(all(feature = "lease-redis", feature = "lease-postgres", feature = "lease-mysql"))]
mod lease;
// Store faults from outside: private redis-servers killed, flushed and paused, a proxy in
// front of PostgreSQL and MariaDB, holders in child processes.
#[cfg(feature = "lease-redis")]
mod lease_faults;
// Running holders through store outages shorter than the reservation, stores back empty, and
// restarts: private redis-servers paused or restarted empty, a TCP proxy that cuts PostgreSQL
// off (etcd's are in `lease_store_etcd`).
// (It shares `lease_faults`'s turns and helpers, hence MariaDB's feature too.)
#[cfg(feature = "lease-redis")]
mod lease_outage;
// The SQL store (PostgreSQL, MariaDB) under its own faults: a worker's row or the marker's
// deleted, a restore from a dump (fenced, fenced as a newcomer acquires, unfenced), a proxy
// that cuts the store off.
#[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
mod lease_sql;
// The SQL store's incarnation as its server changes: a PostgreSQL standby promoted (read at
// once), a MariaDB restarted; private servers.
#[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
mod lease_sql_incarnation;
// Leases through Redis Sentinel: a master, a replica and three sentinels of the test's own;
// the master killed under load.
#[cfg(feature = "lease-redis")]
mod lease_sentinel;
// The etcd store on private etcd servers: the conformance suite, a hung member, and store
// faults under holder processes (records and the marker deleted, paused, rebuilt empty,
// restored from a snapshot).
#[cfg(feature = "lease-etcd")]
mod lease_store_etcd;
// The etcd store over TLS (a CA made for the run, a private etcd serving TLS) and with etcd's
// user/password authentication.
#[cfg(feature = "lease-etcd")]
mod lease_store_etcd_tls;
// The ZooKeeper store: worker znodes and the marker deleted, a snapshot restored and fenced,
// the server paused, an ensemble in a new epoch, TLS.
#[cfg(feature = "lease-zookeeper")]
mod lease_store_zookeeper;
// The Redis store under its faults: a key or the marker deleted, a restart from an older RDB,
// eviction under allkeys-lru, a pause shorter than the reservation; private redis-servers.
#[cfg(feature = "lease-redis")]
mod lease_store_redis;
// The lease stores over TLS: a CA made for the run, private TLS servers (redis-server,
// PostgreSQL, MariaDB).
#[cfg(feature = "lease-redis")]
mod lease_tls;
// The SQL store over TLS: a CA made for the run, a private PostgreSQL and MariaDB.
#[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
mod lease_tls_sql;
// A process killed while it issues, and started again on the same high-water directory.
mod restart_kill;
