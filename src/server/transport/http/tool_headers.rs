//! The `x-mcp-header` annotations of the server's tools: a 2026-07-28 client on Streamable HTTP MUST mirror each
//! annotated argument of a `tools/call` into a `Mcp-Param-{name}` header (streamable-http.mdx §Custom Headers from
//! Tool Parameters), so it must know the tools' input schemas. The target asks once, with a `tools/list` of its own
//! that no transcript holds (a real client knows the schemas from its own `tools/list`), and keeps the annotations
//! of the tools whose annotations are valid: a client excludes a tool whose annotations break their constraints,
//! and mirrors nothing for it.

use super::exchange::{self, Server};
use super::wire::{Framing, Request};
use crate::protocol::envelope::{self, META};
use crate::protocol::era::LATEST_MODERN_VERSION;
use crate::protocol::http::{ParamHeader, param_headers};
use crate::protocol::methods::TOOLS_LIST;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The annotations of each tool, by name (tools without any are left out).
pub(super) type ToolHeaders = HashMap<String, Vec<ParamHeader>>;

/// The most `tools/list` pages read.
const MAX_PAGES: usize = 8;

/// Reads the annotated tools of the server at `to` with modern `tools/list` requests (headers `base` and the
/// routing ones), following `nextCursor`; what could not be read has none.
pub(super) fn fetch(to: &Server, base: &[(String, String)]) -> ToolHeaders {
    let mut tools = ToolHeaders::new();
    let mut cursor: Option<String> = None;
    for page in 0..MAX_PAGES {
        let mut params = json!({ META: envelope::envelope(LATEST_MODERN_VERSION) });
        if let Some(cursor) = &cursor {
            params["cursor"] = json!(cursor);
        }
        let id = json!(format!("wirefuzz-tool-headers-{page}"));
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": TOOLS_LIST, "params": params });
        let mut headers = base.to_vec();
        headers.extend([
            ("Content-Type".to_string(), "application/json".to_string()),
            ("MCP-Protocol-Version".to_string(), LATEST_MODERN_VERSION.to_string()),
            ("Mcp-Method".to_string(), TOOLS_LIST.to_string()),
        ]);
        let request = Request {
            method: "POST".into(),
            path: to.endpoint.path.clone(),
            headers,
            body: body.to_string().into_bytes(),
            framing: Framing::Length,
        };
        let Ok(outcome) = exchange::exchange(to, &mut None, &request, Some(vec![id.clone()]), &mut |_| Vec::new())
        else {
            break;
        };
        let result = outcome.lines.iter().find_map(|(line, _)| {
            let reply: Value = serde_json::from_slice(line).ok()?;
            (reply.get("id") == Some(&id)).then(|| reply.get("result").cloned()).flatten()
        });
        let Some(result) = result else { break };
        for tool in result.get("tools").and_then(Value::as_array).into_iter().flatten() {
            let (Some(name), Some(schema)) = (tool.get("name").and_then(Value::as_str), tool.get("inputSchema")) else {
                continue;
            };
            if let Ok(annotations) = param_headers(schema)
                && !annotations.is_empty()
            {
                tools.insert(name.to_string(), annotations);
            }
        }
        cursor = result.get("nextCursor").and_then(Value::as_str).map(str::to_string);
        if cursor.is_none() {
            break;
        }
    }
    tools
}
