//! What a server may ask of its client and tell it: on a connection an `initialize` opened, its own
//! `sampling/createMessage`, `elicitation/create` and `roots/list` requests stay within what that `initialize`
//! declared (SERVER-UNDECLARED-CAPABILITY), and its log messages, list changes and resource updates within what
//! its own result declared (SERVER-UNDECLARED-NOTIFICATION); in 2026-07-28, the input requests of an
//! `input_required` result stay within what the request's envelope declared, and the result carries requests or a
//! state (MCP-INPUT-REQUIRED). What was declared is read from the line as sent: the oracle's reading of a sent
//! line skims `params`.

use super::super::rules::{UNDECLARED_CAPABILITY, UNDECLARED_NOTIFICATION};
use super::super::{Findings, LayerInput, ServerLine, shown};
use crate::protocol::client::{self, Undeclared};
use crate::protocol::envelope::CLIENT_CAPABILITIES_KEY;
use crate::protocol::methods::{GATED_SERVER_REQUESTS, INITIALIZE};
use crate::protocol::{Frame, IdField, Outcome};
use crate::transcript::{Event, Transcript};
use serde_json::{Map, Value};

/// Judges every request the server sent after the first `initialize` that got a result, and every notification it
/// sent after that result.
pub(super) fn check(input: &LayerInput, findings: &mut Findings) {
    let LayerInput { transcript, reads, answers, .. } = *input;
    let opened = reads.iter().enumerate().find_map(|(index, read)| match read.sent() {
        Some((Frame::Request(request), None)) if request.method == INITIALIZE => {
            let reply = answers[index]?;
            match reads[reply].server_line() {
                Some(ServerLine::Reply { outcome: Some(Outcome::Result(result)), .. }) => Some((index, reply, result)),
                _ => None,
            }
        }
        _ => None,
    });
    let Some((initialize, answered, result)) = opened else { return };
    let declared = declared(transcript, initialize, &["params", "capabilities"]);
    let offered = result.get("capabilities").and_then(Value::as_object).cloned().unwrap_or_default();
    for (index, read) in reads.iter().enumerate().skip(initialize + 1) {
        let Some(ServerLine::Outgoing { id }) = read.server_line() else { continue };
        let Event::Received { line, .. } = &transcript.events[index] else { continue };
        let Ok(message) = serde_json::from_slice::<Value>(line) else { continue };
        let method = message.get("method").and_then(Value::as_str).unwrap_or_default();
        let quoted = || shown(transcript, index);
        if *id != IdField::Absent {
            if let Some(problem) = undeclared(method, message.get("params"), &declared) {
                findings.add(UNDECLARED_CAPABILITY, Some(index), format!("{problem}: {}", quoted()));
            }
        } else if index > answered
            && let Some(capability) = unoffered(method, &offered)
        {
            let detail = format!("the server sent {method}, but its initialize result did not declare {capability}");
            findings.add(UNDECLARED_NOTIFICATION, Some(index), format!("{detail}: {}", quoted()));
        }
    }
}

/// The capability a server notification of `method` needs that `offered` (the server's own, from its
/// `initialize` result) does not declare, if any.
fn unoffered(method: &str, offered: &Map<String, Value>) -> Option<&'static str> {
    let flag = |capability: &str, flag: &str| {
        offered.get(capability).and_then(|c| c.get(flag)).and_then(Value::as_bool) == Some(true)
    };
    match method {
        "notifications/message" if !offered.contains_key("logging") => Some("`logging`"),
        "notifications/tools/list_changed" if !flag("tools", "listChanged") => Some("`tools.listChanged`"),
        "notifications/prompts/list_changed" if !flag("prompts", "listChanged") => Some("`prompts.listChanged`"),
        "notifications/resources/list_changed" if !flag("resources", "listChanged") => Some("`resources.listChanged`"),
        "notifications/resources/updated" if !flag("resources", "subscribe") => Some("`resources.subscribe`"),
        _ => None,
    }
}

/// What is wrong with the -32021 error `data` answering the request sent at event `sent`: `requiredCapabilities`
/// must be an object naming at least one capability, and none the request's envelope declared in full (basic/index.mdx:
/// it lists the missing capabilities).
pub(super) fn missing_capability_problems(transcript: &Transcript, sent: usize, data: Option<&Value>) -> Vec<String> {
    let required = data.and_then(|data| data.get("requiredCapabilities"));
    let Some(required) = required.and_then(Value::as_object).filter(|required| !required.is_empty()) else {
        let what = match required {
            None => "-32021 without data.requiredCapabilities".to_string(),
            Some(Value::Object(_)) => "-32021 whose data.requiredCapabilities names no capability".to_string(),
            Some(other) => format!("-32021 whose data.requiredCapabilities is {other}, not an object"),
        };
        return vec![what];
    };
    let declared = declared(transcript, sent, &["params", "_meta", CLIENT_CAPABILITIES_KEY]);
    required
        .iter()
        .filter(|(name, needed)| declared.get(*name).is_some_and(|given| covers(given, needed)))
        .map(|(name, _)| format!("-32021 names {name:?} as missing, but the request declared it"))
        .collect()
}

/// Whether the declared capability `given` holds everything `needed` asks for (each member of an object, in depth).
fn covers(given: &Value, needed: &Value) -> bool {
    match (given, needed) {
        (Value::Object(given), Value::Object(needed)) => {
            needed.iter().all(|(key, value)| given.get(key).is_some_and(|given| covers(given, value)))
        }
        (Value::Null, _) => false,
        _ => true,
    }
}

/// What is wrong with the `input_required` result `result` of the request sent at event `sent`: neither input
/// requests nor a state, an input request that is not one, or one of a capability the request did not declare.
pub(super) fn input_required_problems(
    transcript: &Transcript,
    sent: usize,
    result: &Map<String, Value>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let requests = result.get("inputRequests");
    match (requests, result.get("requestState")) {
        (None, None) => problems.push("an input_required result with neither inputRequests nor requestState".into()),
        (_, Some(state)) if !state.is_string() => problems.push(format!("requestState is {state}, not a string")),
        _ => {}
    }
    let Some(requests) = requests else { return problems };
    let Some(requests) = requests.as_object() else {
        problems.push("inputRequests is not an object".into());
        return problems;
    };
    let declared = declared(transcript, sent, &["params", "_meta", CLIENT_CAPABILITIES_KEY]);
    for (key, request) in requests {
        let method = request.get("method").and_then(Value::as_str);
        let known = method.filter(|m| GATED_SERVER_REQUESTS.iter().any(|(gated, _)| gated == m));
        let Some(method) = known.filter(|_| request.is_object()) else {
            problems.push(format!("inputRequests[{key:?}] is not an elicitation, sampling or roots request"));
            continue;
        };
        if let Some(problem) = undeclared(method, request.get("params"), &declared) {
            problems.push(format!("inputRequests[{key:?}]: {problem}"));
        }
    }
    problems
}

/// The object at `path` in the line sent at event `at` (an empty one when it is not there or not an object).
fn declared(transcript: &Transcript, at: usize, path: &[&str]) -> Map<String, Value> {
    let Some(Event::Sent(line)) = transcript.events.get(at) else { return Map::new() };
    let Ok(mut value) = serde_json::from_slice::<Value>(line) else { return Map::new() };
    for key in path {
        value = match value {
            Value::Object(mut object) => object.remove(*key).unwrap_or(Value::Null),
            _ => Value::Null,
        };
    }
    match value {
        Value::Object(object) => object,
        _ => Map::new(),
    }
}

/// What a server request of `method` uses that the client did not declare, if anything, in words.
fn undeclared(method: &str, params: Option<&Value>, declared: &Map<String, Value>) -> Option<String> {
    Some(match client::undeclared(method, params, declared)? {
        Undeclared::Capability(capability) => {
            format!("the server sent {method}, but the client did not declare `{capability}`")
        }
        Undeclared::SamplingTools => {
            format!("the server sent {method} with tools, but the client did not declare `sampling.tools`")
        }
        Undeclared::ElicitationMode(mode) => {
            format!("the server sent {method} in mode {mode}, which the client did not declare")
        }
    })
}
