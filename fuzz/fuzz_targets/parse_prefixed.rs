//! `FromStr` of prefixed types (`ord_…`): never panics; `Ok` exactly for the type's prefix,
//! `_` and 13 lowercase base32 characters of at most 64 bits whose value is an ID of the
//! layout (a reference decoder written apart says which), plus decimal text for a type that
//! accepts it; an accepted prefixed text is the one spelling the ID prints; JSON strings read
//! the same; and text order is ID order.
#![no_main]

use std::fmt::Debug;
use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use typed_snowflake::SnowflakeId;
use typed_snowflake_fuzz::{PrefixedMessageId, PrefixedOrderId, PrefixedSmallId, reference_prefixed};

fn check<T>(text: &str)
where
    T: SnowflakeId + Debug + std::fmt::Display + PartialEq + Ord + FromStr + serde::de::DeserializeOwned + serde::Serialize,
    <T as FromStr>::Err: Debug + ToString,
{
    let prefix = T::PREFIX.expect("a prefixed type");
    let prefixed = reference_prefixed(prefix, text).and_then(|v| T::LAYOUT.validate_u64(v).ok());
    let decimal = if T::ACCEPTS_DECIMAL { T::LAYOUT.parse_id(text).ok() } else { None };
    let reference = prefixed.or(decimal);
    match text.parse::<T>() {
        Ok(id) => {
            assert_eq!(Some(id.to_raw()), reference, "{text:?} accepted as {id:?}");
            let spelled = id.to_string();
            if prefixed.is_some() {
                assert_eq!(spelled, text, "one spelling per ID");
            }
            assert_eq!(format!("{id}"), spelled);
            assert_eq!(spelled.parse::<T>().ok().as_ref(), Some(&id), "{spelled} round-trips");
            let json = serde_json::to_string(&spelled).expect("a JSON string");
            assert_eq!(serde_json::from_str::<T>(&json).ok().as_ref(), Some(&id));
            assert_eq!(serde_json::to_string(&id).ok(), Some(json));
        }
        Err(e) => {
            assert!(!e.to_string().is_empty(), "an empty error message for {text:?}");
            assert_eq!(reference, None, "{text:?} refused: {e:?}");
        }
    }
}

/// Two IDs' texts compare as the IDs do.
fn order<T: SnowflakeId + Ord + ToString>(a: u64, b: u64) {
    let (Ok(x), Ok(y)) = (T::from_u64(a), T::from_u64(b)) else { return };
    assert_eq!(x.to_string().cmp(&y.to_string()), x.cmp(&y), "{a} {b}");
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check::<PrefixedOrderId>(&text);
    check::<PrefixedMessageId>(&text);
    check::<PrefixedSmallId>(&text);
    // The text with each type's prefix in front: most inputs then reach the suffix.
    for prefix in ["ord_", "msg_", "line_item_"] {
        let text = format!("{prefix}{text}");
        check::<PrefixedOrderId>(&text);
        check::<PrefixedMessageId>(&text);
        check::<PrefixedSmallId>(&text);
    }
    if let (Some(a), Some(b)) = (data.get(..8), data.get(8..16)) {
        let (a, b) = (u64::from_le_bytes(a.try_into().unwrap()), u64::from_le_bytes(b.try_into().unwrap()));
        order::<PrefixedMessageId>(a, b);
        order::<PrefixedOrderId>(a >> 1, b >> 1);
    }
});
