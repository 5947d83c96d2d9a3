//! Prefixed IDs (`#[snowflake(prefix = "ord")]`): the text form `ord_` + 13 lowercase base32
//! characters in `Display`, `FromStr` and serde; strict, helpful parsing; text order
//! is ID order; the integer (and so every store) unchanged; decimal text accepted during a
//! migration only when the type says so.

use proptest::prelude::*;
use typed_snowflake::prefixed::{self, ALPHABET, SUFFIX_LEN};
use typed_snowflake::{PrefixedIdError, SnowflakeId};

/// Twitter's layout: the reference vector 1724551110457221119 is one of its IDs.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
#[snowflake(prefix = "ord")]
struct OrderId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
struct UserId(i64);

/// A type moving from decimal strings: both forms are read, the prefixed one written.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
#[snowflake(prefix = "line_item", accept_decimal)]
struct LineItemId(i64);

/// All 64 bits (Discord's layout on a `u64`): IDs at or above 2^63 start with 8 to f.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[layout(preset = "discord")]
#[snowflake(prefix = "msg", decode_only)]
struct MessageId(u64);

/// A small layout (39 bits): most 13-character suffixes are out of it.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 31, worker = 2, seq = 6, epoch = "2024-01-01", unit = "1s")]
#[snowflake(prefix = "evt")]
struct EventId(i64);

const REFERENCE: i64 = 1_724_551_110_457_221_119;

#[test]
fn the_reference_id_in_every_text_form() -> Result<(), Box<dyn std::error::Error>> {
    let id = OrderId::try_from(REFERENCE)?;
    assert_eq!(id.to_string(), "ord_1fvpp347wxqzz");
    // `Debug` is the derive list's: a prefix leaves it alone.
    assert_eq!(format!("{id:?}"), "OrderId(1724551110457221119)");
    assert_eq!(format!("[{id:>20}]"), "[   ord_1fvpp347wxqzz]", "Display pads like a str");
    assert_eq!("ord_1fvpp347wxqzz".parse::<OrderId>()?, id);
    assert_eq!(OrderId::PREFIX, "ord");
    assert_eq!(<OrderId as SnowflakeId>::PREFIX, Some("ord"));
    assert_eq!(<UserId as SnowflakeId>::PREFIX, None);
    // The integer, and so every store, is unchanged.
    assert_eq!((id.get(), i64::from(id)), (REFERENCE, REFERENCE));
    assert_eq!(OrderId::parse_str("1724551110457221119")?, id, "the stored (decimal) form");
    assert_eq!(id.redis_member(), "1724551110457221119");
    assert_eq!((id.timestamp_ms(), id.worker(), id.sequence()), (1_700_000_000_000, 7 * 32 + 13, 4095));
    Ok(())
}

#[test]
fn the_wrong_prefix_names_both() -> Result<(), Box<dyn std::error::Error>> {
    let user = UserId::try_from(REFERENCE)?;
    let as_user = prefixed::format("usr", user.get());
    let err = as_user.parse::<OrderId>().unwrap_err();
    assert_eq!(err, PrefixedIdError::WrongPrefix { expected: "ord".into(), found: "usr".into() });
    assert_eq!(err.to_string(), "expected an ord_ ID, found usr_…");
    let err = "line_item_1fvpp347wxqzz".parse::<OrderId>().unwrap_err();
    assert_eq!(err.to_string(), "expected an ord_ ID, found line_item_…");
    let err = "ord_1fvpp347wxqzz".parse::<LineItemId>().unwrap_err();
    assert_eq!(err.to_string(), "expected a line_item_ ID, found ord_…");
    Ok(())
}

#[test]
fn hostile_text_is_an_error_that_says_why() {
    let says = |text: &str| match text.parse::<OrderId>() {
        Ok(id) => panic!("{text:?} parsed as {id}"),
        Err(e) => e.to_string(),
    };
    for (text, message) in [
        ("", "empty text is not an ID; expected an ord_ ID"),
        ("ord_", "An ord_ ID has 13 characters after `ord_`; found 0"),
        ("ord", "expected an ord_ ID, found \"ord\""),
        ("_", "expected an ord_ ID, found _…"),
        ("ord_1fvpp347wxqz", "An ord_ ID has 13 characters after `ord_`; found 12"),
        ("ord_1fvpp347wxqzzz", "An ord_ ID has 13 characters after `ord_`; found 14"),
        ("ord_01fvpp347wxqzz0000000000", "An ord_ ID has 13 characters after `ord_`; found 24"),
        (
            "ord_gzzzzzzzzzzzz",
            "'g' cannot start an ID: 13 characters hold 65 bits, so the first carries the top 4 and is 0 to f",
        ),
        ("ORD_1fvpp347wxqzz", "expected an ord_ ID, found ORD_… (prefixes are written in lowercase)"),
        ("Ord_1fvpp347wxqzz", "expected an ord_ ID, found Ord_… (prefixes are written in lowercase)"),
        ("ord_1FVPP347WXQZZ", "'F' at byte 5 is not a base32 character: IDs are written in lowercase"),
        (
            "ord_1fvpp347wxqzü",
            "'ü' at byte 16 is not a base32 character: an ID's characters are 0-9 and a-z without i, l, o, u",
        ),
        (
            "ord_1fvpp347wxqz😀",
            "'😀' at byte 16 is not a base32 character: an ID's characters are 0-9 and a-z without i, l, o, u",
        ),
        (
            "ord_1fvpp347wxqzi",
            "'i' at byte 16 is not a base32 character: the alphabet (Crockford's base32) leaves out i, l, o and u",
        ),
        (
            "ord_1fvpp347wxqzo",
            "'o' at byte 16 is not a base32 character: the alphabet (Crockford's base32) leaves out i, l, o and u",
        ),
        (
            "ord_1fvpp-347wxqz",
            "'-' at byte 9 is not a base32 character: an ID's characters are 0-9 and a-z without i, l, o, u",
        ),
        (" ord_1fvpp347wxqzz", "expected an ord_ ID, found  ord_…"),
        (
            "ord_1fvpp347wxqzz\n",
            "'\\n' at byte 17 is not a base32 character: an ID's characters are 0-9 and a-z without i, l, o, u",
        ),
        (
            "1724551110457221119",
            "found the bare number 1724551110457221119 where an ord_ ID belongs: it is written ord_1fvpp347wxqzz",
        ),
        ("0", "found the bare number 0 where an ord_ ID belongs: it is written ord_0000000000000"),
        (
            "9223372036854775808",
            "found the bare number 9223372036854775808 where an ord_ ID belongs (ord_ and 13 lowercase base32 characters)",
        ),
        ("-1", "expected an ord_ ID, found \"-1\""),
        ("ord_8000000000000", "9223372036854775808 sets bits above the layout's 63 bits; it is not an ID of this type"),
        (
            "ord_fzzzzzzzzzzzz",
            "18446744073709551615 sets bits above the layout's 63 bits; it is not an ID of this type",
        ),
    ] {
        assert_eq!(says(text), message, "{text:?}");
    }
    // Out of a small layout: the layout's own message.
    let err = "evt_0100000000000".parse::<EventId>().unwrap_err();
    assert!(matches!(err, PrefixedIdError::Layout(_)), "{err}");
    // Long hostile text is quoted shortly, never whole.
    let long = format!("{}_{}", "x".repeat(10_000), "0".repeat(13));
    assert!(says(&long).len() < 120, "{}", says(&long));
    let digits = "9".repeat(10_000);
    assert!(says(&digits).len() < 200);
}

#[test]
fn every_character_of_every_position_is_read_exactly() -> Result<(), Box<dyn std::error::Error>> {
    // Each of the 32 characters at each of the 12 low positions, under a first character
    // of 0: one ID each, and the text round-trips.
    for position in 1..SUFFIX_LEN {
        for (value, &c) in ALPHABET.iter().enumerate() {
            let mut suffix = [b'0'; SUFFIX_LEN];
            suffix[position] = c;
            let text = format!("ord_{}", std::str::from_utf8(&suffix)?);
            let id: OrderId = text.parse()?;
            let expected = i64::try_from(value)? << (5 * (SUFFIX_LEN - 1 - position));
            assert_eq!(id.get(), expected, "{text}");
            assert_eq!(id.to_string(), text);
        }
    }
    Ok(())
}

#[test]
fn a_u64_type_writes_its_high_ids_from_8_to_f() -> Result<(), Box<dyn std::error::Error>> {
    let top = MessageId::try_from(u64::MAX)?;
    assert_eq!(top.to_string(), "msg_fzzzzzzzzzzzz");
    let half = MessageId::try_from(1u64 << 63)?;
    assert_eq!(half.to_string(), "msg_8000000000000");
    let below = MessageId::try_from((1u64 << 63) - 1)?;
    assert_eq!(below.to_string(), "msg_7zzzzzzzzzzzz");
    assert!(below.to_string() < half.to_string() && half.to_string() < top.to_string());
    assert_eq!("msg_fzzzzzzzzzzzz".parse::<MessageId>()?, top);
    assert_eq!("msg_8000000000000".parse::<MessageId>()?, half);
    assert!("msg_gzzzzzzzzzzzz".parse::<MessageId>().is_err());
    Ok(())
}

#[test]
fn a_type_moving_from_decimal_reads_both_and_writes_the_prefix() -> Result<(), Box<dyn std::error::Error>> {
    let id = LineItemId::try_from(REFERENCE)?;
    assert_eq!(id.to_string(), "line_item_1fvpp347wxqzz");
    assert_eq!("1724551110457221119".parse::<LineItemId>()?, id);
    assert_eq!("line_item_1fvpp347wxqzz".parse::<LineItemId>()?, id);
    // Decimal text is still checked as decimal text.
    let err = "9223372036854775808".parse::<LineItemId>().unwrap_err();
    assert_eq!(err.to_string(), "the number is larger than i64::MAX (9223372036854775807)");
    assert!("".parse::<LineItemId>().is_err());
    assert!("-5".parse::<LineItemId>().is_err());
    // JSON: strings of either form, and numbers, in; the prefixed form out.
    assert_eq!(serde_json::from_str::<LineItemId>("\"1724551110457221119\"")?, id);
    assert_eq!(serde_json::from_str::<LineItemId>("1724551110457221119")?, id);
    assert_eq!(serde_json::from_str::<LineItemId>("\"line_item_1fvpp347wxqzz\"")?, id);
    assert_eq!(serde_json::to_string(&id)?, "\"line_item_1fvpp347wxqzz\"");
    Ok(())
}

#[test]
fn serde_writes_the_prefixed_string_and_reads_it_strictly() -> Result<(), Box<dyn std::error::Error>> {
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Order {
        id: OrderId,
        user: UserId,
        parent: Option<OrderId>,
    }
    let id = OrderId::try_from(REFERENCE)?;
    let order = Order { id, user: UserId::try_from(REFERENCE)?, parent: None };
    let json = serde_json::to_string(&order)?;
    assert_eq!(json, r#"{"id":"ord_1fvpp347wxqzz","user":"1724551110457221119","parent":null}"#);
    assert_eq!(serde_json::from_str::<Order>(&json)?, order);

    let says = |json: &str| serde_json::from_str::<OrderId>(json).unwrap_err().to_string();
    assert!(says("\"usr_1fvpp347wxqzz\"").starts_with("invalid OrderId: expected an ord_ ID, found usr_…"));
    assert!(says("\"1724551110457221119\"").contains("it is written ord_1fvpp347wxqzz"));
    // A JSON number is the decimal form: refused, with the same help.
    assert!(says("1724551110457221119").contains("it is written ord_1fvpp347wxqzz"), "{}", says("1724551110457221119"));
    assert!(says("-5").contains("expected an ord_ ID"), "{}", says("-5"));
    assert!(says("1.5").contains("invalid type: floating point"));
    assert!(says("null").contains("invalid type: null"));

    // Binary formats carry the integer, as for every type.
    let bytes = postcard::to_stdvec(&id)?;
    assert_eq!(postcard::from_bytes::<OrderId>(&bytes)?, id);
    assert_eq!(bytes, postcard::to_stdvec(&REFERENCE)?);
    // The adapters: `as_string` writes the text form, `as_number` the integer both ways.
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Adapted {
        #[serde(with = "typed_snowflake::serialization::as_string")]
        text: OrderId,
        #[serde(with = "typed_snowflake::serialization::as_number")]
        number: OrderId,
    }
    let adapted = Adapted { text: id, number: id };
    let json = serde_json::to_string(&adapted)?;
    assert_eq!(json, r#"{"text":"ord_1fvpp347wxqzz","number":1724551110457221119}"#);
    assert_eq!(serde_json::from_str::<Adapted>(&json)?, adapted);
    let bytes = postcard::to_stdvec(&adapted)?;
    assert_eq!(postcard::from_bytes::<Adapted>(&bytes)?, adapted);
    Ok(())
}

#[test]
fn generated_ids_sort_as_text_in_time_order() {
    let ids = OrderId::generate_batch(2000).expect("a batch");
    let mut texts: Vec<String> = ids.iter().map(ToString::to_string).collect();
    let issued = texts.clone();
    texts.sort();
    assert_eq!(texts, issued, "text order is issuing order");
    assert!(texts.iter().all(|t| t.len() == 4 + SUFFIX_LEN));
}

proptest! {
    #[test]
    fn every_id_round_trips(raw in 0i64..=i64::MAX) {
        let id = OrderId::try_from(raw).expect("every non-negative i64 is a Twitter-layout ID");
        let text = id.to_string();
        prop_assert_eq!(text.len(), 4 + SUFFIX_LEN);
        prop_assert!(text.as_bytes()[4] <= b'7', "{}", text);
        prop_assert_eq!(text.parse::<OrderId>(), Ok(id));
    }

    #[test]
    fn every_u64_round_trips(raw: u64) {
        let id = MessageId::try_from(raw).expect("every u64 is a Discord-layout ID");
        let text = id.to_string();
        prop_assert_eq!(text.parse::<MessageId>(), Ok(id));
    }

    #[test]
    fn text_order_is_numeric_order(a: u64, b: u64) {
        let (x, y) = (MessageId::try_from(a).expect("an ID"), MessageId::try_from(b).expect("an ID"));
        prop_assert_eq!(x.to_string().cmp(&y.to_string()), a.cmp(&b));
        prop_assert_eq!(x.to_string().cmp(&y.to_string()), x.cmp(&y));
    }

    #[test]
    fn no_text_panics_or_parses_to_another_spelling(text in "\\PC{0,30}|ord_[0-9a-zA-Z_]{0,16}") {
        if let Ok(id) = text.parse::<OrderId>() {
            // One spelling per ID: what parses is exactly what the ID writes.
            prop_assert_eq!(id.to_string(), text.clone());
        }
        if let Ok(id) = text.parse::<LineItemId>() {
            let spelled = id.to_string();
            prop_assert!(spelled == text || id.get().to_string().trim_start_matches('0') == text.trim_start_matches('0'));
        }
    }
}
