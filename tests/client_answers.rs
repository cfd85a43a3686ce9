//! The harness as a client: a server's own request gets the answer of what the conversation declared, in-process
//! and over stdio (the reference server with the planted bug `elicits-undeclared`, which sends
//! `elicitation/create` from every handshake `tools/call`), and SERVER-UNDECLARED-CAPABILITY fires only on the
//! conversation that did not declare elicitation. A Python SDK tool that waits for its elicitation's answer
//! (`tests/servers/asking.py`) gets it over stdio and returns.

#[path = "common/tier.rs"]
mod tier;

use mcp_wirefuzz::oracle::check;
use mcp_wirefuzz::script::Declares;
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::builtin::reference::Planted;
use mcp_wirefuzz::server::transport::stdio::StdioTarget;
use mcp_wirefuzz::server::{InProcess, ServerCommand, Target, Timeouts};
use mcp_wirefuzz::transcript::{Event, Input, Transcript};
use serde_json::json;
use std::path::PathBuf;

fn conversation(declares: Declares) -> Vec<Input> {
    let line = |value: serde_json::Value| Input::Line(serde_json::to_vec(&value).unwrap());
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": declares.capabilities(),
        "clientInfo": { "name": "t", "version": "1" },
    });
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
    for (declares, answer, fires) in
        [(Declares::Nothing, r#""code":-32601"#, true), (Declares::Everything, r#""action":"decline""#, false)]
    {
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
    let answers = [(Declares::Everything, r#""decline""#, false), (Declares::Nothing, r#""code":-32601"#, true)];
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
