//! IDs stored in SQLite (in memory) through sqlx: round trips, time-range queries, and
//! hostile stored values that must decode to errors naming the problem.

use sqlx::{Connection, SqliteConnection};
use typed_snowflake::LayoutError;

use crate::sqlx_common as common;
use common::{Order, OrderId, SmallId, decode_reason};

async fn connect() -> Result<SqliteConnection, sqlx::Error> {
    let mut conn = SqliteConnection::connect("sqlite::memory:").await?;
    sqlx::query("CREATE TABLE orders (id INTEGER PRIMARY KEY, parent INTEGER, total_cents INTEGER NOT NULL)")
        .execute(&mut conn)
        .await?;
    Ok(conn)
}

#[tokio::test]
async fn round_trip_and_time_range() -> Result<(), Box<dyn std::error::Error>> {
    let mut conn = connect().await?;
    let ids = OrderId::generate_batch(20)?;
    let (t0, t1) = (ids[0].timestamp_ms(), ids[19].timestamp_ms());
    // One order a minute before the batch, one a minute after: outside the range queried below.
    let before = OrderId::from_parts(t0 - 60_000, 3, 0)?;
    let after = OrderId::from_parts(t1 + 60_000, 3, 0)?;
    for (i, id) in ids.iter().chain([&before, &after]).enumerate() {
        sqlx::query("INSERT INTO orders (id, parent, total_cents) VALUES (?, ?, ?)")
            .bind(id)
            .bind((i > 0).then_some(ids[0]))
            .bind(i64::try_from(i)? * 100)
            .execute(&mut conn)
            .await?;
    }

    let (first,): (OrderId,) = sqlx::query_as("SELECT id FROM orders ORDER BY id LIMIT 1").fetch_one(&mut conn).await?;
    assert_eq!(first, before);

    let order: Order = sqlx::query_as("SELECT id, parent, total_cents FROM orders WHERE id = ?")
        .bind(ids[5])
        .fetch_one(&mut conn)
        .await?;
    assert_eq!(order, Order { id: ids[5], parent: Some(ids[0]), total_cents: 500 });
    let root: Order = sqlx::query_as("SELECT * FROM orders WHERE id = ?").bind(ids[0]).fetch_one(&mut conn).await?;
    assert_eq!(root.parent, None, "NULL decodes into Option<OrderId> as None");

    let in_range: Vec<OrderId> = sqlx::query_scalar("SELECT id FROM orders WHERE id BETWEEN ? AND ? ORDER BY id")
        .bind(OrderId::first_at(t0))
        .bind(OrderId::last_at(t1))
        .fetch_all(&mut conn)
        .await?;
    assert_eq!(in_range, ids);

    let max: Option<OrderId> = sqlx::query_scalar("SELECT MAX(id) FROM orders").fetch_one(&mut conn).await?;
    assert_eq!(max, Some(after));
    Ok(())
}

#[tokio::test]
async fn hostile_stored_values_are_errors() -> Result<(), Box<dyn std::error::Error>> {
    let mut conn = connect().await?;
    sqlx::query("CREATE TABLE hostile (k INTEGER PRIMARY KEY, v)").execute(&mut conn).await?;
    let out_of_small: i64 = 1 << 45;
    sqlx::query("INSERT INTO hostile (k, v) VALUES (1, -5), (2, ?), (3, NULL), (4, ?), (5, 'abc'), (6, 12345)")
        .bind(out_of_small)
        .bind(i64::MIN)
        .execute(&mut conn)
        .await?;
    let read = |k: i64| sqlx::query_scalar::<_, OrderId>("SELECT v FROM hostile WHERE k = ?").bind(k);

    let negative = read(1).fetch_one(&mut conn).await.expect_err("-5 is not an ID");
    assert_eq!(decode_reason(&negative), Some(("OrderId", LayoutError::Negative { value: -5 })));
    let sqlx::Error::ColumnDecode { source, .. } = &negative else { panic!("{negative:?}") };
    assert_eq!(
        source.to_string(),
        "the stored value is not a valid OrderId: -5 is negative; a Snowflake ID is a positive i64"
    );

    let min = read(4).fetch_one(&mut conn).await.expect_err("i64::MIN is not an ID");
    assert_eq!(decode_reason(&min), Some(("OrderId", LayoutError::Negative { value: i64::MIN })));

    let wide = sqlx::query_scalar::<_, SmallId>("SELECT v FROM hostile WHERE k = 2")
        .fetch_one(&mut conn)
        .await
        .expect_err("2^45 does not fit a 39-bit layout");
    assert_eq!(decode_reason(&wide), Some(("SmallId", LayoutError::OutOfLayout { value: 1 << 45, used_bits: 39 })));
    assert!(wide.to_string().contains("above the layout's 39 bits"), "{wide}");

    let null = read(3).fetch_one(&mut conn).await.expect_err("NULL is not an OrderId");
    assert!(matches!(null, sqlx::Error::ColumnDecode { .. }), "{null:?}");
    assert!(null.to_string().contains("unexpected null"), "{null}");
    let none: Option<OrderId> = sqlx::query_scalar("SELECT v FROM hostile WHERE k = 3").fetch_one(&mut conn).await?;
    assert_eq!(none, None);

    let text = read(5).fetch_one(&mut conn).await.expect_err("text is not an ID");
    assert!(matches!(text, sqlx::Error::ColumnDecode { .. }), "{text:?}");
    assert!(text.to_string().contains("TEXT"), "{text}");
    // Decoding without sqlx's type check still refuses text: SQLite would read 'abc' as 0.
    let row = sqlx::query("SELECT v FROM hostile WHERE k = 5").fetch_one(&mut conn).await?;
    let unchecked = sqlx::Row::try_get_unchecked::<OrderId, _>(&row, 0).expect_err("text is not an ID");
    assert!(unchecked.to_string().contains("not a valid OrderId: it is TEXT, not INTEGER"), "{unchecked}");
    let real = sqlx::query_scalar::<_, OrderId>("SELECT 1.5").fetch_one(&mut conn).await.expect_err("1.5 is not an ID");
    assert!(matches!(real, sqlx::Error::ColumnDecode { .. }), "{real:?}");

    let fine = read(6).fetch_one(&mut conn).await?;
    assert_eq!(fine.get(), 12345);
    Ok(())
}

/// The generated impls name nothing from the caller's scope: not `bool`, not `Result`, not a
/// local `sqlx` module. (The derive's own code names `i64` bare; shadowing it is not tested yet.)
#[allow(non_camel_case_types, dead_code)]
mod hygiene {
    struct bool;
    struct Result;
    mod sqlx_core {}
    mod sqlx {}

    #[derive(typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Debug)]
    #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    pub(super) struct ShadowedId(u64);
}

#[tokio::test]
async fn hygienic_impls_round_trip() -> Result<(), Box<dyn std::error::Error>> {
    let mut conn = SqliteConnection::connect("sqlite::memory:").await?;
    let id = hygiene::ShadowedId::generate();
    let back: hygiene::ShadowedId = sqlx::query_scalar("SELECT ?").bind(id).fetch_one(&mut conn).await?;
    assert_eq!(back, id);
    Ok(())
}

/// A 64-bit layout on a `u64` field: every ID below 2^63 is stored as usual; one at or
/// above it has no order-preserving `INTEGER` form, and binding it is an error naming the type.
#[derive(typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(preset = "discord")]
struct DiscordId(u64);

#[tokio::test]
async fn ids_at_or_above_2_63_are_refused_on_encode() -> Result<(), Box<dyn std::error::Error>> {
    let mut conn = connect().await?;
    let documented = DiscordId::try_from(175_928_847_299_117_063_u64)?;
    sqlx::query("INSERT INTO orders (id, total_cents) VALUES (?, 0)").bind(documented).execute(&mut conn).await?;
    let back: DiscordId = sqlx::query_scalar("SELECT id FROM orders").fetch_one(&mut conn).await?;
    assert_eq!(back, documented);

    let high = DiscordId::try_from(1_u64 << 63)?;
    let err = sqlx::query("INSERT INTO orders (id, total_cents) VALUES (?, 0)")
        .bind(high)
        .execute(&mut conn)
        .await
        .expect_err("2^63 does not fit an INTEGER in order");
    // sqlx keeps the message of the encoder's error (not the error itself).
    assert!(matches!(err, sqlx::Error::Encode(_)), "{err:?}");
    assert!(err.to_string().contains("DiscordId 9223372036854775808 does not fit in a BIGINT"), "{err}");
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders").fetch_one(&mut conn).await?;
    assert_eq!(count, 1, "nothing was written");
    Ok(())
}
