//! Everything a caller uses on a concrete type is reachable through the `SnowflakeId`
//! trait, with the same results: generic code can generate, decode, date and bound IDs.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use typed_snowflake::{GenerateError, IntoUnixMs, LayoutError, SnowflakeId};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, datacenter = 5, machine = 5, seq = 12, epoch = 1288834974657)]
struct TweetId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 39, worker = 16, seq = 8, epoch = "2014-09-01", unit = "10ms")]
struct SonyId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 28, worker = 22, seq = 13, epoch = "2016-05-20", unit = "1s")]
#[snowflake(decode_only)]
struct OldBaiduId(i64);

/// What generic code sees of an ID.
fn decoded<T: SnowflakeId>(id: &T) -> (i64, SystemTime, u64, u64, f64, String) {
    (id.timestamp_ms(), id.timestamp(), id.worker(), id.sequence(), id.redis_score(), id.redis_member())
}

fn bounds<T: SnowflakeId>(at: impl IntoUnixMs + Copy) -> (T, T) {
    (T::first_at(at), T::last_at(at))
}

fn generated<T: SnowflakeId + Ord + Copy>() -> Result<Vec<T>, GenerateError> {
    let mut ids = vec![T::generate(), T::try_generate()?];
    ids.extend(T::generate_batch(100)?);
    Ok(ids)
}

fn built<T: SnowflakeId>(unix_ms: i64, worker: u64, seq: u64) -> Result<T, LayoutError> {
    T::from_parts(unix_ms, worker, seq)
}

macro_rules! same_through_the_trait {
    ($name:ident, $ty:ident) => {
        #[test]
        fn $name() -> TestResult {
            let ms = $ty::EPOCH_MS + 123_456_789;
            let id = built::<$ty>(ms, $ty::MAX_WORKER, 7)?;
            assert_eq!(id, $ty::from_parts(ms, $ty::MAX_WORKER, 7)?);
            assert_eq!(
                decoded(&id),
                (id.timestamp_ms(), id.timestamp(), id.worker(), id.sequence(), id.redis_score(), id.redis_member())
            );
            assert_eq!(id.timestamp(), UNIX_EPOCH + Duration::from_millis(id.timestamp_ms().try_into()?));
            assert_eq!(<$ty as SnowflakeId>::parts(&id), id.parts());
            assert!(matches!(built::<$ty>($ty::EPOCH_MS - 1, 0, 0), Err(LayoutError::BeforeEpoch { .. })));
            assert!(matches!(built::<$ty>(ms, $ty::MAX_WORKER + 1, 0), Err(LayoutError::WorkerOutOfRange { .. })));

            for at in [i64::MIN, -1, 0, $ty::EPOCH_MS, ms, $ty::MAX_TIMESTAMP_MS, i64::MAX] {
                assert_eq!(bounds::<$ty>(at), ($ty::first_at(at), $ty::last_at(at)), "{at}");
            }
            assert_eq!(bounds::<$ty>(id.timestamp()), ($ty::first_at(ms), $ty::last_at(ms)));
            let (first, last) = bounds::<$ty>(id.timestamp());
            assert!(first <= id && id <= last);

            let ids = generated::<$ty>()?;
            assert_eq!(ids.len(), 102);
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "generic generation is increasing");
            assert!(ids.iter().all(|id| id.timestamp() <= SystemTime::now()));
            Ok(())
        }
    };
}

same_through_the_trait!(design_card, OrderId);
same_through_the_trait!(twitter_split_unsigned, TweetId);
same_through_the_trait!(ten_millis, SonyId);

#[test]
fn a_decode_only_type_decodes_and_refuses_to_generate_through_the_trait() -> TestResult {
    const { assert!(OldBaiduId::DECODE_ONLY && !OrderId::DECODE_ONLY) };
    let id = built::<OldBaiduId>(1_500_000_000_000, 9, 3)?;
    assert_eq!(decoded(&id).0, 1_500_000_000_000);
    assert_eq!(OldBaiduId::first_at(id.timestamp()), OldBaiduId::from_parts(1_500_000_000_000, 0, 0)?);
    let refused = |e: GenerateError| matches!(e, GenerateError::DecodeOnly { type_name: "OldBaiduId" });
    assert!(<OldBaiduId as SnowflakeId>::try_generate().is_err_and(refused));
    assert!(<OldBaiduId as SnowflakeId>::generate_batch(1).is_err_and(refused));
    // The start-up check has no generator to build for it: a problem, reported by name.
    let check = typed_snowflake::Registry::check::<(OrderId, OldBaiduId)>().err().ok_or("the check passed")?;
    let [problem] = check.problems() else { return Err(format!("expected one problem: {check}").into()) };
    assert_eq!(problem.type_name, Some("OldBaiduId"));
    assert!(refused(problem.error.clone()), "{problem}");
    let panic =
        std::panic::catch_unwind(<OldBaiduId as SnowflakeId>::generate).err().ok_or("generate() did not panic")?;
    let message = panic.downcast_ref::<String>().ok_or("a panic without a message")?;
    assert!(message.contains("OldBaiduId is #[snowflake(decode_only)]"), "{message}");
    Ok(())
}

#[test]
fn paths_are_unique_per_module() {
    assert_eq!(<OrderId as SnowflakeId>::PATH, "fast::generic::OrderId");
    assert_eq!(<OrderId as SnowflakeId>::NAME, "OrderId");
}
