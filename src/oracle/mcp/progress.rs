//! The rule MCP-PROGRESS: a `notifications/progress` carries the progress token of a request that is still
//! active (sent before it, its response not yet written, not cancelled by the client; a task-augmented request's
//! token lasts as long as its task), and its `progress` is above the last one for that token. Tokens are compared
//! as exact JSON values; the lines are in the order the server wrote them, so whether a notification came after its
//! request's response does not depend on timing. A token two requests carried (a line the client sent twice) is
//! not judged: whose progress it reports cannot be told.

use super::super::rules::PROGRESS;
use super::super::{Findings, LayerInput, ServerLine, shown};
use crate::protocol::envelope::{META, PROGRESS_TOKEN_KEY};
use crate::protocol::methods::{CANCELLED, PROGRESS as PROGRESS_METHOD};
use crate::protocol::{Frame, IdField, RequestId};
use crate::transcript::Event;
use serde_json::Value;

/// A request that asked for progress.
struct Asked {
    token: Value,
    id: RequestId,
    /// The event index of its response, when one came.
    answered_at: Option<usize>,
    cancelled: bool,
    /// The last progress reported for it.
    last: Option<f64>,
}

/// Judges every progress notification the server wrote.
pub(super) fn check(input: &LayerInput, findings: &mut Findings) {
    let LayerInput { transcript, reads, answers, .. } = *input;
    let holds = |line: &[u8], needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
    let any_progress = transcript
        .events
        .iter()
        .any(|event| matches!(event, Event::Received { line, .. } if holds(line, PROGRESS_METHOD.as_bytes())));
    if !any_progress {
        return;
    }
    let mut asked: Vec<Asked> = Vec::new();
    for (index, (event, read)) in transcript.events.iter().zip(reads).enumerate() {
        match (event, read.sent(), read.server_line()) {
            (Event::Sent(line), Some((Frame::Request(request), _)), _) if holds(line, b"\"progressToken\"") => {
                let sent: Option<Value> = serde_json::from_slice(line).ok();
                let params = sent.as_ref().and_then(|sent| sent.get("params"));
                let token = params.and_then(|params| params.get(META)?.get(PROGRESS_TOKEN_KEY)).cloned();
                // A task-augmented request's token outlives its result: it lasts as long as the task.
                let answered_at = answers[index].filter(|_| params.and_then(|p| p.get("task")).is_none());
                if let Some(token) = token.filter(|t| t.is_string() || t.is_number()) {
                    let id = request.id.clone();
                    asked.push(Asked { token, id, answered_at, cancelled: false, last: None });
                }
            }
            (Event::Sent(line), Some((Frame::Notification(note), _)), _) if note.method == CANCELLED => {
                let sent: Option<Value> = serde_json::from_slice(line).ok();
                let cancelled = sent.as_ref().and_then(|s| s.get("params")?.get("requestId")).cloned();
                for request in asked.iter_mut() {
                    request.cancelled |= cancelled.as_ref().is_some_and(|id| *id == request.id.to_value());
                }
            }
            (Event::Received { line, .. }, _, Some(ServerLine::Outgoing { id: IdField::Absent }))
                if holds(line, PROGRESS_METHOD.as_bytes()) =>
            {
                let Ok(note) = serde_json::from_slice::<Value>(line) else { continue };
                if note.get("method").and_then(Value::as_str) != Some(PROGRESS_METHOD) {
                    continue;
                }
                let params = note.get("params");
                let token = params.and_then(|p| p.get(PROGRESS_TOKEN_KEY));
                let progress = params.and_then(|p| p.get("progress")).and_then(Value::as_f64);
                let problem = judge(&mut asked, token, progress, index);
                if let Some(problem) = problem {
                    findings.add(PROGRESS, Some(index), format!("{problem}: {}", shown(transcript, index)));
                }
            }
            _ => {}
        }
    }
}

/// What is wrong with a progress notification at event `at` for `token` reporting `progress`, if anything.
fn judge(asked: &mut [Asked], token: Option<&Value>, progress: Option<f64>, at: usize) -> Option<String> {
    let token = token?;
    let carriers = asked.iter().filter(|request| request.token == *token).count();
    if carriers > 1 {
        // The client broke the token's uniqueness (a line sent twice): whose progress it is cannot be told.
        return None;
    }
    let Some(request) = asked.iter_mut().find(|request| request.token == *token) else {
        return Some(format!("progress for the token {token}, which no request sent before it carries"));
    };
    if request.cancelled {
        return None;
    }
    if let Some(answered) = request.answered_at.filter(|answered| *answered < at) {
        return Some(format!("progress for the token {token} after the response to its request (event {answered})"));
    }
    let progress = progress?;
    let last = request.last.replace(progress);
    match last {
        Some(last) if progress <= last => {
            Some(format!("progress for the token {token} went from {last} to {progress}"))
        }
        _ => None,
    }
}
