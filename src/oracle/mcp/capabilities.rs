//! The rule SERVER-UNDECLARED-CAPABILITY: on a connection an `initialize` opened, the server's own
//! `sampling/createMessage`, `elicitation/create` and `roots/list` requests stay within what that `initialize`
//! declared (its `params.capabilities`, read from the line as sent).

use super::super::rules::UNDECLARED_CAPABILITY;
use super::super::{Findings, LayerInput, ServerLine, shown};
use crate::protocol::client::elicitation_mode_declared;
use crate::protocol::methods::{ELICITATION_CREATE, GATED_SERVER_REQUESTS, INITIALIZE, SAMPLING_CREATE};
use crate::protocol::{Frame, IdField, Outcome};
use crate::transcript::Event;
use serde_json::{Map, Value};

/// Judges every request the server sent after the first `initialize` that got a result.
pub(super) fn check(input: &LayerInput, findings: &mut Findings) {
    let LayerInput { transcript, reads, answers, .. } = *input;
    let opened = reads.iter().enumerate().find_map(|(index, read)| match read.sent() {
        Some((Frame::Request(request), None)) if request.method == INITIALIZE => {
            let reply = answers[index]?;
            let succeeded =
                matches!(reads[reply].server_line(), Some(ServerLine::Reply { outcome: Some(Outcome::Result(_)), .. }));
            succeeded.then_some(index)
        }
        _ => None,
    });
    let Some(initialize) = opened else { return };
    // The oracle's reading of a sent line skims `params`: the capabilities are read from the line itself.
    let Event::Sent(line) = &transcript.events[initialize] else { return };
    let sent: Option<Value> = serde_json::from_slice(line).ok();
    let declared = sent
        .as_ref()
        .and_then(|initialize| initialize.get("params")?.get("capabilities")?.as_object().cloned())
        .unwrap_or_default();
    for (index, read) in reads.iter().enumerate().skip(initialize + 1) {
        let Some(ServerLine::Outgoing { id }) = read.server_line() else { continue };
        if *id == IdField::Absent {
            continue;
        }
        let Event::Received { line, .. } = &transcript.events[index] else { continue };
        let Ok(request) = serde_json::from_slice::<Value>(line) else { continue };
        let method = request.get("method").and_then(Value::as_str).unwrap_or_default();
        if let Some(problem) = undeclared(method, request.get("params"), &declared) {
            findings.add(UNDECLARED_CAPABILITY, Some(index), format!("{problem}: {}", shown(transcript, index)));
        }
    }
}

/// What a server request of `method` uses that the client did not declare, if anything.
fn undeclared(method: &str, params: Option<&Value>, declared: &Map<String, Value>) -> Option<String> {
    let (_, capability) = GATED_SERVER_REQUESTS.iter().find(|(gated, _)| *gated == method)?;
    let Some(offered) = declared.get(*capability) else {
        return Some(format!("the server sent {method}, but the client's initialize did not declare `{capability}`"));
    };
    let member = |name: &str| params.and_then(|params| params.get(name));
    match method {
        SAMPLING_CREATE
            if (member("tools").is_some() || member("toolChoice").is_some()) && offered.get("tools").is_none() =>
        {
            Some(format!("the server sent {method} with tools, but the client did not declare `sampling.tools`"))
        }
        ELICITATION_CREATE => {
            let mode = member("mode").and_then(Value::as_str).unwrap_or("form");
            (!elicitation_mode_declared(offered, mode))
                .then(|| format!("the server sent {method} in mode {mode}, which the client did not declare"))
        }
        _ => None,
    }
}
