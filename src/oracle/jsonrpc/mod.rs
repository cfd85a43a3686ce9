//! The JSON-RPC layer, true of any JSON-RPC 2.0 server: what each server line is, which request each response
//! answers, and what was left unanswered, answered twice, or answered when it should not have been.
//!
//! This file holds the layer's entry, [`check`], and the state it follows the conversation with
//! ([`Connection`]); the rest, by idea: [`read`] (a line the server wrote), [`client_line`] (what a line the client
//! sent shows beyond its frame), [`sent`] (taking in what the client sent), [`matching`] (which line each reply
//! answers), [`due`] (deadlines, and what never came), [`ids`] (how ids compare).

#[cfg(test)]
mod ambiguity_tests;
mod client_line;
mod due;
mod ids;
mod matching;
mod read;
mod sent;
#[cfg(test)]
mod tests;

pub(super) use client_line::{Ambiguous, Oddities, ambiguous, has_extra_members, lenient_id, top_level_id};
pub(super) use read::read_line;

use super::{Findings, Read, ServerLine};
use crate::protocol::envelope::acknowledged_subscription;
use crate::protocol::{IdField, RequestId};
use crate::transcript::{Ending, Event, Transcript};
use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

/// A valid request the client sent (with an id within ±(2^53 − 1), or a string id).
struct Sent {
    /// Its event index.
    event: usize,
    /// Its id.
    id: RequestId,
    /// Whether a response carrying its id has come.
    answered: bool,
    /// Whether it passed a deadline (a sync point, or the end of a closed connection) unanswered: it is missing
    /// unless its reply comes later.
    due: bool,
    /// False for requests with array params: JSON-RPC-valid but not MCP-valid, so silence is acceptable.
    needs_reply: bool,
    /// The first of the requests that shared this id while open (the client reused it), or its own index.
    group: usize,
    /// The client cancelled it while it was open, or it is a `subscriptions/listen` whose stream the server
    /// acknowledged (the stream stays open until the client ends it or the transport closes): a reply, or none, is
    /// fine.
    cancelled: bool,
    /// It is a `subscriptions/listen` request.
    listen: bool,
    /// A pending line that shared its id while both were open (the client reused it): a reply to either is the
    /// answer.
    twin_line: Option<usize>,
    /// Its id was on another line still owed a reply (by count of lines and replies with the id) when it was sent,
    /// or a later line took it while it was: which reply answers which is not known.
    unsure: bool,
}

/// Why a client line is not a plain request, and so what its reply may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// Not a valid JSON-RPC message: never executed; strict JSON-RPC refuses it with -32700/-32600. Also a blank
    /// line and a response the client sends for no request of the server's: nothing is owed to either, and an
    /// id-less -32700/-32600 (or one under the stray response's id) may answer it.
    Malformed,
    /// A request valid but for `"params": null`: a result is JSONRPC-NULL-PARAMS, not MALFORMED-SERVED.
    NullParams,
    /// A line parsers legitimately differ on ([`Ambiguous`]): silence, any error, or a result under its id.
    Ambiguous,
    /// A request JSON-RPC allows and MCP does not: an id that is null or a number with a fraction (JSON-RPC 2.0 §4
    /// discourages them, MCP forbids them to the sender). Silence, an id-less -32700/-32600, or any reply under its
    /// id exactly as sent (JSON-RPC 2.0 §5) answers it.
    IdMcpForbids,
    /// A valid request whose integer id is beyond ±(2^53 − 1): its exact id, or an id-less -32700/-32600, answers
    /// it; silence or a rounded id is [`BIG_ID`].
    BigId,
    /// A valid request with members beyond `jsonrpc`, `id`, `method` and `params`, which a strict schema may
    /// refuse: any reply under its id, or an id-less -32700/-32600, answers it; silence is [`EXTRA_MEMBER`].
    ExtraMember,
}

/// A client line that is not a plain request and may still get its reply.
struct Pending {
    /// Its event index.
    event: usize,
    /// The ids a reply to it may carry (for a malformed line, the one a lenient reader finds).
    ids: Vec<RequestId>,
    /// An invalid id a reply to it may carry (a whole-valued id as sent).
    literal: Option<Value>,
    /// Whether strict JSON-RPC asks for a reply (not to a malformed *response* from the client, nor to most
    /// ambiguous lines).
    wants_reply: bool,
    /// What is wrong with it.
    fault: Fault,
    /// Whether a reply explained it.
    explained: bool,
    /// Whether it passed a deadline unexplained.
    due: bool,
    /// The client cancelled it while it was waiting, or it is a `subscriptions/listen` whose stream the server
    /// acknowledged.
    cancelled: bool,
    /// It is a `subscriptions/listen` request (one whose id is beyond 2^53, or with extra members).
    listen: bool,
    /// It shared an id with another open line (the client reused the id): undefined behaviour, so what it gets is
    /// not judged.
    reused: bool,
}

/// An id-less error whose line is settled at the end ([`Connection::contested`]).
struct Contested {
    /// The error's event.
    error: usize,
    /// A notification sent before it in its stretch (or window) that it may answer.
    notification: Option<usize>,
    /// The slots of the requests of its stretch still open when it came.
    requests: Vec<usize>,
    /// The pending lines with an id of their own still unexplained when it came.
    lines: Vec<usize>,
}

/// The connection as the JSON-RPC layer follows it.
///
/// How replies are matched: a reply with an id answers the open request with that id, else the pending line with
/// that id (a malformed or ambiguous line, or a request whose id is beyond 2^53), whenever it comes (a late reply
/// is still its request's). An id-less -32700/-32600 answers a pending line without an id when the current window
/// (since the last deadline) has one; else it is a *claim* on some pending line with an id, sent before it, left
/// open until the end: only when every such line got its own reply is it a finding. Windows matter only for an
/// id-less reply: a notification in the current window takes it before a line of an earlier window, unless the
/// server has not read past that line yet (nothing sent after it was answered: a server still starting).
struct Connection<'t> {
    transcript: &'t Transcript,
    findings: &'t mut Findings,
    /// The pending lines that are requests nested past the parser's limit (see [`Matched::owed`]).
    deep: Vec<usize>,
    requests: Vec<Sent>,
    by_id: HashMap<RequestId, Vec<usize>>,
    /// Requests before this index have passed a deadline.
    due_requests: usize,
    /// Malformed, ambiguous and big-id lines in the order sent, explained or not.
    pending: Vec<Pending>,
    /// The unexplained pending lines with each id.
    pending_by_id: HashMap<RequestId, Vec<usize>>,
    /// How many pending lines are unexplained.
    unexplained: usize,
    /// Pending lines before this index were sent before the last deadline.
    window: usize,
    /// Id-less -32700/-32600 errors (their event indices), each a claim on some pending line sent before it.
    claims: Vec<usize>,
    /// The ids under which a pending line got its reply, with the line's event index: a second reply is a duplicate.
    explained: HashMap<RequestId, usize>,
    /// The notifications sent since the last sync point that no reply was put on yet, oldest first: a reply may
    /// answer the latest of the current stretch, and an id-less error that answers no line any of them, though
    /// other replies came between ([`Connection::take_notification`]).
    notifications: std::collections::VecDeque<usize>,
    /// The event of the last sync point or received line: the lines sent after it are the current stretch.
    stretch: usize,
    /// The ids `notifications/cancelled` named in the current stretch.
    cancelled_ahead: Vec<RequestId>,
    /// Whether a `subscriptions/listen` request was sent: only then are the server's notifications read for an
    /// acknowledgement.
    listens: bool,
    /// The ids of the requests the server sent so far: a response the client sends under one of them answers it;
    /// under any other id (or none) it is a stray line the server may refuse.
    asked: Vec<RequestId>,
    /// Id-less errors that answer a notification, a request of their stretch or a line with an id of its own,
    /// whichever ([`Contested`]). Settled at the end: the error is a request's or a line's when one of them never
    /// got a reply with its id, else the notification's.
    contested: Vec<Contested>,
    /// The latest sent line that a reply with its id answered: the server has read at least this far.
    read_past: Option<usize>,
    /// For each event index, the received line that answers it when it is a request answered by an exact id.
    answers: Vec<Option<usize>>,
    /// For each id, how many lines sent with it are not yet matched by a reply carrying it.
    owed: HashMap<RequestId, usize>,
    /// For each id, how many of its requests (in `by_id`) are answered before the first open one: the search for
    /// an open request starts there, so ids used again and again cost no more than fresh ones.
    open_from: HashMap<RequestId, usize>,
    /// For each id, how many of its requests are already marked unsure.
    unsure_from: HashMap<RequestId, usize>,
    /// For each request that leads a group (by its slot), how many requests the group holds.
    group_size: Vec<usize>,
}

/// What the JSON-RPC layer learned that the other layers use.
pub(super) struct Matched {
    /// For each event, the event of the request a reply answers.
    pub answers: Vec<Option<usize>>,
    /// True when a request that needs a reply (or one nested past the parser's limit) had none by the end, whether
    /// or not it was due.
    pub owed: bool,
    /// The latest sent line a reply with its id answered: the server had read at least this far.
    pub read_past: Option<usize>,
}

/// Follows the conversation: matches responses to requests, and reports wrong, missing, duplicate and unwanted
/// replies. Returns what the other layers use of it ([`Matched`]).
pub(super) fn check(transcript: &Transcript, reads: &[Read], findings: &mut Findings) -> Matched {
    let mut connection = Connection {
        transcript,
        findings,
        deep: Vec::new(),
        requests: Vec::new(),
        by_id: HashMap::default(),
        due_requests: 0,
        pending: Vec::new(),
        pending_by_id: HashMap::default(),
        owed: HashMap::default(),
        open_from: HashMap::default(),
        unsure_from: HashMap::default(),
        group_size: Vec::new(),
        unexplained: 0,
        window: 0,
        claims: Vec::new(),
        explained: HashMap::default(),
        notifications: std::collections::VecDeque::new(),
        stretch: 0,
        cancelled_ahead: Vec::new(),
        listens: false,
        asked: Vec::new(),
        contested: Vec::new(),
        read_past: None,
        answers: vec![None; reads.len()],
    };
    let closed = transcript.ending == Ending::Closed;
    let last_sent = transcript.events.iter().rposition(|e| matches!(e, Event::Sent(_)));
    for (index, read) in reads.iter().enumerate() {
        match read {
            Read::Sent(sent, id) => connection.sent(index, sent, id.as_ref()),
            Read::Received(reading) => {
                match &reading.line {
                    Some(ServerLine::Reply { id, outcome }) => connection.reply(index, id, outcome.as_ref()),
                    Some(ServerLine::Outgoing { id: IdField::Valid(id) }) => connection.asked.push(id.clone()),
                    Some(ServerLine::Outgoing { id: IdField::Absent }) if connection.listens => {
                        if let Event::Received { line, .. } = &transcript.events[index]
                            && let Some(subscription) = acknowledged_subscription(line)
                        {
                            connection.stream_opened(&subscription);
                        }
                    }
                    _ => {}
                }
                connection.stretch = index;
                connection.cancelled_ahead.clear();
            }
            Read::Sync => {
                // After an early exit or a hang, the trailing sync points wait on a server that is gone: those
                // requests are the ending's finding, not this one's.
                if closed || last_sent.is_some_and(|last| index < last) {
                    connection.deadline();
                }
                connection.notifications.clear();
                connection.stretch = index;
                connection.cancelled_ahead.clear();
            }
            Read::Aside => {}
        }
    }
    if closed {
        connection.deadline();
    }
    // A server that hung after it answered a later line by id had read past the requests it left unanswered before
    // that line: it dropped them (server-everything, kept alive by a timer, drops a 2025-03-26 batch). Their silence
    // is judged, and they are not what the hang owes.
    let read_past = connection.read_past.filter(|_| matches!(transcript.ending, Ending::Hung { .. }));
    if let Some(past) = read_past {
        for sent in connection.requests.iter_mut().filter(|sent| sent.event < past) {
            sent.due |= !sent.answered;
        }
    }
    connection.end();
    let dropped = |event: usize| read_past.is_some_and(|past| event < past);
    let owed = connection
        .requests
        .iter()
        .any(|sent| sent.needs_reply && !sent.answered && !sent.cancelled && !dropped(sent.event))
        || connection.deep.iter().any(|&line| !connection.pending[line].explained);
    Matched { answers: connection.answers, owed, read_past: connection.read_past }
}

/// The connection's indexes: open requests and unexplained pending lines by id.
impl Connection<'_> {
    /// The server acknowledged the listen stream `subscription`: the open `subscriptions/listen` request with that id
    /// owes no response while the stream is open (basic/patterns/subscriptions.mdx §Cancellation: a stream ends
    /// when the client cancels it or the transport closes, with no response; the graceful one is a SHOULD).
    fn stream_opened(&mut self, subscription: &RequestId) {
        if let Some(slot) = self.open(subscription).filter(|&slot| self.requests[slot].listen) {
            self.requests[slot].cancelled = true;
        }
        if let Some(line) = self.unexplained_pending(subscription).filter(|&line| self.pending[line].listen) {
            self.pending[line].cancelled = true;
        }
    }

    /// The first request with this id that has no response yet.
    fn open(&self, id: &RequestId) -> Option<usize> {
        let from = self.open_from.get(id).copied().unwrap_or(0);
        self.by_id.get(id)?[from..].iter().copied().find(|&slot| !self.requests[slot].answered)
    }

    /// Marks a request answered, and moves the start of the search for its id's open request past the answered
    /// ones.
    fn answer(&mut self, slot: usize) {
        self.requests[slot].answered = true;
        let id = &self.requests[slot].id;
        let Some(slots) = self.by_id.get(id) else { return };
        let from = self.open_from.entry(id.clone()).or_default();
        while slots.get(*from).is_some_and(|&s| self.requests[s].answered) {
            *from += 1;
        }
    }

    /// Marks every request with this id unsure (each is marked once, however often the id comes back).
    fn mark_unsure(&mut self, id: &RequestId) {
        let Some(slots) = self.by_id.get(id) else { return };
        let from = self.unsure_from.entry(id.clone()).or_default();
        for &slot in &slots[*from..] {
            self.requests[slot].unsure = true;
        }
        *from = slots.len();
    }

    /// The oldest unexplained pending line with this id.
    fn unexplained_pending(&self, id: &RequestId) -> Option<usize> {
        self.pending_by_id.get(id)?.first().copied()
    }

    /// A finding at `event`.
    fn add(&mut self, rule: &'static str, event: usize, detail: String) {
        self.findings.add(rule, Some(event), detail);
    }
}
