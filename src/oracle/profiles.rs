//! The profiles: named sets of rules that are off by default, turned on together (`--profile NAME`), and the
//! catalogue rendered as Markdown (each rule with the profiles that hold it, then the profiles).

use super::rules::{ENVELOPE_KEY_NAMED, ERA_SINGLE, Level, MALFORMED_REPLY, RULES, rule};
use crate::protocol::Era;

/// A named set of rules that are off by default, turned on together (`--profile NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The name `--profile` takes.
    pub name: &'static str,
    /// What the profile checks, in one sentence.
    pub description: &'static str,
    /// The rules it turns on.
    pub rules: &'static [&'static str],
}

/// The profiles: `spec` (the default: what every conforming server must do), then the opt-in ones.
pub static PROFILES: &[Profile] = &[
    Profile {
        name: "spec",
        description: "What the specification requires of every conforming server (the default).",
        rules: &[],
    },
    Profile {
        name: "strict-jsonrpc",
        description: "Malformed input gets a -32700 or -32600 reply, as JSON-RPC 2.0 §5.1 says (most SDKs stay silent).",
        rules: &[MALFORMED_REPLY],
    },
    Profile {
        name: "mcp-python-2.3.0",
        description: "The Python SDK 2.3.0's exact behaviours: one era per connection (-32600 for an enveloped request \
                      after initialize, -32022 for initialize after a modern request), -32602 messages that name the \
                      missing envelope keys.",
        rules: &[ERA_SINGLE, ENVELOPE_KEY_NAMED],
    },
];

/// The profile with this name.
pub fn profile(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// The names of the profiles that hold the rule (`spec` for a rule on by default).
pub fn profiles_of(id: &str) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = PROFILES.iter().filter(|p| p.rules.contains(&id)).map(|p| p.name).collect();
    if rule(id).is_some_and(|r| r.enabled_by_default) {
        names.insert(0, "spec");
    }
    names
}

/// The catalogue as a Markdown table (id, level, eras, policy, default, profiles, statement, source), then the
/// profiles.
pub fn render_catalogue() -> String {
    let mut out = String::from("| Rule | Level | Eras | Policy | Default | Profiles | Statement | Source |\n");
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    for rule in RULES {
        let eras = if rule.eras.len() == Era::ALL.len() {
            "both".to_string()
        } else {
            rule.eras.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
            rule.id,
            if rule.level == Level::Error { "MUST" } else { "SHOULD" },
            eras,
            if rule.policy { "yes" } else { "no" },
            if rule.enabled_by_default { "on" } else { "off" },
            profiles_of(rule.id).join(", "),
            rule.statement.replace('|', "\\|"),
            rule.source.replace('|', "\\|"),
        ));
    }
    out.push_str("\n| Profile | Rules | What it checks |\n|---|---|---|\n");
    for profile in PROFILES {
        let rules: Vec<String> = profile.rules.iter().map(|r| format!("`{r}`")).collect();
        let rules = if rules.is_empty() { "every rule on by default".to_string() } else { rules.join(", ") };
        out.push_str(&format!("| `{}` | {} | {} |\n", profile.name, rules, profile.description));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line in docs/src/reference/invariants.md after which the generated table starts.
    const MARKER: &str = "<!-- generated: the table below is render_catalogue() -->\n";

    #[test]
    fn the_table_has_a_row_per_rule() {
        let table = render_catalogue();
        assert_eq!(table.lines().count(), RULES.len() + 2 + 3 + PROFILES.len());
        assert!(
            table.contains("| `JSONRPC-MALFORMED-REPLY` | SHOULD | both | yes | off | strict-jsonrpc |"),
            "{table}"
        );
        assert!(table.contains("| `MCP-PING` | MUST | handshake | no | on | spec |"), "{table}");
        assert!(table.contains("| `JSONRPC-NULL-PARAMS` | SHOULD | both | yes | on | spec |"), "{table}");
        assert!(table.contains("| `MCP-ERA-SINGLE` | MUST | both | yes | off | mcp-python-2.3.0 |"), "{table}");
        assert!(table.contains("| `mcp-python-2.3.0` | `MCP-ERA-SINGLE`, `MCP-ENVELOPE-KEY-NAMED` |"), "{table}");
    }

    /// docs/src/reference/invariants.md (the book's rule catalogue page) is the intro above [`MARKER`] followed by
    /// the rendered table. To regenerate it after changing the catalogue:
    /// `MCP_WIREFUZZ_BLESS=1 cargo test --lib oracle::profiles`.
    #[test]
    fn docs_invariants_md_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/reference/invariants.md");
        let current = std::fs::read_to_string(path).unwrap_or_default();
        let intro = current.split_once(MARKER).map_or("# Invariants\n\n", |(intro, _)| intro);
        let expected = format!("{intro}{MARKER}\n{}", render_catalogue());
        if std::env::var_os("MCP_WIREFUZZ_BLESS").is_some() {
            std::fs::write(path, &expected).unwrap();
            return;
        }
        assert!(
            current == expected,
            "docs/src/reference/invariants.md is stale; regenerate it with \
             `MCP_WIREFUZZ_BLESS=1 cargo test --lib oracle::profiles`"
        );
    }
}
