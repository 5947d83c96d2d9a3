//! The runtime of [typed-snowflake](https://docs.rs/typed-snowflake): layouts, clocks, the
//! lock-free generator, the per-type registry, worker-ID sources and the integrations.
//!
//! Most users depend on the `typed-snowflake` facade, which re-exports everything here
//! together with `#[derive(SnowflakeId)]`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod check;
pub mod clock;
pub mod error;
pub mod events;
pub mod generator;
mod id;
mod integrations;
pub mod layout;
#[cfg(feature = "public-id")]
pub mod public;
pub mod registry;
pub mod score;
pub mod worker;

#[doc(hidden)]
pub mod __private;

pub use check::{CheckError, IdTypes, Problem};
pub use clock::{Clock, ManualClock, StepBack, SystemClock};
pub use error::{
    FenceReason, GenerateError, InvalidLayout, IoError, LayoutError, ParseIdError, ParseLayoutError, RegistryError,
    WorkerError,
};
pub use generator::{DEFAULT_BATCH_LIMIT, Generator, GeneratorBuilder, GeneratorStats, MAX_HIGH_WATER_RESERVE};
pub use id::SnowflakeId;
pub use integrations::dates::IntoUnixMs;
pub use layout::{FieldOrder, Labels, Layout, Parts, Preset, TickUnit};
#[cfg(feature = "public-id")]
pub use public::{PublicIdError, PublicIdKey, PublicIdKeyError};
pub use registry::{Registry, RegistryBuilder};
pub use worker::WorkerSource;

// Public modules are named after what they hold, never after a crate: with
// `use typed_snowflake::*;` beside `use serde::Serialize;`, a module named `serde` (or
// `redis`, `sqlx`, `chrono`...) would make the crate's name ambiguous in the user's code.
#[cfg(feature = "redis")]
pub use integrations::redis as timeline;
#[cfg(feature = "serde")]
pub use integrations::serde as serialization;
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
pub use integrations::sqlx as sql;
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
pub use integrations::sqlx::{DecodeIdError, EncodeIdError};
