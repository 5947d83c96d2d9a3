//! A typed Rust client of `snowflake serve`'s gRPC API (`snowflake.v1.Snowflake`), without the
//! server: IDs come back as your own `#[derive(SnowflakeId)]` types.
//!
//! ```no_run
//! use snowflake_client::SnowflakeClient;
//! use typed_snowflake::SnowflakeId;
//!
//! #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
//! #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
//! pub struct OrderId(i64);
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // snowflake serve --id order=time=42,worker=5,seq=16,epoch=2021-05-05 --listen 127.0.0.1:8080
//! let client = SnowflakeClient::connect("http://127.0.0.1:8080").await?;
//! let order: OrderId = client.issue::<OrderId>().await?;
//! let batch: Vec<OrderId> = client.issue_batch::<OrderId>(1000).await?;
//! assert!(batch[0] > order);
//! # Ok(()) }
//! ```
//!
//! # Typed calls, checked once
//!
//! [`SnowflakeClient::issue`], [`SnowflakeClient::issue_batch`] and
//! [`SnowflakeClient::issue_stream`] ask the server for the type it serves under the Rust
//! type's name ([`type_name`]: `OrderId` → `order`; another name with
//! [`SnowflakeClient::set_name`]). The first typed call for a type reads the server's
//! `ListTypes` and compares the server's layout for that name with the type's own
//! [`SnowflakeId::LAYOUT`]: when they differ the call is refused with
//! [`Error::LayoutMismatch`], which shows both layouts, since the server's IDs would decode to
//! other times, workers and sequences than they were issued with. A layout found equal is
//! remembered for the client (and its clones); a refusal is checked again at the next call.
//!
//! # Connecting
//!
//! [`SnowflakeClient::connect`] takes `http://host:port` for plain text (HTTP/2 without TLS)
//! and `https://host:port` for TLS. For a CA of your own, and for client certificates (mTLS,
//! the server's `--tls-client-ca`), use [`SnowflakeClient::builder`]:
//!
//! ```no_run
//! use snowflake_client::SnowflakeClient;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = SnowflakeClient::builder("https://ids.internal:8443")
//!     .ca_certificate_file("ca.pem")
//!     .identity_files("client.pem", "client.key")
//!     .connect()
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! # Retries
//!
//! A call refused with `UNAVAILABLE` (the server has no worker ID yet, its lease is fenced,
//! it is shutting down, or it cannot be reached), or whose connection closed under it, is sent
//! again after the seconds the server gives in its `retry-after` metadata, or after a short
//! backoff when it gives none, within
//! a [`RetryPolicy`]: by default up to 5 attempts and 10 s of waiting in all. Every other
//! refusal (an unknown type, a bad count) is returned at once. Reissuing is safe: an ID that
//! a lost answer carried is never issued again, and nothing else is lost.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! | --- | --- | --- |
//! | `tls` | on | `https://` URLs, a CA of your own and client certificates (rustls with ring) |
//! | `tls-native-roots` | off | `https://` without a CA of your own: the system's trusted roots |
//!
//! Its dependencies are tonic's client (hyper's client, h2, tower), prost, tokio's timer and
//! `snowflake-types`; no server, no protobuf compiler (the generated code is checked in, see
//! [`pb`]), no metrics exporter.
#![forbid(unsafe_code)]

mod builder;
mod client;
mod error;
mod retry;
mod stream;
mod typed;

pub use builder::ClientBuilder;
pub use client::SnowflakeClient;
pub use error::Error;
pub use retry::RetryPolicy;
pub use snowflake_types::{Layout, SnowflakeId};
pub use stream::IdStream;
pub use typed::type_name;

/// The messages and the generated client of `snowflake/v1/snowflake.proto`, as
/// `tonic-prost-build` writes them (checked in; `tests/client/generated.rs` checks that they are
/// what the `.proto` gives). The untyped calls of [`SnowflakeClient`] answer with these
/// messages; [`SnowflakeClient::raw`] gives the generated client itself.
///
/// ```
/// use snowflake_client::pb::{DecodeRequest, decode_request::Id};
///
/// let request = DecodeRequest { r#type: "order".into(), id: Some(Id::Text("ord_1fvpp347wxqzz".into())) };
/// assert_eq!(request.r#type, "order");
/// ```
#[allow(missing_docs, unused_qualifications, clippy::all, clippy::pedantic)]
pub mod pb {
    include!("generated/snowflake.v1.rs");
}
