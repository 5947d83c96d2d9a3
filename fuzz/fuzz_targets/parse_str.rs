//! `FromStr` on derived types: never panics; `Ok` only for text that is an ID of the
//! layout in plain decimal (leading zeros allowed), whose value prints back as the same
//! number.
#![no_main]

use std::fmt::Debug;
use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use typed_snowflake::SnowflakeId;
use typed_snowflake_fuzz::{OrderId, SmallId, SonyId, TweetId, check_valid};

fn check<T>(text: &str)
where
    T: SnowflakeId + Debug + PartialEq + ToString + FromStr,
    <T as FromStr>::Err: Debug + ToString,
{
    // The reference: nonempty ASCII digits whose value fits in `i64` and in the layout.
    let reference = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let trimmed = text.trim_start_matches('0');
        let value = if trimmed.is_empty() { Ok(0) } else { trimmed.parse::<i64>() };
        value.ok().filter(|v| T::LAYOUT.validate(*v).is_ok())
    } else {
        None
    };
    match text.parse::<T>() {
        Ok(id) => {
            check_valid(&id);
            assert_eq!(Some(id.to_raw()), reference, "{text:?} accepted as {id:?}");
        }
        Err(e) => {
            assert!(!e.to_string().is_empty(), "an empty error message for {text:?}");
            assert_eq!(reference, None, "{text:?} refused: {e:?}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check::<OrderId>(&text);
    check::<TweetId>(&text);
    check::<SonyId>(&text);
    check::<SmallId>(&text);
});
