//! Every case file under corpus/regressions/ replayed by `cargo test`: on the server it names, the rules it
//! expects break (or none, for `expect: clean`); on the built-in reference server, no rule breaks.

use mcp_wirefuzz::case::Case;
use mcp_wirefuzz::oracle::check;
use mcp_wirefuzz::server::{ServerSpec, Timeouts};
use std::path::PathBuf;

fn cases() -> Vec<(PathBuf, Case)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/regressions");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "case"))
        .collect();
    paths.sort();
    paths.into_iter().map(|path| (path.clone(), Case::load(&path).unwrap())).collect()
}

fn broken(server: &ServerSpec, case: &Case) -> Vec<&'static str> {
    let transcript = server.target(Timeouts::default()).run(&case.inputs).unwrap();
    check(&transcript, &case.policy()).iter().map(|f| f.rule).collect()
}

#[test]
fn every_regression_case_breaks_what_it_expects_on_its_server() {
    let cases = cases();
    assert!(cases.len() >= 5, "corpus/regressions holds {} cases", cases.len());
    for (path, case) in cases {
        let server = case.server();
        if matches!(server, ServerSpec::Command(_)) {
            continue; // found on an external server; tests/real_servers.rs replays those where the server exists
        }
        let fired = broken(&server, &case);
        for rule in &case.expect {
            assert!(fired.contains(&rule.as_str()), "{}: expected {rule}, got {fired:?}", path.display());
        }
        if case.expect.is_empty() {
            assert!(fired.is_empty(), "{}: expected clean, got {fired:?}", path.display());
        }
    }
}

#[test]
fn every_regression_case_runs_clean_on_the_reference_server() {
    for (path, case) in cases() {
        let fired = broken(&ServerSpec::BuiltIn, &case);
        assert!(fired.is_empty(), "{}: the reference server breaks {fired:?}", path.display());
    }
}
