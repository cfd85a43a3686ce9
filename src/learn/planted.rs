//! The policy a planted bug is judged under ([`Mutant::policy`]): built here, above the oracle and the built-in
//! servers, because it needs both and a learned surface; the built-in servers build no oracle policy.

use super::surface::learn;
use crate::model::ServerModel;
use crate::oracle::Policy;
use crate::server::InProcess;
use crate::server::builtin::mutants::Mutant;
use crate::server::builtin::reference::Planted;
use std::sync::{Arc, OnceLock};

/// Each planted bug's policy, learned the first time it is asked for.
static POLICIES: [OnceLock<Policy>; Mutant::ALL.len()] = [const { OnceLock::new() }; Mutant::ALL.len()];

// Defined here, not in `server/builtin/mutants.rs`: a built-in server builds no oracle policy.
impl Mutant {
    /// The policy under which the bug is a finding: the built-in server's model and the planted server's surface
    /// (learned from it), and for the bugs that break a profile rule (the one-era lock, named envelope keys) the
    /// profile mcp-python-2.3.0 ([`Mutant::profile`]). Learned once per process: the `mutant` fuzz target asks for
    /// it on every input.
    pub fn policy(self) -> Policy {
        let index = Mutant::ALL.iter().position(|m| *m == self).unwrap_or_default();
        POLICIES[index].get_or_init(|| self.learned_policy()).clone()
    }

    /// [`Mutant::policy`], learned now.
    fn learned_policy(self) -> Policy {
        let surface = learn(&mut InProcess(Planted(self)), &ServerModel::built_in()).unwrap_or_default();
        let policy = Policy::default().with_model(ServerModel::built_in()).with_surface(Arc::new(surface));
        match self.profile() {
            Some(profile) => policy.with_profile(profile).unwrap_or_default(),
            None => policy,
        }
    }
}
