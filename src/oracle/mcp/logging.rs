//! The rule MCP-LOG-REQUESTED: in 2026-07-28 a `notifications/message` belongs to a request that asked for log
//! messages (`io.modelcontextprotocol/logLevel` in its `_meta`) and is written while that request is open, before
//! its response. Judged on conversations that sent no `initialize` (a handshake connection logs by
//! `logging/setLevel`, and may send what it decides without it) and sent an enveloped request before the message.
//! The lines are in the order the server wrote them, so whether a message came after a response does not depend on
//! timing.

use super::super::rules::LOG_REQUESTED;
use super::super::{Findings, LayerInput, ServerLine, shown};
use crate::protocol::envelope::{self, LOG_LEVEL_KEY, META};
use crate::protocol::methods::{CANCELLED, INITIALIZE};
use crate::protocol::{Frame, IdField};
use crate::transcript::Event;
use serde_json::Value;

/// The method of a log message.
const MESSAGE: &str = "notifications/message";

/// Judges every log message the server wrote on a conversation that opened no handshake.
pub(super) fn check(input: &LayerInput, findings: &mut Findings) {
    let LayerInput { transcript, reads, answers, .. } = *input;
    let holds = |line: &[u8], needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
    let logs = |event: &Event| matches!(event, Event::Received { line, .. } if holds(line, MESSAGE.as_bytes()));
    if !transcript.events.iter().any(logs) {
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
                let sent: Option<Value> = serde_json::from_slice(line).ok();
                cancelled.extend(sent.as_ref().and_then(|s| s.get("params")?.get("requestId")).cloned());
            }
            (Event::Received { line, .. }, _, Some(ServerLine::Outgoing { id: IdField::Absent }))
                if modern && holds(line, MESSAGE.as_bytes()) =>
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
