//! The blind passes of a shrinking: drop runs of frames (half the script, then quarters, down to single frames),
//! then simplify each line left, for as long as the failure holds and the budget lasts.

use super::simplify::{byte_variants, json_variants};
use crate::transcript::Input;
use serde_json::Value;

/// Minimizes `inputs` while `still_fails` holds for them, calling it at most `budget` times; returns the smallest
/// inputs found (the original ones when nothing smaller fails). `still_fails` must hold for `inputs` themselves.
pub fn shrink(inputs: Vec<Input>, budget: usize, still_fails: impl FnMut(&[Input]) -> bool) -> Vec<Input> {
    shrink_lines(inputs, budget, true, still_fails)
}

/// [`shrink`], simplifying the lines left only when `simplify` (dropping lines always); without it, a candidate
/// must drop a line (sync points alone are not worth a run: a silent server's runs each cost a whole wait).
pub(super) fn shrink_lines(
    inputs: Vec<Input>,
    budget: usize,
    simplify: bool,
    mut still_fails: impl FnMut(&[Input]) -> bool,
) -> Vec<Input> {
    let mut shrinker =
        Shrinker { best: inputs, calls_left: budget, fewer_lines: !simplify, still_fails: &mut still_fails };
    loop {
        let before = shrinker.best.clone();
        shrinker.drop_chunks();
        if simplify {
            shrinker.simplify_lines();
        }
        if shrinker.best == before || shrinker.calls_left == 0 {
            return shrinker.best;
        }
    }
}

/// One shrinking: the smallest failing inputs so far, and what it may still try.
struct Shrinker<'a> {
    best: Vec<Input>,
    calls_left: usize,
    /// True when a candidate must send fewer lines than the best so far.
    fewer_lines: bool,
    still_fails: &'a mut dyn FnMut(&[Input]) -> bool,
}

impl Shrinker<'_> {
    /// Tries a candidate; keeps it when it still fails. One that sends nothing is not tried: a finding is about
    /// something the server was sent; nor, with `fewer_lines`, one that sends as many lines as the best.
    fn try_candidate(&mut self, candidate: Vec<Input>) -> bool {
        let lines = |inputs: &[Input]| inputs.iter().filter(|input| matches!(input, Input::Line(_))).count();
        let sends = lines(&candidate);
        let worth = sends > 0 && (!self.fewer_lines || sends < lines(&self.best));
        if self.calls_left == 0 || candidate == self.best || !worth {
            return false;
        }
        self.calls_left -= 1;
        if (self.still_fails)(&candidate) {
            self.best = candidate;
            return true;
        }
        false
    }

    /// Removes runs of frames, from half the script down to single frames.
    fn drop_chunks(&mut self) {
        let mut size = self.best.len().div_ceil(2).max(1);
        loop {
            let mut start = 0;
            while start < self.best.len() {
                let mut candidate = self.best.clone();
                candidate.drain(start..(start + size).min(candidate.len()));
                if !self.try_candidate(candidate) {
                    start += size;
                }
            }
            if size == 1 || self.calls_left == 0 {
                return;
            }
            size = size.div_ceil(2);
        }
    }

    /// Simplifies each line in place: JSON lines field by field, other lines by cutting bytes.
    fn simplify_lines(&mut self) {
        for index in 0..self.best.len() {
            while let Some(Input::Line(line)) = self.best.get(index) {
                let variants = match serde_json::from_slice::<Value>(line) {
                    Ok(value) => json_variants(&value)
                        .into_iter()
                        .map(|v| serde_json::to_vec(&v).unwrap_or_default())
                        .filter(|v| v.len() < line.len())
                        .collect(),
                    Err(_) => byte_variants(line),
                };
                let mut improved = false;
                for variant in variants {
                    let mut candidate = self.best.clone();
                    candidate[index] = Input::Line(variant);
                    if self.try_candidate(candidate) {
                        improved = true;
                        break;
                    }
                }
                if !improved || self.calls_left == 0 {
                    break;
                }
            }
        }
    }
}
