//! The service's slow tier, real processes and real waiting: servers whose lease store goes
//! away and comes back, three servers sharing one store under load, a start while the store
//! does not answer yet, gRPC health through a lease acquisition, a restart on the same port
//! under load (`--reuse-port`), a state file on etcd under load. `cargo test` leaves it out
//! (`test = false` in `Cargo.toml`);
//! `cargo test --workspace --all-features --test 'faults*'` runs it with the facade's fault tests.

#[path = "../common/mod.rs"]
mod common;

#[cfg(feature = "grpc")]
mod grpc;
mod many;
mod restart;
mod startup;
mod state_file;
