//! The impls of every integration compile where the user's scope shadows the names generated
//! code might reach for unqualified: `Ok`, `Err`, `Result`, `Option`, `String`, `Vec`, `Box`,
//! `i64`, `u64`, `bool`, `str`, and a local module named like each integrated crate.
#![allow(dead_code, non_camel_case_types, unused_imports)]

mod shadowed {
    pub struct Ok;
    pub struct Err;
    pub struct Result;
    pub struct Option;
    pub struct String;
    pub struct Vec;
    pub struct Box;
    pub struct i64;
    pub struct u64;
    pub struct bool;
    pub struct str;

    mod typed_snowflake {}
    mod diesel {}
    mod sea_orm {}
    mod sqlx_core {}
    mod postgres_types {}
    mod utoipa {}
    mod async_graphql {}
    mod serde {}
    mod core {}
    mod std {}

    #[derive(::typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
    #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    pub struct HygienicId(::core::primitive::i64);
}

#[test]
fn every_integration_expands_in_a_hostile_scope() -> ::core::result::Result<(), Box<dyn std::error::Error>> {
    use typed_snowflake::SnowflakeId;
    let id = shadowed::HygienicId::from_raw(42)?;
    assert_eq!(<shadowed::HygienicId as utoipa::ToSchema>::name(), "HygienicId");
    assert_eq!(
        <shadowed::HygienicId as async_graphql::ScalarType>::to_value(&id),
        async_graphql::Value::String("42".into())
    );
    assert_eq!(sea_orm::Value::from(id), sea_orm::Value::BigInt(Some(42)));
    Ok(())
}

/// An ID type without `Debug` (which diesel's and postgres-types' `ToSql` require) still
/// compiles with every integration on; it only lacks those two `ToSql` impls.
#[derive(typed_snowflake::SnowflakeId, Clone, Copy)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
pub struct PlainId(i64);

#[test]
fn an_id_without_debug_keeps_its_other_impls() {
    fn readable<T: diesel::deserialize::FromSql<diesel::sql_types::BigInt, diesel::pg::Pg>>() {}
    fn pg_readable<T: for<'a> tokio_postgres::types::FromSql<'a>>() {}
    readable::<PlainId>();
    pg_readable::<PlainId>();
}
