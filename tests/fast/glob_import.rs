//! `use typed_snowflake::*;` compiles beside each integration's crate: no public module of
//! ours is named like one (a module `serde` or `redis` made `use serde::Serialize;`
//! ambiguous), and the prelude works the same way. Each module below is its own scope, so a
//! name clash fails this file's build.

type TestResult = Result<(), Box<dyn std::error::Error>>;

mod beside_serde {
    use serde::{Deserialize, Serialize};
    use typed_snowflake::*;

    #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
    #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    pub struct OrderId(i64);

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    pub struct Order {
        pub id: OrderId,
        #[serde(with = "serialization::as_number")]
        pub copy: OrderId,
    }

    #[test]
    fn serde_beside_the_glob() -> super::TestResult {
        let id = OrderId::from_parts(1_700_000_000_000, 1, 2)?;
        let json = serde_json::to_string(&Order { id, copy: id })?;
        assert_eq!(json, format!(r#"{{"id":"{id}","copy":{id}}}"#));
        assert_eq!(serde_json::from_str::<Order>(&json)?, Order { id, copy: id });
        Ok(())
    }
}

mod beside_redis {
    use redis::{Commands, ToRedisArgs};
    use typed_snowflake::*;

    #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
    pub struct MessageId(i64);

    /// Names `Commands` in a signature, so the import is used without a server.
    pub fn last<C: Commands>(conn: &mut C) -> redis::RedisResult<Option<MessageId>> {
        conn.get("last-message")
    }

    #[test]
    fn redis_beside_the_glob() -> super::TestResult {
        let id = MessageId::from_parts(1_700_000_000_000, 3, 4)?;
        assert_eq!(id.to_redis_args(), vec![id.to_string().into_bytes()]);
        let timeline = timeline::Timeline::<MessageId>::new("glob-import");
        assert_eq!(timeline.key(), "glob-import");
        let _: fn(&mut redis::Connection) -> redis::RedisResult<Option<MessageId>> = last;
        Ok(())
    }
}

mod beside_sqlx {
    use sqlx::{Row, Sqlite};
    use typed_snowflake::*;

    #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
    #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    pub struct OrderId(i64);

    #[test]
    fn sqlx_beside_the_glob() -> super::TestResult {
        let runtime = tokio::runtime::Builder::new_current_thread().build()?;
        runtime.block_on(async {
            use sqlx::Connection;
            let mut db = sqlx::SqliteConnection::connect("sqlite::memory:").await?;
            let id = OrderId::from_parts(1_700_000_000_000, 1, 2)?;
            let row = sqlx::query::<Sqlite>("SELECT ?").bind(id).fetch_one(&mut db).await?;
            assert_eq!(row.try_get::<OrderId, _>(0)?, id);
            let negative = sqlx::query::<Sqlite>("SELECT -1").fetch_one(&mut db).await?;
            assert!(negative.try_get::<OrderId, _>(0).is_err());
            let _: Option<DecodeIdError> = None;
            Ok(())
        })
    }
}

mod beside_schemars {
    use schemars::JsonSchema;
    use typed_snowflake::*;

    #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
    #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    pub struct OrderId(i64);

    #[test]
    fn schemars_beside_the_glob() {
        let schema = schemars::schema_for!(OrderId);
        assert_eq!(schema.get("type").and_then(|t| t.as_str()), Some("string"));
        assert_eq!(<OrderId as JsonSchema>::schema_name(), "OrderId");
    }
}

mod beside_dates {
    use chrono::{DateTime, Utc};
    use jiff::Timestamp;
    use time::OffsetDateTime;
    use typed_snowflake::*;

    #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    pub struct OrderId(i64);

    #[test]
    fn date_crates_beside_the_glob() -> super::TestResult {
        let id = OrderId::from_parts(1_700_000_000_123, 1, 2)?;
        let chrono: DateTime<Utc> = id.to_chrono();
        let time: OffsetDateTime = id.to_offset_date_time();
        let jiff: Timestamp = id.to_jiff();
        assert_eq!(chrono.timestamp_millis(), 1_700_000_000_123);
        assert_eq!(time.unix_timestamp_nanos(), 1_700_000_000_123_000_000);
        assert_eq!(jiff.as_millisecond(), 1_700_000_000_123);
        assert_eq!(OrderId::first_at(chrono), OrderId::first_at(time));
        assert_eq!(OrderId::last_at(jiff), OrderId::last_at(1_700_000_000_123));
        Ok(())
    }
}

mod beside_tokio {
    use tokio::runtime::Builder;
    use typed_snowflake::*;

    #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    pub struct OrderId(i64);

    #[test]
    fn tokio_beside_the_glob() -> super::TestResult {
        let id = Builder::new_current_thread().build()?.block_on(async { OrderId::try_generate() })?;
        assert!(id.timestamp_ms() >= OrderId::EPOCH_MS);
        Ok(())
    }
}

mod prelude_beside_everything {
    use redis::Commands;
    use serde::Serialize;
    use typed_snowflake::prelude::*;

    #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    pub struct OrderId(i64);

    fn to_json<T: Serialize>(value: &T) -> serde_json::Result<String> {
        serde_json::to_string(value)
    }

    pub fn store<C: Commands>(conn: &mut C, id: OrderId) -> redis::RedisResult<()> {
        conn.set("order", id)
    }

    fn make<T: SnowflakeId>() -> Result<T, GenerateError> {
        T::try_generate()
    }

    #[test]
    fn prelude_beside_the_crates() -> super::TestResult {
        let id: OrderId = make()?;
        assert_eq!(to_json(&id)?, format!("\"{id}\""));
        assert!(matches!("x".parse::<OrderId>(), Err(ParseIdError::InvalidDigit { .. })));
        assert!(matches!(OrderId::try_from(-1i64), Err(LayoutError::Negative { .. })));
        let _: fn(&mut redis::Connection, OrderId) -> redis::RedisResult<()> = store;
        let _: Option<(Registry, RegistryError, WorkerSource)> = None;
        assert!(OrderId::first_at(std::time::SystemTime::now().into_unix_ms()) <= OrderId::last_at(i64::MAX));
        Ok(())
    }
}
