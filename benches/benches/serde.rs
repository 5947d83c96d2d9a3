//! What the string costs: an ID serialized and deserialized as a JSON string of digits,
//! beside a plain `i64` as a JSON number, in one run; the ratios are printed at the end.
//! postcard rows show the binary path: the plain `i64` encoding, plus the layout check.
//! The prefixed form (`ord_…`, 13 base32 characters) is measured beside the decimal string:
//! in JSON both ways, and as `Display` and `FromStr`.
//!
//! `cargo bench --bench serde` (a filter after `--` runs a subset; the ratios need all rows).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::SystemTime;

use criterion::Criterion;
use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
struct TweetId(i64);

/// The same layout, written `ord_…`.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
#[snowflake(prefix = "ord")]
struct OrderId(i64);

/// A 19-digit ID: the longest text an ID has, so the string's cost is at its worst.
const REFERENCE: i64 = 1_724_551_110_457_221_119;

fn json(c: &mut Criterion) {
    let id = TweetId::try_from(REFERENCE).expect("the reference vector is a TweetId");
    let raw = REFERENCE;
    // Output goes into a buffer allocated once: what is measured is the formatting.
    let mut out = Vec::with_capacity(64);

    let mut group = c.benchmark_group("json_serialize");
    group.bench_function("id_string", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(&mut out, black_box(&id)).expect("serializes");
            black_box(out.len())
        });
    });
    group.bench_function("i64_number", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(&mut out, black_box(&raw)).expect("serializes");
            black_box(out.len())
        });
    });
    // The floor for any string: serde_json writing the same 19 digits from a ready `&str`.
    let digits = REFERENCE.to_string();
    group.bench_function("str_floor", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(&mut out, black_box(digits.as_str())).expect("serializes");
            black_box(out.len())
        });
    });
    group.finish();

    let id_text = serde_json::to_string(&id).expect("serializes");
    let raw_text = serde_json::to_string(&raw).expect("serializes");
    let mut group = c.benchmark_group("json_deserialize");
    group.bench_function("id_string", |b| {
        b.iter(|| serde_json::from_str::<TweetId>(black_box(&id_text)).expect("deserializes"));
    });
    group.bench_function("i64_number", |b| {
        b.iter(|| serde_json::from_str::<i64>(black_box(&raw_text)).expect("deserializes"));
    });
    group.bench_function("id_from_number", |b| {
        b.iter(|| serde_json::from_str::<TweetId>(black_box(&raw_text)).expect("deserializes"));
    });
    group.finish();

    prefixed(c);

    let mut buf = [0u8; 16];
    let bytes = postcard::to_stdvec(&raw).expect("serializes");
    let mut group = c.benchmark_group("postcard");
    group.bench_function("serialize_id", |b| {
        b.iter(|| postcard::to_slice(black_box(&id), &mut buf).map(|s| s.len()).expect("serializes"));
    });
    group.bench_function("serialize_i64", |b| {
        b.iter(|| postcard::to_slice(black_box(&raw), &mut buf).map(|s| s.len()).expect("serializes"));
    });
    group.bench_function("deserialize_id", |b| {
        b.iter(|| postcard::from_bytes::<TweetId>(black_box(&bytes)).expect("deserializes"));
    });
    group.bench_function("deserialize_i64", |b| {
        b.iter(|| postcard::from_bytes::<i64>(black_box(&bytes)).expect("deserializes"));
    });
    group.finish();
}

/// The prefixed form beside the decimal string: JSON both ways, `Display` into a reused
/// `String`, and `FromStr`.
fn prefixed(c: &mut Criterion) {
    use std::fmt::Write as _;

    let id = TweetId::try_from(REFERENCE).expect("the reference vector is a TweetId");
    let prefixed = OrderId::try_from(REFERENCE).expect("the reference vector is an OrderId");
    let mut out = Vec::with_capacity(64);
    let mut group = c.benchmark_group("prefixed");
    group.bench_function("json_serialize", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(&mut out, black_box(&prefixed)).expect("serializes");
            black_box(out.len())
        });
    });
    let prefixed_json = serde_json::to_string(&prefixed).expect("serializes");
    group.bench_function("json_deserialize", |b| {
        b.iter(|| serde_json::from_str::<OrderId>(black_box(&prefixed_json)).expect("deserializes"));
    });
    let mut text = String::with_capacity(64);
    group.bench_function("display", |b| {
        b.iter(|| {
            text.clear();
            write!(text, "{}", black_box(&prefixed)).expect("writes");
            black_box(text.len())
        });
    });
    group.bench_function("display_decimal", |b| {
        b.iter(|| {
            text.clear();
            write!(text, "{}", black_box(&id)).expect("writes");
            black_box(text.len())
        });
    });
    let prefixed_text = prefixed.to_string();
    let decimal_text = id.to_string();
    group.bench_function("from_str", |b| {
        b.iter(|| black_box(&prefixed_text).parse::<OrderId>().expect("parses"));
    });
    group.bench_function("from_str_decimal", |b| {
        b.iter(|| black_box(&decimal_text).parse::<TweetId>().expect("parses"));
    });
    group.finish();
}

/// Where criterion writes its estimates, chosen here so they can be read back: as
/// criterion itself chooses, `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else
/// the target directory's `criterion`.
fn output_directory() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    // CARGO_TARGET_TMPDIR is `<target>/tmp`.
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().map_or_else(|| tmp.join("criterion"), |target| target.join("criterion"))
}

/// The median time of one benchmark in nanoseconds, if this run measured it.
fn median_ns(dir: &std::path::Path, id: &str, since: SystemTime) -> Option<f64> {
    let path = dir.join(id).join("new").join("estimates.json");
    let fresh = std::fs::metadata(&path).and_then(|m| m.modified()).is_ok_and(|modified| modified >= since);
    if !fresh {
        return None;
    }
    let estimates: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

fn print_prefixed_ratios(dir: &std::path::Path, since: SystemTime) {
    let rows = [
        ("JSON serialize", "prefixed/json_serialize", "json_serialize/id_string"),
        ("JSON deserialize", "prefixed/json_deserialize", "json_deserialize/id_string"),
        ("Display", "prefixed/display", "prefixed/display_decimal"),
        ("FromStr", "prefixed/from_str", "prefixed/from_str_decimal"),
    ];
    println!();
    println!("{:<36} {:>14} {:>14} {:>7}", "median (ns)", "ord_… text", "decimal text", "ratio");
    for (label, prefixed, decimal) in rows {
        match (median_ns(dir, prefixed, since), median_ns(dir, decimal, since)) {
            (Some(p_ns), Some(d_ns)) => println!("{label:<36} {p_ns:>14.2} {d_ns:>14.2} {:>6.2}x", p_ns / d_ns),
            _ => println!("{label:<36} {:>14} {:>14} {:>7}", "-", "-", "(not run)"),
        }
    }
}

fn print_ratios(dir: &std::path::Path, since: SystemTime) {
    let rows = [
        ("JSON serialize", "json_serialize/id_string", "json_serialize/i64_number"),
        ("JSON serialize, a ready &str (floor)", "json_serialize/str_floor", "json_serialize/i64_number"),
        ("JSON deserialize", "json_deserialize/id_string", "json_deserialize/i64_number"),
        ("JSON deserialize, ID from a number", "json_deserialize/id_from_number", "json_deserialize/i64_number"),
        ("postcard serialize", "postcard/serialize_id", "postcard/serialize_i64"),
        ("postcard deserialize", "postcard/deserialize_id", "postcard/deserialize_i64"),
    ];
    println!();
    println!("{:<36} {:>14} {:>14} {:>7}", "median (ns)", "ID", "plain i64", "ratio");
    for (label, id, plain) in rows {
        match (median_ns(dir, id, since), median_ns(dir, plain, since)) {
            (Some(id_ns), Some(plain_ns)) => {
                println!("{label:<36} {id_ns:>14.2} {plain_ns:>14.2} {:>6.2}x", id_ns / plain_ns);
            }
            _ => println!("{label:<36} {:>14} {:>14} {:>7}", "-", "-", "(not run)"),
        }
    }
}

fn main() {
    let started = SystemTime::now();
    let dir = output_directory();
    let mut criterion = Criterion::default().output_directory(&dir).configure_from_args();
    json(&mut criterion);
    criterion.final_summary();
    print_ratios(&dir, started);
    print_prefixed_ratios(&dir, started);
}
