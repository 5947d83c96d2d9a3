//! Typed 64-bit Snowflake IDs for Rust.
//!
//! Declare an ID type once; the compiler checks its layout, and the type brings its own
//! lock-free generator, decoding, text, JSON-as-string, `BIGINT` storage and exact Redis
//! scores:
//!
//! ```
//! use typed_snowflake::SnowflakeId;
//!
//! #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
//! #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
//! pub struct OrderId(i64);
//!
//! let id = OrderId::generate();                 // this type's own generator
//! assert!(id.timestamp_ms() >= OrderId::EPOCH_MS);
//! assert_eq!(OrderId::TIME_SHIFT, 21);          // masks and shifts are consts
//!
//! let built = OrderId::from_parts(1_700_000_000_000, 3, 7)?;
//! assert_eq!((built.worker(), built.sequence()), (3, 7));
//! assert_eq!(built.to_string().parse::<OrderId>()?, built);
//! assert!(OrderId::try_from(-1i64).is_err());   // no valid ID is negative
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The ID
//!
//! `time` bits of ticks since the epoch, then `worker` bits, then `seq` bits, in the lowest
//! bits of the integer. On an `i64` field at most 63 bits are used, so the sign bit stays 0
//! and every ID is a positive `i64`; a `u64` field may use all 64 (as Discord, Instagram and
//! Mastodon do):
//!
//! ```text
//! | 0 | time (ticks since epoch) | worker | seq |
//!   63  62 ...                                0
//! ```
//!
//! # Attributes
//!
//! | attribute | meaning |
//! |---|---|
//! | `preset = "twitter"` | a public scheme's layout: `twitter`, `discord`, `instagram`, `sonyflake`, `mastodon`, `leaf`, `baidu` (see [`Preset`]); `epoch` and widths may follow where the scheme leaves them to the user |
//! | `time = N` | width of the time field, at least 1 |
//! | `worker = N` | width of the node field (0 for a single-node type) |
//! | `datacenter = N, machine = M` | the node field split in two halves (Twitter's 2010 layout), instead of `worker` |
//! | `seq = N` | width of the sequence field, at least 1 |
//! | `epoch = "YYYY-MM-DD"` | UTC midnight of that day; or an RFC 3339 instant (`"2010-11-04T01:42:54.657Z"`); or Unix milliseconds (`epoch = 1288834974657`, quoted or not); not before 1970 |
//! | `unit = "1ms"` | tick length: `"1ms"` (default), `"10ms"` (Sonyflake), `"1s"` (Baidu uid-generator) |
//! | `order = "time-worker-seq"` | field order: the default, or `"time-seq-worker"` (Sonyflake's sequence above the machine ID) |
//! | `#[layout("time=42,worker=5,seq=16,epoch=2021-05-05")]` | the whole layout as one string in the text form that [`Layout`] prints and parses, and that `snowflake --layout` and `snowflake serve`'s `/v1/types` use: a layout pasted from either compiles |
//! | `#[snowflake(crate = "path")]` | where the runtime is, for users who rename the crate |
//! | `#[snowflake(decode_only)]` | a type that only decodes IDs of an existing scheme (whose time field may have run out): no generator |
//! | `#[snowflake(prefix = "ord")]` | text form `ord_` + 13 lowercase base32 characters (`Display`, `FromStr`, serde, schemas, GraphQL; stored as the integer; `Debug` stays the derive list's): see [`prefixed`] |
//! | `#[snowflake(prefix = "ord", accept_decimal)]` | the same, reading bare decimal text too, for a type moving from decimal strings |
//!
//! The widths sum to at most 63 on an `i64` field, at most 64 on a `u64` field (whose IDs
//! at or above 2^63 `get()` returns with the same bits, as a negative `i64`). The epoch must
//! lie before the build date and the time field must not have run out by then (the build
//! date is `SOURCE_DATE_EPOCH`, in Unix seconds, when it is set, for reproducible builds; else
//! the clock at compilation), unless the type is `decode_only`. Anything else is a compile
//! error pointing at the token, and every mistake is reported at once. Each type's
//! documentation says when its time field runs out, as a date.
//!
//! # What the derive generates
//!
//! On `T` (a tuple struct over `i64` or `u64`):
//!
//! - consts `TIME_BITS`, `WORKER_BITS`, `SEQ_BITS`, `EPOCH_MS`, `TIME_SHIFT`,
//!   `WORKER_SHIFT`, `TIME_MASK`, `WORKER_MASK`, `SEQ_MASK`, `MAX_WORKER`, `MAX_SEQ`,
//!   `MAX_TIMESTAMP_MS`, and `LAYOUT` (a [`Layout`]); for split layouts also
//!   `DATACENTER_BITS`, `MACHINE_BITS`, `MAX_DATACENTER`, `MAX_MACHINE`;
//! - generation: `T::generate()`, `T::try_generate()`, `T::generate_batch(n)`;
//! - encoding and decoding: `T::from_parts(unix_ms, worker, seq)`, `id.timestamp_ms()`,
//!   `id.worker()`, `id.sequence()`, `id.parts()`, `id.get()`; for split layouts
//!   `T::from_node_parts`, `id.datacenter()`, `id.machine()`;
//! - dates: `id.timestamp()` (a `SystemTime`); with the features `chrono`, `time`, `jiff`:
//!   `id.to_chrono()`, `id.to_offset_date_time()`, `id.to_jiff()`;
//! - time-range bounds: `T::first_at(at)`, `T::last_at(at)`, for Unix ms, a `SystemTime`
//!   or those crates' instants (any [`IntoUnixMs`]), saturating outside the layout;
//! - Redis: `id.redis_score()`, `T::score_at(unix_ms)`, `id.redis_member()`;
//! - traits: [`SnowflakeId`], `Display`, `FromStr`, `From<T> for i64`/`u64`,
//!   `TryFrom<i64>`/`TryFrom<u64>` for `T`, and the integrations below; for a prefixed type
//!   also the const `PREFIX`. Never `Debug`, `Clone` or the comparisons: those come from the
//!   type's own derive list.
//!
//! Everything above that is not a const is also a method of the [`SnowflakeId`] trait, so
//! generic code (`fn save<T: SnowflakeId>(id: T)`) can generate and decode.
//!
//! # Imports
//!
//! `use typed_snowflake::SnowflakeId;` brings the derive and the trait. [`prelude`] adds
//! the registry and the errors code matches on. `use typed_snowflake::*;` works beside
//! `use serde::Serialize;`, `use redis::Commands;` and the other integrations' crates: no
//! public module is named after a crate (`serialization`, `timeline`, `sql`).
//!
//! # Crate features
//!
//! Every integration is a feature, off by default except `serde`; the worker-ID lease stores
//! are features of their own (`lease-redis`, `lease-postgres`, `lease-mysql`, `lease-etcd`,
//! `lease-zookeeper`, `lease-zookeeper-tls`), apart from the
//! type integrations (`redis`, `sqlx-postgres`, `sqlx-mysql`), which bring no runtime. The
//! README's table ("Crate features") lists every feature, the crate it targets and what it
//! brings; docs.rs marks each feature-gated item with its feature.
//!
//! # Generation
//!
//! Each type gets its own generator on first use, configured by the process-wide
//! [`Registry`] (worker ID, clock, batch limit, high-water file). Without
//! [`Registry::builder`]`().install()`, the worker ID comes from `SNOWFLAKE_WORKER_ID`
//! (or 0 when unset) and the clock is the [`MonotonicClock`](clock::MonotonicClock).
//! [`Registry::check`] at start builds the generators of the types it is given and
//! reports every problem at once, before the first request.
// docs.rs builds with `--cfg docsrs` on nightly: every feature-gated item gets a badge naming
// its feature (`doc_cfg` now includes what `doc_auto_cfg` did). Stable `cargo doc` ignores this.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[doc = include_str!("../docs/comparison.md")]
pub mod comparison {}

pub use snowflake_derive::SnowflakeId;
pub use snowflake_types::*;

/// The names most code needs, for `use typed_snowflake::prelude::*;`: the derive and the
/// trait, the registry, and the errors a caller matches on.
///
/// ```
/// use typed_snowflake::prelude::*;
///
/// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
/// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
/// pub struct OrderId(i64);
///
/// fn parse<T: SnowflakeId>(text: &str) -> Result<T, ParseIdError> {
///     T::parse_str(text)
/// }
/// assert!(matches!(parse::<OrderId>("-1"), Err(ParseIdError::Sign { .. })));
/// assert!(matches!(OrderId::try_from(-1i64), Err(LayoutError::Negative { .. })));
/// let id: OrderId = OrderId::first_at(std::time::SystemTime::now());
/// assert_eq!(id.worker(), 0);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub mod prelude {
    pub use snowflake_derive::SnowflakeId;
    #[cfg(any(feature = "sqlx-postgres", feature = "sqlx-mysql", feature = "sqlx-sqlite"))]
    pub use snowflake_types::DecodeIdError;
    pub use snowflake_types::{
        GenerateError, IntoUnixMs, LayoutError, ParseIdError, PrefixedIdError, Registry, RegistryError, SnowflakeId,
        WorkerSource,
    };
}

/// The README's Rust blocks, compiled and run as doctests so the front page cannot drift.
#[cfg(all(doctest, feature = "serde", feature = "redis", feature = "public-id", feature = "jiff"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The guides of the repository's `docs/` directory, one module each, rendered here on docs.rs
/// (as jiff renders its own) and compiled and run as doctests like the README's: a guide's
/// Rust cannot drift from the crate. Their links point at the repository's files.
///
/// Start with [`troubleshooting`](guide::troubleshooting) when an error needs explaining,
/// [`kubernetes`](guide::kubernetes) to deploy, [`testing`](guide::testing) to test code that
/// makes IDs, and [`migrating`](guide::migrating) to move a table from `BIGSERIAL` or UUIDs.
// Rendered by `cargo doc` (every guide, whatever the features); compiled as doctests only
// with the features their examples use.
#[cfg(any(
    all(doc, not(doctest)),
    all(
        doctest,
        feature = "serde",
        feature = "redis",
        feature = "lease-redis",
        feature = "lease-postgres",
        feature = "public-id",
        feature = "jiff"
    )
))]
pub mod guide {
    #[doc = include_str!("../docs/troubleshooting.md")]
    pub mod troubleshooting {}
    #[doc = include_str!("../docs/kubernetes.md")]
    pub mod kubernetes {}
    #[doc = include_str!("../docs/testing.md")]
    pub mod testing {}
    #[doc = include_str!("../docs/migrating.md")]
    pub mod migrating {}
    #[doc = include_str!("../docs/generation.md")]
    pub mod generation {}
    #[doc = include_str!("../docs/layouts.md")]
    pub mod layouts {}
    #[doc = include_str!("../docs/dates.md")]
    pub mod dates {}
    #[doc = include_str!("../docs/errors.md")]
    pub mod errors {}
    #[doc = include_str!("../docs/storage.md")]
    pub mod storage {}
    #[doc = include_str!("../docs/redis.md")]
    pub mod redis {}
    #[doc = include_str!("../docs/public-ids.md")]
    pub mod public_ids {}
    #[doc = include_str!("../docs/prefixed-ids.md")]
    pub mod prefixed_ids {}
    #[doc = include_str!("../docs/tracing.md")]
    pub mod tracing {}
    #[doc = include_str!("../docs/lease-rules.md")]
    pub mod lease_rules {}
    #[doc = include_str!("../docs/many-nodes.md")]
    pub mod many_nodes {}
    #[doc = include_str!("../docs/stores.md")]
    pub mod stores {}
    // Compiled as doctests with the two stores' features, ZooKeeper's with TLS.
    #[cfg(any(all(doc, not(doctest)), all(doctest, feature = "lease-etcd", feature = "lease-zookeeper-tls")))]
    #[doc = include_str!("../docs/etcd-zookeeper.md")]
    pub mod etcd_zookeeper {}
    #[doc = include_str!("../docs/cli.md")]
    pub mod cli {}
    #[doc = include_str!("../docs/service.md")]
    pub mod service {}
    #[doc = include_str!("../docs/reliability.md")]
    pub mod reliability {}
}
