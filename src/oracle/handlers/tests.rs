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
    let traceback = "Traceback (most recent call last):\n  server.py:66 in date_diff\nValueError: Invalid isoformat";
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
    let failed = r#"{"jsonrpc":"2.0","id":"again","result":{"isError":true,"content":[{"type":"text","text":"no"}]}}"#;
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
    let reply = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{}],"isError":true}}}}"#, content.join(","));
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
fn the_typescript_sdks_texts_for_a_broken_output_and_a_programming_error_are_crashes_and_deliberate_errors_are_not() {
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
        crashes(&crash_call("search_notes", "{}", &["Error executing tool search_notes"], vec![]), &surface).is_empty()
    );
    assert_eq!(crashes(&crash_call("add", "{}", &["Error executing tool add"], vec![]), &surface).len(), 1);
}

// chroma-mcp 0.2.6 (FastMCP of `mcp` 1.6.0, which it pins), two conversations of the sixth round of published servers
// as the runs saw them (cases in docs/src/measured/real-servers.md), each with the failure its stderr showed. Each
// frame is a line sent or `--` (a sync point); `$META` is the envelope's `_meta`, `$BYTES` the bytes ff fe c0 80 (not
// UTF-8), `$CR` a carriage return.

/// The `_meta` of an enveloped request.
const META: &str =
    r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// Conversation 0 of seed 1796677786809384515: the run pinned SERVER-HANDLER-PANIC on the `ping` "5" (frame 6), its
/// replay (batches spread: a handshake-era server model) on the `tools/call` of `subtract` in the batch of frame 11.
const CHROMA_RUN_1: [&str; 13] = [
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"reason":"wirefuzz"}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":$META}}"#,
    r#"--"#,
    r#"{"jsonrpc":"2.0","id":"","method":"resources/templates/list"}"#,
    r#"{"jsonrpc":"2.0","id":9007199254740999,"method":"prompts/get","params":{"name":"wirefuzz-no-such-prompt","arguments":{},"_meta":$META,"wirefuzz":"$BYTES"}}"#,
    r#"{"jsonrpc":"2.0","id":4.0,"method":"server/discover","params":{"_meta":$META,"wirefuzz":"\ud800"}}"#,
    r#"{"jsonrpc":"2.0","id":"5","method":"ping","params":{"_meta":$META}}$CR"#,
    r#"{"jsonrpc":"2.0","id":"stray","result":{}}"#,
    r#"{"jsonrpc":"2.0","id":6e+3,"method":"tools/list","params":{"_meta":$META}}"#,
    r#"[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":{"n":7},"method":"ping","params":{"_meta":$META}},{"jsonrpc":"2.0","id":[8],"method":"prompts/get","params":{"name":"wirefuzz-no-such-prompt","arguments":{},"_meta":$META}}]"#,
    r#"{"jsonrpc":"2.0","id":9e+3,"method":"tools/list","params":{"cursor":"wirefuzz-no-such-cursor"}}"#,
    r#"[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"5","reason":"wirefuzz"}},{"jsonrpc":"2.0","id":"req-10","method":"resources/read","params":{"uri":"wirefuzz-unknown:///no/such/resource","_meta":$META}},{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"subtract","arguments":{"a":1,"b":2},"_meta":$META}}]"#,
    r#"[]"#,
];

/// The failure noted in that conversation (870 bytes, as the run's transcript shows it): the excerpt of chroma's
/// stderr where the SDK's stdin reader (anyio `readline` in a worker thread) fails on the line of frame 4, which ends
/// the process. No request's tool, prompt or URI is in it.
const CHROMA_STDIN_READER: &str = r#"    | Traceback (most recent call last):
    |   File "/tmp/r6/chroma/venv/lib/python3.11/site-packages/anyio/to_thread.py", line 65, in run_sync
    |     return await get_async_backend().run_sync_in_worker_thread(
    |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    |   File "/tmp/r6/chroma/venv/lib/python3.11/site-packages/anyio/_backends/_asyncio.py", line 2779, in run_sync_in_worker_thread
    |     return await future
    |            ^^^^^^^^^^^^
    |   File "/tmp/r6/chroma/venv/lib/python3.11/site-packages/anyio/_backends/_asyncio.py", line 1124, in run
    |     result = context.run(func, *args)
    |              ^^^^^^^^^^^^^^^^^^^^^^^^
    |   File "<frozen codecs>", line 322, in decode
    | UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 581: invalid start byte
    +------------------------------------"#;

/// Conversation 5 of seed 1796679535151929701: the run pinned SERVER-HANDLER-PANIC on the `resources/list` "é中😀"
/// (frame 5) for the validation error of the `server/discover` beside it.
const CHROMA_RUN_2: [&str; 19] = [
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"reason":"wirefuzz"}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":$META}}"#,
    r#"--"#,
    r#"{}"#,
    r#"[{"jsonrpc":"2.0","id":"","method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"wirefuzz-no-such-prompt"},"argument":{"name":"wirefuzz","value":"w"}}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"","reason":"wirefuzz"}}]"#,
    r#"{"jsonrpc":"2.0","id":"é中😀","method":"resources/list","params":{"_meta":$META}}"#,
    r#"{"jsonrpc":"2.0","id":true,"method":"server/discover","params":{"_meta":$META}}"#,
    r#"--"#,
    r#"{"jsonrpc":"2.0","id":"stray","result":{}}"#,
    r#"[{"jsonrpc":"2.0","id":5.0,"method":"tools/call","params":{"name":"subtract","arguments":{"a":1,"b":2}}}]"#,
    r#"{}"#,
    r#"[{"jsonrpc":"2.0","id":9007199254741005,"method":"ping","params":{"_meta":$META}}]"#,
    r#"{"jsonrpc":"2.0","id":1844674407370955161000000000000000000007,"method":"prompts/get","params":{"name":"wirefuzz-no-such-prompt","arguments":{},"_meta":{}}}"#,
    r#"42"#,
    r#"--"#,
    r#"{"jsonrpc":"2.0","id":"é中😀-8","method":"prompts/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"--"#,
    r#"[]"#,
    r#"[{"jsonrpc":"2.0","method":"notifications/wirefuzz"},{"jsonrpc":"2.0","id":null,"method":"server/discover"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"é中😀-8","reason":"wirefuzz"}}]"#,
];

/// The failure noted in that conversation (997 bytes, as the run's transcript shows it): the excerpt (the last 12
/// lines) of `mcp` 1.6.0 failing to validate the enveloped `server/discover` against its `ClientRequest` union, each of
/// its 24 errors with `input_value='server/discover'`, which ends the process. A bare FastMCP server of the same SDK
/// writes the same lines.
const SDK_SERVER_DISCOVER: &str = r#"      | Traceback (most recent call last):
      |   Field required [type=missing, input_value={'_meta': {'io.modelconte...lientCapabilities': {}}}, input_type=dict]
      |     For further information visit https://errors.pydantic.dev/2.10/v/missing
      | CallToolRequest.method
      |   Input should be 'tools/call' [type=literal_error, input_value='server/discover', input_type=str]
      |     For further information visit https://errors.pydantic.dev/2.10/v/literal_error
      | CallToolRequest.params.name
      |   Field required [type=missing, input_value={'_meta': {'io.modelconte...lientCapabilities': {}}}, input_type=dict]
      |     For further information visit https://errors.pydantic.dev/2.10/v/missing
      | ListToolsRequest.method
      |   Input should be 'tools/list' [type=literal_error, input_value='server/discover', input_type=str]
      |     For further information visit https://errors.pydantic.dev/2.10/v/literal_error
      +------------------------------------"#;

/// A failure noted.
fn noted(failure: &str) -> Note {
    Note::Failure(failure.into())
}

/// The events of a conversation of chroma's `frames`: its two prints on stdout after the first request (as its runs
/// saw them), and `note` after frame `noted`.
fn chroma(frames: &[&str], noted: usize, note: Note) -> Vec<Event> {
    let mut events = Vec::new();
    for (index, frame) in frames.iter().enumerate() {
        let line = frame.replace("$META", META).replace("$CR", "\r");
        let bytes: Vec<Vec<u8>> = line.split("$BYTES").map(|part| part.as_bytes().to_vec()).collect();
        events.push(match *frame {
            "--" => Event::Sync,
            _ => Event::Sent(bytes.join(&[0xff, 0xfe, 0xc0, 0x80][..])),
        });
        if index == 1 {
            events.extend([got("Successfully initialized Chroma client"), got("Starting MCP server")]);
        }
        if index == noted {
            events.push(Event::Note(note.clone()));
        }
    }
    events
}

/// The server models chroma's conversations were judged under: none (the run, whose learning gave up), a handshake
/// server (the replay: its batches spread into requests), a dual-era one.
fn chroma_policies() -> [Policy; 3] {
    let handshake = Policy::default().with_model(crate::model::ServerModel::stated(crate::model::Eras::Handshake));
    [Policy::default(), handshake, dual()]
}

#[test]
fn the_traceback_of_the_sdks_stdin_reader_names_no_request_and_is_pinned_on_none() {
    let text = CHROMA_STDIN_READER;
    assert!(text.starts_with("    | Traceback (most recent call last):\n    |   File \"/tmp/r6/chroma/venv/lib/python3.11/site-packages/anyio/to_thread.py\", line 65, in run_sync"), "{text}");
    assert!(text.contains("UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff"), "{text}");
    let events = chroma(&CHROMA_RUN_1, CHROMA_RUN_1.len() - 1, noted(text));
    assert!(matches!(&events[8], Event::Sent(line) if line.ends_with(b"}}}\r")), "{:?}", events[8]);
    for policy in chroma_policies() {
        let found = check(&Transcript { events: events.clone(), ending: Ending::Closed }, &policy);
        assert!(!ids(&found).contains(&HANDLER_PANIC), "{found:#?}");
        assert!(ids(&found).contains(&RESPONSE_MISSING), "server/discover is still unanswered: {found:#?}");
    }
}

#[test]
fn a_validation_error_naming_server_discover_is_pinned_neither_on_it_nor_on_the_resources_list_beside_it() {
    let text = SDK_SERVER_DISCOVER;
    // The pydantic errors' tail, no frame: it names server/discover (the value sent) and the methods it expected.
    assert!(
        text.starts_with("      | Traceback (most recent call last):\n      |   Field required [type=missing"),
        "{text}"
    );
    assert!(text.contains("Input should be 'tools/call' [type=literal_error, input_value='server/discover'"), "{text}");
    let events = chroma(&CHROMA_RUN_2, 6, noted(text));
    let ending = Ending::Exited { code: Some(1), signal: None, stderr_tail: text.as_bytes().to_vec() };
    for policy in chroma_policies() {
        let found = check(&Transcript { events: events.clone(), ending: ending.clone() }, &policy);
        assert!(!ids(&found).contains(&HANDLER_PANIC), "{found:#?}");
        // The server/discover the error names was never answered: JSONRPC-RESPONSE-MISSING's, as the SDK dropped it
        // before any handler ran (a SERVER-HANDLER-PANIC would supersede it).
        let missing = found.iter().find(|f| f.rule == RESPONSE_MISSING);
        assert_eq!(missing.map(|f| f.event), Some(Some(1)), "{found:#?}");
    }
}

/// A chroma tool's handler raising through the SDK, as a Python traceback shows it.
const CHROMA_TOOL_RAISED: &str = "Traceback (most recent call last):\n  \
    File \"/venv/lib/python3.11/site-packages/mcp/server/lowlevel/server.py\", line 467, in _handle_request\n    \
    response = await handler(req)\n               ^^^^^^^^^^^^^^^^^^\n  \
    File \"/venv/lib/python3.11/site-packages/chroma_mcp/server.py\", line 160, in chroma_list_collections\n    \
    colls = client.list_collections(limit=limit, offset=offset)\n  \
    File \"/venv/lib/python3.11/site-packages/chromadb/api/client.py\", line 100, in list_collections\n    \
    raise ValueError(\"offset must be non-negative\")\nValueError: offset must be non-negative";

#[test]
fn a_traceback_naming_the_unanswered_calls_tool_is_pinned_on_it_and_on_no_other_request() {
    let list = |id: &str, offset: i32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"chroma_list_collections","arguments":{{"offset":{offset}}}}}}}"#
        )
    };
    let peek = r#"{"jsonrpc":"2.0","id":"peek","method":"tools/call","params":{"name":"chroma_peek_collection","arguments":{}}}"#;
    let handshake = [sent(INIT), got(INIT_OK), sent(INITIALIZED)];
    // A call of another tool left unanswered after it (the latest unanswered request): the traceback names only the
    // first.
    let mut events: Vec<Event> = handshake.iter().cloned().chain([sent(&list("1", -1)), sent(peek)]).collect();
    events.push(Event::Note(Note::Failure(CHROMA_TOOL_RAISED.into())));
    let found = check(&Transcript { events: events.clone(), ending: Ending::Closed }, &dual());
    let panics: Vec<_> = found.iter().filter(|f| f.rule == HANDLER_PANIC).collect();
    assert_eq!(panics.len(), 1, "{found:#?}");
    assert_eq!(panics[0].event, Some(3), "the call of chroma_list_collections: {found:#?}");
    for part in
        [r#"tool "chroma_list_collections" with arguments {"offset":-1}"#, "ValueError: offset must be non-negative"]
    {
        assert!(panics[0].detail.contains(part), "{part}: {}", panics[0].detail);
    }
    // Two unanswered calls of the tool it names: it is not told whose.
    events.insert(4, sent(&list("2", 5)));
    let found = check(&Transcript { events, ending: Ending::Closed }, &dual());
    assert!(!ids(&found).contains(&HANDLER_PANIC), "{found:#?}");
    // A tool whose name is only a library frame's function or source (anyio's `in run`).
    for tool in ["run", "run_sync", "run_sync_in_worker_thread"] {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
        );
        let mut events: Vec<Event> = handshake.iter().cloned().chain([sent(&call)]).collect();
        events.push(Event::Note(noted(CHROMA_STDIN_READER)));
        let found = check(&Transcript { events, ending: Ending::Closed }, &dual());
        assert!(!ids(&found).contains(&HANDLER_PANIC), "{tool}: {found:#?}");
    }
}

#[test]
fn a_rust_panic_that_names_no_request_is_the_one_open_handler_calls_only() {
    let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
    let get_note =
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_note","arguments":{"id":0}}}"#;
    let panic = || Event::Note(Note::Failure(PANIC.into()));
    // The one open tool call, beside a ping the SDK left unanswered: the call's.
    let pinned = |found: &[crate::oracle::Finding]| -> Vec<Option<usize>> {
        found.iter().filter(|f| f.rule == HANDLER_PANIC).map(|f| f.event).collect()
    };
    let found = check(&transcript(false, vec![sent(ping), panic()]), &dual());
    assert_eq!(pinned(&found), [Some(5)], "{found:#?}");
    // Two open tool calls: not told which.
    let found = check(&transcript(false, vec![sent(get_note), panic()]), &dual());
    assert!(!ids(&found).contains(&HANDLER_PANIC), "{found:#?}");
    // A backtrace's frame of the author's that names one of them (`failures` keeps it): that one's.
    let backtrace = format!("{PANIC}\nrmcp_notes::Notes::get_note::{{{{closure}}}}");
    let found = check(&transcript(false, vec![sent(get_note), Event::Note(Note::Failure(backtrace))]), &dual());
    assert_eq!(pinned(&found), [Some(6)], "{found:#?}");
}
