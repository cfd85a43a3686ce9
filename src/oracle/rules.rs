//! The rule catalogue: every invariant the oracle checks, with its stable id (one constant per rule), one-line
//! statement, eras, level and source, in the [`RULES`] table (`rules/catalogue.rs`).

mod catalogue;

pub use crate::rule_ids::*;
pub use catalogue::RULES;

use crate::protocol::Era;
use std::fmt;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// A MUST was broken: the server does not conform.
    Error,
    /// A SHOULD was broken.
    Warning,
}

impl Level {
    /// `error` or `warning`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One invariant of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The stable id findings carry, e.g. `JSONRPC-ID-ECHO`.
    pub id: &'static str,
    /// What must hold, in one sentence.
    pub statement: &'static str,
    /// The eras of connection the rule applies to.
    pub eras: &'static [Era],
    /// Error for a MUST, Warning for a SHOULD.
    pub level: Level,
    /// Where the rule comes from.
    pub source: &'static str,
    /// True when implementations legitimately differ here, so a user may relax (or tighten) it.
    pub policy: bool,
    /// Whether the rule is checked when the [`Policy`](super::Policy) says nothing about it.
    pub enabled_by_default: bool,
}

const BOTH: &[Era] = &[Era::Handshake, Era::Modern];
const HANDSHAKE: &[Era] = &[Era::Handshake];
const MODERN: &[Era] = &[Era::Modern];

const fn must(id: &'static str, eras: &'static [Era], statement: &'static str, source: &'static str) -> Rule {
    Rule { id, statement, eras, level: Level::Error, source, policy: false, enabled_by_default: true }
}

const fn should(id: &'static str, eras: &'static [Era], statement: &'static str, source: &'static str) -> Rule {
    Rule { level: Level::Warning, ..must(id, eras, statement, source) }
}

/// The rule with this id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_found() {
        for (i, r) in RULES.iter().enumerate() {
            assert!(RULES[..i].iter().all(|earlier| earlier.id != r.id), "duplicate id {}", r.id);
            assert_eq!(rule(r.id), Some(r));
            assert!(!r.eras.is_empty() && !r.statement.is_empty() && !r.source.is_empty(), "{}", r.id);
        }
        assert_eq!(rule("NO-SUCH-RULE"), None);
    }
}
