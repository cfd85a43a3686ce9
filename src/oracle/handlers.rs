//! The server author's own handlers: a request left unanswered because its handler panicked or raised
//! (`SERVER-HANDLER-PANIC`, on a [`Note::Failure`]), and one whose handler never returns (`SERVER-HANDLER-HANG`, on a
//! [`Note::Waited`]). Each finding names the method, the tool (or prompt, or resource) and the arguments, and is put
//! on the request left unanswered.

use super::rules::{HANDLER_HANG, HANDLER_PANIC, RESPONSE_MISSING, SERVER_HANG, SERVER_SHUTDOWN};
use super::{Findings, LayerInput};
use crate::protocol::Frame;
use crate::protocol::methods::{CANCELLED, PROMPTS_GET, RESOURCES_READ, TOOLS_CALL};
use crate::transcript::{Event, Note, show_bytes};
use serde_json::Value;
use std::collections::HashSet;

/// The methods whose handler is the server author's: a request of one left unanswered after the harness's long wait
/// is a handler that never returns (a request the SDK itself dropped is `JSONRPC-RESPONSE-MISSING`'s).
const HANDLER_METHODS: [&str; 3] = [TOOLS_CALL, PROMPTS_GET, RESOURCES_READ];

/// Judges the notes of the transcript against the requests left unanswered.
pub(super) fn check(input: &LayerInput, findings: &mut Findings) {
    // A request without a reply up to event `by` (a reply after a long wait may be the SDK's own answer to the input
    // closing, such as the Python SDK's -32000 "Connection closed").
    let unanswered_by = |index: usize, by: usize| -> bool {
        input.answers[index].is_none_or(|reply| reply > by)
            && matches!(input.reads[index].sent(), Some((Frame::Request(_), None)))
    };
    let unanswered = |index: usize| unanswered_by(index, usize::MAX);
    let mut blamed = HashSet::new();
    for (at, event) in input.transcript.events.iter().enumerate() {
        match event {
            Event::Note(Note::Failure(failure)) => {
                // The request the failure cost: the latest one before it still unanswered (and not blamed yet).
                let Some(request) = (0..at).rev().find(|&i| unanswered(i) && !blamed.contains(&i)) else { continue };
                blamed.insert(request);
                let what = described(&input.transcript.events[request]);
                let failure: Vec<&str> = failure.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
                let failure = show_bytes(failure.join(" | ").as_bytes(), 600);
                findings.add(
                    HANDLER_PANIC,
                    Some(request),
                    format!("the handler of {what} failed and the request is never answered: {failure}"),
                );
            }
            Event::Note(Note::Waited { ms }) => {
                let open: Vec<usize> = (0..at).filter(|&i| unanswered_by(i, at) && !blamed.contains(&i)).collect();
                for request in open {
                    let Event::Sent(line) = &input.transcript.events[request] else { continue };
                    let Some(message) = handled(line) else { continue };
                    let after = &input.transcript.events[request..at];
                    if cancelled(after, &message["id"])
                        || refused_without_id(after)
                        || replied_to(after, &message["id"])
                    {
                        continue;
                    }
                    blamed.insert(request);
                    let what = described(&input.transcript.events[request]);
                    findings.add(
                        HANDLER_HANG,
                        Some(request),
                        format!(
                            "the handler of {what} never returned: no reply after {ms} ms while the server went on"
                        ),
                    );
                }
            }
            _ => {}
        }
    }
}

/// Drops the `JSONRPC-RESPONSE-MISSING` of a request a handler finding already names: the panic or the hang is why
/// it went unanswered, and one finding says so. A hung handler also explains a server that does not end when its
/// input closes (the handler's task keeps it alive, its call still owed): its `SERVER-SHUTDOWN` or `SERVER-HANG`
/// goes too (the hang is only found when the server went on answering after the call).
pub(super) fn supersede(findings: &mut Findings) {
    let blamed: HashSet<usize> = findings
        .0
        .iter()
        .filter(|f| f.rule == HANDLER_HANG || f.rule == HANDLER_PANIC)
        .filter_map(|f| f.event)
        .collect();
    let hung = findings.0.iter().any(|f| f.rule == HANDLER_HANG);
    findings.0.retain(|f| f.rule != RESPONSE_MISSING || f.event.is_none_or(|event| !blamed.contains(&event)));
    findings.0.retain(|f| !(hung && (f.rule == SERVER_SHUTDOWN || f.rule == SERVER_HANG)));
}

/// The request of a sent line when its handler is the author's: one of [`HANDLER_METHODS`], params an object whose
/// `_meta` (if any) is an object and whose `arguments` (if any) are an object, a string or integer id. Anything
/// else an SDK may drop before any handler runs.
fn handled(line: &[u8]) -> Option<Value> {
    let message: Value = serde_json::from_slice(line).ok()?;
    let method = message.get("method")?.as_str()?;
    let params = message.get("params")?.as_object()?;
    let id_ok = message.get("id").is_some_and(|id| id.is_string() || id.as_i64().is_some_and(|n| n.abs() < 1 << 53));
    let object_or_absent = |key: &str| params.get(key).is_none_or(Value::is_object);
    let ok = HANDLER_METHODS.contains(&method) && id_ok && object_or_absent("_meta") && object_or_absent("arguments");
    ok.then_some(message)
}

/// True when one of `events` is a `notifications/cancelled` the client sent for `id`.
fn cancelled(events: &[Event], id: &Value) -> bool {
    events.iter().any(|event| {
        let Event::Sent(line) = event else { return false };
        let Ok(message) = serde_json::from_slice::<Value>(line) else { return false };
        message.get("method").and_then(Value::as_str) == Some(CANCELLED)
            && message.get("params").and_then(|p| p.get("requestId")) == Some(id)
    })
}

/// True when one of `events` is a reply with `id`: a reused id makes the matching ambiguous (the reply may be this
/// request's), so no handler is blamed for a hang.
fn replied_to(events: &[Event], id: &Value) -> bool {
    events.iter().any(|event| {
        let Event::Received { line, .. } = event else { return false };
        let Ok(Value::Object(reply)) = serde_json::from_slice::<Value>(line) else { return false };
        reply.get("id") == Some(id)
    })
}

/// True when one of `events` is an error reply without an id (`null` or absent): the server could not read some
/// request's id (a refused batch, an envelope it rejects before dispatch), so the requests before it may have been
/// dropped by the SDK rather than held by a handler; `JSONRPC-RESPONSE-MISSING` and `MCP-BATCH` judge those.
fn refused_without_id(events: &[Event]) -> bool {
    events.iter().any(|event| {
        let Event::Received { line, .. } = event else { return false };
        let Ok(Value::Object(reply)) = serde_json::from_slice::<Value>(line) else { return false };
        reply.contains_key("error") && reply.get("id").is_none_or(Value::is_null)
    })
}

/// A request for a finding's detail: `tools/call of tool "NAME" with arguments {...}` (the prompt, or the resource's
/// URI, for the other handler methods), or the method and its params.
fn described(event: &Event) -> String {
    let Event::Sent(line) = event else { return "a request".into() };
    let Ok(message) = serde_json::from_slice::<Value>(line) else { return show_bytes(line, 200) };
    let method = message.get("method").and_then(Value::as_str).unwrap_or("?");
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let shown = |value: &Value| show_bytes(value.to_string().as_bytes(), 300);
    let arguments =
        params.get("arguments").map_or_else(|| "no arguments".into(), |a| format!("arguments {}", shown(a)));
    match (method, params.get("name"), params.get("uri")) {
        (TOOLS_CALL, Some(name), _) => format!("{method} of tool {} with {arguments}", shown(name)),
        (PROMPTS_GET, Some(name), _) => format!("{method} of prompt {} with {arguments}", shown(name)),
        (RESOURCES_READ, _, Some(uri)) => format!("{method} of {}", shown(uri)),
        _ => format!("{method} with params {}", shown(&params)),
    }
}

#[cfg(test)]
mod tests {
    use crate::oracle::rules::{HANDLER_HANG, HANDLER_PANIC, RESPONSE_MISSING};
    use crate::oracle::test_support::{dual, ids};
    use crate::oracle::{Level, check};
    use crate::transcript::{Ending, Event, Note, Transcript};

    const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;
    const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

    fn call(id: u32, item: u32) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"fetch","arguments":{{"id":{item}}}}}}}"#
        )
    }

    fn answer(id: u32) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"ok"}}]}}}}"#)
    }

    fn sent(line: &str) -> Event {
        Event::Sent(line.as_bytes().to_vec())
    }

    fn got(line: &str) -> Event {
        Event::Received { line: line.as_bytes().to_vec(), truncated: false }
    }

    /// A handshake, then `fetch` of item 1 (answered) and of item 7 (answered only when `seven`), then `tail`.
    fn transcript(seven: bool, tail: Vec<Event>) -> Transcript {
        let mut events = vec![sent(INIT), got(INIT_OK), sent(INITIALIZED), sent(&call(1, 1)), got(&answer(1))];
        events.push(sent(&call(2, 7)));
        if seven {
            events.push(got(&answer(2)));
        }
        events.extend(tail);
        Transcript { events, ending: Ending::Closed }
    }

    const PANIC: &str = "panicked at src/store.rs:42:17:\nindex out of bounds: the len is 3 but the index is 7";

    #[test]
    fn a_handler_panic_that_left_its_request_unanswered_is_found_with_the_tool_arguments_and_message() {
        let found = check(&transcript(false, vec![Event::Note(Note::Failure(PANIC.into()))]), &dual());
        assert_eq!(ids(&found), [HANDLER_PANIC], "{found:#?}");
        let panic = &found[0];
        assert_eq!((panic.level, panic.event), (Level::Error, Some(5)));
        for part in ["tools/call", "\"fetch\"", r#"{"id":7}"#, "src/store.rs:42:17", "index out of bounds"] {
            assert!(panic.detail.contains(part), "{part}: {}", panic.detail);
        }
    }

    #[test]
    fn a_panic_that_cost_no_reply_and_a_clean_run_are_silent() {
        let recovered = check(&transcript(true, vec![Event::Note(Note::Failure(PANIC.into()))]), &dual());
        assert_eq!(ids(&recovered), Vec::<&str>::new());
        assert_eq!(ids(&check(&transcript(true, vec![]), &dual())), Vec::<&str>::new());
    }

    #[test]
    fn a_call_unanswered_after_the_long_wait_is_a_hang_and_a_slow_one_answered_in_it_is_not() {
        let waited = || Event::Note(Note::Waited { ms: 600_000 });
        let hung = check(&transcript(false, vec![waited()]), &dual());
        assert_eq!(ids(&hung), [HANDLER_HANG], "{hung:#?}");
        assert_eq!(hung[0].event, Some(5));
        assert!(hung[0].detail.contains(r#"{"id":7}"#) && hung[0].detail.contains("600000 ms"), "{}", hung[0].detail);
        let slow = check(&transcript(false, vec![got(&answer(2)), waited()]), &dual());
        assert_eq!(ids(&slow), Vec::<&str>::new());
        // A reply only after the wait (an SDK answering what is in flight when the input closes) is too late.
        let closing = check(&transcript(false, vec![waited(), got(&answer(2))]), &dual());
        assert_eq!(ids(&closing), [HANDLER_HANG], "{closing:#?}");
        // A server its hung handler keeps alive after its input closed: the hang says why, no SERVER-HANG (the
        // re-asked call still owed) nor SERVER-SHUTDOWN.
        let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
        let again = r#"{"jsonrpc":"2.0","id":"mcp-wirefuzz-reask-6","method":"tools/call","params":{"name":"fetch","arguments":{"id":7}}}"#;
        let mut kept_alive = transcript(false, vec![sent(cancel), sent(again), waited()]);
        kept_alive.ending = Ending::Hung { waited_ms: 5000 };
        assert_eq!(ids(&check(&kept_alive, &dual())), [HANDLER_HANG]);
        let mut not_exiting = transcript(true, vec![]);
        not_exiting.ending = Ending::Hung { waited_ms: 5000 };
        assert_eq!(ids(&check(&not_exiting, &dual())), [crate::oracle::rules::SERVER_SHUTDOWN]);
        // No long wait (the clock over stdio): not judged here.
        assert_eq!(ids(&check(&transcript(false, vec![]), &dual())), [RESPONSE_MISSING]);
        // Cancelled by the client: no reply is owed.
        let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
        assert_eq!(ids(&check(&transcript(false, vec![sent(cancel), waited()]), &dual())), Vec::<&str>::new());
        // A call an SDK drops before any handler runs (`_meta` not an object) is not the handler's.
        let dropped = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fetch","_meta":5}}"#;
        let found = check(&transcript(true, vec![sent(dropped), waited()]), &dual());
        assert!(!ids(&found).contains(&HANDLER_HANG), "{found:#?}");
        // A call followed by an error without an id (rmcp refusing a batch on a 2025-03-26 connection): the SDK
        // dropped it, no handler holds it.
        let refused = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#;
        let found = check(&transcript(false, vec![got(refused), waited()]), &dual());
        assert!(!ids(&found).contains(&HANDLER_HANG), "{found:#?}");
        // The same id used again before the call: its reply may be matched to the earlier request, but a reply with
        // the call's id came, so the call is not a hang.
        let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
        let reused = Transcript {
            events: vec![
                sent(INIT),
                got(INIT_OK),
                sent(INITIALIZED),
                sent(ping),
                sent(&call(2, 7)),
                got(&answer(2)),
                waited(),
            ],
            ending: Ending::Closed,
        };
        let found = check(&reused, &dual());
        assert!(!ids(&found).contains(&HANDLER_HANG), "{found:#?}");
    }
}
