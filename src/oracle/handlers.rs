//! The server author's own handlers: a request left unanswered because its handler panicked or raised
//! (`SERVER-HANDLER-PANIC`, on a [`Note::Failure`]), one whose handler never returns (`SERVER-HANDLER-HANG`, on a
//! [`Note::Waited`]), and a tool call the SDK answered with its text for a crash (`SERVER-HANDLER-CRASH`, on the
//! reply). Each finding names the method, the tool (or prompt, or resource) and the arguments; a hang is put on the
//! request left unanswered, a panic on the unanswered request its report names ([`owner`]: never on one it does not),
//! a crash on its reply.

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
                // A request the client cancelled before the failure was seen is owed nothing (cancellation.mdx), so
                // its silence says nothing of its handler: the harness cancels a slow tool call, and a traceback the
                // SDK logs for another call (a tool's deliberate error answered with isError) is not that call's.
                let uncancelled = |i: usize| {
                    let Event::Sent(line) = &input.transcript.events[i] else { return true };
                    let id = serde_json::from_slice::<Value>(line).ok().and_then(|m| m.get("id").cloned());
                    id.is_none_or(|id| !cancelled(&input.transcript.events[i..at], &id))
                };
                let owed = |i: usize| unanswered(i) && !blamed.contains(&i) && uncancelled(i);
                let Some(request) = owner(input, failure, at, window, owed) else { continue };
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

/// The request whose handler the failure noted at event `at` reports, by what the report itself names: of the
/// requests sent before it that are `owed` (unanswered, not cancelled before it, not blamed yet), the one whose
/// tool, prompt or resource URI the report names as a word ([`evidence`]), when no other owed request is named
/// alike; it must be a `tools/call`, `prompts/get` or `resources/read` a handler of the author's ran ([`handled`]).
/// A call of the same tool answered with an `isError` result in `window` (the events since the failure noted before)
/// leaves it ambiguous: Python SDKs log the traceback of a tool's error they answer.
///
/// A Rust panic that names no request at all (rmcp runs each request's handler in a task of its own, and the
/// transports note no panic located in the SDK) is an author's handler's, and identifies its request when exactly
/// one such request is owed (and no tool call was answered with `isError` in `window`).
///
/// Anything else is no request's: a traceback that names none (the SDK's stdin reader failing on bytes that are not
/// UTF-8), one that names a request only by its method (the SDK's validation of a method it does not know, before
/// any handler ran: `JSONRPC-RESPONSE-MISSING` reports that request), one that names several owed requests.
fn owner(
    input: &LayerInput,
    failure: &str,
    at: usize,
    window: std::ops::Range<usize>,
    owed: impl Fn(usize) -> bool,
) -> Option<usize> {
    let events = &input.transcript.events;
    let handler = |i: usize| matches!(&events[i], Event::Sent(line) if handled(line).is_some());
    let tool = |i: usize| target(&events[i]).filter(|(method, _)| method == TOOLS_CALL).map(|(_, name)| name);
    // A tool call of a tool `answered` accepts, answered with an isError result in the window.
    let answered_error = |answered: &dyn Fn(&str) -> bool| {
        (0..window.end).any(|i| {
            tool(i).is_some_and(|name| answered(&name))
                && input.answers[i].is_some_and(|reply| window.contains(&reply) && is_error(&events[reply]))
        })
    };
    let evidence = evidence(failure);
    let named = |i: usize| target(&events[i]).is_some_and(|(_, named)| names_word(&evidence, &named));
    let open_named: Vec<usize> = (0..at).filter(|&i| named(i) && owed(i)).collect();
    if !open_named.is_empty() {
        let [request] = open_named[..] else { return None };
        let logged = tool(request).is_some_and(|own| answered_error(&|name| name == own));
        return (handler(request) && !logged).then_some(request);
    }
    let panic = failure.lines().next().is_some_and(|line| line.contains(RUST_PANIC));
    if !panic || (0..at).any(named) {
        return None;
    }
    let open: Vec<usize> = (0..at).filter(|&i| owed(i) && handler(i)).collect();
    let [request] = open[..] else { return None };
    (!answered_error(&|_| true)).then_some(request)
}

/// What starts a Rust panic's report (in-process, and over stdio after the thread's name).
const RUST_PANIC: &str = "panicked at";

/// The method of a request sent at `event` whose handler is the author's, and what it names: the tool of a
/// `tools/call`, the prompt of a `prompts/get`, the URI of a `resources/read`.
fn target(event: &Event) -> Option<(String, String)> {
    let Event::Sent(line) = event else { return None };
    let message = serde_json::from_slice::<Value>(line).ok()?;
    let method = message.get("method")?.as_str()?;
    let key = match method {
        TOOLS_CALL | PROMPTS_GET => "name",
        RESOURCES_READ => "uri",
        _ => return None,
    };
    Some((method.to_string(), message.get("params")?.get(key)?.as_str()?.to_string()))
}

/// True when `event` is a reply whose result is an `isError` one.
fn is_error(event: &Event) -> bool {
    let Event::Received { line, .. } = event else { return false };
    serde_json::from_slice::<Value>(line).is_ok_and(|r| r.pointer("/result/isError") == Some(&Value::Bool(true)))
}

/// The packages whose frames in a Python traceback are the SDK's, its transport's or its validation's: their
/// function names and source lines say nothing of which request failed (a tool named `run` is not the frame
/// `in run` of anyio).
const LIBRARY_PACKAGES: [&str; 9] =
    ["mcp", "fastmcp", "anyio", "pydantic", "pydantic_core", "starlette", "uvicorn", "httpx", "sse_starlette"];

/// What in a failure's report may name a request: the report without the frames of Python's standard library,
/// of [`LIBRARY_PACKAGES`] and of the harness's fork server (each a `File "PATH", line N, in FUNCTION` line and its
/// source lines), and without the values pydantic says it expected (`Input should be 'tools/call'` in the
/// validation error of a request whose method is another: only its `input_value` is what was sent).
fn evidence(failure: &str) -> String {
    let mut kept = Vec::new();
    let mut library = false;
    for line in failure.lines() {
        // A traceback inside an exception group prints each line after `| `.
        let content = match line.trim_start().strip_prefix('|') {
            Some(rest) => rest.strip_prefix(' ').unwrap_or(rest),
            None => line,
        };
        match content.trim_start().strip_prefix("File \"").and_then(|rest| rest.split('"').next()) {
            Some(path) => library = library_frame(path),
            // A frame's source line (and its carets) is indented under it; anything else ends the frame.
            None => library &= content.starts_with("    "),
        }
        if library {
            continue;
        }
        match line.find("Input should be ") {
            Some(start) => {
                let end = line[start..].find("[type=").map_or(line.len(), |end| start + end);
                kept.push(format!("{}{}", &line[..start], &line[end..]));
            }
            None => kept.push(line.to_string()),
        }
    }
    kept.join("\n")
}

/// True when a Python frame's file is not the author's: the standard library (`<frozen codecs>`,
/// `lib/python3.11/asyncio/...`), one of [`LIBRARY_PACKAGES`], or the harness's fork server.
fn library_frame(path: &str) -> bool {
    let path = path.replace('\\', "/");
    let package = |dir: &str| LIBRARY_PACKAGES.iter().any(|package| path.contains(&format!("{dir}/{package}/")));
    path.starts_with('<')
        || path.ends_with("wirefuzz_forkserver.py")
        || package("site-packages")
        || package("dist-packages")
        || (!path.contains("-packages/")
            && path.split("/lib/python").nth(1).is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit())))
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
mod tests;
