//! The JSON-RPC layer, true of any JSON-RPC 2.0 server: what each server line is, which request each response
//! answers, and what was left unanswered, answered twice, or answered when it should not have been.

use super::rules::{
    BIG_ID, DUPLICATE_RESPONSE, ERROR_SHAPE, EXTRA_MEMBER, FRAMING, ID_ECHO, MALFORMED_REPLY, MALFORMED_SERVED,
    MESSAGE_SHAPE, NOTIFICATION_REPLY, NULL_ID, NULL_PARAMS, RESPONSE_MISSING, RESPONSE_SHAPE, VERSION,
};
use super::{Findings, Read, SentLine, ServerLine, ServerReading, shown};
use crate::protocol::codes::{INVALID_REQUEST, PARSE_ERROR};
use crate::protocol::id::is_integer_literal;
use crate::protocol::json::{self, Noted, is_safe_integer, whole_integer};
use crate::protocol::message::Problem;
use crate::protocol::methods::CANCELLED;
use crate::protocol::{ErrorObject, Frame, IdField, Outcome, RequestId};
use crate::transcript::{Ending, Event, Transcript, show_bytes};
use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

/// Reads one line the server wrote: what it is (`None` when it is not a JSON object at all), and the framing,
/// version and shape findings it calls for.
pub(super) fn read_line(line: &[u8], truncated: bool) -> ServerReading {
    let mut findings = Vec::new();
    let line = read_object(line, truncated, &mut findings);
    ServerReading { line, findings }
}

/// [`read_line`]'s reading, with its findings (rule ids and details) pushed to `findings`.
fn read_object(line: &[u8], truncated: bool, findings: &mut Vec<(&'static str, String)>) -> Option<ServerLine> {
    let shown = || show_bytes(line, 120);
    if truncated {
        let detail =
            format!("the line was longer than the harness keeps and was cut at {} bytes: {}", line.len(), shown());
        findings.push((FRAMING, detail));
        return None;
    }
    if let Err(e) = std::str::from_utf8(line) {
        findings.push((FRAMING, format!("not valid UTF-8 (at byte {}): {}", e.valid_up_to(), shown())));
        return None;
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        findings.push((FRAMING, format!("a blank line ({:?})", shown())));
        return None;
    }
    let mut object = match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(object)) => object,
        Ok(other) => {
            findings.push((FRAMING, format!("{} is not a JSON object: {}", json_type(&other), shown())));
            return None;
        }
        Err(e) => {
            findings.push((FRAMING, format!("not one JSON value ({e}): {}", shown())));
            return None;
        }
    };
    match object.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        None => findings.push((VERSION, format!("no jsonrpc member: {}", shown()))),
        Some(other) => findings.push((VERSION, format!("jsonrpc is {other}, not \"2.0\": {}", shown()))),
    }
    let id = IdField::of(object.get("id"));
    if let Some(method) = object.get("method") {
        let mut problems = Vec::new();
        if !method.is_string() {
            problems.push(format!("method is {}", json_type(method)));
        }
        if object.get("params").is_some_and(|p| !p.is_object() && !p.is_array()) {
            problems.push("params is neither an object nor an array".to_string());
        }
        if matches!(id, IdField::Null | IdField::Invalid(_)) {
            problems.push("the id is neither a string nor an integer".to_string());
        }
        if !problems.is_empty() {
            findings.push((MESSAGE_SHAPE, format!("{}: {}", problems.join("; "), shown())));
        }
        return Some(ServerLine::Outgoing { id });
    }
    let outcome = match (object.remove("result"), object.remove("error")) {
        (Some(_), Some(_)) => {
            findings.push((RESPONSE_SHAPE, format!("both result and error: {}", shown())));
            None
        }
        (None, None) => {
            findings.push((RESPONSE_SHAPE, format!("neither method, result nor error: {}", shown())));
            None
        }
        (Some(result @ Value::Object(_)), None) => Some(Outcome::Result(result)),
        (Some(result), None) => {
            findings
                .push((RESPONSE_SHAPE, format!("the result is {}, not an object: {}", json_type(&result), shown())));
            None
        }
        (None, Some(error)) => match error_object(&error) {
            Ok(error) => Some(Outcome::Error(error)),
            Err(problems) => {
                findings.push((ERROR_SHAPE, format!("{}: {}", problems.join("; "), shown())));
                None
            }
        },
    };
    Some(ServerLine::Reply { id, outcome })
}

/// The error object, or every way it is malformed.
fn error_object(error: &Value) -> Result<ErrorObject, Vec<String>> {
    let Value::Object(error) = error else {
        return Err(vec![format!("error is {}, not an object", json_type(error))]);
    };
    let mut problems = Vec::new();
    let code = match error.get("code") {
        None => {
            problems.push("error.code is missing".to_string());
            None
        }
        Some(Value::Number(n)) if !is_integer_literal(&n.to_string()) => {
            problems.push(format!("error.code {n} is not an integer literal"));
            None
        }
        Some(Value::Number(n)) => {
            let code = n.as_i64();
            if code.is_none() {
                problems.push(format!("error.code {n} does not fit in 64 bits"));
            }
            code
        }
        Some(other) => {
            problems.push(format!("error.code is {}", json_type(other)));
            None
        }
    };
    let message = match error.get("message") {
        Some(Value::String(message)) => Some(message.clone()),
        None => {
            problems.push("error.message is missing".to_string());
            None
        }
        Some(other) => {
            problems.push(format!("error.message is {}", json_type(other)));
            None
        }
    };
    match (code, message) {
        (Some(code), Some(message)) => Ok(ErrorObject { code, message, data: error.get("data").cloned() }),
        _ => Err(problems),
    }
}

/// A JSON value's type, with an article, for details.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A client line on which conforming parsers legitimately differ: a request whose id is a whole-valued literal
/// that is not an integer literal (`1.0`, `1e+3`), a number literal beyond common parser limits (RFC 8259 §6), an
/// object with a duplicate member name (RFC 8259 §4), or a line that only a lenient reader parses (a byte-order
/// mark, a lone surrogate escape, bytes that are not UTF-8 inside a string: RFC 8259 §8.1, §8.2, §9). Silence is an
/// acceptable answer to it, and so is any error; a result only under its id.
pub(super) struct Ambiguous {
    /// The ids a reply to the line may carry: the id as read (last member wins), and for a whole-valued id its
    /// integer value.
    ids: Vec<RequestId>,
    /// A whole-valued id as sent (`1.0`), which a reply may also echo.
    literal: Option<Value>,
    /// A number literal is beyond the limits: to a strict JSON-RPC server that cannot parse it, the line is
    /// unparseable and owes -32700.
    beyond_limits: bool,
}

/// What a client line's JSON object shows before it is classified: the facts [`ambiguous`] reads off it.
pub(super) struct Oddities {
    /// A number literal somewhere in it is beyond common parser limits.
    beyond_limits: bool,
    /// Some object in it repeats a member name.
    duplicate_keys: bool,
    /// Only a lenient reader parses the line ([`json::lenient_text`]).
    lenient: bool,
    /// The `id` member, when it is a number (a whole-valued one like `1.0` makes the line ambiguous).
    id_number: Option<serde_json::Number>,
}

impl Oddities {
    /// Reads the facts off a parsed line (`lenient` when only a lenient reader parsed it); `None` when it is not an
    /// object (batches and non-objects stay malformed, whatever they hold).
    pub(super) fn of(noted: &Noted, lenient: bool) -> Option<Oddities> {
        let Value::Object(object) = &noted.value else { return None };
        Some(Oddities {
            beyond_limits: noted.beyond_limits,
            duplicate_keys: noted.duplicate_keys,
            lenient,
            id_number: match object.get("id") {
                Some(Value::Number(n)) => Some(n.clone()),
                _ => None,
            },
        })
    }
}

/// What makes a client line ambiguous, given what its object showed and how it was classified, or `None` for a
/// line every conforming parser reads the same way. A line only a lenient reader parses is ambiguous when that
/// reader finds a request or a notification in it; an invalid object stays malformed under either reading.
pub(super) fn ambiguous(oddities: Oddities, frame: &Frame) -> Option<Ambiguous> {
    let Oddities { beyond_limits, duplicate_keys, lenient, id_number } = oddities;
    let mut ambiguous = beyond_limits || duplicate_keys;
    let mut ids = Vec::new();
    let mut literal = None;
    match frame {
        Frame::Request(request) => {
            ambiguous |= lenient;
            ids.push(request.id.clone());
        }
        Frame::Notification(_) => ambiguous |= lenient,
        // A whole-valued id (`1.0`) is the integer to some parsers, whatever else is wrong with the line.
        Frame::Invalid { id: None, .. } => {
            if let Some(n) = id_number
                && let Some(whole) = whole_integer(&n.to_string())
            {
                ambiguous = true;
                ids.push(RequestId::Integer(whole));
                literal = Some(Value::Number(n));
            }
        }
        Frame::Invalid { id: Some(id), .. } => ids.push(id.clone()),
        _ => {}
    }
    ambiguous.then_some(Ambiguous { ids, literal, beyond_limits })
}

/// True for an integer id beyond ±(2^53 − 1): the interop tier of ids ([`BIG_ID`]).
fn is_big(id: &RequestId) -> bool {
    matches!(id, RequestId::Integer(digits) if !is_safe_integer(digits))
}

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
    /// The client cancelled it while it was open: a reply, or none, is fine.
    cancelled: bool,
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
    /// Not a valid JSON-RPC message: never executed; strict JSON-RPC refuses it with -32700/-32600.
    Malformed,
    /// A request valid but for `"params": null`: a result is JSONRPC-NULL-PARAMS, not MALFORMED-SERVED.
    NullParams,
    /// A line parsers legitimately differ on ([`Ambiguous`]): silence, any error, or a result under its id.
    Ambiguous,
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
    /// The client cancelled it while it was waiting.
    cancelled: bool,
    /// It shared an id with another open line (the client reused the id): undefined behaviour, so what it gets is
    /// not judged.
    reused: bool,
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
    /// A notification sent since the last sync point or received line.
    notification: Option<usize>,
    /// The event of the last sync point or received line: the lines sent after it are the current stretch.
    stretch: usize,
    /// The ids `notifications/cancelled` named in the current stretch.
    cancelled_ahead: Vec<RequestId>,
    /// Id-less errors that answer a notification or a request of their stretch, whichever: (the error's event, the
    /// notification's event, the slots of the requests still open). Settled at the end: the error is a request's
    /// when one of them never got a response with its id, else the notification's.
    contested: Vec<(usize, usize, Vec<usize>)>,
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

/// Follows the conversation: matches responses to requests, and reports wrong, missing, duplicate and unwanted
/// replies. Returns, for each event index, the received line that answers the request sent there.
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
        notification: None,
        stretch: 0,
        cancelled_ahead: Vec::new(),
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
                if let Some(ServerLine::Reply { id, outcome }) = &reading.line {
                    connection.reply(index, id, outcome.as_ref());
                }
                connection.notification = None;
                connection.stretch = index;
                connection.cancelled_ahead.clear();
            }
            Read::Sync => {
                // After an early exit or a hang, the trailing sync points wait on a server that is gone: those
                // requests are the ending's finding, not this one's.
                if closed || last_sent.is_some_and(|last| index < last) {
                    connection.deadline();
                }
                connection.notification = None;
                connection.stretch = index;
                connection.cancelled_ahead.clear();
            }
            Read::Http => {}
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

impl Connection<'_> {
    /// Takes in a sent line; `id` is the request id when the reading is its template's.
    fn sent(&mut self, index: usize, sent: &SentLine, id: Option<&RequestId>) {
        if let Some(ambiguous) = &sent.ambiguous {
            let (ids, literal) = (ambiguous.ids.clone(), ambiguous.literal.clone());
            return self.push_pending(index, ids, literal, ambiguous.beyond_limits, Fault::Ambiguous);
        }
        let ids = |id: &Option<RequestId>| id.iter().cloned().collect::<Vec<_>>();
        match &sent.frame {
            Frame::Request(request) => {
                let id = id.unwrap_or(&request.id);
                let needs_reply = !matches!(request.params, Some(Value::Array(_)));
                if is_big(id) {
                    let fault = if needs_reply { Fault::BigId } else { Fault::Ambiguous };
                    return self.push_pending(index, vec![id.clone()], None, false, fault);
                }
                if sent.extra_members && needs_reply {
                    return self.push_pending(index, vec![id.clone()], None, false, Fault::ExtraMember);
                }
                let open_twin = self.open(id);
                let slot = self.requests.len();
                let group = open_twin.map_or(slot, |twin| self.requests[twin].group);
                let twin_line = self.unexplained_pending(id);
                if let Some(line) = twin_line {
                    self.pending[line].reused = true;
                }
                let owed = self.owed.entry(id.clone()).or_default();
                let unsure = *owed > 0;
                *owed += 1;
                if unsure {
                    self.mark_unsure(id);
                }
                self.requests.push(Sent {
                    event: index,
                    id: id.clone(),
                    answered: false,
                    due: false,
                    needs_reply,
                    group,
                    // A cancel for its id came first in its stretch (the client broke cancellation.mdx: a cancel
                    // names a request already issued): a server that reads both at once may cancel it (the TS SDK
                    // handles notifications a microtask late), so it may go unanswered.
                    cancelled: self.cancelled_ahead.contains(id),
                    twin_line,
                    unsure,
                });
                self.by_id.entry(id.clone()).or_default().push(slot);
                self.group_size.push(0);
                self.group_size[group] += 1;
            }
            Frame::Notification(notification) => {
                self.notification = Some(index);
                if notification.method == CANCELLED {
                    self.cancel(notification.params.as_ref());
                }
            }
            Frame::NotJson { error, .. } => {
                // Nested past this parser's limit: valid JSON that a server with a higher limit reads as what it is
                // (RFC 8259 §9 lets each parser set its limit), so no reply under its id (a result, or a refusal of
                // its params) is judged; with an id at the top it is a request to such a server.
                let deep = error.contains("recursion limit");
                if deep && sent.lenient_id.is_some() {
                    self.deep.push(self.pending.len());
                }
                let fault = if deep { Fault::Ambiguous } else { Fault::Malformed };
                self.push_pending(index, ids(&sent.lenient_id), None, true, fault)
            }
            Frame::Batch(_) | Frame::NotObject(_) => self.push_pending(index, Vec::new(), None, true, Fault::Malformed),
            Frame::Invalid { problem, id, .. } => {
                let response_shaped =
                    matches!(problem, Problem::ResultAndError | Problem::ErrorMalformed | Problem::ResponseIdInvalid);
                let fault = if *problem == Problem::ParamsNotStructured && self.params_null(index) {
                    Fault::NullParams
                } else {
                    Fault::Malformed
                };
                self.push_pending(index, ids(id), None, !response_shaped, fault);
            }
            Frame::Blank | Frame::Response(_) => {}
        }
    }

    /// Adds a pending line; when one of its ids is an open line's too (the client reused it), both are marked.
    fn push_pending(&mut self, event: usize, ids: Vec<RequestId>, literal: Option<Value>, wants: bool, fault: Fault) {
        let line = self.pending.len();
        for id in &ids {
            let owed = self.owed.entry(id.clone()).or_default();
            let unsure = *owed > 0;
            *owed += 1;
            if unsure {
                self.mark_unsure(id);
            }
        }
        let mut reused = false;
        for id in &ids {
            if let Some(slot) = self.open(id) {
                reused = true;
                let group = self.requests[slot].group;
                let from = self.open_from.get(id).copied().unwrap_or(0);
                for &twin in &self.by_id[id][from..] {
                    if self.requests[twin].group == group && !self.requests[twin].answered {
                        self.requests[twin].twin_line.get_or_insert(line);
                    }
                }
            }
            if let Some(other) = self.unexplained_pending(id) {
                reused = true;
                self.pending[other].reused = true;
            }
        }
        self.unexplained += 1;
        for id in &ids {
            self.pending_by_id.entry(id.clone()).or_default().push(line);
        }
        self.pending.push(Pending {
            event,
            ids,
            literal,
            wants_reply: wants,
            fault,
            explained: false,
            due: false,
            cancelled: false,
            reused,
        });
    }

    /// A `notifications/cancelled` for an open request (its `requestId` the request's id, as the same JSON value)
    /// lets it go unanswered, and so it does for a request with that id sent after it in the same stretch; one for
    /// an unknown or finished id changes nothing else.
    fn cancel(&mut self, params: Option<&Value>) {
        let Some(id) = IdField::of(params.and_then(|p| p.get("requestId"))).valid().cloned() else { return };
        self.cancelled_ahead.push(id.clone());
        if let Some(slots) = self.by_id.get(&id) {
            let from = self.open_from.get(&id).copied().unwrap_or(0);
            for &slot in &slots[from..] {
                if !self.requests[slot].answered {
                    self.requests[slot].cancelled = true;
                }
            }
        }
        if let Some(lines) = self.pending_by_id.get(&id) {
            for &line in lines {
                self.pending[line].cancelled = true;
            }
        }
    }

    /// True when the line sent at `index` is an object whose `params` is `null`.
    fn params_null(&self, index: usize) -> bool {
        let Some(Event::Sent(line)) = self.transcript.events.get(index) else { return false };
        serde_json::from_slice::<Value>(line).is_ok_and(|v| v.get("params") == Some(&Value::Null))
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

    fn add(&mut self, rule: &'static str, event: usize, detail: String) {
        self.findings.add(rule, Some(event), detail);
    }

    fn reply(&mut self, index: usize, id: &IdField, outcome: Option<&Outcome>) {
        match id {
            IdField::Valid(id) => {
                if let Some(owed) = self.owed.get_mut(id) {
                    *owed = owed.saturating_sub(1);
                }
                self.reply_with_id(index, id, outcome)
            }
            IdField::Null | IdField::Absent => self.reply_without_id(index, outcome),
            IdField::Invalid(value) => {
                let literal = self.pending.iter().position(|p| !p.explained && p.literal.as_ref() == Some(value));
                if let Some(line) = literal {
                    return self.explain(line, index, outcome);
                }
                let line = shown(self.transcript, index);
                if let Some(slot) = self.near_match(|sent| loosely_equal_value(value, sent)) {
                    let sent = &self.requests[slot];
                    let detail = format!(
                        "the response id {value} is not the id {} of the request at event {}: {line}",
                        sent.id, sent.event
                    );
                    self.answer(slot);
                    return self.add(ID_ECHO, index, detail);
                }
                let near_pending = self.near_pending(|sent| loosely_equal_value(value, sent));
                if let Some((pending, sent)) = near_pending {
                    return self.misechoed(pending, index, &value.to_string(), &sent, "");
                }
                self.add(ID_ECHO, index, format!("the response id {value} is not a string or integer: {line}"));
            }
        }
    }

    fn reply_with_id(&mut self, index: usize, id: &RequestId, outcome: Option<&Outcome>) {
        if let Some(slot) = self.open(id) {
            // When the client reused the id while this request was open, which of the twins this reply answers is
            // not known: the MCP layer judges neither. A result is the request's all the same when its twin is a
            // malformed line (which is never to be executed), not one a server may execute.
            let group = self.requests[slot].group;
            let error = matches!(outcome, Some(Outcome::Error(_)));
            let twin = self.requests[slot].twin_line.map(|line| self.pending[line].fault);
            let executable = |fault| matches!(fault, Fault::Ambiguous | Fault::BigId | Fault::ExtraMember);
            let shared = self.requests[slot].unsure
                || twin.is_some_and(|fault| error || executable(fault))
                || self.group_size[group] > 1;
            self.answer(slot);
            let sent = &mut self.requests[slot];
            self.read_past = self.read_past.max(Some(sent.event));
            let cancelled_error = sent.cancelled && matches!(outcome, Some(Outcome::Error(_)));
            if outcome.is_some() && !cancelled_error && !shared {
                self.answers[sent.event] = Some(index);
            }
            return;
        }
        // Of several lines with this id (the client reused it), the newest: claims count only on older lines.
        if let Some(line) = self.pending_by_id.get(id).and_then(|lines| lines.last().copied()) {
            return self.explain(line, index, outcome);
        }
        let line = shown(self.transcript, index);
        if let Some(&first) = self.by_id.get(id).and_then(|slots| slots.first()) {
            let event = self.requests[first].event;
            return self.add(
                DUPLICATE_RESPONSE,
                index,
                format!("a second response for id {id} (sent at event {event}): {line}"),
            );
        }
        if let Some(&event) = self.explained.get(id) {
            let detail = format!("a second response for id {id} (the line at event {event} was answered): {line}");
            return self.add(DUPLICATE_RESPONSE, index, detail);
        }
        if let Some(slot) = self.near_match(|sent| loosely_equal(id, sent)) {
            let sent = &self.requests[slot];
            let detail = format!(
                "the response id {id} is not the id {} of the request at event {} ({}): {line}",
                sent.id,
                sent.event,
                difference(id, &sent.id)
            );
            self.answer(slot);
            return self.add(ID_ECHO, index, detail);
        }
        if let Some((pending, sent)) = self.near_pending(|sent| loosely_equal(id, sent)) {
            let how = format!(" ({})", difference(id, &sent));
            return self.misechoed(pending, index, &id.to_string(), &sent, &how);
        }
        if let Some(notification) = self.notification.take()
            && self.window_is_empty()
        {
            let detail =
                format!("a reply to the notification at event {notification} (id {id} was never sent): {line}");
            return self.add(NOTIFICATION_REPLY, index, detail);
        }
        self.add(ID_ECHO, index, format!("no request with id {id} was sent: {line}"));
    }

    /// A reply under an id that a pending line's id turns into (a big id rounded through a double, `1` for `"1"`):
    /// the pending line's answer, and a finding.
    fn misechoed(&mut self, pending: usize, index: usize, got: &str, sent: &RequestId, how: &str) {
        let line = shown(self.transcript, index);
        let (event, fault) = (self.pending[pending].event, self.pending[pending].fault);
        self.mark_explained(pending, false);
        let (rule, tier) = match fault {
            Fault::BigId => (BIG_ID, ", an id beyond ±(2^53 − 1) rounded or retyped"),
            _ => (ID_ECHO, ""),
        };
        let detail =
            format!("the response id {got} is not the id {sent} of the line at event {event}{how}{tier}: {line}");
        self.add(rule, index, detail);
    }

    /// True when every pending line of the current window is explained.
    fn window_is_empty(&self) -> bool {
        self.pending[self.window..].iter().all(|p| p.explained)
    }

    /// An id-less -32700/-32600 is a claim on some pending line sent before it, whichever (which one is settled
    /// at the end, when it matters), when the current window has one; else when an earlier window has one the server
    /// has not read past yet (a late reply from a server still starting); else it is a reply to a notification of
    /// the window (a finding); else a claim on a line of an earlier window. With no line left to claim, it is a
    /// finding. Any other id-less error may answer an ambiguous line of the window; for another line it is a
    /// finding. A result without an id is always one.
    fn reply_without_id(&mut self, index: usize, outcome: Option<&Outcome>) {
        let line = || shown(self.transcript, index);
        let refusal = is_malformed_code(outcome);
        let window = self.window..self.pending.len();
        // Hall's condition: every line pending now was sent before this reply, so one more claim fits when there
        // are more such lines than claims; else every pending line is spoken for.
        let claimable = self.unexplained > self.claims.len();
        let in_window = window.clone().find(|&p| !self.pending[p].explained).filter(|_| claimable);
        match outcome {
            Some(Outcome::Result(_)) => {
                self.add(NULL_ID, index, format!("a result without an id: {}", line()));
                if in_window.is_some() {
                    return;
                }
            }
            Some(Outcome::Error(_)) if refusal => {
                if in_window.is_some() {
                    return self.claims.push(index);
                }
                // A line of an earlier window the server has not read past (no line sent after it was answered).
                let read_past = self.read_past;
                let unread = self.pending[..self.window]
                    .iter()
                    .rev()
                    .take_while(|p| read_past.is_none_or(|past| past < p.event))
                    .any(|p| !p.explained);
                if claimable && unread {
                    return self.claims.push(index);
                }
            }
            Some(Outcome::Error(error)) => {
                // Any error may answer an ambiguous line; another code for a malformed line is a finding.
                let ambiguous = window
                    .clone()
                    .find(|&p| !self.pending[p].explained && self.pending[p].fault == Fault::Ambiguous)
                    .filter(|_| claimable);
                if let Some(pending) = ambiguous {
                    return self.mark_explained(pending, true);
                }
                if let Some(pending) = in_window {
                    let event = self.pending[pending].event;
                    self.mark_explained(pending, true);
                    let detail = format!(
                        "an error without an id must be -32700 or -32600, not {} (for the line at event {event}): {}",
                        error.code,
                        line()
                    );
                    return self.add(NULL_ID, index, detail);
                }
            }
            None => {}
        }
        if let Some(notification) = self.notification.take() {
            // A request of the same stretch still open may be what the error answers (rmcp refuses a request
            // whose `_meta` is not an object with an id-less -32600): settled at the end.
            let stretch = self.stretch;
            let open: Vec<usize> = (0..self.requests.len())
                .rev()
                .take_while(|&slot| self.requests[slot].event > stretch)
                .filter(|&slot| {
                    let sent = &self.requests[slot];
                    !sent.answered && !sent.cancelled && sent.needs_reply
                })
                .collect();
            if !open.is_empty() && outcome.is_some_and(|o| matches!(o, Outcome::Error(_))) {
                return self.contested.push((index, notification, open));
            }
            return self.add(
                NOTIFICATION_REPLY,
                index,
                format!("a reply to the notification at event {notification}: {}", line()),
            );
        }
        if refusal && claimable {
            return self.claims.push(index);
        }
        if let Some(Outcome::Error(_)) = outcome {
            self.add(
                NULL_ID,
                index,
                format!("an error without an id, but no malformed line to explain it: {}", line()),
            );
        }
    }

    /// Marks a pending line explained and drops it from the indexes; `quietly` when the reply carried no id (else the
    /// claims are checked: a line one of them counted on got its own reply).
    fn mark_explained(&mut self, pending: usize, quietly: bool) {
        if std::mem::replace(&mut self.pending[pending].explained, true) {
            return;
        }
        self.unexplained -= 1;
        for id in &self.pending[pending].ids {
            if let Some(lines) = self.pending_by_id.get_mut(id) {
                lines.retain(|&p| p != pending);
            }
        }
        if !quietly {
            let reused = self.pending[pending].reused;
            self.check_claims(!reused);
        }
    }

    /// A pending line is answered by a reply under one of its ids.
    fn explain(&mut self, pending: usize, index: usize, outcome: Option<&Outcome>) {
        self.read_past = self.read_past.max(Some(self.pending[pending].event));
        for id in &self.pending[pending].ids {
            self.explained.insert(id.clone(), self.pending[pending].event);
        }
        let request = matches!(self.pending[pending].fault, Fault::BigId | Fault::ExtraMember);
        if request && outcome.is_some() && !self.pending[pending].reused {
            self.answers[self.pending[pending].event] = Some(index);
        }
        self.mark_explained(pending, false);
        self.judge(pending, index, outcome);
    }

    /// What the reply at `index` to a pending line shows.
    fn judge(&mut self, pending: usize, index: usize, outcome: Option<&Outcome>) {
        let Pending { event, fault, reused, .. } = self.pending[pending];
        if reused {
            return;
        }
        let line = || shown(self.transcript, index);
        let sent = || shown(self.transcript, event);
        match (fault, outcome) {
            (Fault::Ambiguous | Fault::BigId | Fault::ExtraMember, _) => {}
            (Fault::Malformed, Some(Outcome::Result(_))) => {
                let detail = format!("a result for the malformed line at event {event} ({}): {}", sent(), line());
                self.add(MALFORMED_SERVED, index, detail);
            }
            (Fault::NullParams, Some(Outcome::Result(_))) => {
                let detail =
                    format!("the request with \"params\": null at event {event} ({}) was served: {}", sent(), line());
                self.add(NULL_PARAMS, index, detail);
            }
            (_, Some(Outcome::Error(error))) if !is_malformed_code(outcome) => {
                let detail = format!("malformed input got error {}, not -32700 or -32600: {}", error.code, line());
                self.add(MALFORMED_REPLY, index, detail);
            }
            _ => {}
        }
    }

    /// The claims of id-less errors need, the k-th (in the order received) k unexplained pending lines sent before
    /// it. A claim left without a line is a finding (when `report`): every line it could answer got its
    /// own reply. Not when the line that went was one whose id the client reused: who answered what is not judged.
    fn check_claims(&mut self, report: bool) {
        while !self.claims.is_empty() {
            let lines: Vec<usize> = self.pending.iter().filter(|p| !p.explained).map(|p| p.event).collect();
            let short =
                self.claims.iter().enumerate().position(|(k, &claim)| lines.partition_point(|&e| e < claim) <= k);
            let Some(k) = short else { return };
            let claim = self.claims.remove(k);
            if !report {
                continue;
            }
            let detail = format!(
                "an error without an id, but every line it could answer got its own reply: {}",
                shown(self.transcript, claim)
            );
            self.add(NULL_ID, claim, detail);
        }
    }

    /// The first open request whose id is not this one but could be mistaken for it.
    fn near_match(&self, similar: impl Fn(&RequestId) -> bool) -> Option<usize> {
        (0..self.requests.len()).find(|&slot| !self.requests[slot].answered && similar(&self.requests[slot].id))
    }

    /// The first unexplained pending line with an id that could be mistaken for this one, and that id.
    fn near_pending(&self, similar: impl Fn(&RequestId) -> bool) -> Option<(usize, RequestId)> {
        self.pending.iter().enumerate().filter(|(_, p)| !p.explained).find_map(|(at, p)| {
            let sent = p.ids.iter().find(|sent| similar(sent))?;
            Some((at, sent.clone()))
        })
    }

    /// A sync point or the end of a closed connection: everything sent so far is due.
    fn deadline(&mut self) {
        for sent in &mut self.requests[self.due_requests..] {
            sent.due = !sent.answered;
        }
        self.due_requests = self.requests.len();
        for pending in &mut self.pending[self.window..] {
            pending.due = !pending.explained;
        }
        self.window = self.pending.len();
    }

    /// The end of the transcript: what was due and never came. A request is missing only when no reply ever came
    /// (a late one, after its sync point, is its answer).
    fn end(&mut self) {
        for (index, notification, open) in std::mem::take(&mut self.contested) {
            let line = shown(self.transcript, index);
            let request = open.iter().map(|&slot| &self.requests[slot]).find(|s| !s.answered && !s.cancelled);
            match request.map(|sent| sent.event) {
                Some(event) => self.add(
                    NULL_ID,
                    index,
                    format!(
                        "an error without an id, though the request at event {event} (open, and never answered \
                         with its id) had one: {line}"
                    ),
                ),
                None => self.add(
                    NOTIFICATION_REPLY,
                    index,
                    format!("a reply to the notification at event {notification}: {line}"),
                ),
            }
        }
        // In a cut transcript, a reply may have come after the cut: no request is judged missing.
        let cut = matches!(self.transcript.ending, Ending::Cut { .. });
        let mut group_answered = vec![false; self.requests.len()];
        for sent in &self.requests {
            let twin_answered = sent.twin_line.is_some_and(|line| self.pending[line].explained);
            group_answered[sent.group] |= sent.answered || twin_answered;
        }
        for slot in 0..self.requests.len() {
            let sent = &self.requests[slot];
            if cut || !sent.due || sent.answered || sent.cancelled || !sent.needs_reply || group_answered[sent.group] {
                continue;
            }
            group_answered[sent.group] = true;
            let event = sent.event;
            let line = shown(self.transcript, event);
            self.add(RESPONSE_MISSING, event, format!("no response to the request: {line}"));
        }
        // Each claim takes the line it most likely answers: one that would otherwise be a finding, a big id (on by
        // default) before a line strict JSON-RPC wants refused; of those, the last sent before it (a batch refused
        // whole with one id-less error leaves its other items to MCP-BATCH, not to the next refusal).
        let big =
            |p: &Pending| p.due && !p.reused && matches!(p.fault, Fault::BigId | Fault::ExtraMember) && !p.cancelled;
        let refusable = |p: &Pending| p.due && !p.reused && p.wants_reply;
        for k in 0..self.claims.len() {
            let claim = self.claims[k];
            let pick = |wanted: &dyn Fn(&Pending) -> bool| {
                self.pending.iter().rposition(|p| p.event < claim && !p.explained && wanted(p))
            };
            if let Some(at) = pick(&big).or_else(|| pick(&refusable)).or_else(|| pick(&|_| true)) {
                self.pending[at].explained = true;
            }
        }
        for at in 0..self.pending.len() {
            let pending = &self.pending[at];
            if pending.explained || !pending.due || pending.reused {
                continue;
            }
            let line = shown(self.transcript, pending.event);
            if pending.fault == Fault::BigId && !pending.cancelled {
                let detail = format!(
                    "no response to a request whose integer id is beyond ±(2^53 − 1), which JavaScript parsers drop \
                     or round: {line}"
                );
                self.add(BIG_ID, pending.event, detail);
            } else if pending.fault == Fault::ExtraMember && !pending.cancelled {
                let detail = format!(
                    "no response to a request with a member beyond jsonrpc, id, method and params, which a strict \
                     schema drops: {line}"
                );
                self.add(EXTRA_MEMBER, pending.event, detail);
            } else if pending.wants_reply {
                let what = match pending.fault {
                    Fault::Ambiguous => "a line beyond common parser limits (a number's digits or its nesting)",
                    Fault::Malformed | Fault::NullParams | Fault::BigId | Fault::ExtraMember => "malformed input",
                };
                self.add(MALFORMED_REPLY, pending.event, format!("no -32700/-32600 reply to {what}: {line}"));
            }
        }
    }
}

/// The id a lenient reader still finds in a line that is not strict JSON: invalid UTF-8 replaced by U+FFFD, a
/// byte-order mark skipped, the first of several values on the line. Servers that read this way answer such lines
/// under that id, and a result there means they executed malformed input.
pub(super) fn lenient_id(line: &[u8]) -> Option<RequestId> {
    let text = String::from_utf8_lossy(line);
    let first = json::skim_first_message(text.trim_start_matches('\u{feff}').as_bytes())?;
    IdField::of(first.get("id")).valid().cloned()
}

/// The `id` member of the object `text` starts with, found without building what is nested in it: for a line
/// nested deeper than the parser's limit (RFC 8259 §9 lets each parser set its own; a server with a higher one
/// answers the line under this id). A whole-valued number (`2.0`) is the integer many parsers read it as.
pub(super) fn top_level_id(text: &[u8]) -> Option<RequestId> {
    let (mut depth, mut in_string, mut escaped, mut key_start) = (0usize, false, false, None);
    for (at, &byte) in text.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    in_string = false;
                    let key = depth == 1 && key_start.is_some_and(|start| &text[start..at] == b"id");
                    if let Some(rest) = text[at + 1..].trim_ascii_start().strip_prefix(b":").filter(|_| key) {
                        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
                        let value = values.next()?.ok()?;
                        return IdField::of(Some(&value)).valid().cloned().or_else(|| match &value {
                            Value::Number(n) => whole_integer(&n.to_string()).map(RequestId::Integer),
                            _ => None,
                        });
                    }
                }
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => {
                in_string = true;
                key_start = Some(at + 1);
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
#[test]
fn the_id_of_a_line_nested_past_the_parser_limit_is_found() {
    let deep = format!(r#"{{"method":"id","params":{{"x":{}{}}},"id":"7"}}"#, "[".repeat(300), "]".repeat(300));
    assert!(json::skim_first_message(deep.as_bytes()).is_none());
    assert_eq!(top_level_id(deep.as_bytes()), Some(RequestId::string("7")));
    assert_eq!(top_level_id(br#"{"a":{"id":1},"b":"id"}"#), None);
    assert_eq!(top_level_id(br#"{"id" : 12, "x": ["]"]}"#), Some(RequestId::Integer("12".into())));
}

/// True for an object with a member beyond the four a JSON-RPC 2.0 request defines (`jsonrpc`, `id`, `method`,
/// `params`).
pub(super) fn has_extra_members(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|object| object.keys().any(|key| !matches!(key.as_str(), "jsonrpc" | "id" | "method" | "params")))
}

/// True for an error with the code JSON-RPC gives malformed input.
fn is_malformed_code(outcome: Option<&Outcome>) -> bool {
    matches!(outcome, Some(Outcome::Error(e)) if e.code == PARSE_ERROR || e.code == INVALID_REQUEST)
}

/// Two different ids a careless server could turn one into the other: `1` and `"1"`, two integers that are the
/// same double (a big id rounded through a float), or two strings that differ only by surrounding whitespace,
/// control characters and line or paragraph separators.
fn loosely_equal(a: &RequestId, b: &RequestId) -> bool {
    match (a, b) {
        (RequestId::Integer(x), RequestId::String(y)) | (RequestId::String(y), RequestId::Integer(x)) => x == y,
        (RequestId::Integer(x), RequestId::Integer(y)) => same_double(x, y),
        (RequestId::String(x), RequestId::String(y)) => x != y && loosened(x) == loosened(y),
    }
}

/// A string id as a careless server may pass it on: trimmed, its control characters and U+2028/2029 dropped.
fn loosened(id: &str) -> String {
    id.trim().chars().filter(|c| !c.is_control() && !matches!(c, '\u{2028}' | '\u{2029}')).collect()
}

/// A float or other invalid response id that could stand for a request id (`1.0` for `1`).
fn loosely_equal_value(value: &Value, sent: &RequestId) -> bool {
    match (value, sent) {
        (Value::Number(n), RequestId::Integer(digits)) => same_double(&n.to_string(), digits),
        _ => false,
    }
}

fn same_double(a: &str, b: &str) -> bool {
    matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y && x.is_finite())
}

fn difference(got: &RequestId, sent: &RequestId) -> &'static str {
    match (got, sent) {
        (RequestId::String(_), RequestId::Integer(_)) => "a string for an integer",
        (RequestId::Integer(_), RequestId::String(_)) => "an integer for a string",
        (RequestId::String(_), RequestId::String(_)) => "the string trimmed or its control characters dropped",
        _ => "the integer lost digits",
    }
}
