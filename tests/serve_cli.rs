//! `mcp-wirefuzz serve` and `check` as a user runs them.

use std::io::Write;
use std::process::{Command, Stdio};

fn serve(input: &str) -> Vec<serde_json::Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_line_that_is_not_json_gets_one_parse_error_with_a_null_id() {
    let replies = serve("{not json\n");
    assert_eq!(
        replies,
        vec![serde_json::json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})]
    );
}

#[test]
fn the_server_keeps_serving_after_malformed_lines() {
    let replies = serve(
        "[]\n\n{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n",
    );
    let codes: Vec<_> = replies.iter().map(|r| r["error"]["code"].clone()).collect();
    assert_eq!(codes, vec![serde_json::json!(-32600), serde_json::json!(-32600), serde_json::Value::Null]);
    assert_eq!(replies[2], serde_json::json!({"jsonrpc":"2.0","id":7,"result":{}}));
}

#[test]
fn check_passes_against_the_built_in_server_and_a_child() {
    let exe = env!("CARGO_BIN_EXE_mcp-wirefuzz");
    let built_in = Command::new(exe).arg("check").output().unwrap();
    assert!(built_in.status.success());
    assert!(String::from_utf8_lossy(&built_in.stdout).contains("38 passed, 0 failed"));
    assert!(String::from_utf8_lossy(&built_in.stdout).contains("server model: dual-era"));
    let child = Command::new(exe).args(["check", "--", exe, "serve"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&child.stdout);
    assert!(child.status.success(), "{stdout}");
    assert!(
        stdout.contains("server model: dual-era (2026-07-28; handshake 2024-11-05..2025-11-25), name calc, probed"),
        "{stdout}"
    );
    assert!(stdout.contains("ok    seed transcript modern-first-call"), "{stdout}");
}

#[test]
fn check_runs_the_seed_transcripts_only_on_a_server_named_calc() {
    let exe = env!("CARGO_BIN_EXE_mcp-wirefuzz");
    let stated = Command::new(exe).args(["check", "--eras", "dual", "--", exe, "serve"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&stated.stdout);
    assert!(stdout.contains("server model: dual-era, stated"), "{stdout}");
    assert!(stdout.contains("skipped: the server's name is unknown") && !stdout.contains("ok    seed"), "{stdout}");
    let wrong = Command::new(exe).args(["check", "--eras", "both", "--", exe, "serve"]).output().unwrap();
    assert_eq!(wrong.status.code(), Some(2));
}

#[test]
fn check_fails_against_a_server_that_answers_nothing() {
    let output =
        Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz")).args(["check", "--", "cat", "/dev/null"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("server model: eras unknown"), "{stdout}");
    assert!(stdout.contains("FAIL  probe") && stdout.contains("skipped: the server's name is unknown"), "{stdout}");
}

#[test]
fn check_probes_catch_a_planted_bug_without_the_seed_transcripts() {
    let exe = env!("CARGO_BIN_EXE_mcp-wirefuzz");
    let output = Command::new(exe)
        .args(["check", "--no-seeds", "--", exe, "serve", "--mutant", "crash-on-batch"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  probe SERVER-CRASH") && stdout.contains("30 passed, 2 failed"), "{stdout}");
    assert!(!stdout.contains("seed transcript"));
}

#[test]
fn every_report_carries_the_server_model() {
    let exe = env!("CARGO_BIN_EXE_mcp-wirefuzz");
    let dir = std::env::temp_dir().join(format!("wirefuzz-model-reports-{}", std::process::id()));
    let path = |name: &str| dir.join(name).display().to_string();
    let output = Command::new(exe)
        .args(["fuzz", "--cases", "3", "--seed", "1", "--out", &path("out"), "--json", &path("r.json")])
        .args(["--junit", &path("r.xml"), "--sarif", &path("r.sarif"), "--profile", "mcp-python-2.3.0"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        stdout.contains("server model: dual-era (2026-07-28; handshake 2024-11-05..2025-11-25), name calc, built-in")
    );
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let json: serde_json::Value = serde_json::from_str(&read("r.json")).unwrap();
    assert_eq!(json["server_model"]["eras"], "dual");
    let sarif: serde_json::Value = serde_json::from_str(&read("r.sarif")).unwrap();
    assert_eq!(sarif["runs"][0]["properties"]["serverModel"]["name"], "calc");
    let junit = read("r.xml");
    assert!(junit.contains("<property name=\"server_model\" value=\"dual-era"), "{junit}");
    assert!(junit.contains("name=\"MCP-ERA-SINGLE\""), "the profile's rules are checked: {junit}");
    let unknown = Command::new(exe).args(["fuzz", "--cases", "1", "--profile", "nope"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fuzz_run_against_the_quirky_server_over_stdio_is_clean() {
    let exe = env!("CARGO_BIN_EXE_mcp-wirefuzz");
    let out = std::env::temp_dir().join(format!("wirefuzz-quirks-{}", std::process::id()));
    let output = Command::new(exe)
        .args(["fuzz", "--cases", "80", "--jobs", "2", "--seed", "5", "--shrink-budget", "1", "--out"])
        .arg(&out)
        .args(["--", exe, "serve", "--quirks", "11", "--refusals"])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&out);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
}
