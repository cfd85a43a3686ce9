//! The first contact with a child server: the probe's `initialize` ([`super::probe::probe_inputs`]), on a fresh
//! process, before anything else is learned. A server that writes nothing at all to it (not a reply, not a line)
//! within the start-up allowance and the reply timeout answers nothing: a server of either era answers an
//! `initialize`, a modern one with an error. Learning stops there, and the conversation becomes the run's first
//! ([`crate::campaign::Options::prelude`]), judged and written as a case at once, rather than after the probe and the
//! surface learning have each waited for the same silence.

use super::probe::probe_inputs;
use crate::server::Target;
use crate::transcript::{Event, Input, Transcript};

/// The first contact's conversation and what the server did in it.
#[derive(Clone, Debug)]
pub struct Contact {
    /// What was sent: one `initialize`, then a sync point.
    pub inputs: Vec<Input>,
    /// What happened.
    pub transcript: Transcript,
}

impl Contact {
    /// True when the server wrote nothing at all: it hung or ended without a line.
    pub fn silent(&self) -> bool {
        !self.transcript.events.iter().any(|event| matches!(event, Event::Received { .. }))
    }
}

/// Runs the first contact on `target` (a fresh connection).
pub fn first_contact(target: &mut dyn Target) -> anyhow::Result<Contact> {
    let [_, _, initialize] = probe_inputs();
    let transcript = target.run(&initialize)?;
    Ok(Contact { inputs: initialize, transcript })
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
        assert!(!contact.silent(), "{:?}", contact.transcript);
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
        assert!(contact.silent(), "{:?}", contact.transcript);
        assert!(began.elapsed() < Duration::from_secs(5), "{:?}", began.elapsed());
        let findings = crate::oracle::check(&contact.transcript, &crate::oracle::Policy::default());
        assert!(findings.iter().any(|f| f.rule == crate::oracle::rules::SERVER_HANG), "{findings:?}");
    }
}
