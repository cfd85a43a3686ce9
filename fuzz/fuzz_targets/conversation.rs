//! A generated conversation against the reference server, in-process; any finding is a crash carrying the rule id and the transcript.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_wirefuzz::fuzz_targets::FuzzTarget;

fuzz_target!(|data: &[u8]| {
    if let Err(failure) = FuzzTarget::Conversation.run(data) {
        panic!("{failure}");
    }
});
