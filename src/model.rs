//! The server model: which protocol eras the server under test serves, the versions it names, the handshake versions
//! its `initialize` accepts and its name. The oracle judges every conversation with it (through
//! [`crate::oracle::Policy::with_model`]): modern-era rules apply only to a server that serves 2026-07-28, and an
//! `initialize` must echo a version the server accepts.
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
    /// The version the probe's first `initialize` result answered (the one at 2025-11-25, when that got a result).
    pub handshake_version: Option<String>,
    /// The handshake versions its `initialize` accepts (answers with the version asked for), oldest first; empty
    /// when that is not known (a model stated with `--eras`, or a server that echoed no `initialize`).
    pub accepted: Vec<String>,
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
            accepted: Vec::new(),
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
            accepted: HANDSHAKE_VERSIONS.iter().map(|v| v.to_string()).collect(),
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

    /// Whether the server's `initialize` accepts the handshake version `version` (answers with it): `None` when the
    /// model does not say which versions it accepts.
    pub fn accepts(&self, version: &str) -> Option<bool> {
        match self.accepted.is_empty() {
            true => None,
            false => Some(self.accepted.iter().any(|accepted| accepted == version)),
        }
    }

    /// The model as a JSON object (for the JSON and SARIF reports).
    pub fn to_json(&self) -> Value {
        json!({
            "eras": self.eras.name(),
            "versions": self.versions,
            "handshake_version": self.handshake_version,
            "accepted": self.accepted,
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

    /// The handshake versions shown: those `initialize` accepts when that is known, else those named and the one
    /// `initialize` answered; oldest first.
    fn handshake_versions(&self) -> Vec<&str> {
        if !self.accepted.is_empty() {
            return self.accepted.iter().map(String::as_str).collect();
        }
        let named = self.versions.iter().map(String::as_str).chain(self.handshake_version.as_deref());
        HANDSHAKE_VERSIONS.into_iter().filter(|known| named.clone().any(|v| v == *known)).collect()
    }
}

impl fmt::Display for ServerModel {
    /// `dual-era (2026-07-28; handshake 2024-11-05..2025-11-25), name calc, probed`: the handshake versions are
    /// those `initialize` accepts when that is known (a run of consecutive versions as `first..last`, others listed).
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
            run @ [first, .., last] if HANDSHAKE_VERSIONS.windows(run.len()).any(|known| known == run) => {
                parts.push(format!("handshake {first}..{last}"))
            }
            versions => parts.push(format!("handshake {}", versions.join(", "))),
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
        assert_eq!(ServerModel::stated(Eras::Dual).accepts("2025-11-25"), None);
    }

    #[test]
    fn the_versions_initialize_accepts_are_shown() {
        let accepted = |versions: &[&str]| ServerModel {
            versions: vec!["2026-07-28".into(), "2024-11-05".into()],
            accepted: versions.iter().map(|v| v.to_string()).collect(),
            ..ServerModel::stated(Eras::Dual)
        };
        // Without them, the handshake versions the server names.
        assert_eq!(accepted(&[]).to_string(), "dual-era (2026-07-28; handshake 2024-11-05), stated");
        let gap = accepted(&["2024-11-05", "2025-11-25"]);
        assert_eq!(gap.to_string(), "dual-era (2026-07-28; handshake 2024-11-05, 2025-11-25), stated");
        assert_eq!((gap.accepts("2025-11-25"), gap.accepts("2025-06-18")), (Some(true), Some(false)));
        assert_eq!(gap.to_json()["accepted"], json!(["2024-11-05", "2025-11-25"]));
        let run = accepted(&["2025-03-26", "2025-06-18", "2025-11-25"]);
        assert_eq!(run.to_string(), "dual-era (2026-07-28; handshake 2025-03-26..2025-11-25), stated");
        assert_eq!(ServerModel::built_in().accepted, HANDSHAKE_VERSIONS);
    }
}
