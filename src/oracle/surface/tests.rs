//! Tests of the surface rules: each fires on its planted bug and not on the clean server; legal variations are
//! silent and malformed replies are findings.

use super::*;
use crate::model::ServerModel;
use crate::oracle::{Policy, check};
use crate::server::builtin::mutants::Mutant;
use crate::server::builtin::reference::{Calc, Planted};
use crate::server::run_in_process;
use crate::transcript::{Ending, Input};
use serde_json::json;
use std::sync::Arc;

/// The planted bugs whose expected rule is a surface rule.
fn surface_mutants() -> Vec<Mutant> {
    Mutant::ALL.into_iter().filter(|m| RULES.contains(&m.expected_rule())).collect()
}

#[test]
fn each_rule_fires_on_its_planted_bug_and_not_on_the_clean_server() {
    let rules: BTreeSet<&str> = surface_mutants().iter().map(|m| m.expected_rule()).collect();
    assert_eq!(rules, RULES.into_iter().collect(), "one planted bug per surface rule");
    for mutant in surface_mutants() {
        let inputs: Vec<Input> = mutant.trigger().into_iter().map(Input::Line).collect();
        let policy = mutant.policy();
        let planted = check(&run_in_process(&Planted(mutant), &inputs), &policy);
        assert!(planted.iter().any(|f| f.rule == mutant.expected_rule()), "{mutant}: {planted:?}");
        let clean = check(&run_in_process(&Calc, &inputs), &policy);
        assert!(clean.is_empty(), "{mutant}: the clean server: {clean:?}");
    }
}

fn line(value: Value) -> Input {
    Input::Line(value.to_string().into_bytes())
}

/// A handshake conversation: initialize, initialized, then `requests` (ids from 2).
fn handshake(requests: &[(&str, Value)]) -> Vec<Input> {
    let mut inputs = vec![
        line(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
            "capabilities":{},"clientInfo":{"name":"t","version":"1"}}})),
        line(json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
        Input::Sync,
    ];
    for (i, (method, params)) in requests.iter().enumerate() {
        inputs.push(line(json!({"jsonrpc":"2.0","id":i + 2,"method":method,"params":params})));
    }
    inputs.push(Input::Sync);
    inputs
}

fn policy() -> Policy {
    Policy::default().with_model(ServerModel::built_in()).with_surface(crate::surface::Surface::built_in())
}

#[test]
fn a_cancelled_tool_call_is_counted_as_cancelled_not_unanswered() {
    let call = |id: u32| json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"add"}}).to_string();
    let cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}).to_string();
    let reply = json!({"jsonrpc":"2.0","id":5,"result":{"content":[]}}).to_string();
    let events = |lines: &[(&str, bool)]| Transcript {
        events: lines
            .iter()
            .map(|(line, sent)| match sent {
                true => Event::Sent(line.as_bytes().to_vec()),
                false => Event::Received { line: line.as_bytes().to_vec(), truncated: false },
            })
            .collect(),
        ending: crate::transcript::Ending::Closed,
    };
    let (_, coverage) = crate::oracle::check_covered(&events(&[(&call(5), true), (&cancel, true)]), &policy());
    assert_eq!((coverage.tools["add"].cancelled, coverage.tools["add"].no_reply), (1, 0));
    // The id reused by a later call: the cancel is for that one, not the first.
    let reused = [(&call(5)[..], true), (&call(5)[..], true), (&cancel[..], true)];
    let (_, coverage) = crate::oracle::check_covered(&events(&reused), &policy());
    assert_eq!((coverage.tools["add"].cancelled, coverage.tools["add"].no_reply), (1, 1));
    // An answered call is not cancelled by a later cancel.
    let answered = [(&call(5)[..], true), (&reply[..], false), (&cancel[..], true)];
    let (_, coverage) = crate::oracle::check_covered(&events(&answered), &policy());
    assert_eq!((coverage.tools["add"].cancelled, coverage.tools["add"].results), (0, 1));
}

#[test]
fn a_connection_opened_by_an_enveloped_request_judges_no_later_handshake_request() {
    let envelope = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{}});
    let discover = json!({"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"x","_meta":envelope}});
    let refused = json!({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"prompts/get"}});
    let initialize = json!({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let initialized = json!({"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{},
        "serverInfo":{"name":"s","version":"1"}}});
    let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}});
    let no_meta = json!({"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"request _meta is missing"}});
    let transcript = |lines: &[&Value]| Transcript {
        events: lines
            .iter()
            .enumerate()
            .map(|(i, line)| match i % 2 {
                0 => Event::Sent(line.to_string().into_bytes()),
                _ => Event::Received { line: line.to_string().into_bytes(), truncated: false },
            })
            .collect(),
        ending: crate::transcript::Ending::Closed,
    };
    let rules =
        |lines: &[&Value]| -> Vec<&str> { check(&transcript(lines), &policy()).iter().map(|f| f.rule).collect() };
    assert!(!rules(&[&discover, &refused, &initialize, &initialized, &call, &no_meta]).contains(&TOOL_VALID_ARGS));
    let (batch, invalid) = (json!([]), json!({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}));
    let after_batch = [&batch, &invalid, &discover, &refused, &initialize, &initialized, &call, &no_meta];
    assert!(!rules(&after_batch).contains(&TOOL_VALID_ARGS), "a batch is no un-enveloped request");
    assert!(rules(&[&initialize, &initialized, &call, &no_meta]).contains(&TOOL_VALID_ARGS));
}

#[test]
fn an_error_that_came_only_after_the_long_wait_is_not_judged() {
    let initialize = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let initialized = json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},
        "serverInfo":{"name":"s","version":"1"}}});
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}});
    let closed = json!({"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Connection closed"}});
    let sent = |line: &Value| Event::Sent(line.to_string().into_bytes());
    let got = |line: &Value| Event::Received { line: line.to_string().into_bytes(), truncated: false };
    let waited = Event::Note(crate::transcript::Note::Waited { ms: 10_000 });
    let rules = |events: Vec<Event>| -> Vec<&str> {
        let transcript = Transcript { events, ending: crate::transcript::Ending::Closed };
        check(&transcript, &policy()).iter().map(|f| f.rule).collect()
    };
    let answered = vec![sent(&initialize), got(&initialized), sent(&call), got(&closed)];
    assert!(rules(answered).contains(&TOOL_VALID_ARGS), "an error in time is judged");
    let closing = vec![sent(&initialize), got(&initialized), sent(&call), waited, got(&closed)];
    assert!(!rules(closing).contains(&TOOL_VALID_ARGS), "an error only after the wait is the hang's");
}

#[test]
fn handshake_replies_are_judged_after_initialize_only() {
    let calls = [
        ("tools/call", json!({"name":"format_user","arguments":{"user":{"name":"Ada","age":3}},})),
        ("tools/call", json!({"name":"format_user","arguments":{"user":{}}})),
        ("tools/call", json!({"name":"stats","arguments":{"values":[1, 2.5],"precision":null}})),
        ("tools/call", json!({"name":"nope","arguments":{}})),
        ("prompts/get", json!({"name":"greeting","arguments":{"name":"x"}})),
        ("resources/read", json!({"uri":"calc://numbers/7"})),
        ("resources/read", json!({"uri": UNKNOWN_URI})),
        ("resources/templates/list", json!({})),
    ];
    let transcript = run_in_process(&Calc, &handshake(&calls));
    assert!(check(&transcript, &policy()).is_empty(), "{}", transcript.render());
    let (_, coverage) = crate::oracle::check_covered(&transcript, &policy());
    let format_user = &coverage.tools["format_user"];
    assert_eq!((format_user.calls, format_user.valid, format_user.invalid, format_user.is_error), (2, 1, 1, 1));
    assert_eq!(coverage.tools["nope"].errors[&INVALID_PARAMS], 1);
    // Every listed tool and resource has a row, called or not; only listed URIs are resource rows.
    assert_eq!(coverage.tools["add"].calls, 0);
    assert_eq!(coverage.resources.keys().collect::<Vec<_>>(), ["calc://logo", "calc://readme"]);
    assert!(coverage.resources.values().all(|c| c.calls == 0));
    let read = handshake(&[("resources/read", json!({"uri":"calc://readme"}))]);
    let (_, read) = crate::oracle::check_covered(&run_in_process(&Calc, &read), &policy());
    assert_eq!((read.resources["calc://readme"].calls, read.resources["calc://readme"].results), (1, 1));
    for rule in [TOOL_VALID_ARGS, TOOL_INVALID_ARGS, TOOL_OUTPUT_SCHEMA, CONTENT_SHAPE, TOOL_UNKNOWN, RESOURCE_UNKNOWN]
    {
        assert!(coverage.exercised.contains(rule), "{rule}: {:?}", coverage.exercised);
    }
    // Before initialize, the server's refusals are the lifecycle's business.
    let early = [
        line(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"format_user",
        "arguments":{"user":{"name":"Ada"}}}})),
        Input::Sync,
    ];
    let transcript = run_in_process(&Planted(Mutant::ValidArgsInternalError), &early);
    assert!(check(&transcript, &policy()).is_empty());
}

/// A transcript of one handshake `request` (after initialize) and the server's `reply` result or error.
fn answered(method: &str, params: Value, reply: Value) -> Transcript {
    let mut transcript = run_in_process(&Calc, &handshake(&[]));
    let sent = json!({"jsonrpc":"2.0","id":2,"method":method,"params":params});
    transcript.events.push(Event::Sent(sent.to_string().into_bytes()));
    let mut response = json!({"jsonrpc":"2.0","id":2});
    let key = if reply.get("code").is_some() { "error" } else { "result" };
    response[key] = reply;
    transcript.events.push(Event::Received { line: response.to_string().into_bytes(), truncated: false });
    transcript.events.push(Event::Sync);
    transcript.ending = Ending::Closed;
    transcript
}

fn rules(transcript: &Transcript) -> Vec<&'static str> {
    check(transcript, &policy()).iter().map(|f| f.rule).collect()
}

#[test]
fn legal_variations_are_not_findings() {
    // The Python SDK's isError result for an unknown tool; -32601 for a server that serves no prompts.
    let unknown = json!({"content":[{"type":"text","text":"Unknown tool: nope"}],"isError":true});
    assert!(rules(&answered("tools/call", json!({"name":"nope"}), unknown)).is_empty());
    let not_served = json!({"code":-32601,"message":"Method not found"});
    assert!(rules(&answered("prompts/get", json!({"name":"x"}), not_served.clone())).is_empty());
    assert!(rules(&answered(TEMPLATES_LIST, json!({"cursor": BAD_CURSOR}), not_served)).is_empty());
    // -32602 for a resource not found on a handshake connection (SEP-2164, the SDKs).
    let refused = json!({"code":-32602,"message":"Unknown resource"});
    assert!(rules(&answered("resources/read", json!({"uri": UNKNOWN_URI}), refused)).is_empty());
    // A successful result for arguments the schema refuses: a server may coerce.
    let coerced = json!({"content":[{"type":"text","text":"3"}],"isError":false});
    assert!(rules(&answered("tools/call", json!({"name":"add","arguments":{"a":"1","b":2}}), coerced)).is_empty());
    // Content types this harness does not know are not judged.
    let future = json!({"content":[{"type":"hologram"}]});
    assert!(rules(&answered("tools/call", json!({"name":"logo","arguments":{}}), future)).is_empty());
    // Valid arguments, a listed resource, but a `_meta` that is not an object: the params are invalid, and the
    // Python SDK's -32602 is legal; with an object `_meta` the same refusal is a finding.
    let invalid = json!({"code":-32602,"message":"Invalid request parameters"});
    let call = |meta: Value| json!({"name":"add","arguments":{"a":2,"b":9},"_meta":meta});
    assert!(rules(&answered("tools/call", call(json!("")), invalid.clone())).is_empty());
    assert!(rules(&answered("tools/call", call(json!(true)), invalid.clone())).is_empty());
    assert_eq!(rules(&answered("tools/call", call(json!({})), invalid.clone())), [TOOL_VALID_ARGS]);
    let read = |meta: Value| json!({"uri":"calc://readme","_meta":meta});
    assert!(rules(&answered("resources/read", read(json!("")), invalid.clone())).is_empty());
    assert_eq!(rules(&answered("resources/read", read(json!({})), invalid)), [RESOURCE_READABLE]);
    // An input_required result asks for input: it is not the call's answer, and no surface rule judges it (the
    // MCP layer does).
    let needs = json!({"resultType":"input_required","requestState":"s"});
    let user = json!({"name":"format_user","arguments":{"user":{"name":"Ada"}}});
    for (method, params) in [("tools/call", user), ("prompts/get", json!({"name":"greeting","arguments":{}}))] {
        let found = rules(&answered(method, params, needs.clone()));
        assert!(found.iter().all(|rule| !RULES.contains(rule)), "{method}: {found:?}");
    }
}

#[test]
fn malformed_replies_are_findings() {
    let no_content = json!({"isError":"no"});
    let found = rules(&answered("tools/call", json!({"name":"add","arguments":{"a":1,"b":2}}), no_content));
    assert_eq!(found, [CONTENT_SHAPE, CONTENT_SHAPE]);
    let bad_blob = json!({"contents":[{"uri":"calc://logo","blob":"***"}]});
    assert_eq!(rules(&answered("resources/read", json!({"uri":"calc://logo"}), bad_blob)), [CONTENT_SHAPE]);
    let tools = json!({"tools":[{"name":"a","inputSchema":null},{"name":"a","inputSchema":{"type":"object"}}],
        "nextCursor": 3});
    assert_eq!(rules(&answered("tools/list", json!({}), tools)), [LIST_SHAPE, LIST_SHAPE, LIST_DUPLICATE_NAME]);
    let no_structured = json!({"content":[{"type":"text","text":"Ada"}]});
    let call = json!({"name":"format_user","arguments":{"user":{"name":"Ada"}}});
    assert_eq!(rules(&answered("tools/call", call, no_structured)), [TOOL_OUTPUT_SCHEMA]);
    let surface = crate::surface::Surface::default();
    let unlearned = Policy::default().with_model(ServerModel::built_in()).with_surface(Arc::new(surface));
    let transcript = answered("tools/call", json!({"name":"nope"}), json!({"content":[]}));
    assert!(check(&transcript, &unlearned).is_empty(), "a surface never learned judges nothing");
}

#[test]
fn a_completion_result_has_the_shape_schema_ts_gives_it() {
    let params = json!({"ref":{"type":"ref/prompt","name":"greeting"},"argument":{"name":"name","value":"w"}});
    let completed = |completion: Value| rules(&answered(COMPLETE, params.clone(), json!({ "completion": completion })));
    // Quiet: values only; with total and hasMore; an error (a server that offers no completions).
    assert!(completed(json!({"values":[]})).is_empty());
    assert!(completed(json!({"values":["Ada","Alan"],"total":250,"hasMore":true})).is_empty());
    let refused = json!({"code":-32601,"message":"Method not found"});
    assert!(rules(&answered(COMPLETE, params.clone(), refused)).is_empty());
    // Fires: more than 100 values, a value that is not a string, a total or hasMore of the wrong type, no
    // completion object; judged without a learned surface too.
    let many: Vec<String> = (0..101).map(|i| format!("v{i}")).collect();
    assert_eq!(completed(json!({ "values": many })), [COMPLETION_SHAPE]);
    assert_eq!(completed(json!({"values":["a",1]})), [COMPLETION_SHAPE]);
    assert_eq!(completed(json!({"values":[],"total":"3","hasMore":1})), [COMPLETION_SHAPE]);
    assert_eq!(rules(&answered(COMPLETE, params.clone(), json!({"values":[]}))), [COMPLETION_SHAPE]);
    let unlearned = Policy::default().with_model(ServerModel::built_in());
    let transcript = answered(COMPLETE, params, json!({"completion":{"values":[1]}}));
    let found: Vec<&str> = check(&transcript, &unlearned).iter().map(|f| f.rule).collect();
    assert_eq!(found, [COMPLETION_SHAPE]);
}

#[test]
fn an_x_mcp_header_is_judged_in_2026_07_28_lists_only() {
    // A legacy list's `x-mcp-header` is an unknown keyword, not an annotation: the planted bug's list, read on a
    // handshake connection, breaks nothing.
    let schema = json!({"type":"object","properties":{"a":{"type":"integer","x-mcp-header":"First Number"}}});
    let tools = json!({"tools":[{"name":"add","inputSchema": schema}]});
    assert!(rules(&answered("tools/list", json!({}), tools)).is_empty());
}

#[test]
fn an_error_for_valid_arguments_breaks_nothing_before_2025_11_25() {
    // tools.mdx before SEP-1303 lists invalid arguments and server errors among protocol errors (firecrawl-fastmcp
    // 1.0.5 on a 2025-06-18 connection refuses arguments its schema accepts with -32602).
    let at = |version: &str| {
        let mut transcript = answered(
            "tools/call",
            json!({"name":"add","arguments":{"a":2,"b":9}}),
            json!({"code":-32602,"message":"Provide exactly one of a or b"}),
        );
        for event in &mut transcript.events {
            if let Event::Sent(line) | Event::Received { line, .. } = event {
                *line = String::from_utf8_lossy(line).replace("2025-11-25", version).into_bytes();
            }
        }
        rules(&transcript)
    };
    assert_eq!(at("2025-11-25"), [TOOL_VALID_ARGS]);
    assert_eq!(at("2025-06-18"), Vec::<&str>::new());
    assert_eq!(at("2024-11-05"), Vec::<&str>::new());
}
