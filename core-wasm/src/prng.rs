//! The session's pseudo-random generator behind `random()` and `setseed()`.
//!
//! PostgreSQL 15 draws `random()` from xoroshiro128** (Blackman and Vigna), seeded once per
//! backend from strong entropy, or by `setseed(x)` through splitmix64. RockLake implements
//! the same published algorithms so that `setseed(x)` followed by `random()` gives
//! PostgreSQL's values. The core reads no entropy of its own: an unseeded session takes its
//! first state from the host ([`crate::api::KvRead::entropy`]), which record/replay captures.

/// xoroshiro128** state. Never all zeroes (a fixed point of the generator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prng {
    s0: u64,
    s1: u64,
}

/// Knuth's LCG constants: PostgreSQL's replacement for an all-zero state.
const NONZERO: Prng = Prng {
    s0: 0x5851_F42D_4C95_7F2D,
    s1: 0x1405_7B7E_F767_814F,
};

impl Prng {
    /// A state taken as it is (host entropy), made nonzero.
    pub fn from_state(s0: u64, s1: u64) -> Prng {
        if s0 == 0 && s1 == 0 {
            NONZERO
        } else {
            Prng { s0, s1 }
        }
    }

    /// The state a 64-bit seed gives: two splitmix64 outputs.
    pub fn from_seed(seed: u64) -> Prng {
        let mut s = seed;
        let s0 = splitmix64(&mut s);
        let s1 = splitmix64(&mut s);
        Prng::from_state(s0, s1)
    }

    /// `setseed(x)`, x in [-1, 1]: the seed is x scaled to 52 bits, as PostgreSQL's
    /// `pg_prng_fseed` takes it (a float-to-integer conversion truncating towards zero).
    pub fn from_fraction(x: f64) -> Prng {
        let scaled = ((1u64 << 52) - 1) as f64 * x;
        Prng::from_seed(scaled as i64 as u64)
    }

    /// The next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let out = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        out
    }

    /// A double in [0, 1): the top 52 bits as the fraction.
    pub fn next_double(&mut self) -> f64 {
        (self.next_u64() >> 12) as f64 / (1u64 << 52) as f64
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // The first outputs of splitmix64 from seed 0, as published with the algorithm.
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn doubles_stay_below_one() {
        let mut p = Prng::from_state(u64::MAX, u64::MAX);
        for _ in 0..10_000 {
            let d = p.next_double();
            assert!((0.0..1.0).contains(&d), "{d}");
        }
    }

    #[test]
    fn zero_state_is_replaced() {
        let mut p = Prng::from_state(0, 0);
        assert_ne!(p.next_u64(), 0);
        assert_eq!(Prng::from_state(0, 0), NONZERO);
    }

    #[test]
    fn same_fraction_same_sequence() {
        let mut a = Prng::from_fraction(0.5);
        let mut b = Prng::from_fraction(0.5);
        let mut c = Prng::from_fraction(-0.5);
        let (x, y, z) = (a.next_u64(), b.next_u64(), c.next_u64());
        assert_eq!(x, y);
        assert_ne!(x, z);
    }
}
