//! The last check of a minimization: the latest case that broke the rule is run once more, falling back on the few
//! kept before it, since a case that broke the rule once by a race may not replay.

use super::Minimized;
use crate::transcript::Input;

/// How many of the last candidates that broke the rule a minimization keeps, to fall back on when the latest does
/// not break it again.
pub(super) const KEPT: usize = 3;

/// The latest of `kept` that breaks the rule once more (`again`: `Some(true)` when it does, `None` when the target
/// could not run): a candidate that broke it once may have done so by a race (go-sdk writes a reply or drops the
/// connection first, as its goroutines fall), and a case file must replay. One that cannot be run again (no time
/// left, or the target failed) is taken as it is. `None` when none of `kept` breaks it again: the case stays as
/// first seen.
pub(super) fn verified(
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
