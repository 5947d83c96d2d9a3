//! The fast paths of both text forms (decimal digits eight at a time, base32 two characters per lookup,
//! the prefixed parse's one-pass decode) against plain reference implementations written
//! here, digit by digit: on random values and text, and on the edges (0, the largest IDs,
//! each digit count's first and last value, one past `i64::MAX` and `u64::MAX`, leading
//! zeros, signs, empty text, non-ASCII). Through the module APIs (`decimal`, `prefixed`,
//! `Layout::parse_id_bytes`) and through derived types' `Display`, `FromStr` and serde.

use proptest::prelude::*;
use typed_snowflake::prefixed::{self, Decimal};
use typed_snowflake::{Layout, ParseIdError, SnowflakeId};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
struct TweetId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
#[snowflake(prefix = "ord")]
struct OrderId(i64);

/// All 64 bits: decimal text up to `u64::MAX`, suffixes up to `fzzzzzzzzzzzz`.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(preset = "discord")]
#[snowflake(decode_only)]
struct MessageId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(preset = "discord")]
#[snowflake(prefix = "msg", decode_only)]
struct PrefixedMessageId(u64);

/// 39 bits: most values and texts are out of its layout.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 31, worker = 2, seq = 6, epoch = "2024-01-01", unit = "1s")]
#[snowflake(prefix = "line_item", accept_decimal)]
struct SmallId(i64);

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Decimal text by the rules, digit by digit: what `Layout::parse_id` returned before its
/// fast path, error for error.
fn reference_decimal(layout: &Layout, text: &str) -> Result<i64, ParseIdError> {
    let bytes = text.as_bytes();
    match bytes.first() {
        None => return Err(ParseIdError::Empty),
        Some(&sign @ (b'+' | b'-')) => return Err(ParseIdError::Sign { sign: char::from(sign) }),
        Some(_) => {}
    }
    if let Some(position) = bytes.iter().position(|b| !b.is_ascii_digit()) {
        let found = text[position..].chars().next().expect("a character at a boundary");
        return Err(ParseIdError::InvalidDigit { position, found });
    }
    let mut value: u128 = 0;
    for &b in bytes {
        value = (value * 10 + u128::from(b - b'0')).min(u128::from(u64::MAX) + 1);
    }
    let limit = if layout.fits_i64() { u128::from(i64::MAX.cast_unsigned()) } else { u128::from(u64::MAX) };
    if value > limit {
        return Err(if layout.fits_i64() { ParseIdError::Overflow } else { ParseIdError::OverflowU64 });
    }
    let value = u64::try_from(value).expect("at most u64::MAX");
    layout.validate_u64(value).map_err(ParseIdError::Layout)
}

/// The 13 characters of `value`, 5 bits at a time from the top.
fn reference_suffix(value: u64) -> String {
    (0..13).rev().map(|i| char::from(ALPHABET[((u128::from(value) >> (5 * i)) & 31) as usize])).collect()
}

/// Prefixed text by the rules: the prefix, `_`, 13 alphabet characters, at most 64 bits, in
/// the layout; with `accept_decimal`, decimal text too.
fn reference_prefixed(prefix: &str, layout: &Layout, decimal: Decimal, text: &str) -> Option<i64> {
    if decimal == Decimal::Accept && !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return reference_decimal(layout, text).ok();
    }
    let suffix = text.strip_prefix(prefix)?.strip_prefix('_')?;
    if suffix.len() != 13 {
        return None;
    }
    let mut value: u128 = 0;
    for b in suffix.bytes() {
        value = value * 32 + ALPHABET.iter().position(|&a| a == b)? as u128;
    }
    layout.validate_u64(u64::try_from(value).ok()?).ok()
}

/// Values at every edge: 0, 1, each digit count's first and last, the bit widths' last
/// values, `i64::MAX` and `u64::MAX` and their neighbours.
fn edge_values() -> Vec<u64> {
    let mut values = vec![0, 1, u64::MAX, u64::MAX - 1, i64::MAX.cast_unsigned(), 1 << 63, (1 << 63) + 1];
    let mut power = 1u64;
    while let Some(next) = power.checked_mul(10) {
        values.extend([power - 1, power, power + 1]);
        power = next;
    }
    values.extend([power - 1, power]);
    for bits in 1..64 {
        values.extend([(1u64 << bits) - 1, 1u64 << bits]);
    }
    values.push(1_724_551_110_457_221_119);
    values
}

/// Texts at every edge of both forms.
fn edge_texts() -> Vec<String> {
    let mut texts: Vec<String> = edge_values().iter().map(u64::to_string).collect();
    texts.extend(edge_values().iter().map(|v| format!("{v:0>20}")));
    texts.extend(edge_values().iter().map(|v| format!("{v:0>26}")));
    texts.extend(edge_values().iter().map(|v| format!("ord_{}", reference_suffix(*v))));
    texts.extend(edge_values().iter().map(|v| format!("msg_{}", reference_suffix(*v))));
    texts.extend(edge_values().iter().map(|v| format!("line_item_{}", reference_suffix(*v))));
    texts.extend(
        [
            "",
            "+",
            "-",
            "+1",
            "-1",
            "-0",
            " 1",
            "1 ",
            "0x1",
            "1_000",
            "1.0",
            "١٢٣",
            "12é",
            "é",
            "\u{0}",
            "9223372036854775807",
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "100000000000000000000",
            "00000000000000000000000042",
            "ord_",
            "ord",
            "ord_gzzzzzzzzzzzz",
            "ord_zzzzzzzzzzzzz",
            "ord_7zzzzzzzzzzzz",
            "ord_8000000000000",
            "ord_1fvpp347wxqzz",
            "ord_1FVPP347WXQZZ",
            "ORD_1fvpp347wxqzz",
            "ord_1fvpp347wxqz",
            "ord_1fvpp347wxqzzz",
            "ord_1fvpp347wxqzi",
            "ord_1fvpp347wxqzl",
            "ord_1fvpp347wxqzo",
            "ord_1fvpp347wxqzu",
            "ord_1fvpp347wxqz_",
            "ord_1fvpp347wxqzé",
            "ord_ord_1fvpp347wxqzz",
            "ordx1fvpp347wxqzz",
            "msg_fzzzzzzzzzzzz",
        ]
        .map(String::from),
    );
    texts
}

/// Every text check at once, for one text.
fn check_text(text: &str) {
    for layout in [Layout::TWITTER, Layout::DISCORD, SmallId::LAYOUT] {
        let expected = reference_decimal(&layout, text);
        assert_eq!(layout.parse_id(text), expected, "parse_id {text:?} on {layout}");
        assert_eq!(layout.parse_id_bytes(text.as_bytes()), expected, "parse_id_bytes {text:?} on {layout}");
    }
    assert_eq!(text.parse::<TweetId>().ok().map(|id| id.get()), reference_decimal(&Layout::TWITTER, text).ok());
    assert_eq!(text.parse::<MessageId>().ok().map(|id| id.get()), reference_decimal(&Layout::DISCORD, text).ok());
    let cases: [(&str, Layout, Decimal); 3] = [
        ("ord", OrderId::LAYOUT, Decimal::Refuse),
        ("msg", PrefixedMessageId::LAYOUT, Decimal::Refuse),
        ("line_item", SmallId::LAYOUT, Decimal::Accept),
    ];
    for (prefix, layout, decimal) in cases {
        let expected = reference_prefixed(prefix, &layout, decimal, text);
        let parsed = prefixed::parse(prefix, &layout, decimal, text);
        assert_eq!(parsed.as_ref().ok().copied(), expected, "{prefix}: {text:?} gave {parsed:?}");
        assert_eq!(prefixed::parse_bytes(prefix, &layout, decimal, text.as_bytes()), parsed, "bytes {text:?}");
        if let Err(e) = parsed {
            assert!(!e.to_string().is_empty());
        }
    }
    assert_eq!(
        text.parse::<OrderId>().ok().map(|id| id.get()),
        reference_prefixed("ord", &OrderId::LAYOUT, Decimal::Refuse, text)
    );
    assert_eq!(
        text.parse::<SmallId>().ok().map(|id| id.get()),
        reference_prefixed("line_item", &SmallId::LAYOUT, Decimal::Accept, text)
    );
    // JSON strings: the same answers.
    let json = serde_json::to_string(text).expect("a JSON string");
    assert_eq!(serde_json::from_str::<TweetId>(&json).ok(), text.parse::<TweetId>().ok(), "{json}");
    assert_eq!(serde_json::from_str::<OrderId>(&json).ok(), text.parse::<OrderId>().ok(), "{json}");
    assert_eq!(serde_json::from_str::<SmallId>(&json).ok(), text.parse::<SmallId>().ok(), "{json}");
}

/// Every write check at once, for one value.
fn check_value(value: u64) {
    let digits = typed_snowflake::decimal::Written::new(value);
    assert_eq!(digits.as_str(), value.to_string());
    assert_eq!(digits.as_bytes(), value.to_string().as_bytes());
    let raw = value.cast_signed();
    assert_eq!(String::from_utf8(prefixed::encode_suffix(raw).to_vec()).ok(), Some(reference_suffix(value)));
    assert_eq!(prefixed::decode_suffix(&prefixed::encode_suffix(raw)), Some(value));
    let written = prefixed::Written::new("line_item", raw);
    assert_eq!(written.as_str(), format!("line_item_{}", reference_suffix(value)));
    assert_eq!(written.as_bytes(), written.as_str().as_bytes());
    if let Ok(id) = MessageId::try_from(value) {
        assert_eq!(id.to_string(), value.to_string());
        assert_eq!(serde_json::to_string(&id).ok(), Some(format!("\"{value}\"")));
        assert_eq!(id.to_string().parse::<MessageId>().ok(), Some(id));
        let prefixed = PrefixedMessageId::try_from(value).expect("the same layout");
        assert_eq!(prefixed.to_string(), format!("msg_{}", reference_suffix(value)));
        assert_eq!(serde_json::to_string(&prefixed).ok(), Some(format!("\"msg_{}\"", reference_suffix(value))));
        assert_eq!(prefixed.to_string().parse::<PrefixedMessageId>().ok(), Some(prefixed));
    }
    if let Ok(id) = TweetId::from_u64(value) {
        assert_eq!(serde_json::to_string(&id).ok(), Some(format!("\"{value}\"")));
        let prefixed = OrderId::from_u64(value).expect("the same layout");
        assert_eq!(
            serde_json::from_str::<OrderId>(&serde_json::to_string(&prefixed).expect("writes")).ok(),
            Some(prefixed)
        );
    }
}

#[test]
fn the_edges_agree_with_the_references() {
    for value in edge_values() {
        check_value(value);
    }
    for text in edge_texts() {
        check_text(&text);
    }
}

#[test]
fn every_byte_in_every_position_agrees() {
    // One byte changed, anywhere in a 19-digit decimal and a prefixed text, to every value.
    for base in ["1724551110457221119", "ord_1fvpp347wxqzz", "line_item_000000001fvpp"] {
        for at in 0..base.len() {
            for byte in 0..=255u8 {
                let mut bytes = base.as_bytes().to_vec();
                bytes[at] = byte;
                match String::from_utf8(bytes.clone()) {
                    Ok(text) => check_text(&text),
                    Err(_) => {
                        // Not UTF-8: refused by the byte readers, as the lossy text is.
                        assert!(Layout::TWITTER.parse_id_bytes(&bytes).is_err());
                        let lossy = String::from_utf8_lossy(&bytes);
                        assert_eq!(
                            prefixed::parse_bytes("ord", &Layout::TWITTER, Decimal::Refuse, &bytes),
                            prefixed::parse("ord", &Layout::TWITTER, Decimal::Refuse, &lossy)
                        );
                    }
                }
            }
        }
    }
}

proptest! {
    #[test]
    fn random_values_agree(value: u64, bits in 0u32..64) {
        check_value(value);
        check_value(value >> bits);
    }

    #[test]
    fn random_digits_agree(text in "[0-9]{0,24}") {
        check_text(&text);
    }

    #[test]
    fn random_near_texts_agree(text in "(ord_|msg_|line_item_|[+-])?[0-9a-zA-Z_é ]{0,16}") {
        check_text(&text);
    }

    #[test]
    fn random_prefixed_texts_agree(value: u64, prefix in "(ord|msg|line_item|usr)") {
        check_text(&format!("{prefix}_{}", reference_suffix(value)));
    }

    #[test]
    fn random_bytes_agree(bytes in proptest::collection::vec(any::<u8>(), 0..24)) {
        if let Ok(text) = String::from_utf8(bytes.clone()) {
            check_text(&text);
        } else {
            prop_assert!(Layout::DISCORD.parse_id_bytes(&bytes).is_err());
            prop_assert!(prefixed::parse_bytes("ord", &Layout::DISCORD, Decimal::Accept, &bytes).is_err());
        }
    }
}
