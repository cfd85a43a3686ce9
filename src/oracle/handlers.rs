//! The server author's own handlers: a request left unanswered because its handler panicked or raised
//! (`SERVER-HANDLER-PANIC`, on a [`Note::Failure`]), one whose handler never returns (`SERVER-HANDLER-HANG`, on a
//! [`Note::Waited`]), and a tool call the SDK answered with its text for a crash (`SERVER-HANDLER-CRASH`, on the
//! reply). Each finding names the method, the tool (or prompt, or resource) and the arguments; a panic or a hang is
//! put on the request left unanswered, a crash on its reply.

use super::rules::{HANDLER_CRASH, HANDLER_HANG, HANDLER_PANIC, RESPONSE_MISSING, SERVER_HANG, SERVER_SHUTDOWN};
use super::{Findings, LayerInput, ServerLine};
use crate::protocol::Frame;
use crate::protocol::Outcome;
use crate::protocol::methods::{CANCELLED, PROMPTS_GET, RESOURCES_READ, TOOLS_CALL};
use crate::transcript::{Event, FASTMCP_CAUGHT, Known, Note, show_bytes};
use serde_json::Value;
use std::collections::HashSet;

/// The methods whose handler is the server author's: a request of one left unanswered after the harness's long wait
/// is a handler that never returns (a request the SDK itself dropped is `JSONRPC-RESPONSE-MISSING`'s).
const HANDLER_METHODS: [&str; 3] = [TOOLS_CALL, PROMPTS_GET, RESOURCES_READ];

/// The Python SDK's (`mcp` 2.x `MCPServer`) text for a tool whose handler raised an unexpected exception
/// (`UnexpectedToolError`, tools/base.py `Tool.run`): this, then the tool's name, and nothing else. A deliberate
/// `ToolError` and a refusal of the arguments add `: message`; an unknown tool is `Unknown tool: NAME`.
const CRASH_PREFIX: &str = "Error executing tool ";

/// What the SDK puts after `: ` when the crash was in a tool or resource the tool itself called (a nested
/// `UnexpectedToolError`, or an `UnexpectedResourceError` of `ctx.read_resource`).
const NESTED_RESOURCE_CRASHES: [&str; 2] = ["Error reading resource ", "Error creating resource from template "];

/// How the SDK's log names the exception it answered a crash with: a [`Note::Failure`] holding this followed by a
/// crash's text (see `server::transport::failures`) is that crash's traceback, not a request left unanswered.
const CRASH_EXCEPTION: &str = "UnexpectedToolError: ";

/// Judges the notes of the transcript against the requests left unanswered, and the tool calls answered with a
/// crash.
pub(super) fn check(input: &LayerInput, findings: &mut Findings) {
    unanswered(input, findings);
    crashed(input, findings);
}

/// `SERVER-HANDLER-PANIC` and `SERVER-HANDLER-HANG`: the notes of the transcript against the requests left
/// unanswered.
fn unanswered(input: &LayerInput, findings: &mut Findings) {
    // A request without a reply up to event `by` (a reply after a long wait may be the SDK's own answer to the input
    // closing, such as the Python SDK's -32000 "Connection closed").
    let unanswered_by = |index: usize, by: usize| -> bool {
        input.answers[index].is_none_or(|reply| reply > by)
            && matches!(input.reads[index].sent(), Some((Frame::Request(_), None)))
    };
    let unanswered = |index: usize| unanswered_by(index, usize::MAX);
    let mut blamed = HashSet::new();
    // Where the events since the last failure noted start.
    let mut since = 0;
    for (at, event) in input.transcript.events.iter().enumerate() {
        match event {
            // A traceback of a crash the SDK answered with an isError result is `SERVER-HANDLER-CRASH`'s; one fastmcp
            // logged for an error it answers costs no reply either.
            Event::Note(Note::Failure(failure))
                if failure.contains(&format!("{CRASH_EXCEPTION}{CRASH_PREFIX}"))
                    || failure.lines().next().is_some_and(|line| line.contains(FASTMCP_CAUGHT)) =>
            {
                since = at;
            }
            Event::Note(Note::Failure(failure)) => {
                let window = std::mem::replace(&mut since, at)..at;
                // The request the failure cost: the latest one before it still unanswered (and not blamed yet). One
                // the client cancelled before the failure was seen is owed nothing (cancellation.mdx), so its
                // silence says nothing of its handler: the harness cancels a slow tool call, and a traceback the
                // SDK logs for another call (a tool's deliberate error answered with isError) is not that call's.
                let uncancelled = |i: usize| {
                    let Event::Sent(line) = &input.transcript.events[i] else { return true };
                    let id = serde_json::from_slice::<Value>(line).ok().and_then(|m| m.get("id").cloned());
                    id.is_none_or(|id| !cancelled(&input.transcript.events[i..at], &id))
                };
                let owed = |i: usize| unanswered(i) && !blamed.contains(&i) && uncancelled(i);
                let Some(request) = (0..at).rev().find(|&i| owed(i)) else { continue };
                // A traceback the SDK may have logged for a tool's error it answered with isError (fastmcp logs
                // each) is tied to this request only when it names the request's tool.
                if logged_for_an_answered_error(input, request, window, failure) {
                    continue;
                }
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
            Event::Note(note) => {
                let Some(how) = unanswered_for(note) else { continue };
                // A call asked again is the note's one request; the wait at the end of an in-process conversation
                // is every request's still owed.
                let only = match note {
                    Note::Reasked { id, .. } => Some(Value::String(id.clone())),
                    _ => None,
                };
                let open: Vec<usize> = (0..at).filter(|&i| unanswered_by(i, at) && !blamed.contains(&i)).collect();
                for request in open {
                    let Event::Sent(line) = &input.transcript.events[request] else { continue };
                    let Some(message) = handled(line) else { continue };
                    if only.as_ref().is_some_and(|id| message["id"] != *id) {
                        continue;
                    }
                    let after = &input.transcript.events[request..at];
                    if cancelled(after, &message["id"])
                        || refused_without_id(after)
                        || replied_to(after, &message["id"])
                    {
                        continue;
                    }
                    blamed.insert(request);
                    let what = described(&input.transcript.events[request]);
                    findings.add(HANDLER_HANG, Some(request), format!("the handler of {what} {how}"));
                }
            }
            _ => {}
        }
    }
}

/// True when the failure noted at the end of `window` (the events since the failure noted before it) may be the log
/// of an error the SDK answered: a `tools/call` was answered with an `isError` result in that window (Python SDKs
/// log the traceback of a tool's exception they turn into such a result), and the failure's text does not name the
/// tool of the `tools/call` at `request`.
fn logged_for_an_answered_error(
    input: &LayerInput,
    request: usize,
    window: std::ops::Range<usize>,
    failure: &str,
) -> bool {
    let events = &input.transcript.events;
    let tool = |index: usize| -> Option<String> {
        let Event::Sent(line) = &events[index] else { return None };
        let message = serde_json::from_slice::<Value>(line).ok()?;
        (message.get("method")?.as_str()? == TOOLS_CALL).then_some(())?;
        Some(message.get("params")?.get("name")?.as_str()?.to_string())
    };
    let is_error = |reply: usize| {
        let Event::Received { line, .. } = &events[reply] else { return false };
        serde_json::from_slice::<Value>(line).is_ok_and(|r| r.pointer("/result/isError") == Some(&Value::Bool(true)))
    };
    let answered_error = (0..window.end)
        .any(|i| tool(i).is_some() && input.answers[i].is_some_and(|reply| window.contains(&reply) && is_error(reply)));
    answered_error && tool(request).is_none_or(|blamed| !names_word(failure, &blamed))
}

/// True when `text` holds `word` with no identifier character (a letter, a digit, `_`) right before or after it.
fn names_word(text: &str, word: &str) -> bool {
    let identifier = |c: char| c.is_alphanumeric() || c == '_';
    !word.is_empty()
        && text.match_indices(word).any(|(at, _)| {
            let before = text[..at].chars().next_back().is_none_or(|c| !identifier(c));
            let after = text[at + word.len()..].chars().next().is_none_or(|c| !identifier(c));
            before && after
        })
}

/// How long a hung handler's request went unanswered, as a note of the wait says it; `None` for a note of no wait.
fn unanswered_for(note: &Note) -> Option<String> {
    Some(match note {
        Note::Waited { ms } | Note::Reasked { ms, known: Known::Waited, .. } => {
            format!("never returned: no reply after {ms} ms while the server went on")
        }
        Note::Reasked { ms, known: Known::Remembered, .. } => format!(
            "never returned: the same call got no reply after {ms} ms on a fresh server earlier in the run, while \
             the server went on (not waited for again)"
        ),
        Note::Reasked { ms, known: Known::Suspected { slowest_ms, wait_ms }, .. } => format!(
            "did not return within {ms} ms while the server went on, and the tool's other calls answered within \
             {slowest_ms} ms (suspected: a fresh server waits {wait_ms} ms to confirm it)"
        ),
        Note::Failure(_) | Note::Usage { .. } | Note::ExitUnawaited { .. } => return None,
    })
}

/// `SERVER-HANDLER-CRASH`: every `tools/call` answered with the SDK's text for a crash of that tool
/// ([`crash_text`]), with the traceback of a later [`Note::Failure`] that names the same text, when there is one.
fn crashed(input: &LayerInput, findings: &mut Findings) {
    let events = &input.transcript.events;
    let mut crashes: Vec<Crash> = Vec::new();
    // A tool that waited on an answer the client broke on purpose may crash on it: the client's doing.
    let awaiting_broken = input.awaiting_broken;
    for (request, read) in input.reads.iter().enumerate() {
        if awaiting_broken.contains(&request) {
            continue;
        }
        let Some((Frame::Request(sent), _)) = read.sent() else { continue };
        let Some(reply) = input.answers[request].filter(|_| sent.method == TOOLS_CALL) else { continue };
        let Some(ServerLine::Reply { outcome: Some(Outcome::Result(result)), .. }) = input.reads[reply].server_line()
        else {
            continue;
        };
        let Some(text) = crash_reply(result) else { continue };
        let Event::Sent(line) = &events[request] else { continue };
        let Ok(message) = serde_json::from_slice::<Value>(line) else { continue };
        let Some(name) = message.get("params").and_then(|p| p.get("name")).and_then(Value::as_str) else { continue };
        let listed = input.policy.surface().filter(|s| s.learned).is_none_or(|s| s.lists_tool(name));
        if listed && (crash_text(text, name) || script_crash(text).is_some()) {
            crashes.push(Crash { request, reply, text: text.to_string(), traceback: None });
        }
    }
    // Stderr's traceback is noted once, after the reply (the last one, see `server::transport::failures`): it is
    // the latest crash's whose text the exception's line repeats.
    for (at, event) in events.iter().enumerate() {
        let Event::Note(Note::Failure(failure)) = event else { continue };
        let owner = crashes.iter_mut().rev().find(|crash| {
            crash.reply < at
                && crash.traceback.is_none()
                && failure.contains(&format!("{CRASH_EXCEPTION}{}", crash.text))
        });
        if let Some(crash) = owner {
            // Where it was raised: the innermost frame, its source line and the exception (no caret lines, no
            // SDK exception lines, which repeat the reply's text).
            let sdk = format!("{CRASH_EXCEPTION}{CRASH_PREFIX}");
            let lines: Vec<&str> = failure
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.chars().all(|c| "^~ ".contains(c)) && !l.contains(&sdk))
                .collect();
            let innermost = lines.iter().rposition(|l| l.starts_with("File \"")).unwrap_or(0);
            crash.traceback = Some(show_bytes(lines[innermost..].join(" | ").as_bytes(), 600));
        }
    }
    for crash in crashes {
        let what = described(&events[crash.request]);
        let text = show_bytes(format!("{:?}", crash.text).as_bytes(), 300);
        let traceback = crash.traceback.map_or_else(String::new, |traceback| format!("; raised at {traceback}"));
        let detail = match script_crash(&crash.text) {
            Some(what_broke) => format!(
                "the handler of {what} {what_broke}: the SDK answered isError with the error's own text, {text}"
            ),
            None => format!(
                "the handler of {what} raised an unexpected exception: the SDK answered isError with its text for a \
                 crash, {text}{traceback}"
            ),
        };
        findings.add(HANDLER_CRASH, Some(crash.reply), detail);
    }
}

/// A tool call answered with a crash's text.
struct Crash {
    /// The events of the request and of its reply.
    request: usize,
    reply: usize,
    /// The reply's text.
    text: String,
    /// The excerpt of its traceback on stderr, when one was noted.
    traceback: Option<String>,
}

/// The text of a `tools/call` result that may be a crash's: `isError` true and a content of one text item.
fn crash_reply(result: &Value) -> Option<&str> {
    if result.get("isError") != Some(&Value::Bool(true)) {
        return None;
    }
    match result.get("content")?.as_array()?.as_slice() {
        [item] if item.get("type").and_then(Value::as_str) == Some("text") => item.get("text")?.as_str(),
        _ => None,
    }
}

/// The TypeScript SDK's `McpServer` answers any error a tool handler throws, and its own refusal of a result that
/// breaks the tool's outputSchema, with an isError result whose one text is the error's message
/// (`createToolError` in server/mcp.ts). Of those, these are never an author's deliberate error: the SDK's text
/// for an output that breaks the tool's own schema, and the JavaScript engine's (V8) messages for a programming
/// error in the handler.
const OUTPUT_INVALID: &str = "MCP error -32602: Output validation error: ";

/// V8's messages for a programming error, as `(prefix, what must follow somewhere)`: reading or writing a property of
/// `undefined` or `null`, destructuring one, calling what is not a function, a runaway recursion.
const ENGINE_CRASHES: [(&str, &str); 6] = [
    ("Cannot read properties of undefined (reading '", "')"),
    ("Cannot read properties of null (reading '", "')"),
    ("Cannot set properties of undefined (setting '", "')"),
    ("Cannot set properties of null (setting '", "')"),
    ("Cannot destructure property '", "' of "),
    ("Maximum call stack size exceeded", ""),
];

/// What broke, when `text` is the TypeScript SDK's isError text for a tool whose result broke its own outputSchema
/// or whose handler hit a programming error ([`OUTPUT_INVALID`], [`ENGINE_CRASHES`], and V8's `X is not a function`
/// for a dotted or bracketed callee).
fn script_crash(text: &str) -> Option<&'static str> {
    if text.starts_with(OUTPUT_INVALID) {
        return Some("returned a result that breaks its own outputSchema");
    }
    let engine = ENGINE_CRASHES
        .iter()
        .any(|(prefix, then)| text.strip_prefix(prefix).is_some_and(|rest| then.is_empty() || rest.contains(then)));
    let not_a_function = text.strip_suffix(" is not a function").is_some_and(|callee| {
        !callee.is_empty() && !callee.contains(char::is_whitespace) && (callee.contains('.') || callee.contains('['))
    });
    (engine || not_a_function).then_some("threw a programming error")
}

/// True when `text` is exactly the Python SDK's answer to a crash of the tool `name`: `Error executing tool NAME`,
/// or that followed by `: ` and the text of a crash in a tool or resource it called ([`nested_crash`]).
fn crash_text(text: &str, name: &str) -> bool {
    let Some(rest) = text.strip_prefix(CRASH_PREFIX).and_then(|rest| rest.strip_prefix(name)) else { return false };
    rest.is_empty() || rest.strip_prefix(": ").is_some_and(nested_crash)
}

/// True when `text` is the SDK's text for a crash in a nested call: `Error executing tool INNER` (itself possibly
/// nested), or `Error reading resource URI` / `Error creating resource from template URI` (a URI has no blanks, so
/// a deliberate error's message that merely starts alike is not taken). A deliberate `ToolError` of the inner tool
/// (`Error executing tool INNER: message`) is not.
fn nested_crash(text: &str) -> bool {
    if let Some(rest) = text.strip_prefix(CRASH_PREFIX) {
        return match rest.split_once(": ") {
            None => !rest.is_empty(),
            Some((inner, rest)) => !inner.is_empty() && nested_crash(rest),
        };
    }
    NESTED_RESOURCE_CRASHES.iter().any(|prefix| {
        text.strip_prefix(prefix).is_some_and(|uri| !uri.is_empty() && !uri.contains(char::is_whitespace))
    })
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
    findings.0.retain(|f| match f.rule {
        RESPONSE_MISSING => f.event.is_none_or(|event| !blamed.contains(&event)),
        SERVER_SHUTDOWN | SERVER_HANG => !hung,
        _ => true,
    });
}

/// The request of a sent line when its handler is the author's: one of [`HANDLER_METHODS`], params an object whose
/// `_meta` (if any) is an object and whose `arguments` (if any) are an object, a string or integer id. Anything
/// else an SDK may drop before any handler runs.
fn handled(line: &[u8]) -> Option<Value> {
    // A line parsers differ on (a number of 5,000 digits) may be dropped by the SDK's parser: no handler ran.
    if !crate::protocol::json::read_alike(line) {
        return None;
    }
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
    use super::names_word;
    use crate::oracle::rules::{HANDLER_CRASH, HANDLER_HANG, HANDLER_PANIC, RESPONSE_MISSING};
    use crate::oracle::test_support::{dual, ids};
    use crate::oracle::{Level, Policy, check};
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
    fn a_call_asked_again_is_the_one_request_its_note_blames() {
        use crate::transcript::Known;
        // A handler's request dropped unanswered earlier (an SDK dropping a batch's items, say), then the call asked
        // again and not answered: only the call is the hang.
        let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
        let again =
            r#"{"jsonrpc":"2.0","id":"again","method":"tools/call","params":{"name":"fetch","arguments":{"id":7}}}"#;
        let read = r#"{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"x:///y"}}"#;
        let note = |known| Event::Note(Note::Reasked { id: "again".into(), ms: 60_000, known });
        for known in [Known::Waited, Known::Remembered, Known::Suspected { slowest_ms: 5, wait_ms: 60_000 }] {
            let tail = vec![sent(read), sent(cancel), sent(again), note(known.clone())];
            let found = check(&transcript(false, tail), &dual());
            let hangs: Vec<_> = found.iter().filter(|f| f.rule == HANDLER_HANG).collect();
            assert_eq!(hangs.len(), 1, "{known:?}: {found:#?}");
            assert_eq!(hangs[0].event, Some(8), "the call asked again, not the read: {found:#?}");
        }
        // A call whose line parsers differ on (a number of 400 digits) may be dropped by the SDK's parser: no hang.
        let huge = format!(
            r#"{{"jsonrpc":"2.0","id":"again","method":"tools/call","params":{{"name":"fetch","arguments":{{"id":{}}}}}}}"#,
            "9".repeat(400)
        );
        let tail = vec![sent(cancel), sent(&huge), note(Known::Waited)];
        let found = check(&transcript(false, tail), &dual());
        assert!(!ids(&found).contains(&HANDLER_HANG), "{found:#?}");
    }

    #[test]
    fn a_failure_after_an_error_the_sdk_answered_is_the_unanswered_calls_only_when_it_names_its_tool() {
        // fastmcp: `date_diff` answered isError for a deliberate error and logged its traceback; the slow call
        // given up on meanwhile is `fetch`'s. With no isError answer before it, the same failure is the call's
        // (a_handler_panic_that_left_its_request_unanswered_is_found_with_the_tool_arguments_and_message).
        let diff = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"date_diff","arguments":{}}}"#;
        let refused = r#"{"jsonrpc":"2.0","id":9,"result":{"isError":true,"content":[{"type":"text","text":"no"}]}}"#;
        let traceback =
            "Traceback (most recent call last):\n  server.py:66 in date_diff\nValueError: Invalid isoformat";
        let mut events = vec![sent(INIT), got(INIT_OK), sent(INITIALIZED), sent(diff), got(refused), sent(&call(2, 7))];
        events.push(Event::Note(Note::Failure(traceback.into())));
        let found = check(&Transcript { events: events.clone(), ending: Ending::Closed }, &dual());
        assert!(!ids(&found).contains(&HANDLER_PANIC), "{found:#?}");
        // So is one that names no tool at all (a deep frame of a library the tool called).
        *events.last_mut().unwrap() =
            Event::Note(Note::Failure("Traceback (most recent call last):\n  in load_tzdata".into()));
        let found = check(&Transcript { events: events.clone(), ending: Ending::Closed }, &dual());
        assert!(!ids(&found).contains(&HANDLER_PANIC), "{found:#?}");
        // A traceback that names the unanswered call's own tool is its, whatever else it names.
        let own = format!("{traceback}\n  server.py:12 in fetch");
        *events.last_mut().unwrap() = Event::Note(Note::Failure(own));
        let found = check(&Transcript { events, ending: Ending::Closed }, &dual());
        assert!(ids(&found).contains(&HANDLER_PANIC), "{found:#?}");
        assert!(names_word("in date_diff", "date_diff") && !names_word("in date_diff2", "date_diff"));
    }

    #[test]
    fn an_error_fastmcp_logged_as_one_it_answers_is_no_panic() {
        let logged = "[12/07/26 09:31:22] Error calling tool 'fetch'\nTraceback (most recent call last):\n  in fetch\nValueError: no";
        let found = check(&transcript(false, vec![Event::Note(Note::Failure(logged.into()))]), &dual());
        assert!(!ids(&found).contains(&HANDLER_PANIC), "{found:#?}");
        let bare = logged.split_once('\n').unwrap().1;
        let found = check(&transcript(false, vec![Event::Note(Note::Failure(bare.into()))]), &dual());
        assert!(ids(&found).contains(&HANDLER_PANIC), "{found:#?}");
    }

    #[test]
    fn a_failure_seen_after_the_client_cancelled_the_call_is_not_that_calls() {
        // A fastmcp server: the slow call (id 2) cancelled by the harness, asked again and answered with isError, and
        // the traceback the SDK logs for that deliberate error seen afterwards.
        let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
        let again =
            r#"{"jsonrpc":"2.0","id":"again","method":"tools/call","params":{"name":"fetch","arguments":{"id":7}}}"#;
        let failed =
            r#"{"jsonrpc":"2.0","id":"again","result":{"isError":true,"content":[{"type":"text","text":"no"}]}}"#;
        let traceback = "Traceback (most recent call last):\n  ValueError: cannot parse";
        let tail = vec![sent(cancel), sent(again), got(failed), Event::Note(Note::Failure(traceback.into()))];
        assert_eq!(ids(&check(&transcript(false, tail), &dual())), Vec::<&str>::new());
        // Seen before the cancel (when the call was given up on), it is still the call's.
        let tail = vec![Event::Note(Note::Failure(PANIC.into())), sent(cancel)];
        assert_eq!(ids(&check(&transcript(false, tail), &dual())), [HANDLER_PANIC]);
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

    /// A handshake, then `tool` called with `arguments` and answered with an isError result of these texts.
    fn crash_call(tool: &str, arguments: &str, texts: &[&str], tail: Vec<Event>) -> Transcript {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        );
        let content: Vec<String> =
            texts.iter().map(|text| serde_json::json!({"type": "text", "text": text}).to_string()).collect();
        let reply =
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{}],"isError":true}}}}"#, content.join(","));
        let mut events = vec![sent(INIT), got(INIT_OK), sent(INITIALIZED), sent(&call), got(&reply)];
        events.extend(tail);
        Transcript { events, ending: Ending::Closed }
    }

    fn crashes(transcript: &Transcript, policy: &Policy) -> Vec<crate::oracle::Finding> {
        check(transcript, policy).into_iter().filter(|f| f.rule == HANDLER_CRASH).collect()
    }

    /// The Python SDK's log of a crash it answered, as `server::transport::failures` excerpts it.
    const TRACEBACK: &str = "Traceback (most recent call last):\n  File \"/srv/notes.py\", line 83, in search_notes\n    \
        first = words[0]\nIndexError: list index out of range\n\
        mcp.server.mcpserver.exceptions.UnexpectedToolError: Error executing tool search_notes";

    #[test]
    fn a_tool_call_answered_with_the_python_sdks_crash_text_is_a_crash_naming_the_tool_and_arguments() {
        let found = crashes(
            &crash_call("search_notes", r#"{"query":""}"#, &["Error executing tool search_notes"], vec![]),
            &dual(),
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!((found[0].level, found[0].event), (Level::Warning, Some(4)));
        for part in
            [r#"tools/call of tool "search_notes" with arguments {"query":""}"#, "Error executing tool search_notes"]
        {
            assert!(found[0].detail.contains(part), "{part}: {}", found[0].detail);
        }
        // The traceback noted after it is the crash's (and no request left unanswered is blamed for it).
        let unanswered =
            sent(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_note","arguments":{"id":1}}}"#);
        let noted = crash_call(
            "search_notes",
            r#"{"query":""}"#,
            &["Error executing tool search_notes"],
            vec![unanswered, Event::Note(Note::Failure(TRACEBACK.into()))],
        );
        let all = check(&noted, &dual());
        assert!(!ids(&all).contains(&HANDLER_PANIC), "{all:#?}");
        let found = crashes(&noted, &dual());
        assert_eq!(found.len(), 1, "{found:#?}");
        let raised = r#"; raised at File "/srv/notes.py", line 83, in search_notes | first = words[0] | IndexError: list index out of range"#;
        assert!(found[0].detail.ends_with(raised), "{}", found[0].detail);
        // A crash in a tool or resource the tool called: the SDK's nested text.
        for nested in [
            "Error executing tool outer: Error executing tool inner",
            "Error executing tool outer: Error executing tool middle: Error executing tool inner",
            "Error executing tool outer: Error reading resource notes://1",
            "Error executing tool outer: Error creating resource from template notes://{id}",
        ] {
            let found = crashes(&crash_call("outer", "{}", &[nested], vec![]), &dual());
            assert_eq!(found.len(), 1, "{nested}: {found:#?}");
        }
    }

    #[test]
    fn the_typescript_sdks_texts_for_a_broken_output_and_a_programming_error_are_crashes_and_deliberate_errors_are_not()
    {
        // McpServer (TS SDK 1.32.2) answers both with isError and the error's own message.
        let broken: [(&str, &str); 7] = [
            (
                "MCP error -32602: Output validation error: Invalid structured content for tool get_note: id: expected number",
                "outputSchema",
            ),
            (
                "MCP error -32602: Output validation error: Tool get_note has an output schema but no structured content was provided",
                "outputSchema",
            ),
            ("Cannot read properties of undefined (reading 'title')", "programming error"),
            ("Cannot read properties of null (reading 'length')", "programming error"),
            ("Cannot destructure property 'title' of 'note' as it is undefined.", "programming error"),
            ("note.body.split is not a function", "programming error"),
            ("Maximum call stack size exceeded", "programming error"),
        ];
        for (text, word) in broken {
            let found = crashes(&crash_call("get_note", r#"{"id":1}"#, &[text], vec![]), &dual());
            assert_eq!(found.len(), 1, "{text}: {found:#?}");
            assert!(found[0].detail.contains(word) && found[0].detail.contains(r#"{"id":1}"#), "{}", found[0].detail);
        }
        // An author's own errors, the SDK's refusal of the arguments, an unknown tool: not crashes.
        for text in [
            "no note 3",
            "MCP error -32602: Input validation error: Invalid arguments for tool get_note: expected number",
            "MCP error -32602: Tool nope not found",
            "title too long",
            "the feature is not a function of this server",
            "Cannot read properties of the note",
        ] {
            assert!(crashes(&crash_call("get_note", "{}", &[text], vec![]), &dual()).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_deliberate_tool_error_a_refusal_of_arguments_and_an_unknown_tool_are_no_crash() {
        let validation = "Error executing tool get_note: 1 validation error for get_noteArguments\nid\n  Input should be a \
            valid integer, unable to parse string as an integer [type=int_parsing, input_value='x', input_type=str]";
        let quiet: [(&str, &[&str]); 10] = [
            ("get_note", &["Error executing tool get_note: no note 3"]),
            ("get_note", &[validation]),
            ("get_note", &["Error executing tool get_note: "]),
            ("nope", &["Unknown tool: nope"]),
            // Another tool's name, or a longer one.
            ("search_notes", &["Error executing tool get_note"]),
            ("search_notes", &["Error executing tool search_notes_v2"]),
            // A deliberate ToolError of a nested tool; a message that only starts like a resource crash.
            ("outer", &["Error executing tool outer: Error executing tool inner: no such note"]),
            ("outer", &["Error executing tool outer: Error reading resource notes://1: permission denied"]),
            // Not the one text item the SDK writes.
            ("search_notes", &["Error executing tool search_notes", "more"]),
            ("search_notes", &[]),
        ];
        for (tool, texts) in quiet {
            let found = crashes(&crash_call(tool, "{}", texts, vec![]), &dual());
            assert!(found.is_empty(), "{tool} {texts:?}: {found:#?}");
        }
        // Not an isError result.
        let ok = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool add"}]}}"#;
        let mut transcript = crash_call("add", "{}", &["x"], vec![]);
        transcript.events[4] = got(ok);
        assert!(crashes(&transcript, &dual()).is_empty());
        // A learned surface that does not list the tool: not the author's tool.
        let surface = dual().with_surface(crate::surface::Surface::built_in());
        assert!(
            crashes(&crash_call("search_notes", "{}", &["Error executing tool search_notes"], vec![]), &surface)
                .is_empty()
        );
        assert_eq!(crashes(&crash_call("add", "{}", &["Error executing tool add"], vec![]), &surface).len(), 1);
    }
}
