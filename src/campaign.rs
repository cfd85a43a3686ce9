//! A fuzzing campaign: generate conversations from a seed, run them on one or more targets in parallel, check
//! every transcript, and turn the first occurrence of each distinct trigger of each broken rule (see
//! [`crate::trigger`]; at most [`MAX_TRIGGERS_PER_RULE`] per rule, further ones only counted) into a minimized case
//! file, written the moment it is found. A rule broken for two reasons gives two case files, so the second bug is
//! not hidden behind the first.
//!
//! Conversation `i` of seed `s` is always the same script, whatever the number of jobs, so `--seed s` replays a
//! run; the case files do not need the seed at all.

use crate::baseline::Baseline;
use crate::case::Case;
use crate::oracle::coverage::Coverage;
use crate::oracle::{Finding, Level, Policy, check_covered};
use crate::script::Script;
use crate::server::{ServerSpec, Target};
use crate::shrink::{Budget, Minimized, minimize_finding};
use crate::transcript::{Input, Transcript};
use anyhow::Result;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    /// Stop after this long (`None`: no limit but the cases).
    pub time: Option<Duration>,
    /// Which rules are on.
    pub policy: Policy,
    /// Where case files are written as findings come (`None`: not written).
    pub out: Option<PathBuf>,
    /// How much work one finding's minimization may do.
    pub shrink: Budget,
    /// Known findings: their rules are reported but not minimized (their first conversation is kept as it is).
    pub baseline: Baseline,
}

/// One broken rule with one trigger, minimized.
#[derive(Clone, Debug)]
pub struct Found {
    /// The first finding of this rule and trigger in the minimized conversation.
    pub finding: Finding,
    /// What set the finding off ([`crate::trigger::signature`]); minimization keeps it.
    pub trigger: String,
    /// The number of the conversation that first broke the rule with this trigger.
    pub conversation: u64,
    /// The minimized case.
    pub case: Case,
    /// The minimized conversation as it ran.
    pub transcript: Transcript,
    /// Where the case file was written, if it was.
    pub case_file: Option<PathBuf>,
    /// True when the rule broke once (with this trigger) and not again in [`RERUNS`] reruns: reported, but it does
    /// not fail the run.
    pub flaky: bool,
}

/// What a campaign did.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The seed.
    pub seed: u64,
    /// How many conversations ran.
    pub conversations: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// One entry per broken rule and trigger (at most [`MAX_TRIGGERS_PER_RULE`] per rule), in the order found.
    pub found: Vec<Found>,
    /// How many conversations broke each rule (before minimization).
    pub counts: BTreeMap<&'static str, u64>,
    /// How many conversations broke each rule with each trigger, every trigger counted (those past the bound too).
    pub trigger_counts: BTreeMap<&'static str, BTreeMap<String, u64>>,
    /// What the conversations exercised, per method and per tool.
    pub coverage: Coverage,
}

impl Summary {
    /// True when a finding fails the run: one that is neither baselined nor flaky.
    pub fn fails(&self, baseline: &Baseline) -> bool {
        self.found.iter().any(|f| !f.flaky && !baseline.covers(f.finding.rule))
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

/// How many times a finding is re-run before it is called flaky.
pub const RERUNS: usize = 3;

/// Progress, reported as the campaign goes.
#[derive(Clone, Debug)]
pub enum Progress {
    /// `done` conversations have run.
    Ran {
        /// Conversations so far.
        done: u64,
    },
    /// A rule broke with a new trigger; its case is minimized and saved.
    Found(Box<Found>),
}

/// The bytes conversation `index` of `seed` is generated from (a SplitMix64 stream, 16 to 1040 bytes long).
pub fn conversation_bytes(seed: u64, index: u64) -> Vec<u8> {
    let mut state = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let len = 16 + (next() % 1025) as usize;
    let mut bytes = Vec::with_capacity(len.next_multiple_of(8));
    while bytes.len() < len {
        bytes.extend_from_slice(&next().to_le_bytes());
    }
    bytes.truncate(len);
    bytes
}

/// The conversation `index` of `seed`, as lines to send to the built-in server.
pub fn conversation(seed: u64, index: u64) -> Vec<Input> {
    Script::from_bytes(&conversation_bytes(seed, index)).encode()
}

/// The conversation `index` of `seed`, as lines to send to a server with `surface`.
pub fn conversation_on(seed: u64, index: u64, surface: &crate::surface::Surface) -> Vec<Input> {
    Script::from_bytes(&conversation_bytes(seed, index)).encode_on(surface)
}

/// Runs a campaign with one worker per target; `progress` hears of every finding as it is saved, and of the
/// count of conversations now and then. A target that cannot run a conversation stops the campaign with its error.
pub fn run(
    targets: Vec<Box<dyn Target + Send>>,
    options: &Options,
    server: &ServerSpec,
    mut progress: impl FnMut(&Progress),
) -> Result<Summary> {
    let started = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let claimed = Arc::new(Mutex::new(HashMap::new()));
    let (sender, receiver) = mpsc::channel::<Message>();
    let mut workers = Vec::new();
    for mut target in targets {
        let (next, stop, claimed, sender) = (next.clone(), stop.clone(), claimed.clone(), sender.clone());
        let (options, server) = (options.clone(), server.clone());
        workers.push(thread::spawn(move || {
            let sweep = sweep(&options.policy);
            let worker = Worker { target: target.as_mut(), options: &options, server: &server, sweep };
            worker.work(&next, &stop, &claimed, &sender, started)
        }));
    }
    drop(sender);
    let mut summary = Summary {
        seed: options.seed,
        conversations: 0,
        elapsed: Duration::ZERO,
        found: Vec::new(),
        counts: BTreeMap::new(),
        trigger_counts: BTreeMap::new(),
        coverage: Coverage::default(),
    };
    let mut failure = None;
    let mut last_tick = Instant::now();
    for message in receiver {
        match message {
            Message::Ran(tally) => {
                summary.conversations += tally.conversations;
                for (rule, count) in tally.broken {
                    *summary.counts.entry(rule).or_default() += count;
                }
                for ((rule, trigger), count) in tally.triggers {
                    *summary.trigger_counts.entry(rule).or_default().entry(trigger).or_default() += count;
                }
                summary.coverage.merge(&tally.coverage);
                if last_tick.elapsed() >= Duration::from_millis(100) {
                    last_tick = Instant::now();
                    progress(&Progress::Ran { done: summary.conversations });
                }
            }
            Message::Found(found) => {
                progress(&Progress::Found(found.clone()));
                summary.found.push(*found);
            }
            Message::Failed(error) => {
                stop.store(true, Ordering::Relaxed);
                failure.get_or_insert(error);
            }
        }
    }
    for worker in workers {
        let _ = worker.join();
    }
    if let Some(error) = failure {
        return Err(error);
    }
    summary.elapsed = started.elapsed();
    progress(&Progress::Ran { done: summary.conversations });
    Ok(summary)
}

enum Message {
    Ran(Tally),
    Found(Box<Found>),
    Failed(anyhow::Error),
}

/// Conversations a worker ran since it last reported, and how many broke each rule and each (rule, trigger): sent in
/// batches, so a fast in-process campaign does not wake the collecting thread once per conversation.
#[derive(Default)]
struct Tally {
    conversations: u64,
    broken: Vec<(&'static str, u64)>,
    triggers: HashMap<(&'static str, String), u64>,
    coverage: Coverage,
    since: Option<Instant>,
}

impl Tally {
    /// A batch is sent after this many conversations or this long, whichever comes first.
    const BATCH: u64 = 256;
    const PERIOD: Duration = Duration::from_millis(20);

    /// Counts one conversation and the distinct (rule, trigger) pairs it broke.
    fn add(&mut self, broken: Vec<(&'static str, String)>) {
        self.since.get_or_insert_with(Instant::now);
        self.conversations += 1;
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

struct Worker<'a> {
    target: &'a mut (dyn Target + Send),
    options: &'a Options,
    server: &'a ServerSpec,
    /// The surface sweep, run as the first conversations.
    sweep: Vec<Script>,
}

/// The surface sweep a run starts with ([`crate::surface::Surface::sweep`]), in the handshake era unless the model
/// says the server serves only 2026-07-28; none without a learned surface.
pub fn sweep(policy: &Policy) -> Vec<Script> {
    let Some(surface) = policy.surface().filter(|s| s.learned) else { return Vec::new() };
    let modern_only = policy.model().and_then(|m| m.serves(crate::protocol::Era::Handshake)) == Some(false);
    surface.sweep(if modern_only { crate::protocol::Era::Modern } else { crate::protocol::Era::Handshake })
}

impl Worker<'_> {
    fn work(
        mut self,
        next: &AtomicU64,
        stop: &AtomicBool,
        claimed: &Mutex<HashMap<&'static str, Vec<String>>>,
        sender: &mpsc::Sender<Message>,
        started: Instant,
    ) {
        let mut tally = Tally::default();
        while !stop.load(Ordering::Relaxed) {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let out_of_cases = self.options.cases.is_some_and(|cases| index >= cases);
            let out_of_time = self.options.time.is_some_and(|time| started.elapsed() >= time);
            if out_of_cases || out_of_time {
                break;
            }
            let transcript = match self.target.run_owned(self.conversation(index)) {
                Ok(transcript) => transcript,
                Err(error) => {
                    let _ = sender.send(Message::Failed(error));
                    return;
                }
            };
            let (findings, coverage) = check_covered(&transcript, &self.options.policy);
            tally.coverage.merge(&coverage);
            let mut broken: Vec<(&'static str, String)> = Vec::new();
            for finding in &findings {
                let trigger = crate::trigger::signature(&transcript, finding);
                if broken.iter().any(|(rule, t)| *rule == finding.rule && *t == trigger) {
                    continue;
                }
                broken.push((finding.rule, trigger.clone()));
                // `Some(n)`: the trigger is new, and the rule's n-th one (counted from 0).
                let claim = claimed.lock().ok().and_then(|mut claimed| {
                    let triggers = claimed.entry(finding.rule).or_default();
                    let new = triggers.len() < MAX_TRIGGERS_PER_RULE && !triggers.contains(&trigger);
                    new.then(|| {
                        triggers.push(trigger.clone());
                        triggers.len() - 1
                    })
                });
                if let Some(nth) = claim {
                    // The conversation is regenerated: it is a pure function of the seed and its index.
                    let inputs = self.conversation(index);
                    let budget = self.budget(finding.rule, nth, started);
                    match self.minimize(index, &inputs, &transcript, finding, trigger, budget) {
                        Ok(found) => {
                            let _ = sender.send(Message::Found(Box::new(found)));
                        }
                        Err(error) => {
                            let _ = sender.send(Message::Failed(error));
                            return;
                        }
                    }
                }
            }
            tally.add(broken);
            if tally.due() && !tally.flush(sender) {
                return;
            }
        }
        tally.flush(sender);
    }

    /// Conversation `index` of the run: the surface sweep first, then generated ones, on the policy's surface
    /// (none: an empty one, whose tool calls name unknown tools).
    fn conversation(&self, index: u64) -> Vec<Input> {
        if let (Some(script), Some(surface)) = (self.sweep.get(index as usize), self.options.policy.surface()) {
            return script.encode_on(surface);
        }
        match self.options.policy.surface() {
            Some(surface) => conversation_on(self.options.seed, index, surface),
            None => conversation_on(self.options.seed, index, &crate::surface::Surface::default()),
        }
    }

    /// The minimization budget of the `nth` trigger of `rule` (counted from 0): none for a baselined rule; the full
    /// one for a rule's first trigger; for a later one, no more time than the campaign has left, so the extra case
    /// files of a noisy server do not stretch a `--time` run (a case past the time is written as it was seen).
    fn budget(&self, rule: &str, nth: usize, started: Instant) -> Budget {
        let options = self.options;
        match (options.baseline.covers(rule), nth, options.time) {
            (true, _, _) => Budget { runs: 0, time: None },
            (false, 1.., Some(time)) => {
                let left = time.saturating_sub(started.elapsed());
                Budget { time: Some(options.shrink.time.map_or(left, |t| t.min(left))), ..options.shrink }
            }
            _ => options.shrink,
        }
    }

    /// Minimizes a finding within `budget`, keeping its rule and its trigger, and saves its case as
    /// `RULE-TRIGGER-N.case`. A finding that does not break again (with its trigger) in [`RERUNS`] runs is kept as
    /// it was seen, as a warning marked flaky: never lost, never passed off as certain.
    fn minimize(
        &mut self,
        index: u64,
        inputs: &[Input],
        seen: &Transcript,
        first: &Finding,
        trigger: String,
        budget: Budget,
    ) -> Result<Found> {
        let options = self.options;
        let mut minimized = None;
        for _ in 0..RERUNS {
            minimized =
                minimize_finding(&mut *self.target, inputs, first.rule, Some(&trigger), &options.policy, budget)?;
            if minimized.is_some() {
                break;
            }
        }
        let flaky = minimized.is_none();
        let Minimized { inputs, transcript, finding, trigger } = minimized.unwrap_or_else(|| {
            let detail = format!("flaky: broke once, then not in {RERUNS} reruns: {}", first.detail);
            let finding = Finding { level: Level::Warning, detail, ..first.clone() };
            Minimized { inputs: inputs.to_vec(), transcript: seen.clone(), finding, trigger }
        });
        let case = Case::for_finding(&inputs, &transcript, &finding, self.server, &options.policy);
        let case_file = match &options.out {
            Some(dir) => {
                let name = format!("{}-{}-{index}", finding.rule.to_lowercase(), crate::trigger::file_part(&trigger));
                Some(case.save(dir, &name)?)
            }
            None => None,
        };
        Ok(Found { finding, trigger, conversation: index, case, transcript, case_file, flaky })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::catalogue::RESPONSE_MISSING;
    use crate::server::builtin::mutants::Mutant;
    use crate::transcript::{Ending, Event};

    fn options(cases: u64, out: Option<PathBuf>) -> Options {
        let shrink = Budget { runs: 500, time: None };
        Options {
            seed: 5,
            cases: Some(cases),
            time: None,
            policy: Policy::default(),
            out,
            shrink,
            baseline: Baseline::default(),
        }
    }

    fn campaign(server: &ServerSpec, jobs: usize, options: &Options) -> Summary {
        let targets = (0..jobs).map(|_| server.pooled_target(Default::default())).collect();
        run(targets, options, server, |_| {}).unwrap()
    }

    #[test]
    fn the_same_seed_gives_the_same_conversations() {
        assert_eq!(conversation(5, 17), conversation(5, 17));
        assert_ne!(conversation(5, 17), conversation(6, 17));
        let summary = campaign(&ServerSpec::BuiltIn, 2, &options(300, None));
        assert_eq!(summary.conversations, 300);
        assert!(summary.found.is_empty(), "{:?}", summary.found.first().map(|f| &f.finding));
    }

    #[test]
    fn a_finding_is_minimized_and_written_as_found() {
        let dir = std::env::temp_dir().join(format!("wirefuzz-campaign-{}", std::process::id()));
        let server = ServerSpec::Mutant(Mutant::NoCacheHints);
        let summary = campaign(&server, 1, &options(200, Some(dir.clone())));
        assert_eq!(summary.broken(), ["MCP-CACHE-HINTS"]);
        let found = &summary.found[0];
        let written = Case::load(found.case_file.as_ref().unwrap()).unwrap();
        assert_eq!(written, found.case);
        assert_eq!(written.mutant, Some(Mutant::NoCacheHints));
        assert!(written.inputs.len() <= 2, "{:?}", written.inputs);
        assert!(summary.counts["MCP-CACHE-HINTS"] >= 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn baselined_rules_are_reported_but_not_minimized() {
        let server = ServerSpec::Mutant(Mutant::NoCacheHints);
        let mut options = options(200, None);
        options.baseline = Baseline::parse("MCP-CACHE-HINTS # known").unwrap();
        let summary = campaign(&server, 1, &options);
        let found = &summary.found[0];
        assert_eq!(found.case.inputs, conversation(5, found.conversation));
        assert!(!summary.fails(&options.baseline) && summary.fails(&Baseline::default()));
    }

    /// Crashes on its first conversation only.
    struct OnceBroken(bool);

    impl Target for OnceBroken {
        fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
            let mut transcript = crate::server::run_in_process(&crate::server::builtin::reference::Calc, inputs);
            if !std::mem::replace(&mut self.0, true) {
                transcript.ending = Ending::Exited { code: Some(9), signal: None, stderr_tail: Vec::new() };
            }
            Ok(transcript)
        }
    }

    /// The built-in server, but the replies to requests `deaf` picks are lost: each such request breaks
    /// JSONRPC-RESPONSE-MISSING, with the request's trigger.
    struct Deaf(fn(&serde_json::Map<String, serde_json::Value>) -> bool);

    impl Target for Deaf {
        fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
            let mut transcript = crate::server::run_in_process(&crate::server::builtin::reference::Calc, inputs);
            let id = |line: &[u8]| {
                let value: serde_json::Value = serde_json::from_slice(line).ok()?;
                Some((value.get("id")?.clone(), value))
            };
            let mut unheard = Vec::new();
            for event in &transcript.events {
                if let Event::Sent(line) = event
                    && let Some((id, serde_json::Value::Object(request))) = id(line)
                    && request.contains_key("method")
                    && (self.0)(&request)
                {
                    unheard.push(id);
                }
            }
            transcript.events.retain(|event| match event {
                Event::Received { line, .. } => id(line).is_none_or(|(id, _)| !unheard.contains(&id)),
                _ => true,
            });
            Ok(transcript)
        }
    }

    /// Deaf to `ping` and to `tools/list` requests with a string id: two bugs behind one rule.
    fn deaf_to_ping_and_string_ids(request: &serde_json::Map<String, serde_json::Value>) -> bool {
        let method = request.get("method").and_then(serde_json::Value::as_str);
        method == Some("ping") || (method == Some("tools/list") && request.get("id").is_some_and(|id| id.is_string()))
    }

    fn missing(summary: &Summary) -> Vec<&Found> {
        summary.found.iter().filter(|f| f.finding.rule == RESPONSE_MISSING).collect()
    }

    #[test]
    fn each_trigger_of_a_rule_gets_its_own_case_file() {
        let dir = std::env::temp_dir().join(format!("wirefuzz-triggers-{}", std::process::id()));
        let options = options(400, Some(dir.clone()));
        let summary =
            run(vec![Box::new(Deaf(deaf_to_ping_and_string_ids))], &options, &ServerSpec::BuiltIn, |_| {}).unwrap();
        let found = missing(&summary);
        let triggers: Vec<&str> = found.iter().map(|f| f.trigger.as_str()).collect();
        let string_id = |t: &&str| !t.starts_with("ping") && t.ends_with("+string-id");
        assert!(triggers.iter().any(string_id) && triggers.iter().any(|t| t.starts_with("ping")), "{triggers:?}");
        let mut unique = triggers.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), triggers.len(), "one case per trigger: {triggers:?}");
        let counts = &summary.trigger_counts[RESPONSE_MISSING];
        assert!(counts.values().any(|&n| n > 1), "{counts:?}: the same trigger seen again is only counted");
        assert!(summary.counts[RESPONSE_MISSING] >= counts.values().copied().max().unwrap());
        for found in found {
            let path = found.case_file.as_ref().unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let stem = format!("jsonrpc-response-missing-{}-", crate::trigger::file_part(&found.trigger));
            assert!(name.starts_with(&stem), "{name}");
            let case = Case::load(path).unwrap();
            assert_eq!(case.trigger.as_deref(), Some(found.trigger.as_str()));
            // Shrinking kept the trigger: the case, run again, breaks the rule with it.
            let transcript = Deaf(deaf_to_ping_and_string_ids).run(&case.inputs).unwrap();
            let again = crate::oracle::check(&transcript, &case.policy());
            assert!(
                again
                    .iter()
                    .any(|f| f.rule == RESPONSE_MISSING && crate::trigger::signature(&transcript, f) == found.trigger),
                "{}",
                case.render()
            );
        }
        // Deaf to ping, a ping with an id beyond 2^53 breaks JSONRPC-BIG-ID instead.
        assert!(!summary.fails(&Baseline::parse("JSONRPC-RESPONSE-MISSING\nJSONRPC-BIG-ID").unwrap()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn shrinking_keeps_the_trigger() {
        let inputs = vec![
            Input::Line(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec()),
            Input::Line(br#"{"jsonrpc":"2.0","id":"req-2","method":"tools/list"}"#.to_vec()),
            Input::Line(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#.to_vec()),
            Input::Sync,
        ];
        let mut target = Deaf(deaf_to_ping_and_string_ids);
        let budget = Budget { runs: 500, time: None };
        let policy = Policy::default();
        let mut shrunk = |trigger| {
            let found = minimize_finding(&mut target, &inputs, RESPONSE_MISSING, trigger, &policy, budget);
            found.unwrap().unwrap()
        };
        // Free to slide, the shrinker keeps the first finding it can: the string-id one, or the ping.
        let free = shrunk(None).trigger;
        assert!(free == "tools/list+string-id" || free == "ping", "{free}");
        // Held to a trigger, it keeps that bug and drops the other.
        let kept = shrunk(Some("ping"));
        assert_eq!(kept.trigger, "ping");
        assert!(matches!(&kept.inputs[..], [Input::Line(line)] if line.ends_with(br#""method":"ping"}"#)), "{kept:?}");
        let kept = shrunk(Some("tools/list+string-id"));
        assert_eq!(kept.trigger, "tools/list+string-id");
        assert!(
            matches!(&kept.inputs[..], [Input::Line(line)] if line.starts_with(br#"{"jsonrpc":"2.0","id":""#)),
            "{kept:?}"
        );
        let none = minimize_finding(&mut target, &inputs, RESPONSE_MISSING, Some("big-id"), &policy, budget);
        assert!(none.unwrap().is_none());
    }

    #[test]
    fn the_triggers_of_one_rule_are_bounded() {
        let summary = run(vec![Box::new(Deaf(|_| true))], &options(300, None), &ServerSpec::BuiltIn, |_| {}).unwrap();
        let counts = &summary.trigger_counts[RESPONSE_MISSING];
        assert!(counts.len() > MAX_TRIGGERS_PER_RULE, "{counts:?}");
        assert_eq!(missing(&summary).len(), MAX_TRIGGERS_PER_RULE);
        assert_eq!(summary.broken().iter().filter(|r| **r == RESPONSE_MISSING).count(), 1);
        let shown = crate::report::human::summary(&summary, &Baseline::default());
        assert!(shown.contains("more trigger(s) not kept (at most 8 per rule)"), "{shown}");
    }

    #[test]
    fn later_triggers_are_minimized_within_the_time_left() {
        let mut target = Deaf(|_| true);
        let mut options = options(1, None);
        options.time = Some(Duration::from_secs(5));
        options.baseline = Baseline::parse("MCP-CACHE-HINTS").unwrap();
        let worker = Worker { target: &mut target, options: &options, server: &ServerSpec::BuiltIn, sweep: Vec::new() };
        let started = Instant::now().checked_sub(Duration::from_secs(4)).unwrap();
        assert_eq!(worker.budget(RESPONSE_MISSING, 0, started), options.shrink);
        let later = worker.budget(RESPONSE_MISSING, 1, started);
        assert!(later.runs == options.shrink.runs && later.time.unwrap() <= Duration::from_secs(1), "{later:?}");
        assert_eq!(worker.budget("MCP-CACHE-HINTS", 0, started).runs, 0);
    }

    #[test]
    fn a_finding_that_does_not_come_back_is_kept_as_flaky() {
        let summary = run(vec![Box::new(OnceBroken(false))], &options(1, None), &ServerSpec::BuiltIn, |_| {}).unwrap();
        let finding = &summary.found[0].finding;
        assert_eq!((finding.rule, finding.level), ("SERVER-CRASH", Level::Warning));
        assert!(finding.detail.starts_with("flaky: broke once, then not in 3 reruns"), "{}", finding.detail);
        assert!(summary.found[0].flaky && !summary.fails(&Default::default()));
    }
}
