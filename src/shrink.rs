//! Minimization at the message level: drop frames and sync points, drop fields, simplify values, shorten raw lines,
//! for as long as the failure still reproduces. Byte-level minimization (`cargo fuzz tmin`) cannot do this for
//! structured inputs: it breaks the JSON long before it finds the smaller message.

use crate::oracle::rules::{HANDLER_HANG, RESPONSE_MISSING, SERVER_HANG};
use crate::oracle::{Finding, Policy, check};
use crate::server::{CutShort, Target};
use crate::transcript::seen::resolve;
use crate::transcript::{Event, Input, Transcript};
use anyhow::Result;
use serde_json::{Map, Value};
use std::time::{Duration, Instant};

/// The most JSON variants tried for one line in one pass.
const MAX_VARIANTS_PER_LINE: usize = 400;

/// Minimizes `inputs` while `still_fails` holds for them, calling it at most `budget` times; returns the smallest
/// inputs found (the original ones when nothing smaller fails). `still_fails` must hold for `inputs` themselves.
pub fn shrink(inputs: Vec<Input>, budget: usize, still_fails: impl FnMut(&[Input]) -> bool) -> Vec<Input> {
    shrink_lines(inputs, budget, true, still_fails)
}

/// [`shrink`], simplifying the lines left only when `simplify` (dropping lines always); without it, a candidate
/// must drop a line (sync points alone are not worth a run: a silent server's runs each cost a whole wait).
fn shrink_lines(
    inputs: Vec<Input>,
    budget: usize,
    simplify: bool,
    mut still_fails: impl FnMut(&[Input]) -> bool,
) -> Vec<Input> {
    let mut shrinker =
        Shrinker { best: inputs, calls_left: budget, fewer_lines: !simplify, still_fails: &mut still_fails };
    loop {
        let before = shrinker.best.clone();
        shrinker.drop_chunks();
        if simplify {
            shrinker.simplify_lines();
        }
        if shrinker.best == before || shrinker.calls_left == 0 {
            return shrinker.best;
        }
    }
}

/// How much work one minimization may do: at most `runs` target runs, and no run started after `time` has passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The most target runs.
    pub runs: usize,
    /// The longest time, when bounded.
    pub time: Option<Duration>,
}

impl Default for Budget {
    /// 2,000 runs or 60 seconds, whichever comes first.
    fn default() -> Budget {
        Budget { runs: 2_000, time: Some(Duration::from_secs(60)) }
    }
}

/// A finding reproduced on inputs as small as the shrinker could make them.
#[derive(Clone, Debug)]
pub struct Minimized {
    /// The minimized inputs.
    pub inputs: Vec<Input>,
    /// Their transcript on the target.
    pub transcript: Transcript,
    /// The first finding of the rule (and trigger, when one was asked for) in that transcript.
    pub finding: Finding,
    /// The finding's trigger ([`crate::trigger::signature`]).
    pub trigger: String,
}

/// Minimizes `inputs` while `rule` still breaks on `target`, within `budget`; with a `trigger`, while it breaks
/// with that trigger ([`crate::trigger::signature`]), so shrinking never slides from one bug to another of the same
/// rule. `None` when the rule (with the trigger) does not break on `inputs` at all; the minimized inputs come with
/// the run in which they broke it (not run again); with no runs or no time left in `budget` after the first run,
/// that run is the answer. An error means the target could not run ([`CutShort::DeadlinePassed`]: the whole run's deadline
/// passed before anything shrank).
pub fn minimize_finding(
    target: &mut dyn Target,
    inputs: &[Input],
    rule: &str,
    trigger: Option<&str>,
    policy: &Policy,
    budget: Budget,
) -> Result<Option<Minimized>> {
    let until = budget.time.map(|time| Instant::now() + time);
    let Some(first) = reproduce(target, inputs, rule, trigger, policy)? else {
        return Ok(None);
    };
    let limits = Limits { runs: budget.runs, until, give_way: &|| false };
    let (minimized, _) = shrink_from(target, first, rule, trigger, policy, limits)?;
    Ok(Some(minimized))
}

/// Minimizes a finding already reproduced on `target` (`first`: its inputs and the run that broke the rule, such as
/// the run that confirmed it), as [`minimize_finding`] does after its first run; `first` is the answer when nothing
/// smaller breaks the rule with `first`'s trigger or `budget` allows no run.
pub fn minimize_reproduced(
    target: &mut dyn Target,
    first: Minimized,
    policy: &Policy,
    budget: Budget,
) -> Result<Minimized> {
    minimize_giving_way(target, first, policy, budget, &|| false).map(|(minimized, _)| minimized)
}

/// [`minimize_reproduced`], giving way as soon as `give_way` says so (another finding waits to be confirmed): the
/// answer is then the smallest inputs found so far, with `false` (not done); minimizing them again goes on from
/// there. `true` when the minimization ended on its own (nothing smaller, or its budget spent).
pub fn minimize_giving_way(
    target: &mut dyn Target,
    first: Minimized,
    policy: &Policy,
    budget: Budget,
    give_way: &dyn Fn() -> bool,
) -> Result<(Minimized, bool)> {
    let until = budget.time.map(|time| Instant::now() + time);
    let (rule, trigger) = (first.finding.rule, first.trigger.clone());
    shrink_from(target, first, rule, Some(&trigger), policy, Limits { runs: budget.runs, until, give_way })
}

/// The first finding of `rule` (with `trigger`, when given) in `transcript`, with its trigger.
pub fn wanted(
    transcript: &Transcript,
    rule: &str,
    trigger: Option<&str>,
    policy: &Policy,
) -> Option<(Finding, String)> {
    check(transcript, policy).into_iter().filter(|f| f.rule == rule).find_map(|finding| {
        let signature = crate::trigger::signature(transcript, &finding);
        trigger.is_none_or(|t| t == signature).then_some((finding, signature))
    })
}

/// Runs `inputs` once: the finding of `rule` (with `trigger`) they break, if they do.
fn reproduce(
    target: &mut dyn Target,
    inputs: &[Input],
    rule: &str,
    trigger: Option<&str>,
    policy: &Policy,
) -> Result<Option<Minimized>> {
    let transcript = target.run(inputs)?;
    Ok(wanted(&transcript, rule, trigger, policy).map(|(finding, trigger)| Minimized {
        inputs: inputs.to_vec(),
        transcript,
        finding,
        trigger,
    }))
}

/// How far one shrinking may go: at most `runs` runs, none started after `until` or once `give_way` holds.
struct Limits<'a> {
    runs: usize,
    until: Option<Instant>,
    give_way: &'a dyn Fn() -> bool,
}

/// Shrinks `first`'s inputs within `limits`: the smallest inputs that still broke the rule with their run (or
/// `first` when nothing smaller did), and whether the shrinking ended on its own (false: it gave way);
/// [`CutShort::DeadlinePassed`] when nothing shrank before a run failed with it (the whole run's deadline passed, so `first`
/// was not minimized).
fn shrink_from(
    target: &mut dyn Target,
    first: Minimized,
    rule: &str,
    trigger: Option<&str>,
    policy: &Policy,
    limits: Limits<'_>,
) -> Result<(Minimized, bool)> {
    let Limits { runs, until, give_way } = limits;
    let out_of_time = || until.is_some_and(|until| Instant::now() >= until);
    if runs == 0 || out_of_time() {
        return Ok((first, true));
    }
    // Set when a candidate was not run because the shrinking gave way: it did not end on its own.
    let mut gave_way = false;
    // The last candidates that still broke the rule, with their runs, the latest last: the shrinker's answer is the
    // latest, run once more unless it rests on a wait ([`verified`]).
    let mut kept: Vec<Minimized> = Vec::new();
    // Set when a run could not start because the whole run's deadline passed (a campaign's): no later one can.
    let mut cut = false;
    let mut attempt = |candidate: &[Input]| {
        if cut || out_of_time() {
            return false;
        }
        if gave_way || give_way() {
            gave_way = true;
            return false;
        }
        let transcript = match target.run(candidate) {
            Ok(transcript) => transcript,
            Err(error) => {
                cut |= CutShort::DeadlinePassed.is(&error);
                return false;
            }
        };
        let Some((finding, trigger)) = wanted(&transcript, rule, trigger, policy) else { return false };
        if kept.len() == KEPT {
            kept.remove(0);
        }
        kept.push(Minimized { inputs: candidate.to_vec(), transcript, finding, trigger });
        true
    };
    // The likeliest small cases first, one run each; the passes go on from the first that still breaks the rule.
    // A candidate that is the case itself is known to break it: not run again (a silent server's one line).
    let (mut start, mut tried) = (first.inputs.clone(), 0);
    for candidate in directed(&first).into_iter().filter(|candidate| *candidate != first.inputs) {
        if tried == runs {
            break;
        }
        tried += 1;
        if attempt(&candidate) {
            start = candidate;
            break;
        }
    }
    // A server that wrote nothing and stopped answering stays silent for any line: simplifying a line costs a whole
    // wait per try and shows nothing.
    let mute = first.transcript.received().next().is_none();
    let simplify = !(mute && [SERVER_HANG, RESPONSE_MISSING].contains(&rule));
    let shrunk = shrink_lines(start, runs - tried, simplify, &mut attempt);
    match kept.last() {
        Some(last) if last.inputs == shrunk => {
            let wait = [SERVER_HANG, HANDLER_HANG].contains(&rule) || !simplify;
            let mut again = |inputs: &[Input]| match target.run(inputs) {
                Ok(transcript) => Some(wanted(&transcript, rule, trigger, policy).is_some()),
                Err(_) => None,
            };
            let verified = if wait { kept.pop() } else { verified(kept, &mut again, out_of_time) };
            Ok((verified.unwrap_or(first), !gave_way))
        }
        // Nothing shrank before the deadline cut the runs: not minimized, and the caller is told why.
        _ if cut => Err(CutShort::DeadlinePassed.into()),
        // Nothing shrank.
        _ => Ok((first, !gave_way)),
    }
}

/// How many of the last candidates that broke the rule a minimization keeps, to fall back on when the latest does
/// not break it again.
const KEPT: usize = 3;

/// The latest of `kept` that breaks the rule once more (`again`: `Some(true)` when it does, `None` when the target
/// could not run): a candidate that broke it once may have done so by a race (go-sdk writes a reply or drops the
/// connection first, as its goroutines fall), and a case file must replay. One that cannot be run again (no time
/// left, or the target failed) is taken as it is. `None` when none of `kept` breaks it again: the case stays as
/// first seen.
fn verified(
    mut kept: Vec<Minimized>,
    again: &mut dyn FnMut(&[Input]) -> Option<bool>,
    out_of_time: impl Fn() -> bool,
) -> Option<Minimized> {
    while let Some(latest) = kept.pop() {
        if out_of_time() {
            return Some(latest);
        }
        match again(&latest.inputs) {
            Some(false) => continue,
            Some(true) | None => return Some(latest),
        }
    }
    None
}

/// The candidates a minimization tries before its passes, smallest first: the input line at fault alone, then the
/// conversation's opening (up to its first sync point, with the notifications right after it) and that line. Most
/// findings need no more, and each costs one run where the passes' halvings cost several (for a hang, a whole wait
/// each). None when the finding's event names no input line ([`fault_input`]).
///
/// A finding that needs more than the line (a store that breaks at its 51st write, in a long session) gets two more:
/// the opening and every earlier line of the fault's kind ([`kind`]: the same method, and the same tool for a tool
/// call) with the fault line, back to back and then each after a sync point; and the conversation up to the sync
/// point after the fault line.
fn directed(first: &Minimized) -> Vec<Vec<Input>> {
    let Some(fault) = fault_input(&first.inputs, &first.transcript, &first.finding) else { return Vec::new() };
    let line = first.inputs[fault].clone();
    let mut candidates = vec![vec![line.clone(), Input::Sync]];
    let opened = first.inputs[..fault].iter().position(|input| *input == Input::Sync).map(|sync| {
        let mut opening = first.inputs[..=sync].to_vec();
        opening.extend(first.inputs[sync + 1..fault].iter().take_while(|input| is_notification(input)).cloned());
        opening
    });
    if let Some(opening) = &opened {
        candidates.push([opening.as_slice(), &[line.clone(), Input::Sync]].concat());
    }
    let start = opened.as_ref().map_or(0, Vec::len);
    let fault_kind = kind(&line);
    let kin: Vec<Input> = first.inputs[start.min(fault)..=fault]
        .iter()
        .filter(|input| fault_kind.is_some() && kind(input) == fault_kind)
        .cloned()
        .collect();
    let opening = opened.unwrap_or_default();
    let back_to_back = [opening.as_slice(), &kin, &[Input::Sync]].concat();
    let synced = opening.iter().cloned().chain(kin.into_iter().flat_map(|line| [line, Input::Sync])).collect();
    candidates.extend([back_to_back, synced]);
    if let Some(sync) = first.inputs[fault..].iter().position(|input| *input == Input::Sync) {
        candidates.push(first.inputs[..=fault + sync].to_vec());
    }
    candidates.retain(|candidate| candidate.len() < first.inputs.len());
    candidates.dedup();
    candidates
}

/// What kind of message a line is, for [`directed`]: its method, and a tool call's tool name; `None` for a line
/// that is no JSON object with a method, even read leniently (a string of bytes that are not UTF-8 is a call all the
/// same).
fn kind(input: &Input) -> Option<(String, Option<String>)> {
    let Input::Line(line) = input else { return None };
    let lenient = || crate::protocol::json::lenient_text(line).and_then(|text| serde_json::from_slice(&text).ok());
    let message: Map<String, Value> = serde_json::from_slice(line).ok().or_else(lenient)?;
    let method = message.get("method")?.as_str()?.to_string();
    let tool = message.get("params").and_then(|p| p.get("name")).and_then(Value::as_str).map(str::to_string);
    Some((method, tool))
}

/// The index among `inputs` of the line at fault in `finding`: the one its event carries, or the last input line
/// sent before it (the event may be a line of the harness's own, such as a re-ask); `None` when the event names no
/// input line.
fn fault_input(inputs: &[Input], transcript: &Transcript, finding: &Finding) -> Option<usize> {
    let at = finding.event?;
    let at = crate::trigger::answered(&transcript.events, at).unwrap_or(at);
    let mut lines = inputs
        .iter()
        .enumerate()
        .filter_map(|(index, input)| if let Input::Line(line) = input { Some((index, line)) } else { None });
    // The transcript's sent lines, matched in order to the inputs' lines (the harness's own lines in between), each
    // as it was sent: its references to what the server said before resolved.
    let (mut next, mut fault) = (lines.next(), None);
    for (index, event) in transcript.events.iter().enumerate().take(at + 1) {
        if let Event::Sent(sent) = event
            && let Some((input, _)) = next.filter(|(_, line)| *resolve(line, &transcript.events[..index]) == **sent)
        {
            fault = Some(input);
            next = lines.next();
        }
    }
    fault
}

/// The conversation of `inputs` up to the sync point after the line at fault in `finding` ([`fault_input`]), when
/// lines come after it: what a finding about that line's own reply (a handler that never returns) needs, since the
/// lines after it were sent only once its wait was over.
pub fn through_fault(inputs: &[Input], transcript: &Transcript, finding: &Finding) -> Option<Vec<Input>> {
    let fault = fault_input(inputs, transcript, finding)?;
    let sync = fault + inputs[fault..].iter().position(|input| *input == Input::Sync)?;
    (sync + 1 < inputs.len()).then(|| inputs[..=sync].to_vec())
}

/// True when `input` is a JSON-RPC notification: an object with a method and no id.
fn is_notification(input: &Input) -> bool {
    let Input::Line(line) = input else { return false };
    serde_json::from_slice::<Map<String, Value>>(line).is_ok_and(|m| m.contains_key("method") && !m.contains_key("id"))
}

struct Shrinker<'a> {
    best: Vec<Input>,
    calls_left: usize,
    /// True when a candidate must send fewer lines than the best so far.
    fewer_lines: bool,
    still_fails: &'a mut dyn FnMut(&[Input]) -> bool,
}

impl Shrinker<'_> {
    /// Tries a candidate; keeps it when it still fails. One that sends nothing is not tried: a finding is about
    /// something the server was sent; nor, with `fewer_lines`, one that sends as many lines as the best.
    fn try_candidate(&mut self, candidate: Vec<Input>) -> bool {
        let lines = |inputs: &[Input]| inputs.iter().filter(|input| matches!(input, Input::Line(_))).count();
        let sends = lines(&candidate);
        let worth = sends > 0 && (!self.fewer_lines || sends < lines(&self.best));
        if self.calls_left == 0 || candidate == self.best || !worth {
            return false;
        }
        self.calls_left -= 1;
        if (self.still_fails)(&candidate) {
            self.best = candidate;
            return true;
        }
        false
    }

    /// Removes runs of frames, from half the script down to single frames.
    fn drop_chunks(&mut self) {
        let mut size = self.best.len().div_ceil(2).max(1);
        loop {
            let mut start = 0;
            while start < self.best.len() {
                let mut candidate = self.best.clone();
                candidate.drain(start..(start + size).min(candidate.len()));
                if !self.try_candidate(candidate) {
                    start += size;
                }
            }
            if size == 1 || self.calls_left == 0 {
                return;
            }
            size = size.div_ceil(2);
        }
    }

    /// Simplifies each line in place: JSON lines field by field, other lines by cutting bytes.
    fn simplify_lines(&mut self) {
        for index in 0..self.best.len() {
            while let Some(Input::Line(line)) = self.best.get(index) {
                let variants = match serde_json::from_slice::<Value>(line) {
                    Ok(value) => json_variants(&value)
                        .into_iter()
                        .map(|v| serde_json::to_vec(&v).unwrap_or_default())
                        .filter(|v| v.len() < line.len())
                        .collect(),
                    Err(_) => byte_variants(line),
                };
                let mut improved = false;
                for variant in variants {
                    let mut candidate = self.best.clone();
                    candidate[index] = Input::Line(variant);
                    if self.try_candidate(candidate) {
                        improved = true;
                        break;
                    }
                }
                if !improved || self.calls_left == 0 {
                    break;
                }
            }
        }
    }
}

/// Shorter versions of a line that is not JSON: each half, and the line without each quarter.
fn byte_variants(line: &[u8]) -> Vec<Vec<u8>> {
    if line.len() < 2 {
        return Vec::new();
    }
    let (half, quarter) = (line.len() / 2, line.len().div_ceil(4));
    let mut variants = vec![line[..half].to_vec(), line[half..].to_vec()];
    for start in (0..line.len()).step_by(quarter) {
        let mut variant = line[..start].to_vec();
        variant.extend_from_slice(&line[(start + quarter).min(line.len())..]);
        variants.push(variant);
    }
    variants
}

/// Whole-document variants of `value`, each simpler than it in one place, the most drastic first.
pub fn json_variants(value: &Value) -> Vec<Value> {
    let mut variants = Vec::new();
    collect_variants(value, &mut |v| variants.push(v));
    variants.truncate(MAX_VARIANTS_PER_LINE);
    variants
}

/// Calls `emit` with every one-place simplification of `value`: removing a member or element, replacing a
/// container with an empty one, shortening a string, zeroing a number; then the same inside each child.
fn collect_variants(value: &Value, emit: &mut dyn FnMut(Value)) {
    match value {
        Value::Object(map) => {
            for key in map.keys() {
                let mut smaller = map.clone();
                smaller.shift_remove(key);
                emit(Value::Object(smaller));
            }
            for (key, child) in map {
                collect_variants(child, &mut |simpler| {
                    let mut replaced: Map<String, Value> = map.clone();
                    replaced.insert(key.clone(), simpler);
                    emit(Value::Object(replaced));
                });
            }
        }
        Value::Array(items) => {
            if !items.is_empty() {
                emit(Value::Array(Vec::new()));
            }
            for index in 0..items.len() {
                let mut smaller = items.clone();
                smaller.remove(index);
                emit(Value::Array(smaller));
            }
            for (index, child) in items.iter().enumerate() {
                collect_variants(child, &mut |simpler| {
                    let mut replaced = items.clone();
                    replaced[index] = simpler;
                    emit(Value::Array(replaced));
                });
            }
        }
        Value::String(s) if !s.is_empty() => {
            emit(Value::String(String::new()));
            if s.chars().count() > 8 {
                emit(Value::String(s.chars().take(s.chars().count() / 2).collect()));
            }
        }
        Value::Number(n) if n.to_string() != "0" => emit(Value::from(0)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(v: Value) -> Input {
        Input::Line(serde_json::to_vec(&v).unwrap())
    }

    /// `noise` notifications (`n2`, `n3`, ...), then the trigger of the planted bug no-cache-hints.
    fn noisy_trigger(noise: usize) -> Vec<Input> {
        let noise = (2..2 + noise).map(|i| line(json!({ "jsonrpc": "2.0", "method": format!("n{i}") })));
        noise
            .chain(crate::server::builtin::mutants::Mutant::NoCacheHints.trigger().into_iter().map(Input::Line))
            .collect()
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
            let simplified = candidate
                .iter()
                .any(|input| matches!(input, Input::Line(_)) && ![request(1), request(2)].contains(input));
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
        let sent = handshake.iter().filter_map(|i| {
            if let Input::Line(l) = i { Some(crate::transcript::Event::Sent(l.clone())) } else { None }
        });
        let transcript = Transcript { events: sent.collect(), ending: crate::transcript::Ending::Closed };
        let finding = Finding {
            rule: "MCP-CACHE-HINTS",
            level: crate::oracle::Level::Error,
            event: Some(3),
            detail: String::new(),
        };
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
}
