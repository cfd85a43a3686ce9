//! The JUnit XML report, for CI dashboards: one test case per rule that was checked; a broken rule is a failure
//! (the detail, reproduction command and transcript of its first trigger inside, and the case file of every trigger),
//! a baselined one, or one whose findings were not confirmed, is skipped; one whose finding is still pending (the
//! run is inconclusive) is an error. The suite's `verdict` property is `passed`, `failed` or `inconclusive`. Each
//! of the SDK's known deviations seen is a skipped test case of its own, in the class `mcp-wirefuzz.sdk`, its
//! message naming the upstream reference.

use super::Rerun;
use crate::baseline::Baseline;
use crate::campaign::Summary;
use crate::oracle::{Policy, RULES};
use std::fmt::Write as _;

/// The report as an XML document.
pub fn report(summary: &Summary, rerun: &Rerun, policy: &Policy, baseline: &Baseline) -> String {
    let checked: Vec<_> = RULES.iter().filter(|r| policy.enabled(r.id)).collect();
    let broken = summary.broken();
    // A rule fails when any of its findings fails the run (confirmed, or the run is strict, and not baselined).
    let fails = |rule: &str| summary.found.iter().any(|f| f.finding.rule == rule && summary.failing(f, baseline));
    let failures = broken.iter().filter(|rule| fails(rule)).count();
    // A rule errs (was not settled) when none of its findings fails the run and one is pending.
    let unsettled = summary.unsettled(baseline);
    let errs = |rule: &str| !fails(rule) && unsettled.iter().any(|f| f.finding.rule == rule);
    let errors = broken.iter().filter(|rule| errs(rule)).count();
    let skipped = broken.len() - failures - errors + summary.sdk.len();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuite name=\"mcp-wirefuzz\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" errors=\"{errors}\" time=\"{:.3}\">",
        checked.len() + summary.sdk.len(),
        summary.elapsed.as_secs_f64()
    );
    let model = policy.model().map_or_else(String::new, |model| {
        format!("<property name=\"server_model\" value=\"{}\"/>", escape(&model.to_string()))
    });
    let _ = writeln!(
        out,
        "  <properties><property name=\"verdict\" value=\"{}\"/><property name=\"seed\" value=\"{}\"/><property name=\"server\" value=\"{}\"/><property name=\"conversations\" value=\"{}\"/>{model}</properties>",
        summary.verdict(baseline).name(),
        summary.seed,
        escape(&rerun.server.describe()),
        summary.conversations
    );
    for rule in checked {
        let _ = write!(out, "  <testcase classname=\"mcp-wirefuzz.{}\" name=\"{}\"", rule.level.name(), rule.id);
        match summary.found.iter().find(|f| f.finding.rule == rule.id) {
            None => out.push_str("/>\n"),
            Some(found) => {
                out.push_str(">\n");
                let message = escape(&found.finding.detail);
                if let Some(pending) = unsettled.iter().find(|f| f.finding.rule == rule.id).filter(|_| errs(rule.id)) {
                    let why = escape(&pending.confirmation.to_string());
                    let _ = writeln!(out, "    <error message=\"{why}: {message}\" type=\"pending\"/>");
                } else if !fails(rule.id) {
                    let why = match found.confirmation.listed() {
                        true => "baselined".to_string(),
                        false => escape(&found.confirmation.to_string()),
                    };
                    let _ = writeln!(out, "    <skipped message=\"{why}: {message}\"/>");
                } else {
                    let _ = writeln!(out, "    <failure message=\"{message}\" type=\"{}\">", rule.level.name());
                    let _ = writeln!(out, "{}", escape(rule.statement));
                    for other in summary.found.iter().filter(|f| f.finding.rule == rule.id) {
                        if let Some(path) = &other.case_file {
                            let (path, trigger) = (escape(&path.display().to_string()), escape(&other.trigger));
                            let _ = writeln!(out, "case file: {path} (trigger {trigger})");
                        }
                    }
                    let _ = writeln!(out, "reproduce: {}", escape(&rerun.command(found)));
                    out.push_str("    </failure>\n");
                }
                let _ = writeln!(out, "    <system-out>{}</system-out>", escape(&found.transcript.render()));
                out.push_str("  </testcase>\n");
            }
        }
    }
    for seen in &summary.sdk {
        let (d, title) = (seen.deviation, rerun.sdk.as_ref().map_or(String::new(), |c| format!("{} ", c.sdk.title())));
        let _ = writeln!(
            out,
            "  <testcase classname=\"mcp-wirefuzz.sdk\" name=\"{} [{}]\">",
            d.rule,
            escape(&seen.found.trigger)
        );
        let message =
            format!("your SDK's known deviation ({title}not your code): {} (upstream: {})", d.what, d.reference);
        let _ = writeln!(out, "    <skipped message=\"{}\"/>", escape(&message));
        out.push_str("  </testcase>\n");
    }
    out.push_str("</testsuite>\n");
    out
}

/// Escapes text for XML content and attributes; characters XML 1.0 cannot hold become U+FFFD.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(escape("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;\u{fffd}");
    }
}
