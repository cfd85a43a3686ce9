//! Tool sessions: conversations that use the server's own tools the way a client does. A session opens in an era the
//! server serves, then calls the listed tools in turn: mostly valid arguments, often with an edge value (`""` and
//! whitespace first among them), and from the second call on, values earlier results held ([`Edge::Seen`]), so a
//! bug in the author's handler (a crash for an empty string, a result that breaks its outputSchema after a write)
//! is reached in a handful of conversations rather than a few thousand.
//!
//! A session is an ordinary [`Script`] (an opening and [`Step::Sequence`] steps), so it is encoded, judged, saved
//! and minimized as any other. The campaign and the in-process harness draw one for every other conversation of a
//! server that lists tools ([`interleaved`]); the generic scripts keep the rest.
//!
//! A long session ([`long_from_bytes`]) is a client holding one connection for a while: about 240 calls on one
//! process or HTTP session, with lists, pings and prompt and resource reads between them. The campaign runs one in
//! every [`LONG_EVERY`] conversations ([`long`]), so a bug that needs many calls on one connection (a store that
//! breaks after its 50th item, a counter that wraps, a cache that serves stale data) is reachable at all: the short
//! sessions make a dozen calls at most.

use super::arguments::{ArgPlan, Breakage};
use super::edges::Edge;
use super::message::PromptArguments::Required;
use super::message::ResourceUri::Listed;
use super::message::{Call, HandshakeVersion, Message, PromptPlan, Request, ResourcePlan, ToolPlan};
use super::{Bounded, Declares, IdKind, MAX_SEQUENCE, Opening, Script, Step};
use crate::model::Eras;
use crate::protocol::Era;
use arbitrary::{Arbitrary, Unstructured};
use proptest::prelude::{Just, Strategy, any, prop_oneof};
use proptest::strategy::BoxedStrategy;

/// The most sequence steps in one session (each of up to [`MAX_SEQUENCE`] calls), a warm-up not counted.
pub const MAX_SEQUENCES: usize = 3;

/// Whether conversation `index` of a run on a server that lists tools (`tools`) is a tool session: every odd one.
/// The even ones stay the generic scripts they were.
pub fn interleaved(index: u64, tools: bool) -> bool {
    tools && index % 2 == 1
}

/// One conversation in this many of a run on a server that lists tools is a long session ([`long`]).
pub const LONG_EVERY: u64 = 16;
/// The sequences of calls in a long session, each of one to [`MAX_SEQUENCE`] calls: about 240 calls in all.
pub const LONG_SEQUENCES: usize = 96;
/// The bytes a long session is drawn from: enough for every choice of [`LONG_SEQUENCES`] sequences.
pub const LONG_BYTES: usize = 4096;

/// Whether conversation `index` of a run on a server that lists tools (`tools`) is a long session: the last of each
/// [`LONG_EVERY`] (it comes before [`interleaved`]: the index is odd).
pub fn long(index: u64, tools: bool) -> bool {
    tools && index % LONG_EVERY == LONG_EVERY - 1
}

/// The long session `arbitrary` builds from `data` for a server serving `eras` that lists `tools` tools:
/// [`LONG_SEQUENCES`] sequences of calls as a short session has them (the same edges, breakages and warm-up), and
/// after one sequence in four a request aside ([`aside`]). A long session declares the client's capabilities in half
/// its handshake openings, so it answers the server's own requests too. Bytes that run out give the plainest
/// choices.
pub fn long_from_bytes(data: &[u8], eras: Eras, tools: usize) -> Script {
    let mut u = Unstructured::new(data);
    let draw = u.arbitrary::<u8>().unwrap_or(0);
    let opening = match opening(draw, eras) {
        Opening::Handshake(version, _) if draw & 2 == 2 => {
            Opening::Handshake(version, Declares::Everything(crate::protocol::client::Answers::Accept))
        }
        other => other,
    };
    let mut sequences = Vec::with_capacity(LONG_SEQUENCES);
    for _ in 0..LONG_SEQUENCES {
        let calls = 1 + usize::from(u.arbitrary::<u8>().unwrap_or(0)) % MAX_SEQUENCE;
        sequences.push((0..calls).map(|_| plan(&mut u)).collect());
    }
    let short = session(opening, sequences, tools);
    let mut steps = Vec::with_capacity(short.steps.0.len() * 5 / 4 + 1);
    for step in short.steps.0 {
        steps.push(step);
        if u.arbitrary::<u8>().unwrap_or(0) % 4 == 3 {
            steps.push(Step::Send(Message::Request(aside(&mut u, opening.era()))));
        }
    }
    Script { opening, steps: Bounded(steps) }
}

/// A request a long session makes between its calls, in the opening's era: a list of tools, prompts or resources,
/// a `ping` (`server/discover` in the modern era), or a prompt get or resource read of a listed one.
fn aside(u: &mut Unstructured<'_>, era: Option<Era>) -> Request {
    let call = match u.arbitrary::<u8>().unwrap_or(0) % 6 {
        0 => Call::ToolsList,
        1 if era == Some(Era::Modern) => Call::Discover,
        1 => Call::Ping,
        2 => Call::PromptsList,
        3 => Call::ResourcesList,
        4 => Call::Prompt(PromptPlan::arbitrary(u).unwrap_or(PromptPlan { prompt: 0, arguments: Required })),
        _ => Call::Resource(ResourcePlan::arbitrary(u).unwrap_or(ResourcePlan { index: 0, uri: Listed })),
    };
    Request { call, id: IdKind::SmallInt, envelope: super::envelope(era) }
}

/// The script a fuzz target's input gives on a server serving `eras` that lists `tools` tools: for one
/// that does, an input whose first byte is odd is a session, made from the bytes after it; every other input is the
/// generic script [`Script::from_bytes`] makes of it.
pub fn script_from_bytes(data: &[u8], tools: usize, eras: Eras) -> Script {
    match data.split_first() {
        Some((first, rest)) if tools > 0 && first % 2 == 1 => from_bytes(rest, eras, tools),
        _ => Script::from_bytes(data),
    }
}

/// The proptest strategy of a property on a server serving `eras` that lists `tools` tools: generic
/// scripts and sessions half and half when it does, generic scripts only when it does not.
pub fn scripts_for(tools: usize, eras: Eras) -> BoxedStrategy<Script> {
    match tools {
        0 => super::scripts().boxed(),
        _ => prop_oneof![super::scripts(), sessions(eras, tools)].boxed(),
    }
}

/// The session `arbitrary` builds from `data` for a server serving `eras`; never fails: bytes that run out give
/// the plainest choices (the first era's opening, one call of the first tool with plain arguments).
pub fn from_bytes(data: &[u8], eras: Eras, tools: usize) -> Script {
    let mut u = Unstructured::new(data);
    let opening = opening(u.arbitrary::<u8>().unwrap_or(0), eras);
    let sequences = 1 + usize::from(u.arbitrary::<u8>().unwrap_or(0)) % MAX_SEQUENCES;
    let mut steps = Vec::with_capacity(sequences);
    for _ in 0..sequences {
        let calls = 1 + usize::from(u.arbitrary::<u8>().unwrap_or(0)) % MAX_SEQUENCE;
        steps.push((0..calls).map(|_| plan(&mut u)).collect());
    }
    session(opening, steps, tools)
}

/// The session of `opening` and `sequences` of calls on a server listing `tools` tools: a warm-up sequence first
/// when a tool's first call is not the plainest one (the first of its sequence, with seed 0, no edge and no
/// breakage), which calls each such tool once that way (at most [`MAX_SEQUENCE`] of them). A call then hangs or
/// fails only after the same tool answered in the same conversation, which is what tells a handler that never
/// returns from a slow one over stdio ([`crate::server::transport`]'s re-ask), and the case file carries that
/// evidence itself.
fn session(opening: Opening, sequences: Vec<Vec<ToolPlan>>, tools: usize) -> Script {
    let mut warm: Vec<u8> = Vec::new();
    let mut called: Vec<u8> = Vec::new();
    for sequence in &sequences {
        for (at, call) in sequence.iter().enumerate() {
            let tool = (usize::from(call.tool) % tools.max(1)) as u8;
            if called.contains(&tool) {
                continue;
            }
            called.push(tool);
            let plain = at == 0 && call.arguments == ArgPlan::default();
            if !plain && warm.len() < MAX_SEQUENCE {
                warm.push(tool);
            }
        }
    }
    let mut steps: Vec<Step> = Vec::with_capacity(MAX_SEQUENCES + 1);
    if !warm.is_empty() {
        let plain = warm.into_iter().map(|tool| ToolPlan { tool, arguments: ArgPlan::default() }).collect();
        steps.push(Step::Sequence(Bounded(plain)));
    }
    steps.extend(sequences.into_iter().map(|sequence| Step::Sequence(Bounded(sequence))));
    Script { opening, steps: Bounded(steps) }
}

/// The proptest strategy for sessions on a server serving `eras`; it shrinks towards fewer calls, no breakage,
/// no edge and the first tool.
pub fn sessions(eras: Eras, tools: usize) -> impl Strategy<Value = Script> {
    let plan = (any::<u8>(), breakages(), any::<u16>(), edges())
        .prop_map(|(tool, breakage, seed, edge)| ToolPlan { tool, arguments: ArgPlan { breakage, seed, edge } });
    let sequence = proptest::collection::vec(plan, 1..=MAX_SEQUENCE);
    (any::<u8>(), proptest::collection::vec(sequence, 1..=MAX_SEQUENCES))
        .prop_map(move |(draw, sequences)| session(opening(draw, eras), sequences, tools))
}

/// The opening of a session: the handshake at the latest version for a server that serves only that era, the
/// modern one for a modern-only server, and either (by the draw's low bit) for one that serves both or is unknown.
fn opening(draw: u8, eras: Eras) -> Opening {
    let handshake = Opening::Handshake(HandshakeVersion::V2025_11_25, Declares::Nothing);
    match eras {
        Eras::Handshake => handshake,
        Eras::Modern => Opening::Modern,
        Eras::Dual | Eras::Unknown if draw.is_multiple_of(2) => handshake,
        Eras::Dual | Eras::Unknown => Opening::Modern,
    }
}

/// One call: one valid plan in eight broken, edges weighted towards the plainest ones ([`edge`]).
fn plan(u: &mut Unstructured<'_>) -> ToolPlan {
    let tool = u.arbitrary::<u8>().unwrap_or(0);
    let broken = u.arbitrary::<u8>().unwrap_or(0) % 8 == 7;
    let breakage = if broken { Breakage::arbitrary(u).unwrap_or_default() } else { Breakage::None };
    let seed = u.arbitrary::<u16>().unwrap_or(0);
    let edge = if broken { Edge::Plain } else { edge(u.arbitrary::<u8>().unwrap_or(0)) };
    ToolPlan { tool, arguments: ArgPlan { breakage, seed, edge } }
}

/// The edge a draw gives: none a quarter of the time, the zero (`""`, `0`) nearly a fifth, whitespace and a seen
/// value an eighth each, any other edge the rest.
fn edge(draw: u8) -> Edge {
    match draw {
        0..=63 => Edge::Plain,
        64..=111 => Edge::Zero,
        112..=143 => Edge::Blank,
        144..=175 => Edge::Seen,
        other => Edge::ALL[1 + usize::from(other - 176) % (Edge::ALL.len() - 1)],
    }
}

/// Proptest's breakages: none seven times in eight.
fn breakages() -> impl Strategy<Value = Breakage> {
    prop_oneof![7 => Just(Breakage::None), 1 => any::<Breakage>()]
}

/// Proptest's edges, weighted as [`edge`] and shrinking towards none, then the zero.
fn edges() -> impl Strategy<Value = Edge> {
    prop_oneof![
        4 => Just(Edge::Plain),
        3 => Just(Edge::Zero),
        2 => Just(Edge::Blank),
        2 => Just(Edge::Seen),
        5 => any::<Edge>(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Era;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    #[test]
    fn a_session_opens_in_an_era_the_server_serves_and_only_calls_tools() {
        for (eras, expected) in [(Eras::Handshake, Some(Era::Handshake)), (Eras::Modern, Some(Era::Modern))] {
            for seed in 0..50u64 {
                let script = from_bytes(&crate::campaign::conversation_bytes(seed, 1), eras, 3);
                assert_eq!(script.opening.era(), expected);
                assert!(!script.steps.0.is_empty() && script.steps.0.len() <= MAX_SEQUENCES + 1);
                assert!(script.steps.0.iter().all(|s| matches!(s, Step::Sequence(p) if !p.0.is_empty())));
            }
        }
        let both: std::collections::HashSet<_> = (0..50u64)
            .map(|seed| from_bytes(&crate::campaign::conversation_bytes(seed, 1), Eras::Dual, 3).opening.era())
            .collect();
        assert_eq!(both.len(), 2, "a dual server gets sessions in both eras");
    }

    #[test]
    fn no_bytes_give_one_plain_call() {
        let script = from_bytes(&[], Eras::Handshake, 3);
        let plain = ToolPlan { tool: 0, arguments: ArgPlan::default() };
        assert_eq!(script.steps.0, [Step::Sequence(Bounded(vec![plain]))]);
    }

    #[test]
    fn most_calls_are_valid_and_the_plainest_edges_come_most_often() {
        let mut plans = Vec::new();
        for index in 0..400u64 {
            let bytes = crate::campaign::conversation_bytes(3, index);
            let mut u = Unstructured::new(&bytes);
            plans.extend((0..4).map(|_| plan(&mut u)));
        }
        let share = |f: &dyn Fn(&ToolPlan) -> bool| plans.iter().filter(|p| f(p)).count() * 100 / plans.len();
        assert!((80..95).contains(&share(&|p| p.arguments.breakage == Breakage::None)));
        assert!((12..25).contains(&share(&|p| p.arguments.edge == Edge::Zero)));
        assert!((7..18).contains(&share(&|p| p.arguments.edge == Edge::Blank)));
        let others = share(&|p| !matches!(p.arguments.edge, Edge::Plain | Edge::Zero | Edge::Blank | Edge::Seen));
        assert!(others >= 20, "every other edge still comes: {others}%");
    }

    #[test]
    fn proptest_sessions_are_sequences_in_the_servers_era() {
        let mut runner = TestRunner::deterministic();
        let strategy = sessions(Eras::Modern, 3);
        for _ in 0..100 {
            let script = strategy.new_tree(&mut runner).unwrap().current();
            assert_eq!(script.opening, Opening::Modern);
            assert!(script.steps.0.iter().all(|s| matches!(s, Step::Sequence(_))));
        }
    }

    #[test]
    fn a_tool_whose_first_call_has_an_edge_is_called_plainly_first() {
        let call = |tool: u8, edge: Edge| ToolPlan { tool, arguments: ArgPlan { edge, ..ArgPlan::default() } };
        let plain = |tool: u8| ToolPlan { tool, arguments: ArgPlan::default() };
        // Tool 2 (5 mod 3) first comes with an edge, tool 0 plainly first: only tool 2 is warmed up.
        let script = session(Opening::Modern, vec![vec![call(0, Edge::Plain), call(5, Edge::Zero)]], 3);
        let expected =
            [Step::Sequence(Bounded(vec![plain(2)])), Step::Sequence(Bounded(vec![plain(0), call(5, Edge::Zero)]))];
        assert_eq!(script.steps.0, expected);
        // A plain first call needs no warm-up.
        let script = session(Opening::Modern, vec![vec![plain(1)]], 3);
        assert_eq!(script.steps.0, [Step::Sequence(Bounded(vec![plain(1)]))]);
    }

    #[test]
    fn one_conversation_in_sixteen_is_a_long_session_of_about_240_calls_with_asides_in_the_servers_era() {
        assert!(long(15, true) && long(31, true) && !long(16, true) && !long(14, true));
        assert!(!long(15, false), "no tools: no long sessions");
        let bytes = |seed: u64| {
            let mut draws = crate::script::draws::Draws(seed);
            (0..LONG_BYTES / 8).flat_map(|_| draws.bits().to_le_bytes()).collect::<Vec<u8>>()
        };
        let mut handshake_declares = std::collections::HashSet::new();
        for (seed, eras) in (0..20u64).zip([Eras::Handshake, Eras::Modern].into_iter().cycle()) {
            let script = long_from_bytes(&bytes(seed), eras, 3);
            let calls: usize =
                script.steps.0.iter().map(|step| if let Step::Sequence(p) = step { p.0.len() } else { 0 }).sum();
            assert!((180..=400).contains(&calls), "{calls} calls");
            let asides: Vec<Call> = script
                .steps
                .0
                .iter()
                .filter_map(|step| match step {
                    Step::Send(Message::Request(request)) => Some(request.call.clone()),
                    _ => None,
                })
                .collect();
            assert!((10..=40).contains(&asides.len()), "{} asides", asides.len());
            match eras {
                Eras::Modern => {
                    assert_eq!(script.opening, Opening::Modern);
                    assert!(!asides.contains(&Call::Ping), "no ping in 2026-07-28");
                }
                _ => {
                    let Opening::Handshake(_, declares) = script.opening else { panic!("{:?}", script.opening) };
                    handshake_declares.insert(declares);
                }
            }
        }
        assert_eq!(handshake_declares.len(), 2, "half the handshake sessions declare every capability");
        // No bytes: the plainest choices, one plain call of the first tool per sequence.
        let plain = long_from_bytes(&[], Eras::Handshake, 3);
        assert_eq!(plain.steps.0.len(), LONG_SEQUENCES);
        assert!(
            plain
                .steps
                .0
                .iter()
                .all(|s| *s == Step::Sequence(Bounded(vec![ToolPlan { tool: 0, arguments: ArgPlan::default() }])))
        );
    }

    #[test]
    fn every_other_conversation_is_a_session_on_a_server_with_tools() {
        assert!(!interleaved(0, true) && interleaved(1, true) && !interleaved(2, true));
        assert!(!interleaved(1, false), "no tools: no sessions");
    }

    #[test]
    fn a_fuzz_input_with_an_odd_first_byte_is_a_session_on_a_server_with_tools() {
        let data = crate::campaign::conversation_bytes(5, 0);
        let mut odd = data.clone();
        odd[0] |= 1;
        assert_eq!(script_from_bytes(&odd, 3, Eras::Modern), from_bytes(&odd[1..], Eras::Modern, 3));
        assert_eq!(script_from_bytes(&odd, 0, Eras::Modern), Script::from_bytes(&odd));
        let mut even = data;
        even[0] &= !1;
        assert_eq!(script_from_bytes(&even, 3, Eras::Modern), Script::from_bytes(&even));
    }
}
