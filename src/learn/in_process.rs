//! Learning an in-process server as the stdio path learns a child process, for the entry points of a user's crate
//! ([`crate::harness`], [`crate::conforms`]): its model ([`super::probe`]) and its surface ([`super::surface`]),
//! on fresh in-process connections, filled into the policy the conversations are drawn from and judged under
//! ([`judged`]). A libFuzzer target runs the harness once per input, so [`judged_once`] learns once per process.

use super::{probe, surface};
use crate::model::{Eras, ServerModel};
use crate::oracle::Policy;
use crate::server::{InProcessServer, Target, run_in_process};
use crate::surface::Surface;
use crate::transcript::{Input, Transcript};
use std::any::TypeId;
use std::sync::{Arc, Mutex, PoisonError};

/// A borrowed in-process server as a target.
struct Borrowed<'s, S>(&'s S);

impl<S: InProcessServer> Target for Borrowed<'_, S> {
    fn run(&mut self, inputs: &[Input]) -> anyhow::Result<Transcript> {
        Ok(run_in_process(self.0, inputs))
    }
}

/// What was learned of a server: its model (the one `policy` states, else probed) and its surface.
fn learn<S: InProcessServer>(server: &S, stated: Option<&ServerModel>) -> (ServerModel, Arc<Surface>) {
    let mut target = Borrowed(server);
    let model = match stated {
        Some(model) => model.clone(),
        // An in-process target never fails to run a conversation.
        None => probe::probe(&mut target).unwrap_or_else(|_| ServerModel::stated(Eras::Unknown)),
    };
    let surface = surface::learn(&mut target, &model).unwrap_or_default();
    (model, Arc::new(surface))
}

/// `policy` with what it leaves unsaid filled in: the server model (probed when the policy states none, as the
/// stdio path does without `--eras`) and the surface (learned in an era the model says the server serves, unless
/// the policy has one). Conversations are drawn on that surface and judged under that policy, so the rules the
/// stdio path judges (the surface rules included) are judged in-process.
pub fn judged<S: InProcessServer>(server: &S, policy: &Policy) -> Policy {
    if policy.model().is_some() && policy.surface().is_some() {
        return policy.clone();
    }
    let (model, surface) = learn(server, policy.model());
    fill(policy, model, surface)
}

/// Models and surfaces learned by [`judged_once`], by server type and stated model.
type Learned = Vec<(TypeId, Option<ServerModel>, ServerModel, Arc<Surface>)>;

/// What [`judged_once`] has learned in this process.
static LEARNED: Mutex<Learned> = Mutex::new(Vec::new());

/// [`judged`], learned once per process for each server type and model the policy states, the first time it is
/// asked for, and kept: a libFuzzer target calls the harness once per input, and the same bytes must give the
/// same conversation every time (the learned surface is part of how an input is read). A server whose surface
/// depends on its value rather than its type (two values of one type, listing different tools) gets the surface
/// of the first one asked for; [`judged`] learns each time.
pub fn judged_once<S: InProcessServer + 'static>(server: &S, policy: &Policy) -> Policy {
    if policy.model().is_some() && policy.surface().is_some() {
        return policy.clone();
    }
    let key = (TypeId::of::<S>(), policy.model().cloned());
    // Learning runs under the lock, so that it runs once; it catches the server's panics itself.
    let mut learned = LEARNED.lock().unwrap_or_else(PoisonError::into_inner);
    let (model, surface) = match learned.iter().find(|(kind, stated, ..)| (*kind, stated.clone()) == key) {
        Some((.., model, surface)) => (model.clone(), surface.clone()),
        None => {
            let (model, surface) = learn(server, policy.model());
            learned.push((key.0, key.1, model.clone(), surface.clone()));
            (model, surface)
        }
    };
    drop(learned);
    fill(policy, model, surface)
}

/// `policy` with `model` and `surface` where it has none.
fn fill(policy: &Policy, model: ServerModel, surface: Arc<Surface>) -> Policy {
    let policy = match policy.model() {
        Some(_) => policy.clone(),
        None => policy.clone().with_model(model),
    };
    match policy.surface() {
        Some(_) => policy,
        None => policy.with_surface(surface),
    }
}

/// The surface conversations are drawn on under a policy [`judged`] filled in (an empty one otherwise: its tool
/// calls name unknown tools).
pub fn surface_of(policy: &Policy) -> Arc<Surface> {
    policy.surface().cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Source;
    use crate::server::builtin::mutants::Mutant;
    use crate::server::builtin::reference::{Calc, Planted};

    #[test]
    fn the_model_is_probed_and_the_surface_learned_unless_the_policy_states_them() {
        let policy = judged(&Calc, &Policy::default());
        let model = policy.model().unwrap();
        assert_eq!((model.eras, model.source), (Eras::Dual, Source::Probed));
        assert!(model.is_seed_calc());
        assert_eq!(policy.surface().unwrap(), &Surface::built_in());
        let stated = Policy::default().with_model(ServerModel::stated(Eras::Modern));
        let judged_stated = judged(&Calc, &stated);
        assert_eq!(judged_stated.model(), stated.model(), "a stated model is kept");
        assert_eq!(judged_stated.surface().unwrap(), &Surface::built_in(), "learned in the modern era");
        let given = stated.with_surface(Arc::new(Surface::default()));
        assert_eq!(judged(&Calc, &given), given, "nothing left to learn");
        assert_eq!(judged_once(&Calc, &Policy::default()), policy);
    }

    #[test]
    fn judged_once_learns_once_per_server_type() {
        let duplicate = judged(&Planted(Mutant::DuplicateToolName), &Policy::default());
        assert_ne!(duplicate.surface(), Some(&Surface::built_in()), "the planted server lists add twice");
        /// A type of its own, so that no other test learns it first.
        struct Twice(Planted);
        impl InProcessServer for Twice {
            type Connection = <Planted as InProcessServer>::Connection;
            fn connect(&self) -> Self::Connection {
                self.0.connect()
            }
        }
        let first = judged_once(&Twice(Planted(Mutant::DuplicateToolName)), &Policy::default());
        assert_eq!(first.surface(), duplicate.surface());
        let kept = judged_once(&Twice(Planted(Mutant::IdAsString)), &Policy::default());
        assert_eq!(kept.surface(), duplicate.surface(), "the type's first surface is kept");
        assert_eq!(surface_of(&kept), surface_of(&first));
        assert_eq!(*surface_of(&Policy::default()), Surface::default());
    }
}
