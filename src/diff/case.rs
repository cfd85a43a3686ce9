//! The diff case file: one divergence, the conversation that shows it, and what each side answered. The frames are
//! written as in a case file ([`crate::case`]); each side's lines follow, exactly (`a<< TEXT`, `a<<hex HEX`), with
//! how its connection ended (`a== closed`). `replay` runs the frames again on both sides and compares; a side that
//! is a recording (`a: recording DIR`) is played from the lines the file holds.
//!
//! ```text
//! # mcp-wirefuzz diff case
//! frames: 2
//! title: tools/list: result at result.tools.length
//! class: result
//! method: tools/list
//! at: result.tools.length
//! a: built-in
//! b: mutant duplicate-tool-name
//! >> {"jsonrpc":"2.0","id":1,"method":"tools/list",...}
//! --
//! a<< {"jsonrpc":"2.0","id":1,"result":{"tools":[...]}}
//! a== closed
//! b<< {"jsonrpc":"2.0","id":1,"result":{"tools":[...]}}
//! b== closed
//! ```

use super::Found;
use super::compare::{Class, Divergence, Ignore};
use super::record::{Played, Recorded};
use crate::case::{ending_text, from_hex, is_plain, parse_ending, to_hex};
use crate::model::Eras;
use crate::server::builtin::mutants::Mutant;
use crate::server::transport::http::HttpSpec;
use crate::server::{ServerCommand, ServerSpec, Target, Timeouts};
use crate::transcript::{Ending, Input, Transcript};
use anyhow::{Context, Result, bail};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The first line of every diff case file.
pub const MAGIC: &str = "# mcp-wirefuzz diff case";

/// One side of a comparison, as a case file names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SideSpec {
    /// A server the harness runs.
    Server(ServerSpec),
    /// A recording (`diff --record DIR`) of a server that need not exist any more.
    Recording(PathBuf),
}

impl SideSpec {
    /// The side as a case file writes it: `built-in`, `mutant NAME`, `command ["prog","arg"]`, `url URL`,
    /// `url URL ["prog","arg"]` (started by the harness), or `recording DIR`.
    pub fn render(&self) -> String {
        let argv = |command: &ServerCommand| serde_json::to_string(&command.argv()).unwrap_or_default();
        match self {
            SideSpec::Server(ServerSpec::BuiltIn) => "built-in".into(),
            SideSpec::Server(ServerSpec::Mutant(mutant)) => format!("mutant {mutant}"),
            SideSpec::Server(ServerSpec::Command(command)) => format!("command {}", argv(command)),
            SideSpec::Server(ServerSpec::Http(spec)) => match &spec.command {
                Some(command) => format!("url {} {}", spec.endpoint.url(), argv(command)),
                None => format!("url {}", spec.endpoint.url()),
            },
            SideSpec::Recording(dir) => format!("recording {}", dir.display()),
        }
    }

    /// Parses what [`SideSpec::render`] writes.
    pub fn parse(text: &str) -> Result<SideSpec> {
        let (kind, rest) = text.trim().split_once(' ').unwrap_or((text.trim(), ""));
        let argv = |json: &str| -> Result<ServerCommand> {
            let argv: Vec<String> = serde_json::from_str(json).context("a command is a JSON array of strings")?;
            ServerCommand::from_argv(&argv)
        };
        Ok(match kind {
            "built-in" => SideSpec::Server(ServerSpec::BuiltIn),
            "mutant" => match Mutant::from_name(rest.trim()) {
                Some(mutant) => SideSpec::Server(ServerSpec::Mutant(mutant)),
                None => bail!("unknown mutant `{}`", rest.trim()),
            },
            "command" => SideSpec::Server(ServerSpec::Command(argv(rest)?)),
            "url" => {
                let (url, command) = rest.trim().split_once(' ').unwrap_or((rest.trim(), ""));
                let command = if command.trim().is_empty() { None } else { Some(argv(command)?) };
                SideSpec::Server(ServerSpec::Http(HttpSpec::new(url, command)?))
            }
            "recording" if !rest.trim().is_empty() => SideSpec::Recording(PathBuf::from(rest.trim())),
            _ => bail!("a side is `built-in`, `mutant NAME`, `command [JSON]`, `url URL [JSON]` or `recording DIR`"),
        })
    }

    /// A short description for reports.
    pub fn describe(&self) -> String {
        match self {
            SideSpec::Server(server) => server.describe(),
            SideSpec::Recording(dir) => format!("the recording in {}", dir.display()),
        }
    }
}

/// What one side answered: its lines, exactly, and how its connection ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answered {
    /// The lines, in order.
    pub received: Vec<Vec<u8>>,
    /// The ending (`None` until the file says it).
    pub ending: Option<Ending>,
}

impl Answered {
    /// What `transcript` shows.
    pub fn of(transcript: &Transcript) -> Answered {
        Answered {
            received: transcript.received().map(<[u8]>::to_vec).collect(),
            ending: Some(transcript.ending.clone()),
        }
    }
}

/// One diff case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffCase {
    /// A one-line title.
    pub title: String,
    /// The divergence's class.
    pub class: Class,
    /// Its method.
    pub method: String,
    /// Its place.
    pub at: String,
    /// Side A.
    pub a: SideSpec,
    /// Side B.
    pub b: SideSpec,
    /// The `--ignore` patterns the comparison ran with.
    pub ignore: Vec<String>,
    /// True when message texts were compared (`--compare-texts`; `texts: compared`).
    pub compare_texts: bool,
    /// The eras each side serves, when both were learned (`eras: A B`, e.g. `eras: handshake dual`).
    pub eras: Option<(Eras, Eras)>,
    /// The frames.
    pub inputs: Vec<Input>,
    /// What side A answered when the case was written.
    pub answered_a: Answered,
    /// What side B answered.
    pub answered_b: Answered,
}

impl DiffCase {
    /// The case of a divergence found between `sides`.
    pub fn for_found(
        found: &Found,
        sides: &(SideSpec, SideSpec),
        ignore: &Ignore,
        eras: Option<(Eras, Eras)>,
    ) -> DiffCase {
        let d = &found.divergence;
        DiffCase {
            title: format!("{}: {} at {}", d.method, d.class, d.at),
            class: d.class,
            method: d.method.clone(),
            at: d.at.clone(),
            a: sides.0.clone(),
            b: sides.1.clone(),
            ignore: ignore.patterns.clone(),
            compare_texts: !ignore.texts,
            eras,
            inputs: found.inputs.clone(),
            answered_a: Answered::of(&found.a),
            answered_b: Answered::of(&found.b),
        }
    }

    /// What the comparison leaves out, as when the case was written.
    pub fn ignore(&self) -> Ignore {
        Ignore { patterns: self.ignore.clone(), texts: !self.compare_texts }
    }

    /// The divergence the case is about (class, method, place).
    pub fn divergence(&self) -> Divergence {
        Divergence {
            class: self.class,
            method: self.method.clone(),
            at: self.at.clone(),
            a: String::new(),
            b: String::new(),
        }
    }

    /// Renders the case; `DiffCase::parse(&case.render())` gives it back.
    pub fn render(&self) -> String {
        let mut out = format!("{MAGIC}\nframes: {}\n", self.inputs.len());
        let _ = writeln!(out, "title: {}", self.title.replace(['\n', '\r'], " "));
        let _ = writeln!(out, "class: {}", self.class);
        let _ = writeln!(out, "method: {}", self.method);
        let _ = writeln!(out, "at: {}", self.at.replace(['\n', '\r'], " "));
        let _ = writeln!(out, "a: {}", self.a.render());
        let _ = writeln!(out, "b: {}", self.b.render());
        for pattern in &self.ignore {
            let _ = writeln!(out, "ignore: {pattern}");
        }
        if self.compare_texts {
            out.push_str("texts: compared\n");
        }
        if let Some((a, b)) = self.eras {
            let _ = writeln!(out, "eras: {} {}", a.name(), b.name());
        }
        for input in &self.inputs {
            match input {
                Input::Sync => out.push_str("--\n"),
                Input::Line(bytes) => out.push_str(&line("", ">>", bytes)),
            }
        }
        for (side, answered) in [("a", &self.answered_a), ("b", &self.answered_b)] {
            for received in &answered.received {
                out.push_str(&line(side, "<<", received));
            }
            if let Some(ending) = &answered.ending {
                let _ = writeln!(out, "{side}== {}", ending_text(ending));
            }
        }
        out
    }

    /// Parses a diff case; errors name the line.
    pub fn parse(text: &str) -> Result<DiffCase> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, first)) if first.trim_end() == MAGIC => {}
            _ => bail!("line 1: a diff case file starts with `{MAGIC}`"),
        }
        let (mut title, mut class, mut method, mut at, mut a, mut b) = (None, None, None, None, None, None);
        let (mut frames, mut ignore, mut inputs, mut compare_texts, mut eras) =
            (None, Vec::new(), Vec::new(), false, None);
        let (mut answered_a, mut answered_b) = (Answered::default(), Answered::default());
        for (index, text) in lines {
            let at_line = || format!("line {}", index + 1);
            if let Some(rest) = text.strip_prefix(">> ") {
                inputs.push(Input::Line(rest.as_bytes().to_vec()));
            } else if let Some(hex) = text.strip_prefix(">>hex ") {
                inputs.push(Input::Line(from_hex(hex.trim()).with_context(at_line)?));
            } else if text == ">>" {
                inputs.push(Input::Line(Vec::new()));
            } else if text.trim_end() == "--" {
                inputs.push(Input::Sync);
            } else if let Some((side, rest)) = side_line(text, &mut answered_a, &mut answered_b) {
                if let Some(line) = rest.strip_prefix("<< ") {
                    side.received.push(line.as_bytes().to_vec());
                } else if let Some(hex) = rest.strip_prefix("<<hex ") {
                    side.received.push(from_hex(hex.trim()).with_context(at_line)?);
                } else if let Some(ending) = rest.strip_prefix("== ") {
                    side.ending = Some(parse_ending(ending).with_context(at_line)?);
                } else {
                    bail!("{}: a side's line is `<< TEXT`, `<<hex HEX` or `== ENDING`", at_line());
                }
            } else if text.starts_with('#') || text.trim().is_empty() {
                continue;
            } else if let Some((key, value)) = text.split_once(':') {
                let value = value.trim();
                match key.trim() {
                    "frames" => frames = Some(value.parse::<usize>().with_context(at_line)?),
                    "title" => title = Some(value.to_string()),
                    "class" => {
                        class = Some(
                            Class::from_id(value).with_context(|| format!("{}: unknown class `{value}`", at_line()))?,
                        )
                    }
                    "method" => method = Some(value.to_string()),
                    "at" => at = Some(value.to_string()),
                    "a" => a = Some(SideSpec::parse(value).with_context(at_line)?),
                    "b" => b = Some(SideSpec::parse(value).with_context(at_line)?),
                    "ignore" => ignore.push(value.to_string()),
                    "texts" if value == "compared" => compare_texts = true,
                    "texts" => bail!("{}: `texts:` takes `compared`", at_line()),
                    "eras" => {
                        let named: Vec<Option<Eras>> = value.split_whitespace().map(Eras::from_name).collect();
                        match named.as_slice() {
                            [Some(a), Some(b)] => eras = Some((*a, *b)),
                            _ => bail!("{}: `eras:` takes two of handshake, modern, dual", at_line()),
                        }
                    }
                    other => bail!("{}: unknown header `{other}`", at_line()),
                }
            } else {
                bail!("{}: not a frame, a side's line, a header or a comment", at_line());
            }
        }
        if let Some(frames) = frames
            && (frames != inputs.len() || !text.ends_with('\n'))
        {
            bail!("the case is cut short: `frames: {frames}` but {} frame line(s)", inputs.len());
        }
        let missing = |name: &str| format!("the case has no `{name}:` line");
        Ok(DiffCase {
            title: title.unwrap_or_default(),
            class: class.with_context(|| missing("class"))?,
            method: method.with_context(|| missing("method"))?,
            at: at.with_context(|| missing("at"))?,
            a: a.with_context(|| missing("a"))?,
            b: b.with_context(|| missing("b"))?,
            ignore,
            compare_texts,
            eras,
            inputs,
            answered_a,
            answered_b,
        })
    }

    /// Writes the case into `dir` as `NAME.case` atomically; returns the path.
    pub fn save(&self, dir: &Path, name: &str) -> Result<PathBuf> {
        crate::case::save_text(dir, name, &self.render())
    }

    /// Reads a diff case file.
    pub fn load(path: &Path) -> Result<DiffCase> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        DiffCase::parse(&text).with_context(|| format!("{}", path.display()))
    }
}

/// A diff case run again on both sides.
#[derive(Debug)]
pub struct Replayed {
    /// Side A's transcript.
    pub a: Transcript,
    /// Side B's transcript.
    pub b: Transcript,
    /// Every divergence between them.
    pub found: Vec<Divergence>,
    /// True when the case's own divergence is among them.
    pub shows_again: bool,
}

impl DiffCase {
    /// Runs the frames again on both sides at once (a recording side answers from the lines the case holds) and
    /// compares them as the case was compared.
    pub fn replay(&self, timeouts: Timeouts) -> Result<Replayed> {
        let target = |side: &SideSpec, answered: &Answered| -> Box<dyn Target + Send> {
            match side {
                SideSpec::Server(server) => server.target(timeouts),
                SideSpec::Recording(_) => Box::new(Played::new(vec![Recorded {
                    inputs: self.inputs.clone(),
                    received: answered.received.clone(),
                    ending: answered.ending.clone().unwrap_or(Ending::Closed),
                }])),
            }
        };
        let (mut a, mut b) = (target(&self.a, &self.answered_a), target(&self.b, &self.answered_b));
        let (a, b) = super::run_both(&mut *a, &mut *b, &self.inputs)?;
        let found = super::divergences(&self.inputs, &a, &b, &self.ignore(), self.eras);
        let key = self.divergence().key();
        let shows_again = found.iter().any(|divergence| divergence.key() == key);
        Ok(Replayed { a, b, found, shows_again })
    }
}

/// True when `text` is a diff case file (its first line).
pub fn is_diff_case(text: &str) -> bool {
    text.lines().next().is_some_and(|first| first.trim_end() == MAGIC)
}

/// `a<< ...`, `b== ...`: the side the line is about and the rest of it.
fn side_line<'t, 's>(text: &'t str, a: &'s mut Answered, b: &'s mut Answered) -> Option<(&'s mut Answered, &'t str)> {
    if let Some(rest) = text.strip_prefix('a').filter(|rest| rest.starts_with("<<") || rest.starts_with("==")) {
        return Some((a, rest));
    }
    text.strip_prefix('b').filter(|rest| rest.starts_with("<<") || rest.starts_with("==")).map(|rest| (b, rest))
}

/// One line of bytes: `PREFIX<MARK> TEXT` when plain, `PREFIX<MARK>hex HEX` otherwise.
fn line(prefix: &str, mark: &str, bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) if is_plain(text) => format!("{prefix}{mark} {text}\n"),
        _ => format!("{prefix}{mark}hex {}\n", to_hex(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_comes_back_from_its_rendering() {
        let case = DiffCase {
            title: "tools/list: result at result.tools.length".into(),
            class: Class::Result,
            method: "tools/list".into(),
            at: "result.tools.length".into(),
            a: SideSpec::Server(ServerSpec::BuiltIn),
            b: SideSpec::Server(ServerSpec::Command(
                ServerCommand::from_argv(&["python3".into(), "s.py".into()]).unwrap(),
            )),
            ignore: vec!["result.x.**".into()],
            compare_texts: true,
            eras: Some((Eras::Handshake, Eras::Dual)),
            inputs: vec![Input::Line(b"{\"a\":1}".to_vec()), Input::Sync, Input::Line(b" odd\n".to_vec())],
            answered_a: Answered { received: vec![b"{}".to_vec(), b"\xff".to_vec()], ending: Some(Ending::Closed) },
            answered_b: Answered {
                received: vec![],
                ending: Some(Ending::Exited { code: Some(1), signal: None, stderr_tail: Vec::new() }),
            },
        };
        let text = case.render();
        assert!(text.contains("b: command [\"python3\",\"s.py\"]\n") && text.contains("a<<hex ff\n"), "{text}");
        assert_eq!(DiffCase::parse(&text).unwrap(), case);
        assert!(is_diff_case(&text) && !is_diff_case("# mcp-wirefuzz case\n"));
        let recording = SideSpec::Recording(PathBuf::from("old answers"));
        assert_eq!(SideSpec::parse(&recording.render()).unwrap(), recording);
        assert_eq!(
            SideSpec::parse("mutant id-as-string").unwrap(),
            SideSpec::Server(ServerSpec::Mutant(Mutant::IdAsString))
        );
    }

    #[test]
    fn a_cut_or_malformed_case_is_refused() {
        let text = format!("{MAGIC}\nframes: 2\nclass: result\nmethod: m\nat: x\na: built-in\nb: built-in\n>> {{}}\n");
        assert!(DiffCase::parse(&text).unwrap_err().to_string().contains("cut short"));
        let text = format!("{MAGIC}\nclass: nonsense\n");
        assert!(DiffCase::parse(&text).unwrap_err().to_string().contains("unknown class"));
        let text = format!("{MAGIC}\nclass: result\nmethod: m\nat: x\na: built-in\n");
        assert!(DiffCase::parse(&text).unwrap_err().to_string().contains("no `b:` line"));
        assert!(SideSpec::parse("mutant nope").is_err() && SideSpec::parse("shell rm -rf").is_err());
    }
}
