//! The known-failures baseline: what a server is known to break, one entry per line, each with the reason after a
//! `#`. An entry is a rule id, alone (every finding of the rule) or narrowed to one trigger, as the report prints
//! it in brackets, or to the findings on one tool's calls. Findings an entry covers are still reported but do not
//! fail the run; an entry that covers nothing in a run is reported as stale, so the file shrinks as the server is
//! fixed.
//!
//! ```text
//! # mcp-wirefuzz baseline for tests/servers/calc.py (Python SDK mcp 2.3.0)
//! JSONRPC-MALFORMED-SERVED  # executes lines that are not strict JSON (invalid UTF-8, a BOM)
//! JSONRPC-RESPONSE-MISSING [ping/meta-not-object]  # only this trigger: a hung tool still fails the run
//! MCP-TOOL-OUTPUT-SCHEMA tool=search  # only the calls of the tool `search`
//! ```

use crate::oracle::{Finding, rule};
use crate::sdk::Fault;
use crate::transcript::Transcript;
use anyhow::{Context, Result, bail};
use std::fmt;
use std::path::Path;

/// One line of a baseline: a rule, maybe narrowed to a trigger or a tool, and its reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The rule id.
    pub rule: String,
    /// Only findings with this trigger (`RULE [TRIGGER]`).
    pub trigger: Option<String>,
    /// Only findings on a `tools/call` of this tool (`RULE tool=NAME`).
    pub tool: Option<String>,
    /// The reason given in the file (empty when none).
    pub reason: String,
}

impl Entry {
    /// True when the entry covers a finding of `rule` with `trigger`, on a call of `tool` (if any).
    pub fn covers(&self, rule: &str, trigger: &str, tool: Option<&str>) -> bool {
        self.rule == rule
            && self.trigger.as_deref().is_none_or(|t| t == trigger)
            && self.tool.as_deref().is_none_or(|t| Some(t) == tool)
    }

    /// True when the entry covers every finding of its rule.
    pub fn whole_rule(&self) -> bool {
        self.trigger.is_none() && self.tool.is_none()
    }
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.rule)?;
        if let Some(trigger) = &self.trigger {
            write!(f, " [{trigger}]")?;
        }
        if let Some(tool) = &self.tool {
            write!(f, " tool={tool}")?;
        }
        Ok(())
    }
}

/// What a server is known to break, each with its reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    /// The entries, in the file's order.
    pub entries: Vec<Entry>,
}

impl Baseline {
    /// Parses a baseline; every id must be a rule of the catalogue.
    pub fn parse(text: &str) -> Result<Baseline> {
        let mut entries = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let (entry, reason) = line.split_once('#').unwrap_or((line, ""));
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let at = index + 1;
            let (id, rest) = entry.split_once(char::is_whitespace).unwrap_or((entry, ""));
            if rule(id).is_none() {
                bail!("line {at}: `{id}` is not a rule id (`mcp-wirefuzz invariants` lists them)");
            }
            let rest = rest.trim();
            let (mut trigger, mut tool) = (None, None);
            if let Some(inside) = rest.strip_prefix('[') {
                match inside.strip_suffix(']') {
                    Some(t) if !t.trim().is_empty() => trigger = Some(t.trim().to_string()),
                    _ => bail!("line {at}: a trigger is written `RULE [TRIGGER]`, as the report prints it"),
                }
            } else if let Some(name) = rest.strip_prefix("tool=") {
                if name.trim().is_empty() {
                    bail!("line {at}: `tool=` names a tool");
                }
                tool = Some(name.trim().to_string());
            } else if !rest.is_empty() {
                bail!("line {at}: one rule id per line, then `[TRIGGER]` or `tool=NAME` or nothing, then `# reason`");
            }
            entries.push(Entry { rule: id.to_string(), trigger, tool, reason: reason.trim().to_string() });
        }
        Ok(Baseline { entries })
    }

    /// Reads a baseline file.
    pub fn load(path: &Path) -> Result<Baseline> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Baseline::parse(&text).with_context(|| format!("{}", path.display()))
    }

    /// True when an entry covers every finding of `rule`.
    pub fn covers(&self, rule: &str) -> bool {
        self.entries.iter().any(|e| e.rule == rule && e.whole_rule())
    }

    /// True when any entry names `rule` (for all its findings or some).
    pub fn names(&self, rule: &str) -> bool {
        self.entries.iter().any(|e| e.rule == rule)
    }

    /// The entry that covers a finding of `rule` with `trigger` on a call of `tool`, if one does.
    pub fn entry(&self, rule: &str, trigger: &str, tool: Option<&str>) -> Option<&Entry> {
        self.entries.iter().find(|e| e.covers(rule, trigger, tool))
    }

    /// The entry that covers `finding` (with `trigger`) of `transcript`, if one does: its tool is the one the
    /// `tools/call` at fault names.
    pub fn known(&self, transcript: &Transcript, finding: &Finding, trigger: &str) -> Option<&Entry> {
        if !self.names(finding.rule) {
            return None;
        }
        let fault = Fault::of(transcript, finding);
        self.entry(finding.rule, trigger, fault.tool())
    }

    /// The entries that cover none of `seen` (rule, trigger, tool): fixed, so their lines can go.
    pub fn stale<'a, S: AsRef<str>>(&'a self, seen: &[(&str, S, Option<S>)]) -> Vec<&'a Entry> {
        let covers =
            |e: &Entry| seen.iter().any(|(rule, t, tool)| e.covers(rule, t.as_ref(), tool.as_ref().map(S::as_ref)));
        self.entries.iter().filter(|e| !covers(e)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::Level;
    use crate::transcript::{Ending, Event};

    #[test]
    fn parses_ids_with_reasons_and_finds_stale_ones() {
        let baseline = Baseline::parse("# header\n\nJSONRPC-ID-ECHO # why\nSERVER-HANG\n").unwrap();
        assert!(baseline.covers("JSONRPC-ID-ECHO") && baseline.covers("SERVER-HANG") && !baseline.covers("X"));
        assert_eq!(baseline.entries[0].reason, "why");
        let stale: Vec<String> = baseline.stale(&[("SERVER-HANG", "t", None)]).iter().map(|e| e.to_string()).collect();
        assert_eq!(stale, vec!["JSONRPC-ID-ECHO"]);
    }

    #[test]
    fn refuses_unknown_ids_and_two_per_line() {
        let error = Baseline::parse("NOT-A-RULE\n").unwrap_err().to_string();
        assert!(error.contains("line 1") && error.contains("NOT-A-RULE"), "{error}");
        assert!(Baseline::parse("JSONRPC-ID-ECHO SERVER-HANG\n").is_err());
        assert!(Baseline::parse("JSONRPC-ID-ECHO [unclosed\n").is_err());
        assert!(Baseline::parse("JSONRPC-ID-ECHO tool=\n").is_err());
    }

    /// A transcript of one `tools/call` of `tool`, never answered.
    fn unanswered_call(tool: &str) -> Transcript {
        let line = format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{tool}"}}}}"#);
        Transcript { events: vec![Event::Sent(line.into_bytes()), Event::Sync], ending: Ending::Closed }
    }

    #[test]
    fn an_entry_narrowed_to_a_trigger_covers_that_trigger_only() {
        let baseline =
            Baseline::parse("JSONRPC-RESPONSE-MISSING [ping/meta-not-object]  # the SDK's _meta refusal\n").unwrap();
        let entry = &baseline.entries[0];
        assert_eq!(
            (entry.trigger.as_deref(), entry.reason.as_str()),
            (Some("ping/meta-not-object"), "the SDK's _meta refusal")
        );
        assert!(!baseline.covers("JSONRPC-RESPONSE-MISSING"), "not every finding of the rule");
        assert!(baseline.entry("JSONRPC-RESPONSE-MISSING", "ping/meta-not-object", None).is_some());
        let finding =
            Finding { rule: "JSONRPC-RESPONSE-MISSING", level: Level::Error, event: Some(0), detail: String::new() };
        assert!(
            baseline.known(&unanswered_call("search"), &finding, "tools/call").is_none(),
            "a hung tool still fails"
        );
        assert_eq!(baseline.stale(&[("JSONRPC-RESPONSE-MISSING", "tools/call", None)]).len(), 1);
        assert!(baseline.stale(&[("JSONRPC-RESPONSE-MISSING", "ping/meta-not-object", None)]).is_empty());
        assert_eq!(entry.to_string(), "JSONRPC-RESPONSE-MISSING [ping/meta-not-object]");
    }

    #[test]
    fn an_entry_narrowed_to_a_tool_covers_that_tools_calls_only() {
        let baseline = Baseline::parse("JSONRPC-RESPONSE-MISSING tool=slow one # waits on purpose\n").unwrap();
        let finding =
            Finding { rule: "JSONRPC-RESPONSE-MISSING", level: Level::Error, event: Some(0), detail: String::new() };
        assert!(baseline.known(&unanswered_call("slow one"), &finding, "tools/call").is_some());
        assert!(baseline.known(&unanswered_call("search"), &finding, "tools/call").is_none());
        assert_eq!(baseline.entries[0].to_string(), "JSONRPC-RESPONSE-MISSING tool=slow one");
    }
}
