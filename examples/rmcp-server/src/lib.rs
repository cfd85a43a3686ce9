//! The calc server of tests/servers/rmcp-calc (one tool, `add(a: i64, b: i64) -> i64`), written with rmcp, as a
//! library so that tests drive it in-process; `src/main.rs` serves it over stdio.
//!
//! With the feature `planted-bug`, `add` takes a fast path for small operands through a table of precomputed
//! sums, indexed without a bounds check: `add(a, b)` with `b` of 2 and `a` of 2 or more panics (index out of
//! bounds). The harness reports the panic whatever rmcp does with it.

use rmcp::{
    ErrorData, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig},
    tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The tool's arguments; schemars turns this into the `inputSchema` rmcp lists and validates.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// The tool's structured output, `{"result": n}`.
#[derive(Serialize, JsonSchema)]
struct AddOutput {
    result: i64,
}

/// The calc server.
#[derive(Clone)]
pub struct Calc {
    tool_router: ToolRouter<Self>,
}

impl Default for Calc {
    fn default() -> Calc {
        Calc { tool_router: Calc::tool_router() }
    }
}

#[tool_router]
impl Calc {
    /// Add two integers.
    #[tool(output_schema = rmcp::handler::server::common::schema_for_output::<AddOutput>())]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Result<CallToolResult, ErrorData> {
        let sum = sum(a, b);
        let mut result = CallToolResult::success(vec![ContentBlock::text(sum.to_string())]);
        result.structured_content = Some(serde_json::to_value(AddOutput { result: sum }).expect("an i64 serializes"));
        Ok(result)
    }
}

/// `a + b`, wrapping on overflow (a fuzzer will send i64::MAX).
#[cfg(not(feature = "planted-bug"))]
fn sum(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// The planted bug: sums `a + 2` for small `a`, looked up without checking that `a` is small.
#[cfg(feature = "planted-bug")]
fn sum(a: i64, b: i64) -> i64 {
    const PLUS_TWO: [i64; 2] = [2, 3];
    if b == 2 && a >= 0 { PLUS_TWO[a as usize] } else { a.wrapping_add(b) }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Calc {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder().enable_tools().enable_prompts().enable_resources().build();
        if let Some(tools) = capabilities.tools.as_mut() {
            tools.list_changed = Some(false);
        }
        if let Some(prompts) = capabilities.prompts.as_mut() {
            prompts.list_changed = Some(false);
        }
        if let Some(resources) = capabilities.resources.as_mut() {
            resources.list_changed = Some(false);
            resources.subscribe = Some(false);
        }
        ServerConfig::new(capabilities).with_server_info(Implementation::new("calc", ""))
    }
}
