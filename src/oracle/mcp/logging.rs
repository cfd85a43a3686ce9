//! The logging rules. MCP-LOG-REQUESTED: in 2026-07-28 a `notifications/message` belongs to a request that asked
//! for log messages (`io.modelcontextprotocol/logLevel` in its `_meta`) and is written while that request is open,
//! before its response. Judged on conversations that sent no `initialize` (a handshake connection logs by
//! `logging/setLevel`, and may send what it decides without it) and sent an enveloped request before the message.
//! MCP-LOG-LEVEL: a message is at or above the level asked for, where the message can be tied to requests that
//! asked ([`check_levels`]). The lines are in the order the server wrote them, so whether a message came after a
//! response does not depend on timing.

use super::super::rules::{LOG_LEVEL, LOG_REQUESTED};
use super::super::{Findings, LayerInput, ServerLine, shown};
use crate::protocol::Outcome;
use crate::protocol::envelope::{self, LOG_LEVEL_KEY, META};
use crate::protocol::logging::{LOG_LEVELS, level_index};
use crate::protocol::methods::{CANCELLED, INITIALIZE, SET_LEVEL};
use crate::protocol::{Frame, IdField};
use crate::transcript::Event;
use serde_json::Value;

/// The method of a log message.
const MESSAGE: &str = "notifications/message";

/// Judges every log message the server wrote on a conversation that opened no handshake.
pub(super) fn check(input: &LayerInput, findings: &mut Findings) {
    let LayerInput { transcript, reads, answers, .. } = *input;
    if !transcript.events.iter().any(|event| matches!(event, Event::Received { line, .. } if names_message(line))) {
        return;
    }
    // (where its response is, its id) of each request that asked for log messages.
    let mut asking: Vec<(Option<usize>, Value)> = Vec::new();
    let mut cancelled: Vec<Value> = Vec::new();
    let mut modern = false;
    for (index, (event, read)) in transcript.events.iter().zip(reads).enumerate() {
        match (event, read.sent(), read.server_line()) {
            (Event::Sent(_), Some((Frame::Request(request), _)), _) if request.method == INITIALIZE => return,
            (Event::Sent(line), Some((Frame::Request(request), _)), _) => {
                let sent: Option<Value> = serde_json::from_slice(line).ok();
                let params = sent.as_ref().and_then(|sent| sent.get("params"));
                modern |= envelope::carries_modern_envelope(&request.method, params);
                if params.and_then(|p| p.get(META)?.get(LOG_LEVEL_KEY)).is_some() {
                    asking.push((answers[index], request.id.to_value()));
                }
            }
            (Event::Sent(line), Some((Frame::Notification(note), _)), _) if note.method == CANCELLED => {
                cancelled.extend(cancelled_request(line));
            }
            (Event::Received { line, .. }, _, Some(ServerLine::Outgoing { id: IdField::Absent }))
                if modern && names_message(line) =>
            {
                let method = serde_json::from_slice::<Value>(line).ok().and_then(|m| m.get("method").cloned());
                if method.as_ref().and_then(Value::as_str) != Some(MESSAGE) {
                    continue;
                }
                let open = asking
                    .iter()
                    .any(|(answered, id)| answered.is_none_or(|answered| answered > index) || cancelled.contains(id));
                if !open {
                    let detail = "a log message while no request that asked for one (io.modelcontextprotocol/logLevel \
                                  in its _meta) was open";
                    findings.add(LOG_REQUESTED, Some(index), format!("{detail}: {}", shown(transcript, index)));
                }
            }
            _ => {}
        }
    }
}

/// Whether a server line names the log message method (a byte search, before any parse).
fn names_message(line: &[u8]) -> bool {
    line.windows(MESSAGE.len()).any(|w| w == MESSAGE.as_bytes())
}

/// The `requestId` a sent `notifications/cancelled` line names.
fn cancelled_request(line: &[u8]) -> Option<Value> {
    serde_json::from_slice::<Value>(line).ok()?.get("params")?.get("requestId").cloned()
}

/// A request the conversation sent, as MCP-LOG-LEVEL reads it.
struct Asked {
    /// Its event.
    sent: usize,
    /// The event of its response, if one came.
    answered: Option<usize>,
    /// The log level its `_meta` asked for (2026-07-28), as an index in [`LOG_LEVELS`].
    level: Option<usize>,
    /// Its id.
    id: Value,
}

/// MCP-LOG-LEVEL: judges every log message whose level is below the level asked for, where the message can be tied
/// to the asking: on a handshake connection (one that sent `initialize`), the last `logging/setLevel` whose result
/// came before the message, when every request open at the message was sent after that result; in 2026-07-28,
/// the lowest level the open requests asked for in their `_meta`. Messages written with no request open are not
/// judged (a server may log on its own schedule).
pub(super) fn check_levels(input: &LayerInput, findings: &mut Findings) {
    let LayerInput { transcript, reads, answers, .. } = *input;
    if !transcript.events.iter().any(|event| matches!(event, Event::Received { line, .. } if names_message(line))) {
        return;
    }
    let result_at = |at: usize| {
        matches!(reads[at].server_line(), Some(ServerLine::Reply { outcome: Some(Outcome::Result(_)), .. }))
    };
    let mut handshake = false;
    // (the event of its result, the level) of each `logging/setLevel` that got a result.
    let mut set: Vec<(usize, usize)> = Vec::new();
    let mut asked: Vec<Asked> = Vec::new();
    let mut cancelled: Vec<Value> = Vec::new();
    for (index, (event, read)) in transcript.events.iter().zip(reads).enumerate() {
        match (event, read.sent(), read.server_line()) {
            (Event::Sent(line), Some((Frame::Request(request), _)), _) => {
                let sent: Option<Value> = serde_json::from_slice(line).ok();
                let params = sent.as_ref().and_then(|sent| sent.get("params"));
                handshake |= request.method == INITIALIZE;
                let named = |value: Option<&Value>| value.and_then(Value::as_str).and_then(level_index);
                if request.method == SET_LEVEL
                    && let (Some(level), Some(at)) = (named(params.and_then(|p| p.get("level"))), answers[index])
                    && result_at(at)
                {
                    set.push((at, level));
                }
                let level = named(params.and_then(|p| p.get(META)?.get(LOG_LEVEL_KEY)));
                asked.push(Asked { sent: index, answered: answers[index], level, id: request.id.to_value() });
            }
            (Event::Sent(line), Some((Frame::Notification(note), _)), _) if note.method == CANCELLED => {
                cancelled.extend(cancelled_request(line));
            }
            (Event::Received { line, .. }, _, Some(ServerLine::Outgoing { id: IdField::Absent }))
                if names_message(line) =>
            {
                let Ok(message) = serde_json::from_slice::<Value>(line) else { continue };
                if message.get("method").and_then(Value::as_str) != Some(MESSAGE) {
                    continue;
                }
                let Some(level) = message.get("params").and_then(|p| p.get("level")?.as_str()).and_then(level_index)
                else {
                    continue;
                };
                let open: Vec<&Asked> = asked
                    .iter()
                    .filter(|a| a.answered.is_none_or(|at| at > index) && !cancelled.contains(&a.id))
                    .collect();
                if open.is_empty() {
                    continue;
                }
                let least = match handshake {
                    true => set
                        .iter()
                        .filter(|(at, _)| *at < index)
                        .max_by_key(|(at, _)| *at)
                        .filter(|(at, _)| open.iter().all(|a| a.sent > *at))
                        .map(|(_, level)| *level),
                    false => open.iter().filter_map(|a| a.level).min(),
                };
                if let Some(least) = least.filter(|least| level < *least) {
                    let (got, asked) = (LOG_LEVELS[level], LOG_LEVELS[least]);
                    let detail = format!("a log message at level {got}, below the {asked} the client asked for");
                    findings.add(LOG_LEVEL, Some(index), format!("{detail}: {}", shown(transcript, index)));
                }
            }
            _ => {}
        }
    }
}
