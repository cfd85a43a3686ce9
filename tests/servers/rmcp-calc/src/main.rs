//! The seed transcripts' calc server, written with rmcp (the official Rust MCP SDK), served over stdio.
//!
//! One tool, `add(a: i64, b: i64) -> i64`; server name `calc`, empty version. Everything protocol-level
//! (eras, version negotiation, envelope checks, error codes, framing) is rmcp's own default behaviour:
//! this file only declares the tool and the server identity, so that mcp-wirefuzz tests rmcp, not us.
//! Nothing but JSON-RPC goes to stdout; rmcp logs through `tracing`, and no subscriber is installed.

use rmcp::{
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig},
    tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The tool's arguments; schemars turns this into the `inputSchema` rmcp lists and validates.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// The tool's structured output, `{"result": n}`, the shape the seed transcripts' calc returns.
#[derive(Serialize, JsonSchema)]
struct AddOutput {
    result: i64,
}

#[derive(Clone)]
struct Calc {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Calc {
    /// Add two integers.
    //
    // rmcp's `Json<T>` wrapper would put the serialized object (`{"result":5}`) in the text block; the seed calc
    // answers the text `5` with `structuredContent: {"result": 5}`, so the result is built by hand, and the
    // output schema is declared explicitly (it is `AddOutput`'s).
    #[tool(output_schema = rmcp::handler::server::common::schema_for_output::<AddOutput>())]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Result<CallToolResult, ErrorData> {
        // wrapping_add: i64 overflow must not panic the server (a fuzzer will send i64::MAX).
        let sum = a.wrapping_add(b);
        let mut result = CallToolResult::success(vec![ContentBlock::text(sum.to_string())]);
        result.structured_content = Some(serde_json::to_value(AddOutput { result: sum }).expect("an i64 serializes"));
        Ok(result)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Calc {
    fn get_info(&self) -> ServerConfig {
        // Tools, prompts and resources, like the seed calc (rmcp answers prompts/list and resources/list with empty
        // lists by default), with the seed's handshake-era flags: nothing ever changes, nothing to subscribe to.
        // Supported protocol versions are rmcp's default, ProtocolVersion::KNOWN_VERSIONS (2024-11-05..2026-07-28).
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

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let calc = Calc { tool_router: Calc::tool_router() };
    // rmcp::transport::stdio(): tokio's stdin/stdout, one JSON message per line.
    // `serve` returns once a lifecycle is chosen: after `initialize`, or after the first request carrying the full
    // 2026-07-28 envelope (a `server/discover`, a `ping` or a malformed request before that is answered inside it).
    let service = match calc.serve(rmcp::transport::stdio()).await {
        Ok(service) => service,
        // stdin closed before any lifecycle was chosen (e.g. only a discover or a ping was sent): a normal
        // shutdown, not an error. Any other error (e.g. a notification as the first message) is rmcp's and is
        // reported as is: the process exits with status 1.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    service.waiting().await?;
    Ok(())
}
