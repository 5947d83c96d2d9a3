//! Both text forms of an ID (decimal digits, and the prefixed `ord_` + 13 base32 characters)
//! written and read, beside ferroid's base32, `itoa` and std for decimal, and the text forms
//! of uuid and ulid: on the same 1 024 IDs of Twitter's layout, in one run. Every case is a
//! pass over the 1 024 IDs; the table printed at the end gives nanoseconds per ID and the
//! ratio to the peer of each group.
//!
//! ```text
//! cargo bench -p typed-snowflake-benches --bench text                  # criterion, then the table
//! cargo bench -p typed-snowflake-benches --bench text -- --instructions # each case once per pass, no criterion
//! ```
//!
//! `--instructions` runs each case the same number of passes without criterion, so that
//! `valgrind --tool=callgrind` counts instructions per case (each case is a function of its
//! own, `case_…`): see BENCHMARKS.md for the command that turns the counts into a table.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::SystemTime;

use criterion::Criterion;
use ferroid::base32::Base32SnowExt;
use ferroid::id::SnowflakeTwitterId;
use typed_snowflake::prefixed::{self, Decimal};
use typed_snowflake::{Layout, SnowflakeId};

/// Twitter's layout, written in decimal.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(preset = "twitter")]
struct TweetId(i64);

/// The same layout, written `ord_…`.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(preset = "twitter")]
#[snowflake(prefix = "ord")]
struct OrderId(i64);

/// IDs per pass.
const N: usize = 1024;

/// The 1 024 IDs and every text of them, made once.
struct Data {
    raw: Vec<i64>,
    tweet: Vec<TweetId>,
    order: Vec<OrderId>,
    ferroid: Vec<SnowflakeTwitterId>,
    uuid: Vec<uuid::Uuid>,
    ulid: Vec<ulid::Ulid>,
    decimal_text: Vec<String>,
    prefixed_text: Vec<String>,
    ferroid_text: Vec<String>,
    uuid_text: Vec<String>,
    ulid_text: Vec<String>,
    decimal_json: Vec<String>,
    prefixed_json: Vec<String>,
    number_json: Vec<String>,
}

impl Data {
    /// Real IDs: a day of timestamps up to 2026-12-01, every datacenter and machine,
    /// sequences mostly low (as a tick's first IDs are), from a fixed seed.
    fn new() -> Self {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            state >> 11
        };
        let end_ms = 1_764_547_200_000;
        let tweet: Vec<TweetId> = (0..N)
            .map(|_| {
                let ms = end_ms - i64::try_from(next() % 86_400_000).expect("a day fits");
                let seq = if next() % 4 == 0 { next() % 4096 } else { next() % 8 };
                TweetId::from_node_parts(ms, next() % 32, next() % 32, seq).expect("in the layout")
            })
            .collect();
        let raw: Vec<i64> = tweet.iter().map(TweetId::get).collect();
        let order: Vec<OrderId> = raw.iter().map(|&r| OrderId::try_from(r).expect("same layout")).collect();
        let ferroid: Vec<SnowflakeTwitterId> =
            raw.iter().map(|&r| SnowflakeTwitterId::from_raw(r.cast_unsigned())).collect();
        let uuid: Vec<uuid::Uuid> = raw
            .iter()
            .map(|&r| {
                let ms = u64::try_from(TweetId::try_from(r).expect("an ID").timestamp_ms()).expect("after 1970");
                let mut random = [0u8; 10];
                random[..8].copy_from_slice(&r.to_le_bytes());
                uuid::Builder::from_unix_timestamp_millis(ms, &random).into_uuid()
            })
            .collect();
        let ulid: Vec<ulid::Ulid> = raw
            .iter()
            .map(|&r| {
                let ms = u64::try_from(TweetId::try_from(r).expect("an ID").timestamp_ms()).expect("after 1970");
                ulid::Ulid::from_parts(ms, u128::from(r.cast_unsigned()) * 0x1_0000_0001)
            })
            .collect();
        Self {
            decimal_text: tweet.iter().map(ToString::to_string).collect(),
            prefixed_text: order.iter().map(ToString::to_string).collect(),
            ferroid_text: ferroid.iter().map(|id| id.encode().to_string()).collect(),
            uuid_text: uuid.iter().map(ToString::to_string).collect(),
            ulid_text: ulid.iter().map(ToString::to_string).collect(),
            decimal_json: tweet.iter().map(|id| serde_json::to_string(id).expect("writes")).collect(),
            prefixed_json: order.iter().map(|id| serde_json::to_string(id).expect("writes")).collect(),
            number_json: raw.iter().map(|r| serde_json::to_string(&r.cast_unsigned()).expect("writes")).collect(),
            raw,
            tweet,
            order,
            ferroid,
            uuid,
            ulid,
        }
    }
}

// Each case is one pass over the IDs, in a function of its own (named for callgrind), and
// returns something that depends on every ID's result so that nothing is optimised away.

// Encode onto the stack.
#[inline(never)]
fn case_encode_prefixed(d: &Data) -> usize {
    d.raw.iter().map(|&r| black_box(prefixed::Written::new("ord", black_box(r))).as_bytes().len()).sum()
}
#[inline(never)]
fn case_encode_prefixed_suffix(d: &Data) -> usize {
    d.raw.iter().map(|&r| usize::from(black_box(prefixed::encode_suffix(black_box(r)))[12])).sum()
}
#[inline(never)]
fn case_encode_ferroid(d: &Data) -> usize {
    let mut buf = SnowflakeTwitterId::base32_array();
    d.ferroid
        .iter()
        .map(|id| {
            black_box(id).encode_to_buf(&mut buf);
            usize::from(black_box(&buf)[12])
        })
        .sum()
}
#[inline(never)]
fn case_encode_decimal(d: &Data) -> usize {
    d.raw
        .iter()
        .map(|&r| black_box(typed_snowflake::decimal::Written::new(black_box(r).cast_unsigned())).as_bytes().len())
        .sum()
}
#[inline(never)]
fn case_encode_itoa(d: &Data) -> usize {
    let mut buf = itoa::Buffer::new();
    d.raw.iter().map(|&r| black_box(buf.format(black_box(r).cast_unsigned())).len()).sum()
}
#[inline(never)]
fn case_encode_uuid(d: &Data) -> usize {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    d.uuid.iter().map(|u| black_box(black_box(u).hyphenated().encode_lower(&mut buf)).len()).sum()
}
#[inline(never)]
fn case_encode_ulid(d: &Data) -> usize {
    let mut buf = [0u8; ulid::ULID_LEN];
    d.ulid.iter().map(|u| black_box(black_box(u).array_to_str(&mut buf)).len()).sum()
}

// `Display` into a reused `String`.
fn display_all<T: std::fmt::Display>(items: &[T]) -> usize {
    let mut out = String::with_capacity(64);
    items
        .iter()
        .map(|item| {
            out.clear();
            write!(out, "{}", black_box(item)).expect("writes");
            black_box(out.len())
        })
        .sum()
}
#[inline(never)]
fn case_display_prefixed(d: &Data) -> usize {
    display_all(&d.order)
}
#[inline(never)]
fn case_display_decimal(d: &Data) -> usize {
    display_all(&d.tweet)
}
#[inline(never)]
fn case_display_std_u64(d: &Data) -> usize {
    let mut out = String::with_capacity(64);
    d.raw
        .iter()
        .map(|&r| {
            out.clear();
            write!(out, "{}", black_box(r.cast_unsigned())).expect("writes");
            black_box(out.len())
        })
        .sum()
}
#[inline(never)]
fn case_display_ferroid(d: &Data) -> usize {
    let mut out = String::with_capacity(64);
    d.ferroid
        .iter()
        .map(|id| {
            out.clear();
            write!(out, "{}", black_box(id).encode()).expect("writes");
            black_box(out.len())
        })
        .sum()
}
#[inline(never)]
fn case_display_uuid(d: &Data) -> usize {
    display_all(&d.uuid)
}
#[inline(never)]
fn case_display_ulid(d: &Data) -> usize {
    display_all(&d.ulid)
}

// `to_string`: a new `String` per ID, as most callers write one.
#[inline(never)]
fn case_to_string_prefixed(d: &Data) -> usize {
    d.order.iter().map(|id| black_box(black_box(id).to_string()).len()).sum()
}
#[inline(never)]
fn case_to_string_decimal(d: &Data) -> usize {
    d.tweet.iter().map(|id| black_box(black_box(id).to_string()).len()).sum()
}
#[inline(never)]
fn case_to_string_std_u64(d: &Data) -> usize {
    d.raw.iter().map(|&r| black_box(black_box(r.cast_unsigned()).to_string()).len()).sum()
}
#[inline(never)]
fn case_to_string_ferroid(d: &Data) -> usize {
    d.ferroid.iter().map(|id| black_box(black_box(id).encode().to_string()).len()).sum()
}

// Parse.
fn parse_all<T: FromStr>(texts: &[String]) -> usize
where
    T::Err: std::fmt::Debug,
{
    texts.iter().map(|t| usize::from(black_box(black_box(t.as_str()).parse::<T>()).is_ok())).sum()
}
#[inline(never)]
fn case_parse_prefixed(d: &Data) -> usize {
    parse_all::<OrderId>(&d.prefixed_text)
}
#[inline(never)]
fn case_parse_prefixed_bytes(d: &Data) -> usize {
    d.prefixed_text
        .iter()
        .map(|t| {
            let parsed = prefixed::parse_bytes("ord", &Layout::TWITTER, Decimal::Refuse, black_box(t.as_bytes()));
            usize::from(black_box(parsed).is_ok())
        })
        .sum()
}
#[inline(never)]
fn case_parse_decimal(d: &Data) -> usize {
    parse_all::<TweetId>(&d.decimal_text)
}
#[inline(never)]
fn case_parse_decimal_bytes(d: &Data) -> usize {
    d.decimal_text
        .iter()
        .map(|t| usize::from(black_box(TweetId::LAYOUT.parse_id_bytes(black_box(t.as_bytes()))).is_ok()))
        .sum()
}
#[inline(never)]
fn case_parse_std_u64(d: &Data) -> usize {
    parse_all::<u64>(&d.decimal_text)
}
#[inline(never)]
fn case_parse_ferroid(d: &Data) -> usize {
    d.ferroid_text
        .iter()
        .map(|t| usize::from(black_box(SnowflakeTwitterId::decode(black_box(t.as_str()))).is_ok()))
        .sum()
}
#[inline(never)]
fn case_parse_uuid(d: &Data) -> usize {
    d.uuid_text.iter().map(|t| usize::from(black_box(uuid::Uuid::parse_str(black_box(t))).is_ok())).sum()
}
#[inline(never)]
fn case_parse_ulid(d: &Data) -> usize {
    d.ulid_text.iter().map(|t| usize::from(black_box(ulid::Ulid::from_string(black_box(t))).is_ok())).sum()
}

// JSON: one value per document, into a reused buffer and from a string.
fn json_write_all<T: serde::Serialize>(items: &[T]) -> usize {
    let mut out = Vec::with_capacity(64);
    items
        .iter()
        .map(|item| {
            out.clear();
            serde_json::to_writer(&mut out, black_box(item)).expect("writes");
            black_box(out.len())
        })
        .sum()
}
#[inline(never)]
fn case_json_write_prefixed(d: &Data) -> usize {
    json_write_all(&d.order)
}
#[inline(never)]
fn case_json_write_decimal(d: &Data) -> usize {
    json_write_all(&d.tweet)
}
#[inline(never)]
fn case_json_write_u64(d: &Data) -> usize {
    let mut out = Vec::with_capacity(64);
    d.raw
        .iter()
        .map(|&r| {
            out.clear();
            serde_json::to_writer(&mut out, &black_box(r.cast_unsigned())).expect("writes");
            black_box(out.len())
        })
        .sum()
}
#[inline(never)]
fn case_json_write_str(d: &Data) -> usize {
    json_write_all(&d.decimal_text)
}
#[inline(never)]
fn case_json_write_ferroid(d: &Data) -> usize {
    let mut out = Vec::with_capacity(64);
    d.ferroid
        .iter()
        .map(|id| {
            out.clear();
            serde_json::to_writer(&mut out, black_box(id).encode().as_str()).expect("writes");
            black_box(out.len())
        })
        .sum()
}
fn json_read_all<T: serde::de::DeserializeOwned>(texts: &[String]) -> usize {
    texts.iter().map(|t| usize::from(black_box(serde_json::from_str::<T>(black_box(t))).is_ok())).sum()
}
#[inline(never)]
fn case_json_read_prefixed(d: &Data) -> usize {
    json_read_all::<OrderId>(&d.prefixed_json)
}
#[inline(never)]
fn case_json_read_decimal(d: &Data) -> usize {
    json_read_all::<TweetId>(&d.decimal_json)
}
#[inline(never)]
fn case_json_read_u64(d: &Data) -> usize {
    json_read_all::<u64>(&d.number_json)
}

type Case = (&'static str, fn(&Data) -> usize);

/// Every case, by group: `(group/name, function)`; the first of each group is ours, the
/// peer row of a group is named in [`ROWS`].
const CASES: &[Case] = &[
    ("encode/prefixed_written", case_encode_prefixed),
    ("encode/prefixed_suffix", case_encode_prefixed_suffix),
    ("encode/ferroid_base32", case_encode_ferroid),
    ("encode/decimal_written", case_encode_decimal),
    ("encode/itoa", case_encode_itoa),
    ("encode/uuid_hyphenated", case_encode_uuid),
    ("encode/ulid", case_encode_ulid),
    ("display/prefixed", case_display_prefixed),
    ("display/decimal", case_display_decimal),
    ("display/std_u64", case_display_std_u64),
    ("display/ferroid_base32", case_display_ferroid),
    ("display/uuid", case_display_uuid),
    ("display/ulid", case_display_ulid),
    ("to_string/prefixed", case_to_string_prefixed),
    ("to_string/decimal", case_to_string_decimal),
    ("to_string/std_u64", case_to_string_std_u64),
    ("to_string/ferroid_base32", case_to_string_ferroid),
    ("parse/prefixed_from_str", case_parse_prefixed),
    ("parse/prefixed_bytes", case_parse_prefixed_bytes),
    ("parse/decimal_from_str", case_parse_decimal),
    ("parse/decimal_bytes", case_parse_decimal_bytes),
    ("parse/std_u64", case_parse_std_u64),
    ("parse/ferroid_base32", case_parse_ferroid),
    ("parse/uuid", case_parse_uuid),
    ("parse/ulid", case_parse_ulid),
    ("json_write/prefixed", case_json_write_prefixed),
    ("json_write/decimal", case_json_write_decimal),
    ("json_write/u64_number", case_json_write_u64),
    ("json_write/str_floor", case_json_write_str),
    ("json_write/ferroid_str", case_json_write_ferroid),
    ("json_read/prefixed", case_json_read_prefixed),
    ("json_read/decimal", case_json_read_decimal),
    ("json_read/u64_number", case_json_read_u64),
];

/// The table: `(label, case, the case it is compared with)`.
const ROWS: &[(&str, &str, &str)] = &[
    ("prefixed encode on stack vs ferroid", "encode/prefixed_written", "encode/ferroid_base32"),
    ("13-char suffix alone vs ferroid", "encode/prefixed_suffix", "encode/ferroid_base32"),
    ("decimal encode on stack vs itoa", "encode/decimal_written", "encode/itoa"),
    ("uuid hyphenated encode vs ferroid", "encode/uuid_hyphenated", "encode/ferroid_base32"),
    ("ulid encode vs ferroid", "encode/ulid", "encode/ferroid_base32"),
    ("prefixed Display vs ferroid", "display/prefixed", "display/ferroid_base32"),
    ("decimal Display vs std u64", "display/decimal", "display/std_u64"),
    ("uuid Display vs ferroid", "display/uuid", "display/ferroid_base32"),
    ("ulid Display vs ferroid", "display/ulid", "display/ferroid_base32"),
    ("prefixed to_string vs ferroid's", "to_string/prefixed", "to_string/ferroid_base32"),
    ("decimal to_string vs std u64's", "to_string/decimal", "to_string/std_u64"),
    ("prefixed FromStr vs ferroid decode", "parse/prefixed_from_str", "parse/ferroid_base32"),
    ("prefixed FromStr vs std parse::<u64>", "parse/prefixed_from_str", "parse/std_u64"),
    ("prefixed parse_bytes vs ferroid decode", "parse/prefixed_bytes", "parse/ferroid_base32"),
    ("decimal FromStr vs ferroid decode", "parse/decimal_from_str", "parse/ferroid_base32"),
    ("decimal FromStr vs std parse::<u64>", "parse/decimal_from_str", "parse/std_u64"),
    ("decimal parse_id_bytes vs std parse::<u64>", "parse/decimal_bytes", "parse/std_u64"),
    ("uuid parse_str vs ferroid decode", "parse/uuid", "parse/ferroid_base32"),
    ("ulid from_string vs ferroid decode", "parse/ulid", "parse/ferroid_base32"),
    ("JSON write, prefixed vs ferroid's str", "json_write/prefixed", "json_write/ferroid_str"),
    ("JSON write, prefixed vs bare u64", "json_write/prefixed", "json_write/u64_number"),
    ("JSON write, decimal vs bare u64", "json_write/decimal", "json_write/u64_number"),
    ("JSON write, a ready &str vs bare u64", "json_write/str_floor", "json_write/u64_number"),
    ("JSON write, ferroid's str vs bare u64", "json_write/ferroid_str", "json_write/u64_number"),
    ("JSON read, prefixed vs bare u64", "json_read/prefixed", "json_read/u64_number"),
    ("JSON read, decimal vs bare u64", "json_read/decimal", "json_read/u64_number"),
];

/// Where criterion writes its estimates (as in the `serde` bench).
fn output_directory() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().map_or_else(|| tmp.join("criterion"), |target| target.join("criterion"))
}

/// The median of one case, in nanoseconds per ID, if this run measured it.
fn ns_per_id(dir: &std::path::Path, case: &str, since: SystemTime) -> Option<f64> {
    let path = dir.join("text").join(case.replace('/', "_")).join("new").join("estimates.json");
    let fresh = std::fs::metadata(&path).and_then(|m| m.modified()).is_ok_and(|modified| modified >= since);
    if !fresh {
        return None;
    }
    let estimates: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    Some(estimates["median"]["point_estimate"].as_f64()? / N as f64)
}

fn print_table(dir: &std::path::Path, since: SystemTime) {
    println!();
    println!("{:<44} {:>9} {:>9} {:>7}", "median ns per ID", "ours", "peer", "ratio");
    for (label, ours, peer) in ROWS {
        match (ns_per_id(dir, ours, since), ns_per_id(dir, peer, since)) {
            (Some(a), Some(b)) => println!("{label:<44} {a:>9.2} {b:>9.2} {:>6.2}x", a / b),
            _ => println!("{label:<44} {:>9} {:>9} {:>7}", "-", "-", "(not run)"),
        }
    }
}

/// Every case must agree on what it read and wrote: a check that the rows measure work
/// that succeeds.
fn check(d: &Data) {
    for (name, case) in CASES {
        let result = case(d);
        assert!(result >= N, "{name}: {result}");
    }
    assert!(d.prefixed_text.iter().zip(&d.order).all(|(t, id)| t.parse::<OrderId>().ok() == Some(*id)));
    assert!(
        d.ferroid_text
            .iter()
            .zip(&d.raw)
            .all(|(t, r)| SnowflakeTwitterId::decode(t).map(|id| id.to_raw()).ok() == Some(r.cast_unsigned()))
    );
}

fn main() {
    let data = Data::new();
    check(&data);
    if std::env::args().any(|arg| arg == "--instructions") {
        // Under callgrind: each case the same number of passes, nothing else.
        let passes: usize = std::env::var("TEXT_PASSES").ok().and_then(|p| p.parse().ok()).unwrap_or(100);
        let mut total = 0;
        for (_, case) in CASES {
            for _ in 0..passes {
                total += case(black_box(&data));
            }
        }
        println!("{} cases × {passes} passes × {N} IDs ({total})", CASES.len());
        return;
    }
    let started = SystemTime::now();
    let dir = output_directory();
    let mut criterion = Criterion::default().output_directory(&dir).configure_from_args();
    let mut group = criterion.benchmark_group("text");
    for (name, case) in CASES {
        group.bench_function(name.replace('/', "_"), |b| b.iter(|| case(black_box(&data))));
    }
    group.finish();
    criterion.final_summary();
    print_table(&dir, started);
}
