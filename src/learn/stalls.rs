//! Giving up on learning a server that keeps stalling: [`Stalls`] wraps the target the learners run on, and once
//! [`MAX_STALLS`] of their conversations ended with the server stalled ([`stalled`]: it did not exit, and it left a
//! request it owed unanswered or wrote nothing at all), every further run is the error [`StoppedAnswering`]. A
//! server that answers its first request and then stops (a `SIGSTOP`, a deadlock) costs two waits, not one per
//! learning conversation; the run goes on without what is still to learn, and its own conversations find what the
//! server does.
//!
//! A server that answered everything and only did not exit once its input closed has not stalled: that is
//! `SERVER-SHUTDOWN` (a SHOULD), which the run's own conversations judge, and learning goes on. [`Watch`] remembers
//! the first learning conversation that showed it ([`Watch::outlived`]), so the stage can say so once, and shares
//! with the stage's stdio targets what the run knows of it ([`Watch::hangs`]): the whole shutdown wait is spent once
//! in learning, not in every conversation.

use crate::oracle::rules::{HANDLER_HANG, SERVER_HANG};
use crate::oracle::{self, Policy};
use crate::server::Target;
use crate::server::hangs::Hangs;
use crate::transcript::{Ending, Event, Input, Note, Transcript};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

/// How many learning conversations may end stalled before learning stops.
pub const MAX_STALLS: usize = 2;

/// The error of a learning conversation not run because the server stalled [`MAX_STALLS`] times already.
#[derive(Debug)]
pub struct StoppedAnswering;

impl std::fmt::Display for StoppedAnswering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the server neither answered nor exited in {MAX_STALLS} learning conversations")
    }
}

impl std::error::Error for StoppedAnswering {}

/// True when the server stalled in `transcript`: it neither exited nor closed its output ([`Ending::Hung`]), and it
/// wrote nothing at all or left a request it owed unanswered (the oracle's `SERVER-HANG`, or a handler that never
/// returned, `SERVER-HANDLER-HANG`). A server that answered every request and only outlived its closed input
/// (`SERVER-SHUTDOWN`; or an exit the transport did not wait out, [`Note::ExitUnawaited`]) has not.
pub fn stalled(transcript: &Transcript) -> bool {
    if !matches!(transcript.ending, Ending::Hung { .. }) {
        return false;
    }
    if transcript.received().next().is_none() {
        return true;
    }
    oracle::check(transcript, &Policy::default()).iter().any(|f| f.rule == SERVER_HANG || f.rule == HANDLER_HANG)
}

/// How long the exit was waited for when `transcript` shows the server, owing nothing, outliving its closed input
/// for the whole shutdown wait: hung, not [`stalled`], its exit not cut short by what the run already knew
/// ([`Note::ExitUnawaited`]).
fn outlived(transcript: &Transcript) -> Option<Duration> {
    let Ending::Hung { waited_ms } = transcript.ending else { return None };
    let unawaited = transcript.events.iter().any(|e| matches!(e, Event::Note(Note::ExitUnawaited { .. })));
    (!unawaited && !stalled(transcript)).then(|| Duration::from_millis(waited_ms))
}

/// What the learning conversations of one stage showed of how the server ends them, shared by the stage's targets
/// (each wrapped in [`Stalls`]).
#[derive(Debug, Default)]
pub struct Watch {
    /// How many ended stalled.
    stalls: Cell<usize>,
    /// The wait of the first that showed the server outlive its closed input, owing nothing.
    outlived: Cell<Option<Duration>>,
    /// What the stage's stdio targets share of the server's endings: once one conversation waited out a server that
    /// outlives its input, the others wait for its exit only briefly.
    hangs: Arc<Hangs>,
}

impl Watch {
    /// How many learning conversations ended stalled ([`stalled`]).
    pub fn stalls(&self) -> usize {
        self.stalls.get()
    }

    /// How long the exit was waited for in the first learning conversation in which the server, owing nothing, did
    /// not exit after its input closed (`SERVER-SHUTDOWN`); `None` while none did.
    pub fn outlived(&self) -> Option<Duration> {
        self.outlived.get()
    }

    /// What the stage's stdio targets share ([`crate::server::transport::stdio::StdioTarget::sharing`]).
    pub fn hangs(&self) -> Arc<Hangs> {
        self.hangs.clone()
    }

    /// Counts the ending of `transcript`.
    fn saw(&self, transcript: &Transcript) {
        if stalled(transcript) {
            self.stalls.set(self.stalls.get() + 1);
        } else if self.outlived.get().is_none() {
            self.outlived.set(outlived(transcript));
        }
    }
}

/// A target that counts the learning conversations that ended stalled, and runs none past [`MAX_STALLS`].
pub struct Stalls<'a, T: Target + ?Sized> {
    target: Box<T>,
    watch: &'a Watch,
}

impl<'a, T: Target + ?Sized> Stalls<'a, T> {
    /// Wraps `target`; `watch` counts across the wrappers of one learning stage.
    pub fn new(target: Box<T>, watch: &'a Watch) -> Stalls<'a, T> {
        Stalls { target, watch }
    }
}

impl<T: Target + ?Sized> Target for Stalls<'_, T> {
    fn run(&mut self, inputs: &[Input]) -> anyhow::Result<Transcript> {
        if self.watch.stalls() >= MAX_STALLS {
            return Err(StoppedAnswering.into());
        }
        let transcript = self.target.run(inputs)?;
        self.watch.saw(&transcript);
        Ok(transcript)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::InProcess;
    use crate::server::builtin::reference::Calc;

    const PING: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    const PONG: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;

    /// Ends every conversation with `events`, the server still running.
    struct Hanging(usize, Vec<Event>);
    impl Target for Hanging {
        fn run(&mut self, _: &[Input]) -> anyhow::Result<Transcript> {
            self.0 += 1;
            Ok(Transcript { events: self.1.clone(), ending: Ending::Hung { waited_ms: 5 } })
        }
    }

    fn received(line: &[u8]) -> Event {
        Event::Received { line: line.to_vec(), truncated: false }
    }

    #[test]
    fn learning_stops_after_two_stalls_and_not_before() {
        for events in [Vec::new(), vec![Event::Sent(PING.to_vec())]] {
            let watch = Watch::default();
            let mut target = Stalls::new(Box::new(Hanging(0, events)), &watch);
            assert!(target.run(&[]).is_ok() && target.run(&[]).is_ok());
            assert!(target.run(&[]).unwrap_err().is::<StoppedAnswering>());
            assert_eq!(target.target.0, MAX_STALLS, "no third conversation ran");
            assert_eq!(watch.outlived(), None);
        }
        // A server that ends its conversations is never stopped.
        let watch = Watch::default();
        let mut target = Stalls::new(Box::new(InProcess(Calc)), &watch);
        assert!((0..5).all(|_| target.run(&[]).is_ok()));
        assert_eq!((watch.stalls(), watch.outlived()), (0, None));
    }

    #[test]
    fn a_server_that_answered_everything_and_did_not_exit_has_not_stalled() {
        let answered = vec![Event::Sent(PING.to_vec()), received(PONG), Event::Sync];
        let watch = Watch::default();
        let mut target = Stalls::new(Box::new(Hanging(0, answered.clone())), &watch);
        assert!((0..5).all(|_| target.run(&[]).is_ok()), "never stopped");
        assert_eq!((watch.stalls(), watch.outlived()), (0, Some(Duration::from_millis(5))));
        // One whose exit was not waited out (the run knew it outlives its input) has not stalled either; nor is it
        // what showed that.
        let mut unawaited = answered.clone();
        unawaited.push(Event::Note(Note::ExitUnawaited { waited_ms: 5 }));
        let transcript = Transcript { events: unawaited, ending: Ending::Hung { waited_ms: 5 } };
        assert!(!stalled(&transcript) && outlived(&transcript).is_none());
        // But one that left a request unanswered has, with or without that note.
        let mut owing = transcript.clone();
        owing.events.insert(3, Event::Sent(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#.to_vec()));
        assert!(stalled(&owing) && outlived(&owing).is_none());
        let closed = Transcript { events: answered, ending: Ending::Closed };
        assert!(!stalled(&closed) && outlived(&closed).is_none());
    }
}
