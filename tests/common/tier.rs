//! The test suite's two tiers, and skips a person can see.
//!
//! A plain `cargo test` runs the quick tier: what a contributor needs on every change, a few minutes after the
//! build. `WIREFUZZ_SLOW=1 cargo test` (what `.ci/run` runs) adds the slow tier: the libFuzzer smoke runs, the
//! real-server verdict tables, the example crate's builds, long property runs and hostile servers at full length.
//! A test that does nothing, because of the tier or because a runtime it needs is missing, says so on the
//! terminal: libtest hides what a passing test prints with `eprintln!`, so [`skip`] writes past that capture.
//!
//! Each test file that needs it includes this file (`#[path = "common/tier.rs"] mod tier;`) and uses part of it.
#![allow(dead_code)]

use std::io::Write;

/// The environment variable that asks for the slow tier (`1`).
pub const SLOW: &str = "WIREFUZZ_SLOW";

/// Whether the slow tier was asked for (`WIREFUZZ_SLOW=1`).
pub fn asked() -> bool {
    std::env::var(SLOW).is_ok_and(|value| value == "1")
}

/// Whether the slow tier was asked for; when it was not, says visibly that `what` was skipped.
pub fn slow(what: &str) -> bool {
    if asked() {
        return true;
    }
    skip(what, &format!("slow tier; `{SLOW}=1 cargo test` runs it (.ci/run does)"));
    false
}

/// Says on the terminal, past the test harness's output capture, that `what` was skipped and why.
pub fn skip(what: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED {what}: {why}");
}
