//! Giving up on learning a server that keeps stalling: [`Stalls`] wraps the target the learners run on, and once
//! [`MAX_STALLS`] of their conversations ended with the server neither answering nor exiting ([`Ending::Hung`]),
//! every further run is the error [`StoppedAnswering`]. A server that answers its first request and then stops (a
//! `SIGSTOP`, a deadlock) costs two waits, not one per learning conversation; the run goes on without what is
//! still to learn, and its own conversations find what the server does.

use crate::server::Target;
use crate::transcript::{Ending, Input, Transcript};
use std::cell::Cell;

/// How many learning conversations may end hung before learning stops.
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

/// A target that counts the learning conversations that ended hung, and runs none past [`MAX_STALLS`].
pub struct Stalls<'a, T: Target + ?Sized> {
    target: Box<T>,
    stalls: &'a Cell<usize>,
}

impl<'a, T: Target + ?Sized> Stalls<'a, T> {
    /// Wraps `target`; `stalls` counts across the wrappers of one learning stage.
    pub fn new(target: Box<T>, stalls: &'a Cell<usize>) -> Stalls<'a, T> {
        Stalls { target, stalls }
    }
}

impl<T: Target + ?Sized> Target for Stalls<'_, T> {
    fn run(&mut self, inputs: &[Input]) -> anyhow::Result<Transcript> {
        if self.stalls.get() >= MAX_STALLS {
            return Err(StoppedAnswering.into());
        }
        let transcript = self.target.run(inputs)?;
        if matches!(transcript.ending, Ending::Hung { .. }) {
            self.stalls.set(self.stalls.get() + 1);
        }
        Ok(transcript)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::InProcess;
    use crate::server::builtin::reference::Calc;

    /// Hangs on every conversation.
    struct Hangs(usize);
    impl Target for Hangs {
        fn run(&mut self, _: &[Input]) -> anyhow::Result<Transcript> {
            self.0 += 1;
            Ok(Transcript { events: Vec::new(), ending: Ending::Hung { waited_ms: 5 } })
        }
    }

    #[test]
    fn learning_stops_after_two_stalls_and_not_before() {
        let stalls = Cell::new(0);
        let mut target = Stalls::new(Box::new(Hangs(0)), &stalls);
        assert!(target.run(&[]).is_ok() && target.run(&[]).is_ok());
        assert!(target.run(&[]).unwrap_err().is::<StoppedAnswering>());
        assert_eq!(target.target.0, MAX_STALLS, "no third conversation ran");
        // A server that ends its conversations is never stopped.
        let stalls = Cell::new(0);
        let mut target = Stalls::new(Box::new(InProcess(Calc)), &stalls);
        assert!((0..5).all(|_| target.run(&[]).is_ok()));
    }
}
