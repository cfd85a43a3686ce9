//! The known-failures baseline: rule ids a server is known to break, one per line, each with the reason after a
//! `#`. Findings of a baselined rule are still reported but do not fail the run; a baselined rule that no longer
//! breaks is reported as stale, so the file shrinks as the server is fixed.
//!
//! ```text
//! # mcp-wirefuzz baseline for tests/servers/calc.py (Python SDK mcp 2.3.0)
//! JSONRPC-MALFORMED-SERVED  # executes lines that are not strict JSON (invalid UTF-8, a BOM)
//! ```

use crate::oracle::rule;
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::Path;

/// The rules a server is known to break, each with its reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    /// Rule id → the reason given in the file (empty when none).
    pub rules: BTreeMap<String, String>,
}

impl Baseline {
    /// Parses a baseline; every id must be a rule of the catalogue.
    pub fn parse(text: &str) -> Result<Baseline> {
        let mut rules = BTreeMap::new();
        for (index, line) in text.lines().enumerate() {
            let (id, reason) = line.split_once('#').unwrap_or((line, ""));
            let id = id.trim();
            if id.is_empty() {
                continue;
            }
            if id.contains(char::is_whitespace) {
                bail!("line {}: one rule id per line, then `# reason`", index + 1);
            }
            if rule(id).is_none() {
                bail!("line {}: `{id}` is not a rule id (`mcp-wirefuzz invariants` lists them)", index + 1);
            }
            rules.insert(id.to_string(), reason.trim().to_string());
        }
        Ok(Baseline { rules })
    }

    /// Reads a baseline file.
    pub fn load(path: &Path) -> Result<Baseline> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Baseline::parse(&text).with_context(|| format!("{}", path.display()))
    }

    /// True when `rule` is known.
    pub fn covers(&self, rule: &str) -> bool {
        self.rules.contains_key(rule)
    }

    /// The baselined rules that are not among `broken`: fixed, so their lines can go.
    pub fn stale<'a>(&'a self, broken: &[&str]) -> Vec<&'a str> {
        self.rules.keys().map(String::as_str).filter(|id| !broken.contains(id)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ids_with_reasons_and_finds_stale_ones() {
        let baseline = Baseline::parse("# header\n\nJSONRPC-ID-ECHO # why\nSERVER-HANG\n").unwrap();
        assert!(baseline.covers("JSONRPC-ID-ECHO") && baseline.covers("SERVER-HANG") && !baseline.covers("X"));
        assert_eq!(baseline.rules["JSONRPC-ID-ECHO"], "why");
        assert_eq!(baseline.stale(&["SERVER-HANG"]), vec!["JSONRPC-ID-ECHO"]);
    }

    #[test]
    fn refuses_unknown_ids_and_two_per_line() {
        let error = Baseline::parse("NOT-A-RULE\n").unwrap_err().to_string();
        assert!(error.contains("line 1") && error.contains("NOT-A-RULE"), "{error}");
        assert!(Baseline::parse("JSONRPC-ID-ECHO SERVER-HANG\n").is_err());
    }
}
