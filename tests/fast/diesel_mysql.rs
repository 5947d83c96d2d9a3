//! IDs in a real MySQL/MariaDB through diesel (`DATABASE_URL_MYSQL`; required under CI,
//! skipped visibly elsewhere): round trip, a time range, hostile stored values, `BIGINT
//! UNSIGNED` at 2^63, and a column that is not an integer. The queries run through
//! diesel-async's `AsyncMysqlConnection` (mysql_async), which needs no libmysqlclient; the
//! values go through the same `Mysql` backend and the same `ToSql`/`FromSql` as with
//! diesel's own `MysqlConnection`.

use diesel::QueryResult;
use diesel::sql_types::BigInt;
use diesel_async::{AsyncConnection, AsyncMysqlConnection, RunQueryDsl};
use typed_snowflake::LayoutError;

use crate::diesel_common as common;
use crate::ids;
use crate::servers;
use ids::{ABOVE_SMALL, OrderId, SmallId, expected_reasons};

/// `SELECT <sql>`, read as an `OrderId`.
async fn select(conn: &mut AsyncMysqlConnection, sql: &str) -> QueryResult<OrderId> {
    diesel::select(diesel::dsl::sql::<BigInt>(sql)).get_result::<OrderId>(conn).await
}

#[tokio::test]
async fn round_trip_range_and_hostile_values() -> Result<(), Box<dyn std::error::Error>> {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    let mut conn = AsyncMysqlConnection::establish(&url).await?;
    diesel_suite!(
        &mut conn,
        create = "CREATE TEMPORARY TABLE snowflake_orders (id BIGINT PRIMARY KEY, parent BIGINT)",
        async
    );

    let e = select(&mut conn, "CAST(9223372036854775808 AS UNSIGNED)").await.expect_err("2^63");
    assert_eq!(
        common::diesel_reason(&e),
        Some(("OrderId", LayoutError::OutOfLayout { value: 1 << 63, used_bits: 63 })),
        "{e}"
    );
    assert_eq!(select(&mut conn, "CAST(12345 AS UNSIGNED)").await?.get(), 12345);
    let e = select(&mut conn, "CAST(5 AS DOUBLE)").await.expect_err("a DOUBLE");
    assert!(common::chain_of(&e).contains("not a valid OrderId: it is Double, not an integer"), "{e:?}");
    // Through mysql_async a text value arrives as text (diesel's own MysqlConnection has
    // libmysqlclient convert it to the BIGINT diesel asks for): refused, whatever its digits,
    // never read as 0. Converted by the server, the same digits are that number, then checked.
    for sql in ["'12345'", "'-5'", "'abc'"] {
        let e = select(&mut conn, sql).await.expect_err(sql);
        assert!(common::chain_of(&e).contains("not a valid OrderId: it is String, not an integer"), "{sql}: {e:?}");
    }
    assert_eq!(select(&mut conn, "CAST('12345' AS SIGNED)").await?.get(), 12345);
    let e = select(&mut conn, "CAST('-5' AS SIGNED)").await.expect_err("'-5' as SIGNED");
    assert_eq!(common::diesel_reason(&e), Some(("OrderId", LayoutError::Negative { value: -5 })), "{e:?}");
    Ok(())
}
