//! IDs in a real MySQL/MariaDB through diesel (`DATABASE_URL_MYSQL`; required under CI,
//! skipped visibly elsewhere): round trip, a time range, hostile stored values, `BIGINT
//! UNSIGNED` at 2^63, and a column that is not an integer.
#![cfg(feature = "diesel-mysql")]

use diesel::sql_types::BigInt;
use diesel::{Connection, MysqlConnection, RunQueryDsl};
use typed_snowflake::LayoutError;

#[path = "common/ids.rs"]
mod ids;
#[path = "common/servers.rs"]
mod servers;
use ids::{ABOVE_SMALL, OrderId, SmallId, expected_reasons};
#[macro_use]
#[path = "common/diesel.rs"]
mod common;

#[test]
fn round_trip_range_and_hostile_values() -> Result<(), Box<dyn std::error::Error>> {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    let mut conn = MysqlConnection::establish(&url)?;
    diesel_suite!(&mut conn, create = "CREATE TEMPORARY TABLE snowflake_orders (id BIGINT PRIMARY KEY, parent BIGINT)");

    let mut select = |sql: &str| diesel::select(diesel::dsl::sql::<BigInt>(sql)).get_result::<OrderId>(&mut conn);
    let e = select("CAST(9223372036854775808 AS UNSIGNED)").expect_err("2^63");
    assert_eq!(
        common::diesel_reason(&e),
        Some(("OrderId", LayoutError::OutOfLayout { value: 1 << 63, used_bits: 63 })),
        "{e}"
    );
    assert_eq!(select("CAST(12345 AS UNSIGNED)")?.get(), 12345);
    let e = select("CAST(5 AS DOUBLE)").expect_err("a DOUBLE");
    assert!(common::chain_of(&e).contains("not a valid OrderId: it is Double, not an integer"), "{e:?}");
    // diesel asks the server for a BIGINT, so MariaDB converts text itself: digits become
    // that number (then checked), anything else is an error, never 0.
    assert_eq!(select("'12345'")?.get(), 12345);
    let e = select("'-5'").expect_err("'-5'");
    assert_eq!(common::diesel_reason(&e), Some(("OrderId", LayoutError::Negative { value: -5 })), "{e:?}");
    select("'abc'").expect_err("'abc'");
    Ok(())
}
