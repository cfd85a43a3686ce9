//! The JSON report: `verdict` (`passed`, `failed` or `inconclusive`: a finding that would fail the run still
//! pending), `exit_code`, `settles_in_s` (when inconclusive: about how much `--confirm-time` settles it), `seed`,
//! `server`, `cases`, `elapsed_s`, `fuzzed_s` (the fuzzing's part of it), `findings` (one per rule and trigger: rule, trigger, level, case_file, step,
//! detail, conversation, reproduce, baselined, confirmation (`confirmed`, `unconfirmed` or `pending`),
//! confirmation_detail, fails_run, minimized, estimate_s: how long running it again takes), `strict`, `shrink_s`
//! (time the shrink worker spent, beside the fuzzing), `counts` (conversations per broken rule), `trigger_counts`
//! (conversations per broken rule and trigger, `{rule: {trigger: n}}`, triggers past the per-rule bound included),
//! `stale_baseline` (baseline entries that covered nothing), `sdk` (the SDK the run judged with: `name`, `package`,
//! `version`, `source`; null when none) and `sdk_deviations` (the SDK's known deviations seen, apart from
//! `findings` and `counts`: rule, level, what, reference, trigger, detail, conversation, conversations).

use super::Rerun;
use crate::baseline::Baseline;
use crate::campaign::{Summary, Verdict};
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
                "baselined": found.baselined(baseline),
                "confirmation": found.confirmation.state(),
                "confirmation_detail": found.confirmation.to_string(),
                "fails_run": summary.failing(found, baseline),
                "minimized": found.minimized,
                "estimate_s": found.estimate.as_secs_f64(),
            })
        })
        .collect();
    let verdict = summary.verdict(baseline);
    json!({
        "verdict": verdict.name(),
        "exit_code": verdict.exit_code(),
        "settles_in_s": (verdict == Verdict::Inconclusive).then(|| summary.settles_in(baseline).as_secs()),
        "seed": summary.seed,
        "server": rerun.server.describe(),
        "cases": summary.conversations,
        "elapsed_s": summary.elapsed.as_secs_f64(),
        "fuzzed_s": summary.fuzzed.as_secs_f64(),
        "shrink_s": summary.shrink_time.as_secs_f64(),
        "findings": findings,
        "strict": summary.strict,
        "counts": summary.counts,
        "trigger_counts": summary.trigger_counts,
        "stale_baseline": baseline.stale(&summary.seen()).iter().map(ToString::to_string).collect::<Vec<_>>(),
        "sdk": rerun.sdk.as_ref().map(|chosen| json!({
            "name": chosen.sdk.name,
            "package": chosen.sdk.package,
            "version": chosen.sdk.version,
            "detected_versions": match &chosen.source {
                crate::sdk::Source::Detected { versions, .. } => *versions,
                crate::sdk::Source::Stated => None,
            },
            "source": match &chosen.source {
                crate::sdk::Source::Stated => "--sdk".to_string(),
                crate::sdk::Source::Detected { from, .. } => format!("detected from {from}"),
            },
        })),
        "sdk_deviations": summary.sdk.iter().map(|seen| json!({
            "rule": seen.deviation.rule,
            "level": seen.found.finding.level.name(),
            "what": seen.deviation.what,
            "reference": seen.deviation.reference,
            "trigger": seen.found.trigger,
            "detail": seen.found.finding.detail,
            "conversation": seen.found.conversation,
            "conversations": seen.conversations,
        })).collect::<Vec<_>>(),
    })
}
