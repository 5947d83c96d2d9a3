//! Keyed public IDs: pinned test vectors, round trips, no visible order, and hostile input
//! (empty, long, bad characters, tampered, foreign keys) as errors, never a panic.

use proptest::prelude::*;
use typed_snowflake::public::{PUBLIC_ID_LEN, from_public_any};
use typed_snowflake::{PublicIdError, PublicIdKey, SnowflakeId};

/// 63 bits: half of all 64-bit values are IDs of this type.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

/// 42 bits: one 64-bit value in 2^22 is an ID of this type.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 30, worker = 4, seq = 8, epoch = "2024-01-01")]
#[snowflake(decode_only)] // the time field ran out long ago: a type that decodes only
struct SmallId(i64);

/// A `u64` field.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
struct TweetId(u64);

type TestResult = Result<(), Box<dyn std::error::Error>>;

const KEY_HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const OTHER_HEX: &str = "f0e1d2c3b4a5968778695a4b3c2d1e0f00112233445566778899aabbccddeeff";
/// The reference vector of the README's tour and of `Layout::TWITTER`'s docs (Twitter layout).
const REFERENCE: i64 = 1_724_551_110_457_221_119;
const T0: i64 = 1_700_000_000_000;
/// Within `SmallId`'s 12 days from 2024-01-01.
const SMALL_T0: i64 = 1_704_100_000_000;

fn key() -> PublicIdKey {
    PublicIdKey::from_hex(KEY_HEX).expect("a valid key")
}

fn other_key() -> PublicIdKey {
    PublicIdKey::from_hex(OTHER_HEX).expect("a valid key")
}

fn is_url_safe(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A small deterministic generator (SplitMix64), so that every statistic below is a
/// fixed number, not a flaky one.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A random string that some key could have written: 10 characters, then one whose two
/// low bits are zero.
fn random_canonical(rng: &mut SplitMix) -> String {
    let mut text: String = (0..10).map(|_| char::from(ALPHABET[(rng.next() % 64) as usize])).collect();
    text.push(char::from(ALPHABET[((rng.next() % 16) * 4) as usize]));
    text
}

// ---------------------------------------------------------------------------------------
// Pinned vectors: a change to the construction, the byte order or the alphabet breaks
// every public ID already handed out, and these.

#[test]
fn test_vectors() -> TestResult {
    let aes256 = key();
    let aes128 = PublicIdKey::from_hex(&KEY_HEX[..32])?;
    let versioned = key().with_version(1)?;
    let tweaked = key().with_tweak(b"orders");
    let cases: [(&PublicIdKey, u64, &str); 10] = [
        (&aes256, 0, "G54x-h1p29c"),
        (&aes256, 1, "xGFP0UxsFXI"),
        (&aes256, 2, "Eeeu4PBH6t4"),
        (&aes256, REFERENCE.cast_unsigned(), "BkykKSmYyz0"),
        (&aes256, i64::MAX.cast_unsigned(), "MdoT8hSW_UY"),
        (&aes256, u64::MAX, "HhjziBgHRis"),
        (&aes128, 0, "jjPIQkH2hJI"),
        (&aes128, REFERENCE.cast_unsigned(), "k1WHbgTBB5A"),
        (&versioned, REFERENCE.cast_unsigned(), "BBkykKSmYyz0"),
        (&tweaked, REFERENCE.cast_unsigned(), "jEDuRf3HmiM"),
    ];
    for (key, value, expected) in cases {
        let text = key.encode(value);
        assert_eq!(text, expected, "{key:?} {value}");
        assert_eq!(key.decode(expected)?, value);
    }
    // The same through the trait, for an ID of each field type.
    let order = OrderId::try_from(REFERENCE)?;
    assert_eq!(order.to_public(&aes256), "BkykKSmYyz0");
    assert_eq!(OrderId::from_public("BkykKSmYyz0", &aes256)?, order);
    let tweet = TweetId::try_from(REFERENCE.cast_unsigned())?;
    assert_eq!(tweet.to_public(&aes256), "BkykKSmYyz0");
    assert_eq!(TweetId::from_public("BkykKSmYyz0", &aes256)?, tweet);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Round trips.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Any ID of a 63-bit layout, under any key: 11 URL-safe characters, and back.
    #[test]
    fn round_trip_over_a_63_bit_layout(raw in 0..=i64::MAX, key_bytes in any::<[u8; 32]>()) {
        let key = PublicIdKey::from_bytes(key_bytes);
        let id = OrderId::try_from(raw).expect("every non-negative i64 is a 63-bit ID");
        let text = id.to_public(&key);
        prop_assert_eq!(text.len(), PUBLIC_ID_LEN);
        prop_assert!(is_url_safe(&text), "{}", text);
        prop_assert_eq!(OrderId::from_public(&text, &key), Ok(id));
    }

    /// The same with an AES-128 key, a version and a tweak.
    #[test]
    fn round_trip_with_version_and_tweak(
        raw in 0..=i64::MAX,
        key_bytes in any::<[u8; 16]>(),
        version in 0u8..64,
        tweak in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let key = PublicIdKey::from_slice(&key_bytes).expect("16 bytes").with_tweak(&tweak).with_version(version).expect("0..64");
        let id = OrderId::try_from(raw).expect("every non-negative i64 is a 63-bit ID");
        let text = id.to_public(&key);
        prop_assert_eq!(text.len(), PUBLIC_ID_LEN + 1);
        prop_assert!(is_url_safe(&text), "{}", text);
        prop_assert_eq!(text.chars().next(), key.version_char());
        prop_assert_eq!(OrderId::from_public(&text, &key), Ok(id));
    }

    /// Any 64-bit value through the layout-free building blocks.
    #[test]
    fn encode_decode_any_u64(value in any::<u64>()) {
        let key = key();
        prop_assert_eq!(key.decode(&key.encode(value)), Ok(value));
    }

    /// Any text at all: an error or an ID, never a panic, and an ID only from text of
    /// exactly 11 URL-safe characters that encodes back to itself. Arbitrary strings are
    /// almost never 11 characters long, so most candidates are 11 characters: ones some key
    /// could have written (their last character's two low bits zero; half of them decode
    /// to an `OrderId`), any 11 of the alphabet, and any 11 characters at all.
    #[test]
    fn arbitrary_text_never_panics(
        text in prop_oneof![
            3 => "[A-Za-z0-9_-]{10}[AEIMQUYcgkosw048]",
            1 => "[A-Za-z0-9_-]{11}",
            1 => ".{11}",
            1 => any::<String>(),
        ]
    ) {
        let key = key();
        let versioned = self::key().with_version(3).expect("0..64");
        let decoded = [
            OrderId::from_public(&text, &key).map(|id| id.to_public(&key)),
            SmallId::from_public(&text, &key).map(|id| id.to_public(&key)),
            from_public_any::<OrderId>(&text, &[&versioned]).map(|id| id.to_public(&versioned)),
        ];
        for back in decoded.into_iter().flatten() {
            prop_assert!(text.len() == PUBLIC_ID_LEN && is_url_safe(&text), "an ID from {:?}", text);
            prop_assert_eq!(back, text.clone());
        }
    }

    /// Text made of the alphabet, of any length up to 40.
    #[test]
    fn alphabet_text_never_panics(text in "[A-Za-z0-9_-]{0,40}") {
        let key = key();
        match OrderId::from_public(&text, &key) {
            Ok(id) => prop_assert_eq!(id.to_public(&key), text.clone()),
            Err(PublicIdError::Length { expected, found }) => {
                prop_assert_eq!(expected, 11);
                prop_assert_eq!(found, text.len());
            }
            Err(PublicIdError::Empty) => prop_assert!(text.is_empty()),
            Err(PublicIdError::NonCanonical | PublicIdError::NotAnId { .. }) => prop_assert_eq!(text.len(), 11),
            Err(other) => prop_assert!(false, "{:?} for {:?}", other, text),
        }
    }
}

// ---------------------------------------------------------------------------------------
// No order: consecutive IDs give public strings in no particular order.

/// Kendall's tau between issue order and the order of `keys`, all distinct: 1 - 4 × the
/// number of discordant pairs (inversions, counted by merge sort) / n(n - 1).
fn kendall_tau(keys: &[u128]) -> f64 {
    fn inversions(v: &mut Vec<u128>) -> u64 {
        if v.len() < 2 {
            return 0;
        }
        let mut right = v.split_off(v.len() / 2);
        let mut count = inversions(v) + inversions(&mut right);
        let mut merged = Vec::with_capacity(v.len() + right.len());
        let (mut i, mut j) = (0, 0);
        while i < v.len() && j < right.len() {
            if v[i] <= right[j] {
                merged.push(v[i]);
                i += 1;
            } else {
                // right[j] precedes every remaining left element: that many inversions.
                count += (v.len() - i) as u64;
                merged.push(right[j]);
                j += 1;
            }
        }
        merged.extend_from_slice(&v[i..]);
        merged.extend_from_slice(&right[j..]);
        *v = merged;
        count
    }
    let n = keys.len() as f64;
    let discordant = inversions(&mut keys.to_vec()) as f64;
    1.0 - 4.0 * discordant / (n * (n - 1.0))
}

#[test]
fn kendall_tau_is_one_for_the_same_order_and_minus_one_for_the_reverse() {
    let ascending: Vec<u128> = (0..100).collect();
    let descending: Vec<u128> = (0..100).rev().collect();
    assert_eq!(kendall_tau(&ascending), 1.0);
    assert_eq!(kendall_tau(&descending), -1.0);
    // One swapped pair of 4: 5 concordant, 1 discordant of 6.
    assert!((kendall_tau(&[0, 2, 1, 3]) - 4.0 / 6.0).abs() < 1e-12);
}

/// The string as a number that sorts as the string does (equal lengths).
fn sort_key(text: &str) -> u128 {
    text.bytes().fold(0u128, |acc, b| (acc << 8) | u128::from(b))
}

#[test]
fn consecutive_ids_reveal_no_order() -> TestResult {
    let key = key();
    // Two ways IDs come out of a generator: a burst within one tick (consecutive raw
    // values), and one per millisecond (the time field counting up).
    let burst_start = OrderId::from_parts(T0, 3, 0)?.get();
    let burst: Vec<OrderId> = (0..10_000).map(|i| OrderId::try_from(burst_start + i)).collect::<Result<_, _>>()?;
    let paced: Vec<OrderId> = (0..10_000).map(|i| OrderId::from_parts(T0 + i, 3, 0)).collect::<Result<_, _>>()?;
    for (what, ids) in [("burst", &burst), ("paced", &paced)] {
        let texts: Vec<String> = ids.iter().map(|id| id.to_public(&key)).collect();
        for text in &texts {
            assert_eq!(text.len(), 11, "{text}");
            assert!(is_url_safe(text), "{text}");
        }
        // As strings (how a URL list or a text index sorts them) and as the 64-bit block.
        let by_text: Vec<u128> = texts.iter().map(|t| sort_key(t)).collect();
        let blocks: Vec<u128> = texts.iter().map(|t| u128::from(block_of(t))).collect();
        let (tau_text, tau_block) = (kendall_tau(&by_text), kendall_tau(&blocks));
        assert!(tau_text.abs() < 0.05, "{what}: Kendall's tau over the strings is {tau_text}");
        assert!(tau_block.abs() < 0.05, "{what}: Kendall's tau over the blocks is {tau_block}");
        // And no two consecutive IDs share a string, nor even a first character more
        // often than chance (1/64) would have it.
        let same_first = texts.windows(2).filter(|w| w[0].as_bytes()[0] == w[1].as_bytes()[0]).count();
        assert!(same_first < 400, "{what}: {same_first} neighbours share their first character");
        let distinct: std::collections::HashSet<&String> = texts.iter().collect();
        assert_eq!(distinct.len(), texts.len());
    }
    Ok(())
}

/// The encrypted 64-bit block a public string carries (base64url, big-endian).
fn block_of(text: &str) -> u64 {
    let bits = text.bytes().fold(0u128, |acc, b| {
        let sextet = ALPHABET.iter().position(|&a| a == b).expect("alphabet") as u128;
        (acc << 6) | sextet
    });
    u64::try_from(bits >> 2).expect("64 bits")
}

// ---------------------------------------------------------------------------------------
// Hostile input.

#[test]
fn malformed_text_is_an_error_that_says_why() -> TestResult {
    let key = key();
    let good = OrderId::try_from(REFERENCE)?.to_public(&key);
    assert_eq!(OrderId::from_public("", &key), Err(PublicIdError::Empty));
    assert_eq!(OrderId::from_public(&good[..10], &key), Err(PublicIdError::Length { expected: 11, found: 10 }));
    assert_eq!(OrderId::from_public(&format!("{good}A"), &key), Err(PublicIdError::Length { expected: 11, found: 12 }));
    let long = "A".repeat(100_000);
    assert_eq!(OrderId::from_public(&long, &key), Err(PublicIdError::Length { expected: 11, found: 100_000 }));
    for bad in ['+', '/', '=', ' ', '.', '\0', '\n', 'é', '€', '\u{1F600}'] {
        let mut text: String = good.chars().take(5).collect();
        text.push(bad);
        text.extend(good.chars().skip(6));
        assert_eq!(
            OrderId::from_public(&text, &key),
            Err(PublicIdError::InvalidChar { position: 5, found: bad }),
            "{text:?}"
        );
    }
    // Padding, as a generic base64 encoder would add it.
    assert_eq!(
        OrderId::from_public(&format!("{good}="), &key),
        Err(PublicIdError::InvalidChar { position: 11, found: '=' })
    );
    // The last character holds 4 bits and two zero bits: `B` (1) sets one no key writes.
    let mut non_canonical = good[..10].to_owned();
    non_canonical.push('B');
    assert_eq!(OrderId::from_public(&non_canonical, &key), Err(PublicIdError::NonCanonical));
    // Every error message is a sentence, not a debug dump.
    for error in [PublicIdError::Empty, PublicIdError::NonCanonical, PublicIdError::NotAnId { type_name: "OrderId" }] {
        assert!(error.to_string().len() > 20, "{error}");
    }
    Ok(())
}

#[test]
fn versions_are_checked() -> TestResult {
    let v1 = key().with_version(1)?;
    let id = OrderId::try_from(REFERENCE)?;
    let text = id.to_public(&v1);
    assert!(text.starts_with('B'));
    // The same body under another version character is refused, not decoded.
    let v2 = key().with_version(2)?;
    assert_eq!(OrderId::from_public(&text, &v2), Err(PublicIdError::Version { expected: 'C', found: 'B' }));
    // An unversioned key refuses a versioned string by its length, and the reverse.
    assert_eq!(OrderId::from_public(&text, &key()), Err(PublicIdError::Length { expected: 11, found: 12 }));
    assert_eq!(
        OrderId::from_public(&id.to_public(&key()), &v1),
        Err(PublicIdError::Length { expected: 12, found: 11 })
    );
    Ok(())
}

#[test]
fn rotation_decodes_each_string_with_its_own_key() -> TestResult {
    let old = key().with_version(0)?;
    let new = other_key().with_version(1)?;
    let keys = [&new, &old];
    for i in 0..1_000 {
        let id = OrderId::from_parts(T0 + i, 1, 0)?;
        assert_eq!(from_public_any::<OrderId>(&id.to_public(&old), &keys)?, id);
        assert_eq!(from_public_any::<OrderId>(&id.to_public(&new), &keys)?, id);
    }
    let id = OrderId::try_from(REFERENCE)?;
    assert_eq!(
        from_public_any::<OrderId>(&id.to_public(&new), &[&old]),
        Err(PublicIdError::UnknownVersion { found: 'B' })
    );
    assert_eq!(from_public_any::<OrderId>(&id.to_public(&new), &[&new, &key()]), Err(PublicIdError::UnversionedKey));
    assert_eq!(from_public_any::<OrderId>("", &keys), Err(PublicIdError::Empty));
    assert_eq!(
        from_public_any::<OrderId>("%AAAAAAAAAAA", &keys),
        Err(PublicIdError::InvalidChar { position: 0, found: '%' })
    );
    Ok(())
}

#[test]
fn a_foreign_key_never_yields_the_original_id() -> TestResult {
    let (ours, theirs) = (key(), other_key());
    let tweaked = key().with_tweak(b"users");
    let mut refused = 0;
    for i in 0..5_000 {
        let id = OrderId::from_parts(T0 + i / 7, 2, (i % 7).cast_unsigned())?;
        let text = id.to_public(&ours);
        for foreign in [&theirs, &tweaked] {
            match OrderId::from_public(&text, foreign) {
                Ok(other) => assert_ne!(other, id, "{text} decodes to the same ID under a foreign key"),
                Err(PublicIdError::NotAnId { type_name }) => {
                    assert_eq!(type_name, "OrderId");
                    refused += 1;
                }
                Err(e) => panic!("{text}: unexpected {e}"),
            }
        }
    }
    // A foreign key decrypts to a random 64-bit value: outside a 63-bit layout half the
    // time (10 000 tries: 5 000 expected, and 4 800..5 200 is 4 standard deviations).
    assert!((4_800..=5_200).contains(&refused), "{refused} of 10 000 refused");
    Ok(())
}

#[test]
fn tampered_strings_decode_to_another_id_or_an_error() -> TestResult {
    let key = key();
    let mut accepted = [0u32; 2];
    let mut tried = 0u32;
    for i in 0..30 {
        let order = OrderId::from_parts(T0 + i, 1, 0)?;
        let small = SmallId::from_parts(SMALL_T0 + i, 1, 0)?;
        for (slot, text) in [order.to_public(&key), small.to_public(&key)].into_iter().enumerate() {
            // Every single-character change that keeps the string canonical.
            for position in 0..11 {
                let step = if position == 10 { 4 } else { 1 };
                for delta in (step..64).step_by(step) {
                    let mut bytes = text.clone().into_bytes();
                    let index = ALPHABET.iter().position(|&a| a == bytes[position]).expect("alphabet");
                    bytes[position] = ALPHABET[(index + delta) % 64];
                    let tampered = String::from_utf8(bytes)?;
                    if slot == 0 {
                        tried += 1;
                        match OrderId::from_public(&tampered, &key) {
                            Ok(other) => {
                                assert_ne!(other, order);
                                accepted[0] += 1;
                            }
                            Err(e) => assert!(matches!(e, PublicIdError::NotAnId { .. }), "{e}"),
                        }
                    } else if let Ok(other) = SmallId::from_public(&tampered, &key) {
                        assert_ne!(other, small);
                        accepted[1] += 1;
                    }
                }
            }
        }
    }
    // A 63-bit layout accepts about half of all tampered strings (as some other ID); a
    // 42-bit one about one in 2^22, so none of these.
    let half = f64::from(accepted[0]) / f64::from(tried);
    assert!((0.47..0.53).contains(&half), "{} of {tried} tampered 63-bit strings accepted", accepted[0]);
    assert_eq!(accepted[1], 0, "tampered 42-bit strings accepted");
    Ok(())
}

#[test]
fn random_strings_are_ids_with_probability_two_to_the_used_bits_minus_64() {
    let key = key();
    let mut rng = SplitMix(42);
    let (mut order, mut small, mut tweet) = (0u32, 0u32, 0u32);
    const N: u32 = 8_000;
    for _ in 0..N {
        let text = random_canonical(&mut rng);
        order += u32::from(OrderId::from_public(&text, &key).is_ok());
        small += u32::from(SmallId::from_public(&text, &key).is_ok());
        tweet += u32::from(TweetId::from_public(&text, &key).is_ok());
    }
    // 2^(63-64) = 1/2, for the u64 field too (its layout also uses 63 bits); 2^(42-64) for
    // 42 bits. 3 800..4 200 is 4.5 standard deviations around 4 000.
    assert!((3_800..=4_200).contains(&order), "{order} of {N}");
    assert!((3_800..=4_200).contains(&tweet), "{tweet} of {N}");
    assert_eq!(small, 0, "{small} of {N}");
}

// ---------------------------------------------------------------------------------------
// Keys.

#[test]
fn debug_never_prints_the_key() -> TestResult {
    let key = PublicIdKey::from_hex(KEY_HEX)?;
    let shown = format!("{key:?} {key:#?}");
    for secret in [KEY_HEX, "000102", "0, 1, 2", "[0,", "1d1e1f"] {
        assert!(!shown.contains(secret), "{shown}");
    }
    assert_eq!(format!("{key:?}"), r#"PublicIdKey { cipher: "FF1-AES-256", version: None, tweak_len: 0 }"#);
    let short = PublicIdKey::from_slice(&[0xAB; 16])?.with_version(5)?;
    assert_eq!(format!("{short:?}"), r#"PublicIdKey { cipher: "FF1-AES-128", version: Some('F'), tweak_len: 0 }"#);
    Ok(())
}

#[test]
fn tweaks_give_independent_permutations() -> TestResult {
    let plain = key();
    let orders = key().with_tweak(b"orders");
    let users = key().with_tweak(b"users");
    let id = OrderId::try_from(REFERENCE)?;
    let texts = [id.to_public(&plain), id.to_public(&orders), id.to_public(&users)];
    assert_ne!(texts[0], texts[1]);
    assert_ne!(texts[1], texts[2]);
    assert_ne!(texts[0], texts[2]);
    assert_eq!(OrderId::from_public(&texts[1], &orders)?, id);
    // An empty tweak is the same as none.
    assert_eq!(id.to_public(&key().with_tweak(b"")), texts[0]);
    Ok(())
}

#[test]
fn generic_code_reaches_public_ids_through_the_trait() -> TestResult {
    fn link<T: SnowflakeId>(id: &T, key: &PublicIdKey) -> String {
        format!("/{}/{}", T::NAME.to_lowercase(), id.to_public(key))
    }
    let key = key();
    let id = SmallId::from_parts(SMALL_T0, 2, 9)?;
    let url = link(&id, &key);
    let text = url.rsplit('/').next().ok_or("no text")?;
    assert_eq!(SmallId::from_public(text, &key)?, id);
    assert!(url.starts_with("/smallid/"));
    Ok(())
}

#[test]
fn a_key_is_shared_across_threads() -> TestResult {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<PublicIdKey>();
    static KEY: std::sync::LazyLock<PublicIdKey> = std::sync::LazyLock::new(key);
    let id = OrderId::try_from(REFERENCE)?;
    let texts: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2).map(|_| s.spawn(|| id.to_public(&KEY))).collect();
        handles.into_iter().map(|h| h.join().expect("no panic")).collect()
    });
    assert_eq!(texts[0], texts[1]);
    assert_eq!(texts[0], "BkykKSmYyz0");
    Ok(())
}
