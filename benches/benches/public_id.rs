//! The cost of keyed public IDs: `to_public` (FF1-AES encryption and base64url) and
//! `from_public` (decoding, decryption and the layout check), per ID, with a 32-byte key
//! (AES-256) and a 16-byte one (AES-128), beside the `Display` of the plain decimal.
//!
//! Run: `cargo bench -p typed-snowflake-benches --bench public_id -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::Criterion;
use typed_snowflake::{PublicIdKey, SnowflakeId};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let id = OrderId::from_parts(1_700_000_000_000, 3, 7).expect("in layout");
    let keys = [
        ("aes256", PublicIdKey::from_bytes([0x5A; 32])),
        ("aes128", PublicIdKey::from_slice(&[0x5A; 16]).expect("16 bytes")),
    ];
    let mut group = criterion.benchmark_group("public_id");
    for (name, key) in &keys {
        let text = id.to_public(key);
        group.bench_function(format!("to_public/{name}"), |b| b.iter(|| black_box(black_box(id).to_public(key))));
        group.bench_function(format!("from_public/{name}"), |b| {
            b.iter(|| OrderId::from_public(black_box(&text), key).expect("round trip"))
        });
    }
    group.bench_function("display", |b| b.iter(|| black_box(black_box(id).to_string())));
    group.bench_function("key_from_bytes/aes256", |b| b.iter(|| PublicIdKey::from_bytes(black_box([0x5A; 32]))));
    group.finish();
    criterion.final_summary();
}
