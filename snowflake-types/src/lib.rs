//! The runtime of [typed-snowflake](https://docs.rs/typed-snowflake): layouts, clocks, the
//! lock-free generator, the per-type registry, worker-ID sources and the integrations.
//!
//! Most users depend on the `typed-snowflake` facade, which re-exports everything here
//! together with `#[derive(SnowflakeId)]`.
// docs.rs builds with `--cfg docsrs` on nightly: every feature-gated item gets a badge naming
// its feature (`doc_cfg` now includes what `doc_auto_cfg` did). Stable `cargo doc` ignores this.
#![cfg_attr(docsrs, feature(doc_cfg))]
// One module, `ascii`, allows `unsafe` (a `str` from bytes it made ASCII); nothing else may.
#![deny(unsafe_code)]
#![deny(missing_docs)]

mod ascii;
mod check;
pub mod clock;
mod dates;
pub mod decimal;
pub mod error;
pub mod events;
mod fence;
pub mod generator;
mod id;
mod integrations;
pub mod layout;
pub mod prefixed;
#[cfg(feature = "public-id")]
pub mod public;
#[cfg(feature = "public-id")]
mod public_key;
pub mod registry;
pub mod score;
pub mod worker;

#[doc(hidden)]
pub mod __private;

pub use check::{CheckError, IdTypes, Problem};
pub use clock::{Clock, ManualClock, StepBack, SystemClock};
pub use dates::IntoUnixMs;
pub use error::{
    FenceReason, GenerateError, InvalidLayout, IoError, LayoutError, ParseIdError, ParseLayoutError, RegistryError,
    WorkerError,
};
pub use generator::{DEFAULT_BATCH_LIMIT, Generator, GeneratorBuilder, GeneratorStats, MAX_HIGH_WATER_RESERVE};
pub use id::SnowflakeId;
pub use layout::{FieldOrder, Labels, Layout, Parts, Preset, TickUnit};
pub use prefixed::PrefixedIdError;
#[cfg(feature = "public-id")]
pub use public::{PublicIdError, PublicIdKey, PublicIdKeyError};
pub use registry::{Registry, RegistryBuilder, ShutdownGuard};
pub use worker::WorkerSource;

// Public modules are named after what they hold, never after a crate: with
// `use typed_snowflake::*;` beside `use serde::Serialize;`, a module named `serde` (or
// `redis`, `sqlx`, `chrono`...) would make the crate's name ambiguous in the user's code.
/// diesel 2 (`diesel-postgres`, `diesel-mysql`, `diesel-sqlite`).
#[cfg(any(feature = "diesel-postgres", feature = "diesel-mysql", feature = "diesel-sqlite"))]
pub use integrations::diesel as diesel_sql;
/// async-graphql (`async-graphql`).
#[cfg(feature = "async-graphql")]
pub use integrations::graphql;
/// postgres-types (`tokio-postgres`).
#[cfg(feature = "tokio-postgres")]
pub use integrations::postgres as pg_types;
#[cfg(feature = "redis")]
pub use integrations::redis as timeline;
/// sea-orm (`sea-orm`).
#[cfg(feature = "sea-orm")]
pub use integrations::sea_orm as sea_orm_values;
#[cfg(feature = "serde")]
pub use integrations::serde as serialization;
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
pub use integrations::sqlx as sql;
/// sqlx 0.8 (`sqlx08-postgres`, `sqlx08-mysql`).
#[cfg(any(feature = "sqlx08-postgres", feature = "sqlx08-mysql"))]
pub use integrations::sqlx08 as sql08;
pub use integrations::{DecodeIdError, EncodeIdError};
