//! How fast a server answers, measured as a run goes, and the reply timeout that follows from it. Every reply to a
//! request (tool calls aside: a slow tool has its own wait, [`crate::server::transport::stdio`]'s re-ask) is a
//! sample of its wall-clock time on this machine, now: a loaded machine slows the server and the harness alike,
//! and the samples show it. Once [`MIN_SAMPLES`] are in, the reply timeout is [`FACTOR`] times the 99th percentile
//! (rounded up to a power of two of milliseconds), never below the configured one and never above [`CEILING`]. A
//! slow server gets longer waits, not findings; `--timeout` pins the timeout instead.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How many replies are measured before the timeout adapts.
pub const MIN_SAMPLES: u64 = 20;

/// How many times the 99th percentile of the reply time the reply timeout is.
pub const FACTOR: u32 = 4;

/// The longest reply timeout the measure gives.
pub const CEILING: Duration = Duration::from_secs(60);

/// Buckets of reply times: bucket `b` holds times below 2^b ms (the last one, everything longer).
const BUCKETS: usize = 24;

/// A histogram of reply times, shared by the conversations of a target (lock-free).
#[derive(Debug, Default)]
pub struct Latency {
    buckets: [AtomicU64; BUCKETS],
    samples: AtomicU64,
}

impl Latency {
    /// Counts one reply that took `took`.
    pub fn record(&self, took: Duration) {
        let millis = took.as_millis().min(u128::from(u64::MAX)) as u64;
        let bucket = ((u64::BITS - millis.leading_zeros()) as usize).min(BUCKETS - 1);
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.samples.fetch_add(1, Ordering::Relaxed);
    }

    /// The reply time below which 99 % of the replies came (the upper edge of its bucket); `None` before
    /// [`MIN_SAMPLES`] replies.
    pub fn p99(&self) -> Option<Duration> {
        let samples = self.samples.load(Ordering::Relaxed);
        if samples < MIN_SAMPLES {
            return None;
        }
        let wanted = samples - samples / 100;
        let mut seen = 0;
        for (bucket, count) in self.buckets.iter().enumerate() {
            seen += count.load(Ordering::Relaxed);
            if seen >= wanted {
                return Some(Duration::from_millis(1 << bucket));
            }
        }
        Some(CEILING)
    }

    /// The reply timeout for the next conversation: `configured`, or [`FACTOR`] times the 99th percentile when that
    /// is longer (at most [`CEILING`]).
    pub fn reply_timeout(&self, configured: Duration) -> Duration {
        match self.p99() {
            Some(p99) => configured.max((p99 * FACTOR).min(CEILING)),
            None => configured,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_stays_until_enough_replies_are_measured() {
        let latency = Latency::default();
        for _ in 0..MIN_SAMPLES - 1 {
            latency.record(Duration::from_secs(3));
        }
        assert_eq!(latency.reply_timeout(Duration::from_secs(2)), Duration::from_secs(2));
        latency.record(Duration::from_secs(3));
        // 3 s is in the bucket below 4,096 ms: 4 x 4.096 s.
        assert_eq!(latency.reply_timeout(Duration::from_secs(2)), Duration::from_millis(4 * 4096));
    }

    #[test]
    fn a_fast_server_keeps_the_configured_timeout_and_a_slow_one_gets_longer_waits() {
        let fast = Latency::default();
        (0..100).for_each(|_| fast.record(Duration::from_millis(3)));
        assert_eq!(fast.p99(), Some(Duration::from_millis(4)));
        assert_eq!(fast.reply_timeout(Duration::from_secs(2)), Duration::from_secs(2));
        // One slow reply in a hundred is within the 1 % left out; two are not.
        let slow = Latency::default();
        (0..98).for_each(|_| slow.record(Duration::from_millis(3)));
        (0..2).for_each(|_| slow.record(Duration::from_millis(1500)));
        assert_eq!(slow.reply_timeout(Duration::from_secs(2)), Duration::from_millis(4 * 2048));
        let stuck = Latency::default();
        (0..100).for_each(|_| stuck.record(Duration::from_secs(3600)));
        assert_eq!(stuck.reply_timeout(Duration::from_secs(2)), CEILING);
    }
}
