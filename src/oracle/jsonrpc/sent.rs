//! Taking in what the client sent: a valid request opens a slot to be answered by id; a malformed, ambiguous,
//! big-id or extra-member line becomes a pending line; a reused id marks who answers what as unsure; and
//! `notifications/cancelled` lets its request go unanswered.

use super::client_line::top_level_id_value;
use super::{Connection, Fault, Pending, Sent};
use crate::oracle::SentLine;
use crate::protocol::id::is_big;
use crate::protocol::json;
use crate::protocol::message::{Problem, ResponseId};
use crate::protocol::methods::{CANCELLED, LISTEN};
use crate::protocol::{Frame, IdField, RequestId};
use crate::transcript::Event;
use serde_json::Value;

/// True when `raw` is a string or integer id.
fn is_valid_id(raw: &Value) -> bool {
    matches!(IdField::of(Some(raw)), IdField::Valid(_))
}

impl Connection<'_> {
    /// Takes in a sent line; `id` is the request id when the reading is its template's.
    pub(super) fn sent(&mut self, index: usize, sent: &SentLine, id: Option<&RequestId>) {
        if let Some(ambiguous) = &sent.ambiguous {
            let literal = ambiguous.literal.clone().or_else(|| self.invalid_id(index));
            let ids = ambiguous.ids.clone();
            return self.push_pending(index, ids, literal, ambiguous.beyond_limits, Fault::Ambiguous);
        }
        let ids = |id: &Option<RequestId>| id.iter().cloned().collect::<Vec<_>>();
        match &sent.frame {
            Frame::Request(request) => {
                let id = id.unwrap_or(&request.id);
                self.listens |= request.method == LISTEN;
                let needs_reply = !matches!(request.params, Some(Value::Array(_)));
                let pending = if is_big(id) {
                    Some(if needs_reply { Fault::BigId } else { Fault::Ambiguous })
                } else if sent.extra_members && needs_reply {
                    Some(Fault::ExtraMember)
                } else {
                    None
                };
                if let Some(fault) = pending {
                    self.push_pending(index, vec![id.clone()], None, false, fault);
                    if let Some(line) = self.pending.last_mut() {
                        line.listen = request.method == LISTEN;
                    }
                    return;
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
                    listen: request.method == LISTEN,
                    twin_line,
                    unsure,
                });
                self.by_id.entry(id.clone()).or_default().push(slot);
                self.group_size.push(0);
                self.group_size[group] += 1;
            }
            Frame::Notification(notification) => {
                self.notifications.push_back(index);
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
                // Its id as written, when no string or integer (`5e+3`): a server that reads the line may echo it.
                let literal = match &self.transcript.events[index] {
                    Event::Sent(line) if deep => top_level_id_value(line).filter(|raw| !is_valid_id(raw)),
                    _ => None,
                };
                self.push_pending(index, ids(&sent.lenient_id), literal, true, fault)
            }
            Frame::Batch(_) | Frame::NotObject(_) => self.push_pending(index, Vec::new(), None, true, Fault::Malformed),
            Frame::Invalid { problem, id, .. } => {
                let response_shaped =
                    matches!(problem, Problem::ResultAndError | Problem::ErrorMalformed | Problem::ResponseIdInvalid);
                let literal = self.invalid_id(index);
                let jsonrpc_id = matches!(literal, Some(Value::Null | Value::Number(_)));
                let fault = if *problem == Problem::ParamsNotStructured && self.only_params_null(index) {
                    Fault::NullParams
                } else if *problem == Problem::RequestIdInvalid && jsonrpc_id {
                    Fault::IdMcpForbids
                } else {
                    Fault::Malformed
                };
                let mut read_as = ids(id);
                // A lax reader (pydantic's, in Python's `mcp` 1.x) takes `true` and `false` for 1 and 0: a reply
                // under that integer may be this line's, served, rather than a second reply to another request.
                if let Some(Value::Bool(flag)) = &literal {
                    read_as.push(RequestId::Integer(u8::from(*flag).to_string()));
                }
                self.push_pending(index, read_as, literal, !response_shaped, fault);
            }
            // A blank line is no JSON text: a -32700 may answer it (JSON-RPC 2.0 §5.1), nothing is owed to it.
            Frame::Blank => self.push_pending(index, Vec::new(), None, false, Fault::Malformed),
            // A response to none of the server's requests: a -32600 may answer it, nothing is owed to it.
            Frame::Response(response) => {
                let id = match &response.id {
                    ResponseId::Id(id) if self.asked.contains(id) => return,
                    ResponseId::Id(id) => vec![id.clone()],
                    ResponseId::Null | ResponseId::Absent => Vec::new(),
                };
                self.push_pending(index, id, None, false, Fault::Malformed);
            }
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
            listen: false,
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

    /// The id the object sent at `index` carries when it is no string or integer: a reply may echo it exactly
    /// (JSON-RPC 2.0 §5).
    fn invalid_id(&self, index: usize) -> Option<Value> {
        self.member(index, "id").filter(|raw| !is_valid_id(raw))
    }

    /// True when the object sent at `index` has `"params": null` and is a valid request without it: a line with a
    /// second fault (an object for its id) is malformed whatever its params.
    fn only_params_null(&self, index: usize) -> bool {
        let Some(Value::Object(mut object)) = self.sent_value(index) else { return false };
        if object.remove("params") != Some(Value::Null) {
            return false;
        }
        let without = serde_json::to_vec(&object).unwrap_or_default();
        matches!(Frame::parse(&without), Frame::Request(_))
    }

    /// The member `name` of the object sent at `index`, when it has one ([`Connection::sent_value`]).
    fn member(&self, index: usize, name: &str) -> Option<Value> {
        self.sent_value(index)?.get_mut(name).map(Value::take)
    }

    /// The JSON value sent at `index`: read as a lenient reader reads the line when it is not strict JSON only for
    /// what RFC 8259 lets a parser accept ([`json::lenient_text`]).
    fn sent_value(&self, index: usize) -> Option<Value> {
        let Some(Event::Sent(line)) = self.transcript.events.get(index) else { return None };
        let lenient = json::lenient_text(line);
        serde_json::from_slice::<Value>(lenient.as_deref().unwrap_or(line)).ok()
    }
}
