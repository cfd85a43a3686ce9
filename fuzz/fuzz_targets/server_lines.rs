//! Raw bytes, split into lines, against the reference server; any finding is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_wirefuzz::fuzz_targets::FuzzTarget;

fuzz_target!(|data: &[u8]| {
    if let Err(failure) = FuzzTarget::ServerLines.run(data) {
        panic!("{failure}");
    }
});
