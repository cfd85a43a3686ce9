//! Matching each reply to what it answers: by id to an open request or a pending line, whenever it comes; a
//! near miss of an id is an echo finding; an id-less -32700/-32600 is a claim on some pending line, settled at
//! the end; and a reply to a notification, a second reply, or a result to malformed input is a finding.

use super::ids::{difference, loosely_equal, loosely_equal_value};
use super::{Connection, Contested, Fault, Pending};
use crate::oracle::rules::{
    BIG_ID, DUPLICATE_RESPONSE, ID_ECHO, MALFORMED_REPLY, MALFORMED_SERVED, NOTIFICATION_REPLY, NULL_ID, NULL_PARAMS,
};
use crate::oracle::shown;
use crate::protocol::codes::{INVALID_REQUEST, PARSE_ERROR};
use crate::protocol::{IdField, Outcome, RequestId};

impl Connection<'_> {
    /// Takes in a reply the server wrote at `index`, under its id field.
    pub(super) fn reply(&mut self, index: usize, id: &IdField, outcome: Option<&Outcome>) {
        match id {
            IdField::Valid(id) => {
                if let Some(owed) = self.owed.get_mut(id) {
                    *owed = owed.saturating_sub(1);
                }
                self.reply_with_id(index, id, outcome)
            }
            IdField::Null => {
                // The exact echo of a request's `"id": null` (JSON-RPC 2.0 §5): that request's reply, unless it is
                // a -32700/-32600, which may as well refuse any malformed line before it (a claim).
                // Of several such lines, the newest: claims count only on older lines (as for a reused id).
                let echo =
                    self.pending.iter().rposition(|p| !p.explained && p.literal == Some(serde_json::Value::Null));
                match echo.filter(|_| !is_malformed_code(outcome)) {
                    Some(line) => self.explain(line, index, outcome),
                    None => self.reply_without_id(index, outcome),
                }
            }
            IdField::Absent => self.reply_without_id(index, outcome),
            IdField::Invalid(value) => {
                // Of several lines sent with this id, the newest: claims count only on older lines.
                let literal = self
                    .pending
                    .iter()
                    .rposition(|p| !p.explained && p.literal.as_ref().is_some_and(|l| same_literal(l, value)));
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

    /// A reply under a valid id: its open request's, else its pending line's, else a duplicate, a near miss, a
    /// reply to a notification or an unknown id.
    fn reply_with_id(&mut self, index: usize, id: &RequestId, outcome: Option<&Outcome>) {
        if let Some(slot) = self.open(id) {
            // When the client reused the id while this request was open, which of the twins this reply answers is
            // not known: the MCP layer judges neither. A result is the request's all the same when its twin is a
            // malformed line (which is never to be executed), not one a server may execute.
            let group = self.requests[slot].group;
            let error = matches!(outcome, Some(Outcome::Error(_)));
            let twin = self.requests[slot].twin_line.map(|line| self.pending[line].fault);
            let executable =
                |fault| matches!(fault, Fault::Ambiguous | Fault::BigId | Fault::ExtraMember | Fault::IdMcpForbids);
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
        // An integer id that a pending line's fractional id turns into (go-sdk answers `1.5` as `1`): that line's
        // answer, echoed wrong, though a request sent with the integer was answered already.
        if let Some((pending, literal)) = self.fraction_dropped(id) {
            let event = self.pending[pending].event;
            self.mark_explained(pending, false);
            let detail = format!(
                "the response id {id} is not the id {literal} of the line at event {event} (the number's fraction \
                 dropped): {line}"
            );
            return self.add(ID_ECHO, index, detail);
        }
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
        if let Some(notification) = self.take_notification(false)
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
        // An id beyond ±(2^53 − 1) written back rounded or retyped is the same wire fact whatever the line it came
        // on: JSONRPC-BIG-ID, for a malformed line's as for a request's.
        let (rule, tier) = match fault {
            _ if fault == Fault::BigId || crate::protocol::id::is_big(sent) => {
                (BIG_ID, ", an id beyond ±(2^53 − 1) rounded or retyped")
            }
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
    /// finding. Any other id-less error answers a line of the window whose id could not be read (its code judged
    /// as that line's), else is contested ([`Connection::contest`]): a line with an id of its own that never gets
    /// its reply under it, an ambiguous one quietly, or a notification. A result without an id is always a finding.
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
            Some(Outcome::Error(_)) => {
                // A line whose id could not be read is answered with a null id whatever the code (JSON-RPC 2.0 §5);
                // a code other than -32700/-32600 for a malformed one is that line's finding.
                let unreadable = window
                    .clone()
                    .find(|&p| {
                        !self.pending[p].explained
                            && self.pending[p].literal.is_none()
                            && self.pending[p].ids.is_empty()
                    })
                    .filter(|_| claimable);
                if let Some(pending) = unreadable {
                    self.mark_explained(pending, true);
                    return self.judge(pending, index, outcome);
                }
                // A line with an id of its own may yet get its reply under that id, and a notification of the
                // window may be what the error answers: which of them it is, is settled at the end.
                return self.contest(index, outcome, true);
            }
            None => {}
        }
        if self.stretch_notification().is_some() {
            return self.contest(index, outcome, false);
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

    /// An id-less reply that may answer a line with an id of its own (it may yet get its reply under that id: a big
    /// id, a number id written oddly, an ambiguous line), or a notification of the stretch. An error with such a
    /// line or a request of the stretch still open is settled at the end, when it is known which got a reply under
    /// its id (rmcp refuses a request whose `_meta` is not an object with an id-less -32600; a server that answers
    /// notifications answers one with an id-less -32601 beside a big-id request it answers under its id). Else it
    /// is the notification's (a finding), or an error with nothing to explain it.
    ///
    /// With `any_line` (an error that is no -32700/-32600, which claims no line), lines of the window count, and
    /// a notification sent in the window before replies to other lines; else only what the stretch sent.
    fn contest(&mut self, index: usize, outcome: Option<&Outcome>, any_line: bool) {
        let notification = self.take_notification(any_line);
        let stretch = self.stretch;
        let open: Vec<usize> = match notification {
            Some(_) => (0..self.requests.len())
                .rev()
                .take_while(|&slot| self.requests[slot].event > stretch)
                .filter(|&slot| {
                    let sent = &self.requests[slot];
                    !sent.answered && !sent.cancelled && sent.needs_reply
                })
                .collect(),
            None => Vec::new(),
        };
        let lines: Vec<usize> = (self.window..self.pending.len())
            .filter(|&p| {
                let line = &self.pending[p];
                any_line && !line.explained && (line.literal.is_some() || !line.ids.is_empty())
            })
            .collect();
        let error = matches!(outcome, Some(Outcome::Error(_)));
        if error && (!open.is_empty() || !lines.is_empty()) {
            return self.contested.push(Contested { error: index, notification, requests: open, lines });
        }
        let line = shown(self.transcript, index);
        match notification {
            Some(notification) => self.add(
                NOTIFICATION_REPLY,
                index,
                format!("a reply to the notification at event {notification}: {line}"),
            ),
            None if error => {
                self.add(NULL_ID, index, format!("an error without an id, but no malformed line to explain it: {line}"))
            }
            None => {}
        }
    }

    /// The notification a reply may answer, taken: the latest sent in the current stretch (the stretch starts at
    /// event 0 or at a received line or sync point, which no notification shares); with `window`, else the oldest of
    /// the window no reply was put on yet.
    fn take_notification(&mut self, window: bool) -> Option<usize> {
        if self.stretch_notification().is_some() {
            return self.notifications.pop_back();
        }
        if window { self.notifications.pop_front() } else { None }
    }

    /// The latest notification sent in the current stretch, if no reply was put on it yet.
    fn stretch_notification(&self) -> Option<usize> {
        self.notifications.back().copied().filter(|&notification| notification >= self.stretch)
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
            (Fault::Ambiguous | Fault::BigId | Fault::ExtraMember | Fault::IdMcpForbids, _) => {}
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

    /// The first unexplained pending line sent with a number id with a fraction that truncates or rounds to the
    /// integer `id`, and that number.
    fn fraction_dropped(&self, id: &RequestId) -> Option<(usize, serde_json::Number)> {
        let RequestId::Integer(whole) = id else { return None };
        self.pending.iter().enumerate().find_map(|(at, p)| {
            let Some(serde_json::Value::Number(sent)) = p.literal.as_ref().filter(|_| !p.explained) else {
                return None;
            };
            let dropped = sent.as_f64().is_some_and(|value| crate::protocol::id::fraction_dropped(value, whole));
            dropped.then(|| (at, sent.clone()))
        })
    }

    /// The first unexplained pending line with an id that could be mistaken for this one, and that id.
    fn near_pending(&self, similar: impl Fn(&RequestId) -> bool) -> Option<(usize, RequestId)> {
        let near = |(at, p): (usize, &Pending)| {
            let sent = p.ids.iter().find(|sent| similar(sent))?;
            Some((at, sent.clone()))
        };
        let unexplained = || self.pending.iter().enumerate().filter(|(_, p)| !p.explained);
        // A request owed an answer goes before a malformed line whose id turns into the same (two big ids that round
        // to one double): the reply is the request's.
        unexplained().filter(|(_, p)| p.fault == Fault::BigId).find_map(near).or_else(|| unexplained().find_map(near))
    }
}

/// True when a reply's invalid id is the one a line was sent with: the same JSON value, numbers by their value
/// (a parser may write `2e+3` back as `2000.0`; RFC 8259 §6 leaves a number's text to the writer).
fn same_literal(sent: &serde_json::Value, got: &serde_json::Value) -> bool {
    match (sent, got) {
        (serde_json::Value::Number(a), serde_json::Value::Number(b)) => {
            a == b || a.as_f64().zip(b.as_f64()).is_some_and(|(a, b)| a == b)
        }
        _ => sent == got,
    }
}

/// True for an error with the code JSON-RPC gives malformed input.
fn is_malformed_code(outcome: Option<&Outcome>) -> bool {
    matches!(outcome, Some(Outcome::Error(e)) if e.code == PARSE_ERROR || e.code == INVALID_REQUEST)
}
