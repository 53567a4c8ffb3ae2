//! A hasher for maps keyed by distinct integers the simulator looks up on hot paths (cache
//! line addresses, page numbers): one multiply and a fold, where SipHash cost more than the
//! rest of a lookup. Not for keys an attacker chooses (no flooding resistance is needed:
//! the keys are the simulator's own addresses).

use std::collections::HashMap;

/// Fibonacci hashing's multiplier (2^64 / the golden ratio, odd).
const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// Hashes an integer key by one multiply, then folds the high half into the low one: the map
/// picks buckets from the low bits, and keys that are multiples of a power of two (line
/// addresses) would otherwise share them.
#[derive(Debug, Default)]
pub(crate) struct IntHasher(u64);

impl core::hash::Hasher for IntHasher {
    fn finish(&self) -> u64 {
        let x = self.0.wrapping_mul(K);
        x ^ (x >> 32)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
    fn write_usize(&mut self, v: usize) {
        // CAST: usize -> u64 widens.
        self.0 = v as u64;
    }
}

/// A map with [`IntHasher`].
pub(crate) type IntMap<K, V> = HashMap<K, V, core::hash::BuildHasherDefault<IntHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use core::hash::{BuildHasher, BuildHasherDefault};

    #[test]
    fn line_addresses_spread_over_the_low_bits() {
        let b = BuildHasherDefault::<IntHasher>::default();
        let mut low: Vec<u64> = (0..256u64)
            .map(|i| b.hash_one(0x7000_0000 + i * 64) & 255)
            .collect();
        low.sort_unstable();
        low.dedup();
        assert!(
            low.len() > 128,
            "{} distinct low bytes of 256 keys",
            low.len()
        );
    }
}
