//! The server model: which protocol eras the server under test serves, the versions it names and its name. The
//! oracle judges every conversation with it (through [`crate::oracle::Policy::with_model`]): modern-era rules apply
//! only to a server that serves 2026-07-28.
//!
//! It is data only: learned once per run by the probe ([`crate::learn::probe`]), or stated with `--eras`; the
//! built-in server's model is [`ServerModel::built_in`].

use crate::protocol::Era;
use crate::protocol::era::{HANDSHAKE_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_VERSIONS};
use serde_json::{Value, json};
use std::fmt;

/// The name in `serverInfo` of the seed lesson's calc server, which the built-in server is.
pub const SERVER_NAME: &str = "calc";
/// The version in `serverInfo` of the seed lesson's calc server (empty, as in the lesson).
pub const SERVER_VERSION: &str = "";

/// Which eras a server serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eras {
    /// Only the `initialize` handshake (versions up to 2025-11-25); an enveloped request is a legacy request whose
    /// `_meta` is ordinary metadata.
    Handshake,
    /// Only 2026-07-28.
    Modern,
    /// Both, locking per process or serving them side by side.
    Dual,
    /// Neither probe was answered: each conversation shows what the server serves (see the oracle's inference).
    Unknown,
}

impl Eras {
    /// The names `--eras` takes.
    pub const STATED: [Eras; 3] = [Eras::Handshake, Eras::Modern, Eras::Dual];

    /// `handshake`, `modern`, `dual` or `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            Eras::Handshake => "handshake",
            Eras::Modern => "modern",
            Eras::Dual => "dual",
            Eras::Unknown => "unknown",
        }
    }

    /// Parses a name `--eras` takes ([`Eras::STATED`]).
    pub fn from_name(name: &str) -> Option<Eras> {
        Eras::STATED.into_iter().find(|eras| eras.name() == name)
    }

    /// Whether the server serves `era`: `None` when that is not known.
    pub fn serves(self, era: Era) -> Option<bool> {
        match (self, era) {
            (Eras::Unknown, _) => None,
            (Eras::Dual, _) | (Eras::Handshake, Era::Handshake) | (Eras::Modern, Era::Modern) => Some(true),
            _ => Some(false),
        }
    }

    /// The eras of a server that serves the modern era or not, the handshake era or not.
    pub fn of(modern: bool, handshake: bool) -> Eras {
        match (modern, handshake) {
            (true, true) => Eras::Dual,
            (true, false) => Eras::Modern,
            (false, true) => Eras::Handshake,
            (false, false) => Eras::Unknown,
        }
    }
}

/// How the model was learned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// By the probe ([`crate::learn::probe::probe`]).
    Probed,
    /// Stated by the user (`--eras`, a case file's `eras:`).
    Stated,
    /// The built-in server, known without a probe.
    BuiltIn,
}

/// What the harness knows of the server under test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerModel {
    /// The eras it serves.
    pub eras: Eras,
    /// Every protocol version it named: `server/discover` supportedVersions and -32022 `data.supported`.
    pub versions: Vec<String>,
    /// The version its `initialize` result answered, when it was probed.
    pub handshake_version: Option<String>,
    /// Its `serverInfo.name` (from `initialize`, or the `server/discover` result's serverInfo stamp).
    pub name: Option<String>,
    /// Its `serverInfo.version`, from the same place as the name.
    pub server_version: Option<String>,
    /// How the model was learned.
    pub source: Source,
}

impl ServerModel {
    /// A model stated by the user: the eras, nothing named.
    pub fn stated(eras: Eras) -> ServerModel {
        ServerModel {
            eras,
            versions: Vec::new(),
            handshake_version: None,
            name: None,
            server_version: None,
            source: Source::Stated,
        }
    }

    /// The built-in server "calc": dual-era, 2026-07-28 and every handshake version.
    pub fn built_in() -> ServerModel {
        ServerModel {
            eras: Eras::Dual,
            versions: MODERN_VERSIONS.iter().map(|v| v.to_string()).collect(),
            handshake_version: Some(LATEST_HANDSHAKE_VERSION.to_string()),
            name: Some(SERVER_NAME.to_string()),
            server_version: Some(SERVER_VERSION.to_string()),
            source: Source::BuiltIn,
        }
    }

    /// True when the server is the calc server the seed transcripts pin exactly: serverInfo name `calc` and
    /// version `""`, and 2026-07-28 the only version it names (rmcp-calc and the TypeScript calc servers name
    /// themselves calc too but differ in version or supported versions, where the spec lets them).
    pub fn is_seed_calc(&self) -> bool {
        self.name.as_deref() == Some(SERVER_NAME)
            && self.server_version.as_deref() == Some(SERVER_VERSION)
            && self.versions == MODERN_VERSIONS
    }

    /// Whether the server serves `era` (`None`: not known, the oracle infers it from each conversation).
    pub fn serves(&self, era: Era) -> Option<bool> {
        self.eras.serves(era)
    }

    /// The model as a JSON object (for the JSON and SARIF reports).
    pub fn to_json(&self) -> Value {
        json!({
            "eras": self.eras.name(),
            "versions": self.versions,
            "handshake_version": self.handshake_version,
            "name": self.name,
            "server_version": self.server_version,
            "source": self.source_name(),
        })
    }

    /// `probed`, `stated` or `built-in`.
    pub fn source_name(&self) -> &'static str {
        match self.source {
            Source::Probed => "probed",
            Source::Stated => "stated",
            Source::BuiltIn => "built-in",
        }
    }

    /// The handshake versions known to be served: those named, and the one `initialize` answered.
    fn handshake_versions(&self) -> Vec<&str> {
        let named = self.versions.iter().map(String::as_str).chain(self.handshake_version.as_deref());
        let mut versions: Vec<&str> = named.filter(|v| Era::of_version(v) == Some(Era::Handshake)).collect();
        if self.source == Source::BuiltIn {
            versions.extend(HANDSHAKE_VERSIONS);
        }
        versions.sort_unstable();
        versions.dedup();
        versions
    }
}

impl fmt::Display for ServerModel {
    /// `dual-era (2026-07-28; handshake 2024-11-05..2025-11-25), name calc, probed`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.eras {
            Eras::Handshake => "handshake-only",
            Eras::Modern => "modern-only",
            Eras::Dual => "dual-era",
            Eras::Unknown => "eras unknown (neither probe answered; judged per conversation)",
        };
        f.write_str(what)?;
        let modern: Vec<&str> =
            self.versions.iter().map(String::as_str).filter(|v| Era::of_version(v) != Some(Era::Handshake)).collect();
        let handshake = self.handshake_versions();
        let mut parts = Vec::new();
        if !modern.is_empty() {
            parts.push(modern.join(", "));
        }
        match handshake.as_slice() {
            [] => {}
            [one] => parts.push(format!("handshake {one}")),
            [first, .., last] => parts.push(format!("handshake {first}..{last}")),
        }
        if !parts.is_empty() {
            write!(f, " ({})", parts.join("; "))?;
        }
        if let Some(name) = &self.name {
            write!(f, ", name {name}")?;
        }
        write!(f, ", {}", self.source_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stated_models_serve_what_they_say() {
        for eras in Eras::STATED {
            assert_eq!(Eras::from_name(eras.name()), Some(eras));
            let model = ServerModel::stated(eras);
            assert_eq!(model.serves(Era::Modern), Some(eras != Eras::Handshake));
            assert_eq!(model.serves(Era::Handshake), Some(eras != Eras::Modern));
        }
        assert_eq!(Eras::from_name("unknown"), None);
        assert_eq!(ServerModel::stated(Eras::Handshake).to_string(), "handshake-only, stated");
    }
}
