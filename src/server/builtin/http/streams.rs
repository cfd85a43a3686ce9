//! The SSE streams a session's server keeps beyond one reply: a call's stream held open until the client answers
//! the server's request, the client's GET stream for the server's own messages, and the polled streams whose events
//! wait for a GET with `Last-Event-ID`.

use super::{HttpBug, HttpReply, HttpRequest, HttpServer};
use crate::protocol::Frame;
use serde_json::{Value, json};
use std::sync::mpsc::Sender;

/// An SSE stream held open for a tool call: the call's id, and where its later messages go.
pub(super) struct HeldStream {
    call: Value,
    sender: Sender<Vec<u8>>,
}

/// The `retry` a polled stream asks for, in milliseconds.
pub(super) const POLLING_RETRY_MS: u64 = 10;

impl HttpServer {
    /// Holds the stream of the session's call `call` open: the replies so far go on it at once (the server's
    /// request to the client among them), the call's own reply when the client's answer arrives.
    pub(super) fn hold(&mut self, session: String, call: Value, replies: Vec<Vec<u8>>) -> HttpReply {
        let (sender, receiver) = std::sync::mpsc::channel();
        for reply in replies {
            let _ = sender.send(reply);
        }
        self.streams.insert(session, HeldStream { call, sender });
        self.opened = Some(receiver);
        HttpReply { headers: vec![("Content-Type".into(), "text/event-stream".into())], ..HttpReply::empty(200) }
    }

    /// The client's answer on the session: what it completes goes to the stream held for the call that waits for
    /// it, which ends once the call is answered.
    pub(super) fn deliver_answer(&mut self, session: &str, replies: Vec<Vec<u8>>) {
        if let Some(held) = self.streams.get(session) {
            let done = replies.iter().any(|reply| answers(reply, &held.call));
            for reply in replies {
                let _ = held.sender.send(reply);
            }
            if done {
                self.streams.remove(session);
            }
        }
    }

    /// Opens the session's GET stream (basic/transports.mdx §Listening for Messages from the Server): an SSE stream
    /// that stays open until the session ends or the client closes it, carrying the server's own messages. It
    /// starts with a `ping` of the server's, a request unrelated to any of the client's.
    pub(super) fn listen(&mut self, session: String) -> HttpReply {
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
    pub(super) fn plant_stream_bugs(&mut self, session: &str, frame: &Frame, replies: &mut Vec<Vec<u8>>) {
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
    pub(super) fn park(&mut self, session: &str, replies: Vec<Vec<u8>>) -> HttpReply {
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
    pub(super) fn resume(&mut self, request: &HttpRequest) -> HttpReply {
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
}

/// True when `reply` is a response to the request `id`.
pub(super) fn answers(reply: &[u8], id: &Value) -> bool {
    serde_json::from_slice::<Value>(reply).ok().is_some_and(|reply| {
        reply.get("id") == Some(id) && (reply.get("result").is_some() || reply.get("error").is_some())
    })
}

/// A `ping` request of the server's own with `id`.
fn ping(id: &str) -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }).to_string().into_bytes()
}
