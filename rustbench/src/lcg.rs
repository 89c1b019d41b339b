//! MINSTD pseudo-random sequence shared with the Go program:
//! `x[0] = seed`, `x[k+1] = 48271 * x[k] mod 2147483647`, element k is `x[k] mod m`.

const MULTIPLIER: u64 = 48_271;
const MODULUS: u64 = 2_147_483_647;

/// Infinite iterator over `x[0], x[1], ...` (the raw values, before `mod m`).
#[derive(Debug, Clone)]
pub struct Lcg {
    x: u64,
}

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Lcg { x: seed }
    }
}

impl Iterator for Lcg {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let current = self.x;
        // x < 2^31 and the multiplier < 2^16, so the product fits in 47 bits.
        self.x = MULTIPLIER * (self.x % MODULUS) % MODULUS;
        Some(current)
    }
}

/// The first `count` elements of the sequence for `seed`, each taken `mod m`.
pub fn sequence(seed: u64, count: usize, m: u64) -> Vec<u64> {
    assert!(m > 0, "lcg modulus must be positive");
    Lcg::new(seed).take(count).map(|x| x % m).collect()
}

/// Element `k` of the sequence for `seed`, taken `mod m`.
pub fn element(seed: u64, k: usize, m: u64) -> u64 {
    assert!(m > 0, "lcg modulus must be positive");
    Lcg::new(seed).nth(k).unwrap_or(0) % m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_42_first_values() {
        let raw: Vec<u64> = Lcg::new(42).take(4).collect();
        assert_eq!(raw, vec![42, 2_027_382, 1_226_992_407, 551_494_037]);
    }

    #[test]
    fn modulus_applies_per_element() {
        assert_eq!(sequence(42, 4, 300), vec![42, 282, 207, 137]);
        assert_eq!(element(42, 0, 10_000), 42);
        assert_eq!(element(42, 2, 300), 207);
    }

    #[test]
    fn sleep_milliseconds_sum() {
        // The `kernel=article` reference checksums are exactly these sums.
        assert_eq!(sequence(42, 10, 300).iter().sum::<u64>(), 0x71c);
        assert_eq!(sequence(42, 100, 300).iter().sum::<u64>(), 0x3b56);
    }
}
