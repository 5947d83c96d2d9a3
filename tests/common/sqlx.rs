//! What the sqlx test files share: the ID types (those of `ids.rs`, its sibling module), a row
//! type, and how to read a decode error's reason. Declared once by `tests/fast/main.rs`, under
//! the sqlx features.

use typed_snowflake::{DecodeIdError, LayoutError};

pub use super::ids::{OrderId, SmallId};

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
