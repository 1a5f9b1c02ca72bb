//! Exponential backoff with full jitter, as a pure iterator of delays (backon style).

use super::config::RetryPolicy;

/// SplitMix64: tiny, seedable, good enough for jitter (no `rand` crate in the wasm).
#[derive(Clone, Debug)]
pub(super) struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[low, high]` (inclusive); `low` when the range is empty.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        match high.checked_sub(low).and_then(|span| span.checked_add(1)) {
            Some(n) => low + self.next_u64() % n,
            None if high > low => self.next_u64(),
            None => low,
        }
    }
}

/// The delays (ms) before retry 1, 2, …, `retries`, then `None`.
/// Delay k is uniform in `[min, min(max, min · 2^(k-1))]`.
///
/// # Default
/// Follows [`RetryPolicy::default`]: 5 retries between 1 s and 60 s.
#[derive(Clone, Debug)]
pub(super) struct Backoff {
    policy: RetryPolicy,
    attempt: u32,
    rng: SplitMix64,
}

impl Backoff {
    pub fn new(policy: RetryPolicy, seed: u64) -> Self {
        Backoff {
            policy,
            attempt: 0,
            rng: SplitMix64::new(seed),
        }
    }

    /// Retries allowed in a row.
    pub fn retries(&self) -> u32 {
        self.policy.retries
    }

    /// Starts a new run of failures (after a success); the jitter sequence carries on.
    pub fn reset(&mut self) {
        self.attempt = 0;
    }

    /// Clamps a server hint (`Retry-After`) into `[min, max]`: 0 must not become a hot loop
    /// and a huge value must not overflow a timer.
    pub fn clamp(&self, ms: u64) -> u64 {
        let (min, max) = self.bounds();
        // Not `Ord::clamp`: its `min <= max` assertion carries a formatted panic message.
        ms.max(min).min(max)
    }

    fn bounds(&self) -> (u64, u64) {
        let min = u64::from(self.policy.min_delay_ms);
        (min, u64::from(self.policy.max_delay_ms).max(min))
    }
}

impl Iterator for Backoff {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if self.attempt >= self.policy.retries {
            return None;
        }
        self.attempt += 1;
        let (min, max) = self.bounds();
        let growth = 1u64.checked_shl(self.attempt - 1).unwrap_or(u64::MAX);
        let cap = min.saturating_mul(growth).min(max);
        Some(self.rng.between(min, cap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(retries: u32, min: u32, max: u32) -> RetryPolicy {
        RetryPolicy {
            retries,
            min_delay_ms: min,
            max_delay_ms: max,
        }
    }

    #[test]
    fn delays_stay_within_the_growing_cap_then_stop() {
        for seed in 0..200 {
            let delays: Vec<u64> = Backoff::new(policy(8, 100, 5_000), seed).collect();
            assert_eq!(delays.len(), 8);
            for (k, d) in delays.iter().enumerate() {
                let cap = (100u64 << k).min(5_000);
                assert!((100..=cap).contains(d), "seed {seed} retry {k}: {d}");
            }
        }
    }

    #[test]
    fn same_seed_same_delays_other_seed_other_delays() {
        let a: Vec<u64> = Backoff::new(policy(5, 1_000, 60_000), 7).collect();
        let b: Vec<u64> = Backoff::new(policy(5, 1_000, 60_000), 7).collect();
        let c: Vec<u64> = Backoff::new(policy(5, 1_000, 60_000), 8).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn many_retries_do_not_overflow() {
        let delays: Vec<u64> = Backoff::new(policy(200, u32::MAX, u32::MAX), 1).collect();
        assert!(delays.iter().all(|&d| d == u64::from(u32::MAX)));
    }

    #[test]
    fn reset_starts_from_the_minimum_again() {
        let mut b = Backoff::new(policy(2, 10, 10_000), 3);
        assert!(b.next().is_some() && b.next().is_some());
        assert_eq!(b.next(), None);
        b.reset();
        assert!(b.next().is_some_and(|d| d == 10));
    }

    #[test]
    fn hints_are_clamped_both_ways() {
        let b = Backoff::new(policy(5, 500, 30_000), 0);
        assert_eq!(b.clamp(0), 500);
        assert_eq!(b.clamp(u64::MAX), 30_000);
        assert_eq!(b.clamp(2_000), 2_000);
    }

    #[test]
    fn jitter_covers_the_range() {
        let mut rng = SplitMix64::new(42);
        let draws: Vec<u64> = (0..1_000).map(|_| rng.between(0, 9)).collect();
        assert!((0..10).all(|v| draws.contains(&v)));
        assert_eq!(rng.between(5, 5), 5);
        assert_eq!(rng.between(9, 3), 9);
    }
}
