//! The service's fast tests, linked once as one test binary (instead of one per file): the API
//! against the real router (`api`), the layout text of `/v1/types` in the derive
//! (`layout_text`), and the real binary read by curl, Python and Node (`clients`) and by gRPC
//! clients (`grpc`, feature `grpc`), hammered through every phase of its lease (`readiness`),
//! and stopped under load or started by socket activation (`shutdown`). The slow tier is
//! `tests/faults/main.rs`.
//!
//! Nothing here configures a process-wide thing that one module could see from another (no
//! environment variable set, no global `tracing` subscriber, no signal handler): the routers of
//! `api` and `layout_text` share only the process's Prometheus recorder (`prometheus()`,
//! installed once), whose lines the tests look for without reading their counts; every other
//! module runs the server binary as a child process, each on a port and namespace of its own.

#[path = "../common/mod.rs"]
mod common;

mod api;
mod clients;
#[cfg(feature = "grpc")]
mod grpc;
mod layout_text;
mod readiness;
mod shutdown;
