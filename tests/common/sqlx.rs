//! What the sqlx test files share: the ID types (those of `ids.rs`), a row type, and how to
//! read a decode error's reason. Included by each with `#[path]`, so each compiles only with
//! its feature.

use typed_snowflake::{DecodeIdError, LayoutError};

#[path = "ids.rs"]
mod ids;
pub use ids::{OrderId, SmallId};

#[derive(sqlx::FromRow, Debug, PartialEq)]
pub struct Order {
    pub id: OrderId,
    pub parent: Option<OrderId>,
    pub total_cents: i64,
}

/// The layout's reason inside sqlx's `ColumnDecode` error.
pub fn decode_reason(error: &sqlx::Error) -> Option<(&'static str, LayoutError)> {
    match error {
        sqlx::Error::ColumnDecode { source, .. } => {
            source.downcast_ref::<DecodeIdError>().map(|e| (e.type_name(), *e.reason()))
        }
        _ => None,
    }
}
