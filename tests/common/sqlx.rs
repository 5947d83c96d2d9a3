//! What the sqlx test files share: the ID types, a row type, and how to read a decode
//! error's reason. Included by each with `#[path]`, so each compiles only with its feature.

use typed_snowflake::{DecodeIdError, LayoutError, SnowflakeId};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
pub struct OrderId(i64);

/// A small layout (39 bits), so a stored `BIGINT` can set bits above it.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 31, worker = 2, seq = 6, epoch = "2024-01-01", unit = "1s")]
pub struct SmallId(u64);

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
