//! `TryFrom<i64>` and `TryFrom<u64>` (and `SnowflakeId::from_u64`): `Ok` exactly for the
//! values of the layout, each mapped to itself; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use typed_snowflake::SnowflakeId;
use typed_snowflake_fuzz::{OrderId, SmallId, SonyId, TweetId, check_valid};

fn in_layout<T: SnowflakeId>(value: u64) -> bool {
    value <= T::LAYOUT.max_id().cast_unsigned()
}

fuzz_target!(|values: (i64, u64)| {
    let (signed, unsigned) = values;

    macro_rules! signed {
        ($ty:ty) => {
            match <$ty>::try_from(signed) {
                Ok(id) => {
                    check_valid(&id);
                    assert_eq!(id.get(), signed);
                    assert_eq!(i64::from(id), signed);
                    assert!(signed >= 0 && in_layout::<$ty>(signed.cast_unsigned()));
                }
                Err(e) => {
                    assert!(signed < 0 || !in_layout::<$ty>(signed.cast_unsigned()), "{signed} refused: {e}");
                }
            }
        };
    }
    signed!(OrderId);
    signed!(TweetId);
    signed!(SonyId);
    signed!(SmallId);

    // `TryFrom<u64>` exists only on the `u64` field; `from_u64` on every type.
    match TweetId::try_from(unsigned) {
        Ok(id) => {
            check_valid(&id);
            assert_eq!(u64::from(id), unsigned);
        }
        Err(e) => assert!(!in_layout::<TweetId>(unsigned), "{unsigned} refused: {e}"),
    }
    macro_rules! unsigned {
        ($ty:ty) => {
            match <$ty>::from_u64(unsigned) {
                Ok(id) => {
                    check_valid(&id);
                    assert_eq!(u64::from(id), unsigned);
                }
                Err(e) => assert!(!in_layout::<$ty>(unsigned), "{unsigned} refused: {e}"),
            }
        };
    }
    unsigned!(OrderId);
    unsigned!(SonyId);
    unsigned!(SmallId);
});
