//! Confirming a finding before it counts. Its conversation runs again from its case on a fresh connection with the
//! run's waits, up to [`RERUNS`] times; a finding that rests on silence or time ([`rests_on_silence`]: no reply, a
//! hang, a server that does not exit, a dropped batch or big-id request, a tool that never returns) runs instead
//! on a target whose waits are [`STRETCH`] times longer ([`crate::server::Target::patient`]): a silence that lasts
//! the longer waits lasts the run's, and a reply that comes within them shows a slow server, not a silent one. What
//! breaks is [`Confirmation::Confirmed`] and fails the run; what does not is [`Confirmation::Unconfirmed`]: reported in a
//! section of its own with its case file, and failing the run only with `--strict`. A slow server on a busy machine
//! gets longer waits, not findings.

use crate::oracle::rules::{
    BATCH, BIG_ID, HANDLER_HANG, HTTP_RESPONSE, MALFORMED_REPLY, NULL_PARAMS, RESPONSE_MISSING, SERVER_HANG,
    SERVER_SHUTDOWN,
};
use crate::oracle::{Finding, Policy};
use crate::server::Target;
use crate::shrink::{Budget, Minimized, minimize_finding, through_fault, wanted};
use crate::transcript::{Ending, Event, Input, Transcript};
use anyhow::Result;
use std::time::Duration;

/// How many times a finding's conversation is run again, with the run's waits, before it is called unconfirmed.
pub const RERUNS: usize = 3;

/// How many times longer the waits are for the run that confirms a finding resting on silence or time.
pub const STRETCH: u32 = 4;

/// The rules whose findings rest on silence or on time: a reply that did not come within a wait, a server that
/// went quiet or did not exit, a request (in a batch, with a big id, after a malformed line, with null params)
/// that got no reply, a handler that did not return. A slow server breaks them with short waits and not with long
/// ones.
const SILENCE_RULES: &[&str] = &[
    RESPONSE_MISSING,
    SERVER_HANG,
    SERVER_SHUTDOWN,
    HANDLER_HANG,
    BIG_ID,
    BATCH,
    MALFORMED_REPLY,
    NULL_PARAMS,
    HTTP_RESPONSE,
];

/// True when findings of `rule` rest on silence or time, and so are confirmed with stretched waits too.
pub fn rests_on_silence(rule: &str) -> bool {
    SILENCE_RULES.contains(&rule)
}

/// The expected time to run a finding of `rule` again, whose conversation took `took` and ended as `transcript`
/// did (a prelude's conversation took nothing here: its wait is in its ending): one more run, with waits
/// [`STRETCH`] times longer for a finding resting on silence.
pub fn estimate(took: Duration, transcript: &Transcript, rule: &str) -> Duration {
    let waited = match transcript.ending {
        Ending::Hung { waited_ms } => Duration::from_millis(waited_ms),
        _ => Duration::ZERO,
    };
    // A hang only suspected gets its wait on the confirming run.
    let suspected = transcript.events.iter().find_map(|event| match event {
        Event::Note(note) => note.suspected().map(Duration::from_millis),
        _ => None,
    });
    let took = took.max(waited);
    match rests_on_silence(rule) {
        true => took * STRETCH + suspected.unwrap_or_default(),
        false => took,
    }
}

/// How far a finding was confirmed by running its conversation again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Confirmation {
    /// Not run again: the run's time ran out first.
    Pending,
    /// It broke again on a fresh connection; `stretched` when it also broke with the waits that many times longer.
    Confirmed {
        /// The stretch of the waits of the confirming run of a finding resting on silence or time.
        stretched: Option<u32>,
    },
    /// It did not break again; why, in a sentence.
    Unconfirmed(String),
    /// Not run again: the baseline knows it, and a known finding fails nothing.
    Baselined,
}

impl Confirmation {
    /// True when the finding broke again.
    pub fn confirmed(&self) -> bool {
        matches!(self, Confirmation::Confirmed { .. })
    }

    /// True when the finding is listed with the broken rules: confirmed, or known to the baseline.
    pub fn listed(&self) -> bool {
        matches!(self, Confirmation::Confirmed { .. } | Confirmation::Baselined)
    }

    /// One word for reports: `confirmed`, `unconfirmed`, `pending` or `baselined`.
    pub fn state(&self) -> &'static str {
        match self {
            Confirmation::Pending => "pending",
            Confirmation::Baselined => "baselined",
            Confirmation::Confirmed { .. } => "confirmed",
            Confirmation::Unconfirmed(_) => "unconfirmed",
        }
    }
}

impl std::fmt::Display for Confirmation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Confirmation::Pending => {
                f.write_str("pending: the confirmation time ran out before it could run again (--confirm-time)")
            }
            Confirmation::Confirmed { stretched: None } => f.write_str("confirmed: it broke again on a fresh server"),
            Confirmation::Confirmed { stretched: Some(times) } => {
                write!(f, "confirmed: it broke again on a fresh server, also with waits {times} times longer")
            }
            Confirmation::Unconfirmed(why) => write!(f, "unconfirmed: {why}"),
            Confirmation::Baselined => f.write_str("not run again: the baseline knows it"),
        }
    }
}

/// A finding as it was first seen: its conversation, the transcript of that run, the finding and its trigger.
#[derive(Clone, Copy, Debug)]
pub struct Seen<'a> {
    /// The conversation that broke the rule.
    pub inputs: &'a [Input],
    /// How it ran.
    pub transcript: &'a Transcript,
    /// The finding.
    pub finding: &'a Finding,
    /// Its trigger ([`crate::trigger::signature`]).
    pub trigger: &'a str,
}

/// Runs the conversation of a finding `seen` again to confirm it (see the module documentation); `patient` is the
/// same server with stretched waits, `None` when the target's waits do not depend on time. A handler that never
/// returns is confirmed on the conversation only up to the call at fault ([`through_fault`]): what came after was
/// sent once its wait was over. With the confirmation comes the run that confirmed it (its inputs among it), which
/// minimization starts from instead of running them once more. A silence that, with the stretched waits, shows as
/// SERVER-HANDLER-HANG (a handler that never returned while the server went on) is confirmed as that finding, the
/// run's: it is the stronger statement about the same silence, not a slow server. An error means a target could
/// not run (the run's deadline passed, [`crate::server::CutShort::DeadlinePassed`], among them).
pub fn confirm(
    target: &mut dyn Target,
    patient: Option<&mut dyn Target>,
    seen: Seen,
    policy: &Policy,
) -> Result<(Confirmation, Option<Minimized>)> {
    let (inputs, rule, trigger) = (seen.inputs, seen.finding.rule, seen.trigger);
    let once = Budget { runs: 0, time: None };
    if let Some(patient) = patient.filter(|_| rests_on_silence(rule)) {
        let prefix = (rule == HANDLER_HANG).then(|| through_fault(inputs, seen.transcript, seen.finding)).flatten();
        let inputs = prefix.as_deref().unwrap_or(inputs);
        let transcript = patient.run(inputs)?;
        let stretched = Confirmation::Confirmed { stretched: Some(STRETCH) };
        let run = |(finding, trigger)| Minimized {
            inputs: inputs.to_vec(),
            transcript: transcript.clone(),
            finding,
            trigger,
        };
        // The same silence, judged under the longer waits as a handler that never returned: that is the finding.
        let stronger = || (rule != HANDLER_HANG).then(|| wanted(&transcript, HANDLER_HANG, None, policy)).flatten();
        return Ok(match wanted(&transcript, rule, Some(trigger), policy).or_else(stronger) {
            Some(found) => (stretched, Some(run(found))),
            None => (
                Confirmation::Unconfirmed(format!(
                    "it did not break again with waits {STRETCH} times longer: the server is slow here, not silent \
                     (a longer --timeout shows it)"
                )),
                None,
            ),
        });
    }
    for _ in 0..RERUNS {
        if let Some(run) = minimize_finding(target, inputs, rule, Some(trigger), policy, once)? {
            return Ok((Confirmation::Confirmed { stretched: None }, Some(run)));
        }
    }
    Ok((Confirmation::Unconfirmed(format!("it did not break again in {RERUNS} runs on a fresh server")), None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::builtin::mutants::Mutant;
    use crate::server::builtin::reference::Calc;
    use crate::server::{InProcess, ServerSpec, Timeouts};
    use crate::transcript::Event;

    /// A conversation of one request, `ping` with id 1, then a sync point.
    fn ping() -> Vec<Input> {
        vec![Input::Line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec()), Input::Sync]
    }

    /// A server that answers nothing, and hangs.
    struct Silent;
    impl Target for Silent {
        fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
            let events =
                inputs.iter().filter_map(|i| if let Input::Line(l) = i { Some(Event::Sent(l.clone())) } else { None });
            Ok(Transcript { events: events.collect(), ending: Ending::Hung { waited_ms: 2_000 } })
        }
    }

    /// A server that answers `{}` to id 1.
    struct Answers;
    impl Target for Answers {
        fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
            let mut transcript = Silent.run(inputs)?;
            transcript
                .events
                .push(Event::Received { line: br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(), truncated: false });
            transcript.ending = Ending::Closed;
            Ok(transcript)
        }
    }

    /// The ping's silence, as seen: its transcript, the finding and its trigger.
    fn silence_finding() -> (Transcript, Finding, String) {
        let transcript = Silent.run(&ping()).unwrap();
        let finding = crate::oracle::check(&transcript, &Policy::default())
            .into_iter()
            .find(|f| f.rule == SERVER_HANG || f.rule == RESPONSE_MISSING)
            .expect("silence is a finding");
        let trigger = crate::trigger::signature(&transcript, &finding);
        (transcript, finding, trigger)
    }

    #[test]
    fn a_true_silence_is_confirmed_with_stretched_waits() {
        let (transcript, finding, trigger) = silence_finding();
        let seen = Seen { inputs: &ping(), transcript: &transcript, finding: &finding, trigger: &trigger };
        let mut patient = Silent;
        let (confirmation, run) = confirm(&mut Silent, Some(&mut patient), seen, &Policy::default()).unwrap();
        assert_eq!(confirmation, Confirmation::Confirmed { stretched: Some(STRETCH) });
        assert_eq!(run.expect("the confirming run").trigger, trigger);
    }

    #[test]
    fn a_slow_reply_is_unconfirmed() {
        // Answered when waited for longer: a slow server.
        let (transcript, finding, trigger) = silence_finding();
        let inputs = ping();
        let seen = Seen { inputs: &inputs, transcript: &transcript, finding: &finding, trigger: &trigger };
        let mut patient = Answers;
        let confirmation = confirm(&mut Silent, Some(&mut patient), seen, &Policy::default());
        let Ok((Confirmation::Unconfirmed(why), None)) = confirmation else { panic!("{confirmation:?}") };
        assert!(why.contains("slow here, not silent"), "{why}");
        // And one that does not break again at all.
        let (confirmation, _) = confirm(&mut Answers, None, seen, &Policy::default()).unwrap();
        assert_eq!(
            confirmation,
            Confirmation::Unconfirmed(format!("it did not break again in {RERUNS} runs on a fresh server"))
        );
    }

    #[test]
    fn a_finding_that_does_not_rest_on_silence_needs_no_stretched_run() {
        let mutant = Mutant::IdAsString;
        let inputs: Vec<Input> =
            mutant.trigger().into_iter().flat_map(|line| [Input::Line(line), Input::Sync]).collect();
        let mut target = ServerSpec::Mutant(mutant).pooled_target(Timeouts::default());
        let transcript = target.run(&inputs).unwrap();
        let policy = mutant.policy();
        let finding = crate::oracle::check(&transcript, &policy).into_iter().next().expect("the mutant breaks a rule");
        assert!(!rests_on_silence(finding.rule), "{}", finding.rule);
        let trigger = crate::trigger::signature(&transcript, &finding);
        let seen = Seen { inputs: &inputs, transcript: &transcript, finding: &finding, trigger: &trigger };
        let (confirmation, run) = confirm(target.as_mut(), None, seen, &policy).unwrap();
        assert_eq!(confirmation, Confirmation::Confirmed { stretched: None });
        assert_eq!(run.expect("the confirming run").inputs, inputs);
        assert!(confirmation.to_string().starts_with("confirmed"));
        // The reference server does not break it.
        let (confirmation, run) = confirm(&mut InProcess(Calc), None, seen, &policy).unwrap();
        assert!(!confirmation.confirmed() && run.is_none());
    }

    #[test]
    fn a_silence_that_longer_waits_show_as_a_hung_handler_is_confirmed_as_one() {
        use crate::server::builtin::reference::Planted;
        let mutant = Mutant::HangsOnMalformedAnswer;
        let inputs: Vec<Input> =
            mutant.trigger().into_iter().flat_map(|line| [Input::Line(line), Input::Sync]).collect();
        let policy = mutant.policy();
        // With the run's waits, nothing came back at all.
        let transcript = Silent.run(&inputs).unwrap();
        let finding = crate::oracle::check(&transcript, &policy)
            .into_iter()
            .find(|f| rests_on_silence(f.rule) && f.rule != HANDLER_HANG)
            .expect("a silence");
        let trigger = crate::trigger::signature(&transcript, &finding);
        let seen = Seen { inputs: &inputs, transcript: &transcript, finding: &finding, trigger: &trigger };
        // With longer waits, the server answers the rest but the handler never returns.
        let mut patient = InProcess(Planted(mutant));
        let (confirmation, run) = confirm(&mut Silent, Some(&mut patient), seen, &policy).unwrap();
        assert_eq!(confirmation, Confirmation::Confirmed { stretched: Some(STRETCH) });
        assert_eq!(run.expect("the confirming run").finding.rule, HANDLER_HANG);
        // A server that answers everything with the longer waits is slow, not hung.
        let (confirmation, run) = confirm(&mut Silent, Some(&mut InProcess(Calc)), seen, &policy).unwrap();
        assert!(matches!(confirmation, Confirmation::Unconfirmed(_)) && run.is_none(), "{confirmation:?}");
    }

    /// A child process, for the tests over stdio: `sh -c SCRIPT`, with waits short enough for a test.
    fn shell(script: &str) -> Box<dyn Target + Send> {
        let command = crate::server::ServerCommand::from_argv(&["sh".into(), "-c".into(), script.into()]).unwrap();
        let quick = Timeouts {
            reply: std::time::Duration::from_millis(300),
            settle: std::time::Duration::from_millis(10),
            startup: std::time::Duration::from_millis(200),
            shutdown: std::time::Duration::from_millis(300),
            ..Timeouts::default()
        };
        ServerSpec::Command(command).target(quick)
    }

    /// Runs a ping on `script` and confirms the silence it shows.
    fn confirm_over_stdio(script: &str) -> Confirmation {
        let mut target = shell(script);
        let transcript = target.run(&ping()).unwrap();
        let policy = Policy::default();
        let findings = crate::oracle::check(&transcript, &policy);
        let finding = findings.iter().find(|f| rests_on_silence(f.rule)).expect("a silence, with the run's waits");
        let trigger = crate::trigger::signature(&transcript, finding);
        let seen = Seen { inputs: &ping(), transcript: &transcript, finding, trigger: &trigger };
        let mut patient = target.patient(STRETCH).expect("a child process's waits matter");
        confirm(target.as_mut(), Some(patient.as_mut()), seen, &policy).unwrap().0
    }

    #[test]
    fn over_stdio_a_silent_server_is_confirmed_and_a_slow_one_is_not() {
        // Never answers: silent with every wait, however long.
        assert!(confirm_over_stdio("sleep 30").confirmed());
        // Answers after 1.2 s: past the run's waits (0.5 s until the first line, 0.3 s to close), within the
        // stretched ones (1.4 s until the first line).
        let slow = r#"read -r line; sleep 1.2; echo '{"jsonrpc":"2.0","id":1,"result":{}}'"#;
        let confirmation = confirm_over_stdio(slow);
        assert!(
            matches!(&confirmation, Confirmation::Unconfirmed(why) if why.contains("not silent")),
            "{confirmation:?}"
        );
    }
}
