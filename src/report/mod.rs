//! Reports of a campaign: for people on a terminal, and as JSON, JUnit XML and SARIF for tools.

pub mod coverage;
pub mod human;
pub mod json;
pub mod junit;
pub mod sarif;
pub mod wire;

use crate::campaign::Found;
use crate::server::ServerSpec;

/// The one command that reproduces a finding: a replay of its case file when one was written, else the campaign
/// narrowed to the conversation that found it.
pub fn reproduce_command(found: &Found, seed: u64, server: &ServerSpec) -> String {
    if let Some(path) = &found.case_file {
        return format!("mcp-wirefuzz replay {}", shell_word(&path.display().to_string()));
    }
    let mut command = format!("mcp-wirefuzz fuzz --seed {seed} --cases {}", found.conversation + 1);
    match server {
        ServerSpec::BuiltIn => {}
        ServerSpec::Mutant(mutant) => command.push_str(&format!(" --mutant {mutant}")),
        ServerSpec::Http(spec) => {
            command.push_str(&format!(" --url {}", shell_word(&spec.endpoint.url())));
            if let Some(child) = &spec.command {
                command.push_str(" --");
                for word in child.argv() {
                    command.push(' ');
                    command.push_str(&shell_word(&word));
                }
            }
        }
        ServerSpec::Command(child) => {
            command.push_str(" --");
            for word in child.argv() {
                command.push(' ');
                command.push_str(&shell_word(&word));
            }
        }
    }
    command
}

/// Quotes a word for a POSIX shell when it needs it (for commands printed to copy, never run by the harness).
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:@+,".contains(&b));
    if plain { word.to_string() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("tests/servers/calc.py"), "tests/servers/calc.py");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
