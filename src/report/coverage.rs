//! The coverage report: per method and per tool, what was sent and what came back, and which surface rules the
//! run exercised; as terminal text and as a small HTML page (one table per tool, the worst finding first).

use crate::oracle::coverage::{Counts, Coverage};
use crate::oracle::rules::{Level, rule};
use crate::report::junit::escape;
use std::fmt::Write as _;

/// The coverage as terminal text: a method table, a tool table, the rules exercised and not.
pub fn text(coverage: &Coverage) -> String {
    let mut out = String::from("coverage by method:\n");
    let header = |out: &mut String, what: &str| {
        let _ = writeln!(
            out,
            "  {what:<28} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8} {:>9}  errors",
            "calls", "valid", "invalid", "results", "isError", "no-reply", "cancelled"
        );
    };
    header(&mut out, "method");
    for (method, counts) in &coverage.methods {
        row(&mut out, method, counts);
    }
    if !coverage.tools.is_empty() {
        out.push_str("coverage by tool:\n");
        header(&mut out, "tool");
        for (tool, counts) in &coverage.tools {
            row(&mut out, tool, counts);
        }
    }
    if !coverage.resources.is_empty() {
        out.push_str("coverage by listed resource (resources/read):\n");
        let _ = writeln!(out, "  {:<44} {:>7} {:>7} {:>8}  errors", "uri", "reads", "results", "no-reply");
        for (uri, c) in &coverage.resources {
            let uri: String = uri.chars().take(44).collect();
            let _ = writeln!(out, "  {uri:<44} {:>7} {:>7} {:>8}  {}", c.calls, c.results, c.no_reply, c.errors_text());
        }
    }
    let not: Vec<&str> =
        crate::oracle::surface_rules().iter().copied().filter(|r| !coverage.exercised.contains(r)).collect();
    let _ =
        writeln!(out, "surface rules exercised: {}", coverage.exercised.iter().copied().collect::<Vec<_>>().join(", "));
    if !not.is_empty() {
        let _ = writeln!(out, "surface rules never exercised (not passed, not failed): {}", not.join(", "));
    }
    out
}

fn row(out: &mut String, name: &str, c: &Counts) {
    // A tool name may hold control characters, line breaks and escape sequences: shown escaped, never raw.
    let name: String = name.escape_debug().take(28).collect();
    let _ = writeln!(
        out,
        "  {name:<28} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8} {:>9}  {}",
        c.calls,
        c.valid,
        c.invalid,
        c.results,
        c.is_error,
        c.no_reply,
        c.cancelled,
        c.errors_text()
    );
}

/// Findings of one table, worst first: errors before warnings, then by count.
fn worst_first(counts: &Counts) -> Vec<(&'static str, Level, u64)> {
    let mut findings: Vec<(&'static str, Level, u64)> =
        counts.findings.iter().map(|(id, n)| (*id, rule(id).map_or(Level::Error, |r| r.level), *n)).collect();
    findings.sort_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)));
    findings
}

/// A self-contained HTML page: one table per tool (the worst finding first), then the methods and the rules.
pub fn html(coverage: &Coverage, title: &str) -> String {
    let mut out = format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title><style>\
         body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin-bottom:1.5em}}\
         td,th{{border:1px solid #bbb;padding:3px 8px;text-align:right}}th{{background:#eee}}\
         td.l{{text-align:left}}.error{{color:#b00;font-weight:bold}}.warning{{color:#a60}}.ok{{color:#070}}\
         </style></head><body>\n<h1>{t}</h1>\n",
        t = escape(title)
    );
    let counts_table = |out: &mut String, c: &Counts| {
        let _ = writeln!(
            out,
            "<table><tr><th>calls</th><th>valid</th><th>invalid</th><th>results</th><th>isError</th><th>no reply</th>\
             <th>cancelled</th><th>errors by code</th></tr><tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td class=\"l\">{}</td></tr></table>",
            c.calls,
            c.valid,
            c.invalid,
            c.results,
            c.is_error,
            c.no_reply,
            c.cancelled,
            escape(&c.errors_text())
        );
    };
    let mut tools: Vec<(&String, &Counts)> = coverage.tools.iter().collect();
    tools.sort_by_key(|(name, c)| {
        (worst_first(c).first().map_or((Level::Warning, 1), |(_, l, _)| (*l, 0)), (*name).clone())
    });
    out.push_str("<h2>Tools</h2>\n");
    for (name, counts) in tools {
        let _ = writeln!(out, "<h3>{}</h3>", escape(name));
        let findings = worst_first(counts);
        if findings.is_empty() {
            out.push_str("<p class=\"ok\">no finding</p>\n");
        } else {
            out.push_str("<table><tr><th>finding</th><th>level</th><th>replies</th><th>rule</th></tr>\n");
            for (id, level, n) in findings {
                let statement = rule(id).map_or("", |r| r.statement);
                let _ = writeln!(
                    out,
                    "<tr><td class=\"l {level}\">{id}</td><td class=\"l\">{level}</td><td>{n}</td><td class=\"l\">{}</td></tr>",
                    escape(statement)
                );
            }
            out.push_str("</table>\n");
        }
        counts_table(&mut out, counts);
    }
    out.push_str("<h2>Methods</h2>\n<table><tr><th>method</th><th>calls</th><th>results</th><th>isError</th><th>no reply</th><th>errors by code</th><th>findings</th></tr>\n");
    for (method, c) in &coverage.methods {
        let findings: Vec<String> = worst_first(c).iter().map(|(id, _, n)| format!("{id}×{n}")).collect();
        let _ = writeln!(
            out,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            escape(method),
            c.calls,
            c.results,
            c.is_error,
            c.no_reply,
            escape(&c.errors_text()),
            escape(&findings.join(", "))
        );
    }
    if !coverage.resources.is_empty() {
        out.push_str("</table>\n<h2>Listed resources</h2>\n<table><tr><th>uri</th><th>reads</th><th>results</th><th>no reply</th><th>errors by code</th></tr>\n");
        for (uri, c) in &coverage.resources {
            let _ = writeln!(
                out,
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
                escape(uri),
                c.calls,
                c.results,
                c.no_reply,
                escape(&c.errors_text())
            );
        }
    }
    out.push_str("</table>\n<h2>Surface rules</h2>\n<table><tr><th>rule</th><th>exercised</th></tr>\n");
    for id in crate::oracle::surface_rules() {
        let (class, word) =
            if coverage.exercised.contains(id) { ("ok", "yes") } else { ("warning", "never: not passed") };
        let _ = writeln!(out, "<tr><td class=\"l\">{id}</td><td class=\"l {class}\">{word}</td></tr>");
    }
    out.push_str("</table>\n</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_show_counts_and_the_worst_finding_first() {
        let mut coverage = Coverage::default();
        let mut counts = Counts { calls: 3, valid: 2, invalid: 1, results: 2, ..Counts::default() };
        counts.errors.insert(-32603, 1);
        counts.findings.insert("MCP-TOOL-VALID-ARGS", 5);
        counts.findings.insert("MCP-TOOL-OUTPUT-SCHEMA", 1);
        coverage.tools.insert("format_user".into(), counts.clone());
        coverage.tools.insert("\u{1b}[0m\n".into(), Counts::default());
        coverage.methods.insert("tools/call".into(), counts);
        coverage.exercised.insert("MCP-TOOL-VALID-ARGS");
        coverage.resources.insert("calc://readme".into(), Counts { calls: 1, results: 1, ..Counts::default() });
        let shown = text(&coverage);
        assert!(shown.contains("coverage by listed resource") && shown.contains("calc://readme"), "{shown}");
        assert!(shown.contains("format_user"), "{shown}");
        assert!(shown.contains("\\u{1b}[0m\\n") && !shown.contains('\u{1b}'), "{shown}");
        assert!(shown.contains("-32603×1"), "{shown}");
        assert!(shown.contains("never exercised") && shown.contains("MCP-CURSOR-INVALID"), "{shown}");
        let page = html(&coverage, "run <1>");
        assert!(page.contains("run &lt;1&gt;") && page.contains("<td class=\"l\">calc://readme</td>"));
        let must = page.find(">MCP-TOOL-OUTPUT-SCHEMA<").unwrap();
        let should = page.find(">MCP-TOOL-VALID-ARGS<").unwrap();
        assert!(must < should, "the MUST finding comes first");
    }
}
