//! Minimization at the message level: drop frames and sync points, drop fields, simplify values, shorten raw lines,
//! for as long as the failure still reproduces. Byte-level minimization (`cargo fuzz tmin`) cannot do this for
//! structured inputs: it breaks the JSON long before it finds the smaller message.
//!
//! Here: the public face and the minimization of a finding on a target ([`minimize_finding`] and its kin). The
//! candidates aimed at the line at fault are in `directed.rs`, the blind passes (dropping runs of frames, simplifying
//! lines) in `passes.rs` over the value simplifications of `simplify.rs`, and the last check that the answer
//! breaks the rule again in `verify.rs`.

mod directed;
mod passes;
mod simplify;
mod verify;

pub use directed::through_fault;
pub use passes::shrink;
pub use simplify::json_variants;

use crate::oracle::rules::{HANDLER_HANG, RESPONSE_MISSING, SERVER_HANG};
use crate::oracle::{Finding, Policy, check};
use crate::server::{CutShort, Target};
use crate::transcript::{Input, Transcript};
use anyhow::Result;
use directed::directed;
use passes::shrink_lines;
use std::time::{Duration, Instant};
use verify::{KEPT, verified};

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

#[cfg(test)]
mod tests;
