//! postcard decoding of derived types (a zigzag varint `i64` on the wire): never panics;
//! an ID is accepted exactly when the bytes hold an `i64` that the layout accepts, reads
//! the same number of bytes, and re-encodes to the same bytes.
#![no_main]

use std::fmt::Debug;
use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use serde::{Serialize, de::DeserializeOwned};
use typed_snowflake::SnowflakeId;
use typed_snowflake_fuzz::{OrderId, SmallId, SonyId, TweetId, check_valid};

fn check<T>(data: &[u8])
where
    T: SnowflakeId + Debug + PartialEq + ToString + FromStr + Serialize + DeserializeOwned,
    <T as FromStr>::Err: Debug,
{
    let decoded = postcard::take_from_bytes::<T>(data);
    let reference = postcard::take_from_bytes::<i64>(data);
    match (&decoded, &reference) {
        (Ok((id, rest)), Ok((raw, raw_rest))) => {
            check_valid(id);
            assert_eq!(id.to_raw(), *raw);
            assert_eq!(rest.len(), raw_rest.len());
            let bytes = postcard::to_allocvec(id).expect("an ID serializes");
            assert_eq!(bytes, postcard::to_allocvec(raw).expect("an i64 serializes"));
            assert_eq!(&postcard::from_bytes::<T>(&bytes).expect("its own bytes decode"), id);
        }
        (Err(_), Ok((raw, _))) => assert!(T::LAYOUT.validate(*raw).is_err(), "{} refused {raw}", T::NAME),
        (Ok((id, _)), Err(e)) => panic!("{} accepted {id:?} from bytes that are no i64: {e}", T::NAME),
        (Err(_), Err(_)) => {}
    }

    // A sequence of IDs, as a service would send a page of them.
    if let Ok(ids) = postcard::from_bytes::<Vec<T>>(data) {
        for id in &ids {
            check_valid(id);
        }
        let bytes = postcard::to_allocvec(&ids).expect("serializes");
        assert_eq!(postcard::from_bytes::<Vec<T>>(&bytes).expect("decodes"), ids);
    }
}

fuzz_target!(|data: &[u8]| {
    check::<OrderId>(data);
    check::<TweetId>(data);
    check::<SonyId>(data);
    check::<SmallId>(data);
});
