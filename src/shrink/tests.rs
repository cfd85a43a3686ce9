//! The minimizer's tests: the blind passes on a predicate, and whole minimizations on planted and made-up targets.

use super::directed::{directed, fault_input};
use super::*;
use crate::transcript::Event;
use serde_json::{Value, json};

fn line(v: Value) -> Input {
    Input::Line(serde_json::to_vec(&v).unwrap())
}

/// `noise` notifications (`n2`, `n3`, ...), then the trigger of the planted bug no-cache-hints.
fn noisy_trigger(noise: usize) -> Vec<Input> {
    let noise = (2..2 + noise).map(|i| line(json!({ "jsonrpc": "2.0", "method": format!("n{i}") })));
    noise.chain(crate::server::builtin::mutants::Mutant::NoCacheHints.trigger().into_iter().map(Input::Line)).collect()
}

#[test]
fn frames_that_do_not_matter_are_dropped() {
    let inputs: Vec<Input> = (0..20).map(|i| line(json!({ "n": i }))).collect();
    let needle = line(json!({ "n": 13 }));
    let shrunk = shrink(inputs, 1000, |inputs| inputs.contains(&needle));
    assert_eq!(shrunk, vec![needle]);
}

#[test]
fn fields_are_dropped_and_values_simplified() {
    let big = line(json!({ "jsonrpc": "2.0", "id": 77, "method": "tools/list",
        "params": { "_meta": { "a": "long string value here", "b": [1, 2, 3] }, "keep": true } }));
    let shrunk = shrink(vec![big, Input::Sync], 1000, |inputs| {
        inputs.iter().any(|i| matches!(i, Input::Line(l) if String::from_utf8_lossy(l).contains("\"keep\"")))
    });
    assert_eq!(shrunk, vec![line(json!({ "params": { "keep": true } }))]);
}

#[test]
fn raw_lines_are_cut_while_the_failure_holds() {
    let deep = Input::Line(format!("{}x", "[".repeat(400)).into_bytes());
    let shrunk = shrink(
        vec![deep],
        1000,
        |inputs| matches!(inputs, [Input::Line(l)] if l.iter().filter(|&&b| b == b'[').count() > 100),
    );
    let [Input::Line(l)] = &shrunk[..] else { panic!("one line expected") };
    assert!(l.len() <= 200, "{} bytes left", l.len());
    assert!(l.iter().filter(|&&b| b == b'[').count() > 100);
}

#[test]
fn a_finding_is_minimized_within_its_time() {
    use crate::server::builtin::mutants::Mutant;
    use crate::server::{InProcess, builtin::reference::Planted};
    let inputs = noisy_trigger(10);
    let mut target = InProcess(Planted(Mutant::NoCacheHints));
    let policy = Policy::default();
    let minimize = |target: &mut InProcess<Planted>, time| {
        let budget = Budget { runs: 1_000, time: Some(time) };
        minimize_finding(target, &inputs, "MCP-CACHE-HINTS", None, &policy, budget).unwrap().unwrap().inputs.len()
    };
    assert_eq!(minimize(&mut target, Duration::from_secs(60)), 1);
    assert_eq!(minimize(&mut target, Duration::ZERO), inputs.len());
    assert!(
        minimize_finding(&mut target, &inputs[..3], "MCP-CACHE-HINTS", None, &policy, Budget::default())
            .unwrap()
            .is_none()
    );
}

/// A target that keeps the inputs of each of its runs.
struct Recorded<T>(T, Vec<Vec<Input>>);

impl<T: Target> Target for Recorded<T> {
    fn run(&mut self, inputs: &[Input]) -> anyhow::Result<Transcript> {
        self.1.push(inputs.to_vec());
        self.0.run(inputs)
    }
}

/// A server that writes nothing and never ends: every conversation hangs.
struct Mute;

impl Target for Mute {
    fn run(&mut self, inputs: &[Input]) -> anyhow::Result<Transcript> {
        let sent =
            inputs.iter().filter_map(|i| if let Input::Line(l) = i { Some(Event::Sent(l.clone())) } else { None });
        Ok(Transcript { events: sent.collect(), ending: crate::transcript::Ending::Hung { waited_ms: 1 } })
    }
}

#[test]
fn a_mute_servers_hang_drops_lines_but_neither_simplifies_them_nor_sends_nothing() {
    let request =
        |id: u64| line(json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list", "params": { "cursor": "x" } }));
    let inputs = vec![request(1), Input::Sync, request(2), Input::Sync];
    let mut target = Recorded(Mute, Vec::new());
    let budget = Budget { runs: 100, time: None };
    let minimized =
        minimize_finding(&mut target, &inputs, SERVER_HANG, None, &Policy::default(), budget).unwrap().unwrap();
    let lines = minimized.inputs.iter().filter(|input| matches!(input, Input::Line(_))).count();
    assert_eq!(lines, 1, "one request is enough to hang: {:?}", minimized.inputs);
    for candidate in &target.1 {
        assert!(candidate.iter().any(|input| matches!(input, Input::Line(_))), "sent nothing: {candidate:?}");
        let simplified =
            candidate.iter().any(|input| matches!(input, Input::Line(_)) && ![request(1), request(2)].contains(input));
        assert!(!simplified, "a line simplified for a server that wrote nothing: {candidate:?}");
    }
}

#[test]
fn a_silent_servers_one_line_case_is_not_run_again() {
    let inputs = vec![line(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize" })), Input::Sync];
    let mut target = Recorded(Mute, Vec::new());
    let budget = Budget { runs: 100, time: None };
    let minimized =
        minimize_finding(&mut target, &inputs, SERVER_HANG, None, &Policy::default(), budget).unwrap().unwrap();
    assert_eq!(minimized.inputs, inputs);
    assert_eq!(target.1, [inputs], "the reproduction only: the line alone is the case itself");
}

/// A target that counts its runs.
struct Counted<T>(T, usize);

impl<T: Target> Target for Counted<T> {
    fn run(&mut self, inputs: &[Input]) -> anyhow::Result<Transcript> {
        self.1 += 1;
        self.0.run(inputs)
    }
}

#[test]
fn a_finding_without_a_budget_is_run_once() {
    use crate::server::builtin::mutants::Mutant;
    use crate::server::{InProcess, builtin::reference::Planted};
    let mut inputs = vec![line(json!({ "jsonrpc": "2.0", "method": "n" }))];
    inputs.extend(Mutant::NoCacheHints.trigger().into_iter().map(Input::Line));
    let mut target = Counted(InProcess(Planted(Mutant::NoCacheHints)), 0);
    let budget = Budget { runs: 0, time: None };
    let found = minimize_finding(&mut target, &inputs, "MCP-CACHE-HINTS", None, &Policy::default(), budget);
    assert_eq!(found.unwrap().unwrap().inputs, inputs);
    assert_eq!(target.1, 1, "the reproduction is the answer: with no runs to shrink with, nothing is run again");
}

/// The planted server on the exact `inputs`, the reference server on anything else: no candidate keeps the bug.
struct OnlyAsIs(Vec<Input>, usize);

impl Target for OnlyAsIs {
    fn run(&mut self, inputs: &[Input]) -> anyhow::Result<Transcript> {
        use crate::server::builtin::mutants::Mutant;
        use crate::server::builtin::reference::{Calc, Planted};
        self.1 += 1;
        Ok(match inputs == self.0 {
            true => crate::server::run_in_process(&Planted(Mutant::NoCacheHints), inputs),
            false => crate::server::run_in_process(&Calc, inputs),
        })
    }
}

/// The planted server on inputs of at least `.0` frames; on shorter ones, only the first time they are run (a
/// race won once), else the reference server.
struct RacyBelow(usize, Vec<Vec<Input>>);

impl Target for RacyBelow {
    fn run(&mut self, inputs: &[Input]) -> anyhow::Result<Transcript> {
        use crate::server::builtin::mutants::Mutant;
        use crate::server::builtin::reference::{Calc, Planted};
        let first_time = !self.1.iter().any(|seen| seen == inputs);
        self.1.push(inputs.to_vec());
        Ok(match inputs.len() >= self.0 || first_time {
            true => crate::server::run_in_process(&Planted(Mutant::NoCacheHints), inputs),
            false => crate::server::run_in_process(&Calc, inputs),
        })
    }
}

#[test]
fn a_minimized_case_that_does_not_break_again_gives_way_to_the_last_one_that_does() {
    let inputs = noisy_trigger(6);
    let budget = Budget { runs: 200, time: None };
    let trigger_frames = noisy_trigger(0).len();
    let mut steady = RacyBelow(0, Vec::new());
    let minimized = minimize_finding(&mut steady, &inputs, "MCP-CACHE-HINTS", None, &Policy::default(), budget);
    let smallest = minimized.unwrap().unwrap().inputs.len();
    assert!(smallest <= trigger_frames, "a steady bug shrinks to its trigger: {smallest} frames");
    // The same bug, won by a race below a frame more than that: the case keeps that frame and replays.
    let mut racy = RacyBelow(smallest + 1, Vec::new());
    let minimized = minimize_finding(&mut racy, &inputs, "MCP-CACHE-HINTS", None, &Policy::default(), budget);
    let kept = minimized.unwrap().unwrap().inputs;
    assert!(kept.len() > smallest, "{kept:?}");
    let mut replay = RacyBelow(smallest + 1, racy.1.clone());
    assert!(wanted(&replay.run(&kept).unwrap(), "MCP-CACHE-HINTS", None, &Policy::default()).is_some());
}

/// The planted server for its first `.0` runs, then runs that fail as a passed deadline does.
struct DeadlineAfter(usize);

impl Target for DeadlineAfter {
    fn run(&mut self, inputs: &[Input]) -> anyhow::Result<Transcript> {
        use crate::server::builtin::mutants::Mutant;
        use crate::server::builtin::reference::Planted;
        if self.0 == 0 {
            return Err(CutShort::DeadlinePassed.into());
        }
        self.0 -= 1;
        Ok(crate::server::run_in_process(&Planted(Mutant::NoCacheHints), inputs))
    }
}

#[test]
fn a_deadline_before_anything_shrank_is_said_and_one_after_keeps_what_shrank() {
    let inputs = noisy_trigger(10);
    let policy = Policy::default();
    let budget = Budget { runs: 1_000, time: None };
    // The reproduction runs, then every candidate meets the deadline: not minimized, and the error says why.
    let cut = minimize_finding(&mut DeadlineAfter(1), &inputs, "MCP-CACHE-HINTS", None, &policy, budget);
    assert!(cut.is_err_and(|error| CutShort::DeadlinePassed.is(&error)));
    // The first candidate (half the noise dropped) still breaks the rule before the deadline: it is kept.
    let found = minimize_finding(&mut DeadlineAfter(2), &inputs, "MCP-CACHE-HINTS", None, &policy, budget);
    let kept = found.unwrap().unwrap().inputs.len();
    assert!(kept < inputs.len(), "{kept} of {}", inputs.len());
}

#[test]
fn a_minimization_that_gives_way_goes_on_from_where_it_stopped() {
    use crate::server::builtin::mutants::Mutant;
    use crate::server::{InProcess, builtin::reference::Planted};
    let inputs = noisy_trigger(10);
    let policy = Policy::default();
    let mut target = InProcess(Planted(Mutant::NoCacheHints));
    let first =
        minimize_finding(&mut target, &inputs, "MCP-CACHE-HINTS", None, &policy, Budget { runs: 0, time: None })
            .unwrap()
            .unwrap();
    let budget = Budget { runs: 1_000, time: None };
    let whole = minimize_reproduced(&mut target, first.clone(), &policy, budget).unwrap();
    assert!(whole.inputs.len() < inputs.len());
    // Giving way before its first candidate: not done, and what it has is where it started.
    let (partial, done) = minimize_giving_way(&mut target, first.clone(), &policy, budget, &|| true).unwrap();
    assert!(!done);
    assert_eq!(partial.inputs, inputs);
    // Going on from there ends where the whole minimization ends.
    let (resumed, done) = minimize_giving_way(&mut target, partial, &policy, budget, &|| false).unwrap();
    assert!(done);
    assert_eq!(resumed.inputs, whole.inputs);
    // Never asked to give way: done at once.
    assert!(minimize_giving_way(&mut target, first, &policy, budget, &|| false).unwrap().1);
}

#[test]
fn the_line_at_fault_alone_is_the_first_candidate_and_often_the_case() {
    use crate::server::builtin::mutants::Mutant;
    use crate::server::{InProcess, builtin::reference::Planted};
    // Noise, then the trigger: the one line at fault is tried first, and it is the case.
    let mut inputs = noisy_trigger(38);
    inputs.push(Input::Sync);
    let policy = Policy::default();
    let mut target = Recorded(InProcess(Planted(Mutant::NoCacheHints)), Vec::new());
    let once = Budget { runs: 0, time: None };
    let first = minimize_finding(&mut target, &inputs, "MCP-CACHE-HINTS", None, &policy, once).unwrap().unwrap();
    let candidates = directed(&first);
    let Some(Input::Line(fault)) = candidates.first().and_then(|c| c.first()) else { panic!("{candidates:?}") };
    assert!(String::from_utf8_lossy(fault).contains("tools/list"), "{}", String::from_utf8_lossy(fault));
    target.1.clear();
    let budget = Budget { runs: 1_000, time: None };
    let minimized = minimize_reproduced(&mut target, first, &policy, budget).unwrap();
    assert_eq!(minimized.inputs.len(), 1, "{:?}", minimized.inputs);
    // The first run of the minimization is the line at fault alone, not a half of the conversation.
    assert_eq!(target.1[0], candidates[0]);
    // A handshake conversation keeps its opening: initialize, the sync point, then initialized.
    let open = |method: &str, id: Option<u64>| match id {
        Some(id) => line(json!({ "jsonrpc": "2.0", "id": id, "method": method })),
        None => line(json!({ "jsonrpc": "2.0", "method": method })),
    };
    let handshake = vec![
        open("initialize", Some(1)),
        Input::Sync,
        open("notifications/initialized", None),
        open("ping", Some(2)),
        open("tools/list", Some(3)),
        Input::Sync,
    ];
    let sent = handshake
        .iter()
        .filter_map(|i| if let Input::Line(l) = i { Some(crate::transcript::Event::Sent(l.clone())) } else { None });
    let transcript = Transcript { events: sent.collect(), ending: crate::transcript::Ending::Closed };
    let finding =
        Finding { rule: "MCP-CACHE-HINTS", level: crate::oracle::Level::Error, event: Some(3), detail: String::new() };
    let first = Minimized { inputs: handshake.clone(), transcript, finding, trigger: String::new() };
    let candidates = directed(&first);
    assert_eq!(candidates[0], vec![handshake[4].clone(), Input::Sync]);
    assert_eq!(candidates[1], [&handshake[..3], &[handshake[4].clone(), Input::Sync]].concat());
}

#[test]
fn the_line_at_fault_is_found_among_lines_sent_resolved_and_lines_of_the_harnesss_own() {
    use crate::transcript::{Ending, Event, seen};
    // A call whose argument refers to what the server said (sent resolved), then the call at fault, asked again
    // by the harness (its own line is the finding's event), then a ping.
    let seen_query = seen::reference("query", &["string"], 0, json!("fallback"));
    let call = |id: u64, query: Value| {
        line(json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "search", "arguments": { "query": query } } }))
    };
    let inputs = vec![call(1, seen_query), Input::Sync, call(2, json!("")), Input::Sync, call(3, json!("x"))];
    let Input::Line(referring) = &inputs[0] else { unreachable!() };
    let Input::Line(at_fault) = &inputs[2] else { unreachable!() };
    let reask = at_fault.iter().map(|b| if *b == b'2' { b'9' } else { *b }).collect();
    let events = vec![
        Event::Sent(seen::resolve(referring, &[]).into_owned()),
        Event::Sync,
        Event::Sent(at_fault.clone()),
        Event::Sent(reask),
        Event::Sync,
    ];
    assert_ne!(events[0], Event::Sent(referring.clone()), "the first line is sent resolved");
    let transcript = Transcript { events, ending: Ending::Closed };
    let finding = Finding {
        rule: "SERVER-HANDLER-HANG",
        level: crate::oracle::Level::Error,
        event: Some(3),
        detail: String::new(),
    };
    assert_eq!(fault_input(&inputs, &transcript, &finding), Some(2));
    assert_eq!(through_fault(&inputs, &transcript, &finding), Some(inputs[..4].to_vec()));
    // Nothing after the sync point: the conversation is already its own prefix.
    assert_eq!(through_fault(&inputs[..4], &transcript, &finding), None);
}

#[test]
fn a_reply_is_blamed_on_the_request_it_answers_and_its_kind_is_kept_for_a_bug_behind_many_calls() {
    use crate::transcript::{Ending, Event};
    let request = |id: u64, method: &str, tool: Option<&str>| match tool {
        Some(name) => line(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": { "name": name } })),
        None => line(json!({ "jsonrpc": "2.0", "id": id, "method": method })),
    };
    let opening = vec![request(1, "initialize", None), Input::Sync];
    // Two writes, a ping and a list sent back to back; the second write's reply comes after all of them.
    let body = vec![
        request(2, "tools/call", Some("put")),
        request(3, "ping", None),
        request(4, "tools/call", Some("put")),
        request(5, "tools/list", None),
        Input::Sync,
        request(6, "tools/call", Some("get")),
        Input::Sync,
    ];
    let inputs = [opening.clone(), body.clone()].concat();
    let mut events = vec![Event::Sent(line_bytes(&inputs[0])), Event::Sync];
    events.extend(body[..4].iter().map(|input| Event::Sent(line_bytes(input))));
    let reply = br#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"store full"}}"#.to_vec();
    events.extend([Event::Received { line: reply, truncated: false }, Event::Sync]);
    let at = events.len() - 2;
    let transcript = Transcript { events, ending: Ending::Closed };
    let finding = Finding {
        rule: "MCP-TOOL-VALID-ARGS",
        level: crate::oracle::Level::Error,
        event: Some(at),
        detail: String::new(),
    };
    assert_eq!(fault_input(&inputs, &transcript, &finding), Some(4), "the write, not the list sent after it");
    let first = Minimized { inputs: inputs.clone(), transcript, finding, trigger: String::new() };
    let candidates = directed(&first);
    let (put, other_put) = (body[2].clone(), body[0].clone());
    assert_eq!(candidates[0], vec![put.clone(), Input::Sync]);
    assert_eq!(candidates[1], [&opening[..], &[put.clone(), Input::Sync]].concat());
    assert_eq!(candidates[2], [&opening[..], &[other_put.clone(), put.clone(), Input::Sync]].concat());
    assert_eq!(candidates[3], [&opening[..], &[other_put, Input::Sync, put, Input::Sync]].concat());
    assert_eq!(candidates[4], inputs[..7].to_vec(), "then the conversation through the write's sync point");
}

/// The bytes of an input line.
fn line_bytes(input: &Input) -> Vec<u8> {
    match input {
        Input::Line(line) => line.clone(),
        Input::Sync => Vec::new(),
    }
}

#[test]
fn a_finding_out_of_time_or_that_does_not_shrink_is_run_once() {
    use crate::server::builtin::mutants::Mutant;
    let mut inputs = vec![line(json!({ "jsonrpc": "2.0", "method": "n" }))];
    inputs.extend(Mutant::NoCacheHints.trigger().into_iter().map(Input::Line));
    let policy = Policy::default();
    let minimize = |time| {
        let mut target = OnlyAsIs(inputs.clone(), 0);
        let budget = Budget { runs: 1_000, time };
        let found = minimize_finding(&mut target, &inputs, "MCP-CACHE-HINTS", None, &policy, budget).unwrap();
        assert_eq!(found.unwrap().inputs, inputs);
        target.1
    };
    assert_eq!(minimize(Some(Duration::ZERO)), 1, "no time left after the reproduction: no candidate, no rerun");
    let mut candidates = 0;
    shrink(inputs.clone(), 1_000, |_| {
        candidates += 1;
        false
    });
    assert!(candidates > 0);
    assert_eq!(minimize(None), 1 + candidates, "the reproduction and the candidates; no rerun of the same inputs");
}

#[test]
fn the_budget_is_respected() {
    let inputs: Vec<Input> = (0..50).map(|i| line(json!({ "n": i }))).collect();
    let mut calls = 0;
    shrink(inputs, 7, |_| {
        calls += 1;
        false
    });
    assert_eq!(calls, 7);
}
