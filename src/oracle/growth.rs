//! `SERVER-RESOURCE-GROWTH`: the memory and descriptors a server's processes hold over a long conversation, from the
//! transport's [`Note::Usage`] samples. A server held open by a client for hours must not keep taking more with every
//! call; what it takes once (a cache filled, a JIT warmed, a pool opened) is not judged.

use super::Findings;
use super::rules::RESOURCE_GROWTH;
use crate::transcript::{Event, Note, Transcript};

/// The fewest samples judged: the first quarter of the conversation is warm-up, the rest must show the growth twice
/// over.
const MIN_SAMPLES: usize = 5;
/// Descriptors that, gained over the judged part and in each of its halves at least a quarter of this, are a leak.
const FD_GROWTH: u64 = 64;
/// Resident KiB that, gained likewise, are a leak (64 MiB).
const RSS_GROWTH_KB: u64 = 64 * 1024;

/// One sample: the event it is at, and what it read.
#[derive(Clone, Copy)]
struct Sample {
    at: usize,
    lines: u64,
    rss_kb: u64,
    fds: u64,
}

/// Judges the usage samples of `transcript`: a growth past a bound over the conversation after its first quarter,
/// still going in both halves of that, is a finding on the last sample.
pub(super) fn check(transcript: &Transcript, findings: &mut Findings) {
    let samples: Vec<Sample> = transcript
        .events
        .iter()
        .enumerate()
        .filter_map(|(at, event)| match event {
            Event::Note(Note::Usage { lines, rss_kb, fds }) => {
                Some(Sample { at, lines: *lines, rss_kb: *rss_kb, fds: *fds })
            }
            _ => None,
        })
        .collect();
    let Some(last) = samples.last().copied() else { return };
    let judged: Vec<Sample> = samples.iter().copied().filter(|s| s.lines * 4 >= last.lines).collect();
    if samples.len() < MIN_SAMPLES || judged.len() < 3 {
        return;
    }
    let (first, middle) = (judged[0], judged[judged.len() / 2]);
    let grew = |read: fn(&Sample) -> u64, bound: u64| {
        let gained = |from: &Sample, to: &Sample| read(to).saturating_sub(read(from));
        let total = gained(&first, &last);
        (total >= bound && gained(&first, &middle) >= bound / 4 && gained(&middle, &last) >= bound / 4).then_some(total)
    };
    let span = last.lines - first.lines;
    let per_hundred = |total: u64| total * 100 / span.max(1);
    let mut grown = Vec::new();
    if let Some(total) = grew(|s| s.fds, FD_GROWTH) {
        grown.push(format!(
            "open descriptors went from {} to {} (+{} per 100 lines)",
            first.fds,
            last.fds,
            per_hundred(total)
        ));
    }
    if let Some(total) = grew(|s| s.rss_kb, RSS_GROWTH_KB) {
        grown.push(format!(
            "resident memory went from {} to {} MiB (+{} KiB per 100 lines)",
            first.rss_kb / 1024,
            last.rss_kb / 1024,
            per_hundred(total)
        ));
    }
    if !grown.is_empty() {
        findings.add(
            RESOURCE_GROWTH,
            Some(last.at),
            format!(
                "over one session, from line {} to line {}, the server's {}, and still grew in the second half",
                first.lines,
                last.lines,
                grown.join(" and its ")
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Ending;

    /// A transcript of usage samples, one every 20 lines, each holding what `at` says for its number.
    fn sampled(at: impl Fn(u64) -> (u64, u64)) -> Transcript {
        let events = (1..=12u64)
            .flat_map(|n| {
                let (rss_kb, fds) = at(n);
                [Event::Sync, Event::Note(Note::Usage { lines: n * 20, rss_kb, fds })]
            })
            .collect();
        Transcript { events, ending: Ending::Closed }
    }

    fn judged(transcript: &Transcript) -> Vec<String> {
        let mut findings = Findings::default();
        check(transcript, &mut findings);
        findings.0.into_iter().map(|f| f.detail).collect()
    }

    #[test]
    fn descriptors_or_memory_that_keep_growing_with_the_calls_are_a_finding() {
        let fds = judged(&sampled(|n| (50_000, 10 + 8 * n)));
        assert_eq!(fds.len(), 1);
        assert!(fds[0].contains("open descriptors went from 34 to 106 (+40 per 100 lines)"), "{}", fds[0]);
        let memory = judged(&sampled(|n| (40_000 + 10_000 * n, 20)));
        assert!(memory[0].contains("resident memory went from 68 to 156 MiB"), "{}", memory[0]);
    }

    #[test]
    fn what_is_taken_once_or_stays_under_the_bound_is_not() {
        // A pool of 200 descriptors and a 500 MiB cache taken in the first quarter, then flat.
        assert!(judged(&sampled(|n| if n < 3 { (50_000, 10) } else { (550_000, 210) })).is_empty());
        // A jump late in the session that does not go on: not growing in both halves.
        assert!(judged(&sampled(|n| if n < 11 { (50_000, 10) } else { (150_000, 200) })).is_empty());
        // Growing all along, but by less than the bounds.
        assert!(judged(&sampled(|n| (50_000 + 1_000 * n, 10 + n))).is_empty());
        // Too few samples to tell.
        let short = sampled(|n| (50_000 * n, 100 * n));
        let few = Transcript { events: short.events[..8].to_vec(), ending: Ending::Closed };
        assert!(judged(&few).is_empty());
    }
}
