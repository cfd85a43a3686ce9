//! mcp-wirefuzz's property test: generated conversations must break no rule. Failures shrink to a small
//! script (printed as a case file to keep in wirefuzz-cases/) and persist in proptest-regressions/.

use mcp_wirefuzz::sdk::rmcp::policy;
use mcp_wirefuzz::server::rmcp::Rmcp;

#[test]
fn the_server_breaks_no_wirefuzz_rule() {
    mcp_wirefuzz::harness::property_under(&Rmcp(wirefuzz_example_rmcp::Calc::default()), &policy(), Default::default());
}
