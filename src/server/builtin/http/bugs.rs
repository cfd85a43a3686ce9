//! The catalogue of planted HTTP bugs ([`HttpBug`]): each one's name, the rule that must catch it, and the shortest
//! conversation that exposes it. The server that plants them is in `mod.rs` and its siblings.

use crate::protocol::envelope;
use crate::protocol::methods::INITIALIZE;
use crate::server::transport::http::Directive;
use serde_json::{Value, json};
use std::fmt;

/// One planted bug of the HTTP layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HttpBug {
    /// Modern JSON-RPC errors come with status 200 instead of 400 or 404.
    ErrorStatus200,
    /// A notification POST gets 200 and a body instead of 202 and none.
    NotificationBody,
    /// Replies to requests carry `Content-Type: text/html`.
    HtmlContentType,
    /// The routing headers are never checked against the body.
    IgnoresHeaders,
    /// Requests from any `Origin` are served.
    AnyOrigin,
    /// GET is answered with a JSON body instead of an SSE stream or 405.
    GetServesJson,
    /// A request without its session gets 404 instead of 400.
    SessionMissing404,
    /// DELETE answers 200 but the session goes on being served.
    DeletedSessionServed,
    /// An invalid `MCP-Protocol-Version` on a legacy session is ignored instead of refused with 400.
    IgnoresVersionHeader,
    /// Modern-only, yet a GET gets 200 and an (empty) SSE stream instead of 405.
    ModernGet200,
    /// Modern-only, yet every response mints an `Mcp-Session-Id`.
    ModernMintsSession,
    /// Polls a session's streams (as `--sse-polling`), but the GET with `Last-Event-ID` gets an empty stream: the
    /// parked responses are lost.
    PolledStreamLost,
    /// Polls a session's streams (as `--sse-polling`), and the GET with `Last-Event-ID` starts with the event of
    /// that id again.
    EventIdReused,
    /// While the client holds a GET stream open, every response to its POSTs goes on that stream too.
    ResponseOnGetStream,
    /// While the client holds a GET stream open, each request's response stream starts with a `ping` of the
    /// server's, and the same `ping` goes on the GET stream too.
    BroadcastRequest,
    /// The `Mcp-Param-*` headers of a modern tools/call are never checked against the arguments they mirror.
    IgnoresParamHeaders,
}

impl HttpBug {
    /// Every planted HTTP bug.
    pub const ALL: [HttpBug; 16] = [
        HttpBug::ErrorStatus200,
        HttpBug::NotificationBody,
        HttpBug::HtmlContentType,
        HttpBug::IgnoresHeaders,
        HttpBug::AnyOrigin,
        HttpBug::GetServesJson,
        HttpBug::SessionMissing404,
        HttpBug::DeletedSessionServed,
        HttpBug::IgnoresVersionHeader,
        HttpBug::ModernGet200,
        HttpBug::ModernMintsSession,
        HttpBug::PolledStreamLost,
        HttpBug::EventIdReused,
        HttpBug::ResponseOnGetStream,
        HttpBug::BroadcastRequest,
        HttpBug::IgnoresParamHeaders,
    ];

    /// The kebab-case name `serve --http-bug` takes.
    pub fn name(self) -> &'static str {
        self.facts().0
    }

    /// The rule that must catch the bug.
    pub fn expected_rule(self) -> &'static str {
        self.facts().1
    }

    /// One line on the bug.
    pub fn description(self) -> &'static str {
        self.facts().2
    }

    /// True when the bug's server serves only the modern era (its rule judges modern-only servers alone).
    pub fn modern_only(self) -> bool {
        matches!(self, HttpBug::ModernGet200 | HttpBug::ModernMintsSession)
    }

    /// Looks a bug up by name.
    pub fn from_name(name: &str) -> Option<HttpBug> {
        HttpBug::ALL.into_iter().find(|bug| bug.name() == name)
    }

    fn facts(self) -> (&'static str, &'static str, &'static str) {
        use crate::rule_ids as c;
        match self {
            HttpBug::ErrorStatus200 => ("error-status-200", c::HTTP_ERROR_STATUS, "modern errors come with status 200"),
            HttpBug::NotificationBody => {
                ("notification-body", c::HTTP_NOTIFICATION_202, "notifications get 200 and a body, not 202")
            }
            HttpBug::HtmlContentType => ("html-content-type", c::HTTP_CONTENT_TYPE, "replies are labelled text/html"),
            HttpBug::IgnoresHeaders => {
                ("ignores-headers", c::HTTP_HEADER_MISMATCH, "routing headers are not checked against the body")
            }
            HttpBug::AnyOrigin => ("any-origin", c::HTTP_ORIGIN, "requests from a foreign Origin are served"),
            HttpBug::GetServesJson => ("get-serves-json", c::HTTP_GET, "GET gets a JSON body, not SSE or 405"),
            HttpBug::SessionMissing404 => {
                ("session-missing-404", c::HTTP_SESSION_REQUIRED, "a request without its session gets 404, not 400")
            }
            HttpBug::DeletedSessionServed => {
                ("deleted-session-served", c::HTTP_SESSION_DELETED, "a session ended by DELETE is still served")
            }
            HttpBug::IgnoresVersionHeader => (
                "ignores-version-header",
                c::HTTP_PROTOCOL_VERSION_HEADER,
                "an invalid MCP-Protocol-Version on a session is not refused",
            ),
            HttpBug::ModernGet200 => {
                ("modern-get-200", c::HTTP_MODERN_GET_DELETE_405, "modern-only, yet GET gets 200 and SSE, not 405")
            }
            HttpBug::ModernMintsSession => {
                ("modern-mints-session", c::HTTP_MODERN_NO_SESSION, "modern-only, yet responses mint Mcp-Session-Id")
            }
            HttpBug::PolledStreamLost => (
                "polled-stream-lost",
                c::RESPONSE_MISSING,
                "a polled stream resumed with Last-Event-ID carries nothing: its responses are lost",
            ),
            HttpBug::EventIdReused => (
                "event-id-reused",
                c::HTTP_SSE_EVENT_ID,
                "a polled stream resumed with Last-Event-ID repeats the event of that id",
            ),
            HttpBug::ResponseOnGetStream => (
                "response-on-get-stream",
                c::HTTP_GET_STREAM_RESPONSE,
                "responses to POSTs go on the client's GET stream too",
            ),
            HttpBug::BroadcastRequest => (
                "broadcast-request",
                c::HTTP_SSE_BROADCAST,
                "a ping of the server's goes on a request's stream and on the GET stream alike",
            ),
            HttpBug::IgnoresParamHeaders => (
                "ignores-param-headers",
                c::HTTP_HEADER_MISMATCH,
                "Mcp-Param-* headers are not checked against the tools/call arguments they mirror",
            ),
        }
    }

    /// The shortest conversation that exposes the bug (directive lines included).
    pub fn trigger(self) -> Vec<Vec<u8>> {
        let modern = |id: u64, method: &str, extra: Value| {
            let mut params = json!({ "_meta": envelope::envelope("2026-07-28") });
            if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
                params.extend(extra);
            }
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string().into_bytes()
        };
        let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": INITIALIZE, "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } })
        .to_string()
        .into_bytes();
        let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec();
        let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_vec();
        let set = |name: &str, value: &str| {
            Directive::Next(crate::server::transport::http::Tweak::Set(name.into(), value.into())).line()
        };
        let drop = |name: &str| Directive::Next(crate::server::transport::http::Tweak::Drop(name.into())).line();
        match self {
            HttpBug::ErrorStatus200 => vec![modern(1, "no/such/method", json!({}))],
            HttpBug::NotificationBody => vec![initialize, initialized],
            HttpBug::HtmlContentType => vec![modern(1, "tools/list", json!({}))],
            HttpBug::IgnoresHeaders => vec![set("Mcp-Method", "tools/call"), modern(1, "tools/list", json!({}))],
            // On an initialize, which servers of either era serve (a modern-only one refuses it anyway).
            HttpBug::AnyOrigin => vec![set("Origin", "http://evil.example"), initialize],
            HttpBug::GetServesJson | HttpBug::ModernGet200 => vec![Directive::Bodiless("GET".into()).line()],
            HttpBug::ModernMintsSession => vec![modern(1, "tools/list", json!({}))],
            HttpBug::SessionMissing404 => vec![initialize, initialized, drop("Mcp-Session-Id"), list],
            HttpBug::DeletedSessionServed => {
                vec![initialize, initialized, Directive::Bodiless("DELETE".into()).line(), list]
            }
            HttpBug::IgnoresVersionHeader => {
                vec![initialize, initialized, set("MCP-Protocol-Version", "1999-01-01"), list]
            }
            HttpBug::PolledStreamLost | HttpBug::EventIdReused => vec![initialize, initialized, list],
            HttpBug::IgnoresParamHeaders => {
                let call = modern(1, "tools/call", json!({ "name": "add", "arguments": { "a": 1, "b": 2 } }));
                vec![Directive::Next(crate::server::transport::http::Tweak::Drop("Mcp-Param-*".into())).line(), call]
            }
            HttpBug::ResponseOnGetStream | HttpBug::BroadcastRequest => {
                let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#;
                vec![initialize, initialized, Directive::Bodiless("GET".into()).line(), call.to_vec()]
            }
        }
    }
}

impl fmt::Display for HttpBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
