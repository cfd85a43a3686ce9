//! Raw lines with no structure against a planted bug (first byte, or WIREFUZZ_MUTANT=NAME): the byte-level
//! baseline for the `mutant` target in benchmarks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_wirefuzz::fuzz_targets::FuzzTarget;

fuzz_target!(|data: &[u8]| {
    if let Err(failure) = FuzzTarget::MutantBytes.run(data) {
        panic!("{failure}");
    }
});
