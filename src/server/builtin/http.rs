//! The reference server over Streamable HTTP (`serve --http ADDR`), and its planted HTTP bugs ([`HttpBug`]).
//!
//! Routing follows the Python SDK: a POST whose `MCP-Protocol-Version` names a modern version (or names no
//! handshake version and carries no session) is a modern single exchange on a fresh calc connection, checked
//! against its headers first; any other POST belongs to a legacy session opened by `initialize`. GET gets 405 (this
//! server sends nothing unasked), DELETE ends a session, a foreign `Origin` gets 403. Modern-only (`serve --http-era
//! modern`, or one of the bugs [`HttpBug::modern_only`]), it serves 2026-07-28 alone: every POST is a modern single
//! exchange, GET and DELETE get 405, sessions are neither minted nor read. The request handling is the pure
//! function [`HttpServer::handle`]; [`serve`] puts it behind `tiny_http`.

use super::reference::{Calc, CalcConnection};
use crate::protocol::codes::{HEADER_MISMATCH, METHOD_NOT_FOUND};
use crate::protocol::envelope::{self, PROTOCOL_VERSION_KEY};
use crate::protocol::era::{HANDSHAKE_VERSIONS, MODERN_VERSIONS};
use crate::protocol::http::{decode_header_value, foreign_origin, mirrored_name, param_headers, param_values};
use crate::protocol::methods::{INITIALIZE, LISTEN, TOOLS_CALL};
use crate::protocol::{Era, Frame};
use crate::server::transport::http::Directive;
use crate::server::{InProcessServer, ServerConnection};
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt;
use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, Sender};

/// The largest request body read (10 MiB; a larger one gets 413).
pub const MAX_REQUEST_BYTES: usize = 10 << 20;

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
        use crate::oracle::rules as c;
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

/// One request as the server sees it.
#[derive(Clone, Debug, Default)]
pub struct HttpRequest {
    /// The method.
    pub method: String,
    /// The headers in order.
    pub headers: Vec<(String, String)>,
    /// The body; `None` when it could not be read whole (cut, or too long).
    pub body: Option<Vec<u8>>,
}

impl HttpRequest {
    fn values(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
    }

    /// The header's value when it appears exactly once.
    fn single(&self, name: &str) -> Option<&str> {
        match self.values(name).as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }
}

/// One response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpReply {
    /// The status.
    pub status: u16,
    /// Headers beyond the framing ones.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl HttpReply {
    fn empty(status: u16) -> HttpReply {
        HttpReply { status, headers: Vec::new(), body: Vec::new() }
    }

    fn json(status: u16, body: Vec<u8>) -> HttpReply {
        HttpReply { status, headers: vec![("Content-Type".into(), "application/json".into())], body }
    }
}

/// The reference server's HTTP state: its legacy sessions, the planted bug, and whether it serves the modern era
/// only.
/// An SSE stream held open for a tool call: the call's id, and where its later messages go.
struct HeldStream {
    call: Value,
    sender: Sender<Vec<u8>>,
}

#[derive(Default)]
pub struct HttpServer {
    bug: Option<HttpBug>,
    modern_only: bool,
    /// Serves the conformance suite's fixtures beside calc's own ([`super::fixtures`]).
    fixtures: bool,
    /// The SSE streams held open, by session: a tool call waiting for the client's answer to a request the server
    /// sent on the stream ([`super::fixtures::mid_call_request`]). The answer arrives on another POST.
    streams: HashMap<String, HeldStream>,
    /// The stream the last [`HttpServer::handle`] opened: [`serve`] writes what it receives as SSE events until
    /// the sender is dropped.
    opened: Option<Receiver<Vec<u8>>>,
    sessions: HashMap<String, CalcConnection>,
    /// Sessions a planted bug keeps serving after DELETE.
    next_session: u64,
    /// Answers a session's requests by SSE polling (`serve --http --sse-polling`): the POST's stream carries only a
    /// priming event (an id, no data) and a `retry`, and closes; the responses wait in [`HttpServer::parked`] for
    /// the client's GET with `Last-Event-ID`.
    polling: bool,
    /// The events of the polled streams not yet delivered, by stream: each event's id and message.
    parked: HashMap<String, Vec<(String, Vec<u8>)>>,
    /// How many streams were opened for polling (their ids count up).
    next_stream: u64,
    /// The GET streams the clients hold open, by session (one each; a new GET replaces it): the server's own
    /// messages unrelated to a request go there. Ended with the session.
    listeners: HashMap<String, Sender<Vec<u8>>>,
    /// How many requests of its own the server sent on GET streams or broadcast (their ids count up).
    next_ping: u64,
}

/// The `retry` a polled stream asks for, in milliseconds.
const POLLING_RETRY_MS: u64 = 10;

/// The HTTP status the 2026-07-28 transport gives a JSON-RPC error code, when it names one.
pub fn status_for_code(code: i64) -> Option<u16> {
    match code {
        -32700 | -32600 | -32602 | -32020 | -32021 | -32022 => Some(400),
        METHOD_NOT_FOUND => Some(404),
        _ => None,
    }
}

impl HttpServer {
    /// A server, with one planted bug or none; modern-only when asked or when the bug is one of a modern-only
    /// server ([`HttpBug::modern_only`]).
    pub fn new(bug: Option<HttpBug>, modern_only: bool) -> HttpServer {
        let modern_only = modern_only || bug.is_some_and(HttpBug::modern_only);
        let polling = matches!(bug, Some(HttpBug::PolledStreamLost | HttpBug::EventIdReused));
        HttpServer { bug, modern_only, polling, ..HttpServer::default() }
    }

    /// The same server, answering a session's requests by SSE polling (`serve --http --sse-polling`).
    pub fn with_polling(self) -> HttpServer {
        HttpServer { polling: true, ..self }
    }

    /// The same server, serving the conformance suite's fixtures too (`serve --conformance-fixtures`).
    pub fn with_fixtures(self) -> HttpServer {
        HttpServer { fixtures: true, ..self }
    }

    fn bug(&self, bug: HttpBug) -> bool {
        self.bug == Some(bug)
    }

    /// A fresh calc connection: fixed to the modern era when `modern`, else one whose first request picks its era.
    fn connect(&self, modern: bool) -> CalcConnection {
        let connection = if modern { CalcConnection::modern_only() } else { Calc.connect() };
        if self.fixtures { connection.with_fixtures() } else { connection }
    }

    /// Handles one request.
    pub fn handle(&mut self, request: &HttpRequest) -> HttpReply {
        if let Some(origin) = request.values("origin").first()
            && foreign_origin(origin, None)
            && !self.bug(HttpBug::AnyOrigin)
        {
            return HttpReply::empty(403);
        }
        match request.method.as_str() {
            "POST" => self.post(request),
            "GET" if self.bug(HttpBug::ModernGet200) => HttpReply {
                headers: vec![("Content-Type".into(), "text/event-stream".into())],
                ..HttpReply::empty(200)
            },
            "GET" | "DELETE" if self.modern_only => {
                HttpReply { headers: vec![("Allow".into(), "POST".into())], ..HttpReply::empty(405) }
            }
            "GET" if self.bug(HttpBug::GetServesJson) => HttpReply::json(200, b"{}".to_vec()),
            "GET" if request.single("last-event-id").is_some() => self.resume(request),
            "GET" => match request.single("mcp-session-id") {
                Some(id) if self.sessions.contains_key(id) => self.listen(id.to_string()),
                Some(_) => HttpReply::empty(404),
                None => HttpReply { headers: vec![("Allow".into(), "POST, DELETE".into())], ..HttpReply::empty(405) },
            },
            "DELETE" => match request.single("mcp-session-id") {
                Some(id) if self.sessions.contains_key(id) => {
                    if !self.bug(HttpBug::DeletedSessionServed) {
                        self.sessions.remove(id);
                        // A stream held for the session's call ends with it, and so do its polled streams and
                        // its GET stream.
                        self.streams.remove(id);
                        self.listeners.remove(id);
                        let prefix = format!("{id}/");
                        self.parked.retain(|stream, _| !stream.starts_with(&prefix));
                    }
                    HttpReply::empty(200)
                }
                Some(_) => HttpReply::empty(404),
                None => HttpReply { headers: vec![("Allow".into(), "POST".into())], ..HttpReply::empty(405) },
            },
            _ => HttpReply { headers: vec![("Allow".into(), "POST, DELETE".into())], ..HttpReply::empty(405) },
        }
    }

    fn post(&mut self, request: &HttpRequest) -> HttpReply {
        let accept = request.values("accept").join(",").to_ascii_lowercase();
        if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
            return HttpReply::empty(406);
        }
        let json_body = request
            .single("content-type")
            .is_some_and(|t| t.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json"));
        if !json_body {
            return HttpReply::empty(415);
        }
        let Some(body) = &request.body else { return HttpReply::empty(413) };
        let version = request.single("mcp-protocol-version");
        let session = request.values("mcp-session-id");
        let modern = match request.values("mcp-protocol-version").as_slice() {
            [] => false,
            [one] if MODERN_VERSIONS.contains(one) => true,
            [one] if HANDSHAKE_VERSIONS.contains(one) => false,
            _ => session.is_empty(),
        };
        // A modern-only server reads every POST as a modern exchange, any session header ignored.
        if modern || self.modern_only {
            return self.modern(request, body, version);
        }
        let frame = Frame::parse(body);
        // An initialize without a session opens one; one sent on a session belongs to it (its connection answers
        // it), and one naming a session that is unknown or ended gets 404 like any request.
        if session.is_empty() && matches!(&frame, Frame::Request(r) if r.method == INITIALIZE) {
            let mut connection = self.connect(false);
            let replies = exchange(&mut connection, body);
            let succeeded = replies.first().is_some_and(|reply| {
                serde_json::from_slice::<Value>(reply).ok().is_some_and(|reply| reply.get("result").is_some())
            });
            let mut reply = self.replies(replies, false, &frame);
            // Only an initialize that succeeded opens a session.
            if succeeded {
                self.next_session += 1;
                let id = format!("calc-session-{}", self.next_session);
                self.sessions.insert(id.clone(), connection);
                reply.headers.push(("Mcp-Session-Id".into(), id));
            }
            return reply;
        }
        let id = match session.as_slice() {
            [] if self.bug(HttpBug::SessionMissing404) => return HttpReply::empty(404),
            [] => return HttpReply::empty(400),
            [one] => one.to_string(),
            _ => return HttpReply::empty(400),
        };
        if !self.sessions.contains_key(&id) {
            return HttpReply::empty(404);
        }
        if version.is_some_and(|v| !HANDSHAKE_VERSIONS.contains(&v)) && !self.bug(HttpBug::IgnoresVersionHeader)
            || request.values("mcp-protocol-version").len() > 1
        {
            return HttpReply::empty(400);
        }
        let Some(connection) = self.sessions.get_mut(&id) else { return HttpReply::empty(404) };
        let mut replies = exchange(connection, body);
        self.plant_stream_bugs(&id, &frame, &mut replies);
        match &frame {
            // The client's answer: what it completes goes to the stream that waits for it.
            Frame::Response(_) => {
                if let Some(held) = self.streams.get(&id) {
                    let done = replies.iter().any(|reply| answers(reply, &held.call));
                    for reply in replies {
                        let _ = held.sender.send(reply);
                    }
                    if done {
                        self.streams.remove(&id);
                    }
                }
                HttpReply::empty(202)
            }
            // A call whose reply waits for the client: its stream stays open.
            Frame::Request(request)
                if !replies.is_empty() && !replies.iter().any(|r| answers(r, &request.id.to_value())) =>
            {
                let (sender, receiver) = std::sync::mpsc::channel();
                for reply in replies {
                    let _ = sender.send(reply);
                }
                self.streams.insert(id, HeldStream { call: request.id.to_value(), sender });
                self.opened = Some(receiver);
                HttpReply {
                    headers: vec![("Content-Type".into(), "text/event-stream".into())],
                    ..HttpReply::empty(200)
                }
            }
            Frame::Request(_) if self.polling && !replies.is_empty() => self.park(&id, replies),
            _ => self.replies(replies, false, &frame),
        }
    }

    /// Opens the session's GET stream (basic/transports.mdx §Listening for Messages from the Server): an SSE stream
    /// that stays open until the session ends or the client closes it, carrying the server's own messages. It
    /// starts with a `ping` of the server's, a request unrelated to any of the client's.
    fn listen(&mut self, session: String) -> HttpReply {
        let (sender, receiver) = std::sync::mpsc::channel();
        self.next_ping += 1;
        let _ = sender.send(ping(&format!("calc-listen-{}", self.next_ping)));
        self.listeners.insert(session, sender);
        self.opened = Some(receiver);
        HttpReply { headers: vec![("Content-Type".into(), "text/event-stream".into())], ..HttpReply::empty(200) }
    }

    /// The planted bugs of a session's GET stream, while one is open: [`HttpBug::ResponseOnGetStream`] copies the
    /// responses there, [`HttpBug::BroadcastRequest`] puts a `ping` of the server's before a request's reply and on
    /// the GET stream alike.
    fn plant_stream_bugs(&mut self, session: &str, frame: &Frame, replies: &mut Vec<Vec<u8>>) {
        let Some(listener) = self.listeners.get(session) else { return };
        if self.bug(HttpBug::ResponseOnGetStream) {
            for reply in replies.iter().filter(|reply| !reply.windows(8).any(|w| w == b"\"method\"")) {
                let _ = listener.send(reply.clone());
            }
        }
        if self.bug(HttpBug::BroadcastRequest) && matches!(frame, Frame::Request(_)) {
            self.next_ping += 1;
            let ping = ping(&format!("calc-broadcast-{}", self.next_ping));
            let _ = listener.send(ping.clone());
            replies.insert(0, ping);
        }
    }

    /// Opens a polled stream for `replies` (basic/transports.mdx §Sending Messages to the Server 6: a priming event
    /// with an id and empty data, then `retry`, then the connection closes without the stream ending): the replies
    /// wait for the client's GET with `Last-Event-ID`. Event ids are `SESSION/N/K`, unique across the session's
    /// streams, and name their stream.
    fn park(&mut self, session: &str, replies: Vec<Vec<u8>>) -> HttpReply {
        self.next_stream += 1;
        let stream = format!("{session}/{}", self.next_stream);
        let events: Vec<(String, Vec<u8>)> =
            replies.into_iter().enumerate().map(|(k, reply)| (format!("{stream}/{}", k + 1), reply)).collect();
        self.parked.insert(stream.clone(), events);
        let body = format!("id: {stream}/0\ndata: \n\nretry: {POLLING_RETRY_MS}\n\n").into_bytes();
        HttpReply { status: 200, headers: vec![("Content-Type".into(), "text/event-stream".into())], body }
    }

    /// A GET with `Last-Event-ID`: the events of that id's stream after it, each with its id, and the stream ends
    /// (basic/transports.mdx §Resumability and Redelivery); 404 for an id of no stream parked on the session.
    fn resume(&mut self, request: &HttpRequest) -> HttpReply {
        let (Some(last), Some(session)) = (request.single("last-event-id"), request.single("mcp-session-id")) else {
            return HttpReply::empty(400);
        };
        let Some((stream, seen)) = last.rsplit_once('/') else { return HttpReply::empty(404) };
        let seen: usize = seen.parse().unwrap_or(usize::MAX);
        if !stream.starts_with(&format!("{session}/")) {
            return HttpReply::empty(404);
        }
        let Some(events) = self.parked.remove(stream) else { return HttpReply::empty(404) };
        let mut body = Vec::new();
        if self.bug(HttpBug::EventIdReused) {
            body.extend_from_slice(format!("id: {last}\ndata: \n\n").as_bytes());
        }
        let lost = if self.bug(HttpBug::PolledStreamLost) { events.len() } else { seen };
        for (id, message) in events.iter().skip(lost) {
            body.extend_from_slice(format!("id: {id}\nevent: message\ndata: ").as_bytes());
            body.extend_from_slice(message);
            body.extend_from_slice(b"\n\n");
        }
        HttpReply { status: 200, headers: vec![("Content-Type".into(), "text/event-stream".into())], body }
    }

    /// The stream the last [`HttpServer::handle`] opened, if any: its messages arrive on the receiver, and it ends
    /// when the sender is dropped.
    pub fn take_stream(&mut self) -> Option<Receiver<Vec<u8>>> {
        self.opened.take()
    }

    /// A modern single exchange: headers checked against the body, then a fresh calc connection.
    fn modern(&mut self, request: &HttpRequest, body: &[u8], version: Option<&str>) -> HttpReply {
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
        let surface = super::surface::CalcSurface { mutant: None, era: Era::Modern };
        let mut tools = surface.tools();
        if self.fixtures {
            tools.extend(super::fixtures::tools());
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

    /// The response carrying a connection's replies to one body.
    fn replies(&self, replies: Vec<Vec<u8>>, modern: bool, frame: &Frame) -> HttpReply {
        let answered = matches!(
            frame,
            Frame::Request(_) | Frame::Batch(_) | Frame::Invalid { .. } | Frame::NotJson { .. } | Frame::NotObject(_)
        );
        if replies.is_empty() {
            if self.bug(HttpBug::NotificationBody) && matches!(frame, Frame::Notification(_)) {
                return HttpReply::json(200, b"{}".to_vec());
            }
            return if answered && !matches!(frame, Frame::Batch(_)) {
                HttpReply::empty(400)
            } else {
                HttpReply::empty(202)
            };
        }
        let mut status = 200;
        if modern && !self.bug(HttpBug::ErrorStatus200) {
            let code = serde_json::from_slice::<Value>(&replies[0])
                .ok()
                .and_then(|reply| reply.get("error")?.get("code")?.as_i64());
            status = code.and_then(status_for_code).unwrap_or(200);
        }
        let mut reply = if replies.len() == 1 {
            HttpReply::json(status, replies.into_iter().next().unwrap_or_default())
        } else {
            let mut body = Vec::new();
            for line in replies {
                body.extend_from_slice(b"event: message\ndata: ");
                body.extend_from_slice(&line);
                body.extend_from_slice(b"\n\n");
            }
            HttpReply { status, headers: vec![("Content-Type".into(), "text/event-stream".into())], body }
        };
        if self.bug(HttpBug::HtmlContentType) {
            reply.headers = vec![("Content-Type".into(), "text/html".into())];
        }
        reply
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

/// True when `reply` is a response to the request `id`.
fn answers(reply: &[u8], id: &Value) -> bool {
    serde_json::from_slice::<Value>(reply).ok().is_some_and(|reply| {
        reply.get("id") == Some(id) && (reply.get("result").is_some() || reply.get("error").is_some())
    })
}

/// A `ping` request of the server's own with `id`.
fn ping(id: &str) -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }).to_string().into_bytes()
}

/// Writes a held stream's reply by hand: status and headers, then each message as an SSE event in a chunk of its
/// own, flushed at once (a client waits on each), then the last chunk when the stream's sender is dropped.
fn write_stream(mut writer: Box<dyn Write + Send>, headers: &[(String, String)], messages: Receiver<Vec<u8>>) {
    let mut head = String::from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nCache-Control: no-cache\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    if writer.write_all(head.as_bytes()).is_err() {
        return;
    }
    for message in messages {
        let event = [&b"event: message\ndata: "[..], &message, b"\n\n"].concat();
        if write_chunk(&mut writer, &event).is_err() {
            return;
        }
    }
    let _ = write_chunk(&mut writer, b"");
}

/// One chunk of a chunked body, flushed (an empty one ends the body).
fn write_chunk(writer: &mut dyn Write, bytes: &[u8]) -> std::io::Result<()> {
    write!(writer, "{:x}\r\n", bytes.len())?;
    writer.write_all(bytes)?;
    writer.write_all(b"\r\n")?;
    writer.flush()
}

/// Feeds one body to a calc connection and collects its replies.
fn exchange(connection: &mut CalcConnection, body: &[u8]) -> Vec<Vec<u8>> {
    let mut replies = Vec::new();
    connection.receive(body, &mut replies);
    connection.release(&mut replies);
    replies
}

/// Serves the reference server over HTTP on `address` (`HOST:PORT`; port 0 picks one) until the process ends;
/// `ready` gets the address it listens on; `state` is the server ([`HttpServer::new`]).
pub fn serve(address: &str, mut state: HttpServer, ready: impl FnOnce(std::net::SocketAddr)) -> Result<()> {
    let listener = std::net::TcpListener::bind(address).with_context(|| format!("cannot listen on {address}"))?;
    // Accepted connections inherit it: tiny_http writes a response's head and body apart, and with Nagle on, the
    // body waits for the client's delayed acknowledgement of the head (up to 40 ms on a kept-alive connection).
    let _ = nix::sys::socket::setsockopt(&listener, nix::sys::socket::sockopt::TcpNoDelay, &true);
    let server = tiny_http::Server::from_listener(listener, None)
        .map_err(|e| anyhow::anyhow!("cannot listen on {address}: {e}"))?;
    let local = server.server_addr().to_ip().context("not an IP listener")?;
    ready(local);
    for mut request in server.incoming_requests() {
        let mut body = Vec::new();
        let complete = request
            .as_reader()
            .take(MAX_REQUEST_BYTES as u64 + 1)
            .read_to_end(&mut body)
            .is_ok_and(|n| n <= MAX_REQUEST_BYTES);
        let seen = HttpRequest {
            method: request.method().as_str().to_string(),
            headers: request
                .headers()
                .iter()
                .map(|h| (h.field.as_str().to_string(), h.value.as_str().to_string()))
                .collect(),
            body: complete.then_some(body),
        };
        let reply = state.handle(&seen);
        if let Some(messages) = state.take_stream() {
            let writer = request.into_writer();
            std::thread::spawn(move || write_stream(writer, &reply.headers, messages));
            continue;
        }
        let mut response = tiny_http::Response::from_data(reply.body).with_status_code(reply.status);
        for (name, value) in reply.headers {
            if let Ok(header) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
                response = response.with_header(header);
            }
        }
        let _ = request.respond(response);
    }
    Ok(())
}

/// Starts [`serve`] on a thread at `127.0.0.1:0` and returns the endpoint's URL (for tests and benchmarks).
pub fn spawn(bug: Option<HttpBug>, modern_only: bool) -> Result<String> {
    spawn_server(HttpServer::new(bug, modern_only))
}

/// Starts [`serve`] of `state` on a thread at `127.0.0.1:0` and returns the endpoint's URL.
pub fn spawn_server(state: HttpServer) -> Result<String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let failed = serve("127.0.0.1:0", state, |address| {
            let _ = sender.send(Ok(address));
        });
        if let Err(error) = failed {
            let _ = sender.send(Err(error));
        }
    });
    let address = receiver.recv().context("the HTTP server thread ended")??;
    Ok(format!("http://{address}/mcp"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(server: &mut HttpServer, session: Option<&str>, body: Value) -> HttpReply {
        let mut headers = vec![
            ("Accept".to_string(), "application/json, text/event-stream".to_string()),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        if let Some(session) = session {
            headers.push(("Mcp-Session-Id".into(), session.into()));
            headers.push(("MCP-Protocol-Version".into(), "2025-11-25".into()));
        }
        server.handle(&HttpRequest { method: "POST".into(), headers, body: Some(body.to_string().into_bytes()) })
    }

    fn session(server: &mut HttpServer, capabilities: Value) -> String {
        let initialize = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":capabilities,"clientInfo":{"name":"t","version":"1"}}});
        let reply = post(server, None, initialize);
        let id = reply.headers.iter().find(|(name, _)| name == "Mcp-Session-Id").map(|(_, v)| v.clone());
        let id = id.expect("a session");
        post(server, Some(&id), json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        id
    }

    #[test]
    fn a_polled_stream_primes_then_delivers_its_events_once_on_the_get() {
        let mut server = HttpServer::new(None, false).with_polling();
        let id = session(&mut server, json!({}));
        let reply = post(&mut server, Some(&id), json!({"jsonrpc":"2.0","id":2,"method":"ping"}));
        let primed = String::from_utf8(reply.body).unwrap();
        assert_eq!(primed, format!("id: {id}/1/0\ndata: \n\nretry: {POLLING_RETRY_MS}\n\n"));
        let get = |server: &mut HttpServer, last: &str| {
            let headers = vec![
                ("Accept".to_string(), "text/event-stream".to_string()),
                ("Mcp-Session-Id".to_string(), id.clone()),
                ("Last-Event-ID".to_string(), last.to_string()),
            ];
            server.handle(&HttpRequest { method: "GET".into(), headers, body: None })
        };
        assert_eq!(get(&mut server, "calc-session-9/1/0").status, 404, "another session's stream");
        let resumed = get(&mut server, &format!("{id}/1/0"));
        let body = String::from_utf8(resumed.body).unwrap();
        assert_eq!(
            body,
            format!("id: {id}/1/1\nevent: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{}}}}\n\n")
        );
        assert_eq!(get(&mut server, &format!("{id}/1/0")).status, 404, "delivered once");
    }

    #[test]
    fn a_call_that_asks_the_client_holds_its_stream_until_the_answer_comes() {
        let mut server = HttpServer::new(None, false).with_fixtures();
        let id = session(&mut server, json!({"sampling":{}}));
        let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
            "params":{"name":"test_sampling","arguments":{"prompt":"hi"}}});
        let reply = post(&mut server, Some(&id), call);
        assert_eq!(reply.status, 200);
        let stream = server.take_stream().expect("a held stream");
        let asked: Value = serde_json::from_slice(&stream.recv().unwrap()).unwrap();
        assert_eq!(asked["method"], json!("sampling/createMessage"));
        assert!(stream.try_recv().is_err(), "the result waits for the answer");
        let answer = json!({"jsonrpc":"2.0","id":asked["id"],"result":{"role":"assistant",
            "content":{"type":"text","text":"Paris"},"model":"m"}});
        assert_eq!(post(&mut server, Some(&id), answer).status, 202);
        let result: Value = serde_json::from_slice(&stream.recv().unwrap()).unwrap();
        assert_eq!(result["id"], json!(2));
        assert_eq!(result["result"]["content"][0]["text"], json!("LLM response: Paris"));
        assert!(stream.recv().is_err(), "the stream ends with the call's reply");
    }

    #[test]
    fn a_call_answered_at_once_opens_no_stream() {
        let mut server = HttpServer::new(None, false).with_fixtures();
        let id = session(&mut server, json!({}));
        let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling"}});
        let reply = post(&mut server, Some(&id), call);
        assert!(server.take_stream().is_none(), "sampling was not declared: nothing is asked");
        let reply: Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(reply["id"], json!(2));
    }

    /// A 2026-07-28 POST of a request with `id`, `method` and `params`, its routing headers set.
    fn modern_post(id: Value, method: &str, params: Value) -> HttpRequest {
        HttpRequest {
            method: "POST".into(),
            headers: vec![
                ("Accept".into(), "application/json, text/event-stream".into()),
                ("Content-Type".into(), "application/json".into()),
                ("MCP-Protocol-Version".into(), "2026-07-28".into()),
                ("Mcp-Method".into(), method.into()),
            ],
            body: Some(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string().into_bytes()),
        }
    }

    #[test]
    fn a_modern_post_is_judged_as_2026_07_28() {
        let mut server = HttpServer::new(None, false);
        let modern = |method: &str, params: Value| modern_post(json!(5), method, params);
        let envelope = json!({"_meta": envelope::envelope("2026-07-28")});
        let initialize = server.handle(&modern(INITIALIZE, envelope));
        assert_eq!(initialize.status, 404);
        let body: Value = serde_json::from_slice(&initialize.body).unwrap();
        assert_eq!(body["error"]["code"], json!(METHOD_NOT_FOUND));
        let bare = server.handle(&modern("server/discover", json!({})));
        assert_eq!(bare.status, 400);
        let body: Value = serde_json::from_slice(&bare.body).unwrap();
        assert_eq!(body["error"]["code"], json!(crate::protocol::codes::INVALID_PARAMS));
    }

    #[test]
    fn a_listen_post_gets_the_ack_then_the_graceful_close() {
        let mut server = HttpServer::new(None, true);
        // The envelope declares no client capabilities.
        let params = json!({"_meta": envelope::envelope("2026-07-28"), "notifications": {"toolsListChanged": true}});
        let request = modern_post(json!("L"), LISTEN, params);
        let reply = server.handle(&request);
        let body = String::from_utf8(reply.body).unwrap();
        let events: Vec<Value> =
            body.lines().filter_map(|l| l.strip_prefix("data: ")).map(|d| serde_json::from_str(d).unwrap()).collect();
        assert_eq!(events.len(), 2, "{body}");
        assert_eq!(events[0]["method"], json!("notifications/subscriptions/acknowledged"));
        assert_eq!(events[1]["id"], json!("L"));
        assert_eq!(events[1]["result"]["resultType"], json!("complete"));
    }
}
