//! Keyed public IDs: any text decodes to an error or to an ID whose public string is
//! exactly that text (never a panic), for unversioned, versioned and tweaked keys; and
//! any 64-bit value survives the trip through its public string.
#![no_main]

use std::sync::LazyLock;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use typed_snowflake::public::from_public_any;
use typed_snowflake::{PublicIdKey, SnowflakeId};
use typed_snowflake_fuzz::{OrderId, SmallId, TweetId, check_valid};

static KEYS: LazyLock<[PublicIdKey; 3]> = LazyLock::new(|| {
    [
        PublicIdKey::from_bytes([0x5A; 32]),
        PublicIdKey::from_slice(&[0xA5; 16]).expect("16 bytes").with_version(1).expect("0..64"),
        PublicIdKey::from_bytes([0x3C; 32]).with_tweak(b"orders").with_version(2).expect("0..64"),
    ]
});

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    text: &'a str,
    value: u64,
}

fn check<T>(text: &str, key: &PublicIdKey)
where
    T: SnowflakeId + std::fmt::Debug + PartialEq + ToString + std::str::FromStr,
    <T as std::str::FromStr>::Err: std::fmt::Debug,
{
    match T::from_public(text, key) {
        Ok(id) => {
            check_valid(&id);
            assert_eq!(id.to_public(key), text, "{} {id:?}", T::NAME);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

fuzz_target!(|input: Input<'_>| {
    for key in KEYS.iter() {
        check::<OrderId>(input.text, key);
        check::<SmallId>(input.text, key);
        check::<TweetId>(input.text, key);
        let text = key.encode(input.value);
        assert_eq!(text.len(), key.public_len());
        assert_eq!(key.decode(&text), Ok(input.value));
    }
    let [plain, v1, v2] = &*KEYS;
    if let Ok(id) = from_public_any::<OrderId>(input.text, &[v1, v2]) {
        assert!(id.to_public(v1) == input.text || id.to_public(v2) == input.text);
    }
    let _ = from_public_any::<OrderId>(input.text, &[v1, plain]);
});
