//! The first contact with a child server: the probe's `initialize` ([`super::probe::probe_inputs`]), on a fresh
//! process, before anything else is learned. A server that writes no response to it (nothing at all, or only lines
//! that are not its response: garbage, a line that never ends) within the start-up allowance and the reply timeout
//! answers nothing usable: a server of either era answers an `initialize`, a modern one with an error. Learning
//! stops there, and the conversation becomes the run's first
//! ([`crate::campaign::Options::prelude`]), judged and written as a case at once, rather than after the probe and the
//! surface learning have each waited for the same silence.

use super::probe::probe_inputs;
use crate::server::Target;
use crate::transcript::{Ending, Input, Transcript};

/// The first contact's conversation and what the server did in it.
#[derive(Clone, Debug)]
pub struct Contact {
    /// What was sent: one `initialize`, then a sync point.
    pub inputs: Vec<Input>,
    /// What happened.
    pub transcript: Transcript,
    /// How long the conversation took.
    pub took: std::time::Duration,
}

impl Contact {
    /// True when the server wrote no response (a result or an error) to the `initialize`, id 1, in a transcript
    /// seen whole (one cut short, by a flood, may hold the response past its cut).
    pub fn unanswered(&self) -> bool {
        !matches!(self.transcript.ending, Ending::Cut { .. }) && !self.answered()
    }

    /// True when the server wrote a response (a result or an error) to the `initialize`, id 1.
    fn answered(&self) -> bool {
        self.transcript.received().any(|line| {
            let Ok(serde_json::Value::Object(message)) = serde_json::from_slice(line) else { return false };
            message.get("id") == Some(&serde_json::json!(1))
                && (message.contains_key("result") || message.contains_key("error"))
        })
    }

    /// How many lines the server wrote.
    pub fn lines(&self) -> usize {
        self.transcript.received().count()
    }
}

/// Runs the first contact on `target` (a fresh connection).
pub fn first_contact(target: &mut dyn Target) -> anyhow::Result<Contact> {
    let [_, _, initialize] = probe_inputs();
    let began = std::time::Instant::now();
    let transcript = target.run(&initialize)?;
    Ok(Contact { inputs: initialize, transcript, took: began.elapsed() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::builtin::reference::Calc;
    use crate::server::{InProcess, ServerCommand, ServerSpec, Timeouts};
    use std::time::{Duration, Instant};

    #[test]
    fn a_server_that_answers_is_not_silent() {
        let contact = first_contact(&mut InProcess(Calc)).unwrap();
        assert!(!contact.unanswered(), "{:?}", contact.transcript);
    }

    #[test]
    fn a_server_that_writes_nothing_is_silent_within_the_start_up_allowance_and_the_reply_timeout() {
        // `sleep` reads nothing and writes nothing.
        let command = ServerCommand::from_argv(&["sleep".to_string(), "60".to_string()]).unwrap();
        let timeouts = Timeouts {
            reply: Duration::from_millis(200),
            startup: Duration::from_millis(300),
            shutdown: Duration::from_millis(100),
            ..Timeouts::default()
        };
        let began = Instant::now();
        let contact = first_contact(ServerSpec::Command(command).target(timeouts).as_mut()).unwrap();
        assert!(contact.unanswered() && contact.lines() == 0, "{:?}", contact.transcript);
        assert!(began.elapsed() < Duration::from_secs(5), "{:?}", began.elapsed());
        let findings = crate::oracle::check(&contact.transcript, &crate::oracle::Policy::default());
        assert!(findings.iter().any(|f| f.rule == crate::oracle::rules::SERVER_HANG), "{findings:?}");
    }

    #[test]
    fn a_server_that_writes_only_garbage_has_not_answered() {
        let command =
            ServerCommand::from_argv(&["sh".into(), "-c".into(), "read -r l; echo 'not json'; sleep 5".into()]);
        let timeouts = Timeouts {
            reply: Duration::from_millis(200),
            startup: Duration::from_millis(300),
            shutdown: Duration::from_millis(100),
            ..Timeouts::default()
        };
        let contact = first_contact(ServerSpec::Command(command.unwrap()).target(timeouts).as_mut()).unwrap();
        assert!(contact.unanswered() && contact.lines() == 1, "{:?}", contact.transcript);
        // Cut short (a flood), the response may be past the cut: not taken as unanswered.
        let cut = Contact {
            transcript: Transcript { ending: Ending::Cut { events: 100_000 }, ..contact.transcript },
            ..contact
        };
        assert!(!cut.unanswered());
    }
}
