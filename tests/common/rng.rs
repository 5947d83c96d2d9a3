//! A small, seeded xorshift for tests that spread their actors out in time (the churns'
//! holders): reproducible per seed, not a secret, no dependency.
#![allow(dead_code)] // each test file uses what it needs

/// Xorshift64 (Marsaglia, 2003): shifts of 13, 7 and 17.
pub struct XorShift(u64);

impl XorShift {
    /// The generator of actor `index`: a distinct state for each, never zero (an odd multiplier times 1 to 2^64 - 1).
    pub fn for_actor(index: usize) -> XorShift {
        XorShift((index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    /// The next value in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn actors_get_distinct_sequences_within_bounds() {
    let (mut a, mut b) = (XorShift::for_actor(0), XorShift::for_actor(1));
    let (xs, ys): (Vec<u64>, Vec<u64>) = (0..64).map(|_| (a.below(500), b.below(500))).unzip();
    assert!(xs.iter().chain(&ys).all(|&x| x < 500));
    assert_ne!(xs, ys);
    // Not stuck: a run of 64 draws takes many values.
    assert!(xs.iter().collect::<std::collections::BTreeSet<_>>().len() > 32);
}
