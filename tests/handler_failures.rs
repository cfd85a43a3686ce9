//! Handler bugs of a Python SDK server over stdio (`tests/servers/handler_bugs.py`, slow tier: each conversation
//! waits out a reply timeout): a tool that never returns for one argument is `SERVER-HANDLER-HANG`, the same tool
//! slow for another argument is not, and an exception the SDK turns into an isError result is no handler panic.

#[path = "common/tier.rs"]
mod tier;

use mcp_wirefuzz::oracle::{Finding, Policy, check};
use mcp_wirefuzz::server::transport::stdio::StdioTarget;
use mcp_wirefuzz::server::{ServerCommand, Target, Timeouts};
use mcp_wirefuzz::transcript::Input;
use std::path::PathBuf;
use std::time::Duration;

fn line(text: &str) -> Input {
    Input::Line(text.as_bytes().to_vec())
}

/// The findings of calling `fetch` with id 1, then with `id`, then a ping, on a fresh process.
fn findings(id: u32) -> (Vec<Finding>, String) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let argv = [root.join(".venv/bin/python"), root.join("tests/servers/handler_bugs.py")];
    let command = ServerCommand::from_argv(&argv.map(|p| p.display().to_string())).unwrap();
    let timeouts = Timeouts { reply: Duration::from_secs(1), ..Timeouts::default() };
    let call = |n: u32, id: u32| {
        line(&format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"fetch","arguments":{{"id":{id}}}}}}}"#
        ))
    };
    let inputs = [
        line(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        ),
        line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        Input::Sync,
        call(1, 1),
        call(2, id),
        line(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#),
        Input::Sync,
    ];
    let transcript = StdioTarget::new(command, timeouts).cold().run(&inputs).unwrap();
    (check(&transcript, &Policy::default()), transcript.render())
}

fn rules(findings: &[Finding]) -> Vec<&'static str> {
    findings.iter().map(|f| f.rule).filter(|rule| rule.starts_with("SERVER-HANDLER")).collect()
}

#[test]
fn a_python_tool_that_never_returns_is_found_and_a_slow_or_raising_one_is_not() {
    if !tier::slow("the Python handler-bug server") {
        return;
    }
    if !PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python").exists() {
        return tier::skip("the Python handler-bug server", "no .venv (run .ci/python-venv)");
    }
    let (hung, render) = findings(9);
    assert_eq!(rules(&hung), ["SERVER-HANDLER-HANG"], "{render}");
    let found = hung.iter().find(|f| f.rule == "SERVER-HANDLER-HANG").unwrap();
    assert!(found.detail.contains(r#"tool "fetch" with arguments {"id":9}"#), "{}", found.detail);
    let (slow, render) = findings(5);
    assert!(rules(&slow).is_empty(), "{slow:?}\n{render}");
    let (raised, render) = findings(7);
    assert!(rules(&raised).is_empty(), "{raised:?}\n{render}");
}
