//! IDs in SQLite (in memory) through diesel: round trip, a time range, hostile stored
//! values, and storage classes other than `INTEGER`.

use diesel::sql_types::BigInt;
use diesel::{Connection, RunQueryDsl, SqliteConnection};

use crate::diesel_common as common;
use crate::ids;
use ids::{ABOVE_SMALL, OrderId, SmallId, expected_reasons};

#[test]
fn round_trip_range_and_hostile_values() -> Result<(), Box<dyn std::error::Error>> {
    let mut conn = SqliteConnection::establish(":memory:")?;
    diesel_suite!(&mut conn, create = "CREATE TABLE snowflake_orders (id INTEGER PRIMARY KEY, parent INTEGER)");

    // SQLite reads text and reals as integers ('abc' as 0, a valid ID): here they are errors.
    let mut select = |sql: &str| diesel::select(diesel::dsl::sql::<BigInt>(sql)).get_result::<OrderId>(&mut conn);
    for (sql, class) in [("'abc'", "Text"), ("'12345'", "Text"), ("5.0", "Double"), ("x'00'", "Binary")] {
        let e = select(sql).expect_err(sql);
        let expected = format!("not a valid OrderId: it is {class}, not INTEGER");
        assert!(common::chain_of(&e).contains(&expected), "{sql}: {e:?}");
    }
    assert_eq!(select("12345")?.get(), 12345);
    Ok(())
}
