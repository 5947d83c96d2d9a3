//! IDs stored in a real PostgreSQL through sqlx 0.8 (`DATABASE_URL_PG`; required under CI,
//! skipped visibly elsewhere): round trip, a time range, arrays, and hostile stored values.

use sqlx::postgres::PgPoolOptions;
use sqlx08 as sqlx;

use crate::ids;
use crate::servers;
use ids::{ABOVE_SMALL, OrderId, SmallId, decode_reason, expected_reasons};

#[tokio::test]
async fn round_trip_range_and_hostile_values() -> Result<(), Box<dyn std::error::Error>> {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    let pool = PgPoolOptions::new().max_connections(1).connect(&url).await?;
    let table = format!("snowflake_sqlx08_{}", std::process::id());
    sqlx::query(&format!("DROP TABLE IF EXISTS {table}")).execute(&pool).await?;
    sqlx::query(&format!("CREATE TABLE {table} (id BIGINT PRIMARY KEY, parent BIGINT)")).execute(&pool).await?;
    let outcome = body(&pool, &table).await;
    sqlx::query(&format!("DROP TABLE {table}")).execute(&pool).await?;
    outcome
}

async fn body(pool: &sqlx::PgPool, table: &str) -> Result<(), Box<dyn std::error::Error>> {
    let ids = OrderId::generate_batch(10)?;
    let (t0, t1) = (ids[0].timestamp_ms(), ids[9].timestamp_ms());
    let outside = [OrderId::from_parts(t0 - 60_000, 1, 0)?, OrderId::from_parts(t1 + 60_000, 1, 0)?];
    let insert = format!("INSERT INTO {table} (id, parent) VALUES ($1, $2)");
    for id in ids.iter().chain(&outside) {
        sqlx::query(&insert).bind(id).bind(Some(ids[0])).execute(pool).await?;
    }
    let (back, parent): (OrderId, Option<OrderId>) =
        sqlx::query_as(&format!("SELECT id, parent FROM {table} WHERE id = $1")).bind(ids[4]).fetch_one(pool).await?;
    assert_eq!((back, parent), (ids[4], Some(ids[0])));
    let in_range: Vec<OrderId> =
        sqlx::query_scalar(&format!("SELECT id FROM {table} WHERE id BETWEEN $1 AND $2 ORDER BY id"))
            .bind(OrderId::first_at(t0))
            .bind(OrderId::last_at(t1))
            .fetch_all(pool)
            .await?;
    assert_eq!(in_range, ids);
    let any: Vec<OrderId> = sqlx::query_scalar(&format!("SELECT id FROM {table} WHERE id = ANY($1) ORDER BY id"))
        .bind(&ids[2..4])
        .fetch_all(pool)
        .await?;
    assert_eq!(any, ids[2..4]);

    // Hostile stored values: each a decode error naming the type and the reason.
    sqlx::query(&format!("INSERT INTO {table} (id, parent) VALUES (1, -5), (2, $1), (3, $2), (4, NULL)"))
        .bind(i64::MIN)
        .bind(ABOVE_SMALL)
        .execute(pool)
        .await?;
    let select = format!("SELECT parent FROM {table} WHERE id = $1");
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
    let e = sqlx::query_scalar::<_, Vec<OrderId>>("SELECT ARRAY[1, -5]::BIGINT[]")
        .fetch_one(pool)
        .await
        .expect_err("array");
    assert_eq!(decode_reason(&e), Some(negative), "{e}");
    let e = sqlx::query_scalar::<_, OrderId>("SELECT '12345'::TEXT").fetch_one(pool).await.expect_err("text");
    assert!(matches!(e, sqlx::Error::ColumnDecode { .. }), "{e:?}");
    Ok(())
}
