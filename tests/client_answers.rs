//! The harness as a client: a server's own request gets the answer of what the conversation declared, in-process
//! and over stdio (the reference server with the planted bug `elicits-undeclared`, which sends
//! `elicitation/create` from every handshake `tools/call`), and SERVER-UNDECLARED-CAPABILITY fires only on the
//! conversation that did not declare elicitation. A Python SDK tool that waits for its elicitation's answer
//! (`tests/servers/asking.py`) gets it over stdio and returns. A 2026-07-28 `input_required` tool (the reference
//! server's conformance fixtures) gets its retries, in-process, over stdio and over HTTP: valid answers reach its
//! result, a tampered state is refused, and neither is a finding.

#[path = "common/tier.rs"]
mod tier;

use mcp_wirefuzz::model::{Eras, ServerModel};
use mcp_wirefuzz::oracle::check;
use mcp_wirefuzz::protocol::client::{ANSWERS_KEY, Answers};
use mcp_wirefuzz::script::Declares;
use mcp_wirefuzz::server::builtin::http;
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::builtin::reference::{CalcWithFixtures, Planted};
use mcp_wirefuzz::server::transport::http::HttpSpec;
use mcp_wirefuzz::server::transport::stdio::StdioTarget;
use mcp_wirefuzz::server::{InProcess, ServerCommand, ServerSpec, Target, Timeouts};
use mcp_wirefuzz::surface::Surface;
use mcp_wirefuzz::transcript::{Event, Input, Transcript};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

fn conversation(declares: Declares) -> Vec<Input> {
    let line = |value: serde_json::Value| Input::Line(serde_json::to_vec(&value).unwrap());
    let mut params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": declares.capabilities(),
        "clientInfo": { "name": "t", "version": "1" },
    });
    if let Declares::Everything(style) = declares {
        params["_meta"] = json!({ ANSWERS_KEY: style.name() });
    }
    vec![
        line(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params })),
        line(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })),
        Input::Sync,
        line(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": "add", "arguments": { "a": 1, "b": 2 } } })),
    ]
}

/// Runs both conversations on `target`: the answer sent after the request is the one its declaration calls for,
/// and only the undeclared one is a finding.
fn answers_as_declared(target: &mut dyn Target) {
    let policy = Mutant::ElicitsUndeclared.policy();
    for (declares, answer, fires) in [
        (Declares::Nothing, r#""code":-32601"#, true),
        (Declares::Everything(Answers::Decline), r#""action":"decline""#, false),
    ] {
        let transcript: Transcript = target.run(&conversation(declares)).unwrap();
        let rendered = transcript.render();
        let asked = transcript.events.iter().position(|event| {
            matches!(event, Event::Received { line, .. } if String::from_utf8_lossy(line).contains("elicitation/create"))
        });
        let asked = asked.unwrap_or_else(|| panic!("no elicitation request: {rendered}"));
        // The first line sent after the request is its answer (in-process, after the rest the call wrote).
        let sent = transcript.events[asked..].iter().find_map(|event| match event {
            Event::Sent(line) => Some(String::from_utf8_lossy(line).into_owned()),
            _ => None,
        });
        let sent = sent.unwrap_or_else(|| panic!("no answer: {rendered}"));
        assert!(sent.contains(r#""id":"calc-elicit-1""#) && sent.contains(answer), "{sent}");
        let rules: Vec<&str> = check(&transcript, &policy).iter().map(|f| f.rule).collect();
        assert_eq!(rules, if fires { vec!["SERVER-UNDECLARED-CAPABILITY"] } else { vec![] }, "{rendered}");
    }
}

#[test]
fn in_process_a_request_of_the_server_gets_the_answer_of_what_was_declared() {
    answers_as_declared(&mut InProcess(Planted(Mutant::ElicitsUndeclared)));
}

#[test]
fn over_stdio_a_request_of_the_server_gets_the_answer_of_what_was_declared() {
    let argv = [env!("CARGO_BIN_EXE_mcp-wirefuzz"), "serve", "--mutant", "elicits-undeclared"].map(String::from);
    let command = ServerCommand::from_argv(&argv).unwrap();
    answers_as_declared(&mut StdioTarget::new(command, Timeouts::default()));
}

#[test]
fn a_python_sdk_tool_waiting_for_its_elicitation_gets_the_answer_and_returns() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    if !python.exists() {
        return tier::skip("the Python SDK server that elicits", "no .venv (run .ci/python-venv)");
    }
    let argv = [python, root.join("tests/servers/asking.py")].map(|path| path.display().to_string());
    let mut target = StdioTarget::new(ServerCommand::from_argv(&argv).unwrap(), Timeouts::default());
    let call = |declares: Declares| {
        let mut inputs = conversation(declares);
        inputs[3] = Input::Line(
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm","arguments":{}}}"#.to_vec(),
        );
        inputs
    };
    // The SDK sends the elicitation whatever the client declared (mcp 2.3.0 does not check): a finding when
    // nothing was declared. Either way the harness answers, and the call gets its reply: the user's action, or the
    // client's -32601 passed on as the call's error.
    let answers = [
        (Declares::Everything(Answers::Decline), r#""decline""#, false),
        (Declares::Everything(Answers::Accept), r#""accept""#, false),
        (Declares::Nothing, r#""code":-32601"#, true),
    ];
    for (declares, text, fires) in answers {
        let transcript = target.run(&call(declares)).unwrap();
        let rendered = transcript.render();
        let result = transcript.events.iter().find_map(|event| match event {
            Event::Received { line, .. } if String::from_utf8_lossy(line).contains(r#""id":2,"#) => {
                Some(String::from_utf8_lossy(line).into_owned())
            }
            _ => None,
        });
        let result = result.unwrap_or_else(|| panic!("the tool never returned: {rendered}"));
        assert!(result.contains(text), "{declares:?}: {result}");
        let rules: Vec<&str> =
            check(&transcript, &mcp_wirefuzz::oracle::Policy::default()).iter().map(|f| f.rule).collect();
        assert_eq!(rules.contains(&"SERVER-UNDECLARED-CAPABILITY"), fires, "{declares:?}: {rules:?}\n{rendered}");
        assert!(!rules.iter().any(|rule| rule.contains("HANG") || rule.contains("MISSING")), "{rules:?}\n{rendered}");
    }
}

/// A 2026-07-28 conversation with the reference server and its conformance fixtures: a two-round
/// `input_required` tool called with every capability declared and answers in `style`.
fn multi_round(style: Answers) -> Vec<Input> {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": Declares::Everything(Answers::Accept).capabilities(),
    });
    if style != Answers::Accept {
        meta[ANSWERS_KEY] = json!(style.name());
    }
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "test_input_required_result_multi_round", "arguments": {}, "_meta": meta } });
    vec![Input::Line(serde_json::to_vec(&call).unwrap()), Input::Sync]
}

/// The harness drives the rounds: valid answers reach the tool's final result; a tampered state is refused by the
/// server, and neither is a finding.
fn drives_the_rounds(target: &mut dyn Target) {
    let policy = mcp_wirefuzz::oracle::Policy::default();
    for (style, last) in [
        (Answers::Accept, "Multi-round complete for mcp-wirefuzz who likes mcp-wirefuzz"),
        (Answers::TamperState, "Invalid or expired requestState"),
        (Answers::DropState, "Step 1: What is your name?"),
    ] {
        let transcript = target.run(&multi_round(style)).unwrap();
        let rendered = transcript.render();
        let sent = transcript.events.iter().filter(|event| matches!(event, Event::Sent(_))).count();
        let received: Vec<String> = transcript
            .events
            .iter()
            .filter_map(|event| match event {
                Event::Received { line, .. } => Some(String::from_utf8_lossy(line).into_owned()),
                _ => None,
            })
            .collect();
        assert!(received.last().is_some_and(|line| line.contains(last)), "{style:?}:\n{rendered}");
        match style {
            // The call, then one retry a round: two rounds to the result.
            Answers::Accept => assert_eq!(sent, 3, "{rendered}"),
            // The first retry is refused: nothing follows it.
            Answers::TamperState => assert_eq!(sent, 2, "{rendered}"),
            // The server starts over without the state: the harness goes on until its round limit.
            _ => assert_eq!(sent, 1 + mcp_wirefuzz::protocol::client::MAX_ROUNDS, "{rendered}"),
        }
        let rules: Vec<&str> = check(&transcript, &policy).iter().map(|f| f.rule).collect();
        assert!(rules.is_empty(), "{style:?}: {rules:?}\n{rendered}");
    }
}

#[test]
fn in_process_the_harness_drives_input_required_rounds() {
    drives_the_rounds(&mut InProcess(CalcWithFixtures));
}

/// The reference server serving its conformance fixtures over stdio (`serve --conformance-fixtures`).
fn fixtures_over_stdio() -> StdioTarget {
    let argv = [env!("CARGO_BIN_EXE_mcp-wirefuzz"), "serve", "--conformance-fixtures"].map(String::from);
    StdioTarget::new(ServerCommand::from_argv(&argv).unwrap(), Timeouts::default())
}

/// The reference server serving its conformance fixtures over HTTP, on a thread of the test.
fn fixtures_over_http() -> Box<dyn Target + Send> {
    let url = http::spawn_server(http::HttpServer::new(None, false).with_fixtures()).unwrap();
    ServerSpec::Http(HttpSpec::new(&url, None).unwrap()).target(Timeouts::default())
}

#[test]
fn over_stdio_the_harness_drives_input_required_rounds() {
    drives_the_rounds(&mut fixtures_over_stdio());
}

#[test]
fn over_http_the_harness_drives_input_required_rounds() {
    drives_the_rounds(&mut *fixtures_over_http());
}

/// A handshake conversation with the reference server's fixtures that declares every capability, asks for answers
/// in `style`, and calls `test_sampling`, which asks the client mid-call.
fn sampled_in(style: Answers) -> Vec<Input> {
    let mut inputs = conversation(Declares::Everything(style));
    inputs[3] = Input::Line(
        serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": "test_sampling", "arguments": { "prompt": "hi" } } }))
        .unwrap(),
    );
    inputs.push(Input::Sync);
    inputs.push(Input::Line(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#.to_vec()));
    inputs
}

/// The answers that are not valid results: a malformed one ends the call in an isError result, a late one (after a
/// `ping` of the client's own, which the server answers) in its result, none (the client cancels the call) in no
/// reply; the server goes on answering (the last `ping`), and none of it is a finding.
fn survives_broken_answers(target: &mut dyn Target) {
    let policy = mcp_wirefuzz::oracle::Policy::default();
    for (style, expected) in [
        (Answers::Malformed, r#""isError":true"#),
        (Answers::Late, "LLM response: mcp-wirefuzz"),
        (Answers::Ignore, "notifications/cancelled"),
    ] {
        let transcript = target.run(&sampled_in(style)).unwrap();
        let rendered = transcript.render();
        let lines: Vec<String> = transcript
            .events
            .iter()
            .filter_map(|event| match event {
                Event::Sent(line) | Event::Received { line, .. } => Some(String::from_utf8_lossy(line).into_owned()),
                _ => None,
            })
            .collect();
        assert!(lines.iter().any(|line| line.contains(expected)), "{style:?}:\n{rendered}");
        let pong = |id: &str| lines.iter().any(|line| line.contains(&format!(r#""id":{id},"result":{{}}"#)));
        assert!(pong("3"), "{style:?}: the server stopped answering\n{rendered}");
        assert_eq!(pong(r#""wirefuzz-late-1""#), style == Answers::Late, "{style:?}\n{rendered}");
        let call_replied = transcript.events.iter().any(
            |event| matches!(event, Event::Received { line, .. } if line.starts_with(br#"{"jsonrpc":"2.0","id":2,"#)),
        );
        assert_eq!(call_replied, style != Answers::Ignore, "{style:?}\n{rendered}");
        let rules: Vec<&str> = check(&transcript, &policy).iter().map(|f| f.rule).collect();
        assert!(rules.is_empty(), "{style:?}: {rules:?}\n{rendered}");
    }
}

#[test]
fn in_process_broken_answers_to_the_servers_requests_end_the_call_and_nothing_else() {
    survives_broken_answers(&mut InProcess(CalcWithFixtures));
}

#[test]
fn over_stdio_broken_answers_to_the_servers_requests_end_the_call_and_nothing_else() {
    survives_broken_answers(&mut fixtures_over_stdio());
}

#[test]
fn over_http_broken_answers_to_the_servers_requests_end_the_call_and_nothing_else() {
    survives_broken_answers(&mut *fixtures_over_http());
}

/// The planted bugs that read the client's answer unchecked: `crashes-on-malformed-answer` exits on a malformed
/// answer (a sampling result in the handshake era), SERVER-CRASH; `hangs-on-malformed-answer` never answers the
/// call, SERVER-HANDLER-HANG. Valid, declined, late and withheld answers are no finding on either.
#[test]
fn a_server_that_crashes_or_hangs_on_a_malformed_answer_is_found() {
    for (mutant, rule) in
        [(Mutant::CrashesOnMalformedAnswer, "SERVER-CRASH"), (Mutant::HangsOnMalformedAnswer, "SERVER-HANDLER-HANG")]
    {
        let policy = mutant.policy();
        let mut inputs = conversation(Declares::Everything(Answers::Malformed));
        inputs.push(Input::Sync);
        let broken = InProcess(Planted(mutant)).run(&inputs).unwrap();
        let rules: Vec<&str> = check(&broken, &policy).iter().map(|f| f.rule).collect();
        assert_eq!(rules, [rule], "{mutant}: {}", broken.render());
        for styled in [Answers::Accept, Answers::Decline, Answers::Late, Answers::Ignore] {
            let mut inputs = conversation(Declares::Everything(styled));
            inputs.push(Input::Sync);
            let kept = InProcess(Planted(mutant)).run(&inputs).unwrap();
            assert!(check(&kept, &policy).is_empty(), "{mutant} {styled:?}: {}", kept.render());
        }
    }
}

/// A Python SDK server of an author's (`tests/servers/booking.py`): its tool asks for a day through
/// `input_required` and books on the retry. The harness's retry reaches the code only a retry runs: with the
/// planted bug `error-on-decline` a declined answer gets a JSON-RPC error; the clean server breaks nothing, and
/// an accepted answer books on either.
#[test]
fn a_python_sdk_tool_is_retried_and_its_retry_path_is_judged() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    if !python.exists() {
        return tier::skip("the Python SDK server that asks through input_required", "no .venv (run .ci/python-venv)");
    }
    let call = |style: Answers| {
        let mut meta = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } });
        meta[ANSWERS_KEY] = json!(style.name());
        let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "book", "arguments": { "city": "Oslo" }, "_meta": meta } });
        vec![Input::Line(serde_json::to_vec(&call).unwrap()), Input::Sync]
    };
    // The surface the rules judge the tool by, as `fuzz` learns it: `book(city: string)`.
    let mut surface = Surface::default();
    surface.add(
        "tools",
        &json!({ "name": "book", "inputSchema": { "type": "object",
        "properties": { "city": { "type": "string" } }, "required": ["city"] } }),
    );
    surface.learned = true;
    let model = ServerModel::stated(Eras::Dual);
    let policy = mcp_wirefuzz::oracle::Policy::default().with_model(model).with_surface(Arc::new(surface));
    for (bug, style, reply, rules) in [
        (None, Answers::Accept, "booked in Oslo on mcp-wirefuzz", vec![]),
        (None, Answers::Decline, "not booked in Oslo", vec![]),
        (Some("error-on-decline"), Answers::Accept, "booked in Oslo on mcp-wirefuzz", vec![]),
        (Some("error-on-decline"), Answers::Decline, "no day chosen", vec!["MCP-TOOL-VALID-ARGS"]),
    ] {
        let mut argv = vec![python.display().to_string(), root.join("tests/servers/booking.py").display().to_string()];
        argv.extend(bug.iter().flat_map(|bug| ["--bug".to_string(), bug.to_string()]));
        let mut target = StdioTarget::new(ServerCommand::from_argv(&argv).unwrap(), Timeouts::default());
        let transcript = target.run(&call(style)).unwrap();
        let rendered = transcript.render();
        assert!(rendered.contains("wirefuzz-retry-1") && rendered.contains(reply), "{bug:?} {style:?}\n{rendered}");
        let found: Vec<&str> = check(&transcript, &policy).iter().map(|f| f.rule).collect();
        assert_eq!(found, rules, "{bug:?} {style:?}\n{rendered}");
    }
}

/// `mcp-wirefuzz fuzz` on the reference server serving the suite's fixtures (tools that ask the client mid-call,
/// `input_required` tools with their retries and answer styles), over `transport`: exit code and output.
fn fuzz_fixtures(transport: &[String]) -> (Option<i32>, String) {
    let exe = env!("CARGO_BIN_EXE_mcp-wirefuzz");
    let out = std::env::temp_dir().join(format!("wirefuzz-fixtures-{}-{}", transport.len(), std::process::id()));
    let output = std::process::Command::new(exe)
        .args(["fuzz", "--cases", "300", "--seed", "11", "--out"])
        .arg(&out)
        .args(transport)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&out);
    let text = String::from_utf8_lossy(&output.stdout).to_string() + &String::from_utf8_lossy(&output.stderr);
    (output.status.code(), text)
}

#[test]
fn the_reference_server_with_its_fixtures_is_clean_under_fuzz_over_stdio_and_http() {
    let exe = env!("CARGO_BIN_EXE_mcp-wirefuzz").to_string();
    let stdio = ["--".into(), exe.clone(), "serve".into(), "--conformance-fixtures".into()];
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let address = format!("127.0.0.1:{port}");
    let http = [
        "--url".into(),
        format!("http://{address}/mcp"),
        "--".into(),
        exe,
        "serve".into(),
        "--http".into(),
        address,
        "--conformance-fixtures".into(),
    ];
    for transport in [&stdio[..], &http[..]] {
        let (code, text) = fuzz_fixtures(transport);
        assert_eq!(code, Some(0), "{transport:?}:\n{text}");
        assert!(text.contains("ran 300 conversations") && text.contains("no findings"), "{text}");
        // The tools that ask the client ran (the coverage table names them, cut to its column).
        assert!(text.contains("test_elicitation ") && text.contains("test_input_required_result_m"), "{text}");
    }
}

/// A stale `requestState` (the earlier round's) on the reference server's two-round tool: the server judges the
/// state it gets, the harness goes on to its round limit, and nothing of it is a finding.
#[test]
fn a_stale_request_state_is_the_servers_to_judge_and_no_finding() {
    let transcript = InProcess(CalcWithFixtures).run(&multi_round(Answers::StaleState)).unwrap();
    let rendered = transcript.render();
    let retries = rendered.matches("wirefuzz-retry-").count();
    assert!(retries >= 2, "{rendered}");
    assert!(rendered.contains(r#""requestState":"#), "{rendered}");
    let rules: Vec<&str> =
        check(&transcript, &mcp_wirefuzz::oracle::Policy::default()).iter().map(|f| f.rule).collect();
    assert!(rules.is_empty(), "{rules:?}\n{rendered}");
}
