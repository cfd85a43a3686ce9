//! The surface learning: each list (tools, prompts, resources, resource templates) read page by page, each page
//! on a fresh connection in an era the server model says the server serves, following `nextCursor` for at most
//! [`MAX_PAGES`] pages ([`learn`]); the policy of a replay with the surface learned ([`with_learned`]); and the
//! built-in server's surface, learned from it once ([`Surface::built_in`]).

use crate::model::{Eras, ServerModel};
use crate::oracle::Policy;
use crate::protocol::envelope::{self, META};
use crate::protocol::era::{LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION};
use crate::protocol::methods::{INITIALIZE, INITIALIZED, PROMPTS_LIST, RESOURCES_LIST, TEMPLATES_LIST, TOOLS_LIST};
use crate::protocol::{Era, Frame};
use crate::server::builtin::reference::Calc;
use crate::server::{InProcess, Target};
use crate::surface::Surface;
use crate::transcript::{Event, Input, Transcript};
use serde_json::{Map, Value, json};
use std::sync::{Arc, LazyLock};

/// The most pages read of one list.
pub const MAX_PAGES: usize = 16;
/// The four lists, each with the member that holds its items.
pub const LISTS: [(&str, &str); 4] = [
    (TOOLS_LIST, "tools"),
    (PROMPTS_LIST, "prompts"),
    (RESOURCES_LIST, "resources"),
    (TEMPLATES_LIST, "resourceTemplates"),
];

/// The built-in server's surface, learned once from it in-process.
static BUILT_IN: LazyLock<Arc<Surface>> = LazyLock::new(|| {
    let mut target = InProcess(Calc);
    Arc::new(learn(&mut target, &ServerModel::built_in()).unwrap_or_default())
});

// Defined here, not in `surface.rs`: the built-in surface is learned, and `surface.rs` holds data only.
impl Surface {
    /// The built-in server's surface (learned from it once).
    pub fn built_in() -> Arc<Surface> {
        BUILT_IN.clone()
    }
}

/// `policy` with the surface of `target` learned, in an era its model says the server serves (the handshake era
/// without one). For replaying and shrinking a case: a case file keeps no surface, and the surface rules judge
/// nothing without one.
pub fn with_learned(policy: Policy, target: &mut dyn Target) -> anyhow::Result<Policy> {
    let model = policy.model().cloned().unwrap_or_else(|| ServerModel::stated(Eras::Unknown));
    let surface = learn(target, &model)?;
    Ok(policy.with_surface(Arc::new(surface)))
}

/// The conversation that reads one page of `method` in `era`, with `cursor`; the list request has id 2 after a
/// handshake, id 1 in the modern era.
pub fn page_inputs(era: Era, method: &str, cursor: Option<&str>) -> Vec<Input> {
    let line = |value: Value| Input::Line(value.to_string().into_bytes());
    let mut params = Map::new();
    if let Some(cursor) = cursor {
        params.insert("cursor".into(), json!(cursor));
    }
    match era {
        Era::Handshake => {
            let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": INITIALIZE, "params": {
                "protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
                "clientInfo": { "name": crate::script::CLIENT_NAME, "version": env!("CARGO_PKG_VERSION") } } });
            let mut list = json!({ "jsonrpc": "2.0", "id": 2, "method": method });
            if !params.is_empty() {
                list["params"] = Value::Object(params);
            }
            vec![
                line(initialize),
                line(json!({ "jsonrpc": "2.0", "method": INITIALIZED })),
                Input::Sync,
                line(list),
                Input::Sync,
            ]
        }
        Era::Modern => {
            params.insert(META.into(), envelope::envelope(LATEST_MODERN_VERSION));
            vec![line(json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params })), Input::Sync]
        }
    }
}

/// Learns the surface of `target`: each list, page by page, each page on a fresh connection in an era the model
/// says the server serves (the handshake era when it serves both or nobody knows). A list that gets an error or
/// no reply is empty (noted); a target that cannot run a conversation is an error.
pub fn learn(target: &mut dyn Target, model: &ServerModel) -> anyhow::Result<Surface> {
    let era = match model.serves(Era::Handshake) {
        Some(false) => Era::Modern,
        _ => Era::Handshake,
    };
    let mut surface = Surface::default();
    surface.learned = true;
    for (method, key) in LISTS {
        let mut cursor: Option<String> = None;
        let mut seen = Vec::new();
        for page in 0.. {
            if page == MAX_PAGES {
                surface.notes.push(format!("{method}: stopped after {MAX_PAGES} pages"));
                break;
            }
            let transcript = target.run(&page_inputs(era, method, cursor.as_deref()))?;
            let id = if era == Era::Handshake { 2 } else { 1 };
            let result = match list_result(&transcript, id) {
                Ok(result) => result,
                Err(why) => {
                    surface.notes.push(format!("{method}: {why}"));
                    break;
                }
            };
            let items = result.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            for item in items {
                surface.add(key, item);
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !seen.iter().any(|c| c == next) => {
                    seen.push(next.to_string());
                    cursor = Some(next.to_string());
                }
                Some(_) => {
                    surface.notes.push(format!("{method}: nextCursor repeats an earlier cursor; stopped"));
                    break;
                }
                None => break,
            }
        }
    }
    Ok(surface)
}

/// The result object of the reply with id `id`, or why there is none.
fn list_result(transcript: &Transcript, id: i64) -> Result<Map<String, Value>, String> {
    for event in &transcript.events {
        let Event::Received { line, .. } = event else { continue };
        let Frame::Response(_) = Frame::parse(line) else { continue };
        let Ok(Value::Object(mut reply)) = serde_json::from_slice::<Value>(line) else { continue };
        if reply.get("id") != Some(&json!(id)) {
            continue;
        }
        return match (reply.remove("result"), reply.remove("error")) {
            (Some(Value::Object(result)), _) => Ok(result),
            (_, Some(error)) => Err(format!("error {}", error.get("code").unwrap_or(&Value::Null))),
            _ => Err("a reply that is not a result object".into()),
        };
    }
    Err("no reply".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{InProcessServer, ServerConnection, Status};

    #[test]
    fn the_built_in_server_lists_its_tools_prompts_and_resources() {
        let surface = Surface::built_in();
        assert!(surface.learned && surface.notes.is_empty(), "{:?}", surface.notes);
        assert_eq!(surface.tools[0].name, "add");
        assert!(surface.tools.iter().any(|t| t.output_schema.is_some()));
        assert!(!surface.prompts.is_empty() && !surface.resources.is_empty() && !surface.templates.is_empty());
        for index in 0..surface.tools.len() {
            assert!(surface.validators(index).0.is_some(), "{}", surface.tools[index].name);
        }
        let modern = learn(&mut crate::server::InProcess(crate::server::builtin::reference::Calc), &{
            ServerModel::stated(Eras::Modern)
        })
        .unwrap();
        assert_eq!(&modern, &*surface, "both eras list the same surface");
    }

    /// Lists tools `t0`..`t4`, two per page, cursors `p1`, `p2`; a cursor it never issued gets -32602.
    struct Paged;

    impl InProcessServer for Paged {
        type Connection = Paged;
        fn connect(&self) -> Paged {
            Paged
        }
    }

    impl ServerConnection for Paged {
        fn receive(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> Status {
            let request: Value = serde_json::from_slice(line).unwrap();
            let Some(id) = request.get("id") else { return Status::Running };
            let page = match request["params"]["cursor"].as_str() {
                None => 0,
                Some("p1") => 1,
                Some("p2") => 2,
                Some(_) => {
                    let error = json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,"message":"bad cursor"}});
                    out.push(error.to_string().into_bytes());
                    return Status::Running;
                }
            };
            let result = match request["method"].as_str() {
                Some("initialize") => json!({"protocolVersion":"2025-11-25","capabilities":{},
                    "serverInfo":{"name":"paged","version":"1"}}),
                Some("tools/list") => {
                    let tools: Vec<Value> = (page * 2..(page * 2 + 2).min(5))
                        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
                        .collect();
                    let mut result = json!({ "tools": tools });
                    if page < 2 {
                        result["nextCursor"] = json!(format!("p{}", page + 1));
                    }
                    result
                }
                _ => {
                    let error = json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"nope"}});
                    out.push(error.to_string().into_bytes());
                    return Status::Running;
                }
            };
            out.push(json!({"jsonrpc":"2.0","id":id,"result":result}).to_string().into_bytes());
            Status::Running
        }
    }

    #[test]
    fn pagination_is_followed_and_errors_are_noted() {
        let surface = learn(&mut crate::server::InProcess(Paged), &ServerModel::stated(Eras::Handshake)).unwrap();
        let names: Vec<&str> = surface.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["t0", "t1", "t2", "t3", "t4"]);
        assert_eq!(surface.notes.len(), 3, "{:?}", surface.notes);
        assert_eq!(surface.to_string(), "5 tools, 0 prompts, 0 resources, 0 resource templates");
        let focused = surface.clone().focus(&["t3".into()]).unwrap();
        assert_eq!(focused.tools.len(), 1);
        assert!(focused.lists_tool("t0") && focused.to_string().ends_with("(focused on 1 of 5 tools)"));
        assert!(surface.clone().focus(&["nope".into()]).is_err());
        let skipped = surface.clone().skip(&["t0".into(), "t4".into()]).unwrap();
        assert_eq!(skipped.tools.len(), 3);
        assert!(skipped.lists_tool("t0") && surface.skip(&["nope".into()]).is_err());
    }
}
