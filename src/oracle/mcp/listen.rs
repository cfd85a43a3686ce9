//! The rule MCP-LISTEN: a `subscriptions/listen` stream (2026-07-28 basic/patterns/subscriptions.mdx) starts with
//! its acknowledgement, the first message that carries the subscription's id (the listen request's JSON-RPC id, as
//! the exact JSON value) in `_meta["io.modelcontextprotocol/subscriptionId"]`; the acknowledgement honours a subset
//! of the filter the client sent; and no notification on the stream is of a type the filter did not ask for. Read
//! off the order of the lines the server wrote, per subscription id (on stdio other subscriptions' messages may be
//! interleaved), so no verdict depends on timing.

use super::super::rules::LISTEN;
use super::super::{Findings, LayerInput, ServerLine, shown};
use crate::protocol::Frame;
use crate::protocol::envelope::{META, SUBSCRIPTION_ID_KEY};
use crate::protocol::methods::{ACKNOWLEDGED, LISTEN as LISTEN_METHOD};
use crate::transcript::Event;
use serde_json::{Map, Value};

/// A listen request the harness sent, and whether its stream was acknowledged yet.
struct Stream {
    id: Value,
    filter: Map<String, Value>,
    acknowledged: bool,
}

/// Judges every message the server wrote that carries the id of a listen request sent before it.
pub(super) fn check(input: &LayerInput, findings: &mut Findings) {
    let LayerInput { transcript, reads, .. } = *input;
    let holds = |line: &[u8], needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
    let listens = |event: &Event| matches!(event, Event::Sent(line) if holds(line, LISTEN_METHOD.as_bytes()));
    if !transcript.events.iter().any(listens) {
        return;
    }
    let mut streams: Vec<Stream> = Vec::new();
    for (index, (event, read)) in transcript.events.iter().zip(reads).enumerate() {
        match (event, read.sent(), read.server_line()) {
            (Event::Sent(line), Some((Frame::Request(request), _)), _) if request.method == LISTEN_METHOD => {
                let sent: Option<Value> = serde_json::from_slice(line).ok();
                let filter = sent.as_ref().and_then(|s| s.get("params")?.get("notifications")?.as_object().cloned());
                let id = request.id.to_value();
                streams.retain(|stream| stream.id != id);
                streams.push(Stream { id, filter: filter.unwrap_or_default(), acknowledged: false });
            }
            // Every line is parsed whole once a listen was sent: a server may escape any character of a key.
            (Event::Received { line, .. }, _, Some(ServerLine::Outgoing { .. } | ServerLine::Reply { .. }))
                if !streams.is_empty() =>
            {
                let Ok(message) = serde_json::from_slice::<Value>(line) else { continue };
                let carried = ["params", "result"]
                    .iter()
                    .find_map(|member| message.get(*member)?.get(META)?.get(SUBSCRIPTION_ID_KEY))
                    .cloned();
                let Some(carried) = carried else { continue };
                let Some(stream) = streams.iter_mut().find(|stream| stream.id == carried) else { continue };
                let method = message.get("method").and_then(Value::as_str);
                let problem = judge(stream, method, message.get("params"));
                if let Some(problem) = problem {
                    findings.add(LISTEN, Some(index), format!("{problem}: {}", shown(transcript, index)));
                }
            }
            _ => {}
        }
    }
}

/// What is wrong with a message of `method` (none for a response) carrying `stream`'s id, if anything.
fn judge(stream: &mut Stream, method: Option<&str>, params: Option<&Value>) -> Option<String> {
    let id = &stream.id;
    if !stream.acknowledged {
        if method != Some(ACKNOWLEDGED) {
            let what = method.map_or("the response to the listen request".to_string(), |m| m.to_string());
            return Some(format!("{what} came before the acknowledgement of subscription {id}"));
        }
        stream.acknowledged = true;
        let honoured = params.and_then(|p| p.get("notifications")).and_then(Value::as_object);
        let unasked: Vec<&String> = honoured
            .into_iter()
            .flatten()
            .filter(|(kind, value)| !asked(&stream.filter, kind, value))
            .map(|(k, _)| k)
            .collect();
        return (!unasked.is_empty()).then(|| {
            format!("the acknowledgement of subscription {id} honours {unasked:?}, which the filter did not ask for")
        });
    }
    let kind = match method? {
        "notifications/tools/list_changed" => "toolsListChanged",
        "notifications/prompts/list_changed" => "promptsListChanged",
        "notifications/resources/list_changed" => "resourcesListChanged",
        "notifications/resources/updated" => {
            let uri = params.and_then(|p| p.get("uri")).cloned().unwrap_or(Value::Null);
            let subscribed = stream.filter.get("resourceSubscriptions").and_then(Value::as_array);
            return (!subscribed.is_some_and(|uris| uris.contains(&uri)))
                .then(|| format!("an update of {uri} on subscription {id}, whose filter did not subscribe to it"));
        }
        _ => return None,
    };
    (stream.filter.get(kind) != Some(&Value::Bool(true)))
        .then(|| format!("a {} on subscription {id}, whose filter did not ask for {kind}", method.unwrap_or_default()))
}

/// True when the filter asked for what the acknowledgement honours under `kind`: a flag it set, or URIs it listed.
fn asked(filter: &Map<String, Value>, kind: &str, honoured: &Value) -> bool {
    match (filter.get(kind), honoured) {
        (Some(Value::Bool(true)), Value::Bool(true)) => true,
        (_, Value::Bool(false)) => true,
        (Some(Value::Array(listed)), Value::Array(uris)) => uris.iter().all(|uri| listed.contains(uri)),
        _ => false,
    }
}
