//! Running a test's independent steps a few at a time: replaying case files against a real server is mostly waiting
//! (for replies that do not come, for a process to exit), not work.
//!
//! Each test file that needs it includes this file (`#[path = "common/parallel.rs"] mod parallel;`).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Case files replayed at once.
pub const REPLAYS_AT_ONCE: usize = 4;

/// `run` on every item, `threads` at a time; the results in the items' order. A panic in `run` fails the test.
pub fn in_parallel<T: Sync, R: Send>(items: &[T], threads: usize, run: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(items.len()) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else { break };
                    let result = run(item);
                    results.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((index, result));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}
