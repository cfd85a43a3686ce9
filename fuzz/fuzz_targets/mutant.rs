//! A generated conversation against a planted bug (first byte, or WIREFUZZ_MUTANT=NAME); finding the bug is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_wirefuzz::fuzz_targets::FuzzTarget;

fuzz_target!(|data: &[u8]| {
    if let Err(failure) = FuzzTarget::Mutant.run(data) {
        panic!("{failure}");
    }
});
