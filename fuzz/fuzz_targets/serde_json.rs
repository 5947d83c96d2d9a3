//! JSON decoding of derived types: never panics; an ID is accepted exactly when the JSON
//! value is an integer or a string that the layout accepts (checked against
//! `serde_json::Value` and `FromStr` as the reference), it serializes as a string of its
//! digits, and it round-trips, alone, in an `Option`, in a list and in a struct.
#![no_main]

use std::fmt::Debug;
use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;
use typed_snowflake::SnowflakeId;
use typed_snowflake_fuzz::{OrderId, SmallId, SonyId, TweetId, check_valid};

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Row<T> {
    id: T,
    parent: Option<T>,
}

/// What the layout makes of one JSON value: `Some(raw)` when it must be accepted.
fn reference<T: SnowflakeId>(value: &Value) -> Option<i64> {
    match value {
        Value::String(text) => T::parse_str(text).ok().map(|id| id.to_raw()),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(v), _) => T::LAYOUT.validate(v).ok(),
            (None, Some(v)) => T::LAYOUT.validate_u64(v).ok(),
            _ => None,
        },
        _ => None,
    }
}

fn check<T>(text: &str, parsed: Option<&Value>)
where
    T: SnowflakeId + Debug + PartialEq + ToString + FromStr + Serialize + DeserializeOwned,
    <T as FromStr>::Err: Debug,
{
    let decoded = serde_json::from_str::<T>(text);
    if let Ok(id) = &decoded {
        check_valid(id);
        let json = serde_json::to_string(id).expect("an ID serializes");
        assert_eq!(json, format!("\"{}\"", id.to_raw()), "{} {id:?}", T::NAME);
        assert_eq!(&serde_json::from_str::<T>(&json).expect("its own JSON decodes"), id);
    }
    if let Some(value) = parsed {
        let expected = reference::<T>(value);
        let got = decoded.as_ref().ok().map(SnowflakeId::to_raw);
        assert_eq!(got, expected, "{} from {text:?}: {:?}", T::NAME, decoded.err().map(|e| e.to_string()));
    }

    // The same value inside containers never panics, and what decodes round-trips.
    if let Ok(ids) = serde_json::from_str::<Vec<Option<T>>>(text) {
        for id in ids.iter().flatten() {
            check_valid(id);
        }
        let json = serde_json::to_string(&ids).expect("serializes");
        assert_eq!(serde_json::from_str::<Vec<Option<T>>>(&json).expect("decodes"), ids);
    }
    if let Ok(row) = serde_json::from_str::<Row<T>>(text) {
        check_valid(&row.id);
        let json = serde_json::to_string(&row).expect("serializes");
        assert_eq!(serde_json::from_str::<Row<T>>(&json).expect("decodes"), row);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        // Not UTF-8: only "never panics" is asked.
        let _ = serde_json::from_slice::<OrderId>(data);
        return;
    };
    let parsed = serde_json::from_str::<Value>(text).ok();
    check::<OrderId>(text, parsed.as_ref());
    check::<TweetId>(text, parsed.as_ref());
    check::<SonyId>(text, parsed.as_ref());
    check::<SmallId>(text, parsed.as_ref());
});
