//! Differential fuzzing: the same conversations to two servers (two commands, a URL on either side, the built-in
//! server and a planted bug, or a server and a recording of another), and what differs between their answers.
//!
//! Each conversation goes to both sides at once; [`compare`] classes every reply pair. A divergence seen for the
//! first time (by class, method and place: [`Divergence::key`]) runs again on both sides before it counts (with
//! waits 4 times longer when it rests on silence or a hang), is minimized to the shortest conversation that still
//! diverges the same way, and is written as a case file holding both transcripts ([`case`]), which `replay` runs
//! again on both sides. Divergences a baseline accepts ([`accepted`]) are reported but do not fail the run.
//!
//! - [`compare`]: the classes and the comparison (pure);
//! - [`case`]: the diff case file; [`record`]: one server's answers kept on disk, and the target that plays them;
//! - [`accepted`]: the baseline of accepted divergences; [`report`]: human, JSON and HTML reports.

pub mod accepted;
pub mod case;
pub mod compare;
pub mod record;
pub mod report;

pub use compare::{Class, Divergence, Ignore, Side, compare};

use crate::campaign::{Verdict, conversation_for};
use crate::case::connection_era;
use crate::model::Eras;
use crate::protocol::Era;
use crate::server::Target;
use crate::shrink;
use crate::surface::Surface;
use crate::transcript::{Input, Transcript};
use accepted::Accepted;
use anyhow::Result;
use case::{DiffCase, SideSpec};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How much longer the waits are when a divergence that rests on silence or a hang runs again.
const PATIENCE: u32 = 4;

/// Where the conversations come from.
#[derive(Clone, Debug)]
pub enum Conversations {
    /// As `fuzz` makes them: the sweep over what both servers list first (every tool, prompt and resource, valid
    /// and broken, and the unknowns), then conversations generated from a seed: both eras, malformed and valid,
    /// tool sessions with arguments drawn from the tools' schemas. Made by [`Conversations::generated`].
    Generated {
        /// The seed.
        seed: u64,
        /// What both servers list.
        surface: Arc<Surface>,
        /// The eras tool sessions are held in.
        eras: Eras,
        /// The sweep's conversations.
        sweep: Vec<Vec<Input>>,
    },
    /// The conversations of a recording, in its order.
    Recorded(Vec<Vec<Input>>),
}

impl Conversations {
    /// The conversations of `seed` on `surface` (what both servers list), for servers that both serve `eras`: the
    /// sweep in the handshake era (the modern one for modern-only servers, and the unknowns in it too for dual-era
    /// ones), then generated ones.
    pub fn generated(seed: u64, surface: Arc<Surface>, eras: Eras) -> Conversations {
        let era = if eras == Eras::Modern { Era::Modern } else { Era::Handshake };
        let mut scripts = if surface.learned { surface.sweep(era) } else { Vec::new() };
        if eras == Eras::Dual && surface.learned {
            scripts.extend(surface.unknowns_in(Era::Modern));
        }
        let sweep = scripts.iter().map(|script| script.encode_on(&surface)).collect();
        Conversations::Generated { seed, surface, eras, sweep }
    }

    /// How many conversations the sweep makes (0 for a recording).
    pub fn sweep_len(&self) -> usize {
        match self {
            Conversations::Generated { sweep, .. } => sweep.len(),
            Conversations::Recorded(_) => 0,
        }
    }

    /// Conversation `index`, or `None` past the last one.
    pub fn get(&self, index: u64) -> Option<Vec<Input>> {
        match self {
            Conversations::Generated { seed, surface, eras, sweep } => match sweep.get(usize::try_from(index).ok()?) {
                Some(inputs) => Some(inputs.clone()),
                None => Some(conversation_for(*seed, index, surface, *eras)),
            },
            Conversations::Recorded(all) => all.get(usize::try_from(index).ok()?).cloned(),
        }
    }
}

/// What a diff run does.
#[derive(Clone, Debug)]
pub struct Options {
    /// The conversations.
    pub conversations: Conversations,
    /// Stop after this many conversations (`None`: until `time`, or the recording's end).
    pub cases: Option<u64>,
    /// Stop after this long, confirmation and minimization included.
    pub time: Option<Duration>,
    /// Stop once this many divergences that fail the run are found (`None`: never).
    pub stop_after: Option<usize>,
    /// What the comparison leaves out.
    pub ignore: Ignore,
    /// The eras each side serves, when both were learned: a conversation in an era only one of them serves is one
    /// `era` divergence as a whole ([`divergences`]).
    pub eras: Option<(Eras, Eras)>,
    /// Where case files are written, the moment a divergence is confirmed and again once it is minimized.
    pub out: Option<PathBuf>,
    /// How much one divergence's minimization may do (no runs: not minimized, as against a recording).
    pub shrink: shrink::Budget,
    /// Divergences accepted as they are.
    pub accepted: Accepted,
    /// The two sides, as case files name them.
    pub sides: (SideSpec, SideSpec),
}

/// One divergence found, with the conversation that shows it.
#[derive(Clone, Debug)]
pub struct Found {
    /// The divergence (in the minimized conversation, once minimized).
    pub divergence: Divergence,
    /// The number of the conversation it was first seen in.
    pub conversation: u64,
    /// The conversation that shows it (minimized, when it was).
    pub inputs: Vec<Input>,
    /// Side A's transcript of it.
    pub a: Transcript,
    /// Side B's transcript of it.
    pub b: Transcript,
    /// True when it diverged the same way again when run again.
    pub confirmed: bool,
    /// True when it was not run again: the run's deadline passed first (neither confirmed nor ruled out).
    pub pending: bool,
    /// The baseline's reason, when a baseline entry accepts it.
    pub accepted: Option<String>,
    /// How many lines the conversation had when first seen (to tell a minimized case).
    pub first_frames: usize,
    /// Its case file, once written.
    pub case_file: Option<PathBuf>,
}

impl Found {
    /// True when it fails the run: confirmed and not accepted.
    pub fn fails(&self) -> bool {
        self.confirmed && self.accepted.is_none()
    }
}

/// What a diff run found.
#[derive(Debug, Default)]
pub struct Summary {
    /// How many conversations went to both sides.
    pub conversations: u64,
    /// Every divergence, in the order seen.
    pub found: Vec<Found>,
    /// How long the run took.
    pub elapsed: Duration,
    /// Baseline entries that nothing matched (`CLASS METHOD [AT]`).
    pub stale: Vec<String>,
}

impl Summary {
    /// True when a confirmed divergence is not accepted by the baseline: the run fails.
    pub fn fails(&self) -> bool {
        self.found.iter().any(Found::fails)
    }

    /// The run's verdict: failed, else inconclusive when a divergence the baseline does not accept is still pending
    /// (it would fail the run once confirmed), else passed.
    pub fn verdict(&self) -> Verdict {
        Verdict::of(self.fails(), self.found.iter().any(|found| found.pending && found.accepted.is_none()))
    }
}

/// What a diff run tells as it goes.
pub enum Progress<'a> {
    /// Conversations so far.
    Ran {
        /// How many.
        done: u64,
    },
    /// A divergence was confirmed (or not), minimized and written.
    Found(&'a Found),
}

/// A side of the comparison: a target and whether it holds a recording (no minimization then).
type Pair<'a> = (&'a mut (dyn Target + Send), &'a mut (dyn Target + Send));

/// Runs `inputs` on both sides at once.
pub fn run_both(
    a: &mut (dyn Target + Send),
    b: &mut (dyn Target + Send),
    inputs: &[Input],
) -> Result<(Transcript, Transcript)> {
    std::thread::scope(|scope| {
        let left = scope.spawn(|| a.run(inputs));
        let right = b.run(inputs);
        let left = left.join().map_err(|_| anyhow::anyhow!("side A's conversation panicked"))?;
        Ok((left?, right?))
    })
}

/// The divergences of one conversation's two transcripts. With the eras each side serves: when the conversation
/// opens in an era only one side serves, whatever differs is one `era` divergence (`2026-07-28 served by B only`),
/// not one per request (the cause is the era, and a baseline accepts it in one line).
pub fn divergences(
    inputs: &[Input],
    a: &Transcript,
    b: &Transcript,
    ignore: &Ignore,
    eras: Option<(Eras, Eras)>,
) -> Vec<Divergence> {
    let (ra, rb): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
        (a.received().map(<[u8]>::to_vec).collect(), b.received().map(<[u8]>::to_vec).collect());
    let found =
        compare(inputs, Side { received: &ra, ending: &a.ending }, Side { received: &rb, ending: &b.ending }, ignore);
    let (Some((eras_a, eras_b)), Some(era), false) = (eras, connection_era(inputs), found.is_empty()) else {
        return found;
    };
    let served = match (eras_a.serves(era), eras_b.serves(era)) {
        (Some(true), Some(false)) => "A",
        (Some(false), Some(true)) => "B",
        _ => return found,
    };
    let first = &found[0];
    let at = format!("the {} era served by {served} only", era.name());
    vec![Divergence { class: Class::Era, method: "-".into(), at, a: first.a.clone(), b: first.b.clone() }]
}

/// Sends conversations to side `a` and side `b` until `options` says stop; `progress` hears of every divergence
/// as it is written and of the count now and then. A side that cannot run a conversation stops the run with its
/// error, but for the deadline passing (the run ends there).
pub fn run(
    a: &mut (dyn Target + Send),
    b: &mut (dyn Target + Send),
    options: &Options,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<Summary> {
    let began = Instant::now();
    let deadline = options.time.map(|time| began + time);
    let over = || deadline.is_some_and(|deadline| Instant::now() >= deadline);
    let mut summary = Summary::default();
    let mut seen = HashSet::new();
    let mut index = 0;
    while options.cases.is_none_or(|cases| index < cases) && !over() {
        let Some(inputs) = options.conversations.get(index) else { break };
        let (ta, tb) = match run_both(a, b, &inputs) {
            Err(error) if crate::server::CutShort::DeadlinePassed.is(&error) => break,
            ran => ran?,
        };
        index += 1;
        summary.conversations = index;
        progress(Progress::Ran { done: index });
        for divergence in divergences(&inputs, &ta, &tb, &options.ignore, options.eras) {
            if !seen.insert(divergence.key()) {
                continue;
            }
            let found = settle(&mut (a, b), divergence, index - 1, &inputs, (&ta, &tb), options, deadline)?;
            progress(Progress::Found(&found));
            summary.found.push(found);
        }
        let failing = summary.found.iter().filter(|found| found.fails()).count();
        if options.stop_after.is_some_and(|most| failing >= most) {
            break;
        }
    }
    summary.stale = options.accepted.stale(&summary.found);
    summary.elapsed = began.elapsed();
    Ok(summary)
}

/// Confirms a divergence seen for the first time, minimizes it when it is confirmed and not accepted, and writes its
/// case file.
fn settle(
    pair: &mut Pair<'_>,
    divergence: Divergence,
    conversation: u64,
    inputs: &[Input],
    seen: (&Transcript, &Transcript),
    options: &Options,
    deadline: Option<Instant>,
) -> Result<Found> {
    let key = divergence.key();
    let accepted = options.accepted.reason(&divergence).map(str::to_string);
    let mut found = Found {
        divergence,
        conversation,
        inputs: inputs.to_vec(),
        a: seen.0.clone(),
        b: seen.1.clone(),
        confirmed: false,
        pending: false,
        accepted,
        first_frames: inputs.len(),
        case_file: None,
    };
    let confirmed = confirm(pair, &found.divergence, inputs, options)?;
    (found.confirmed, found.pending) = (confirmed == Some(true), confirmed.is_none());
    if found.confirmed && found.accepted.is_none() && options.shrink.runs > 0 {
        let until = [deadline, options.shrink.time.map(|time| Instant::now() + time)].into_iter().flatten().min();
        if let Some((inputs, a, b, divergence)) = minimize(pair, &key, inputs, options, until) {
            found = Found { inputs, a, b, divergence, ..found };
        }
    }
    if let Some(dir) = &options.out {
        let case = DiffCase::for_found(&found, &options.sides, &options.ignore, options.eras);
        found.case_file = Some(case.save(dir, &case_name(&found.divergence))?);
    }
    Ok(found)
}

/// Runs `inputs` again on both sides (with waits [`PATIENCE`] times longer when the divergence rests on silence or a
/// hang, for a side whose verdicts depend on waits): whether the same divergence shows again, `None` when the run's
/// deadline passed before it could tell.
fn confirm(pair: &mut Pair<'_>, divergence: &Divergence, inputs: &[Input], options: &Options) -> Result<Option<bool>> {
    let waits = matches!(divergence.class, Class::AnswerVsSilence | Class::Ending);
    let (mut patient_a, mut patient_b) = match waits {
        true => (pair.0.patient(PATIENCE), pair.1.patient(PATIENCE)),
        false => (None, None),
    };
    let a: &mut (dyn Target + Send) = match patient_a.as_deref_mut() {
        Some(patient) => patient,
        None => &mut *pair.0,
    };
    let b: &mut (dyn Target + Send) = match patient_b.as_deref_mut() {
        Some(patient) => patient,
        None => &mut *pair.1,
    };
    let (ta, tb) = match run_both(a, b, inputs) {
        Err(error) if crate::server::CutShort::DeadlinePassed.is(&error) => return Ok(None),
        ran => ran?,
    };
    let key = divergence.key();
    Ok(Some(divergences(inputs, &ta, &tb, &options.ignore, options.eras).iter().any(|d| d.key() == key)))
}

/// The shortest conversation found (within the shrink budget's runs and before `until`) on which the divergence `key` still
/// shows, with both transcripts of it and the divergence as it shows there; `None` when nothing shorter does.
fn minimize(
    pair: &mut Pair<'_>,
    key: &str,
    inputs: &[Input],
    options: &Options,
    until: Option<Instant>,
) -> Option<(Vec<Input>, Transcript, Transcript, Divergence)> {
    let mut last = None;
    let best = shrink::shrink(inputs.to_vec(), options.shrink.runs, |candidate| {
        if until.is_some_and(|until| Instant::now() >= until) {
            return false;
        }
        let Ok((ta, tb)) = run_both(&mut *pair.0, &mut *pair.1, candidate) else { return false };
        let Some(divergence) =
            divergences(candidate, &ta, &tb, &options.ignore, options.eras).into_iter().find(|d| d.key() == key)
        else {
            return false;
        };
        last = Some((candidate.to_vec(), ta, tb, divergence));
        true
    });
    last.filter(|(kept, ..)| *kept == best)
}

/// The case file's name: `diff-CLASS-METHOD-HASH` (the hash of the divergence's key).
fn case_name(divergence: &Divergence) -> String {
    let method: String = divergence
        .method
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect();
    let hash =
        divergence.key().bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    let method: String = method.trim_matches('-').chars().take(48).collect();
    format!("diff-{}-{method}-{:08x}", divergence.class, hash as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Ending, Event};

    fn transcript(lines: &[&str]) -> Transcript {
        let events = lines.iter().map(|l| Event::Received { line: l.as_bytes().to_vec(), truncated: false }).collect();
        Transcript { events, ending: Ending::Closed }
    }

    #[test]
    fn a_conversation_in_an_era_one_side_does_not_serve_is_one_era_divergence() {
        let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{meta}}}}}"#);
        let call =
            format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"add","_meta":{meta}}}}}"#);
        let inputs = vec![Input::Line(list.into_bytes()), Input::Line(call.into_bytes()), Input::Sync];
        let a = transcript(&[
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
        ]);
        let b = transcript(&[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"no"}}"#,
        ]);
        let ignore = Ignore::default();
        let each: Vec<String> = divergences(&inputs, &a, &b, &ignore, None).iter().map(Divergence::key).collect();
        assert_eq!(
            each,
            ["result-vs-error tools/list result vs error", "result-vs-error tools/call add result vs error"]
        );
        let whole = divergences(&inputs, &a, &b, &ignore, Some((Eras::Dual, Eras::Handshake)));
        assert_eq!(whole.iter().map(Divergence::key).collect::<Vec<_>>(), ["era - the modern era served by A only"]);
        // Both serve it: each difference is its own.
        assert_eq!(divergences(&inputs, &a, &b, &ignore, Some((Eras::Dual, Eras::Modern))).len(), 2);
        assert!(divergences(&inputs, &a, &a, &ignore, Some((Eras::Dual, Eras::Handshake))).is_empty());
    }

    /// The built-in server (with a planted bug, or not), whose runs after its first `.1` fail as a passed deadline
    /// does.
    struct CutAfter(Option<crate::server::builtin::mutants::Mutant>, usize);

    impl Target for CutAfter {
        fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
            use crate::server::builtin::reference::{Calc, Planted};
            self.1 = self.1.checked_sub(1).ok_or(crate::server::CutShort::DeadlinePassed)?;
            Ok(match self.0 {
                Some(mutant) => crate::server::run_in_process(&Planted(mutant), inputs),
                None => crate::server::run_in_process(&Calc, inputs),
            })
        }
    }

    #[test]
    fn a_divergence_the_deadline_kept_from_running_again_is_pending_and_the_run_inconclusive() {
        use crate::server::ServerSpec;
        use crate::server::builtin::mutants::Mutant;
        let mutant = Mutant::DuplicateToolName;
        let options = |cases| Options {
            conversations: Conversations::generated(1, Surface::built_in(), Eras::Dual),
            cases: Some(cases),
            time: None,
            stop_after: None,
            ignore: Ignore::default(),
            eras: None,
            out: None,
            shrink: shrink::Budget { runs: 0, time: None },
            accepted: Accepted::default(),
            sides: (SideSpec::Server(ServerSpec::BuiltIn), SideSpec::Server(ServerSpec::Mutant(mutant))),
        };
        let diff = |runs: usize, cases: u64| {
            run(&mut CutAfter(None, runs), &mut CutAfter(Some(mutant), runs), &options(cases), |_| {}).unwrap()
        };
        // The first conversation that diverges, with all the time there is: confirmed, and the run fails.
        let settled = diff(usize::MAX, 200);
        let first = settled.found.first().expect("the planted bug diverges").conversation as usize;
        assert!(settled.found.iter().all(|f| !f.pending) && settled.verdict() == Verdict::Failed);
        // Each side runs that conversation, then meets the deadline when running it again.
        let cut = diff(first + 1, first as u64 + 1);
        assert!(!cut.found.is_empty() && cut.found.iter().all(|f| f.pending && !f.confirmed), "{:?}", cut.found);
        assert_eq!(cut.verdict(), Verdict::Inconclusive);
        let shown = report::human(&cut, &options(1).sides);
        assert!(shown.contains("pending (the run's time ran out") && shown.contains("verdict: inconclusive (exit 4)"));
    }
}
