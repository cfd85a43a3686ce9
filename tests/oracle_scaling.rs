//! Checking a transcript takes time linear in its length, also when the client uses one id again and again (each
//! request answered at once, or all sent before any reply): doubling the transcript at most about doubles the time.

use mcp_wirefuzz::oracle::{Policy, check};
use mcp_wirefuzz::transcript::{Ending, Event, Transcript};
use std::time::{Duration, Instant};

const REQUEST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const REPLY: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;

fn interleaved(n: usize) -> Transcript {
    let pair = [Event::Sent(REQUEST.to_vec()), Event::Received { line: REPLY.to_vec(), truncated: false }];
    Transcript { events: pair.iter().cycle().take(2 * n).cloned().collect(), ending: Ending::Closed }
}

fn all_sent_first(n: usize) -> Transcript {
    let sent = std::iter::repeat_n(Event::Sent(REQUEST.to_vec()), n);
    let received = std::iter::repeat_n(Event::Received { line: REPLY.to_vec(), truncated: false }, n);
    Transcript { events: sent.chain(received).collect(), ending: Ending::Closed }
}

/// The fastest of three checks of `transcript`.
fn time(transcript: &Transcript) -> Duration {
    (0..3)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(check(transcript, &Policy::default()));
            started.elapsed()
        })
        .min()
        .unwrap()
}

#[test]
fn a_reused_id_costs_linear_time() {
    for (name, make) in [("interleaved", interleaved as fn(usize) -> Transcript), ("all sent first", all_sent_first)] {
        let (small, large) = (time(&make(10_000)), time(&make(40_000)));
        // Linear: about 4x; quadratic: about 16x. The margin allows a loaded machine.
        assert!(large < small * 8 + Duration::from_millis(50), "{name}: 10,000 in {small:?}, 40,000 in {large:?}");
    }
}
