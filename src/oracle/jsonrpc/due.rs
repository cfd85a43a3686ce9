//! Deadlines and the end: a sync point (or the close of the connection) makes everything sent so far due, and at
//! the end of the transcript what was due and never came is a finding (a late reply still counts as the answer).

use super::{Connection, Contested, Fault, Pending};
use crate::oracle::rules::{BIG_ID, EXTRA_MEMBER, MALFORMED_REPLY, NOTIFICATION_REPLY, NULL_ID, RESPONSE_MISSING};
use crate::oracle::shown;
use crate::transcript::Ending;

impl Connection<'_> {
    /// A sync point or the end of a closed connection: everything sent so far is due.
    pub(super) fn deadline(&mut self) {
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
    pub(super) fn end(&mut self) {
        for Contested { error: index, notification, requests: open, lines } in std::mem::take(&mut self.contested) {
            let line = shown(self.transcript, index);
            let request = open.iter().map(|&slot| &self.requests[slot]).find(|s| !s.answered && !s.cancelled);
            let pending = lines.into_iter().find(|&p| !self.pending[p].explained);
            match (request.map(|sent| sent.event), pending, notification) {
                (Some(event), _, _) => self.add(
                    NULL_ID,
                    index,
                    format!(
                        "an error without an id, though the request at event {event} (open, and never answered \
                         with its id) had one: {line}"
                    ),
                ),
                (None, Some(pending), _) => {
                    let (event, fault) = (self.pending[pending].event, self.pending[pending].fault);
                    self.pending[pending].explained = true;
                    // Any error may answer an ambiguous line.
                    if fault != Fault::Ambiguous {
                        let detail = format!(
                            "an error without an id, though the line at event {event} (never answered with its id) \
                             had one: {line}"
                        );
                        self.add(NULL_ID, index, detail);
                    }
                }
                (None, None, Some(notification)) => self.add(
                    NOTIFICATION_REPLY,
                    index,
                    format!("a reply to the notification at event {notification}: {line}"),
                ),
                (None, None, None) => self.add(
                    NULL_ID,
                    index,
                    format!("an error without an id, but every line it could answer got its own reply: {line}"),
                ),
            }
        }
        // In a cut transcript, a reply may have come after the cut: no request or malformed line is judged unanswered.
        // A server that hung without writing a line answered nothing: its hang (SERVER-HANG) is the one finding, not
        // each request, big id or malformed line.
        let wrote = self.transcript.received().next().is_some();
        let mute = matches!(self.transcript.ending, Ending::Hung { .. }) && !wrote;
        let cut = matches!(self.transcript.ending, Ending::Cut { .. }) || mute;
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
            if cut || pending.explained || !pending.due || pending.reused {
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
                    Fault::IdMcpForbids => "a request whose id JSON-RPC allows and MCP does not",
                    Fault::Malformed | Fault::NullParams | Fault::BigId | Fault::ExtraMember => "malformed input",
                };
                self.add(MALFORMED_REPLY, pending.event, format!("no -32700/-32600 reply to {what}: {line}"));
            }
        }
    }
}
