//! mcp-wirefuzz's regression test: every case file (and libFuzzer crash-* artifact) in wirefuzz-cases/
//! must run clean.

use mcp_wirefuzz::sdk::rmcp::policy;
use mcp_wirefuzz::server::rmcp::Rmcp;

#[test]
fn every_wirefuzz_case_passes() {
    let cases = concat!(env!("CARGO_MANIFEST_DIR"), "/wirefuzz-cases");
    mcp_wirefuzz::harness::replay_under(&Rmcp(wirefuzz_example_rmcp::Calc::default()), cases, &policy());
}
