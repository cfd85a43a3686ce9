//! The reference server over Streamable HTTP (`serve --http ADDR`), and its planted HTTP bugs ([`HttpBug`]).
//!
//! Routing follows the Python SDK: a POST whose `MCP-Protocol-Version` names a modern version (or names no
//! handshake version and carries no session) is a modern single exchange on a fresh calc connection, checked
//! against its headers first; any other POST belongs to a legacy session opened by `initialize`. A session's GET
//! opens its stream of messages sent unasked (with `Last-Event-ID`, resumes a polled stream); a GET without a
//! session gets 405; DELETE ends a session; a foreign `Origin` gets 403. Modern-only (`serve --http-era
//! modern`, or one of the bugs [`HttpBug::modern_only`]), it serves 2026-07-28 alone: every POST is a modern single
//! exchange, GET and DELETE get 405, sessions are neither minted nor read. The request handling is the pure
//! function [`HttpServer::handle`]; [`serve`] puts it behind `tiny_http`.
//!
//! This file holds the server's state and its routing by method; the rest is one idea a file: the bug catalogue
//! (`bugs.rs`), the modern single exchange (`modern.rs`), the legacy sessions (`sessions.rs`), the SSE streams the
//! server holds or parks (`streams.rs`), and the socket (`tcp.rs`).

mod bugs;
mod modern;
mod sessions;
mod streams;
mod tcp;
#[cfg(test)]
mod tests;

pub use bugs::HttpBug;
pub use tcp::{MAX_REQUEST_BYTES, serve, spawn, spawn_server};

use super::reference::{Calc, CalcConnection};
use crate::protocol::Frame;
use crate::protocol::codes::METHOD_NOT_FOUND;
use crate::protocol::era::{HANDSHAKE_VERSIONS, MODERN_VERSIONS};
use crate::protocol::http::foreign_origin;
use crate::server::{InProcessServer, ServerConnection};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender};
use streams::HeldStream;

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
    /// The legacy sessions by id, each a calc connection.
    sessions: HashMap<String, CalcConnection>,
    /// How many session ids were minted (they count up).
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

    /// A POST: the headers every POST needs, then a modern single exchange or a legacy session's message.
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
        self.legacy(request, body, version)
    }

    /// The stream the last [`HttpServer::handle`] opened, if any: its messages arrive on the receiver, and it ends
    /// when the sender is dropped.
    pub fn take_stream(&mut self) -> Option<Receiver<Vec<u8>>> {
        self.opened.take()
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

/// Feeds one body to a calc connection and collects its replies.
fn exchange(connection: &mut CalcConnection, body: &[u8]) -> Vec<Vec<u8>> {
    let mut replies = Vec::new();
    connection.receive(body, &mut replies);
    connection.release(&mut replies);
    replies
}
