//! What the oracle's tests share: hand-written transcripts (the [`E`] events), the policies most tests judge with,
//! assertions that a rule fires or stays quiet, the lines and replies they are written with, and the reference
//! server's transcripts.

use crate::model::{Eras, ServerModel};
use crate::oracle::{Finding, Policy, check};
use crate::server::builtin::reference::Calc;
use crate::server::run_in_process;
use crate::transcript::{Ending, Event, Input, Transcript};
use E::*;

/// One event of a hand-written transcript.
#[derive(Clone, Copy)]
pub(super) enum E<'a> {
    /// A line the client sent.
    S(&'a str),
    /// A line the server wrote.
    R(&'a str),
    /// A sync point.
    Sync,
}

/// A transcript of these events with this ending.
pub(super) fn t(events: &[E], ending: Ending) -> Transcript {
    let events = events
        .iter()
        .map(|e| match e {
            S(line) => Event::Sent(line.as_bytes().to_vec()),
            R(line) => Event::Received { line: line.as_bytes().to_vec(), truncated: false },
            Sync => Event::Sync,
        })
        .collect();
    Transcript { events, ending }
}

/// The policy most tests judge with: a dual-era server (as the built-in one), every rule at its default.
pub(super) fn dual() -> Policy {
    Policy::default().with_model(ServerModel::stated(Eras::Dual))
}

/// The findings of a closed conversation of these events, under [`dual`].
pub(super) fn findings(events: &[E]) -> Vec<Finding> {
    check(&t(events, Ending::Closed), &dual())
}

/// A dual-era server judged under the profile mcp-python-2.3.0 (the one-era lock, MCP-ERA-SINGLE).
pub(super) fn python() -> Policy {
    dual().with_profile("mcp-python-2.3.0").unwrap()
}

/// Asserts that exactly these rules fire, in order, under this policy.
#[track_caller]
pub(super) fn only_under(policy: &Policy, events: &[E], expected: &[&str]) {
    let found = check(&t(events, Ending::Closed), policy);
    assert_eq!(ids(&found), expected, "{found:#?}");
}

/// The rule ids of the findings, in order.
pub(super) fn ids(findings: &[Finding]) -> Vec<&'static str> {
    findings.iter().map(|f| f.rule).collect()
}

/// The first finding of this rule, under [`dual`]; panics when it does not fire.
#[track_caller]
pub(super) fn fires(events: &[E], rule: &str) -> Finding {
    let found = findings(events);
    let finding = found.iter().find(|f| f.rule == rule);
    finding.unwrap_or_else(|| panic!("{rule} did not fire; findings: {found:#?}")).clone()
}

/// Asserts that this rule does not fire, under [`dual`].
#[track_caller]
pub(super) fn quiet(events: &[E], rule: &str) {
    let found = findings(events);
    assert!(found.iter().all(|f| f.rule != rule), "{rule} fired: {found:#?}");
}

/// Asserts that exactly these rules fire, in order, under [`dual`].
#[track_caller]
pub(super) fn only(events: &[E], expected: &[&str]) {
    assert_eq!(ids(&findings(events)), expected, "{:#?}", findings(events));
}

/// A handshake `ping` with id 1.
pub(super) const PING_1: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
/// A plain `tools/list` with id 1.
pub(super) const LIST_1: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
/// An empty result for id 1.
pub(super) const EMPTY_1: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
/// `notifications/initialized`.
pub(super) const NOTE: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
/// A 2025-06-18 `initialize` with id 0.
pub(super) const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
/// Its result.
pub(super) const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;
/// A complete 2026-07-28 request envelope (`_meta` member).
pub(super) const ENV: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
/// What a 2026-07-28 result carries: `resultType` and the server info.
pub(super) const STAMP: &str =
    r#""resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}"#;
/// Cache hints of a modern list result (end of a member list).
pub(super) const HINTS: &str = r#""ttlMs":0,"cacheScope":"private","#;

/// A fully enveloped modern request; `extra` goes first in params (end it with a comma).
pub(super) fn modern(id: &str, method: &str, extra: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{extra}{ENV}}}}}"#)
}

/// A well-stamped modern result; `body` goes first (end it with a comma).
pub(super) fn modern_ok(id: &str, body: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{{body}{STAMP}}}}}"#)
}

/// An error with this code for this id.
pub(super) fn error(id: &str, code: i64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"m"}}}}"#)
}

/// A modern `server/discover` result naming these supported versions.
pub(super) fn discovered(id: &str, versions: &str) -> String {
    modern_ok(id, &format!(r#""supportedVersions":{versions},"capabilities":{{}},"ttlMs":0,"cacheScope":"public","#))
}

/// The reference server's transcript of these lines (`<sync>` a sync point), in-process.
pub(super) fn reference(lines: &[String]) -> Transcript {
    let inputs: Vec<Input> =
        lines.iter().map(|l| if l == "<sync>" { Input::Sync } else { Input::Line(l.as_bytes().to_vec()) }).collect();
    let server: Calc = Default::default();
    run_in_process(&server, &inputs)
}

/// Asserts that the transcript makes no finding under the default policy.
#[track_caller]
pub(super) fn assert_clean(transcript: &Transcript) {
    let found = check(transcript, &Policy::default());
    assert!(found.is_empty(), "{}\n{found:#?}", transcript.render());
}
