//! Deterministic draws from a seed (SplitMix64): small, fast and the same on every platform, for the choices a
//! seed makes (schema-driven arguments, the quirky server's oddities).

/// A SplitMix64 stream: each [`Draws::bits`] advances the state and mixes it.
#[derive(Clone, Debug)]
pub struct Draws(pub u64);

impl Draws {
    /// The next 64 random bits.
    pub fn bits(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.bits() % n as u64) as usize
    }

    /// True once in `n` draws.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.bits().is_multiple_of(n)
    }
}
