//! Reports of a campaign: for people on a terminal, and as JSON, JUnit XML and SARIF for tools.

pub mod coverage;
pub mod human;
pub mod json;
pub mod junit;
pub mod sarif;
pub mod wire;

use crate::campaign::Found;
use crate::server::ServerSpec;

/// How the campaign ran, as far as a command that reproduces one of its findings must say: the server, and the
/// options that change what a run sends or how it judges.
#[derive(Clone, Debug)]
pub struct Rerun<'a> {
    /// The campaign's seed.
    pub seed: u64,
    /// The server the campaign ran.
    pub server: &'a ServerSpec,
    /// Options a replay of a case file must repeat (the reply timeout: a case file does not carry it).
    pub replay: Vec<String>,
    /// Options the campaign narrowed to one conversation must repeat: the timeouts, the rules, the eras and the
    /// tools, which change the conversations generated or their verdicts.
    pub fuzz: Vec<String>,
    /// The SDK the run told its known deviations apart for, and how it was chosen.
    pub sdk: Option<crate::sdk::Chosen>,
}

impl<'a> Rerun<'a> {
    /// A campaign run with the default options.
    pub fn new(seed: u64, server: &'a ServerSpec) -> Rerun<'a> {
        Rerun { seed, server, replay: Vec::new(), fuzz: Vec::new(), sdk: None }
    }

    /// The one command that reproduces a finding: a replay of its case file when one was written, else the
    /// campaign narrowed to the conversation that found it.
    pub fn command(&self, found: &Found) -> String {
        let words = |command: &mut String, words: &[String]| {
            for word in words {
                command.push(' ');
                command.push_str(&shell_word(word));
            }
        };
        if let Some(path) = &found.case_file {
            let mut command = format!("mcp-wirefuzz replay {}", shell_word(&path.display().to_string()));
            words(&mut command, &self.replay);
            return command;
        }
        let mut command = format!("mcp-wirefuzz fuzz --seed {} --cases {}", self.seed, found.conversation + 1);
        words(&mut command, &self.fuzz);
        match self.server {
            ServerSpec::BuiltIn => {}
            ServerSpec::Mutant(mutant) => command.push_str(&format!(" --mutant {mutant}")),
            ServerSpec::Http(spec) => {
                command.push_str(&format!(" --url {}", shell_word(&spec.endpoint.url())));
                if let Some(child) = &spec.command {
                    command.push_str(" --");
                    words(&mut command, &child.argv());
                }
            }
            ServerSpec::Command(child) => {
                command.push_str(" --");
                words(&mut command, &child.argv());
            }
        }
        command
    }
}

/// Quotes a word for a POSIX shell when it needs it (for commands printed to copy, never run by the harness).
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:@+,".contains(&b));
    if plain { word.to_string() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(case_file: Option<&str>) -> Found {
        let finding = crate::oracle::Finding {
            rule: "JSONRPC-ID-ECHO",
            level: crate::oracle::Level::Error,
            event: Some(1),
            detail: String::new(),
        };
        Found {
            finding,
            trigger: String::new(),
            conversation: 6,
            case: crate::case::Case::default(),
            transcript: crate::transcript::Transcript { events: Vec::new(), ending: crate::transcript::Ending::Closed },
            case_file: case_file.map(Into::into),
            confirmation: crate::campaign::Confirmation::Confirmed { stretched: None },
            minimized: true,
            estimate: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn a_reproduction_command_repeats_the_options_that_change_the_run() {
        let argv = ["python3".to_string(), "my server.py".to_string()];
        let server = ServerSpec::Command(crate::server::ServerCommand::from_argv(&argv).unwrap());
        let plain = Rerun::new(42, &server);
        assert_eq!(plain.command(&found(Some("out/a.case"))), "mcp-wirefuzz replay out/a.case");
        assert_eq!(plain.command(&found(None)), "mcp-wirefuzz fuzz --seed 42 --cases 7 -- python3 'my server.py'");
        let rerun = Rerun {
            replay: vec!["--timeout".into(), "5000".into()],
            fuzz: vec!["--timeout".into(), "5000".into(), "--skip-tool".into(), "slow one".into()],
            ..plain
        };
        assert_eq!(rerun.command(&found(Some("out/a.case"))), "mcp-wirefuzz replay out/a.case --timeout 5000");
        assert_eq!(
            rerun.command(&found(None)),
            "mcp-wirefuzz fuzz --seed 42 --cases 7 --timeout 5000 --skip-tool 'slow one' -- python3 'my server.py'"
        );
        let mutant = ServerSpec::Mutant(crate::server::builtin::mutants::Mutant::ALL[0]);
        let command = Rerun::new(1, &mutant).command(&found(None));
        assert_eq!(
            command,
            format!(
                "mcp-wirefuzz fuzz --seed 1 --cases 7 --mutant {}",
                crate::server::builtin::mutants::Mutant::ALL[0]
            )
        );
    }

    #[test]
    fn every_format_reports_the_sdks_deviations_apart_and_none_fails() {
        use crate::campaign::{SdkFound, Summary};
        let deviation = &crate::sdk::rmcp::SDK.deviations[3];
        let summary = Summary {
            seed: 1,
            conversations: 9,
            elapsed: std::time::Duration::ZERO,
            fuzzed: std::time::Duration::ZERO,
            shrink_time: std::time::Duration::ZERO,
            found: Vec::new(),
            counts: Default::default(),
            trigger_counts: Default::default(),
            coverage: Default::default(),
            sdk: vec![SdkFound { deviation, found: found(None), conversations: 4 }],
            strict: false,
        };
        let baseline = crate::baseline::Baseline::default();
        assert!(!summary.fails(&baseline));
        let server = ServerSpec::BuiltIn;
        let chosen = crate::sdk::Chosen { sdk: &crate::sdk::rmcp::SDK, source: crate::sdk::Source::Stated };
        let rerun = Rerun { sdk: Some(chosen), ..Rerun::new(1, &server) };
        let human = human::summary(&summary, &baseline);
        assert!(human.contains("no findings") && human.contains("your SDK's known deviations (1"), "{human}");
        assert!(human.contains(deviation.rule) && human.contains(deviation.reference), "{human}");
        let json = json::report(&summary, &rerun, &baseline);
        assert_eq!(json["findings"].as_array().map(Vec::len), Some(0));
        assert_eq!(json["sdk"]["name"], "rmcp");
        assert_eq!(json["sdk_deviations"][0]["reference"], deviation.reference);
        assert_eq!(json["sdk_deviations"][0]["conversations"], 4);
        let policy = crate::oracle::Policy::default();
        let junit = junit::report(&summary, &rerun, &policy, &baseline);
        assert!(junit.contains("failures=\"0\" skipped=\"1\"") && junit.contains("mcp-wirefuzz.sdk"), "{junit}");
        let sarif = sarif::report(&summary, &rerun, &policy, &baseline);
        let result = &sarif["runs"][0]["results"][0];
        assert_eq!(result["ruleId"], deviation.rule);
        assert!(result["suppressions"][0]["justification"].as_str().unwrap().contains(deviation.reference));
    }

    #[test]
    fn words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("tests/servers/calc.py"), "tests/servers/calc.py");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
