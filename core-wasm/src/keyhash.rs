//! The hash of the executor's value keys (joins, GROUP BY, DISTINCT, needed-key sets).
//!
//! std's SipHash was 10–12 % of DuckDB's big catalog joins: its keyed rounds are built to resist
//! chosen-key flooding, which costs on every short key (most join keys are one OID, nine bytes).
//! This hash takes eight bytes at a time with one 64-bit multiply and a rotation, and mixes
//! the result once at the end (murmur3's finalizer), all in 64-bit operations: a 64×64→128-bit
//! product is one instruction natively but a call to `__multi3` in the wasm32 build, where it
//! was 11 % of the column join's instructions. It is unseeded — the core has no randomness,
//! and a statement's keys come from its own rows — like PostgreSQL's own hash joins and
//! aggregates (`hash_any`, also unseeded), so it is exposed to chosen-key collisions exactly as
//! PostgreSQL is, and no more.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};

/// An odd constant from the digits of π (as in wyhash's family): multiplying by an odd number
/// is a bijection, so two words never collide within one step. Fixed: runs are reproducible.
const MUL: u64 = 0x243f_6a88_85a3_08d3;

/// One word into the state. The rotation brings the product's high bits (where a big-endian
/// integer's changing bytes land) down to where the next multiply spreads them again.
#[inline]
fn step(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(MUL).rotate_left(29)
}

/// murmur3's 64-bit finalizer: every input bit reaches every output bit, so keys differing
/// only in high bytes still spread over the low bits hashbrown picks buckets with.
#[inline]
fn finalize(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Builds [`KeyHasher`]s; the `S` of the executor's key maps and sets.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyHash;

impl BuildHasher for KeyHash {
    type Hasher = KeyHasher;

    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(0)
    }
}

#[derive(Debug)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.0 = step(self.0, u64::from_le_bytes(b));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            // The count of bytes (in the top byte, which a remainder never fills) keeps "a"
            // and "a\0" apart.
            b[7] = rest.len() as u8;
            self.0 = step(self.0, u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        // A slice's length prefix.
        self.0 = step(self.0, n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        finalize(self.0)
    }
}

pub type KeyMap<V> = HashMap<Vec<u8>, V, KeyHash>;
pub type KeySetOf = HashSet<Vec<u8>, KeyHash>;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hash(k: &[u8]) -> u64 {
        KeyHash.hash_one(k)
    }

    #[test]
    fn sequential_big_endian_oids_spread_over_the_low_bits() {
        // hashbrown takes a table's bucket from the low bits: 4,096 consecutive OIDs encoded
        // big-endian (their changing bytes last) must not crowd into a few buckets.
        let mut buckets = vec![0u32; 1024];
        for oid in 16_384u64..16_384 + 4_096 {
            let mut k = vec![0x05];
            k.extend_from_slice(&oid.to_be_bytes());
            buckets[(hash(&k) & 1023) as usize] += 1;
        }
        let max = buckets.iter().copied().max().unwrap_or(0);
        let empty = buckets.iter().filter(|b| **b == 0).count();
        // A uniform hash: about 4 per bucket, ~2 % empty, the fullest around 12.
        assert!(max <= 16, "fullest bucket {max}");
        assert!(empty < 60, "{empty} empty buckets of 1,024");
    }

    #[test]
    fn trailing_zero_bytes_change_the_hash() {
        assert_ne!(hash(b"a"), hash(b"a\0"));
        assert_ne!(hash(b""), hash(b"\0"));
        assert_ne!(hash(b"12345678"), hash(b"12345678\0"));
    }

    proptest! {
        #[test]
        fn maps_keyed_by_it_answer_like_std_maps(
            keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..20), 0..200)
        ) {
            let mut ours: KeyMap<usize> = KeyMap::default();
            let mut std_map = std::collections::HashMap::new();
            for (i, k) in keys.iter().enumerate() {
                ours.entry(k.clone()).or_insert(i);
                std_map.entry(k.clone()).or_insert(i);
            }
            prop_assert_eq!(ours.len(), std_map.len());
            for (k, v) in &std_map {
                prop_assert_eq!(ours.get(k), Some(v));
            }
        }
    }
}
