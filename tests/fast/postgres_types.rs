//! IDs in a real PostgreSQL through tokio-postgres (`DATABASE_URL_PG`; required under CI,
//! skipped visibly elsewhere): round trip, a time range, arrays, and hostile stored values.

use tokio_postgres::NoTls;

use crate::ids;
use crate::servers;
use ids::{ABOVE_SMALL, OrderId, SmallId, chain, decode_reason, expected_reasons};

#[tokio::test]
async fn round_trip_range_and_hostile_values() -> Result<(), Box<dyn std::error::Error>> {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    let (client, connection) = tokio_postgres::connect(&url, NoTls).await?;
    let driver = tokio::spawn(connection);
    // A temporary table: private to this connection, dropped with it.
    client.batch_execute("CREATE TEMPORARY TABLE snowflake_orders (id BIGINT PRIMARY KEY, parent BIGINT)").await?;

    let ids = OrderId::generate_batch(10)?;
    let (t0, t1) = (ids[0].timestamp_ms(), ids[9].timestamp_ms());
    let outside = [OrderId::from_parts(t0 - 60_000, 1, 0)?, OrderId::from_parts(t1 + 60_000, 1, 0)?];
    for id in ids.iter().chain(&outside) {
        client.execute("INSERT INTO snowflake_orders (id, parent) VALUES ($1, $2)", &[id, &Some(ids[0])]).await?;
    }
    let row = client.query_one("SELECT id, parent FROM snowflake_orders WHERE id = $1", &[&ids[4]]).await?;
    assert_eq!((row.try_get::<_, OrderId>(0)?, row.try_get::<_, Option<OrderId>>(1)?), (ids[4], Some(ids[0])));
    let rows = client
        .query(
            "SELECT id FROM snowflake_orders WHERE id BETWEEN $1 AND $2 ORDER BY id",
            &[&OrderId::first_at(t0), &OrderId::last_at(t1)],
        )
        .await?;
    let in_range = rows.iter().map(|row| row.try_get(0)).collect::<Result<Vec<OrderId>, _>>()?;
    assert_eq!(in_range, ids);
    let wanted = vec![ids[2], ids[3]];
    let rows = client.query("SELECT id FROM snowflake_orders WHERE id = ANY($1) ORDER BY id", &[&wanted]).await?;
    assert_eq!(rows.iter().map(|row| row.try_get(0)).collect::<Result<Vec<OrderId>, _>>()?, wanted);

    // Hostile stored values: each an error naming the type and the reason.
    client
        .execute(
            "INSERT INTO snowflake_orders (id, parent) VALUES (1, -5), (2, $1), (3, $2), (4, NULL)",
            &[&i64::MIN, &ABOVE_SMALL],
        )
        .await?;
    let parent = |id: i64| {
        let client = &client;
        async move { client.query_one("SELECT parent FROM snowflake_orders WHERE id = $1", &[&id]).await }
    };
    let [negative, min, wide] = expected_reasons();
    let e = parent(1).await?.try_get::<_, OrderId>(0).expect_err("-5");
    assert_eq!(decode_reason(&e), Some(negative), "{e}");
    assert!(chain(&e).contains("not a valid OrderId: -5 is negative"), "{}", chain(&e));
    let e = parent(2).await?.try_get::<_, OrderId>(0).expect_err("i64::MIN");
    assert_eq!(decode_reason(&e), Some(min), "{e}");
    let e = parent(3).await?.try_get::<_, SmallId>(0).expect_err("2^45");
    assert_eq!(decode_reason(&e), Some(wide), "{e}");
    let e = parent(4).await?.try_get::<_, OrderId>(0).expect_err("NULL for a non-Option");
    assert!(chain(&e).contains("was `NULL`"), "{}", chain(&e));
    assert_eq!(parent(4).await?.try_get::<_, Option<OrderId>>(0)?, None);
    let array = client.query_one("SELECT ARRAY[1, -5]::BIGINT[]", &[]).await?;
    let e = array.try_get::<_, Vec<OrderId>>(0).expect_err("-5 in an array");
    assert_eq!(decode_reason(&e), Some(negative), "{e}");
    // Other column types are refused by `accepts`, as for i64.
    let text = client.query_one("SELECT '12345'::TEXT, 12345::INT4", &[]).await?;
    assert!(text.try_get::<_, OrderId>(0).is_err() && text.try_get::<_, OrderId>(1).is_err());
    // Bound in the wrong place, an ID is refused before it is sent.
    let e = client.query_one("SELECT $1::TEXT", &[&ids[0]]).await.expect_err("an ID bound as TEXT");
    assert!(chain(&e).contains("cannot convert"), "{}", chain(&e));

    drop(client);
    driver.await??;
    Ok(())
}
