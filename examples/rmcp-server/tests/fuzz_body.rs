//! The fuzz target's body (`fuzz/fuzz_targets/wirefuzz.rs`) on generated inputs, without nightly: what
//! `cargo +nightly fuzz run wirefuzz` does, without coverage guidance. With the feature `planted-bug` it must find
//! the bug; without, it must find nothing.

use mcp_wirefuzz::campaign::conversation_bytes;
use mcp_wirefuzz::sdk::rmcp::policy;
use mcp_wirefuzz::server::rmcp::Rmcp;
use std::panic::{AssertUnwindSafe, catch_unwind};

#[test]
fn the_fuzz_target_body_finds_the_planted_bug_and_nothing_else() {
    let server = Rmcp(wirefuzz_example_rmcp::Calc::default());
    let failure = (0..10_000).find_map(|index| {
        let data = conversation_bytes(0, index);
        let fuzz = || mcp_wirefuzz::harness::fuzz_under(&server, &data, &policy());
        let outcome = catch_unwind(AssertUnwindSafe(fuzz));
        outcome.err().map(|panic| panic.downcast_ref::<String>().cloned().unwrap_or_default())
    });
    if cfg!(feature = "planted-bug") {
        let report = failure.expect("the planted bug is found in 10,000 inputs");
        assert!(report.contains("SERVER-HANDLER-PANIC") && report.contains("index out of bounds"), "{report}");
    } else {
        assert_eq!(failure, None);
    }
}
