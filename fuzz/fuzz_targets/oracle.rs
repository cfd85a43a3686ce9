//! Arbitrary bytes as a transcript (server output included): the oracle must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_wirefuzz::fuzz_targets::FuzzTarget;

fuzz_target!(|data: &[u8]| {
    if let Err(failure) = FuzzTarget::Oracle.run(data) {
        panic!("{failure}");
    }
});
