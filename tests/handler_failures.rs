//! Handler bugs of Python SDK servers over stdio.
//!
//! - The note store an author wrote (`tests/servers/author/notes.py`), through `mcp-wirefuzz replay` of the case
//!   files in `tests/servers/author/cases` as a user runs it (quick tier: two short conversations): with
//!   `NOTES_BUG=raise`, `search_notes` of `""` raises and the SDK answers its crash text, `SERVER-HANDLER-CRASH`
//!   naming the tool, its arguments and where it raised; the clean store gives the same calls (a deliberate
//!   ToolError, a refused argument, an unknown tool) no finding.
//! - `tests/servers/handler_bugs.py` (slow tier: each conversation waits out a reply timeout): a tool that never
//!   returns for one argument is `SERVER-HANDLER-HANG`, the same tool slow for another argument is not, and an
//!   exception the SDK turns into an isError result is `SERVER-HANDLER-CRASH`, not a handler panic.

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
fn a_python_tool_that_never_returns_is_a_hang_a_slow_one_is_not_and_a_raising_one_is_a_crash() {
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
    assert_eq!(rules(&raised), ["SERVER-HANDLER-CRASH"], "{render}");
    let found = &raised.iter().find(|f| f.rule == "SERVER-HANDLER-CRASH").unwrap().detail;
    assert!(found.contains(r#"tool "fetch" with arguments {"id":7}"#) && found.contains("IndexError"), "{found}");
}

/// `mcp-wirefuzz replay CASE` from the crate's root: the exit code and everything it printed.
fn replay(case: &str) -> (Option<i32>, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("replay")
        .arg(case)
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code(), text)
}

#[test]
fn a_python_tool_that_raises_is_a_crash_naming_the_tool_and_the_clean_store_is_quiet() {
    if !PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python").exists() {
        return tier::skip("the Python note store's crash", "no .venv (run .ci/python-venv)");
    }
    let (code, text) = replay("tests/servers/author/cases/notes-raise-empty-query.case");
    assert_eq!(code, Some(1), "{text}");
    let finding =
        text.lines().find(|line| line.starts_with("warning SERVER-HANDLER-CRASH")).unwrap_or_else(|| panic!("{text}"));
    for part in [
        r#"tools/call of tool "search_notes" with arguments {"query":""}"#,
        r#""Error executing tool search_notes""#,
        "notes.py\", line ",
        ", in search_notes",
        "IndexError: list index out of range",
    ] {
        assert!(finding.contains(part), "{part}: {finding}");
    }
    // One finding only: the deliberate ToolError, the refused argument and the unknown tool before it are none.
    assert_eq!(
        text.lines().filter(|line| line.starts_with("warning ") || line.starts_with("error ")).count(),
        1,
        "{text}"
    );
    let (code, text) = replay("tests/servers/author/cases/notes-clean-empty-query.case");
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("SERVER-HANDLER"), "{text}");
}
