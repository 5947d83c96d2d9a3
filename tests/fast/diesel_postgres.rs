//! IDs in a real PostgreSQL through diesel (`DATABASE_URL_PG`; required under CI, skipped
//! visibly elsewhere): round trip, a time range, and hostile stored values. The queries run
//! through diesel-async's `AsyncPgConnection` (tokio-postgres), which needs no libpq; the
//! values go through the same `Pg` backend and the same `ToSql`/`FromSql` as with diesel's own
//! `PgConnection`.

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::diesel_common as common;
use crate::ids;
use crate::servers;
use ids::{ABOVE_SMALL, OrderId, SmallId, expected_reasons};

#[tokio::test]
async fn round_trip_range_and_hostile_values() -> Result<(), Box<dyn std::error::Error>> {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    let mut conn = AsyncPgConnection::establish(&url).await?;
    diesel_suite!(
        &mut conn,
        create = "CREATE TEMPORARY TABLE snowflake_orders (id BIGINT PRIMARY KEY, parent BIGINT)",
        async
    );
    // Not an INT8: diesel refuses the bytes rather than guess.
    let e = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>("1::INT4"))
        .get_result::<OrderId>(&mut conn)
        .await
        .expect_err("an INT4");
    assert!(matches!(e, diesel::result::Error::DeserializationError(_)), "{e:?}");
    Ok(())
}
