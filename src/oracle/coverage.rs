//! What a run exercised: per method and per tool, how many requests went out, valid and invalid by the tool's
//! inputSchema, and what came back (results, isError results, errors by code, no reply); and which surface rules
//! judged at least one reply (a rule never exercised cannot be called passed).

use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The counts of one method or tool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests sent.
    pub calls: u64,
    /// Tool calls whose arguments the inputSchema accepts.
    pub valid: u64,
    /// Tool calls whose arguments the inputSchema refuses.
    pub invalid: u64,
    /// Results (isError ones included).
    pub results: u64,
    /// Results with `isError: true`.
    pub is_error: u64,
    /// Errors, by code.
    pub errors: BTreeMap<i64, u64>,
    /// Requests that got no well-formed reply (the cancelled ones not included).
    pub no_reply: u64,
    /// Tool calls the harness cancelled at the reply timeout while the server answered later requests: a slow
    /// tool, owed no reply (lifecycle.mdx §Timeouts).
    pub cancelled: u64,
    /// Findings on its replies, by rule.
    pub findings: BTreeMap<&'static str, u64>,
}

impl Counts {
    fn merge(&mut self, other: &Counts) {
        self.calls += other.calls;
        self.valid += other.valid;
        self.invalid += other.invalid;
        self.results += other.results;
        self.is_error += other.is_error;
        self.no_reply += other.no_reply;
        self.cancelled += other.cancelled;
        for (code, n) in &other.errors {
            *self.errors.entry(*code).or_default() += n;
        }
        for (rule, n) in &other.findings {
            *self.findings.entry(rule).or_default() += n;
        }
    }

    /// The counts as a JSON object.
    pub fn to_json(&self) -> Value {
        let errors: BTreeMap<String, u64> = self.errors.iter().map(|(c, n)| (c.to_string(), *n)).collect();
        json!({
            "calls": self.calls, "valid": self.valid, "invalid": self.invalid, "results": self.results,
            "is_error": self.is_error, "errors": errors, "no_reply": self.no_reply, "cancelled": self.cancelled,
            "findings": self.findings,
        })
    }

    /// `-32602×3, -32603×1`, or `-`.
    pub fn errors_text(&self) -> String {
        if self.errors.is_empty() {
            return "-".into();
        }
        self.errors.iter().map(|(code, n)| format!("{code}×{n}")).collect::<Vec<_>>().join(", ")
    }
}

/// What a run (or one conversation) exercised.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Per method sent.
    pub methods: BTreeMap<String, Counts>,
    /// Per tool called (by name, listed or not); every listed tool has a row, called or not.
    pub tools: BTreeMap<String, Counts>,
    /// Per listed resource (by URI): its `resources/read` requests; every listed resource has a row.
    pub resources: BTreeMap<String, Counts>,
    /// The surface rules that judged at least one reply.
    pub exercised: BTreeSet<&'static str>,
}

impl Coverage {
    /// Adds another coverage to this one.
    pub fn merge(&mut self, other: &Coverage) {
        for (method, counts) in &other.methods {
            self.methods.entry(method.clone()).or_default().merge(counts);
        }
        for (tool, counts) in &other.tools {
            self.tools.entry(tool.clone()).or_default().merge(counts);
        }
        for (uri, counts) in &other.resources {
            self.resources.entry(uri.clone()).or_default().merge(counts);
        }
        self.exercised.extend(other.exercised.iter().copied());
    }

    /// The coverage as a JSON object.
    pub fn to_json(&self) -> Value {
        let table = |t: &BTreeMap<String, Counts>| -> serde_json::Map<String, Value> {
            t.iter().map(|(k, c)| (k.clone(), c.to_json())).collect()
        };
        json!({
            "methods": table(&self.methods),
            "tools": table(&self.tools),
            "resources": table(&self.resources),
            "rules_exercised": self.exercised,
            "rules_not_exercised": super::surface_rules().iter().filter(|r| !self.exercised.contains(*r)).collect::<Vec<_>>(),
        })
    }
}
