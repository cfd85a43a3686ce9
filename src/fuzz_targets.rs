//! The bodies of the `cargo fuzz` targets (`fuzz/fuzz_targets/*.rs` only call these), how their input bytes decode,
//! and their seed corpora. They live in the library so that `cargo test` runs them on the committed corpus without
//! nightly, and so that `mcp-wirefuzz import` decodes an artifact exactly as the target did.
//!
//! - `conversation`: bytes → [`Script`] (on the reference server's surface) → reference server in-process →
//!   oracle; fails on any finding.
//! - `mutant`: the first byte picks a planted bug (or `WIREFUZZ_MUTANT=NAME` pins one), the rest is a script on the
//!   planted server's surface (as [`Mutant::policy`] learned it); fails on any finding, which shows the fuzzer
//!   finds that bug.
//! - `server_lines`: raw bytes split into lines → reference server; fails on any finding.
//! - `mutant_bytes`: the first byte picks a planted bug (as for `mutant`), the rest is raw lines with no structure:
//!   the byte-level baseline that benchmarks compare the structure-aware `mutant` target with.
//! - `oracle`: bytes → an arbitrary transcript → the oracle, which must not panic.

use crate::campaign::conversation_bytes;
use crate::model::ServerModel;
use crate::oracle::{Policy, check};
use crate::script::Script;
use crate::seeds;
use crate::server::builtin::mutants::Mutant;
use crate::server::builtin::reference::{Calc, Planted};
use crate::server::{InProcessServer, ServerSpec, run_in_process};
use crate::surface::Surface;
use crate::transcript::{Ending, Event, Input, Transcript};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// The environment variable that pins the `mutant` target to one planted bug.
pub const MUTANT_VARIABLE: &str = "WIREFUZZ_MUTANT";

/// One cargo-fuzz target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FuzzTarget {
    /// A generated conversation against the reference server.
    Conversation,
    /// A generated conversation against a planted bug.
    Mutant,
    /// Raw lines against the reference server.
    ServerLines,
    /// Raw lines against a planted bug.
    MutantBytes,
    /// Arbitrary transcripts into the oracle.
    Oracle,
}

impl FuzzTarget {
    /// Every target.
    pub const ALL: [FuzzTarget; 5] = [
        FuzzTarget::Conversation,
        FuzzTarget::Mutant,
        FuzzTarget::ServerLines,
        FuzzTarget::MutantBytes,
        FuzzTarget::Oracle,
    ];

    /// The target's name, as `cargo fuzz run` takes it.
    pub fn name(self) -> &'static str {
        match self {
            FuzzTarget::Conversation => "conversation",
            FuzzTarget::Mutant => "mutant",
            FuzzTarget::ServerLines => "server_lines",
            FuzzTarget::MutantBytes => "mutant_bytes",
            FuzzTarget::Oracle => "oracle",
        }
    }

    /// Looks a target up by name.
    pub fn from_name(name: &str) -> Option<FuzzTarget> {
        FuzzTarget::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The server and the lines an input of this target sends (the `oracle` target sends nothing: `None`).
    pub fn decode(self, data: &[u8]) -> Option<(ServerSpec, Vec<Input>)> {
        match self {
            FuzzTarget::Conversation => {
                Some((ServerSpec::BuiltIn, Script::from_bytes(data).encode_on(&Surface::built_in())))
            }
            FuzzTarget::Mutant => {
                let (mutant, script) = decode_mutant(data);
                Some((ServerSpec::Mutant(mutant), script.encode_on(&planted_surface(mutant))))
            }
            FuzzTarget::ServerLines => Some((ServerSpec::BuiltIn, split_lines(data))),
            FuzzTarget::MutantBytes => {
                let (mutant, rest) = pick_mutant(data);
                Some((ServerSpec::Mutant(mutant), split_lines(rest)))
            }
            FuzzTarget::Oracle => None,
        }
    }

    /// Runs one input; `Err` when a rule broke (the fuzz target panics with it).
    pub fn run(self, data: &[u8]) -> Result<(), Failure> {
        match self.decode(data) {
            Some((ServerSpec::Mutant(mutant), inputs)) => verdict(&Planted(mutant), &inputs, &mutant.policy()),
            Some((_, inputs)) => verdict(&Calc, &inputs, &Policy::default().with_model(ServerModel::built_in())),
            None => {
                check(&oracle_transcript(data), &Policy::default());
                Ok(())
            }
        }
    }
}

impl fmt::Display for FuzzTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A fuzz input that broke rules: which, and the readable transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The rules broken, in transcript order, without repeats.
    pub rules: Vec<&'static str>,
    /// The transcript, rendered.
    pub transcript: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mcp-wirefuzz: broke {}\n{}", self.rules.join(", "), self.transcript)
    }
}

fn verdict<S: InProcessServer>(server: &S, inputs: &[Input], policy: &Policy) -> Result<(), Failure> {
    let transcript = run_in_process(server, inputs);
    let mut rules: Vec<&'static str> = check(&transcript, policy).iter().map(|f| f.rule).collect();
    if rules.is_empty() {
        return Ok(());
    }
    let mut seen = BTreeSet::new();
    rules.retain(|rule| seen.insert(*rule));
    Err(Failure { rules, transcript: transcript.render() })
}

/// The surface a planted bug's conversations are drawn on: the planted server's, as [`Mutant::policy`] learned it.
pub fn planted_surface(mutant: Mutant) -> Arc<Surface> {
    mutant.policy().surface().cloned().unwrap_or_default()
}

/// The planted bug and script of a `mutant` input: the first byte picks the bug (modulo their number) unless
/// [`MUTANT_VARIABLE`] names one; the rest is the script.
pub fn decode_mutant(data: &[u8]) -> (Mutant, Script) {
    let (mutant, rest) = pick_mutant(data);
    (mutant, Script::from_bytes(rest))
}

/// The planted bug a `mutant` or `mutant_bytes` input selects with its first byte (or [`MUTANT_VARIABLE`]), and the
/// rest of the input.
pub fn pick_mutant(data: &[u8]) -> (Mutant, &[u8]) {
    static PINNED: OnceLock<Option<Mutant>> = OnceLock::new();
    let pinned = *PINNED.get_or_init(|| std::env::var(MUTANT_VARIABLE).ok().and_then(|n| Mutant::from_name(&n)));
    let (selector, rest) = data.split_first().map_or((0, &[][..]), |(first, rest)| (*first, rest));
    (pinned.unwrap_or(Mutant::ALL[selector as usize % Mutant::ALL.len()]), rest)
}

/// Raw bytes as lines to send: split at each newline.
pub fn split_lines(data: &[u8]) -> Vec<Input> {
    data.split(|&b| b == b'\n').map(|line| Input::Line(line.to_vec())).collect()
}

/// A transcript from arbitrary bytes: lines split at newlines; the first line's first byte picks the ending
/// (modulo 4: closed, exited, hung, cut), each later line's first byte its kind (modulo 3: `0` sent, `1` received, `2`
/// sync) and the rest its bytes.
pub fn oracle_transcript(data: &[u8]) -> Transcript {
    let mut lines = data.split(|&b| b == b'\n');
    let ending = match lines.next().and_then(|l| l.first()).map_or(0, |b| b % 4) {
        0 => Ending::Closed,
        1 => Ending::Exited { code: Some(1), signal: None, stderr_tail: Vec::new() },
        2 => Ending::Hung { waited_ms: 0 },
        _ => Ending::Cut { events: 0 },
    };
    let events: Vec<Event> = lines
        .filter_map(|line| {
            let (kind, rest) = line.split_first()?;
            Some(match kind % 3 {
                0 => Event::Sent(rest.to_vec()),
                1 => Event::Received { line: rest.to_vec(), truncated: false },
                _ => Event::Sync,
            })
        })
        .collect();
    let ending = match ending {
        Ending::Cut { .. } => Ending::Cut { events: events.len() },
        other => other,
    };
    Transcript { events, ending }
}

/// The inverse of [`oracle_transcript`], for seed corpora.
pub fn encode_transcript(transcript: &Transcript) -> Vec<u8> {
    let mut out = match transcript.ending {
        Ending::Closed => b"0".to_vec(),
        Ending::Exited { .. } => b"1".to_vec(),
        Ending::Hung { .. } => b"2".to_vec(),
        Ending::Cut { .. } => b"3".to_vec(),
    };
    for event in &transcript.events {
        // The oracle target's format has no HTTP exchanges: its transcripts are stdio ones.
        if matches!(event, Event::Http(_) | Event::Note(_)) {
            continue;
        }
        out.push(b'\n');
        match event {
            Event::Sent(line) => {
                out.push(b'0');
                out.extend_from_slice(line);
            }
            Event::Received { line, .. } => {
                out.push(b'1');
                out.extend_from_slice(line);
            }
            Event::Sync | Event::Http(_) | Event::Note(_) => out.push(b'2'),
        }
    }
    out
}

/// One seed-corpus file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedFile {
    /// The target whose corpus holds it.
    pub target: FuzzTarget,
    /// Its file name.
    pub name: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// How many generated conversations the feature-covering part of the `conversation` corpus is chosen from.
const CANDIDATES: u64 = 3_000;

/// The seed corpora of every target, made from the seed transcripts, the mutants' triggers, and generated
/// conversations chosen so that every feature of the generator appears. Deterministic.
pub fn seed_corpus() -> Vec<SeedFile> {
    let mut files = Vec::new();
    let mut add = |target, name: String, bytes| files.push(SeedFile { target, name, bytes });
    for case in seeds::builtin() {
        let lines = case.lines();
        add(FuzzTarget::ServerLines, format!("seed-{}", case.name), lines.join(&b'\n'));
        let inputs: Vec<Input> = lines.into_iter().map(Input::Line).collect();
        add(FuzzTarget::Oracle, format!("seed-{}", case.name), encode_transcript(&run_in_process(&Calc, &inputs)));
    }
    for (index, mutant) in Mutant::ALL.into_iter().enumerate() {
        let trigger = mutant.trigger();
        add(FuzzTarget::ServerLines, format!("trigger-{mutant}"), trigger.join(&b'\n'));
        add(FuzzTarget::MutantBytes, format!("trigger-{mutant}"), [vec![index as u8], trigger.join(&b'\n')].concat());
        let inputs: Vec<Input> = trigger.into_iter().map(Input::Line).collect();
        let transcript = run_in_process(&Planted(mutant), &inputs);
        add(FuzzTarget::Oracle, format!("trigger-{mutant}"), encode_transcript(&transcript));
        let catches = (0..CANDIDATES).map(|i| conversation_bytes(0, i)).find(|bytes| {
            let transcript =
                run_in_process(&Planted(mutant), &Script::from_bytes(bytes).encode_on(&planted_surface(mutant)));
            check(&transcript, &mutant.policy()).iter().any(|f| f.rule == mutant.expected_rule())
        });
        if let Some(bytes) = catches {
            add(FuzzTarget::Mutant, format!("catches-{mutant}"), [vec![index as u8], bytes].concat());
        }
    }
    let mut seen = BTreeSet::new();
    for index in 0..CANDIDATES {
        let bytes = conversation_bytes(0, index);
        let features: BTreeSet<String> = Script::from_bytes(&bytes).features().iter().map(|f| f.to_string()).collect();
        if !features.is_subset(&seen) {
            seen.extend(features);
            add(FuzzTarget::Conversation, format!("features-{index}"), bytes);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcripts_encode_and_decode() {
        let inputs: Vec<Input> = Mutant::CrashOnBatch.trigger().into_iter().map(Input::Line).collect();
        let transcript = run_in_process(&Planted(Mutant::CrashOnBatch), &inputs);
        let decoded = oracle_transcript(&encode_transcript(&transcript));
        assert_eq!(decoded.events, transcript.events);
        assert!(matches!(decoded.ending, Ending::Exited { .. }));
    }

    #[test]
    fn mutant_inputs_pick_their_bug_from_the_first_byte() {
        assert_eq!(decode_mutant(&[1, 0, 0]).0, Mutant::ALL[1]);
        assert_eq!(decode_mutant(&[Mutant::ALL.len() as u8]).0, Mutant::ALL[0]);
        assert_eq!(decode_mutant(&[]).0, Mutant::ALL[0]);
    }

    #[test]
    fn targets_fail_only_on_findings() {
        assert_eq!(FuzzTarget::ServerLines.run(b"{not json\n[]\n"), Ok(()));
        let trigger = Mutant::NotificationReply.trigger().join(&b'\n');
        assert_eq!(FuzzTarget::ServerLines.run(&trigger), Ok(()));
        let failure = FuzzTarget::Mutant.run(&[3]).unwrap_err();
        assert_eq!(Mutant::ALL[3], Mutant::NotificationReply);
        assert!(failure.rules.contains(&"JSONRPC-NOTIFICATION-REPLY"), "{failure}");
        assert!(failure.to_string().contains("notifications/initialized"));
        for target in FuzzTarget::ALL {
            assert_eq!(FuzzTarget::from_name(target.name()), Some(target));
        }
    }
}
