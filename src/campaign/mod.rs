//! A fuzzing campaign: generate conversations from a seed, run them on one or more targets in parallel, check
//! every transcript, and turn the first occurrence of each distinct trigger of each broken rule (see
//! [`crate::trigger`]; at most [`MAX_TRIGGERS_PER_RULE`] per rule, further ones only counted) into a case file. A
//! rule broken for two reasons gives two case files, so the second bug is not hidden behind the first.
//!
//! Write first, minimize after: a finding's case file is written (atomically) the moment it is seen, as the
//! conversation that broke the rule, marked unminimized; a shrink worker of its own, beside the fuzzing workers,
//! minimizes it and replaces the file.
//!
//! Confirm before counting: the shrink worker first runs each finding's conversation again ([`confirm`]); a finding
//! that does not break again is reported as unconfirmed and does not fail the run (`strict` makes it). Confirmation
//! comes before minimization: a minimization gives way the moment another finding waits to be confirmed, and goes
//! on from where it stopped once that one is.
//!
//! Two budgets of time: [`Options::time`] is fuzzing time, and [`Options::confirm_time`] follows it, for
//! confirming and then minimizing what was seen (the run ends as soon as that is done). A finding that is still
//! pending when the second runs out makes the run inconclusive ([`Verdict::Inconclusive`]), never green; a case
//! not minimized by then stays on disk as it was seen, saying so.
//!
//! Conversation `i` of seed `s` is always the same script, whatever the number of jobs, so `--seed s` replays a
//! run; the case files do not need the seed at all.

pub mod confirm;
mod shrinker;
mod verdict;

pub use confirm::Confirmation;
pub use verdict::Verdict;

use shrinker::Shrinker;

use crate::baseline::Baseline;
use crate::case::Case;
use crate::model::Eras;
use crate::oracle::coverage::Coverage;
use crate::oracle::{Finding, Policy, check_covered};
use crate::script::{Script, session};
use crate::sdk::{Deviation, Sdk};
use crate::server::{CutShort, ServerSpec, Target};
use crate::shrink::{Budget, Minimized};
use crate::transcript::{Input, Transcript};
use anyhow::{Result, anyhow};
use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// What a campaign runs and where its findings go.
#[derive(Clone, Debug)]
pub struct Options {
    /// The seed of the conversation stream.
    pub seed: u64,
    /// Stop after this many conversations (`None`: no limit but the time).
    pub cases: Option<u64>,
    /// Stop fuzzing after this long (`None`: no limit but the cases).
    pub time: Option<Duration>,
    /// Once fuzzing has stopped at [`Options::time`], how long confirming, then minimizing, what was seen may go on
    /// (`None`: until it is done; each minimization is bounded by [`Options::shrink`] all the same).
    pub confirm_time: Option<Duration>,
    /// Which rules are on.
    pub policy: Policy,
    /// Where case files are written as findings come (`None`: not written).
    pub out: Option<PathBuf>,
    /// How much work one finding's minimization may do.
    pub shrink: Budget,
    /// Known findings: their rules are reported but not minimized (their first conversation is kept as it is).
    pub baseline: Baseline,
    /// True when findings not confirmed ([`Confirmation`]) fail the run too.
    pub strict: bool,
    /// Conversations that already ran before the campaign (the first contact with a server that answered nothing,
    /// [`crate::learn::contact`]): judged as the run's first conversations, before any is generated; conversation
    /// `i` of the seed is then the run's conversation `i + prelude.len()`.
    pub prelude: Vec<(Vec<Input>, Transcript)>,
}

/// A finding that is one of the SDK's known deviations ([`crate::sdk`]; the policy names the SDK): reported in a
/// section of its own, not minimized, no case file, and it does not fail the run.
#[derive(Clone, Debug)]
pub struct SdkFound {
    /// The deviation it matched.
    pub deviation: &'static Deviation,
    /// Its first occurrence, as seen.
    pub found: Found,
    /// How many conversations showed the deviation.
    pub conversations: u64,
}

/// One broken rule with one trigger, as seen or minimized.
#[derive(Clone, Debug)]
pub struct Found {
    /// The first finding of this rule and trigger in the (minimized) conversation.
    pub finding: Finding,
    /// What set the finding off ([`crate::trigger::signature`]); minimization keeps it.
    pub trigger: String,
    /// The number of the conversation that first broke the rule with this trigger.
    pub conversation: u64,
    /// The case: minimized, or the conversation as seen while [`Found::minimized`] is false.
    pub case: Case,
    /// The case's conversation as it ran.
    pub transcript: Transcript,
    /// Where the case file was written, if it was.
    pub case_file: Option<PathBuf>,
    /// Whether it broke again when its conversation ran again ([`confirm`]): only a confirmed finding fails the run
    /// (any finding, with [`Options::strict`]).
    pub confirmation: Confirmation,
    /// False while the case is the conversation as seen: before its minimization is done, or for good when the
    /// run's time ran out first, or when it is not minimized at all (baselined or unconfirmed).
    pub minimized: bool,
    /// How long running it again is expected to take ([`confirm::estimate`]): what a pending finding needs.
    pub estimate: Duration,
}

impl Found {
    /// True when `other` is this finding (the same rule, trigger and conversation), in another state.
    pub fn same(&self, other: &Found) -> bool {
        (self.finding.rule, self.conversation) == (other.finding.rule, other.conversation)
            && self.trigger == other.trigger
    }

    /// True when `baseline` knows this finding: it fails no run.
    pub fn baselined(&self, baseline: &Baseline) -> bool {
        baseline.known(&self.transcript, &self.finding, &self.trigger).is_some()
    }

    /// The tool of the `tools/call` at fault, if the finding is on one.
    pub fn tool(&self) -> Option<String> {
        crate::sdk::Fault::of(&self.transcript, &self.finding).tool().map(str::to_string)
    }
}

/// What a campaign did.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The seed.
    pub seed: u64,
    /// How many conversations ran.
    pub conversations: u64,
    /// How long it took, confirmation and minimization included.
    pub elapsed: Duration,
    /// How long the fuzzing took: until the fuzzing workers ended, a conversation cut at the fuzzing deadline
    /// included (the rest of [`Summary::elapsed`] went to confirming and minimizing what was seen).
    pub fuzzed: Duration,
    /// How long the shrink worker spent minimizing (beside the fuzzing workers, so not taken from them).
    pub shrink_time: Duration,
    /// One entry per broken rule and trigger (at most [`MAX_TRIGGERS_PER_RULE`] per rule), in the order found.
    pub found: Vec<Found>,
    /// How many conversations broke each rule (before minimization).
    pub counts: BTreeMap<&'static str, u64>,
    /// How many conversations broke each rule with each trigger, every trigger counted (those past the bound too).
    pub trigger_counts: BTreeMap<&'static str, BTreeMap<String, u64>>,
    /// What the conversations exercised, per method and per tool.
    pub coverage: Coverage,
    /// The SDK's known deviations seen, one entry per deviation, in the order found (not in `found` nor counted in
    /// `counts`).
    pub sdk: Vec<SdkFound>,
    /// True when findings not confirmed fail the run too ([`Options::strict`]).
    pub strict: bool,
}

impl Summary {
    /// True when a finding fails the run ([`Summary::failing`]; the SDK's deviations never do).
    pub fn fails(&self, baseline: &Baseline) -> bool {
        self.found.iter().any(|f| self.failing(f, baseline))
    }

    /// True when `found` fails the run: it is not baselined, and it is confirmed (or the run is strict).
    pub fn failing(&self, found: &Found, baseline: &Baseline) -> bool {
        (self.strict || found.confirmation.confirmed()) && !found.baselined(baseline)
    }

    /// What each finding is, for [`Baseline::stale`]: its rule, trigger and the tool of its call.
    pub fn seen(&self) -> Vec<(&'static str, String, Option<String>)> {
        let mut seen = Vec::new();
        for found in &self.found {
            seen.push((found.finding.rule, found.trigger.clone(), found.tool()));
        }
        for (rule, triggers) in &self.trigger_counts {
            seen.extend(triggers.keys().map(|trigger| (*rule, trigger.clone(), None)));
        }
        seen
    }

    /// The broken rules, each once, in the order found.
    pub fn broken(&self) -> Vec<&'static str> {
        let mut rules: Vec<&'static str> = Vec::new();
        for found in &self.found {
            if !rules.contains(&found.finding.rule) {
                rules.push(found.finding.rule);
            }
        }
        rules
    }
}

/// The most triggers of one rule that get a case file; further triggers of the rule are only counted, so a noisy
/// server does not fill the disk.
pub const MAX_TRIGGERS_PER_RULE: usize = 8;

/// How long after its stage's deadline the campaign still waits for a worker (one judging a huge transcript, or
/// minimizing): past it, the summary is made without that worker, whose unfinished work is not reported.
pub const DEADLINE_GRACE: Duration = Duration::from_secs(5);

/// Progress, reported as the campaign goes.
#[derive(Clone, Debug)]
pub enum Progress {
    /// `done` conversations have run.
    Ran {
        /// Conversations so far.
        done: u64,
    },
    /// A rule broke with a new trigger; its case is saved as seen (and will be confirmed, then minimized).
    Found(Box<Found>),
    /// A finding ran again: confirmed, or not ([`Found::confirmation`]); an unconfirmed one's case file says so.
    Confirmed(Box<Found>),
    /// A finding's case was minimized, and its file replaced.
    Minimized(Box<Found>),
    /// One of the SDK's known deviations was seen for the first time.
    Sdk(Box<SdkFound>),
}

/// The bytes conversation `index` of `seed` is generated from (a SplitMix64 stream, 16 to 1040 bytes long).
pub fn conversation_bytes(seed: u64, index: u64) -> Vec<u8> {
    let mut draws = crate::script::draws::Draws(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let len = 16 + draws.below(1025);
    let mut bytes = Vec::with_capacity(len.next_multiple_of(8));
    while bytes.len() < len {
        bytes.extend_from_slice(&draws.bits().to_le_bytes());
    }
    bytes.truncate(len);
    bytes
}

/// The conversation `index` of `seed`, as lines to send to the built-in server.
pub fn conversation(seed: u64, index: u64) -> Vec<Input> {
    conversation_on(seed, index, &crate::surface::Surface::built_in())
}

/// The conversation `index` of `seed`, as lines to send to a server with `surface`.
pub fn conversation_on(seed: u64, index: u64, surface: &crate::surface::Surface) -> Vec<Input> {
    Script::from_bytes(&conversation_bytes(seed, index)).encode_on(surface)
}

/// The bytes long session `index` of `seed` is drawn from ([`session::LONG_BYTES`] of a SplitMix64 stream).
pub fn long_session_bytes(seed: u64, index: u64) -> Vec<u8> {
    let mut draws = crate::script::draws::Draws(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x4C4F_4E47);
    (0..session::LONG_BYTES / 8).flat_map(|_| draws.bits().to_le_bytes()).collect()
}

/// The conversation `index` of `seed` as a run on a server serving `eras` with `surface` generates it, when the
/// surface lists tools: a long session ([`session::long`]) once in [`session::LONG_EVERY`], a tool session
/// ([`crate::script::session`]) for every other odd index; else the generic script.
pub fn conversation_for(seed: u64, index: u64, surface: &crate::surface::Surface, eras: Eras) -> Vec<Input> {
    let (tools, count) = (!surface.tools.is_empty(), surface.tools.len());
    if session::long(index, tools) {
        return session::long_from_bytes(&long_session_bytes(seed, index), eras, count).encode_on(surface);
    }
    match session::interleaved(index, tools) {
        true => session::from_bytes(&conversation_bytes(seed, index), eras, count).encode_on(surface),
        false => conversation_on(seed, index, surface),
    }
}

/// When a campaign's two stages end: fuzzing at `fuzz` ([`Options::time`]), confirming and minimizing what was seen
/// at `settle` ([`Options::confirm_time`] later); `None` where a stage has no time limit.
#[derive(Clone, Copy, Debug)]
struct Deadlines {
    fuzz: Option<Instant>,
    settle: Option<Instant>,
}

impl Deadlines {
    fn of(options: &Options, started: Instant) -> Deadlines {
        let fuzz = options.time.and_then(|time| started.checked_add(time));
        let settle = fuzz.and_then(|fuzz| fuzz.checked_add(options.confirm_time?));
        Deadlines { fuzz, settle }
    }

    /// True once `at` plus [`DEADLINE_GRACE`] has passed: a worker still busy then is given up.
    fn given_up(at: Option<Instant>) -> bool {
        at.and_then(|at| at.checked_add(DEADLINE_GRACE)).is_some_and(|at| Instant::now() >= at)
    }
}

/// How often the collecting loop looks at the clock when no message comes.
const TICK: Duration = Duration::from_millis(100);

/// Runs a campaign with one fuzzing worker per target and a shrink worker on `shrinker`; `progress` hears of every
/// finding as it is saved, confirmed and minimized, and of the count of conversations now and then. A target that
/// cannot run a conversation stops the campaign with its error; so does a worker that panics. The targets' own
/// deadlines ([`crate::server::Timeouts::deadline`]) are the caller's: the fuzzing ones' at [`Options::time`], the
/// shrinker's at the end of [`Options::confirm_time`].
pub fn run(
    targets: Vec<Box<dyn Target + Send>>,
    shrinker: Box<dyn Target + Send>,
    options: &Options,
    server: &ServerSpec,
    mut progress: impl FnMut(&Progress),
) -> Result<Summary> {
    let started = Instant::now();
    let deadlines = Deadlines::of(options, started);
    let next = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let claimed = Arc::new(Mutex::new(HashMap::new()));
    let sdk_claimed = Arc::new(Mutex::new(Vec::new()));
    // Findings sent to the shrink worker and not yet taken: a minimization gives way while there are any.
    let waiting = Arc::new(AtomicUsize::new(0));
    let sdk = crate::sdk::of_policy(&options.policy);
    let (sender, receiver) = mpsc::channel::<Message>();
    let (jobs, queue) = mpsc::channel::<Job>();
    let mut fuzzers = Vec::new();
    for (number, mut target) in targets.into_iter().enumerate() {
        let (next, stop, claimed, sender, jobs) =
            (next.clone(), stop.clone(), claimed.clone(), sender.clone(), jobs.clone());
        let (sdk_claimed, waiting) = (sdk_claimed.clone(), waiting.clone());
        let (options, server) = (options.clone(), server.clone());
        fuzzers.push(thread::spawn(move || {
            let sweep = sweep(&options.policy);
            let target = target.as_mut();
            let worker = Worker { target, options: &options, server: &server, sweep, sdk, sdk_claimed, waiting };
            let work = || worker.work(&next, &stop, &claimed, &sender, &jobs, deadlines.fuzz);
            guard(&format!("fuzzing worker {number}"), work, &sender);
        }));
    }
    drop(jobs);
    let shrink_worker = {
        let (stop, sender, options, server) = (stop.clone(), sender.clone(), options.clone(), server.clone());
        let mut shrinker = shrinker;
        thread::spawn(move || {
            let patient = shrinker.patient(confirm::STRETCH);
            let target = shrinker.as_mut();
            let mut worker = Shrinker { target, patient, options: &options, server: &server, waiting };
            let work = || worker.work(queue, &stop, &sender, deadlines);
            guard("shrink worker", work, &sender);
        })
    };
    drop(sender);
    let mut summary = Summary {
        seed: options.seed,
        conversations: 0,
        elapsed: Duration::ZERO,
        fuzzed: Duration::ZERO,
        shrink_time: Duration::ZERO,
        found: Vec::new(),
        counts: BTreeMap::new(),
        trigger_counts: BTreeMap::new(),
        coverage: Coverage::default(),
        sdk: Vec::new(),
        strict: options.strict,
    };
    let mut sdk_counts: Vec<(&'static Deviation, u64)> = Vec::new();
    let mut failure = None;
    let mut last_tick = Instant::now();
    // When the fuzzing workers had all ended: fuzzing lasted until then, a conversation cut at its deadline included.
    let mut fuzzing_ended = None;
    loop {
        if fuzzing_ended.is_none() && fuzzers.iter().all(|worker: &thread::JoinHandle<()>| worker.is_finished()) {
            fuzzing_ended = Some(started.elapsed());
        }
        let message = match receiver.recv_timeout(TICK) {
            Ok(message) => message,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            // A worker busy past its stage's deadline and grace is not waited for: past the fuzzing one when the
            // shrink worker is done, past the confirmation one in any case.
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let fuzzing_given_up = Deadlines::given_up(deadlines.fuzz) && shrink_worker.is_finished();
                if fuzzing_given_up || Deadlines::given_up(deadlines.settle) {
                    break;
                }
                continue;
            }
        };
        match message {
            Message::Ran(tally) => {
                summary.conversations += tally.conversations;
                summary.fuzzed = started.elapsed();
                for (rule, count) in tally.broken {
                    *summary.counts.entry(rule).or_default() += count;
                }
                for ((rule, trigger), count) in tally.triggers {
                    *summary.trigger_counts.entry(rule).or_default().entry(trigger).or_default() += count;
                }
                summary.coverage.merge(&tally.coverage);
                for (deviation, count) in tally.sdk {
                    match sdk_counts.iter_mut().find(|(d, _)| *d == deviation) {
                        Some((_, total)) => *total += count,
                        None => sdk_counts.push((deviation, count)),
                    }
                }
                if last_tick.elapsed() >= Duration::from_millis(100) {
                    last_tick = Instant::now();
                    progress(&Progress::Ran { done: summary.conversations });
                }
            }
            Message::Found(found) => {
                progress(&Progress::Found(found.clone()));
                summary.found.push(*found);
            }
            Message::Confirmed(found, (rule, trigger)) => {
                progress(&Progress::Confirmed(found.clone()));
                let seen = summary
                    .found
                    .iter_mut()
                    .find(|f| (f.finding.rule, f.conversation) == (rule, found.conversation) && f.trigger == trigger);
                if let Some(seen) = seen {
                    // Its state, and what it is: a silence may have been confirmed as a handler that never returned.
                    *seen = Found { minimized: seen.minimized, ..*found };
                }
            }
            Message::Sdk(found) => {
                progress(&Progress::Sdk(found.clone()));
                summary.sdk.push(*found);
            }
            Message::Minimized(found, took) => {
                summary.shrink_time += took;
                progress(&Progress::Minimized(found.clone()));
                let seen = summary.found.iter_mut().find(|f| !f.minimized && f.same(&found));
                match seen {
                    Some(seen) => *seen = *found,
                    None => summary.found.push(*found),
                }
            }
            Message::Failed(error) => {
                stop.store(true, Ordering::Relaxed);
                failure.get_or_insert(error);
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    // A worker still busy past its stage's grace is left to finish on its own (the process ends soon).
    let workers = fuzzers.into_iter().map(|w| (w, deadlines.fuzz)).chain([(shrink_worker, deadlines.settle)]);
    for (worker, deadline) in workers {
        if Deadlines::given_up(deadline) && !worker.is_finished() {
            continue;
        }
        if worker.join().is_err() {
            failure.get_or_insert_with(|| anyhow!("a worker panicked"));
        }
    }
    if let Some(error) = failure {
        return Err(error);
    }
    for seen in &mut summary.sdk {
        seen.conversations = sdk_counts.iter().find(|(d, _)| *d == seen.deviation).map_or(1, |(_, n)| *n);
    }
    summary.elapsed = started.elapsed();
    // Workers given up on past their grace were fuzzing until their deadline.
    let fuzzing_ended =
        fuzzing_ended.or_else(|| deadlines.fuzz.map(|deadline| deadline.saturating_duration_since(started)));
    summary.fuzzed = fuzzing_ended.map_or(summary.fuzzed, |ended| ended.max(summary.fuzzed)).min(summary.elapsed);
    progress(&Progress::Ran { done: summary.conversations });
    Ok(summary)
}

/// Runs a worker's loop; a panic in it is reported as the campaign's failure, with its message.
fn guard(name: &str, work: impl FnOnce(), sender: &mpsc::Sender<Message>) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(work)) {
        let _ = sender.send(Message::Failed(anyhow!("the {name} panicked: {}", panic_message(panic.as_ref()))));
    }
}

/// The message a panic carried, for the campaign's failure.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(text), _) => text.to_string(),
        (_, Some(text)) => text.clone(),
        _ => "(no message)".to_string(),
    }
}

enum Message {
    Ran(Tally),
    Found(Box<Found>),
    /// A finding ran again, with the rule and trigger it was seen as (what it is may have changed:
    /// [`confirm::confirm`]).
    Confirmed(Box<Found>, (&'static str, String)),
    Sdk(Box<SdkFound>),
    /// A minimized finding and how long its minimization took.
    Minimized(Box<Found>, Duration),
    Failed(anyhow::Error),
}

/// A finding for the shrink worker: the conversation that broke the rule, its case as already written, and the
/// time its minimization has taken so far (a minimization that gave way to a confirmation goes on later).
struct Job {
    index: u64,
    inputs: Vec<Input>,
    first: Finding,
    seen: Found,
    spent: Duration,
}

/// A confirmed finding's job, with the run that confirmed it (minimization starts from it).
type Confirmed = (Job, Minimized);

/// Conversations a worker ran since it last reported, and how many broke each rule and each (rule, trigger): sent in
/// batches, so a fast in-process campaign does not wake the collecting thread once per conversation.
#[derive(Default)]
struct Tally {
    conversations: u64,
    broken: Vec<(&'static str, u64)>,
    triggers: HashMap<(&'static str, String), u64>,
    /// Conversations per SDK deviation seen.
    sdk: Vec<(&'static Deviation, u64)>,
    coverage: Coverage,
    since: Option<Instant>,
}

impl Tally {
    /// A batch is sent after this many conversations or this long, whichever comes first.
    const BATCH: u64 = 256;
    const PERIOD: Duration = Duration::from_millis(20);

    /// Counts one conversation, the distinct (rule, trigger) pairs it broke and the SDK deviations it showed.
    fn add(&mut self, broken: Vec<(&'static str, String)>, deviations: Vec<&'static Deviation>) {
        self.since.get_or_insert_with(Instant::now);
        self.conversations += 1;
        for deviation in deviations {
            match self.sdk.iter_mut().find(|(d, _)| *d == deviation) {
                Some((_, count)) => *count += 1,
                None => self.sdk.push((deviation, 1)),
            }
        }
        for (index, (rule, _)) in broken.iter().enumerate() {
            if broken[..index].iter().any(|(r, _)| r == rule) {
                continue;
            }
            match self.broken.iter_mut().find(|(r, _)| r == rule) {
                Some((_, count)) => *count += 1,
                None => self.broken.push((rule, 1)),
            }
        }
        for pair in broken {
            *self.triggers.entry(pair).or_default() += 1;
        }
    }

    fn due(&self) -> bool {
        self.conversations >= Tally::BATCH || self.since.is_some_and(|since| since.elapsed() >= Tally::PERIOD)
    }

    /// Sends what was counted, if anything; false when the collector is gone.
    fn flush(&mut self, sender: &mpsc::Sender<Message>) -> bool {
        if self.conversations == 0 {
            return true;
        }
        sender.send(Message::Ran(std::mem::take(self))).is_ok()
    }
}

/// The marker comment of a baselined finding's case file: written as seen, neither run again nor minimized.
pub const BASELINED: &str = "# baselined: the baseline knows this finding, so it was not run again or minimized \
(`mcp-wirefuzz shrink FILE` minimizes it)";

/// The marker comment of a case file written as seen, before (or without) its minimization.
pub const UNMINIMIZED: &str = "# unminimized: the conversation as it broke the rule; the run replaces this file with \
its minimized form when that is ready (`mcp-wirefuzz shrink FILE` minimizes it later)";

struct Worker<'a> {
    target: &'a mut (dyn Target + Send),
    options: &'a Options,
    server: &'a ServerSpec,
    /// The surface sweep, run as the first conversations.
    sweep: Vec<Script>,
    /// The SDK whose known deviations are told apart (the policy's).
    sdk: Option<&'static Sdk>,
    /// The SDK deviations already reported.
    sdk_claimed: Arc<Mutex<Vec<&'static Deviation>>>,
    /// Findings sent to the shrink worker and not yet taken (counted up here, down there).
    waiting: Arc<AtomicUsize>,
}

/// The surface sweep a run starts with ([`crate::surface::Surface::sweep`]), in the handshake era unless the model
/// says the server serves only 2026-07-28; on a server that serves both, the unknowns again in the modern era
/// (where MCP-ERROR-CODE-RESERVED judges their codes: a dual-era stdio server reached it only by chance before);
/// none without a learned surface.
pub fn sweep(policy: &Policy) -> Vec<Script> {
    use crate::protocol::Era;
    let Some(surface) = policy.surface().filter(|s| s.learned) else { return Vec::new() };
    let serves = |era| policy.model().and_then(|m| m.serves(era));
    let mut scripts = surface.sweep(if serves(Era::Handshake) == Some(false) { Era::Modern } else { Era::Handshake });
    if serves(Era::Handshake) == Some(true) && serves(Era::Modern) == Some(true) {
        scripts.extend(surface.unknowns_in(Era::Modern));
    }
    scripts
}

impl Worker<'_> {
    fn work(
        self,
        next: &AtomicU64,
        stop: &AtomicBool,
        claimed: &Mutex<HashMap<&'static str, Vec<String>>>,
        sender: &mpsc::Sender<Message>,
        jobs: &mpsc::Sender<Job>,
        deadline: Option<Instant>,
    ) {
        let mut tally = Tally::default();
        while !stop.load(Ordering::Relaxed) {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let out_of_cases = self.options.cases.is_some_and(|cases| index >= cases);
            let out_of_time = deadline.is_some_and(|deadline| Instant::now() >= deadline);
            if out_of_cases || out_of_time {
                break;
            }
            let began = Instant::now();
            let ran = match self.options.prelude.get(index as usize) {
                Some((_, transcript)) => Ok(transcript.clone()),
                None => self.target.run_owned(self.conversation(index)),
            };
            let transcript = match ran {
                // A conversation that ends after the deadline may have been cut by it: it is not judged.
                Ok(_) if deadline.is_some_and(|deadline| Instant::now() >= deadline) => break,
                Ok(transcript) => transcript,
                Err(error) if CutShort::DeadlinePassed.is(&error) => break,
                Err(error) => {
                    let _ = sender.send(Message::Failed(error));
                    return;
                }
            };
            let (findings, coverage) = check_covered(&transcript, &self.options.policy);
            tally.coverage.merge(&coverage);
            let mut broken: Vec<(&'static str, String)> = Vec::new();
            let mut deviations: Vec<&'static Deviation> = Vec::new();
            for finding in &findings {
                let trigger = crate::trigger::signature(&transcript, finding);
                if let Some(deviation) = self.sdk.and_then(|sdk| sdk.deviation(&transcript, finding, &trigger)) {
                    if !deviations.contains(&deviation) {
                        deviations.push(deviation);
                        self.sdk_seen(index, &transcript, finding, trigger, deviation, sender);
                    }
                    continue;
                }
                if broken.iter().any(|(rule, t)| *rule == finding.rule && *t == trigger) {
                    continue;
                }
                broken.push((finding.rule, trigger.clone()));
                // True when the trigger is new to the rule, and the rule has room for it.
                let claim = claimed.lock().is_ok_and(|mut claimed| {
                    let triggers = claimed.entry(finding.rule).or_default();
                    let new = triggers.len() < MAX_TRIGGERS_PER_RULE && !triggers.contains(&trigger);
                    if new {
                        triggers.push(trigger.clone());
                    }
                    new
                });
                if claim {
                    // The conversation is regenerated: it is a pure function of the seed and its index.
                    let inputs = self.conversation(index);
                    match self.write_as_seen(index, &inputs, &transcript, finding, trigger) {
                        Ok(mut seen) => {
                            seen.estimate = confirm::estimate(began.elapsed(), &transcript, finding.rule);
                            // Waiting before anyone hears of it: a minimization gives way from the moment it is seen.
                            self.waiting.fetch_add(1, Ordering::Relaxed);
                            let _ = sender.send(Message::Found(Box::new(seen.clone())));
                            let job = Job { index, inputs, first: finding.clone(), seen, spent: Duration::ZERO };
                            if jobs.send(job).is_err() {
                                self.waiting.fetch_sub(1, Ordering::Relaxed);
                            }
                        }
                        Err(error) => {
                            let _ = sender.send(Message::Failed(error));
                            return;
                        }
                    }
                }
            }
            tally.add(broken, deviations);
            if tally.due() && !tally.flush(sender) {
                return;
            }
        }
        tally.flush(sender);
    }

    /// Conversation `index` of the run: the surface sweep first, then generated ones, on the policy's surface
    /// (none: an empty one, whose tool calls name unknown tools), every other one a tool session when the server
    /// lists tools ([`crate::script::session`]); over HTTP with HTTP-level mutations put in. The prelude's
    /// conversations ([`Options::prelude`]) come before all of them.
    fn conversation(&self, index: u64) -> Vec<Input> {
        if let Some((inputs, _)) = self.options.prelude.get(index as usize) {
            return inputs.clone();
        }
        let index = index - self.options.prelude.len() as u64;
        let inputs = match (self.sweep.get(index as usize), self.options.policy.surface()) {
            (Some(script), Some(surface)) => script.encode_on(surface),
            (_, Some(surface)) => {
                let eras = self.options.policy.model().map_or(Eras::Unknown, |model| model.eras);
                conversation_for(self.options.seed, index, surface, eras)
            }
            (_, None) => conversation_on(self.options.seed, index, &crate::surface::Surface::default()),
        };
        match self.server {
            ServerSpec::Http(_) => crate::server::transport::http::mutate::mutate(inputs, self.options.seed, index),
            _ => inputs,
        }
    }

    /// Reports an SDK deviation the first time any worker sees it: as seen, no case file, no minimization.
    fn sdk_seen(
        &self,
        index: u64,
        transcript: &Transcript,
        finding: &Finding,
        trigger: String,
        deviation: &'static Deviation,
        sender: &mpsc::Sender<Message>,
    ) {
        let first = self.sdk_claimed.lock().is_ok_and(|mut claimed| {
            let first = !claimed.contains(&deviation);
            if first {
                claimed.push(deviation);
            }
            first
        });
        if first {
            let inputs = self.conversation(index);
            let case = Case::for_finding(&inputs, transcript, finding, self.server, &self.options.policy);
            let found = Found {
                finding: finding.clone(),
                trigger,
                conversation: index,
                case,
                transcript: transcript.clone(),
                case_file: None,
                confirmation: Confirmation::Pending,
                minimized: false,
                estimate: Duration::ZERO,
            };
            let _ = sender.send(Message::Sdk(Box::new(SdkFound { deviation, found, conversations: 1 })));
        }
    }

    /// Writes a finding's case file at once, as the conversation that broke the rule, marked unminimized.
    fn write_as_seen(
        &self,
        index: u64,
        inputs: &[Input],
        transcript: &Transcript,
        finding: &Finding,
        trigger: String,
    ) -> Result<Found> {
        let options = self.options;
        let case = Case::for_finding(inputs, transcript, finding, self.server, &options.policy);
        let case_file = match &options.out {
            Some(dir) => Some(case.save_noted(dir, &case_name(finding.rule, &trigger, index), UNMINIMIZED)?),
            None => None,
        };
        Ok(Found {
            finding: finding.clone(),
            trigger,
            conversation: index,
            case,
            transcript: transcript.clone(),
            case_file,
            confirmation: Confirmation::Pending,
            minimized: false,
            estimate: Duration::ZERO,
        })
    }
}

/// The name of the case file of conversation `index`'s finding of `rule` with `trigger` (without `.case`).
fn case_name(rule: &str, trigger: &str, index: u64) -> String {
    format!("{}-{}-{index}", rule.to_lowercase(), crate::trigger::file_part(trigger))
}

#[cfg(test)]
mod tests;
