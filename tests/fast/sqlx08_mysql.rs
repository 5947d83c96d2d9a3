//! IDs stored in a real MySQL/MariaDB through sqlx 0.8 (`DATABASE_URL_MYSQL`; required under
//! CI, skipped visibly elsewhere): round trip, a time range, `BIGINT UNSIGNED`, and hostile
//! stored values.

use sqlx::Row;
use sqlx::mysql::MySqlPoolOptions;
use sqlx08 as sqlx;
use typed_snowflake::LayoutError;

use crate::ids;
use crate::servers;
use ids::{ABOVE_SMALL, OrderId, SmallId, decode_reason, expected_reasons};

#[tokio::test]
async fn round_trip_range_and_hostile_values() -> Result<(), Box<dyn std::error::Error>> {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    let pool = MySqlPoolOptions::new().max_connections(1).connect(&url).await?;
    let table = format!("snowflake_sqlx08_{}", std::process::id());
    sqlx::query(&format!("DROP TABLE IF EXISTS {table}")).execute(&pool).await?;
    sqlx::query(&format!(
        "CREATE TABLE {table} (id BIGINT PRIMARY KEY, parent BIGINT, unsigned_parent BIGINT UNSIGNED)"
    ))
    .execute(&pool)
    .await?;
    let outcome = body(&pool, &table).await;
    sqlx::query(&format!("DROP TABLE {table}")).execute(&pool).await?;
    outcome
}

async fn body(pool: &sqlx::MySqlPool, table: &str) -> Result<(), Box<dyn std::error::Error>> {
    let ids = OrderId::generate_batch(10)?;
    let (t0, t1) = (ids[0].timestamp_ms(), ids[9].timestamp_ms());
    let outside = [OrderId::from_parts(t0 - 60_000, 1, 0)?, OrderId::from_parts(t1 + 60_000, 1, 0)?];
    let insert = format!("INSERT INTO {table} (id, parent, unsigned_parent) VALUES (?, ?, ?)");
    for id in ids.iter().chain(&outside) {
        sqlx::query(&insert).bind(id).bind(Some(ids[0])).bind(ids[1].get().cast_unsigned()).execute(pool).await?;
    }
    let (back, parent, unsigned): (OrderId, Option<OrderId>, OrderId) =
        sqlx::query_as(&format!("SELECT id, parent, unsigned_parent FROM {table} WHERE id = ?"))
            .bind(ids[4])
            .fetch_one(pool)
            .await?;
    assert_eq!((back, parent, unsigned), (ids[4], Some(ids[0]), ids[1]));
    let in_range: Vec<OrderId> =
        sqlx::query_scalar(&format!("SELECT id FROM {table} WHERE id BETWEEN ? AND ? ORDER BY id"))
            .bind(OrderId::first_at(t0))
            .bind(OrderId::last_at(t1))
            .fetch_all(pool)
            .await?;
    assert_eq!(in_range, ids);

    // Hostile stored values: each a decode error naming the type and the reason.
    sqlx::query(&format!(
        "INSERT INTO {table} (id, parent, unsigned_parent) VALUES (1, -5, NULL), (2, ?, NULL), (3, ?, NULL), (4, NULL, 9223372036854775808)"
    ))
    .bind(i64::MIN)
    .bind(ABOVE_SMALL)
    .execute(pool)
    .await?;
    let select = format!("SELECT parent FROM {table} WHERE id = ?");
    let [negative, min, wide] = expected_reasons();
    let e = sqlx::query_scalar::<_, OrderId>(&select).bind(1).fetch_one(pool).await.expect_err("-5");
    assert_eq!(decode_reason(&e), Some(negative), "{e}");
    assert!(e.to_string().contains("not a valid OrderId: -5 is negative"), "{e}");
    let e = sqlx::query_scalar::<_, OrderId>(&select).bind(2).fetch_one(pool).await.expect_err("i64::MIN");
    assert_eq!(decode_reason(&e), Some(min), "{e}");
    let e = sqlx::query_scalar::<_, SmallId>(&select).bind(3).fetch_one(pool).await.expect_err("2^45");
    assert_eq!(decode_reason(&e), Some(wide), "{e}");
    let e = sqlx::query_scalar::<_, OrderId>(&select).bind(4).fetch_one(pool).await.expect_err("NULL");
    assert!(e.to_string().contains("unexpected null"), "{e}");
    let none: Option<OrderId> = sqlx::query_scalar(&select).bind(4).fetch_one(pool).await?;
    assert_eq!(none, None);
    // BIGINT UNSIGNED at 2^63: out of layout, never a negative number; the text protocol too.
    let top = (LayoutError::OutOfLayout { value: 1 << 63, used_bits: 63 }, "2^63");
    let unsigned = format!("SELECT unsigned_parent FROM {table} WHERE id = ?");
    let e = sqlx::query_scalar::<_, OrderId>(&unsigned).bind(4).fetch_one(pool).await.expect_err(top.1);
    assert_eq!(decode_reason(&e), Some(("OrderId", top.0)), "{e}");
    let row = sqlx::raw_sql(&format!("SELECT unsigned_parent FROM {table} WHERE id = 4")).fetch_one(pool).await?;
    let e = row.try_get::<OrderId, _>(0).expect_err(top.1);
    assert_eq!(decode_reason(&e), Some(("OrderId", top.0)), "{e}");
    let e = sqlx::query_scalar::<_, OrderId>("SELECT CAST(12345 AS CHAR)").fetch_one(pool).await.expect_err("text");
    assert!(matches!(e, sqlx::Error::ColumnDecode { .. }), "{e:?}");
    Ok(())
}
