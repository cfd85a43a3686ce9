//! A server author's own bugs, found in-process the way `init`'s property test finds them: the rmcp note store of
//! `tests/servers/author/rmcp-notes` (three tools, rmcp 3.11.0 macros), a fresh handler per conversation
//! (`Rmcp::fresh`), under rmcp's policy, 256 cases from a fixed seed. Each planted bug fails the property with a
//! report naming its rule and the author's tool; the clean store passes. (Its fifth bug, a `println!`, is only seen
//! over stdio: tests/author_bugs.rs in the main crate.)

use mcp_wirefuzz::sdk::rmcp::policy;
use mcp_wirefuzz::server::rmcp::Rmcp;
use proptest::test_runner::{Config, RngSeed};
use rmcp_notes::{Bug, Notes};

/// 256 cases from a fixed seed, no persisted seeds: the same conversations every run.
fn config() -> Config {
    Config { cases: 256, rng_seed: RngSeed::Fixed(7), failure_persistence: None, ..Config::default() }
}

/// The property's failure report on the store with `bug` planted (`None`: the clean store passes, so no report).
fn report(bug: Option<Bug>) -> Option<String> {
    let run = || mcp_wirefuzz::harness::property_under(&Rmcp::fresh(move || Notes::with_bug(bug)), &policy(), config());
    match std::panic::catch_unwind(run) {
        Ok(()) => None,
        Err(panic) => Some(panic.downcast_ref::<String>().cloned().unwrap_or_default()),
    }
}

#[test]
fn the_clean_store_passes() {
    assert_eq!(report(None), None);
}

#[test]
fn each_planted_bug_fails_the_property_naming_its_rule_and_the_authors_tool() {
    let bugs = [
        (Bug::Panic, "SERVER-HANDLER-PANIC", "get_note"),
        (Bug::Hang, "SERVER-HANDLER-HANG", "search_notes"),
        (Bug::SchemaAfterWrite, "MCP-TOOL-OUTPUT-SCHEMA", "get_note"),
        (Bug::ErrorForValidArgs, "MCP-TOOL-VALID-ARGS", "add_note"),
    ];
    for (bug, rule, tool) in bugs {
        let report = report(Some(bug)).unwrap_or_else(|| panic!("{bug:?}: the property passed"));
        let first = report.lines().find(|line| line.starts_with("error ") || line.starts_with("warning "));
        assert!(first.is_some_and(|line| line.contains(rule) && line.contains(tool)), "{bug:?}: {report}");
        assert!(report.contains("# mcp-wirefuzz case") && report.contains(&format!("expect: {rule}")), "{report}");
    }
}
