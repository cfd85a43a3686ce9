//! The SARIF 2.1.0 report, for code-scanning tools: every checked rule as a reporting descriptor, every finding
//! as a result located at its case file; baselined findings carry an external suppression, and so do the SDK's known
//! deviations (justified by their upstream reference, `properties.sdk` true). Each result's `properties.confirmation`
//! says whether it broke again; one not confirmed is at level `note` (unless the run is strict). The invocation's
//! `properties.verdict` is `passed`, `failed` or `inconclusive`; an inconclusive run is not `executionSuccessful`,
//! and each finding left pending is one of its `toolExecutionNotifications`.

use super::Rerun;
use crate::baseline::Baseline;
use crate::campaign::{Summary, Verdict};
use crate::oracle::{Level, Policy, RULES};
use serde_json::{Value, json};

/// The report as a SARIF log.
pub fn report(summary: &Summary, rerun: &Rerun, policy: &Policy, baseline: &Baseline) -> Value {
    let rules: Vec<Value> = RULES
        .iter()
        .filter(|r| policy.enabled(r.id))
        .map(|r| {
            json!({
                "id": r.id,
                "shortDescription": { "text": r.statement },
                "fullDescription": { "text": format!("{} Source: {}.", r.statement, r.source) },
                "defaultConfiguration": { "level": level(r.level) },
                "properties": { "eras": r.eras.iter().map(|e| e.name()).collect::<Vec<_>>(), "policy": r.policy },
            })
        })
        .collect();
    let results: Vec<Value> = summary
        .found
        .iter()
        .map(|found| {
            let uri = found.case_file.as_ref().map_or_else(|| "mcp-wirefuzz".into(), |p| p.display().to_string());
            let mut result = json!({
                "ruleId": found.finding.rule,
                "level": level(found.finding.level),
                "message": { "text": format!("{} Reproduce: {}", found.finding.detail, rerun.command(found)) },
                "locations": [{ "physicalLocation": { "artifactLocation": { "uri": uri } } }],
                "properties": { "conversation": found.conversation, "event": found.finding.event, "trigger": found.trigger,
                    "confirmation": found.confirmation.state(), "confirmationDetail": found.confirmation.to_string() },
            });
            if !summary.strict && !found.confirmation.listed() {
                // It did not break again (or was not run again): a note, not a failure.
                result["level"] = json!("note");
            }
            if let Some(entry) = baseline.known(&found.transcript, &found.finding, &found.trigger) {
                result["suppressions"] = json!([{ "kind": "external", "justification": entry.reason }]);
            }
            result
        })
        .chain(summary.sdk.iter().map(|seen| {
            let (found, d) = (&seen.found, seen.deviation);
            json!({
                "ruleId": d.rule,
                "level": level(found.finding.level),
                "message": { "text": format!("your SDK's known deviation: {} ({})", d.what, found.finding.detail) },
                "locations": [{ "physicalLocation": { "artifactLocation": { "uri": "mcp-wirefuzz" } } }],
                "properties": { "conversation": found.conversation, "conversations": seen.conversations, "trigger": found.trigger, "sdk": true },
                "suppressions": [{ "kind": "external", "justification": format!("the SDK's own behaviour; upstream: {}", d.reference) }],
            })
        }))
        .collect();
    let verdict = summary.verdict(baseline);
    let unsettled = summary.unsettled(baseline);
    // An inconclusive run did not do its job: findings that would fail it were never run again.
    let notifications: Vec<Value> = unsettled
        .iter()
        .map(|found| {
            json!({
                "level": "error",
                "message": { "text": format!("inconclusive: {} [{}] {}", found.finding.rule, found.trigger, found.confirmation) },
                "associatedRule": { "id": found.finding.rule },
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "mcp-wirefuzz",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "invocations": [{ "executionSuccessful": verdict != Verdict::Inconclusive, "toolExecutionNotifications": notifications,
                "properties": { "verdict": verdict.name(), "exitCode": verdict.exit_code(), "seed": summary.seed, "server": rerun.server.describe(), "conversations": summary.conversations, "sdk": rerun.sdk.as_ref().map(ToString::to_string) } }],
            "results": results,
        }],
    })
}

fn level(level: Level) -> &'static str {
    match level {
        Level::Error => "error",
        Level::Warning => "warning",
    }
}
