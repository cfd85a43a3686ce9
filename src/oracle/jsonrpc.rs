//! The JSON-RPC layer, true of any JSON-RPC 2.0 server: what each server line is, which request each response
//! answers, and what was left unanswered, answered twice, or answered when it should not have been.

use super::catalogue::{
    DUPLICATE_RESPONSE, ERROR_SHAPE, FRAMING, ID_ECHO, MALFORMED_REPLY, MALFORMED_SERVED, MESSAGE_SHAPE,
    NOTIFICATION_REPLY, NULL_ID, NULL_PARAMS, RESPONSE_MISSING, RESPONSE_SHAPE, VERSION,
};
use super::{Findings, Read, SentLine, ServerLine, ServerReading, shown};
use crate::protocol::codes::{INVALID_REQUEST, PARSE_ERROR};
use crate::protocol::id::is_integer_literal;
use crate::protocol::json::{self, Noted, fits_i64, whole_integer};
use crate::protocol::message::Problem;
use crate::protocol::{ErrorObject, Frame, IdField, Outcome, RequestId};
use crate::transcript::{Ending, Event, Transcript, show_bytes};
use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;
use std::collections::VecDeque;

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
/// that is not an integer literal (`1.0`, `1e+3`) or an integer outside i64, a number literal beyond common parser
/// limits (RFC 8259 §6), or an object with a duplicate member name (RFC 8259 §4). Silence is an acceptable answer
/// to it, and so is any error; a result only under its id.
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
    /// The `id` member, when it is a number (a whole-valued one like `1.0` makes the line ambiguous).
    id_number: Option<serde_json::Number>,
}

impl Oddities {
    /// Reads the facts off a parsed line; `None` when it is not an object (batches and non-objects stay
    /// malformed, whatever they hold).
    pub(super) fn of(noted: &Noted) -> Option<Oddities> {
        let Value::Object(object) = &noted.value else { return None };
        Some(Oddities {
            beyond_limits: noted.beyond_limits,
            duplicate_keys: noted.duplicate_keys,
            id_number: match object.get("id") {
                Some(Value::Number(n)) => Some(n.clone()),
                _ => None,
            },
        })
    }
}

/// What makes a client line ambiguous, given what its object showed and how it was classified, or `None` for a
/// line every conforming parser reads the same way.
pub(super) fn ambiguous(oddities: Oddities, frame: &Frame) -> Option<Ambiguous> {
    let Oddities { beyond_limits, duplicate_keys, id_number } = oddities;
    let mut ambiguous = beyond_limits || duplicate_keys;
    let mut ids = Vec::new();
    let mut literal = None;
    match frame {
        Frame::Request(request) => {
            ambiguous |= matches!(&request.id, RequestId::Integer(digits) if !fits_i64(digits));
            ids.push(request.id.clone());
        }
        Frame::Invalid { problem: Problem::RequestIdInvalid, .. } => {
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

/// A valid request the client sent.
struct Sent {
    /// Its event index.
    event: usize,
    /// Its id.
    id: RequestId,
    /// Whether a response carrying its id has come.
    answered: bool,
    /// Whether it was already reported missing.
    reported: bool,
    /// False for requests with array params: JSON-RPC-valid but not MCP-valid, so silence is acceptable.
    needs_reply: bool,
    /// The first of the requests that shared this id while open (the client reused it), or its own index.
    group: usize,
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
}

/// The connection as the JSON-RPC layer follows it.
struct Connection<'t> {
    transcript: &'t Transcript,
    findings: &'t mut Findings,
    requests: Vec<Sent>,
    by_id: HashMap<RequestId, Vec<usize>>,
    /// Malformed and ambiguous lines waiting for their reply, oldest first: an id-less error explains the first.
    pending: VecDeque<Pending>,
    /// Pending lines with a readable id that passed a sync point unanswered: a late reply under that id is still
    /// theirs (a stdio server may answer after the harness moved on).
    late: Vec<Pending>,
    /// The ids under which a pending line got its reply, with the line's event index: a second reply is a duplicate.
    explained: HashMap<RequestId, usize>,
    /// A notification sent since the last sync point or received line.
    notification: Option<usize>,
    /// For each event index, the received line that answers it when it is a request answered by an exact id.
    answers: Vec<Option<usize>>,
}

/// Follows the conversation: matches responses to requests, and reports wrong, missing, duplicate and unwanted
/// replies. Returns, for each event index, the received line that answers the request sent there.
pub(super) fn check(transcript: &Transcript, reads: &[Read], findings: &mut Findings) -> Vec<Option<usize>> {
    let mut connection = Connection {
        transcript,
        findings,
        requests: Vec::new(),
        by_id: HashMap::default(),
        pending: VecDeque::new(),
        late: Vec::new(),
        explained: HashMap::default(),
        notification: None,
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
            }
            Read::Sync => {
                // After an early exit or a hang, the trailing sync points wait on a server that is gone: those
                // requests are the ending's finding, not this one's.
                if closed || last_sent.is_some_and(|last| index < last) {
                    connection.deadline();
                }
                connection.notification = None;
            }
        }
    }
    if closed {
        connection.deadline();
    }
    connection.answers
}

impl Connection<'_> {
    /// Takes in a sent line; `id` is the request id when the reading is its template's.
    fn sent(&mut self, index: usize, sent: &SentLine, id: Option<&RequestId>) {
        if let Some(ambiguous) = &sent.ambiguous {
            let ids = ambiguous.ids.clone();
            let literal = ambiguous.literal.clone();
            let wants_reply = ambiguous.beyond_limits;
            self.pending.push_back(Pending { event: index, ids, literal, wants_reply, fault: Fault::Ambiguous });
            return;
        }
        let pending = |ids: Option<RequestId>, wants_reply, fault| Pending {
            event: index,
            ids: ids.into_iter().collect(),
            literal: None,
            wants_reply,
            fault,
        };
        match &sent.frame {
            Frame::Request(request) => {
                let id = id.unwrap_or(&request.id);
                let open_twin = self.open(id);
                let slot = self.requests.len();
                let group = open_twin.map_or(slot, |twin| self.requests[twin].group);
                let needs_reply = !matches!(request.params, Some(Value::Array(_)));
                let sent = Sent { event: index, id: id.clone(), answered: false, reported: false, needs_reply, group };
                self.requests.push(sent);
                self.by_id.entry(id.clone()).or_default().push(slot);
            }
            Frame::Notification(_) => self.notification = Some(index),
            Frame::NotJson { .. } => self.pending.push_back(pending(sent.lenient_id.clone(), true, Fault::Malformed)),
            Frame::Batch(_) | Frame::NotObject(_) => self.pending.push_back(pending(None, true, Fault::Malformed)),
            Frame::Invalid { problem, id, .. } => {
                let response_shaped =
                    matches!(problem, Problem::ResultAndError | Problem::ErrorMalformed | Problem::ResponseIdInvalid);
                let fault = if *problem == Problem::ParamsNotStructured && self.params_null(index) {
                    Fault::NullParams
                } else {
                    Fault::Malformed
                };
                self.pending.push_back(pending(id.clone(), !response_shaped, fault));
            }
            Frame::Blank | Frame::Response(_) => {}
        }
    }

    /// True when the line sent at `index` is an object whose `params` is `null`.
    fn params_null(&self, index: usize) -> bool {
        let Some(Event::Sent(line)) = self.transcript.events.get(index) else { return false };
        serde_json::from_slice::<Value>(line).is_ok_and(|v| v.get("params") == Some(&Value::Null))
    }

    /// The first request with this id that has no response yet.
    fn open(&self, id: &RequestId) -> Option<usize> {
        self.by_id.get(id)?.iter().copied().find(|&slot| !self.requests[slot].answered)
    }

    /// Takes the oldest pending line a reply with this id answers.
    fn take_pending(&mut self, id: &RequestId) -> Option<Pending> {
        let position = self.pending.iter().position(|p| p.ids.contains(id))?;
        self.pending.remove(position)
    }

    fn add(&mut self, rule: &'static str, event: usize, detail: String) {
        self.findings.add(rule, Some(event), detail);
    }

    fn reply(&mut self, index: usize, id: &IdField, outcome: Option<&Outcome>) {
        match id {
            IdField::Valid(id) => self.reply_with_id(index, id, outcome),
            IdField::Null | IdField::Absent => self.reply_without_id(index, outcome),
            IdField::Invalid(value) => {
                if let Some(position) = self.pending.iter().position(|p| p.literal.as_ref() == Some(value))
                    && let Some(pending) = self.pending.remove(position)
                {
                    return self.explain(pending, index, outcome);
                }
                let line = shown(self.transcript, index);
                let near = self.near_match(|sent| loosely_equal_value(value, sent));
                match near {
                    Some(slot) => {
                        let sent = &self.requests[slot];
                        let detail = format!(
                            "the response id {value} is not the id {} of the request at event {}: {line}",
                            sent.id, sent.event
                        );
                        self.requests[slot].answered = true;
                        self.add(ID_ECHO, index, detail);
                    }
                    None => {
                        self.add(ID_ECHO, index, format!("the response id {value} is not a string or integer: {line}"))
                    }
                }
            }
        }
    }

    fn reply_with_id(&mut self, index: usize, id: &RequestId, outcome: Option<&Outcome>) {
        if is_malformed_code(outcome)
            && let Some(pending) = self.take_pending(id)
        {
            return self.explain(pending, index, outcome);
        }
        if let Some(slot) = self.open(id) {
            self.requests[slot].answered = true;
            if outcome.is_some() {
                self.answers[self.requests[slot].event] = Some(index);
            }
            return;
        }
        if let Some(pending) = self.take_pending(id) {
            return self.explain(pending, index, outcome);
        }
        if let Some(position) = self.late.iter().position(|p| p.ids.contains(id)) {
            let pending = self.late.swap_remove(position);
            return self.explain(pending, index, outcome);
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
            self.requests[slot].answered = true;
            return self.add(ID_ECHO, index, detail);
        }
        let near_pending = self.pending.iter().enumerate().find_map(|(position, pending)| {
            let sent = pending.ids.iter().find(|sent| loosely_equal(id, sent))?;
            Some((position, pending.event, sent.clone()))
        });
        if let Some((position, event, sent)) = near_pending {
            self.pending.remove(position);
            let detail = format!(
                "the response id {id} is not the id {sent} of the line at event {event} ({}): {line}",
                difference(id, &sent)
            );
            return self.add(ID_ECHO, index, detail);
        }
        if let Some(notification) = self.notification.take()
            && self.pending.is_empty()
        {
            let detail =
                format!("a reply to the notification at event {notification} (id {id} was never sent): {line}");
            return self.add(NOTIFICATION_REPLY, index, detail);
        }
        self.add(ID_ECHO, index, format!("no request with id {id} was sent: {line}"));
    }

    /// An id-less reply explains the oldest pending line (malformed or ambiguous) before anything else.
    fn reply_without_id(&mut self, index: usize, outcome: Option<&Outcome>) {
        let line = || shown(self.transcript, index);
        if let Some(Outcome::Result(_)) = outcome {
            self.add(NULL_ID, index, format!("a result without an id: {}", line()));
        }
        if let Some(pending) = self.pending.pop_front() {
            if pending.fault != Fault::Ambiguous
                && let Some(Outcome::Error(error)) = outcome
                && !is_malformed_code(outcome)
            {
                let detail = format!(
                    "an error without an id must be -32700 or -32600, not {} (for the malformed line at event {}): {}",
                    error.code,
                    pending.event,
                    line()
                );
                self.add(NULL_ID, index, detail);
            }
            return;
        }
        if let Some(notification) = self.notification.take() {
            return self.add(
                NOTIFICATION_REPLY,
                index,
                format!("a reply to the notification at event {notification}: {}", line()),
            );
        }
        if let Some(Outcome::Error(_)) = outcome {
            self.add(
                NULL_ID,
                index,
                format!("an error without an id, but no malformed line to explain it: {}", line()),
            );
        }
    }

    /// A reply under one of its ids explains a pending line.
    fn explain(&mut self, pending: Pending, index: usize, outcome: Option<&Outcome>) {
        for id in &pending.ids {
            self.explained.insert(id.clone(), pending.event);
        }
        let line = || shown(self.transcript, index);
        let sent = || shown(self.transcript, pending.event);
        match (pending.fault, outcome) {
            (Fault::Ambiguous, _) => {}
            (Fault::Malformed, Some(Outcome::Result(_))) => {
                let detail =
                    format!("a result for the malformed line at event {} ({}): {}", pending.event, sent(), line());
                self.add(MALFORMED_SERVED, index, detail);
            }
            (Fault::NullParams, Some(Outcome::Result(_))) => {
                let detail = format!(
                    "the request with \"params\": null at event {} ({}) was served: {}",
                    pending.event,
                    sent(),
                    line()
                );
                self.add(NULL_PARAMS, index, detail);
            }
            (_, Some(Outcome::Error(error))) if !is_malformed_code(outcome) => {
                let detail = format!("malformed input got error {}, not -32700 or -32600: {}", error.code, line());
                self.add(MALFORMED_REPLY, index, detail);
            }
            _ => {}
        }
    }

    /// The first open request whose id is not this one but could be mistaken for it.
    fn near_match(&self, similar: impl Fn(&RequestId) -> bool) -> Option<usize> {
        (0..self.requests.len()).find(|&slot| !self.requests[slot].answered && similar(&self.requests[slot].id))
    }

    /// A sync point or the end: everything sent so far should have its reply.
    fn deadline(&mut self) {
        for slot in 0..self.requests.len() {
            let sent = &self.requests[slot];
            if sent.answered || sent.reported || !sent.needs_reply {
                continue;
            }
            let group = sent.group;
            let twins = || self.requests.iter().filter(|other| other.group == group);
            let answered_twin = twins().any(|other| other.answered);
            let reported_twin = twins().any(|other| other.reported);
            self.requests[slot].reported = true;
            if !answered_twin && !reported_twin {
                let event = self.requests[slot].event;
                let line = shown(self.transcript, event);
                self.add(RESPONSE_MISSING, event, format!("no response to the request: {line}"));
            }
        }
        while let Some(pending) = self.pending.pop_front() {
            if pending.wants_reply {
                let line = shown(self.transcript, pending.event);
                let what = match pending.fault {
                    Fault::Ambiguous => "a line with a number beyond common parser limits",
                    Fault::Malformed | Fault::NullParams => "malformed input",
                };
                self.add(MALFORMED_REPLY, pending.event, format!("no -32700/-32600 reply to {what}: {line}"));
            }
            if !pending.ids.is_empty() {
                self.late.push(Pending { wants_reply: false, ..pending });
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

/// True for an error with the code JSON-RPC gives malformed input.
fn is_malformed_code(outcome: Option<&Outcome>) -> bool {
    matches!(outcome, Some(Outcome::Error(e)) if e.code == PARSE_ERROR || e.code == INVALID_REQUEST)
}

/// Two different ids a careless server could turn one into the other: `1` and `"1"`, or two integers that are the
/// same double (a big id rounded through a float).
fn loosely_equal(a: &RequestId, b: &RequestId) -> bool {
    match (a, b) {
        (RequestId::Integer(x), RequestId::String(y)) | (RequestId::String(y), RequestId::Integer(x)) => x == y,
        (RequestId::Integer(x), RequestId::Integer(y)) => same_double(x, y),
        (RequestId::String(_), RequestId::String(_)) => false,
    }
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
        _ => "the integer lost digits",
    }
}
