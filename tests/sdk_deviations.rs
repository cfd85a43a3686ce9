//! `--sdk` and SDK detection through the CLI, on the rmcp server of the real-server tests (rmcp-calc, rmcp 3.11.0;
//! it runs when built, SKIPPED otherwise: the slow tier builds it). Its findings are all rmcp's own: the run exits 0
//! with the SDK named, and every report format has them in the SDK's section with their upstream reference;
//! without `--sdk` rmcp is detected, and `--sdk none` judges them as the server's own.

#[path = "common/rmcp_calc.rs"]
mod rmcp_calc;
#[path = "common/tier.rs"]
mod tier;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirefuzz-sdk-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Whether rmcp-calc is built (building it takes minutes: the slow tier does).
fn built() -> bool {
    if !root().join(rmcp_calc::BINARY).exists() && !tier::asked() {
        let why = format!("{} is not built (`WIREFUZZ_SLOW=1 cargo test` builds it)", rmcp_calc::BINARY);
        tier::skip("the rmcp-calc SDK runs", &why);
        return false;
    }
    if tier::asked() {
        rmcp_calc::build();
    }
    true
}

/// `mcp-wirefuzz fuzz --cases 40 --seed 1 ARGS -- rmcp-calc` (nothing minimized): the exit code and everything it printed.
fn fuzz(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .current_dir(root())
        .args(["fuzz", "--cases", "40", "--seed", "1", "--shrink-budget", "0", "--out"])
        .arg(dir.join("findings"))
        .args(args)
        .args(["--", rmcp_calc::BINARY])
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code(), text)
}

#[test]
fn rmcps_own_deviations_do_not_fail_the_run_and_are_reported_apart() {
    if !built() {
        return;
    }
    let dir = scratch("stated");
    let (json, junit, sarif) = (dir.join("r.json"), dir.join("r.xml"), dir.join("r.sarif"));
    let reports =
        ["--json", json.to_str().unwrap(), "--junit", junit.to_str().unwrap(), "--sarif", sarif.to_str().unwrap()];
    let (code, text) = fuzz(&dir, &[&["--sdk", "rmcp"], &reports[..]].concat());
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("SDK: rmcp 3.11.0 (from --sdk)") && text.contains("your SDK's known deviations"), "{text}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["findings"], Value::Array(Vec::new()), "{report}");
    assert_eq!(report["sdk"]["name"], "rmcp");
    let seen = report["sdk_deviations"].as_array().unwrap();
    assert!(!seen.is_empty() && seen.iter().all(|d| d["reference"].as_str().is_some_and(|r| !r.is_empty())));
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert!(junit.contains("classname=\"mcp-wirefuzz.sdk\"") && !junit.contains("<failure"), "{junit}");
    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty() && results.iter().all(|r| r["suppressions"][0]["kind"] == "external"), "{sarif}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_sdk_rmcp_is_detected_and_sdk_none_turns_the_table_off() {
    if !built() {
        return;
    }
    let dir = scratch("detected");
    let (code, text) = fuzz(&dir, &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("SDK: rmcp (detected from its -32602 message"), "{text}");
    // `--sdk none`: no table, so rmcp's deviations are the server's findings; a made-up name fails at once.
    let (code, text) = fuzz(&dir, &["--sdk", "none"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("SDK: none named or detected") && !text.contains("your SDK's known deviation"), "{text}");
    let (code, text) = fuzz(&dir, &["--sdk", "no-such-sdk"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("no SDK table is named"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
