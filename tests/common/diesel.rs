//! The diesel test, written once for every backend: `diesel_suite!(connection, create = …)`
//! runs a round trip, a time range, and the hostile stored values against a temporary
//! `snowflake_orders` table (temporary tables are private to the connection, so parallel
//! runs never meet). Included by each backend's test file. With a trailing `async` it runs
//! the same queries through a diesel-async connection (PostgreSQL and MySQL, whose
//! synchronous connections would link libpq and libmysqlclient), awaiting each one.

use super::ids::{OrderId, chain, decode_reason};

diesel::table! {
    snowflake_orders (id) {
        id -> BigInt,
        parent -> Nullable<BigInt>,
    }
}

#[derive(diesel::Queryable, diesel::Insertable, diesel::Selectable, Debug, PartialEq)]
#[diesel(table_name = snowflake_orders)]
pub struct Order {
    pub id: OrderId,
    pub parent: Option<OrderId>,
}

/// `error` and its sources, as an error reporter prints them.
pub fn chain_of(error: &diesel::result::Error) -> String {
    chain(error)
}

/// The [`DecodeIdError`](typed_snowflake::DecodeIdError) inside diesel's deserialization error.
pub fn diesel_reason(error: &diesel::result::Error) -> Option<(&'static str, typed_snowflake::LayoutError)> {
    match error {
        diesel::result::Error::DeserializationError(inner) => decode_reason(&**inner),
        _ => None,
    }
}

macro_rules! diesel_suite {
    ($conn:expr, create = $create:expr) => {
        diesel_suite!(@run $conn, $create, [], [])
    };
    ($conn:expr, create = $create:expr, async) => {
        // diesel-async's `RunQueryDsl` shadows the prelude's: the same methods, as futures.
        diesel_suite!(@run $conn, $create, [use diesel_async::RunQueryDsl;], [.await])
    };
    (@run $conn:expr, $create:expr, [$($run:tt)*], [$($aw:tt)*]) => {{
        use common::{Order, diesel_reason, snowflake_orders as orders};
        use diesel::prelude::*;
        $($run)*

        let conn = $conn;
        diesel::sql_query($create).execute(conn) $($aw)*?;

        // Round trip through an Insertable/Queryable struct, and a time range with first_at/last_at.
        let ids = OrderId::generate_batch(10)?;
        let (t0, t1) = (ids[0].timestamp_ms(), ids[9].timestamp_ms());
        let outside = [OrderId::from_parts(t0 - 60_000, 1, 0)?, OrderId::from_parts(t1 + 60_000, 1, 0)?];
        let rows: Vec<Order> =
            ids.iter().chain(&outside).map(|&id| Order { id, parent: (id != ids[0]).then_some(ids[0]) }).collect();
        diesel::insert_into(orders::table).values(&rows).execute(conn) $($aw)*?;
        let back: Order = orders::table.filter(orders::id.eq(ids[4])).select(Order::as_select()).first(conn) $($aw)*?;
        assert_eq!(back, Order { id: ids[4], parent: Some(ids[0]) });
        let root: Order = orders::table.find(&ids[0]).first(conn) $($aw)*?;
        assert_eq!(root.parent, None, "NULL is None in an Option<OrderId>");
        let in_range: Vec<OrderId> = orders::table
            .select(orders::id)
            .filter(orders::id.between(OrderId::first_at(t0), OrderId::last_at(t1)))
            .order(orders::id)
            .load(conn) $($aw)*?;
        assert_eq!(in_range, ids);
        let children: i64 = orders::table.filter(orders::parent.eq(Some(ids[0]))).count().get_result(conn) $($aw)*?;
        assert_eq!(children, 11);
        diesel::delete(orders::table).execute(conn) $($aw)*?;

        // Hostile stored values, each a deserialization error naming the type and the reason.
        diesel::sql_query(format!(
            "INSERT INTO snowflake_orders (id, parent) VALUES (1, -5), (2, {}), (3, {}), (4, NULL)",
            i64::MIN,
            ABOVE_SMALL
        ))
        .execute(conn) $($aw)*?;
        let [negative, min, wide] = expected_reasons();
        let parent_of = |id: i64| orders::table.select(orders::parent.assume_not_null()).filter(orders::id.eq(id));
        let e = parent_of(1).first::<OrderId>(conn) $($aw)*.expect_err("-5");
        assert_eq!(diesel_reason(&e), Some(negative), "{e}");
        // diesel's own message names the field; its source names the type and the reason.
        assert!(common::chain_of(&e).contains("not a valid OrderId: -5 is negative"), "{}", common::chain_of(&e));
        let e = parent_of(2).first::<OrderId>(conn) $($aw)*.expect_err("i64::MIN");
        assert_eq!(diesel_reason(&e), Some(min), "{e}");
        let e = parent_of(3).first::<SmallId>(conn) $($aw)*.expect_err("2^45");
        assert_eq!(diesel_reason(&e), Some(wide), "{e}");
        assert!(
            common::chain_of(&e).contains("not a valid SmallId: 35184372088832 sets bits above the layout's 39 bits"),
            "{}",
            common::chain_of(&e)
        );
        let e = parent_of(4).first::<OrderId>(conn) $($aw)*.expect_err("NULL for a non-Option");
        assert!(matches!(e, diesel::result::Error::DeserializationError(_)), "{e:?}");
        let none: Option<OrderId> = orders::table.select(orders::parent).filter(orders::id.eq(4)).first(conn) $($aw)*?;
        assert_eq!(none, None);
        // A whole row with a hostile field fails as a whole.
        let e = orders::table.find(1).first::<Order>(conn) $($aw)*.expect_err("a row with -5");
        assert_eq!(diesel_reason(&e), Some(negative), "{e}");
    }};
}
