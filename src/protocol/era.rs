//! The two protocol eras and the versions that belong to each.

use std::fmt;

/// Protocol versions served with the `initialize` handshake, oldest first.
pub const HANDSHAKE_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// Protocol versions served statelessly with the per-request `_meta` envelope.
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];
/// The handshake version a server counter-offers when it does not support the one asked for.
pub const LATEST_HANDSHAKE_VERSION: &str = "2025-11-25";
/// The one version whose connections take JSON-RPC batches (2025-06-18 removed them).
pub const BATCH_VERSION: &str = "2025-03-26";
/// The newest modern version.
pub const LATEST_MODERN_VERSION: &str = "2026-07-28";

/// How a connection speaks, fixed by its first request and held to its last message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary)]
pub enum Era {
    /// `initialize`, `notifications/initialized`, then plain requests (versions up to 2025-11-25).
    Handshake,
    /// No handshake; every request carries the `_meta` envelope (2026-07-28).
    Modern,
}

impl Era {
    /// Both eras, handshake first.
    pub const ALL: [Era; 2] = [Era::Handshake, Era::Modern];

    /// The era a version string belongs to, or `None` for a string that names no known version.
    pub fn of_version(version: &str) -> Option<Era> {
        if HANDSHAKE_VERSIONS.contains(&version) {
            Some(Era::Handshake)
        } else if MODERN_VERSIONS.contains(&version) {
            Some(Era::Modern)
        } else {
            None
        }
    }

    /// The versions of this era.
    pub fn versions(self) -> &'static [&'static str] {
        match self {
            Era::Handshake => &HANDSHAKE_VERSIONS,
            Era::Modern => &MODERN_VERSIONS,
        }
    }

    /// A short lowercase name: `handshake` or `modern`.
    pub fn name(self) -> &'static str {
        match self {
            Era::Handshake => "handshake",
            Era::Modern => "modern",
        }
    }

    /// Parses [`Era::name`] back.
    pub fn from_name(name: &str) -> Option<Era> {
        Era::ALL.into_iter().find(|era| era.name() == name)
    }
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_belong_to_one_era() {
        assert_eq!(Era::of_version("2025-11-25"), Some(Era::Handshake));
        assert_eq!(Era::of_version("2024-11-05"), Some(Era::Handshake));
        assert_eq!(Era::of_version("2026-07-28"), Some(Era::Modern));
        assert_eq!(Era::of_version("2026-7-28"), None);
        assert_eq!(Era::of_version(""), None);
        for era in Era::ALL {
            assert_eq!(Era::from_name(era.name()), Some(era));
        }
    }
}
