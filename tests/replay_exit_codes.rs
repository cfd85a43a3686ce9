//! `replay` is a trustworthy regression test: exit 1 when the case's rule breaks again, 3 when the case no longer
//! reproduces (whatever else breaks), 0 when a clean case runs clean, 2 for a case file that is malformed, cut short or expects an unknown
//! rule; a crash case from a server that exits at once replays as a crash every time.

#[path = "hostile/common.rs"]
mod common;

use mcp_wirefuzz::case::Case;
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::transcript::Input;
use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirefuzz-replay-codes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn replay(path: &Path) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz")).arg("replay").arg(path).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), text)
}

fn save(case: &Case, name: &str) -> PathBuf {
    case.save(&dir(), name).unwrap()
}

#[test]
fn replay_exit_codes() {
    let mutant = Mutant::NoCacheHints;
    let trigger: Vec<Input> = mutant.trigger().into_iter().map(Input::Line).collect();
    let reproduces = Case {
        mutant: Some(mutant),
        expect: vec![mutant.expected_rule().to_string()],
        inputs: trigger.clone(),
        ..Case::default()
    };
    let (code, text) = replay(&save(&reproduces, "reproduces"));
    assert_eq!(code, 1, "{text}");
    let ping = Input::Line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec());
    let gone = Case { inputs: vec![ping.clone()], ..reproduces.clone() };
    let (code, text) = replay(&save(&gone, "gone"));
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("no longer reproduces"), "{text}");
    // Replayed on a server where its rule no longer breaks but another one does: fixed (3), the other one new.
    let other = Mutant::IdAsString;
    let both: Vec<Input> = trigger.iter().cloned().chain(other.trigger().into_iter().map(Input::Line)).collect();
    let fixed_elsewhere = save(&Case { inputs: both, ..reproduces.clone() }, "fixed-elsewhere");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .args(["replay", "--mutant", other.name()])
        .arg(&fixed_elsewhere)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{text}");
    assert!(text.contains(&format!("new: not what this case is about): {}", other.expected_rule())), "{text}");
    assert!(text.contains(&format!("NOT as expected, {} did not break", mutant.expected_rule())), "{text}");
    let clean = Case { inputs: trigger, ..Case::default() };
    let (code, text) = replay(&save(&clean, "clean"));
    assert_eq!(code, 0, "{text}");
    // Malformed, cut short, an unknown rule: 2.
    let text = reproduces.render();
    let bad = [
        ("unknown-rule", text.replace(mutant.expected_rule(), "JSONRPC-NO-SUCH-RULE")),
        ("cut-short", text[..text.rfind(">> ").unwrap() + 10].to_string()),
        ("malformed", text.replace("frames:", "frame count:")),
    ];
    for (name, text) in bad {
        let path = dir().join(format!("{name}.case"));
        std::fs::write(&path, text).unwrap();
        let (code, output) = replay(&path);
        assert_eq!(code, 2, "{name}: {output}");
    }
}

#[test]
fn a_crash_case_of_a_server_that_exits_at_once_replays_as_a_crash() {
    let tag = common::tag("replay-crash");
    let crash = Case {
        command: Some(common::server("exit", &tag)),
        expect: vec!["SERVER-CRASH".into()],
        inputs: vec![Input::Line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec())],
        ..Case::default()
    };
    let path = save(&crash, "crash");
    for _ in 0..5 {
        let (code, text) = replay(&path);
        assert_eq!(code, 1, "{text}");
        assert!(text.contains("as expected") && !text.contains("NOT as expected"), "{text}");
    }
    assert!(common::left_behind(&tag).is_empty());
}

#[test]
fn the_reproduce_command_of_a_finding_repeats_the_runs_timeout_and_reproduces() {
    let out = dir().join("reproduce");
    let report = dir().join("reproduce.json");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .args(["fuzz", "--mutant", "no-cache-hints", "--cases", "30", "--seed", "3", "--timeout", "3000"])
        .arg("--out")
        .arg(&out)
        .arg("--json")
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let findings = json["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for finding in findings {
        let command = finding["reproduce"].as_str().unwrap();
        let words: Vec<&str> = command.split(' ').collect();
        assert_eq!((words[1], words.len()), ("replay", 5), "{command}");
        assert_eq!(&words[3..], ["--timeout", "3000"], "{command}");
        let again = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz")).args(&words[1..]).output().unwrap();
        assert_eq!(again.status.code(), Some(1), "{command}: {}", String::from_utf8_lossy(&again.stdout));
    }
}
