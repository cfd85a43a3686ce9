//! A run's verdict and its exit code: failed (a finding that fails the run), inconclusive (none of those, but a
//! finding that would fail the run was seen and never run again: the confirmation time ran out first), or passed.
//! An inconclusive run is never green: it has an exit code of its own.

use super::{Found, Summary};
use crate::baseline::Baseline;
use std::time::Duration;

/// What a run's findings add up to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing fails the run, and nothing that would is left pending: exit 0.
    Passed,
    /// A finding fails the run ([`Summary::failing`]): exit 1.
    Failed,
    /// Nothing fails the run, but a finding that would fail it once confirmed is still pending: exit
    /// [`Verdict::INCONCLUSIVE`].
    Inconclusive,
}

impl Verdict {
    /// The exit code of an inconclusive run (0 passed, 1 failed, 2 a usage or harness error, 3 a replayed case that no
    /// longer reproduces).
    pub const INCONCLUSIVE: u8 = 4;

    /// The process's exit code for this verdict.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Passed => 0,
            Verdict::Failed => 1,
            Verdict::Inconclusive => Verdict::INCONCLUSIVE,
        }
    }

    /// One word for reports: `passed`, `failed` or `inconclusive`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Failed => "failed",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// The verdict of findings of which `failing` fail the run and `unsettled` would once confirmed.
    pub fn of(failing: bool, unsettled: bool) -> Verdict {
        match (failing, unsettled) {
            (true, _) => Verdict::Failed,
            (false, true) => Verdict::Inconclusive,
            (false, false) => Verdict::Passed,
        }
    }
}

impl Summary {
    /// The findings seen but never run again (pending: the confirmation time ran out first) that would fail the run
    /// once confirmed: not baselined.
    pub fn unsettled(&self, baseline: &Baseline) -> Vec<&Found> {
        let pending = |f: &&Found| f.confirmation == super::Confirmation::Pending;
        self.found.iter().filter(pending).filter(|f| !f.baselined(baseline)).collect()
    }

    /// The run's verdict under `baseline`.
    pub fn verdict(&self, baseline: &Baseline) -> Verdict {
        Verdict::of(self.fails(baseline), !self.unsettled(baseline).is_empty())
    }

    /// About how much confirmation time would settle the unsettled findings: the sum of their expected runs
    /// ([`super::confirm::estimate`]), rounded up to whole seconds, at least one.
    pub fn settles_in(&self, baseline: &Baseline) -> Duration {
        let needed: Duration = self.unsettled(baseline).iter().map(|f| f.estimate).sum();
        Duration::from_secs(needed.as_secs_f64().ceil().max(1.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_finding_outweighs_a_pending_one_and_a_pending_one_is_never_green() {
        assert_eq!(Verdict::of(true, true), Verdict::Failed);
        assert_eq!(Verdict::of(true, false).exit_code(), 1);
        assert_eq!(Verdict::of(false, true).exit_code(), Verdict::INCONCLUSIVE);
        assert_eq!(Verdict::of(false, false).exit_code(), 0);
        assert_eq!(Verdict::Inconclusive.name(), "inconclusive");
    }
}
