//! mcp-wirefuzz's fuzz target for this crate's MCP server: `cargo +nightly fuzz run wirefuzz`.
#![no_main]

use mcp_wirefuzz::sdk::rmcp::policy;
use mcp_wirefuzz::server::rmcp::Rmcp;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mcp_wirefuzz::harness::fuzz_under(&Rmcp(wirefuzz_example_rmcp::Calc::default()), data, &policy());
});
