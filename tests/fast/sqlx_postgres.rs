//! IDs stored in a real PostgreSQL through sqlx (`DATABASE_URL_PG`; required under CI, skipped visibly elsewhere):
//! round trips, time ranges, `= ANY($1)` with a `Vec` of IDs, and hostile stored values.

use std::future::Future;

use sqlx::postgres::PgPoolOptions;
use sqlx::{AssertSqlSafe, PgPool};
use typed_snowflake::LayoutError;

use crate::servers;
use crate::sqlx_common as common;
use common::{Order, OrderId, SmallId, decode_reason};

/// Runs `body` against a fresh table named after this process and `tag`, and drops the table
/// afterwards, also when `body` fails or panics.
async fn with_table<F, Fut>(tag: &str, body: F) -> Result<(), Box<dyn std::error::Error>>
where
    F: FnOnce(PgPool, String) -> Fut,
    Fut: Future<Output = Result<(), Box<dyn std::error::Error + Send + Sync>>> + Send + 'static,
{
    let Some(url) = servers::pg_url() else { return Ok(()) };
    let pool = PgPoolOptions::new().max_connections(2).connect(&url).await?;
    let table = format!("snowflake_{tag}_{}", std::process::id());
    sqlx::query(AssertSqlSafe(format!("DROP TABLE IF EXISTS {table}"))).execute(&pool).await?;
    sqlx::query(AssertSqlSafe(format!(
        "CREATE TABLE {table} (id BIGINT PRIMARY KEY, parent BIGINT, total_cents BIGINT NOT NULL)"
    )))
    .execute(&pool)
    .await?;
    let outcome = tokio::spawn(body(pool.clone(), table.clone())).await;
    sqlx::query(AssertSqlSafe(format!("DROP TABLE {table}"))).execute(&pool).await?;
    match outcome {
        Ok(result) => result.map_err(|e| e as Box<dyn std::error::Error>),
        Err(join) => std::panic::resume_unwind(join.into_panic()),
    }
}

#[tokio::test]
async fn round_trip_time_range_and_any() -> Result<(), Box<dyn std::error::Error>> {
    with_table("round_trip", |pool, table| async move {
        let ids = OrderId::generate_batch(20)?;
        let (t0, t1) = (ids[0].timestamp_ms(), ids[19].timestamp_ms());
        // One order a minute before the batch, one a minute after: outside the range queried below.
        let before = OrderId::from_parts(t0 - 60_000, 3, 0)?;
        let after = OrderId::from_parts(t1 + 60_000, 3, 0)?;
        for (i, id) in ids.iter().chain([&before, &after]).enumerate() {
            sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id, parent, total_cents) VALUES ($1, $2, $3)")))
                .bind(id)
                .bind((i > 0).then_some(ids[0]))
                .bind(i64::try_from(i)? * 100)
                .execute(&pool)
                .await?;
        }

        let (first,): (OrderId,) = sqlx::query_as(AssertSqlSafe(format!("SELECT id FROM {table} ORDER BY id LIMIT 1")))
            .fetch_one(&pool)
            .await?;
        assert_eq!(first, before);

        let order: Order =
            sqlx::query_as(AssertSqlSafe(format!("SELECT id, parent, total_cents FROM {table} WHERE id = $1")))
                .bind(ids[5])
                .fetch_one(&pool)
                .await?;
        assert_eq!(order, Order { id: ids[5], parent: Some(ids[0]), total_cents: 500 });
        let root: Order = sqlx::query_as(AssertSqlSafe(format!("SELECT * FROM {table} WHERE id = $1")))
            .bind(ids[0])
            .fetch_one(&pool)
            .await?;
        assert_eq!(root.parent, None, "NULL decodes into Option<OrderId> as None");

        let in_range: Vec<OrderId> =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {table} WHERE id BETWEEN $1 AND $2 ORDER BY id")))
                .bind(OrderId::first_at(t0))
                .bind(OrderId::last_at(t1))
                .fetch_all(&pool)
                .await?;
        assert_eq!(in_range, ids);

        // `Vec<OrderId>` and `&[OrderId]` bind as BIGINT[].
        let wanted = vec![ids[3], after, ids[7]];
        let mut found: Vec<OrderId> =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {table} WHERE id = ANY($1)")))
                .bind(&wanted)
                .fetch_all(&pool)
                .await?;
        found.sort();
        assert_eq!(found, [ids[3], ids[7], after]);
        let none: Vec<OrderId> =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {table} WHERE id = ANY($1)")))
                .bind(&[OrderId::first_at(t0 - 1)][..])
                .fetch_all(&pool)
                .await?;
        assert!(none.is_empty());

        // Arrays decode element by element through the same checks.
        let array: Vec<OrderId> = sqlx::query_scalar("SELECT $1::BIGINT[]").bind(&wanted).fetch_one(&pool).await?;
        assert_eq!(array, wanted);
        let bad = sqlx::query_scalar::<_, Vec<OrderId>>("SELECT ARRAY[1, -5]::BIGINT[]")
            .fetch_one(&pool)
            .await
            .expect_err("-5 in an array is not an ID");
        assert!(bad.to_string().contains("not a valid OrderId: -5 is negative"), "{bad}");
        Ok(())
    })
    .await
}

#[tokio::test]
async fn hostile_stored_values_are_errors() -> Result<(), Box<dyn std::error::Error>> {
    with_table("hostile", |pool, table| async move {
        let out_of_small: i64 = 1 << 45;
        sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO {table} (id, parent, total_cents) VALUES (1, -5, 0), (2, $1, 0), (3, NULL, 0), (4, $2, 0)"
        )))
        .bind(out_of_small)
        .bind(i64::MIN)
        .execute(&pool)
        .await?;
        let select = format!("SELECT parent FROM {table} WHERE id = $1");

        let negative = sqlx::query_scalar::<_, OrderId>(AssertSqlSafe(select.as_str()))
            .bind(1)
            .fetch_one(&pool)
            .await
            .expect_err("-5");
        assert_eq!(decode_reason(&negative), Some(("OrderId", LayoutError::Negative { value: -5 })));
        let message = negative.to_string();
        assert!(message.contains("not a valid OrderId") && message.contains("-5 is negative"), "{message}");

        let min = sqlx::query_scalar::<_, OrderId>(AssertSqlSafe(select.as_str()))
            .bind(4)
            .fetch_one(&pool)
            .await
            .expect_err("i64::MIN");
        assert_eq!(decode_reason(&min), Some(("OrderId", LayoutError::Negative { value: i64::MIN })));

        let wide = sqlx::query_scalar::<_, SmallId>(AssertSqlSafe(select.as_str()))
            .bind(2)
            .fetch_one(&pool)
            .await
            .expect_err("2^45");
        assert_eq!(decode_reason(&wide), Some(("SmallId", LayoutError::OutOfLayout { value: 1 << 45, used_bits: 39 })));
        assert!(wide.to_string().contains("above the layout's 39 bits"), "{wide}");

        let null = sqlx::query_scalar::<_, OrderId>(AssertSqlSafe(select.as_str()))
            .bind(3)
            .fetch_one(&pool)
            .await
            .expect_err("NULL");
        assert!(null.to_string().contains("unexpected null"), "{null}");
        let none: Option<OrderId> = sqlx::query_scalar(AssertSqlSafe(select.as_str())).bind(3).fetch_one(&pool).await?;
        assert_eq!(none, None);

        // A column of another type is a type mismatch, not a guess.
        let text = sqlx::query_scalar::<_, OrderId>("SELECT '12345'::TEXT").fetch_one(&pool).await.expect_err("text");
        assert!(matches!(text, sqlx::Error::ColumnDecode { .. }), "{text:?}");
        Ok(())
    })
    .await
}

/// Discord's 64-bit layout over `u64`.
#[derive(typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(preset = "discord")]
struct MessageId(u64);

#[tokio::test]
async fn a_64_bit_type_is_stored_below_2_63_and_refused_above() -> Result<(), Box<dyn std::error::Error>> {
    with_table("discord", |pool, table| async move {
        let documented = MessageId::try_from(175_928_847_299_117_063_u64)?;
        sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id, total_cents) VALUES ($1, 0)")))
            .bind(documented)
            .execute(&pool)
            .await?;
        let back: MessageId =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {table}"))).fetch_one(&pool).await?;
        assert_eq!(back, documented);
        let high = MessageId::try_from(u64::MAX)?;
        let err = sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id, total_cents) VALUES ($1, 0)")))
            .bind(high)
            .execute(&pool)
            .await
            .expect_err("no BIGINT holds 2^64 - 1 in order");
        assert!(err.to_string().contains("MessageId 18446744073709551615 does not fit in a BIGINT"), "{err}");
        // A negative BIGINT (what a bit-pattern cast would have stored) is no ID.
        sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id, total_cents) VALUES (-1, 0)")))
            .execute(&pool)
            .await?;
        let refused = sqlx::query_scalar::<_, MessageId>(AssertSqlSafe(format!("SELECT id FROM {table} WHERE id < 0")))
            .fetch_one(&pool)
            .await
            .expect_err("-1 is no MessageId");
        assert_eq!(decode_reason(&refused), Some(("MessageId", LayoutError::Negative { value: -1 })), "{refused}");
        Ok(())
    })
    .await
}

/// A prefixed type (`ord_…` as text).
#[derive(typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Eq)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(prefix = "ord")]
struct PrefixedOrderId(i64);

#[tokio::test]
async fn a_prefixed_type_still_stores_the_bigint() -> Result<(), Box<dyn std::error::Error>> {
    with_table("prefixed", |pool, table| async move {
        let id = PrefixedOrderId::from_parts(1_700_000_000_000, 3, 7)?;
        assert!(id.to_string().starts_with("ord_"));
        sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id, total_cents) VALUES ($1, 0)")))
            .bind(id)
            .execute(&pool)
            .await?;
        // The column holds the integer, as BIGINT, and reads back as the type.
        let (raw, kind): (i64, String) =
            sqlx::query_as(AssertSqlSafe(format!("SELECT id, pg_typeof(id)::text FROM {table}")))
                .fetch_one(&pool)
                .await?;
        assert_eq!((raw, kind.as_str()), (id.get(), "bigint"));
        let back: PrefixedOrderId = sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {table} WHERE id = $1")))
            .bind(id)
            .fetch_one(&pool)
            .await?;
        assert!(back == id);
        Ok(())
    })
    .await
}
