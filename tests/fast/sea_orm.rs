//! IDs through sea-orm 2 against PostgreSQL, MariaDB (`DATABASE_URL_PG`, `DATABASE_URL_MYSQL`;
//! required under CI, skipped visibly elsewhere) and SQLite in memory: the ID as a primary key,
//! in `Condition`s and time ranges, and hostile stored values.

use sea_orm::entity::prelude::*;
use sea_orm::sea_query::{Value as QueryValue, ValueType};
use sea_orm::{Condition, ConnectOptions, ConnectionTrait, Database, DbBackend, QueryOrder, Set, TryFromU64};
use typed_snowflake::LayoutError;

use crate::ids;
use crate::servers;
use ids::{ABOVE_SMALL, OrderId, SmallId, expected_reasons};

mod order {
    use super::OrderId;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "snowflake_sea_orders")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: OrderId,
        pub parent: Option<OrderId>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// A row whose `parent` column is read as a [`SmallId`].
mod small {
    use super::SmallId;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "snowflake_sea_orders")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: i64,
        pub parent: SmallId,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// The [`DecodeIdError`](typed_snowflake::DecodeIdError) inside sea-orm's conversion error.
fn sea_reason(error: &DbErr) -> Option<(&'static str, LayoutError)> {
    match error {
        DbErr::TryIntoErr { source, .. } => {
            source.downcast_ref::<typed_snowflake::DecodeIdError>().map(|e| (e.type_name(), *e.reason()))
        }
        // Where sea-orm flattens a TryGetError into text, the text must carry the reason.
        other => {
            let text = other.to_string();
            expected_reasons().into_iter().find(|(ty, reason)| text.contains(&format!("not a valid {ty}: {reason}")))
        }
    }
}

async fn suite(url: &str, create: &str) -> Result<(), Box<dyn std::error::Error>> {
    // One connection: the temporary table lives in it.
    let mut options = ConnectOptions::new(url);
    options.max_connections(1).min_connections(1).sqlx_logging(false);
    let db = Database::connect(options).await?;
    let backend = db.get_database_backend();
    db.execute_unprepared(create).await?;

    // The ID as a primary key: insert, find by id, update, delete.
    let ids = OrderId::generate_batch(10)?;
    let (t0, t1) = (ids[0].timestamp_ms(), ids[9].timestamp_ms());
    let outside = [OrderId::from_parts(t0 - 60_000, 1, 0)?, OrderId::from_parts(t1 + 60_000, 1, 0)?];
    for id in ids.iter().chain(&outside) {
        let parent = (*id != ids[0]).then_some(ids[0]);
        order::ActiveModel { id: Set(*id), parent: Set(parent) }.insert(&db).await?;
    }
    let found = order::Entity::find_by_id(ids[4]).one(&db).await?.ok_or("no row for ids[4]")?;
    assert_eq!(found, order::Model { id: ids[4], parent: Some(ids[0]) });
    let mut active: order::ActiveModel = found.into();
    active.parent = Set(None);
    active.update(&db).await?;
    assert_eq!(order::Entity::find_by_id(ids[4]).one(&db).await?.map(|m| m.parent), Some(None));

    // In a Condition: a time range by first_at/last_at, and membership.
    let in_range: Vec<OrderId> = order::Entity::find()
        .filter(
            Condition::all()
                .add(order::Column::Id.between(OrderId::first_at(t0), OrderId::last_at(t1)))
                .add(Condition::any().add(order::Column::Parent.eq(ids[0])).add(order::Column::Id.eq(ids[0]))),
        )
        .order_by_asc(order::Column::Id)
        .all(&db)
        .await?
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(in_range, [&ids[..4], &ids[5..]].concat(), "ids[4] lost its parent above");
    let some = order::Entity::find().filter(order::Column::Id.is_in([ids[1], outside[1]])).count(&db).await?;
    assert_eq!(some, 2);
    order::Entity::delete_by_id(outside[0]).exec(&db).await?;
    assert!(order::Entity::find_by_id(outside[0]).one(&db).await?.is_none());
    order::Entity::delete_many().exec(&db).await?;

    // Hostile stored values: each an error naming the type and the reason, never a wrong ID.
    let sql = format!(
        "INSERT INTO snowflake_sea_orders (id, parent) VALUES (1, -5), (2, {}), (3, {ABOVE_SMALL}), (4, NULL)",
        i64::MIN
    );
    db.execute_unprepared(&sql).await?;
    let [negative, min, wide] = expected_reasons();
    let e = order::Entity::find_by_id(<OrderId as TryFrom<i64>>::try_from(1)?).one(&db).await.expect_err("-5");
    assert_eq!(sea_reason(&e), Some(negative), "{e}");
    assert!(e.to_string().contains("not a valid OrderId: -5 is negative"), "{e}");
    let e = order::Entity::find_by_id(<OrderId as TryFrom<i64>>::try_from(2)?).one(&db).await.expect_err("i64::MIN");
    assert_eq!(sea_reason(&e), Some(min), "{e}");
    let e = small::Entity::find_by_id(3).one(&db).await.expect_err("2^45");
    assert_eq!(sea_reason(&e), Some(wide), "{e}");
    let e = small::Entity::find_by_id(4).one(&db).await.expect_err("NULL for a non-Option");
    assert!(e.to_string().contains("Missing value for column 'parent'"), "{e}");
    let four = order::Entity::find_by_id(<OrderId as TryFrom<i64>>::try_from(4)?).one(&db).await?.ok_or("no row 4")?;
    assert_eq!(four.parent, None);
    assert!(matches!(backend, DbBackend::Postgres | DbBackend::MySql | DbBackend::Sqlite));
    Ok(())
}

#[test]
fn values_built_in_memory_are_checked() {
    assert_eq!(<OrderId as ValueType>::try_from(QueryValue::BigInt(Some(5))).map(|id| id.get()).ok(), Some(5));
    // sea-query's `ValueTypeErr` carries no reason: each hostile value is shown to be an `i64`
    // that sea-query itself takes, so that the refusal is the layout's, for the layout's reason.
    let [negative, min, wide] = expected_reasons();
    let refusals = [
        (-5, negative, <OrderId as ValueType>::try_from(QueryValue::BigInt(Some(-5))).map(|id| id.get())),
        (i64::MIN, min, <OrderId as ValueType>::try_from(QueryValue::BigInt(Some(i64::MIN))).map(|id| id.get())),
        (ABOVE_SMALL, wide, <SmallId as ValueType>::try_from(QueryValue::BigInt(Some(ABOVE_SMALL))).map(|id| id.get())),
    ];
    for (raw, (ty, reason), refused) in refusals {
        assert_eq!(<i64 as ValueType>::try_from(QueryValue::BigInt(Some(raw))).ok(), Some(raw), "{ty} {raw}");
        assert!(refused.is_err(), "{ty} {raw} was taken: {refused:?}");
        let layout_says = match ty {
            "OrderId" => OrderId::LAYOUT.validate(raw),
            _ => SmallId::LAYOUT.validate(raw),
        };
        assert_eq!(layout_says.err(), Some(reason), "{ty} {raw}");
    }
    // No BIGINT at all: refused by sea-query's own `i64` conversion, before any layout.
    for not_a_bigint in [QueryValue::BigInt(None), QueryValue::String(Some("5".into()))] {
        assert!(<i64 as ValueType>::try_from(not_a_bigint.clone()).is_err());
        assert!(<OrderId as ValueType>::try_from(not_a_bigint).is_err());
    }
    assert_eq!(<OrderId as ValueType>::type_name(), "OrderId");
    assert_eq!(QueryValue::from(<OrderId as TryFrom<i64>>::try_from(5).expect("5")), QueryValue::BigInt(Some(5)));
    assert_eq!(<OrderId as TryFromU64>::try_from_u64(5).map(|id| id.get()).ok(), Some(5));
    let e = <OrderId as TryFromU64>::try_from_u64(1 << 63).expect_err("2^63");
    assert!(e.to_string().contains("not a valid OrderId"), "{e}");
}

#[tokio::test]
async fn postgres() -> Result<(), Box<dyn std::error::Error>> {
    let Some(url) = servers::pg_url() else { return Ok(()) };
    suite(&url, "CREATE TEMPORARY TABLE snowflake_sea_orders (id BIGINT PRIMARY KEY, parent BIGINT)").await
}

#[tokio::test]
async fn mariadb() -> Result<(), Box<dyn std::error::Error>> {
    let Some(url) = servers::mysql_url() else { return Ok(()) };
    suite(&url, "CREATE TEMPORARY TABLE snowflake_sea_orders (id BIGINT PRIMARY KEY, parent BIGINT)").await
}

#[tokio::test]
async fn sqlite_in_memory() -> Result<(), Box<dyn std::error::Error>> {
    suite("sqlite::memory:", "CREATE TABLE snowflake_sea_orders (id INTEGER PRIMARY KEY, parent INTEGER)").await
}
