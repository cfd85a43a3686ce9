//! Reports of a diff run: for people (grouped by method, then class, with both replies one under the other), JSON,
//! and an HTML page with both replies side by side.

use super::case::SideSpec;
use super::{Found, Summary};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The divergences grouped by method, each group in class order.
fn grouped(summary: &Summary) -> BTreeMap<&str, Vec<&Found>> {
    let mut groups: BTreeMap<&str, Vec<&Found>> = BTreeMap::new();
    for found in &summary.found {
        groups.entry(found.divergence.method.as_str()).or_default().push(found);
    }
    for list in groups.values_mut() {
        list.sort_by_key(|found| (found.divergence.class, found.divergence.at.clone()));
    }
    groups
}

/// What one divergence's verdict is: `confirmed`, `accepted (reason)`, `pending`, `not confirmed`.
fn verdict(found: &Found) -> String {
    match (&found.accepted, found.confirmed) {
        (Some(reason), _) if reason.is_empty() => "accepted by the baseline".into(),
        (Some(reason), _) => format!("accepted by the baseline: {reason}"),
        (None, true) => "confirmed".into(),
        (None, false) if found.pending => {
            "pending (the run's time ran out before it could run again; the run is inconclusive)".into()
        }
        (None, false) => "not confirmed (it did not diverge again when run again; not counted)".into(),
    }
}

/// One divergence as a person reads it, as printed the moment it is found.
pub fn divergence(found: &Found) -> String {
    let d = &found.divergence;
    let mut out = format!(
        "divergence [{}] {} at {}: {} (conversation {}, {} frame(s){})\n",
        d.class,
        d.method,
        d.at,
        verdict(found),
        found.conversation,
        found.inputs.len(),
        if found.inputs.len() < found.first_frames { ", minimized" } else { "" },
    );
    let _ = writeln!(out, "    A: {}", d.a);
    let _ = writeln!(out, "    B: {}", d.b);
    if let Some(path) = &found.case_file {
        let _ = writeln!(out, "    case: {}  (run again: mcp-wirefuzz replay {})", path.display(), path.display());
    }
    out
}

/// The summary at the end of a run.
pub fn human(summary: &Summary, sides: &(SideSpec, SideSpec)) -> String {
    let failing = summary.found.iter().filter(|f| f.fails()).count();
    let accepted = summary.found.iter().filter(|f| f.accepted.is_some()).count();
    let open = |f: &&Found| !f.confirmed && f.accepted.is_none();
    let pending = summary.found.iter().filter(open).filter(|f| f.pending).count();
    let unconfirmed = summary.found.iter().filter(open).count() - pending;
    let mut out = format!(
        "mcp-wirefuzz diff: {} conversation(s) in {:.1} s; {failing} divergence(s) differ, {accepted} accepted by \
         the baseline, {unconfirmed} not confirmed, {pending} pending\n  A: {}\n  B: {}\n",
        summary.conversations,
        summary.elapsed.as_secs_f64(),
        sides.0.describe(),
        sides.1.describe(),
    );
    for (method, list) in grouped(summary) {
        let _ = writeln!(out, "\n{method}");
        for found in list {
            let d = &found.divergence;
            let _ = writeln!(out, "  [{}] at {}: {}", d.class, d.at, verdict(found));
            let _ = writeln!(out, "      A: {}", d.a);
            let _ = writeln!(out, "      B: {}", d.b);
            if let Some(path) = &found.case_file {
                let _ = writeln!(out, "      case: {}", path.display());
            }
        }
    }
    for entry in &summary.stale {
        let _ = writeln!(out, "stale baseline entry (nothing diverged so): {entry}");
    }
    let verdict = summary.verdict();
    let _ = writeln!(out, "verdict: {} (exit {})", verdict.name(), verdict.exit_code());
    out
}

/// The JSON report.
pub fn json(summary: &Summary, sides: &(SideSpec, SideSpec)) -> Value {
    let divergences: Vec<Value> = summary
        .found
        .iter()
        .map(|found| {
            let d = &found.divergence;
            json!({
                "class": d.class.id(),
                "method": d.method,
                "at": d.at,
                "a": d.a,
                "b": d.b,
                "confirmed": found.confirmed,
                "pending": found.pending,
                "accepted": found.accepted,
                "fails": found.fails(),
                "conversation": found.conversation,
                "frames": found.inputs.len(),
                "case_file": found.case_file.as_ref().map(|p| p.display().to_string()),
            })
        })
        .collect();
    json!({
        "a": sides.0.describe(),
        "b": sides.1.describe(),
        "conversations": summary.conversations,
        "elapsed_s": summary.elapsed.as_secs_f64(),
        "fails": summary.fails(),
        "verdict": summary.verdict().name(),
        "divergences": divergences,
        "stale_baseline_entries": summary.stale,
    })
}

/// The HTML page: one table per method, both replies side by side.
pub fn html(summary: &Summary, sides: &(SideSpec, SideSpec)) -> String {
    let e = escape;
    let mut out = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>mcp-wirefuzz diff</title><style>\
         body{font-family:sans-serif}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;\
         padding:4px;vertical-align:top}td.reply{font-family:monospace;white-space:pre-wrap;word-break:break-all;\
         width:35%}.fails{background:#fdd}.accepted{background:#eee}</style></head><body>\n",
    );
    let _ = writeln!(
        out,
        "<h1>mcp-wirefuzz diff</h1><p>A: {}<br>B: {}<br>{} conversation(s) in {:.1} s</p>",
        e(&sides.0.describe()),
        e(&sides.1.describe()),
        summary.conversations,
        summary.elapsed.as_secs_f64()
    );
    for (method, list) in grouped(summary) {
        let _ = writeln!(
            out,
            "<h2>{}</h2><table><tr><th>class</th><th>at</th><th>verdict</th><th>A</th><th>B</th><th>case</th></tr>",
            e(method)
        );
        for found in list {
            let d = &found.divergence;
            let row = if found.fails() { "fails" } else { "accepted" };
            let case = found.case_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
            let _ = writeln!(
                out,
                "<tr class=\"{row}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"reply\">{}</td><td class=\"reply\">{}</td><td>{}</td></tr>",
                e(d.class.id()),
                e(&d.at),
                e(&verdict(found)),
                e(&d.a),
                e(&d.b),
                e(&case)
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("</body></html>\n");
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
