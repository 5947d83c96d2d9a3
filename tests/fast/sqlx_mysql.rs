//! IDs stored in a real MySQL/MariaDB through sqlx (`DATABASE_URL_MYSQL`; required under CI, skipped visibly elsewhere):
//! round trips, time ranges, `BIGINT UNSIGNED` columns, and hostile stored values.

use std::future::Future;

use sqlx::mysql::MySqlPoolOptions;
use sqlx::{AssertSqlSafe, MySqlPool, Row};
use typed_snowflake::LayoutError;

use crate::servers;
use crate::sqlx_common as common;
use common::{Order, OrderId, SmallId, decode_reason};

/// Runs `body` against a fresh table named after this process and `tag`, and drops the table
/// afterwards, also when `body` fails or panics.
async fn with_table<F, Fut>(tag: &str, body: F) -> Result<(), Box<dyn std::error::Error>>
where
    F: FnOnce(MySqlPool, String) -> Fut,
    Fut: Future<Output = Result<(), Box<dyn std::error::Error + Send + Sync>>> + Send + 'static,
{
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    let pool = MySqlPoolOptions::new().max_connections(2).connect(&url).await?;
    let table = format!("snowflake_{tag}_{}", std::process::id());
    sqlx::query(AssertSqlSafe(format!("DROP TABLE IF EXISTS {table}"))).execute(&pool).await?;
    sqlx::query(AssertSqlSafe(format!("CREATE TABLE {table} (id BIGINT PRIMARY KEY, parent BIGINT, total_cents BIGINT NOT NULL, unsigned_parent BIGINT UNSIGNED)")))
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
async fn round_trip_and_time_range() -> Result<(), Box<dyn std::error::Error>> {
    with_table("round_trip", |pool, table| async move {
        let ids = OrderId::generate_batch(20)?;
        let (t0, t1) = (ids[0].timestamp_ms(), ids[19].timestamp_ms());
        // One order a minute before the batch, one a minute after: outside the range queried below.
        let before = OrderId::from_parts(t0 - 60_000, 3, 0)?;
        let after = OrderId::from_parts(t1 + 60_000, 3, 0)?;
        for (i, id) in ids.iter().chain([&before, &after]).enumerate() {
            sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id, parent, total_cents) VALUES (?, ?, ?)")))
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
            sqlx::query_as(AssertSqlSafe(format!("SELECT id, parent, total_cents FROM {table} WHERE id = ?")))
                .bind(ids[5])
                .fetch_one(&pool)
                .await?;
        assert_eq!(order, Order { id: ids[5], parent: Some(ids[0]), total_cents: 500 });
        let root: Order = sqlx::query_as(AssertSqlSafe(format!("SELECT * FROM {table} WHERE id = ?")))
            .bind(ids[0])
            .fetch_one(&pool)
            .await?;
        assert_eq!(root.parent, None, "NULL decodes into Option<OrderId> as None");

        let in_range: Vec<OrderId> =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT id FROM {table} WHERE id BETWEEN ? AND ? ORDER BY id")))
                .bind(OrderId::first_at(t0))
                .bind(OrderId::last_at(t1))
                .fetch_all(&pool)
                .await?;
        assert_eq!(in_range, ids);

        // The same, through the text protocol (`raw_sql`: no prepared statement, values as text).
        let rows = sqlx::raw_sql(AssertSqlSafe(format!(
            "SELECT id FROM {table} WHERE id BETWEEN {} AND {} ORDER BY id",
            OrderId::first_at(t0),
            OrderId::last_at(t1)
        )))
        .fetch_all(&pool)
        .await?;
        let text_protocol = rows.iter().map(|row| row.try_get(0)).collect::<Result<Vec<OrderId>, _>>()?;
        assert_eq!(text_protocol, ids);

        // BIGINT UNSIGNED columns hold IDs too.
        sqlx::query(AssertSqlSafe(format!("UPDATE {table} SET unsigned_parent = ? WHERE id = ?")))
            .bind(ids[1])
            .bind(ids[2])
            .execute(&pool)
            .await?;
        let unsigned: (OrderId, Option<OrderId>) =
            sqlx::query_as(AssertSqlSafe(format!("SELECT id, unsigned_parent FROM {table} WHERE id = ?")))
                .bind(ids[2])
                .fetch_one(&pool)
                .await?;
        assert_eq!(unsigned, (ids[2], Some(ids[1])));
        Ok(())
    })
    .await
}

#[tokio::test]
async fn hostile_stored_values_are_errors() -> Result<(), Box<dyn std::error::Error>> {
    with_table("hostile", |pool, table| async move {
        let out_of_small: i64 = 1 << 45;
        sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO {table} (id, parent, total_cents) VALUES (1, -5, 0), (2, ?, 0), (3, NULL, 0), (4, ?, 0)"
        )))
        .bind(out_of_small)
        .bind(i64::MIN)
        .execute(&pool)
        .await?;
        let select = format!("SELECT parent FROM {table} WHERE id = ?");

        let negative = sqlx::query_scalar::<_, OrderId>(AssertSqlSafe(select.as_str())).bind(1).fetch_one(&pool).await.expect_err("-5");
        assert_eq!(decode_reason(&negative), Some(("OrderId", LayoutError::Negative { value: -5 })));
        let message = negative.to_string();
        assert!(message.contains("not a valid OrderId") && message.contains("-5 is negative"), "{message}");

        let min = sqlx::query_scalar::<_, OrderId>(AssertSqlSafe(select.as_str())).bind(4).fetch_one(&pool).await.expect_err("i64::MIN");
        assert_eq!(decode_reason(&min), Some(("OrderId", LayoutError::Negative { value: i64::MIN })));

        let wide = sqlx::query_scalar::<_, SmallId>(AssertSqlSafe(select.as_str())).bind(2).fetch_one(&pool).await.expect_err("2^45");
        assert_eq!(
            decode_reason(&wide),
            Some(("SmallId", LayoutError::OutOfLayout { value: 1 << 45, used_bits: 39 }))
        );
        assert!(wide.to_string().contains("above the layout's 39 bits"), "{wide}");

        let null = sqlx::query_scalar::<_, OrderId>(AssertSqlSafe(select.as_str())).bind(3).fetch_one(&pool).await.expect_err("NULL");
        assert!(null.to_string().contains("unexpected null"), "{null}");
        let none: Option<OrderId> = sqlx::query_scalar(AssertSqlSafe(select.as_str())).bind(3).fetch_one(&pool).await?;
        assert_eq!(none, None);

        // The text protocol (no bound arguments) checks the same way.
        let row = sqlx::raw_sql(AssertSqlSafe(format!("SELECT parent FROM {table} WHERE id = 1"))).fetch_one(&pool).await?;
        let text_protocol = row.try_get::<OrderId, _>(0).expect_err("-5 over the text protocol");
        assert_eq!(decode_reason(&text_protocol), Some(("OrderId", LayoutError::Negative { value: -5 })));

        // BIGINT UNSIGNED: 2^63 and above fit the column but no ID; they are out of layout, never negative.
        sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO {table} (id, total_cents, unsigned_parent) VALUES (5, 0, 9223372036854775808), (6, 0, 18446744073709551615), (7, 0, ?)"
        )))
        .bind(1_u64 << 45)
        .execute(&pool)
        .await?;
        let unsigned = format!("SELECT unsigned_parent FROM {table} WHERE id = ?");
        let top = sqlx::query_scalar::<_, OrderId>(AssertSqlSafe(unsigned.as_str())).bind(5).fetch_one(&pool).await.expect_err("2^63");
        assert_eq!(decode_reason(&top), Some(("OrderId", LayoutError::OutOfLayout { value: 1 << 63, used_bits: 63 })));
        let max = sqlx::query_scalar::<_, OrderId>(AssertSqlSafe(unsigned.as_str())).bind(6).fetch_one(&pool).await.expect_err("u64::MAX");
        assert_eq!(decode_reason(&max), Some(("OrderId", LayoutError::OutOfLayout { value: u64::MAX, used_bits: 63 })));
        let small = sqlx::query_scalar::<_, SmallId>(AssertSqlSafe(unsigned.as_str())).bind(7).fetch_one(&pool).await.expect_err("2^45");
        assert_eq!(decode_reason(&small), Some(("SmallId", LayoutError::OutOfLayout { value: 1 << 45, used_bits: 39 })));
        let fits: OrderId = sqlx::query_scalar(AssertSqlSafe(unsigned.as_str())).bind(7).fetch_one(&pool).await?;
        assert_eq!(fits.get(), 1 << 45);
        let row = sqlx::raw_sql(AssertSqlSafe(format!("SELECT unsigned_parent FROM {table} WHERE id = 5")))
            .fetch_one(&pool)
            .await?;
        let top_text = row.try_get::<OrderId, _>(0).expect_err("2^63 over the text protocol");
        assert_eq!(decode_reason(&top_text), Some(("OrderId", LayoutError::OutOfLayout { value: 1 << 63, used_bits: 63 })));

        // A column of another type is a type mismatch, not a guess.
        let text = sqlx::query_scalar::<_, OrderId>("SELECT CAST(12345 AS CHAR)").fetch_one(&pool).await.expect_err("text");
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
async fn a_64_bit_type_reads_unsigned_values_above_2_63_and_refuses_to_bind_them()
-> Result<(), Box<dyn std::error::Error>> {
    with_table("discord", |pool, table| async move {
        // Written as a plain u64 (as another service storing Discord IDs would), read as an ID.
        let high = (1_u64 << 63) | 175_928_847_299_117_063;
        sqlx::query(AssertSqlSafe(format!("INSERT INTO {table} (id, total_cents, unsigned_parent) VALUES (1, 0, ?)")))
            .bind(high)
            .execute(&pool)
            .await?;
        let back: MessageId =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT unsigned_parent FROM {table}"))).fetch_one(&pool).await?;
        assert_eq!(back, MessageId::try_from(high)?);
        assert_eq!(back.to_string(), high.to_string());
        // Binding it would have to go through a signed BIGINT: refused, naming the type.
        let err = sqlx::query(AssertSqlSafe(format!("UPDATE {table} SET unsigned_parent = ?")))
            .bind(back)
            .execute(&pool)
            .await
            .expect_err("no signed BIGINT holds 2^63 in order");
        assert!(err.to_string().contains("MessageId 9399300884153892871 does not fit in a BIGINT"), "{err}");
        // Below 2^63 it is stored as usual.
        let documented = MessageId::try_from(175_928_847_299_117_063_u64)?;
        sqlx::query(AssertSqlSafe(format!("UPDATE {table} SET parent = ?"))).bind(documented).execute(&pool).await?;
        let parent: MessageId =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT parent FROM {table}"))).fetch_one(&pool).await?;
        assert_eq!(parent, documented);
        Ok(())
    })
    .await
}
