//! The `serde` integration: decimal strings in JSON, plain integers in postcard, the
//! `with` adapters, and hostile input of every kind, each an error that says why.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::de::value::Error as ValueError;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
struct FlatTweetId(u64);

/// 42 bits: anything at or above 2^42 is not one of these.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 30, worker = 4, seq = 8, epoch = "2024-01-01")]
#[snowflake(decode_only)] // the time field ran out long ago: a type that decodes only
struct SmallId(i64);

const REFERENCE: i64 = 1_724_551_110_457_221_119;

type Res = Result<(), Box<dyn std::error::Error>>;

fn json_err<T: for<'de> Deserialize<'de> + std::fmt::Debug>(input: &str) -> String {
    match serde_json::from_str::<T>(input) {
        Ok(value) => panic!("{input} was accepted as {value:?}"),
        Err(e) => e.to_string(),
    }
}

#[track_caller]
fn assert_contains(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{message:?} does not contain {part:?}");
    }
}

// ---------------------------------------------------------------- JSON output

#[test]
fn json_writes_a_string_of_digits() -> Res {
    let id = FlatTweetId::try_from(REFERENCE)?;
    assert_eq!(serde_json::to_string(&id)?, r#""1724551110457221119""#);
    assert_eq!(serde_json::to_string(&OrderId::try_from(0i64)?)?, r#""0""#);
    assert_eq!(serde_json::to_string(&OrderId::try_from(7i64)?)?, r#""7""#);
    assert_eq!(serde_json::to_string(&OrderId::try_from(i64::MAX)?)?, r#""9223372036854775807""#);
    assert_eq!(serde_json::to_value(id)?, serde_json::Value::String("1724551110457221119".into()));
    Ok(())
}

#[test]
fn json_string_matches_display_at_every_length() -> Res {
    let mut value = 1i64;
    loop {
        for v in [value - 1, value, value + 1] {
            let id = OrderId::try_from(v)?;
            assert_eq!(serde_json::to_string(&id)?, format!("\"{id}\""));
        }
        match value.checked_mul(10) {
            Some(next) => value = next,
            None => break,
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- JSON input

#[test]
fn json_reads_a_string_or_an_integer() -> Res {
    let id = OrderId::try_from(REFERENCE)?;
    assert_eq!(serde_json::from_str::<OrderId>(r#""1724551110457221119""#)?, id);
    assert_eq!(serde_json::from_str::<OrderId>("1724551110457221119")?, id);
    // A u64 field reads the same text, and the largest 63-bit value as a u64 JSON number.
    let flat = FlatTweetId::try_from(REFERENCE)?;
    assert_eq!(serde_json::from_str::<FlatTweetId>(r#""1724551110457221119""#)?, flat);
    assert_eq!(serde_json::from_str::<FlatTweetId>("1724551110457221119")?, flat);
    assert_eq!(serde_json::from_str::<OrderId>("9223372036854775807")?.get(), i64::MAX);
    // Leading zeros, as in zero-padded Redis members; JSON escapes are resolved first.
    assert_eq!(serde_json::from_str::<OrderId>(r#""0000000000000000042""#)?.get(), 42);
    assert_eq!(serde_json::from_str::<OrderId>(r#""\u0034\u0032""#)?.get(), 42);
    // From an owned string (a reader) and from a serde_json::Value.
    assert_eq!(serde_json::from_reader::<_, OrderId>(&br#""42""#[..])?.get(), 42);
    assert_eq!(serde_json::from_value::<OrderId>(serde_json::json!("42"))?.get(), 42);
    assert_eq!(serde_json::from_value::<OrderId>(serde_json::json!(42))?.get(), 42);
    Ok(())
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Order {
    id: OrderId,
    parent: Option<OrderId>,
    #[serde(default)]
    merged: Option<OrderId>,
    lines: Vec<OrderId>,
    by_id: BTreeMap<OrderId, u32>,
}

#[test]
fn json_struct_option_vec_and_map_keys() -> Res {
    let a = OrderId::try_from(REFERENCE)?;
    let b = OrderId::try_from(42i64)?;
    let order =
        Order { id: a, parent: Some(b), merged: None, lines: vec![a, b], by_id: BTreeMap::from([(b, 1), (a, 2)]) };
    let json = serde_json::to_string(&order)?;
    assert_eq!(
        json,
        r#"{"id":"1724551110457221119","parent":"42","merged":null,"lines":["1724551110457221119","42"],"by_id":{"42":1,"1724551110457221119":2}}"#
    );
    assert_eq!(serde_json::from_str::<Order>(&json)?, order);

    // Numbers in, a missing Option, a null Option.
    let mixed = r#"{"id":1724551110457221119,"parent":null,"lines":[42,"1724551110457221119"],"by_id":{"42":1}}"#;
    let back: Order = serde_json::from_str(mixed)?;
    assert_eq!(back.id, a);
    assert_eq!((back.parent, back.merged), (None, None));
    assert_eq!(back.lines, vec![b, a]);
    assert_eq!(back.by_id, BTreeMap::from([(b, 1)]));

    // One bad element spoils the whole value, with the reason and the place.
    let bad = r#"{"id":"1","parent":null,"lines":["1","-2"],"by_id":{}}"#;
    assert_contains(&json_err::<Order>(bad), &["invalid OrderId", "without a sign", "line 1 column"]);
    let bad_key = r#"{"id":"1","parent":null,"lines":[],"by_id":{"x":1}}"#;
    assert_contains(&json_err::<Order>(bad_key), &["found 'x' at byte 0"]);
    assert_contains(&json_err::<Vec<OrderId>>("[null]"), &["invalid type: null"]);
    Ok(())
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Envelope {
    kind: String,
    #[serde(flatten)]
    body: Body,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Body {
    order: OrderId,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(tag = "type")]
enum Event {
    Created { id: OrderId },
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum Either {
    Id(OrderId),
    Word(String),
}

/// Flattened fields and tagged enums are buffered by serde before they reach the ID: the
/// same string-or-number input and the same checks apply.
#[test]
fn json_through_serde_buffering() -> Res {
    let id = OrderId::try_from(REFERENCE)?;
    let env = Envelope { kind: "order".into(), body: Body { order: id } };
    let json = serde_json::to_string(&env)?;
    assert_eq!(json, r#"{"kind":"order","order":"1724551110457221119"}"#);
    assert_eq!(serde_json::from_str::<Envelope>(&json)?, env);
    assert_eq!(serde_json::from_str::<Envelope>(r#"{"kind":"order","order":1724551110457221119}"#)?, env);
    assert_contains(&json_err::<Envelope>(r#"{"kind":"order","order":"-1"}"#), &["without a sign"]);

    let event = Event::Created { id };
    let json = serde_json::to_string(&event)?;
    assert_eq!(json, r#"{"type":"Created","id":"1724551110457221119"}"#);
    assert_eq!(serde_json::from_str::<Event>(&json)?, event);
    assert_contains(&json_err::<Event>(r#"{"type":"Created","id":-1}"#), &["-1 is negative"]);

    // Untagged: an ID where it is one, the next variant where it is not.
    assert_eq!(serde_json::from_str::<Either>(r#""42""#)?, Either::Id(OrderId::try_from(42i64)?));
    assert_eq!(serde_json::from_str::<Either>(r#""-42""#)?, Either::Word("-42".into()));
    Ok(())
}

// ---------------------------------------------------------------- hostile JSON

#[test]
fn hostile_json_is_an_error_that_says_why() {
    let cases: &[(&str, &[&str])] = &[
        ("-5", &["invalid OrderId", "-5 is negative"]),
        (r#""-5""#, &["invalid OrderId", "without a sign; found '-'"]),
        (r#""+5""#, &["invalid OrderId", "without a sign; found '+'"]),
        (r#""x""#, &["invalid OrderId", "decimal digits; found 'x' at byte 0"]),
        (r#""""#, &["invalid OrderId", "empty text is not an ID"]),
        (r#"" 1""#, &["invalid OrderId", "found ' ' at byte 0"]),
        (r#""1 ""#, &["invalid OrderId", "found ' ' at byte 1"]),
        (r#""1.5""#, &["found '.' at byte 1"]),
        (r#""1e3""#, &["found 'e' at byte 1"]),
        (r#""0x10""#, &["found 'x' at byte 1"]),
        (r#""١""#, &["found '١' at byte 0"]),
        (r#""99999999999999999999""#, &["invalid OrderId", "larger than i64::MAX"]),
        (r#""9223372036854775808""#, &["invalid OrderId", "larger than i64::MAX"]),
        ("9223372036854775808", &["invalid OrderId", "9223372036854775808 sets bits above the layout's 63 bits"]),
        ("18446744073709551615", &["18446744073709551615 sets bits above the layout's 63 bits"]),
        ("-9223372036854775808", &["-9223372036854775808 is negative"]),
        // Beyond u64, serde_json reads a float: refused as a float, never rounded into an ID.
        ("99999999999999999999", &["invalid type: floating point", "expected a Snowflake ID (OrderId)"]),
        ("1.5", &["invalid type: floating point `1.5`", "expected a Snowflake ID (OrderId)"]),
        ("1e3", &["invalid type: floating point"]),
        ("null", &["invalid type: null", "expected a Snowflake ID (OrderId)"]),
        ("true", &["invalid type: boolean `true`"]),
        ("[]", &["invalid type: sequence"]),
        ("{}", &["invalid type: map"]),
        (r#"["1"]"#, &["invalid type: sequence"]),
        ("", &["EOF"]),
    ];
    for (input, expected) in cases {
        let message = json_err::<OrderId>(input);
        assert_contains(&message, expected);
    }
}

#[test]
fn hostile_json_out_of_a_small_layout() -> Res {
    let max = SmallId::LAYOUT.max_id();
    assert_eq!(max, (1 << 42) - 1);
    assert_eq!(serde_json::from_str::<SmallId>(&max.to_string())?.get(), max);
    assert_eq!(serde_json::from_str::<SmallId>(&format!("\"{max}\""))?.get(), max);
    let over = max + 1;
    for input in [over.to_string(), format!("\"{over}\""), REFERENCE.to_string(), format!("\"{REFERENCE}\"")] {
        assert_contains(&json_err::<SmallId>(&input), &["invalid SmallId", "sets bits above the layout's 42 bits"]);
    }
    // A u64 field refuses the sign as firmly as an i64 one.
    assert_contains(&json_err::<FlatTweetId>("-1"), &["invalid FlatTweetId", "-1 is negative"]);
    Ok(())
}

// ---------------------------------------------------------------- adapters

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Numbers {
    #[serde(with = "typed_snowflake::serialization::as_number")]
    id: OrderId,
    #[serde(default, with = "typed_snowflake::serialization::as_number_option")]
    parent: Option<OrderId>,
}

#[test]
fn as_number_writes_numbers_and_reads_both() -> Res {
    let row = Numbers { id: OrderId::try_from(REFERENCE)?, parent: Some(OrderId::try_from(42i64)?) };
    let json = serde_json::to_string(&row)?;
    assert_eq!(json, r#"{"id":1724551110457221119,"parent":42}"#);
    assert_eq!(serde_json::from_str::<Numbers>(&json)?, row);
    assert_eq!(serde_json::from_str::<Numbers>(r#"{"id":"1724551110457221119","parent":"42"}"#)?, row);

    let none = Numbers { id: OrderId::try_from(1i64)?, parent: None };
    assert_eq!(serde_json::to_string(&none)?, r#"{"id":1,"parent":null}"#);
    assert_eq!(serde_json::from_str::<Numbers>(r#"{"id":1,"parent":null}"#)?, none);
    assert_eq!(serde_json::from_str::<Numbers>(r#"{"id":1}"#)?, none);

    // The adapters check exactly as the derived impls do.
    assert_contains(&json_err::<Numbers>(r#"{"id":-5}"#), &["-5 is negative"]);
    assert_contains(&json_err::<Numbers>(r#"{"id":1,"parent":-5}"#), &["-5 is negative"]);
    assert_contains(&json_err::<Numbers>(r#"{"id":1,"parent":"x"}"#), &["found 'x' at byte 0"]);
    assert_contains(&json_err::<Numbers>(r#"{"id":1,"parent":1.5}"#), &["invalid type: floating point `1.5`"]);
    assert_contains(&json_err::<Numbers>(r#"{"id":null}"#), &["invalid type: null"]);
    assert_contains(&json_err::<Numbers>(r#"{"parent":1}"#), &["missing field `id`"]);

    // In postcard, as_number is the plain i64 and the Option its usual tag.
    let bytes = postcard::to_stdvec(&row)?;
    assert_eq!(bytes, postcard::to_stdvec(&(REFERENCE, Some(42i64)))?);
    assert_eq!(postcard::from_bytes::<Numbers>(&bytes)?, row);
    Ok(())
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Strings {
    #[serde(with = "typed_snowflake::serialization::as_string")]
    id: OrderId,
}

#[test]
fn as_string_writes_strings_even_in_binary() -> Res {
    let row = Strings { id: OrderId::try_from(REFERENCE)? };
    let bytes = postcard::to_stdvec(&row)?;
    assert_eq!(bytes, postcard::to_stdvec(&"1724551110457221119")?);
    assert_eq!(postcard::from_bytes::<Strings>(&bytes)?, row);
    assert_eq!(serde_json::to_string(&row)?, r#"{"id":"1724551110457221119"}"#);
    assert_eq!(serde_json::from_str::<Strings>(r#"{"id":1724551110457221119}"#)?, row);

    for bad in ["-5", "", " 1", "99999999999999999999"] {
        let bytes = postcard::to_stdvec(&bad)?;
        assert_eq!(postcard::from_bytes::<Strings>(&bytes), Err(postcard::Error::SerdeDeCustom), "{bad:?}");
    }
    // Not UTF-8: postcard's own refusal.
    assert_eq!(postcard::from_bytes::<Strings>(&[2, 0xFF, 0xFE]), Err(postcard::Error::DeserializeBadUtf8));
    Ok(())
}

// ---------------------------------------------------------------- postcard

#[test]
fn postcard_is_the_plain_i64_encoding() -> Res {
    for raw in [0, 1, 63, 64, 300, REFERENCE, i64::MAX] {
        let id = OrderId::try_from(raw)?;
        let bytes = postcard::to_stdvec(&id)?;
        assert_eq!(bytes, postcard::to_stdvec(&raw)?, "{raw}");
        assert_eq!(postcard::from_bytes::<OrderId>(&bytes)?, id);
    }
    // A u64 field is written as the same i64: one wire format whatever the field type.
    let flat = FlatTweetId::try_from(REFERENCE)?;
    assert_eq!(postcard::to_stdvec(&flat)?, postcard::to_stdvec(&REFERENCE)?);
    assert_eq!(postcard::from_bytes::<FlatTweetId>(&postcard::to_stdvec(&REFERENCE)?)?, flat);

    let order = Order {
        id: OrderId::try_from(REFERENCE)?,
        parent: None,
        merged: Some(OrderId::try_from(5i64)?),
        lines: vec![OrderId::try_from(1i64)?, OrderId::try_from(i64::MAX)?],
        by_id: BTreeMap::from([(OrderId::try_from(9i64)?, 3)]),
    };
    assert_eq!(postcard::from_bytes::<Order>(&postcard::to_stdvec(&order)?)?, order);
    Ok(())
}

#[test]
fn hostile_postcard_bytes_are_errors() -> Res {
    // Valid varints that are not IDs: refused by the layout check (postcard keeps no message).
    for raw in [-1i64, -5, i64::MIN] {
        let bytes = postcard::to_stdvec(&raw)?;
        assert_eq!(postcard::from_bytes::<OrderId>(&bytes), Err(postcard::Error::SerdeDeCustom), "{raw}");
        assert_eq!(postcard::from_bytes::<FlatTweetId>(&bytes), Err(postcard::Error::SerdeDeCustom), "{raw}");
    }
    for raw in [1i64 << 42, REFERENCE, i64::MAX] {
        let bytes = postcard::to_stdvec(&raw)?;
        assert_eq!(postcard::from_bytes::<SmallId>(&bytes), Err(postcard::Error::SerdeDeCustom), "{raw}");
    }
    // Broken framing: postcard's own errors.
    assert_eq!(postcard::from_bytes::<OrderId>(&[]), Err(postcard::Error::DeserializeUnexpectedEnd));
    assert_eq!(postcard::from_bytes::<OrderId>(&[0x80]), Err(postcard::Error::DeserializeUnexpectedEnd));
    assert_eq!(postcard::from_bytes::<OrderId>(&[0xFF; 11]), Err(postcard::Error::DeserializeBadVarint));
    Ok(())
}

/// A binary (not human-readable) deserializer holding one value, that refuses
/// `deserialize_any` as postcard and bincode do, and keeps error messages (postcard does not).
struct Binary(Value);

enum Value {
    I64(i64),
    U64(u64),
    Str(&'static str),
}

impl<'de> Deserializer<'de> for Binary {
    type Error = ValueError;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, ValueError> {
        Err(de::Error::custom("deserialize_any is not supported by this format"))
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.0 {
            Value::I64(v) => visitor.visit_i64(v),
            Value::U64(v) => visitor.visit_u64(v),
            Value::Str(v) => visitor.visit_borrowed_str(v),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        self.deserialize_i64(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i128 u8 u16 u32 u64 u128 f32 f64 char string bytes byte_buf option unit unit_struct
        newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

#[test]
fn binary_formats_are_asked_for_an_i64_and_checked() -> Res {
    let ok: OrderId = OrderId::deserialize(Binary(Value::I64(REFERENCE)))?;
    assert_eq!(ok.get(), REFERENCE);
    // Formats that hand out a u64 or a string for the i64 asked for are checked too.
    assert_eq!(OrderId::deserialize(Binary(Value::U64(42)))?.get(), 42);
    assert_eq!(OrderId::deserialize(Binary(Value::Str("42")))?.get(), 42);

    let err = |value: Value| SmallId::deserialize(Binary(value)).map(|id| id.get()).unwrap_err().to_string();
    assert_contains(&err(Value::I64(-5)), &["invalid SmallId", "-5 is negative"]);
    assert_contains(
        &err(Value::I64(1 << 42)),
        &["invalid SmallId", "4398046511104 sets bits above the layout's 42 bits"],
    );
    assert_contains(&err(Value::U64(1 << 63)), &["9223372036854775808 sets bits above"]);
    assert_contains(&err(Value::Str("-5")), &["without a sign"]);

    // as_string asks a binary format for a string.
    let id: OrderId = typed_snowflake::serialization::as_string::deserialize(Binary(Value::Str("7")))?;
    assert_eq!(id.get(), 7);
    Ok(())
}

// ---------------------------------------------------------------- properties

proptest! {
    #[test]
    fn any_valid_id_round_trips(raw in 0..=i64::MAX, small in 0..=SmallId::LAYOUT.max_id()) {
        let id = OrderId::try_from(raw).unwrap();
        let json = serde_json::to_string(&id).unwrap();
        prop_assert_eq!(&json, &format!("\"{raw}\""));
        prop_assert_eq!(serde_json::from_str::<OrderId>(&json).unwrap(), id);
        prop_assert_eq!(serde_json::from_str::<OrderId>(&raw.to_string()).unwrap(), id);
        prop_assert_eq!(postcard::from_bytes::<OrderId>(&postcard::to_stdvec(&id).unwrap()).unwrap(), id);

        let small = SmallId::try_from(small).unwrap();
        prop_assert_eq!(serde_json::from_str::<SmallId>(&serde_json::to_string(&small).unwrap()).unwrap(), small);
    }

    #[test]
    fn any_negative_or_out_of_layout_value_is_refused(negative in i64::MIN..0, over in (1i64 << 42)..=i64::MAX) {
        let quoted = format!("\"{negative}\"");
        prop_assert!(serde_json::from_str::<OrderId>(&negative.to_string()).is_err());
        prop_assert!(serde_json::from_str::<OrderId>(&quoted).is_err());
        prop_assert!(postcard::from_bytes::<OrderId>(&postcard::to_stdvec(&negative).unwrap()).is_err());
        prop_assert!(serde_json::from_str::<SmallId>(&over.to_string()).is_err());
        let quoted = format!("\"{over}\"");
        prop_assert!(serde_json::from_str::<SmallId>(&quoted).is_err());
        prop_assert!(postcard::from_bytes::<SmallId>(&postcard::to_stdvec(&over).unwrap()).is_err());
    }

    #[test]
    fn any_string_is_an_id_or_an_error_never_a_panic(text in "\\PC{0,24}") {
        let json = serde_json::to_string(&text).unwrap();
        match serde_json::from_str::<OrderId>(&json) {
            Ok(id) => prop_assert_eq!(Ok(id), text.parse::<OrderId>()),
            Err(e) => prop_assert!(text.parse::<OrderId>().is_err(), "{}", e),
        }
    }
}
