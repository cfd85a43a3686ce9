//! Every case of the protocol lesson's seed transcripts, replayed against the reference server in-process and
//! through `mcp-wirefuzz serve` as a child process; replies compared as JSON values.

use mcp_wirefuzz::seeds::{self, Expected};
use mcp_wirefuzz::server::builtin::reference::Calc;
use mcp_wirefuzz::server::{ServerCommand, Timeouts};
use serde_json::json;

fn serve_command() -> ServerCommand {
    ServerCommand::from_argv(&[env!("CARGO_BIN_EXE_mcp-wirefuzz").into(), "serve".into()]).unwrap()
}

#[test]
fn the_fixture_copy_matches_shared_when_present() {
    let cases = seeds::builtin();
    assert_eq!(cases.len(), 6, "the lesson has six seed cases");
    if let Ok(shared) = std::fs::read_to_string("../shared/fixtures/seed-transcripts.json") {
        assert_eq!(seeds::load(&shared).unwrap(), cases, "tests/fixtures is out of date with ../shared");
    }
}

#[test]
fn every_seed_case_passes_in_process() {
    for case in seeds::builtin() {
        let mismatches = case.check_in_process(&Calc);
        assert!(mismatches.is_empty(), "{}:\n{}", case.name, mismatches.join("\n"));
    }
}

#[test]
fn every_seed_case_passes_through_serve() {
    for case in seeds::builtin() {
        let mismatches = case.check_child(&serve_command(), Timeouts::default()).unwrap();
        assert!(mismatches.is_empty(), "{}:\n{}", case.name, mismatches.join("\n"));
    }
}

#[test]
fn a_wrong_expectation_is_reported_both_ways() {
    let mut case = seeds::builtin().into_iter().find(|c| c.name == "modern-first-call").unwrap();
    let Expected::Reply(reply) = &mut case.steps[0].expect else { panic!("exact reply expected") };
    reply["result"]["structuredContent"]["result"] = json!(6);
    let in_process = case.check_in_process(&Calc);
    assert_eq!(in_process.len(), 1, "{in_process:?}");
    assert!(in_process[0].contains("\"result\":6"), "{in_process:?}");
    let child = case.check_child(&serve_command(), Timeouts::default()).unwrap();
    assert_eq!(child, in_process);
}

#[test]
fn a_reply_to_a_silent_step_is_reported() {
    let case = seeds::builtin().into_iter().find(|c| c.name == "legacy-handshake-then-modern").unwrap();
    let mut replies: Vec<Vec<u8>> = Vec::new();
    for step in &case.steps {
        if let Expected::Reply(reply) = &step.expect {
            replies.push(serde_json::to_vec(reply).unwrap());
        }
    }
    assert!(case.compare(&replies).is_empty());
    replies.insert(1, br#"{"jsonrpc":"2.0","id":null,"result":{}}"#.to_vec());
    let mismatches = case.compare(&replies);
    assert_eq!(mismatches.len(), 1, "{mismatches:?}");
    assert!(mismatches[0].starts_with("unexpected line"), "{mismatches:?}");
}

#[test]
fn contains_recurses_through_objects_only() {
    assert!(seeds::contains(&json!({"a": {"b": 1, "c": 2}, "d": 3}), &json!({"a": {"b": 1}})));
    assert!(!seeds::contains(&json!({"a": {"b": 2}}), &json!({"a": {"b": 1}})));
    assert!(!seeds::contains(&json!({"a": [1, 2]}), &json!({"a": [1]})));
    assert!(!seeds::contains(&json!({}), &json!({"a": null})));
}
