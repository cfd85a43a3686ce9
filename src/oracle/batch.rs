//! JSON-RPC batches. On a connection that negotiated 2025-03-26, the one MCP version that has them, a batch array
//! from the client must be accepted and each request in it answered, in an array reply or in separate lines
//! (JSON-RPC 2.0 §6). On one that negotiated 2024-11-05 (which says nothing of batches: base JSON-RPC applies), or
//! before any version was negotiated on a server that serves the handshake era, a batch may be served so, or
//! refused, or dropped. The oracle judges such a connection on its transcript with every array line (sent or
//! received) spread into one event per item, so the JSON-RPC and MCP layers match the items as they match lines;
//! then each finding is put back on the event it came from, and, on 2025-03-26, a request of a batch left
//! unanswered (silence, or one id-less error refusing the whole batch) is [`BATCH`].
//!
//! On every other connection (2025-06-18 and later, 2026-07-28) an array line is what it always was: malformed
//! input from the client, a framing finding from the server.

use super::Finding;
use super::rules::{BATCH, BIG_ID, EXTRA_MEMBER, NOTIFICATION_REPLY, NULL_ID, RESPONSE_MISSING};
use crate::protocol::envelope::META;
use crate::protocol::era::BATCH_VERSION;
use crate::protocol::methods::{CANCELLED, INITIALIZE};
use crate::protocol::{Frame, IdField, RequestId};
use crate::transcript::{Event, Transcript};
use serde_json::Value;
use std::collections::HashMap;

/// The version that says nothing of batches: a batch on it may be served, refused or dropped.
const BASE_JSONRPC_VERSION: &str = "2024-11-05";

/// A transcript with its batch lines spread into items, and the way back to the original events.
pub(super) struct Spread {
    /// The transcript the layers read.
    pub(super) transcript: Transcript,
    /// For each event of [`Spread::transcript`], the event of the original it comes from.
    origin: Vec<usize>,
    /// The batches the client sent where batches are served ([`Batches`]).
    batches: Vec<Batch>,
}

/// A batch the client sent where batches are served.
struct Batch {
    /// Its event in the original transcript.
    event: usize,
    /// How many of its items are valid requests.
    requests: usize,
    /// Every item is a notification.
    notifications: bool,
    /// It carries `initialize`, which 2025-03-26 forbids in a batch (lifecycle.mdx): the server may refuse it.
    forbidden: bool,
    /// The connection negotiated 2025-03-26: the batch must be accepted ([`BATCH`]).
    required: bool,
}

/// What an array line at some point of a conversation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Batches {
    /// 2025-03-26 was negotiated: a batch must be served.
    Required,
    /// 2024-11-05 was negotiated, or nothing yet on a server that serves the handshake era: a batch may be served.
    Optional,
    /// An `initialize` asked for 2025-03-26, was cancelled and got no reply: whether the server took batches is not
    /// known, so a batch it refused is malformed input, and an array it wrote is a batch reply not judged.
    Unknown,
    /// Any other version, or the 2026-07-28 envelope: an array is no message.
    Malformed,
}

/// The transcript spread, or `None` when nothing is to spread: no array line where batches are served (the common
/// case costs one look at each line's first byte). `eras` is what the server model says of the two eras (`None`:
/// not known): an array sent before any negotiation is malformed input on a server that serves no handshake-era
/// version, or after an enveloped request on one that may serve 2026-07-28.
pub(super) fn spread(transcript: &Transcript, eras: (Option<bool>, Option<bool>)) -> Option<Spread> {
    let (handshake_served, modern_served) = (eras.0 != Some(false), eras.1 != Some(false));
    let is_array = |line: &[u8]| line.trim_ascii_start().starts_with(b"[");
    let any_array = transcript.events.iter().any(|event| match event {
        Event::Sent(line) | Event::Received { line, truncated: false } => is_array(line),
        _ => false,
    });
    if !any_array {
        return None;
    }
    let negotiations = negotiations(transcript);
    let first_enveloped = first_enveloped(transcript);
    let mode = |index: usize| match negotiations.iter().rev().find(|n| n.sent < index) {
        Some(n) if n.version == BATCH_VERSION => match n.known {
            true => Batches::Required,
            false => Batches::Unknown,
        },
        Some(n) if n.version == BASE_JSONRPC_VERSION => Batches::Optional,
        Some(_) => Batches::Malformed,
        None if handshake_served && !(modern_served && first_enveloped.is_some_and(|at| at < index)) => {
            Batches::Optional
        }
        None => Batches::Malformed,
    };
    let spreads = |index: usize, line: &[u8]| is_array(line) && mode(index) != Batches::Malformed;
    let spreading = transcript.events.iter().enumerate().any(|(index, event)| match event {
        Event::Sent(line) | Event::Received { line, truncated: false } => spreads(index, line),
        _ => false,
    });
    if !spreading {
        return None;
    }
    let mut spread = Spread {
        transcript: Transcript {
            events: Vec::with_capacity(transcript.events.len()),
            ending: transcript.ending.clone(),
        },
        origin: Vec::with_capacity(transcript.events.len()),
        batches: Vec::new(),
    };
    for (index, event) in transcript.events.iter().enumerate() {
        let items = match event {
            Event::Sent(line) | Event::Received { line, truncated: false } if spreads(index, line) => {
                match serde_json::from_slice::<Value>(line) {
                    Ok(Value::Array(items)) if !items.is_empty() => Some(items),
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(items) = items else {
            spread.transcript.events.push(event.clone());
            spread.origin.push(index);
            continue;
        };
        let sent = matches!(event, Event::Sent(_));
        let mode = mode(index);
        if mode == Batches::Unknown {
            if sent {
                spread.transcript.events.push(event.clone());
                spread.origin.push(index);
            }
            continue;
        }
        if sent {
            let frames: Vec<Frame> = items.iter().map(|item| Frame::classify(item.clone())).collect();
            let requests = frames.iter().filter(|f| matches!(f, Frame::Request(_))).count();
            let forbidden = frames.iter().any(|f| matches!(f, Frame::Request(r) if r.method == INITIALIZE));
            let notifications = frames.iter().all(|f| matches!(f, Frame::Notification(_)));
            let required = mode == Batches::Required;
            spread.batches.push(Batch { event: index, requests, notifications, forbidden, required });
        }
        for item in items {
            let line = serde_json::to_vec(&item).unwrap_or_default();
            spread.transcript.events.push(if sent {
                Event::Sent(line)
            } else {
                Event::Received { line, truncated: false }
            });
            spread.origin.push(index);
        }
    }
    Some(spread)
}

/// The first sent line that carries the 2026-07-28 envelope (`params._meta` with a protocol version): from there
/// on the conversation speaks that era, where an array is no message.
fn first_enveloped(transcript: &Transcript) -> Option<usize> {
    transcript.events.iter().position(|event| {
        let Event::Sent(line) = event else { return false };
        let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) else { return false };
        let meta = message.get("params").and_then(|params| params.get(META));
        meta.and_then(|meta| meta.get(crate::protocol::envelope::PROTOCOL_VERSION_KEY)).is_some()
    })
}

impl Spread {
    /// The findings on the spread transcript, put back on the original events: a request of a batch left
    /// unanswered is one [`BATCH`] finding for its batch, and an id-less error that refused a batch is part of it,
    /// not a [`NULL_ID`] or [`NOTIFICATION_REPLY`] of its own.
    ///
    /// Each id-less refusal the layers could not explain goes to the earliest batch before it that got no reply
    /// by id to any of its requests and no refusal yet (a server answers in order; a batch of notifications, or one
    /// whose requests were all cancelled, owes no reply, so a refusal is the only sign it was refused). A refusal
    /// with no such batch left, after a batch that carried `initialize` (which may be refused) or one already
    /// refused, is dropped too: a server that refuses a batch may answer it with more than one id-less error.
    pub(super) fn put_back(&self, findings: Vec<Finding>, original: &Transcript) -> Vec<Finding> {
        let batch_at = |event: usize| self.batches.iter().position(|b| b.event == event);
        // Per batch: its requests left without a response, and the refusal it got.
        let mut silent = vec![0; self.batches.len()];
        let mut refused_at: Vec<Option<usize>> = vec![None; self.batches.len()];
        let mut kept = Vec::with_capacity(findings.len());
        for mut finding in findings {
            finding.detail = self.renumbered(&finding.detail, finding.event);
            let event = finding.event.map(|e| self.origin[e]);
            finding.event = event;
            // An item of a batch that got no response is the batch's finding, whatever its id or members. These
            // three rules point at a sent line only for its silence (a rounded big id points at the reply), and
            // `batch_at` finds sent batches only, so a big id or an extra member is judged on its own only where a
            // reply came.
            let silence = matches!(finding.rule, RESPONSE_MISSING | BIG_ID | EXTRA_MEMBER);
            if silence && let Some(batch) = event.and_then(batch_at) {
                if !self.batches[batch].forbidden {
                    silent[batch] += 1;
                }
                continue;
            }
            kept.push(finding);
        }
        let answered = self.answered_by_id();
        let refusal = |finding: &Finding| {
            matches!(finding.rule, NULL_ID | NOTIFICATION_REPLY)
                && finding.event.is_some_and(|at| idless_refusal(original, at))
        };
        let mut dropped = vec![false; kept.len()];
        for (k, finding) in kept.iter().enumerate() {
            let Some(at) = finding.event.filter(|_| refusal(finding)) else { continue };
            let before = |batch: &usize| self.batches[*batch].event < at;
            // A batch where batches are optional may be refused whatever else answered its items (an id it
            // reused, say): a refusal after it is never a finding of its own.
            let open = (0..self.batches.len()).filter(before).find(|&b| {
                let batch = &self.batches[b];
                !batch.forbidden && (!answered[b] || !batch.required) && refused_at[b].is_none()
            });
            if let Some(batch) = open {
                refused_at[batch] = Some(at);
                dropped[k] = true;
            } else {
                dropped[k] = (0..self.batches.len()).filter(before).any(|b| {
                    let batch = &self.batches[b];
                    batch.forbidden || !batch.required || refused_at[b].is_some() || silent[b] > 0
                });
            }
        }
        let mut dropped = dropped.into_iter();
        kept.retain(|_| !dropped.next().unwrap_or(false));
        for (batch, b) in self.batches.iter().enumerate() {
            // A batch holding no request MCP allows and not only notifications (`[{}]`, a request with id `1.5`) may
            // be refused: its refusal says nothing of whether the server takes batches.
            let nothing_valid = b.requests == 0 && !b.notifications;
            let served = silent[batch] == 0 && refused_at[batch].is_none();
            if !b.required || b.forbidden || nothing_valid || served {
                continue;
            }
            let how = refused_at[batch].map_or_else(
                || "no response came".to_string(),
                |at| format!("the server refused the batch with the id-less error at event {at}"),
            );
            let what = match silent[batch] {
                0 if b.notifications => "the batch of notifications was refused".to_string(),
                0 => "the batch was refused".to_string(),
                count => format!("{count} of the {} requests in the batch got no response", b.requests),
            };
            let detail = format!(
                "{what} on a {BATCH_VERSION} connection, which must accept batches ({how}): {}",
                super::shown(original, b.event)
            );
            kept.push(Finding {
                rule: BATCH,
                level: super::rules::rule(BATCH).map_or(super::Level::Error, |r| r.level),
                event: Some(b.event),
                detail,
            });
        }
        kept
    }

    /// For each batch, true when a request of it got a reply carrying its id (as a line of its own or in an array
    /// reply), read in one pass over the spread transcript; not when a line of its own sent the id again before the
    /// reply (which of the two the reply answers is not known).
    fn answered_by_id(&self) -> Vec<bool> {
        let mut answered = vec![false; self.batches.len()];
        let batch_of: HashMap<usize, usize> =
            self.batches.iter().enumerate().map(|(b, batch)| (batch.event, b)).collect();
        // The batches with a request under each id, as sent so far.
        let mut sent: HashMap<RequestId, Vec<usize>> = HashMap::new();
        for (index, event) in self.transcript.events.iter().enumerate() {
            match event {
                Event::Sent(line) => match (batch_of.get(&self.origin[index]), Frame::parse(line)) {
                    (Some(&batch), Frame::Request(request)) => sent.entry(request.id).or_default().push(batch),
                    // A line of its own that uses the id again (the client reused it): a reply with that id is no
                    // sign that a batch before it was answered.
                    (None, Frame::Request(request)) => {
                        sent.remove(&request.id);
                    }
                    _ => {}
                },
                Event::Received { line, .. } if !sent.is_empty() => {
                    let reply = serde_json::from_slice::<Value>(line).ok();
                    if let Some(IdField::Valid(id)) = reply.map(|r| IdField::of(r.get("id")))
                        && let Some(batches) = sent.get(&id)
                    {
                        for &batch in batches.iter().filter(|&&b| self.batches[b].event < self.origin[index]) {
                            answered[batch] = true;
                        }
                    }
                }
                _ => {}
            }
        }
        answered
    }

    /// A finding's text with the events it names ("event N") numbered as in the original transcript. The line it
    /// quotes at its end (the one at `event` of the spread transcript) is the server's or client's bytes, kept as
    /// they are.
    fn renumbered(&self, detail: &str, event: Option<usize>) -> String {
        let quote = event.map(|e| super::shown(&self.transcript, e)).unwrap_or_default();
        let (text, quote) = match detail.strip_suffix(quote.as_str()) {
            Some(text) if !quote.is_empty() => (text, quote.as_str()),
            _ => (detail, ""),
        };
        let mut out = String::with_capacity(detail.len());
        let mut rest = text;
        while let Some(at) = rest.find("event ") {
            let (head, tail) = rest.split_at(at + "event ".len());
            out.push_str(head);
            let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
            match tail[..digits].parse::<usize>().ok().and_then(|n| self.origin.get(n)) {
                Some(original) => out.push_str(&original.to_string()),
                None => out.push_str(&tail[..digits]),
            }
            rest = &tail[digits..];
        }
        out.push_str(rest);
        out.push_str(quote);
        out
    }
}

/// True when the line at `event` is an error response without an id (or with a null one).
fn idless_refusal(transcript: &Transcript, event: usize) -> bool {
    let Some(Event::Received { line, .. }) = transcript.events.get(event) else { return false };
    serde_json::from_slice::<Value>(line).is_ok_and(|reply| {
        reply.get("error").is_some() && matches!(IdField::of(reply.get("id")), IdField::Null | IdField::Absent)
    })
}

/// A version an `initialize` negotiated.
struct Negotiation {
    /// The event of the `initialize`.
    sent: usize,
    /// The version its result names (or, unknown, the one it asked for).
    version: String,
    /// False when the `initialize` asked for 2025-03-26, was cancelled and got no reply at all: the server may have
    /// negotiated it or not.
    known: bool,
}

/// Every version an `initialize` negotiated, in the order they were asked for: one that got a result names the
/// version of that result, wherever the result comes (a server answers `initialize` before it reads what follows,
/// but its reply may be written after the replies to later lines, a batch's array among them); one that asked for
/// 2025-03-26, was cancelled and got no reply is that version, not known.
fn negotiations(transcript: &Transcript) -> Vec<Negotiation> {
    let mut asked: Vec<(RequestId, usize, Option<String>)> = Vec::new();
    let mut found = Vec::new();
    for (index, event) in transcript.events.iter().enumerate() {
        match event {
            Event::Sent(line) => {
                if let Frame::Request(request) = Frame::parse(line)
                    && request.method == INITIALIZE
                {
                    asked.push((request.id, index, version(request.params.as_ref()).map(str::to_string)));
                }
            }
            Event::Received { line, truncated: false } if !asked.is_empty() => {
                let Ok(reply) = serde_json::from_slice::<Value>(line) else { continue };
                if let IdField::Valid(id) = IdField::of(reply.get("id"))
                    && let Some(at) = asked.iter().position(|(asked, _, _)| *asked == id)
                    && let Some(negotiated) = version(reply.get("result"))
                {
                    let (_, sent, _) = asked.remove(at);
                    found.push(Negotiation { sent, version: negotiated.to_string(), known: true });
                }
            }
            _ => {}
        }
    }
    let unknown = asked
        .into_iter()
        .filter(|(id, _, version)| version.as_deref() == Some(BATCH_VERSION) && cancelled_unanswered(transcript, id));
    found.extend(unknown.map(|(_, sent, _)| Negotiation { sent, version: BATCH_VERSION.to_string(), known: false }));
    found.sort_by_key(|n| n.sent);
    found
}

/// True when the client cancelled the request with this id and no reply carries the id.
fn cancelled_unanswered(transcript: &Transcript, id: &RequestId) -> bool {
    let mut cancelled = false;
    for event in &transcript.events {
        match event {
            Event::Sent(line) => {
                if let Frame::Notification(notification) = Frame::parse(line)
                    && notification.method == CANCELLED
                    && let IdField::Valid(cancel) =
                        IdField::of(notification.params.as_ref().and_then(|p| p.get("requestId")))
                {
                    cancelled |= cancel == *id;
                }
            }
            Event::Received { line, .. } => {
                let reply = serde_json::from_slice::<Value>(line).ok();
                if reply.is_some_and(|r| IdField::of(r.get("id")) == IdField::Valid(id.clone())) {
                    return false;
                }
            }
            Event::Sync | Event::Http(_) | Event::Note(_) => {}
        }
    }
    cancelled
}

/// The `protocolVersion` string member of an object.
fn version(object: Option<&Value>) -> Option<&str> {
    object?.get("protocolVersion")?.as_str()
}

#[cfg(test)]
mod tests {
    use super::super::{Policy, check};
    use super::*;
    use crate::protocol::codes::INVALID_REQUEST;
    use crate::server::builtin::reference::Calc;
    use crate::server::run_in_process;
    use crate::transcript::{Ending, Input};

    const FRAMING: &str = super::super::rules::FRAMING;
    const MALFORMED_REPLY: &str = super::super::rules::MALFORMED_REPLY;

    fn init(version: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        )
    }

    fn init_ok(version: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"s","version":"1"}}}}}}"#
        )
    }

    const BATCH_2: &str =
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#;
    const REFUSAL: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no batches"}}"#;

    /// The rules broken when `replies` answer [`BATCH_2`] after a handshake at `version`, under `policy`.
    fn rules(version: &str, sent: &str, replies: &[&str], policy: &Policy) -> Vec<&'static str> {
        let mut events = vec![
            Event::Sent(init(version).into_bytes()),
            Event::Received { line: init_ok(version).into_bytes(), truncated: false },
            Event::Sync,
            Event::Sent(sent.as_bytes().to_vec()),
        ];
        events.extend(replies.iter().map(|r| Event::Received { line: r.as_bytes().to_vec(), truncated: false }));
        events.push(Event::Sync);
        check(&Transcript { events, ending: Ending::Closed }, policy).into_iter().map(|f| f.rule).collect()
    }

    #[test]
    fn a_batch_answered_in_an_array_or_in_lines_is_clean_on_2025_03_26() {
        let array = r#"[{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}, {"jsonrpc":"2.0","id":1,"result":{}}]"#;
        let strict = Policy::default().deny(MALFORMED_REPLY).unwrap();
        assert_eq!(rules("2025-03-26", BATCH_2, &[array], &strict), Vec::<&str>::new());
        let lines = [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#];
        assert_eq!(rules("2025-03-26", BATCH_2, &lines, &strict), Vec::<&str>::new());
        let notes = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
        assert_eq!(rules("2025-03-26", notes, &[], &strict), Vec::<&str>::new());
        assert_eq!(rules("2025-03-26", "[]", &[REFUSAL], &strict), Vec::<&str>::new());
        assert_eq!(rules("2025-03-26", "[]", &[], &Policy::default()), Vec::<&str>::new());
    }

    #[test]
    fn a_batch_refused_whole_is_one_batch_finding_when_a_line_uses_its_id_again() {
        // A published server with no SDK: the batch refused with one id-less error, then a line of its own with the
        // batch's id answered by id. The refusal is the batch's (MCP-BATCH), not a NULL-ID of its own.
        let batch = r#"[{"jsonrpc":"2.0","id":"2","method":""}]"#;
        let again = r#"{"jsonrpc":"2.0","id":"2","method":""}"#;
        let answer = r#"{"jsonrpc":"2.0","id":"2","error":{"code":-32600,"message":"initialize first"}}"#;
        let events = vec![
            Event::Sent(init("2025-03-26").into_bytes()),
            Event::Sent(batch.as_bytes().to_vec()),
            Event::Sent(again.as_bytes().to_vec()),
            Event::Received { line: init_ok("2025-03-26").into_bytes(), truncated: false },
            Event::Received { line: REFUSAL.as_bytes().to_vec(), truncated: false },
            Event::Received { line: answer.as_bytes().to_vec(), truncated: false },
            Event::Sync,
        ];
        let found = check(&Transcript { events, ending: Ending::Closed }, &Policy::default());
        assert_eq!(found.iter().map(|f| f.rule).collect::<Vec<_>>(), [BATCH], "{found:#?}");
        // Without the line that uses the id again, the same refusal is the batch's as before.
        assert_eq!(rules("2025-03-26", batch, &[REFUSAL], &Policy::default()), [BATCH]);
    }

    #[test]
    fn an_array_reply_written_before_the_initialize_reply_is_the_batch_s() {
        // The quirky server's shrunk case: initialize and a batch pipelined, the array reply first.
        let array = r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]"#;
        let events = vec![
            Event::Sent(init("2025-03-26").into_bytes()),
            Event::Sent(BATCH_2.as_bytes().to_vec()),
            Event::Received { line: array.as_bytes().to_vec(), truncated: false },
            Event::Received { line: init_ok("2025-03-26").into_bytes(), truncated: false },
            Event::Sync,
        ];
        let found = check(&Transcript { events, ending: Ending::Closed }, &Policy::default());
        assert_eq!(found, Vec::new());
    }

    #[test]
    fn after_a_cancelled_unanswered_initialize_a_batch_is_not_judged() {
        // The quirky server's shrunk case: the client cancelled its initialize, whose reply was then dropped.
        let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}"#;
        let array = r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]"#;
        let run = |replies: &[&str]| {
            let mut events = vec![
                Event::Sent(init("2025-03-26").into_bytes()),
                Event::Sent(cancel.as_bytes().to_vec()),
                Event::Sent(BATCH_2.as_bytes().to_vec()),
            ];
            events.extend(replies.iter().map(|r| Event::Received { line: r.as_bytes().to_vec(), truncated: false }));
            events.push(Event::Sync);
            check(&Transcript { events, ending: Ending::Closed }, &Policy::default())
        };
        assert_eq!(run(&[array]), Vec::new());
        assert_eq!(run(&[]), Vec::new());
        // A server that did not take 2025-03-26 refuses the batch as malformed input: no reply to the cancel.
        assert_eq!(run(&[REFUSAL]), Vec::new());
        // Not cancelled, an initialize left unanswered is still a missing response (and no batch is judged).
        let events = vec![Event::Sent(init("2025-03-26").into_bytes()), Event::Sync];
        let found = check(&Transcript { events, ending: Ending::Closed }, &Policy::default());
        assert_eq!(found.iter().map(|f| f.rule).collect::<Vec<_>>(), [RESPONSE_MISSING]);
    }

    #[test]
    fn a_refused_batch_that_holds_no_request_mcp_allows_is_no_batch_finding() {
        // What a minimization of a refused batch must not shrink to: an empty object, a request whose id MCP forbids.
        for batch in [r#"[{}]"#, r#"[{"jsonrpc":"2.0","id":1.5,"method":"ping"}]"#, "[1]"] {
            assert_eq!(rules("2025-03-26", batch, &[REFUSAL], &Policy::default()), Vec::<&str>::new(), "{batch}");
            assert_eq!(rules("2025-03-26", batch, &[], &Policy::default()), Vec::<&str>::new(), "{batch}");
        }
        // One valid request beside them, and the refusal is the batch's.
        let mixed = r#"[{},{"jsonrpc":"2.0","id":1,"method":"ping"}]"#;
        assert_eq!(rules("2025-03-26", mixed, &[REFUSAL], &Policy::default()), [BATCH]);
    }

    #[test]
    fn a_refused_batch_of_notifications_breaks_the_batch_rule_once() {
        // rmcp 3.11.0 refuses any batch, even one of notifications, with an id-less -32600.
        let notes = r#"[{"jsonrpc":"2.0","method":""}]"#;
        assert_eq!(rules("2025-03-26", notes, &[REFUSAL], &Policy::default()), vec![BATCH]);
        assert_eq!(rules("2025-03-26", notes, &[], &Policy::default()), Vec::<&str>::new());
    }

    /// The findings (rule, event) of a 2025-03-26 session: the handshake (events 0 to 2), then `lines` (sent
    /// ones start with `>> `, received ones with `<< `), a sync point and the end.
    fn session(lines: &[&str]) -> Vec<(&'static str, Option<usize>)> {
        let mut events = vec![
            Event::Sent(init("2025-03-26").into_bytes()),
            Event::Received { line: init_ok("2025-03-26").into_bytes(), truncated: false },
            Event::Sync,
        ];
        for line in lines {
            let (direction, text) = line.split_at(3);
            events.push(match direction {
                ">> " => Event::Sent(text.as_bytes().to_vec()),
                _ => Event::Received { line: text.as_bytes().to_vec(), truncated: false },
            });
        }
        events.push(Event::Sync);
        let found = check(&Transcript { events, ending: Ending::Closed }, &Policy::default());
        found.into_iter().map(|f| (f.rule, f.event)).collect()
    }

    #[test]
    fn a_refusal_after_a_batch_whose_requests_were_cancelled_refuses_that_batch() {
        // rmcp 3.11.0: the batch's one request cancelled after it (or inside it); the id-less -32600 that refuses
        // the batch was a reply to the cancel notification to a first oracle.
        let one = r#">> [{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#;
        let cancel = r#">> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
        let refusal = format!("<< {REFUSAL}");
        assert_eq!(session(&[one, cancel, &refusal]), [(BATCH, Some(3))]);
        let inside = r#">> [{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}]"#;
        assert_eq!(session(&[inside, &refusal]), [(BATCH, Some(3))]);
        // Cancelled and not refused: nothing owed, nothing found.
        assert_eq!(session(&[one, cancel]), []);
        // Two batches, both refusals after the second: each batch is refused once, in order.
        let notes = r#">> [{"jsonrpc":"2.0","method":"notifications/wirefuzz"}]"#;
        assert_eq!(session(&[notes, inside, &refusal, &refusal]), [(BATCH, Some(3)), (BATCH, Some(4))]);
    }

    #[test]
    fn a_batch_answered_by_id_takes_no_refusal_and_a_reply_to_a_later_notification_is_still_found() {
        let one = r#">> [{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#;
        let answer = r#"<< [{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]"#;
        let note = r#">> {"jsonrpc":"2.0","method":"notifications/wirefuzz"}"#;
        let refusal = format!("<< {REFUSAL}");
        assert_eq!(session(&[one, answer, note]), []);
        assert_eq!(session(&[one, answer, note, &refusal]), [(NOTIFICATION_REPLY, Some(6))]);
        // With no batch at all, the same reply is the notification's.
        assert_eq!(session(&[note, &refusal]), [(NOTIFICATION_REPLY, Some(4))]);
        // The events a finding's text names are the original transcript's, not the spread one's.
        let answers = r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]"#;
        let mut events = vec![
            Event::Sent(init("2025-03-26").into_bytes()),
            Event::Received { line: init_ok("2025-03-26").into_bytes(), truncated: false },
            Event::Sync,
            Event::Sent(BATCH_2.as_bytes().to_vec()),
            Event::Received { line: answers.as_bytes().to_vec(), truncated: false },
        ];
        events.push(Event::Sent(note.as_bytes()[3..].to_vec()));
        events.push(Event::Received { line: REFUSAL.as_bytes().to_vec(), truncated: false });
        let found = check(&Transcript { events: events.clone(), ending: Ending::Closed }, &Policy::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].detail.starts_with("a reply to the notification at event 5:"), "{found:?}");
        // The line a finding quotes is left as the server wrote it, numbers after "event " included.
        let quoted = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"bad event 7"}}"#;
        let last = events.len() - 1;
        events[last] = Event::Received { line: quoted.as_bytes().to_vec(), truncated: false };
        let found = check(&Transcript { events, ending: Ending::Closed }, &Policy::default());
        assert!(found[0].detail.starts_with("a reply to the notification at event 5:"), "{found:?}");
        assert!(found[0].detail.ends_with(r#""bad event 7"}}"#), "{found:?}");
    }

    #[test]
    fn silence_or_a_refusal_breaks_the_batch_rule_on_2025_03_26() {
        let policy = Policy::default();
        assert_eq!(rules("2025-03-26", BATCH_2, &[], &policy), vec![BATCH]);
        assert_eq!(rules("2025-03-26", BATCH_2, &[REFUSAL], &policy), vec![BATCH]);
        let half = [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#];
        assert_eq!(rules("2025-03-26", BATCH_2, &half, &policy), vec![BATCH]);
        let twice = r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]"#;
        assert_eq!(rules("2025-03-26", BATCH_2, &[twice], &policy), vec![super::super::rules::DUPLICATE_RESPONSE]);
    }

    #[test]
    fn on_other_versions_a_batch_stays_malformed() {
        let array = r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]"#;
        assert_eq!(rules("2025-06-18", BATCH_2, &[array], &Policy::default()), vec![FRAMING]);
        assert_eq!(rules("2025-06-18", BATCH_2, &[REFUSAL], &Policy::default()), Vec::<&str>::new());
        assert_eq!(rules("2025-06-18", BATCH_2, &[], &Policy::default()), Vec::<&str>::new());
        let strict = Policy::default().deny(MALFORMED_REPLY).unwrap();
        assert_eq!(rules("2025-06-18", BATCH_2, &[], &strict), vec![MALFORMED_REPLY]);
        // The server chose another version: no batches.
        let mut events = vec![Event::Sent(init("2025-03-26").into_bytes())];
        events.push(Event::Received { line: init_ok("2025-06-18").into_bytes(), truncated: false });
        events.push(Event::Sent(BATCH_2.as_bytes().to_vec()));
        assert!(spread(&Transcript { events, ending: Ending::Closed }, (None, None)).is_none());
        // A modern conversation: the envelope says which era, and an array is no message in it.
        let modern = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let events = vec![Event::Sent(modern.as_bytes().to_vec()), Event::Sent(BATCH_2.as_bytes().to_vec())];
        assert!(spread(&Transcript { events, ending: Ending::Closed }, (None, None)).is_none());
    }

    #[test]
    fn on_2024_11_05_or_before_any_version_a_batch_may_be_served_refused_or_dropped() {
        let array = r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]"#;
        let policy = Policy::default();
        for replies in [&[array][..], &[REFUSAL], &[]] {
            assert_eq!(rules("2024-11-05", BATCH_2, replies, &policy), Vec::<&str>::new(), "{replies:?}");
        }
        // Its items are still judged: an id answered under another (go-sdk truncates 1.5 to 1).
        let truncated = r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#;
        let odd = r#"[{"jsonrpc":"2.0","id":1.5,"method":"ping"}]"#;
        assert!(rules("2024-11-05", odd, &[truncated], &policy).contains(&super::super::rules::ID_ECHO));
        // Before any initialize: base JSON-RPC, unless the server serves no handshake-era version.
        let first = |replies: &[&str]| {
            let mut events = vec![Event::Sent(BATCH_2.as_bytes().to_vec())];
            events.extend(replies.iter().map(|r| Event::Received { line: r.as_bytes().to_vec(), truncated: false }));
            Transcript { events, ending: Ending::Closed }
        };
        let found: Vec<_> = check(&first(&[array]), &policy).into_iter().map(|f| f.rule).collect();
        assert_eq!(found, Vec::<&str>::new());
        assert!(
            spread(&first(&[array]), (Some(false), None)).is_none(),
            "a modern-only server's stays a framing fault"
        );
        // An enveloped request first: the connection may be modern, unless the server serves no 2026-07-28.
        let modern = r#"{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let mut after = first(&[array]);
        after.events.insert(0, Event::Sent(modern.as_bytes().to_vec()));
        assert!(spread(&after, (None, None)).is_none(), "it may be modern");
        assert!(spread(&after, (Some(true), Some(false))).is_some(), "podman (go-sdk 1.3.1) serves no 2026-07-28");
        // Refused whole, though a request in it reuses an id answered by id after it (calc, before any initialize).
        let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{}}}"#;
        let reusing =
            r#"[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"method":"ping"}]"#;
        let refused = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"MCP does not accept batches"}}"#;
        let not_yet = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"not initialized"}}"#;
        let received = |line: &str| Event::Received { line: line.as_bytes().to_vec(), truncated: false };
        let events = vec![
            Event::Sent(call.as_bytes().to_vec()),
            Event::Sent(reusing.as_bytes().to_vec()),
            Event::Sent(b"[]".to_vec()),
            received(not_yet),
            received(refused),
            received(refused),
            Event::Sync,
        ];
        let found = check(&Transcript { events, ending: Ending::Closed }, &policy);
        assert_eq!(found.iter().map(|f| f.rule).collect::<Vec<_>>(), Vec::<&str>::new(), "{found:#?}");
    }

    #[test]
    fn the_reference_server_serves_batches_on_2025_03_26_only() {
        let talk = |version: &str, batch: &str| {
            let inputs = [init(version), batch.to_string()].map(|l| Input::Line(l.into_bytes()));
            let transcript = run_in_process(&Calc, &inputs);
            let findings = check(&transcript, &Policy::default().deny(MALFORMED_REPLY).unwrap());
            assert!(findings.is_empty(), "{findings:#?}\n{}", transcript.render());
            let Some(Event::Received { line, .. }) = transcript.events.last() else { return Value::Null };
            serde_json::from_slice::<Value>(line).unwrap()
        };
        let reply = talk("2025-03-26", BATCH_2);
        assert_eq!((reply[0]["id"].clone(), reply[1]["id"].clone()), (1.into(), 2.into()));
        assert_eq!(talk("2025-06-18", BATCH_2)["error"]["code"], INVALID_REQUEST);
        assert_eq!(talk("2025-03-26", "[]")["error"]["code"], INVALID_REQUEST);
        let with_bad_item = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},7]"#;
        assert_eq!(talk("2025-03-26", with_bad_item)[1]["error"]["code"], INVALID_REQUEST);
    }
}
