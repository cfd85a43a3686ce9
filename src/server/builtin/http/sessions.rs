//! The legacy sessions of the handshake era: an `initialize` POST without a session opens one on a calc connection
//! of its own, and each later POST naming it is answered on that connection.

use super::streams::answers;
use super::{HttpBug, HttpReply, HttpRequest, HttpServer, exchange};
use crate::protocol::Frame;
use crate::protocol::era::HANDSHAKE_VERSIONS;
use crate::protocol::methods::INITIALIZE;
use serde_json::Value;

impl HttpServer {
    /// A POST that is not a modern exchange: an `initialize` that opens a session, or a message of a session.
    pub(super) fn legacy(&mut self, request: &HttpRequest, body: &[u8], version: Option<&str>) -> HttpReply {
        let session = request.values("mcp-session-id");
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
                self.deliver_answer(&id, replies);
                HttpReply::empty(202)
            }
            // A call whose reply waits for the client: its stream stays open.
            Frame::Request(request)
                if !replies.is_empty() && !replies.iter().any(|r| answers(r, &request.id.to_value())) =>
            {
                self.hold(id, request.id.to_value(), replies)
            }
            Frame::Request(_) if self.polling && !replies.is_empty() => self.park(&id, replies),
            _ => self.replies(replies, false, &frame),
        }
    }
}
