//! The harness on an rmcp server whose tools are not calc's: a notes server (`store_note`, `get_note`, each with an
//! outputSchema) written with rmcp's macros. The property test learns its tools in-process and calls them, so a
//! bug in `get_note` (a note not found answers `{"title": null}`, against the outputSchema) is found; the clean
//! server passes.

use mcp_wirefuzz::sdk::rmcp::policy;
use mcp_wirefuzz::server::rmcp::Rmcp;
use proptest::test_runner::Config;
use rmcp::{
    ErrorData, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig},
    tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

#[derive(Deserialize, JsonSchema)]
struct StoreArgs {
    title: String,
}

#[derive(Serialize, JsonSchema)]
struct Stored {
    id: u32,
}

#[derive(Deserialize, JsonSchema)]
struct GetArgs {
    id: u32,
}

#[derive(Serialize, JsonSchema)]
struct Note {
    title: String,
}

/// The notes server; `planted`: a note not found is `{"title": null}` instead of an isError result.
struct Notes {
    planted: bool,
    notes: Arc<Mutex<Vec<String>>>,
    tool_router: ToolRouter<Self>,
}

/// Each conversation serves a clone: it starts with no notes, so a conversation does not depend on the ones before.
impl Clone for Notes {
    fn clone(&self) -> Notes {
        Notes::new(self.planted)
    }
}

impl Notes {
    fn new(planted: bool) -> Notes {
        Notes { planted, notes: Arc::default(), tool_router: Notes::tool_router() }
    }
}

fn structured(value: serde_json::Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
    result.structured_content = Some(value);
    result
}

#[tool_router]
impl Notes {
    /// Store a note; answers its id.
    #[tool(output_schema = rmcp::handler::server::common::schema_for_output::<Stored>())]
    async fn store_note(
        &self,
        Parameters(StoreArgs { title }): Parameters<StoreArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut notes = self.notes.lock().expect("not poisoned");
        notes.push(title);
        Ok(structured(serde_json::json!({ "id": notes.len() - 1 })))
    }

    /// The note with this id.
    #[tool(output_schema = rmcp::handler::server::common::schema_for_output::<Note>())]
    async fn get_note(&self, Parameters(GetArgs { id }): Parameters<GetArgs>) -> Result<CallToolResult, ErrorData> {
        match self.notes.lock().expect("not poisoned").get(id as usize) {
            Some(title) => Ok(structured(serde_json::json!({ "title": title }))),
            None if self.planted => Ok(structured(serde_json::json!({ "title": null }))),
            None => Ok(CallToolResult::error(vec![ContentBlock::text(format!("no note {id}"))])),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[test]
fn the_property_test_calls_the_servers_own_tools() {
    let config = || Config { cases: 256, failure_persistence: None, ..Config::default() };
    let planted = std::panic::catch_unwind(|| {
        mcp_wirefuzz::harness::property_under(&Rmcp(Notes::new(true)), &policy(), config());
    });
    let report = planted.expect_err("the tool bug is found").downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(report.contains("MCP-TOOL-OUTPUT-SCHEMA") && report.contains("get_note"), "{report}");
    mcp_wirefuzz::harness::property_under(&Rmcp(Notes::new(false)), &policy(), config());
}
