//! The case-file format: a regression case a person can read and edit. One line per frame sent, kept raw so
//! malformed bytes survive; the expected outcome; the server it was found on; the era. It does not depend on a
//! generator's seed, so it stays valid when generators change.
//!
//! ```text
//! # mcp-wirefuzz case
//! frames: 3
//! title: integer ids come back as strings
//! era: modern
//! mutant: id-as-string
//! expect: JSONRPC-ID-ECHO
//! trigger: tools/list+envelope
//! >> {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{...}}}
//! --
//! >>hex 7b6e6f74206a736f6e0d
//! # << {"jsonrpc":"2.0","id":"1","result":{...}}
//! ```
//!
//! `frames: N` (written by the harness; optional in hand-written files) counts the `>>`, `>>hex` and `--` lines that
//! follow: a file with another number of them, or whose last line has no newline, was cut short (or edited without
//! updating the count) and is refused rather than replayed as a different conversation. `>> TEXT` sends TEXT exactly (everything after the first three characters); `>>hex HEX` sends bytes that are not
//! printable UTF-8 or that carry leading or trailing white space; `--` is a sync point; `#` starts a comment (the
//! `# <<` comments show what the server answered when the case was written; they are not checked). `expect:` is
//! `clean` or a comma-separated list of rule ids (each one the catalogue knows) that must fire on the case's server (`mutant:`, `command:` as a
//! JSON array of strings, or the built-in server when neither is given); `allow:` lists policy rules turned off
//! when the case is checked. `trigger:` (optional) names what set the finding off ([`crate::trigger`]): `shrink`
//! keeps it, so the case stays about the same bug. `eras:` and `accepts:` (optional) are the server model the case
//! was judged with: the eras the server serves and the handshake versions its `initialize` accepts.

use crate::model::{Eras, ServerModel, Source};
use crate::oracle::{Finding, Policy, RULES};
use crate::protocol::envelope::opening_era;
use crate::protocol::era::HANDSHAKE_VERSIONS;
use crate::protocol::{Era, Frame};
use crate::server::builtin::mutants::Mutant;
use crate::server::{ServerCommand, ServerSpec};
use crate::transcript::{Ending, Input, Transcript};
use anyhow::{Context, Result, bail};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The first line of every case file.
pub const MAGIC: &str = "# mcp-wirefuzz case";

/// One regression case.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Case {
    /// A one-line title.
    pub title: Option<String>,
    /// The era of the connection, when known.
    pub era: Option<Era>,
    /// The eras the server serves, when the run that found the case probed or was told them (`eras:`); replay
    /// judges with that model. Cases without it are judged as before (the built-in server's model for the
    /// built-in server and its mutants, inference from the transcript otherwise).
    pub eras: Option<Eras>,
    /// The handshake versions the server's `initialize` accepts, when the model recorded with `eras:` says
    /// (`accepts:`, comma-separated); replay judges version negotiation with them.
    pub accepts: Vec<String>,
    /// The planted bug the case was found on, if any.
    pub mutant: Option<Mutant>,
    /// The server command the case was found on, if any (program and arguments).
    pub command: Option<Vec<String>>,
    /// The MCP endpoint, when the case was found over Streamable HTTP (`url:`; `command:` then starts it).
    pub url: Option<String>,
    /// Rule ids that must fire on the case's server; empty means the case must run clean.
    pub expect: Vec<String>,
    /// The trigger of the finding the case was written for ([`crate::trigger::signature`]), when known.
    pub trigger: Option<String>,
    /// Rules turned off when the case is checked (e.g. MCP-ERA-SINGLE for a dual-era server).
    pub allow: Vec<String>,
    /// Rules turned on when the case is checked (e.g. JSONRPC-MALFORMED-REPLY for strict JSON-RPC).
    pub deny: Vec<String>,
    /// The frames to send, in order.
    pub inputs: Vec<Input>,
    /// What the server answered when the case was written (shown as comments, not checked).
    pub received: Vec<Vec<u8>>,
    /// Over HTTP, every exchange when the case was written: method, status, headers (comments, not checked).
    pub exchanges: Vec<String>,
}

impl Case {
    /// Parses a case file; errors name the line.
    pub fn parse(text: &str) -> Result<Case> {
        let mut case = Case::default();
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, first)) if first.trim_end() == MAGIC => {}
            _ => bail!("line 1: a case file starts with `{MAGIC}`"),
        }
        let mut expect_seen = false;
        let mut frames = None;
        for (index, line) in lines {
            let at = || format!("line {}", index + 1);
            if let Some(text) = line.strip_prefix(">> ") {
                case.inputs.push(Input::Line(text.as_bytes().to_vec()));
            } else if line == ">>" {
                case.inputs.push(Input::Line(Vec::new()));
            } else if let Some(hex) = line.strip_prefix(">>hex ") {
                case.inputs.push(Input::Line(from_hex(hex.trim()).with_context(at)?));
            } else if line.trim_end() == "--" {
                case.inputs.push(Input::Sync);
            } else if let Some(reply) = line.strip_prefix("# << ") {
                case.received.push(reply.as_bytes().to_vec());
            } else if let Some(exchange) = line.strip_prefix("# ht ") {
                case.exchanges.push(exchange.to_string());
            } else if line.starts_with('#') || line.trim().is_empty() {
                continue;
            } else if let Some((key, value)) = line.split_once(':') {
                let value = value.trim();
                match key.trim() {
                    "title" => case.title = Some(value.to_string()),
                    "era" => {
                        case.era =
                            Some(Era::from_name(value).with_context(|| format!("{}: unknown era `{value}`", at()))?)
                    }
                    "eras" => {
                        case.eras =
                            Some(Eras::from_name(value).with_context(|| format!("{}: unknown eras `{value}`", at()))?)
                    }
                    "accepts" => case.accepts = handshake_versions(value).with_context(at)?,
                    "mutant" => {
                        case.mutant = Some(
                            Mutant::from_name(value).with_context(|| format!("{}: unknown mutant `{value}`", at()))?,
                        )
                    }
                    "command" => {
                        let argv: Vec<String> = serde_json::from_str(value)
                            .with_context(|| format!("{}: command must be a JSON array of strings", at()))?;
                        if argv.is_empty() {
                            bail!("{}: command is empty", at());
                        }
                        case.command = Some(argv);
                    }
                    "url" => {
                        crate::server::transport::http::Endpoint::parse(value).with_context(at)?;
                        case.url = Some(value.to_string());
                    }
                    "trigger" => case.trigger = Some(value.to_string()).filter(|t| !t.is_empty()),
                    "frames" => {
                        let count = value.parse::<usize>();
                        frames = Some(count.with_context(|| format!("{}: `frames:` takes a number", at()))?);
                    }
                    "allow" => case.allow = rule_list(value).with_context(at)?,
                    "deny" => case.deny = rule_list(value).with_context(at)?,
                    "expect" => {
                        expect_seen = true;
                        if value != "clean" {
                            case.expect = rule_list(value).with_context(|| format!("{}: expect", at()))?;
                        }
                    }
                    other => bail!("{}: unknown header `{other}`", at()),
                }
            } else {
                bail!("{}: not a frame (`>> `, `>>hex `, `--`), a header (`key: value`) or a comment", at());
            }
        }
        if !expect_seen {
            bail!("the case has no `expect:` line");
        }
        if let Some(frames) = frames {
            if !text.ends_with('\n') {
                bail!("the case is cut short: its last line has no newline");
            }
            if frames != case.inputs.len() {
                bail!(
                    "the case is cut short: `frames: {frames}` but {} frame line(s) (a file edited by hand needs \
                     its `frames:` count updated)",
                    case.inputs.len()
                );
            }
        }
        if case.mutant.is_some() && (case.command.is_some() || case.url.is_some()) {
            bail!("a case names either a mutant or a command, not both");
        }
        Ok(case)
    }

    /// Renders the case in the file format; `Case::parse(&case.render())` gives the case back.
    pub fn render(&self) -> String {
        let mut out = format!("{MAGIC}\nframes: {}\n", self.inputs.len());
        if let Some(title) = &self.title {
            let _ = writeln!(out, "title: {}", title.replace(['\n', '\r'], " "));
        }
        if let Some(era) = self.era {
            let _ = writeln!(out, "era: {era}");
        }
        if let Some(eras) = self.eras {
            let _ = writeln!(out, "eras: {}", eras.name());
        }
        if !self.accepts.is_empty() {
            let _ = writeln!(out, "accepts: {}", self.accepts.join(", "));
        }
        if let Some(mutant) = self.mutant {
            let _ = writeln!(out, "mutant: {mutant}");
        }
        if let Some(command) = &self.command {
            let _ = writeln!(out, "command: {}", serde_json::to_string(command).unwrap_or_default());
        }
        if let Some(url) = &self.url {
            let _ = writeln!(out, "url: {url}");
        }
        if !self.allow.is_empty() {
            let _ = writeln!(out, "allow: {}", self.allow.join(", "));
        }
        if !self.deny.is_empty() {
            let _ = writeln!(out, "deny: {}", self.deny.join(", "));
        }
        let expect = if self.expect.is_empty() { "clean".to_string() } else { self.expect.join(", ") };
        let _ = writeln!(out, "expect: {expect}");
        if let Some(trigger) = &self.trigger {
            let _ = writeln!(out, "trigger: {}", trigger.replace(['\n', '\r'], " "));
        }
        for input in &self.inputs {
            match input {
                Input::Sync => out.push_str("--\n"),
                Input::Line(bytes) => match std::str::from_utf8(bytes) {
                    Ok(text) if is_plain(text) => {
                        let _ = writeln!(out, ">> {text}");
                    }
                    _ => {
                        let _ = writeln!(out, ">>hex {}", to_hex(bytes));
                    }
                },
            }
        }
        for reply in &self.received {
            let _ = writeln!(out, "# << {}", crate::transcript::show_bytes(reply, 2000));
        }
        for exchange in &self.exchanges {
            let _ = writeln!(out, "# ht {exchange}");
        }
        out
    }

    /// Writes the case into `dir` as `NAME.case` atomically (a temporary file renamed into place), so a reader
    /// never sees half a case; returns the path.
    pub fn save(&self, dir: &Path, name: &str) -> Result<PathBuf> {
        save_text(dir, name, &self.render())
    }

    /// [`Case::save`], with a comment `note` (a line starting with `#`) under the first line.
    pub fn save_noted(&self, dir: &Path, name: &str, note: &str) -> Result<PathBuf> {
        let text = self.render();
        let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
        save_text(dir, name, &format!("{first}\n{note}\n{rest}"))
    }

    /// The case of a finding: its inputs, what the server answered, the rule, the era and the server.
    pub fn for_finding(
        inputs: &[Input],
        transcript: &Transcript,
        finding: &Finding,
        server: &ServerSpec,
        policy: &Policy,
    ) -> Case {
        let differs = |on: bool| -> Vec<String> {
            let rules = RULES.iter().filter(|r| r.enabled_by_default != on && policy.enabled(r.id) == on);
            rules.map(|r| r.id.to_string()).collect()
        };
        let recorded = policy.model().filter(|m| m.source != Source::BuiltIn && Eras::STATED.contains(&m.eras));
        Case {
            title: Some(format!("{}: {}", finding.rule, finding.detail)),
            era: connection_era(inputs),
            eras: recorded.map(|m| m.eras),
            accepts: recorded.map(|m| m.accepted.clone()).unwrap_or_default(),
            mutant: server.mutant(),
            command: match server {
                ServerSpec::Http(spec) => spec.command.as_ref().map(ServerCommand::argv),
                _ => server.command().map(ServerCommand::argv),
            },
            url: match server {
                ServerSpec::Http(spec) => Some(spec.endpoint.url()),
                _ => None,
            },
            expect: vec![finding.rule.to_string()],
            trigger: Some(crate::trigger::signature(transcript, finding)),
            allow: differs(false),
            deny: differs(true),
            inputs: inputs.to_vec(),
            received: transcript.received().map(<[u8]>::to_vec).collect(),
            exchanges: transcript
                .events
                .iter()
                .filter_map(|event| match event {
                    crate::transcript::Event::Http(exchange) => Some(exchange.detail()),
                    _ => None,
                })
                .collect(),
        }
    }

    /// The policy the case is checked under: the server model (`eras:` and `accepts:`, or the built-in server's for
    /// the built-in server and its mutants), the default rules with the case's `allow:` rules off and `deny:` rules
    /// on, and the rules it expects on (so a case found under a profile, or before a rule went off by default, still
    /// checks its rule).
    pub fn policy(&self) -> Policy {
        let base = match (self.eras, self.command.is_some() || self.url.is_some()) {
            (Some(eras), _) => Policy::default()
                .with_model(ServerModel { accepted: self.accepts.clone(), ..ServerModel::stated(eras) }),
            (None, false) => Policy::default().with_model(ServerModel::built_in()),
            (None, true) => Policy::default(),
        };
        let allowed = self.allow.iter().fold(base, |p, rule| p.clone().allow(rule).unwrap_or(p));
        let denied = self.deny.iter().fold(allowed, |p, rule| p.clone().deny(rule).unwrap_or(p));
        self.expect.iter().fold(denied, |p, rule| p.clone().deny(rule).unwrap_or(p))
    }

    /// The server the case was found on: its mutant, its command, or the built-in server.
    pub fn server(&self) -> ServerSpec {
        if let Some(url) = &self.url {
            let command = self.command.as_deref().and_then(|argv| ServerCommand::from_argv(argv).ok());
            if let Ok(spec) = crate::server::transport::http::HttpSpec::new(url, command) {
                return ServerSpec::Http(spec);
            }
        }
        match (&self.mutant, &self.command) {
            (Some(mutant), _) => ServerSpec::Mutant(*mutant),
            (None, Some(argv)) => match ServerCommand::from_argv(argv) {
                Ok(command) => ServerSpec::Command(command),
                Err(_) => ServerSpec::BuiltIn,
            },
            (None, None) => ServerSpec::BuiltIn,
        }
    }

    /// Reads a case file.
    pub fn load(path: &Path) -> Result<Case> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Case::parse(&text).with_context(|| format!("{}", path.display()))
    }
}

/// Writes `text` into `dir` as `NAME.case` atomically: a temporary file, synced, then renamed into place.
pub(crate) fn save_text(dir: &Path, name: &str, text: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(format!("{name}.case"));
    let temporary = dir.join(format!(".{name}.case.tmp"));
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(&temporary)?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        file.sync_all()
    };
    write().with_context(|| format!("cannot write {}", temporary.display()))?;
    std::fs::rename(&temporary, &path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The era the first request of a conversation opens (`None` when it sends no request).
pub fn connection_era(inputs: &[Input]) -> Option<Era> {
    inputs.iter().find_map(|input| match input {
        Input::Line(line) => match Frame::parse(line) {
            Frame::Request(request) => Some(opening_era(&request.method, request.params.as_ref())),
            _ => None,
        },
        Input::Sync => None,
    })
}

/// A comma-separated list of rule ids, each checked against the catalogue.
fn rule_list(value: &str) -> Result<Vec<String>> {
    let rules: Vec<String> = value.split(',').map(|r| r.trim().to_string()).filter(|r| !r.is_empty()).collect();
    if let Some(unknown) = rules.iter().find(|r| crate::oracle::rule(r).is_none()) {
        bail!("`{unknown}` is not a rule id");
    }
    Ok(rules)
}

/// The handshake versions of an `accepts:` line, oldest first; anything else is refused.
fn handshake_versions(value: &str) -> Result<Vec<String>> {
    let versions: Vec<&str> = value.split(',').map(str::trim).filter(|v| !v.is_empty()).collect();
    if let Some(other) = versions.iter().find(|v| Era::of_version(v) != Some(Era::Handshake)) {
        bail!("`{other}` is not a handshake version");
    }
    Ok(HANDSHAKE_VERSIONS.into_iter().filter(|v| versions.contains(v)).map(str::to_string).collect())
}

/// An ending as a case file writes it: `closed`, `exited code 1`, `exited signal 9`, `exited`, `hung`, `cut`.
pub(crate) fn ending_text(ending: &Ending) -> String {
    match ending {
        Ending::Closed => "closed".into(),
        Ending::Exited { signal: Some(signal), .. } => format!("exited signal {signal}"),
        Ending::Exited { code: Some(code), .. } => format!("exited code {code}"),
        Ending::Exited { .. } => "exited".into(),
        Ending::Hung { .. } => "hung".into(),
        Ending::Cut { events } => format!("cut {events}"),
    }
}

/// Parses what [`ending_text`] writes.
pub(crate) fn parse_ending(text: &str) -> Result<Ending> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let number = |word: &str| word.parse::<i32>().with_context(|| format!("`{word}` is not a number"));
    Ok(match words.as_slice() {
        ["closed"] => Ending::Closed,
        ["hung"] => Ending::Hung { waited_ms: 0 },
        ["cut", events] => Ending::Cut { events: events.parse().context("`cut` takes a number")? },
        ["exited"] => Ending::Exited { code: None, signal: None, stderr_tail: Vec::new() },
        ["exited", "code", code] => Ending::Exited { code: Some(number(code)?), signal: None, stderr_tail: Vec::new() },
        ["exited", "signal", signal] => {
            Ending::Exited { code: None, signal: Some(number(signal)?), stderr_tail: Vec::new() }
        }
        _ => bail!("an ending is `closed`, `exited code N`, `exited signal N`, `exited`, `hung` or `cut N`"),
    })
}

/// True for text that survives a round trip as a `>> ` line: no control characters, no leading or trailing white
/// space, not empty.
pub(crate) fn is_plain(text: &str) -> bool {
    !text.is_empty() && text.trim() == text && !text.chars().any(char::is_control)
}

pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn from_hex(hex: &str) -> Result<Vec<u8>> {
    if !hex.len().is_multiple_of(2) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("`>>hex` needs an even number of hex digits");
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).context("bad hex")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_case_keeps_its_url_and_exchanges() {
        let case = Case {
            url: Some("http://127.0.0.1:8000/mcp".into()),
            command: Some(vec!["server".into(), "--port".into(), "8000".into()]),
            inputs: vec![Input::Line(b"@http set Origin http://evil.example".to_vec())],
            exchanges: vec!["POST 403 no content-type (0 bytes) | > Origin: http://evil.example".into()],
            ..Case::default()
        };
        let parsed = Case::parse(&case.render()).unwrap();
        assert_eq!(parsed, case);
        assert!(matches!(parsed.server(), ServerSpec::Http(spec) if spec.endpoint.port == 8000));
        assert!(Case::parse(&format!("{MAGIC}\nurl: https://x/mcp\nexpect: clean\n")).is_err());
    }

    fn sample() -> Case {
        Case {
            title: Some("ids come back as strings".into()),
            era: Some(Era::Modern),
            eras: Some(Eras::Dual),
            mutant: Some(Mutant::IdAsString),
            command: None,
            expect: vec!["JSONRPC-ID-ECHO".into()],
            trigger: Some("tools/list+string-id".into()),
            allow: vec!["MCP-ERA-SINGLE".into()],
            deny: vec!["JSONRPC-MALFORMED-REPLY".into()],
            inputs: vec![
                Input::Line(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec()),
                Input::Sync,
                Input::Line(vec![0xff, b'{']),
                Input::Line(b" \r".to_vec()),
                Input::Line(Vec::new()),
                Input::Line("\"é中😀\"".as_bytes().to_vec()),
            ],
            received: vec![br#"{"jsonrpc":"2.0","id":"1","result":{}}"#.to_vec()],
            ..Case::default()
        }
    }

    #[test]
    fn render_and_parse_round_trip() {
        let case = sample();
        let text = case.render();
        assert!(text.contains(">>hex ff7b\n") && text.contains(">>hex 200d\n") && text.contains(">> \"é中😀\"\n"));
        assert_eq!(Case::parse(&text).unwrap(), case);
        let command = Case { mutant: None, command: Some(vec!["python3".into(), "a b.py".into()]), ..case };
        assert_eq!(Case::parse(&command.render()).unwrap(), command);
    }

    #[test]
    fn a_case_carries_the_policy_it_was_found_under() {
        let policy = Policy::default().deny("MCP-ERA-SINGLE").unwrap().allow("JSONRPC-NULL-PARAMS").unwrap();
        let finding =
            Finding { rule: "SERVER-HANG", level: crate::oracle::Level::Error, event: None, detail: "d".into() };
        let transcript = Transcript { events: Vec::new(), ending: crate::transcript::Ending::Closed };
        let case = Case::for_finding(&[], &transcript, &finding, &ServerSpec::BuiltIn, &policy);
        assert_eq!(
            (case.allow.clone(), case.deny.clone()),
            (vec!["JSONRPC-NULL-PARAMS".into()], vec!["MCP-ERA-SINGLE".into()])
        );
        let back = Case::parse(&case.render()).unwrap();
        assert!(back.policy().enabled("MCP-ERA-SINGLE") && !back.policy().enabled("JSONRPC-NULL-PARAMS"));
        assert!(!Case::default().policy().enabled("MCP-ERA-SINGLE"));
        // A case that expects a rule now off by default (found before issue 12) still checks it.
        let old = Case { expect: vec!["MCP-ERA-SINGLE".into()], ..Case::default() };
        assert!(old.policy().enabled("MCP-ERA-SINGLE"));
        assert_eq!(case.eras, None, "no model was given");
        let probed = Policy::default().with_model(ServerModel::stated(Eras::Handshake));
        let case = Case::for_finding(&[], &transcript, &finding, &ServerSpec::BuiltIn, &probed);
        assert_eq!(Case::parse(&case.render()).unwrap().eras, Some(Eras::Handshake));
        assert_eq!(case.policy().model(), Some(&ServerModel::stated(Eras::Handshake)));
        assert!(!case.render().contains("accepts:"), "the model does not say which versions it accepts");
        // The handshake versions a probed server accepts are kept, so replay judges version negotiation the same.
        let accepted = vec!["2025-06-18".to_string(), "2025-11-25".to_string()];
        let model = ServerModel { accepted: accepted.clone(), ..ServerModel::stated(Eras::Dual) };
        let case = Case::for_finding(&[], &transcript, &finding, &ServerSpec::BuiltIn, &probed.with_model(model));
        assert!(case.render().contains("eras: dual\naccepts: 2025-06-18, 2025-11-25\n"), "{}", case.render());
        let back = Case::parse(&case.render()).unwrap();
        assert_eq!(back.policy().model().map(|m| &m.accepted), Some(&accepted));
        assert!(Case::parse(&format!("{MAGIC}\naccepts: 2026-07-28\nexpect: clean\n")).is_err());
    }

    #[test]
    fn clean_cases_and_hand_edits_parse() {
        let text = format!("{MAGIC}\n# a comment\n\nexpect: clean\n>> {{}}\n--\n>>\n");
        let case = Case::parse(&text).unwrap();
        assert!(case.expect.is_empty());
        assert_eq!(case.inputs, vec![Input::Line(b"{}".to_vec()), Input::Sync, Input::Line(Vec::new())]);
        assert_eq!(case.trigger, None, "a case without `trigger:` (all older files) parses");
    }

    #[test]
    fn the_trigger_header_is_optional_and_round_trips() {
        let text = format!("{MAGIC}\nexpect: JSONRPC-RESPONSE-MISSING\ntrigger: ping/meta-not-object\n>> {{}}\n");
        let case = Case::parse(&text).unwrap();
        assert_eq!(case.trigger.as_deref(), Some("ping/meta-not-object"));
        assert_eq!(Case::parse(&case.render()).unwrap(), case);
        let without = Case { trigger: None, ..case };
        assert!(!without.render().contains("trigger:"));
        assert_eq!(Case::parse(&without.render()).unwrap(), without);
    }

    #[test]
    fn bad_files_are_refused_with_the_line() {
        let err = |text: &str| format!("{:#}", Case::parse(text).unwrap_err());
        assert!(err("hello").contains("line 1"));
        assert!(err(&format!("{MAGIC}\n>> {{}}\n")).contains("no `expect:`"));
        assert!(err(&format!("{MAGIC}\nexpect: clean\n>>hex 0g\n")).contains("line 3"));
        assert!(err(&format!("{MAGIC}\nexpect: clean\nmutant: nope\n")).contains("unknown mutant `nope`"));
        assert!(err(&format!("{MAGIC}\nexpect: clean\nwhat\n")).contains("line 3: not a frame"));
        assert!(err(&format!("{MAGIC}\nexpect: clean\ncommand: []\n")).contains("command is empty"));
        assert!(err(&format!("{MAGIC}\nexpect: clean\nallow: NOPE\n")).contains("`NOPE` is not a rule id"));
        assert!(
            err(&format!("{MAGIC}\nexpect: JSONRPC-NOPE\n"))
                .contains("line 2: expect: `JSONRPC-NOPE` is not a rule id")
        );
    }

    #[test]
    fn a_case_cut_short_anywhere_is_refused() {
        let text = sample().render();
        assert!(text.starts_with(&format!("{MAGIC}\nframes: 6\n")), "{text}");
        let frames_end = text.find("# << ").unwrap();
        // Cut at every character before the comments that follow the frames: never a case, always an error (a
        // cut inside a character is not UTF-8, which `Case::load` refuses).
        for at in (MAGIC.len() + 1..frames_end).filter(|&at| text.is_char_boundary(at)) {
            assert!(Case::parse(&text[..at]).is_err(), "cut at {at}: {:?}", &text[..at]);
        }
        assert!(format!("{:#}", Case::parse(&text[..frames_end - 1]).unwrap_err()).contains("no newline"));
        let without_last = &text[..text[..frames_end - 1].rfind('\n').unwrap() + 1];
        assert!(format!("{:#}", Case::parse(without_last).unwrap_err()).contains("`frames: 6` but 5 frame line(s)"));
        // The comments after the frames may be lost; the case is whole.
        assert_eq!(Case::parse(&text[..frames_end]).unwrap().inputs, sample().inputs);
        // Files without `frames:` (all older ones, hand-written ones) parse as before.
        assert!(Case::parse(&format!("{MAGIC}\nexpect: clean\n>> {{}}")).is_ok());
    }

    #[test]
    fn save_is_atomic_and_loadable() {
        let dir = std::env::temp_dir().join(format!("wirefuzz-case-{}", std::process::id()));
        let path = sample().save(&dir, "sample").unwrap();
        assert_eq!(Case::load(&path).unwrap(), sample());
        let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("sample.case")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
