//! The [`Policy`] of a run: which rules are on (defaults, `--allow`, `--deny`, profiles), the modern versions the
//! server is expected to support, and the server model and surface the oracle judges with.

use super::profiles::{PROFILES, profile};
use super::rules::rule;
use crate::model::ServerModel;
use crate::protocol::era::MODERN_VERSIONS;
use crate::surface::Surface;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// An id that names no rule of the catalogue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownRule(
    /// The id that was asked for.
    pub String,
);

impl fmt::Display for UnknownRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no rule has the id {:?} (see docs/src/reference/invariants.md)", self.0)
    }
}

impl std::error::Error for UnknownRule {}

/// A name that names no profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownProfile(
    /// The name that was asked for.
    pub String,
);

impl fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
        write!(f, "no profile is named {:?} (profiles: {})", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownProfile {}

/// Which rules a run checks, and what the server under test is expected to support.
///
/// The words follow linters: [`Policy::allow`] lets the behaviour a rule forbids (turns the rule off),
/// [`Policy::deny`] forbids it (turns the rule on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    overrides: BTreeMap<&'static str, bool>,
    supported_versions: Vec<String>,
    model: Option<ServerModel>,
    surface: Option<Arc<Surface>>,
    sdk: Option<&'static str>,
}

impl Default for Policy {
    /// Every rule at its default, modern versions as [`MODERN_VERSIONS`].
    fn default() -> Policy {
        Policy {
            overrides: BTreeMap::new(),
            supported_versions: MODERN_VERSIONS.iter().map(|v| v.to_string()).collect(),
            model: None,
            surface: None,
            sdk: None,
        }
    }
}

impl Policy {
    /// Turns the rule off: the behaviour it forbids is accepted.
    pub fn allow(self, id: &str) -> Result<Policy, UnknownRule> {
        self.set(id, false)
    }

    /// Turns the rule on.
    pub fn deny(self, id: &str) -> Result<Policy, UnknownRule> {
        self.set(id, true)
    }

    fn set(mut self, id: &str, enabled: bool) -> Result<Policy, UnknownRule> {
        let rule = rule(id).ok_or_else(|| UnknownRule(id.to_string()))?;
        self.overrides.insert(rule.id, enabled);
        Ok(self)
    }

    /// Turns on every rule of the profile ([`PROFILES`]).
    pub fn with_profile(mut self, name: &str) -> Result<Policy, UnknownProfile> {
        let profile = profile(name).ok_or_else(|| UnknownProfile(name.to_string()))?;
        for rule in profile.rules {
            self.overrides.insert(rule, true);
        }
        Ok(self)
    }

    /// Judges with what is known of the server: the eras it serves and the versions it names. Without a model the
    /// oracle infers from each transcript whether the server serves 2026-07-28.
    pub fn with_model(mut self, model: ServerModel) -> Policy {
        self.model = Some(model);
        self
    }

    /// Judges tool calls, prompt gets, resource reads and lists with what the server listed. Without a surface the
    /// surface rules do not judge.
    pub fn with_surface(mut self, surface: Arc<Surface>) -> Policy {
        self.surface = Some(surface);
        self
    }

    /// Names the SDK the server is written with (a name of `crate::sdk::SDKS`): the oracle judges as before, and
    /// the entry points that report take a finding matching one of that SDK's known deviations for the SDK's.
    pub fn with_sdk(mut self, name: &'static str) -> Policy {
        self.sdk = Some(name);
        self
    }

    /// The SDK the server is written with, when one was named.
    pub fn sdk(&self) -> Option<&'static str> {
        self.sdk
    }

    /// The server's surface, when one was given.
    pub fn surface(&self) -> Option<&Arc<Surface>> {
        self.surface.as_ref()
    }

    /// The server model, when one was given.
    pub fn model(&self) -> Option<&ServerModel> {
        self.model.as_ref()
    }

    /// The modern protocol versions the server is expected to support (an enveloped request for any other gets
    /// -32022).
    pub fn with_supported_versions<S: Into<String>>(mut self, versions: impl IntoIterator<Item = S>) -> Policy {
        self.supported_versions = versions.into_iter().map(Into::into).collect();
        self
    }

    /// The modern protocol versions the server is expected to support.
    pub fn supported_versions(&self) -> &[String] {
        &self.supported_versions
    }

    /// Whether the rule is checked (false for an unknown id).
    pub fn enabled(&self, id: &str) -> bool {
        match rule(id) {
            Some(rule) => self.overrides.get(rule.id).copied().unwrap_or(rule.enabled_by_default),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::profiles::profiles_of;
    use crate::oracle::rules::{ENVELOPE_KEY_NAMED, ERA_SINGLE, MALFORMED_REPLY, NULL_PARAMS, PING};

    #[test]
    fn policy_overrides_defaults_and_refuses_unknown_ids() {
        let default = Policy::default();
        assert!(!default.enabled(ERA_SINGLE));
        assert!(default.enabled(NULL_PARAMS));
        assert!(!default.clone().allow(NULL_PARAMS).unwrap().enabled(NULL_PARAMS));
        assert!(!default.enabled(MALFORMED_REPLY));
        let strict =
            default.clone().deny(MALFORMED_REPLY).unwrap().deny(ERA_SINGLE).unwrap().allow(ERA_SINGLE).unwrap();
        assert!(strict.enabled(MALFORMED_REPLY));
        assert!(!strict.enabled(ERA_SINGLE));
        assert_eq!(default.clone().allow("JSONRPC-NOPE"), Err(UnknownRule("JSONRPC-NOPE".into())));
        assert!(default.deny("").is_err());
        assert!(!Policy::default().enabled("JSONRPC-NOPE"));
        let versions = Policy::default().with_supported_versions(["2026-07-28", "2027-01-01"]);
        assert_eq!(versions.supported_versions(), ["2026-07-28", "2027-01-01"]);
        assert_eq!(Policy::default().supported_versions(), MODERN_VERSIONS);
    }

    #[test]
    fn profiles_turn_their_rules_on_and_name_only_known_rules() {
        for profile in PROFILES {
            assert!(profile.rules.iter().all(|id| rule(id).is_some_and(|r| !r.enabled_by_default)), "{}", profile.name);
            let policy = Policy::default().with_profile(profile.name).unwrap();
            assert!(profile.rules.iter().all(|id| policy.enabled(id)), "{}", profile.name);
        }
        assert_eq!(Policy::default().with_profile("spec").unwrap(), Policy::default());
        let python = Policy::default().with_profile("mcp-python-2.3.0").unwrap();
        assert!(python.enabled(ERA_SINGLE) && python.enabled(ENVELOPE_KEY_NAMED) && !python.enabled(MALFORMED_REPLY));
        assert!(!python.allow(ERA_SINGLE).unwrap().enabled(ERA_SINGLE), "--allow overrides a profile");
        assert_eq!(Policy::default().with_profile("nope"), Err(UnknownProfile("nope".into())));
        assert_eq!(profiles_of(MALFORMED_REPLY), ["strict-jsonrpc"]);
        assert_eq!(profiles_of(PING), ["spec"]);
    }
}
