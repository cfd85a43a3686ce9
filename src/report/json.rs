//! The JSON report: `seed`, `server`, `cases`, `elapsed_s`, `findings` (one per rule and trigger: rule, trigger,
//! level, case_file, step, detail, conversation, reproduce, baselined, flaky, minimized), `shrink_s` (time the
//! shrink worker spent, beside the fuzzing), `counts` (conversations per broken
//! rule), `trigger_counts` (conversations per broken rule and trigger, `{rule: {trigger: n}}`, triggers past the
//! per-rule bound included) and `stale_baseline` (baselined rules that no longer break).

use super::Rerun;
use crate::baseline::Baseline;
use crate::campaign::Summary;
use serde_json::{Value, json};

/// The report as a JSON value.
pub fn report(summary: &Summary, rerun: &Rerun, baseline: &Baseline) -> Value {
    let findings: Vec<Value> = summary
        .found
        .iter()
        .map(|found| {
            json!({
                "rule": found.finding.rule,
                "trigger": found.trigger,
                "level": found.finding.level.name(),
                "case_file": found.case_file.as_ref().map(|p| p.display().to_string()),
                "step": found.finding.event,
                "detail": found.finding.detail,
                "conversation": found.conversation,
                "reproduce": rerun.command(found),
                "baselined": baseline.covers(found.finding.rule),
                "flaky": found.flaky,
                "minimized": found.minimized,
            })
        })
        .collect();
    json!({
        "seed": summary.seed,
        "server": rerun.server.describe(),
        "cases": summary.conversations,
        "elapsed_s": summary.elapsed.as_secs_f64(),
        "shrink_s": summary.shrink_time.as_secs_f64(),
        "findings": findings,
        "counts": summary.counts,
        "trigger_counts": summary.trigger_counts,
        "stale_baseline": baseline.stale(&summary.broken()),
    })
}
