//! One short smoke test per language of real SDK servers, in the quick tier: a vetted case with a true finding
//! replays with exit 1 and a vetted clean case with exit 0, through `mcp-wirefuzz replay` as a user runs it. Python
//! (the SDK calc, `.venv` from `.ci/python-venv`) and Node (TS SDK 1.32.2 calc, `.ci/node-servers`) run when their
//! runtime is installed; rmcp-calc runs when it is built (the slow tier builds it: rmcp takes minutes to compile).
//! Each says SKIPPED and why otherwise. The full verdict tables are in tests/real_server_verdicts.rs (slow tier).

#[path = "common/rmcp_calc.rs"]
mod rmcp_calc;
#[path = "common/tier.rs"]
mod tier;

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `mcp-wirefuzz replay CASE` from the crate's root (case files name their servers relative to it): the exit code
/// and everything it printed.
fn replay(case: &str) -> (Option<i32>, String) {
    let output =
        Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz")).current_dir(root()).arg("replay").arg(case).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code(), text)
}

/// Replays a case that breaks `rule` (exit 1, the rule named) and a clean case (exit 0).
fn smoke(finding: &str, rule: &str, clean: &str) {
    let (code, text) = replay(finding);
    assert_eq!(code, Some(1), "{finding} should break {rule} again:\n{text}");
    assert!(text.contains(rule), "{finding}: {rule} not named:\n{text}");
    let (code, text) = replay(clean);
    assert_eq!(code, Some(0), "{clean} should replay clean:\n{text}");
}

/// Whether `path` (relative to the root) exists; says what makes it otherwise.
fn present(what: &str, path: &str, how: &str) -> bool {
    if root().join(path).exists() {
        return true;
    }
    tier::skip(what, &format!("{path} is missing ({how})"));
    false
}

#[test]
fn python_sdk_smoke() {
    if !present("the Python SDK smoke test", ".venv/bin/python", "run .ci/python-venv") {
        return;
    }
    let ready = Command::new(root().join(".venv/bin/python")).args(["-c", "import mcp"]).output();
    if !ready.is_ok_and(|o| o.status.success()) {
        return tier::skip("the Python SDK smoke test", ".venv/bin/python cannot import mcp (run .ci/python-venv)");
    }
    smoke(
        "corpus/regressions/python-params-null.case",
        "JSONRPC-NULL-PARAMS",
        "corpus/regressions/python-invalid-utf8.case",
    );
}

#[test]
fn typescript_sdk_smoke() {
    let entry = "tests/servers/node/ts-v1/node_modules/@modelcontextprotocol/sdk/package.json";
    if !present("the TypeScript SDK smoke test", entry, "run .ci/node-servers") {
        return;
    }
    if Command::new("node").arg("--version").output().is_err() {
        return tier::skip("the TypeScript SDK smoke test", "no `node` on PATH");
    }
    smoke(
        "tests/servers/node/ts-v1/cases/initialize-no-params.case",
        "MCP-INITIALIZE-INVALID-PARAMS",
        "tests/servers/node/ts-v1/cases/cancel-before-its-request.case",
    );
}

#[test]
fn rmcp_smoke() {
    if !root().join(rmcp_calc::BINARY).exists() && !tier::asked() {
        let why = format!("{} is not built (`WIREFUZZ_SLOW=1 cargo test` builds it)", rmcp_calc::BINARY);
        return tier::skip("the rmcp smoke test", &why);
    }
    rmcp_calc::build();
    smoke(
        "tests/servers/rmcp-calc/cases/ping-after-second-initialize.case",
        "MCP-PING",
        "tests/servers/rmcp-calc/cases/id-echo-exponent.case",
    );
}
