//! The modern single exchange (2026-07-28): a POST's routing and `Mcp-Param-*` headers checked against its body,
//! then the body answered on a fresh modern calc connection.

use super::{HttpBug, HttpReply, HttpRequest, HttpServer, exchange};
use crate::protocol::codes::{HEADER_MISMATCH, METHOD_NOT_FOUND};
use crate::protocol::envelope::{self, PROTOCOL_VERSION_KEY};
use crate::protocol::http::{decode_header_value, mirrored_name, param_headers, param_values};
use crate::protocol::methods::{INITIALIZE, LISTEN, TOOLS_CALL};
use crate::protocol::{Era, Frame};
use crate::server::builtin::fixtures;
use crate::server::builtin::surface::CalcSurface;
use serde_json::{Value, json};

impl HttpServer {
    /// A modern single exchange: headers checked against the body, then a fresh calc connection.
    pub(super) fn modern(&mut self, request: &HttpRequest, body: &[u8], version: Option<&str>) -> HttpReply {
        let frame = Frame::parse(body);
        if !self.bug(HttpBug::IgnoresHeaders)
            && let Some(problem) = header_problem(request, &frame, version)
        {
            let id = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|value| value.get("id").cloned())
                .filter(|id| id.is_string() || id.is_number())
                .unwrap_or(Value::Null);
            let error = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": HEADER_MISMATCH, "message": problem } });
            return HttpReply::json(400, error.to_string().into_bytes());
        }
        if !self.bug(HttpBug::IgnoresParamHeaders)
            && let Some(problem) = self.param_problem(request, &frame)
            && let Frame::Request(call) = &frame
        {
            let error = json!({ "jsonrpc": "2.0", "id": call.id.to_value(),
                "error": { "code": HEADER_MISMATCH, "message": problem } });
            return HttpReply::json(400, error.to_string().into_bytes());
        }
        // A POST routed here is a 2026-07-28 request: its connection is a modern one (a missing envelope gets
        // -32602, not the handshake era's answers), and `initialize` carrying the envelope names a method that
        // version does not have (404 and -32601, basic/transports/streamable-http.mdx), as the other removed
        // methods do.
        if let Frame::Request(request) = &frame
            && request.method == INITIALIZE
            && envelope::meta(request.params.as_ref()).is_some_and(|meta| meta.contains_key(PROTOCOL_VERSION_KEY))
        {
            let error = json!({ "jsonrpc": "2.0", "id": request.id.to_value(), "error": {
                "code": METHOD_NOT_FOUND, "message": "Method not found", "data": INITIALIZE } });
            return self.replies(vec![error.to_string().into_bytes()], true, &frame);
        }
        let mut connection = self.connect(true);
        let mut replies = exchange(&mut connection, body);
        if let Frame::Request(request) = &frame
            && request.method == LISTEN
        {
            replies.extend(connection.close_listen(&request.id));
        }
        let mut reply = self.replies(replies, true, &frame);
        if self.bug(HttpBug::ModernMintsSession) {
            self.next_session += 1;
            reply.headers.push(("Mcp-Session-Id".into(), format!("calc-session-{}", self.next_session)));
        }
        reply
    }

    /// What in a modern tools/call's `Mcp-Param-*` headers does not match the arguments its tool's `x-mcp-header`
    /// annotations mirror (streamable-http.mdx §Server Behavior for Custom Headers: each decoded value matches the
    /// body's, and a header without a value in the body matches nothing), if anything.
    fn param_problem(&self, request: &HttpRequest, frame: &Frame) -> Option<String> {
        let Frame::Request(call) = frame else { return None };
        let params = call.params.as_ref().filter(|_| call.method == TOOLS_CALL)?;
        let name = params.get("name")?.as_str()?;
        let surface = CalcSurface { mutant: None, era: Era::Modern };
        let mut tools = surface.tools();
        if self.fixtures {
            tools.extend(fixtures::tools());
        }
        let tool = tools.iter().find(|tool| tool.get("name").and_then(Value::as_str) == Some(name))?;
        let annotations = param_headers(tool.get("inputSchema")?).ok()?;
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
        let expected = param_values(&annotations, &arguments);
        for annotation in &annotations {
            let header = format!("Mcp-Param-{}", annotation.name);
            let sent: Vec<String> = request.values(&header).into_iter().map(decode_header_value).collect();
            let wanted = expected.iter().find(|(name, _)| *name == header).map(|(_, value)| value.clone());
            if sent != wanted.iter().cloned().collect::<Vec<_>>() {
                return Some(format!("{header} {sent:?} does not match the argument's {wanted:?}"));
            }
        }
        None
    }
}

/// Why a modern request's headers do not match its body (2026-07-28 streamable-http.mdx §Server Validation), if
/// they do not.
fn header_problem(request: &HttpRequest, frame: &Frame, version: Option<&str>) -> Option<String> {
    let (method, params) = match frame {
        Frame::Request(r) => (&r.method, r.params.as_ref()),
        Frame::Notification(n) => (&n.method, n.params.as_ref()),
        _ => return None,
    };
    let body_version = envelope::meta(params).and_then(|m| m.get(PROTOCOL_VERSION_KEY)).and_then(Value::as_str);
    if let Some(body_version) = body_version
        && version != Some(body_version)
    {
        return Some(format!("MCP-Protocol-Version header does not match the body's {body_version:?}"));
    }
    if request.single("mcp-method") != Some(method.as_str()) {
        return Some(format!("Mcp-Method header is missing or does not match the body's {method:?}"));
    }
    if let Some(name) = mirrored_name(method, params)
        && request.single("mcp-name").map(decode_header_value) != Some(name.clone())
    {
        return Some(format!("Mcp-Name header is missing or does not match the body's {name:?}"));
    }
    None
}
