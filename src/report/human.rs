//! The report for people: each finding with its minimized transcript, the line at fault marked, the case file,
//! and the command that reproduces it; then a one-paragraph summary.

use super::Rerun;
use crate::baseline::Baseline;
use crate::campaign::{Confirmation, Found, SdkFound, Summary};
use crate::transcript::{Ending, Event, show_bytes};
use std::fmt::Write as _;

/// How many events of a finding's transcript are shown from its start, and from its end.
const SHOWN_EVENTS: usize = 40;

/// One finding, ready to print.
pub fn finding(found: &Found, rerun: &Rerun) -> String {
    let f = &found.finding;
    let mut out = format!(
        "\n{} {} [{}] (conversation {})\n  {}\n",
        f.level.name().to_uppercase(),
        f.rule,
        found.trigger,
        found.conversation,
        f.detail
    );
    if let Some(rule) = crate::oracle::rule(f.rule) {
        let _ = writeln!(out, "  rule: {} [{}]", rule.statement, rule.source);
    }
    let shape = if found.minimized { "minimized transcript" } else { "transcript as seen, not minimized yet" };
    let _ = writeln!(out, "  {shape} (>> sent, << received, -- sync, ht HTTP exchange):");
    let events = &found.transcript.events;
    // A long transcript (a flood) is shown by its start, its end and the event at fault.
    let shown = |index: usize| index < SHOWN_EVENTS || index + SHOWN_EVENTS >= events.len() || f.event == Some(index);
    let mut skipped = 0;
    for (index, event) in events.iter().enumerate() {
        if !shown(index) {
            skipped += 1;
            continue;
        }
        if skipped > 0 {
            let _ = writeln!(out, "    ... {skipped} event(s) not shown");
            skipped = 0;
        }
        let (mark, shown) = match event {
            Event::Sent(line) => (">>", show_bytes(line, 300)),
            Event::Received { line, .. } => ("<<", show_bytes(line, 300)),
            Event::Sync => ("--", String::new()),
            Event::Http(exchange) => ("ht", exchange.summary()),
            Event::Note(note) => ("!!", note.summary()),
        };
        let flag = if f.event == Some(index) { "  <-- here" } else { "" };
        let _ = writeln!(out, "    {mark} {shown}{flag}");
    }
    match &found.transcript.ending {
        Ending::Closed => {}
        Ending::Exited { code, signal, stderr_tail } => {
            let _ = writeln!(out, "    == server exited (code {code:?}, signal {signal:?})");
            let tail = String::from_utf8_lossy(stderr_tail);
            for line in tail.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev() {
                let _ = writeln!(out, "       stderr: {line}");
            }
        }
        Ending::Hung { waited_ms } => {
            let _ = writeln!(out, "    == server stopped answering (waited {waited_ms} ms)");
        }
        Ending::Cut { events } => {
            let _ = writeln!(out, "    == CUT after {events} events: nothing after the cut was seen or judged");
        }
    }
    if let Some(path) = &found.case_file {
        let _ = writeln!(out, "  case file: {}", path.display());
    }
    let _ = writeln!(out, "  reproduce: {}", rerun.command(found));
    out
}

/// The line printed when a finding's case has been minimized (its file replaced).
pub fn minimized(found: &Found) -> String {
    let frames = found.case.inputs.iter().filter(|i| matches!(i, crate::transcript::Input::Line(_))).count();
    let file = found.case_file.as_ref().map(|p| format!(": {}", p.display())).unwrap_or_default();
    format!("minimized {} [{}] to {frames} frame(s){file}", found.finding.rule, found.trigger)
}

/// The line printed when a finding was seen: it is written as seen, and confirmed next.
pub fn seen(found: &Found) -> String {
    let file = found.case_file.as_ref().map(|p| format!(" (case file {})", p.display())).unwrap_or_default();
    format!(
        "seen {} [{}] in conversation {}{file}: running it again to confirm",
        found.finding.rule, found.trigger, found.conversation
    )
}

/// The line printed for a finding that did not break again: it does not fail the run.
pub fn unconfirmed(found: &Found) -> String {
    let file = found.case_file.as_ref().map(|p| format!(" -> {}", p.display())).unwrap_or_default();
    format!("{} [{}] {}{file}", found.finding.rule, found.trigger, found.confirmation)
}

/// The closing summary: counts, each broken rule (baselined ones marked) with its triggers under it, the findings
/// not confirmed, those still pending, stale baseline entries, and the verdict with its exit code.
pub fn summary(summary: &Summary, baseline: &Baseline) -> String {
    let seconds = summary.fuzzed.as_secs_f64();
    let rate = if seconds > 0.0 { summary.conversations as f64 / seconds } else { 0.0 };
    let after = summary.elapsed.saturating_sub(summary.fuzzed).as_secs_f64();
    let mut out = format!(
        "\nran {} conversations in {seconds:.1}s of fuzzing ({rate:.1}/s), seed {}; then {after:.1}s confirming and \
         minimizing what was seen; minimization {:.1}s in all\n",
        summary.conversations,
        summary.seed,
        summary.shrink_time.as_secs_f64()
    );
    let listed = |f: &&Found| f.confirmation.listed();
    let broken: Vec<&str> = summary
        .broken()
        .into_iter()
        .filter(|rule| summary.found.iter().any(|f| f.finding.rule == *rule && listed(&f)))
        .collect();
    if broken.is_empty() {
        out.push_str(if summary.found.is_empty() { "no findings\n" } else { "no confirmed findings\n" });
    } else {
        let _ = writeln!(out, "{} rule(s) broken:", broken.len());
        for rule in broken {
            let found: Vec<&Found> = summary.found.iter().filter(|f| f.finding.rule == rule).filter(listed).collect();
            let count = summary.counts.get(rule).copied().unwrap_or(0);
            let baselined = |f: &&Found| f.baselined(baseline);
            let known = if found.iter().all(baselined) { " (baselined)" } else { "" };
            let level = found[0].finding.level.name();
            let _ = writeln!(out, "  {level:<7} {rule:<30} in {count} conversation(s){known}");
            let triggers = summary.trigger_counts.get(rule);
            for f in &found {
                let count = triggers.and_then(|t| t.get(&f.trigger)).copied().unwrap_or(0);
                let mark = if baselined(f) && known.is_empty() { " (baselined)" } else { "" };
                let raw = match (f.minimized, &f.confirmation) {
                    (false, Confirmation::Confirmed { .. } | Confirmation::Pending) => {
                        " (not minimized: the run's time ran out)"
                    }
                    // Minimized, or not meant to be: baselined (its case file says so) or unconfirmed.
                    _ => "",
                };
                let file = f.case_file.as_ref().map(|p| format!(" -> {}", p.display())).unwrap_or_default();
                let _ = writeln!(out, "            {:<36} in {count}{mark}{raw}{file}", f.trigger);
            }
            let mut unsaved: Vec<(&String, &u64)> = triggers
                .into_iter()
                .flatten()
                .filter(|(t, _)| !summary.found.iter().any(|f| f.finding.rule == rule && &f.trigger == *t))
                .collect();
            if !unsaved.is_empty() {
                unsaved.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
                let shown: Vec<String> = unsaved.iter().take(5).map(|(t, n)| format!("{t} ({n})")).collect();
                let more = if unsaved.len() > 5 { ", ..." } else { "" };
                let _ = writeln!(
                    out,
                    "            {} more trigger(s) not kept (at most {} per rule): {}{more}",
                    unsaved.len(),
                    crate::campaign::MAX_TRIGGERS_PER_RULE,
                    shown.join(", ")
                );
            }
        }
    }
    let unsettled = summary.unsettled(baseline);
    let doubtful: Vec<&Found> =
        summary.found.iter().filter(|f| !f.confirmation.listed() && !unsettled.iter().any(|u| u.same(f))).collect();
    if !doubtful.is_empty() {
        let fails = if summary.strict {
            "they fail the run: --strict"
        } else {
            "they do not fail the run; --strict makes them"
        };
        let _ = writeln!(out, "not confirmed ({}; {fails}):", doubtful.len());
        for f in doubtful {
            let _ = writeln!(out, "  {:<7} {}", f.finding.level.name(), unconfirmed(f));
        }
    }
    if !unsettled.is_empty() {
        let _ = writeln!(
            out,
            "pending ({}: seen, but the confirmation time ran out before they could run again; each fails the run if \
             it breaks again):",
            unsettled.len()
        );
        for f in &unsettled {
            let file = f.case_file.as_ref().map(|p| format!(" -> {}", p.display())).unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:<7} {} [{}] in conversation {}, about {:.1} s to run again{file}",
                f.finding.level.name(),
                f.finding.rule,
                f.trigger,
                f.conversation,
                f.estimate.as_secs_f64()
            );
        }
        let _ = writeln!(
            out,
            "  --confirm-time {} (or more) settles them in a run of the same seed; `mcp-wirefuzz replay FILE` settles \
             one",
            summary.settles_in(baseline).as_secs()
        );
    }
    out.push_str(&sdk_section(&summary.sdk));
    for entry in baseline.stale(&summary.seen()) {
        let _ = writeln!(
            out,
            "stale baseline entry: {entry} did not break in these {} conversations; once its case file no longer \
             reproduces either (`mcp-wirefuzz replay`), remove it from the baseline",
            summary.conversations
        );
    }
    let verdict = summary.verdict(baseline);
    let _ = writeln!(
        out,
        "verdict: {} (exit {}){}",
        verdict.name(),
        verdict.exit_code(),
        failing_levels(summary, baseline)
    );
    out
}

/// For a run that fails: how many of its failing findings break a MUST and how many a SHOULD, so that a run red on
/// SHOULD findings alone says so (`--allow` or a baseline entry turns one off).
fn failing_levels(summary: &Summary, baseline: &Baseline) -> String {
    let failing: Vec<_> = summary.found.iter().filter(|f| summary.failing(f, baseline)).collect();
    let must = failing.iter().filter(|f| f.finding.level == crate::oracle::Level::Error).count();
    match (must, failing.len() - must) {
        (_, _) if failing.is_empty() => String::new(),
        (0, should) => format!(": {should} SHOULD finding(s), no MUST finding"),
        (must, 0) => format!(": {must} MUST finding(s)"),
        (must, should) => format!(": {must} MUST finding(s) and {should} SHOULD"),
    }
}

/// The section of the SDK's known deviations: each with its rule, what the SDK does, how often, an example trigger
/// and the upstream reference; empty when none was seen.
pub fn sdk_section(seen: &[SdkFound]) -> String {
    if seen.is_empty() {
        return String::new();
    }
    let mut out = format!("your SDK's known deviations ({}: not your code, they do not fail the run):\n", seen.len());
    for sdk in seen {
        let d = sdk.deviation;
        let _ = writeln!(
            out,
            "  {:<7} {:<30} in {} conversation(s), e.g. [{}]",
            sdk.found.finding.level.name(),
            d.rule,
            sdk.conversations,
            sdk.found.trigger
        );
        let _ = writeln!(out, "            {}", d.what);
        let _ = writeln!(out, "            upstream: {}", d.reference);
    }
    out
}
