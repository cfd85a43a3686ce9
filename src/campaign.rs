//! A fuzzing campaign: generate conversations from a seed, run them on one or more targets in parallel, check
//! every transcript, and turn the first occurrence of each broken rule into a minimized case file, written the
//! moment it is found.
//!
//! Conversation `i` of seed `s` is always the same script, whatever the number of jobs, so `--seed s` replays a
//! run; the case files do not need the seed at all.

use crate::case::Case;
use crate::oracle::{Finding, Level, Policy, check};
use crate::script::Script;
use crate::shrink::{Minimized, minimize_finding};
use crate::target::{ServerSpec, Target};
use crate::transcript::{Input, Transcript};
use anyhow::Result;
use std::collections::{BTreeMap, HashSet};
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
    /// How many target runs one finding's minimization may take.
    pub shrink_budget: usize,
}

/// One broken rule, minimized.
#[derive(Clone, Debug)]
pub struct Found {
    /// The first finding of this rule in the minimized conversation.
    pub finding: Finding,
    /// The number of the conversation that first broke the rule.
    pub conversation: u64,
    /// The minimized case.
    pub case: Case,
    /// The minimized conversation as it ran.
    pub transcript: Transcript,
    /// Where the case file was written, if it was.
    pub case_file: Option<PathBuf>,
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
    /// One entry per broken rule, in the order found.
    pub found: Vec<Found>,
    /// How many conversations broke each rule (before minimization).
    pub counts: BTreeMap<&'static str, u64>,
}

impl Summary {
    /// The broken rules, in the order found.
    pub fn broken(&self) -> Vec<&'static str> {
        self.found.iter().map(|f| f.finding.rule).collect()
    }
}

/// Progress, reported as the campaign goes.
#[derive(Clone, Debug)]
pub enum Progress {
    /// `done` conversations have run.
    Ran {
        /// Conversations so far.
        done: u64,
    },
    /// A new rule broke; its case is minimized and saved.
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
    (0..len.div_ceil(8)).flat_map(|_| next().to_le_bytes()).take(len).collect()
}

/// The conversation `index` of `seed`, as lines to send.
pub fn conversation(seed: u64, index: u64) -> Vec<Input> {
    Script::from_bytes(&conversation_bytes(seed, index)).encode()
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
    let claimed = Arc::new(Mutex::new(HashSet::new()));
    let (sender, receiver) = mpsc::channel::<Message>();
    let mut workers = Vec::new();
    for mut target in targets {
        let (next, stop, claimed, sender) = (next.clone(), stop.clone(), claimed.clone(), sender.clone());
        let (options, server) = (options.clone(), server.clone());
        workers.push(thread::spawn(move || {
            let worker = Worker { target: target.as_mut(), options: &options, server: &server };
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
    };
    let mut failure = None;
    let mut last_tick = Instant::now();
    for message in receiver {
        match message {
            Message::Ran { broken } => {
                summary.conversations += 1;
                for rule in broken {
                    *summary.counts.entry(rule).or_default() += 1;
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
    Ran { broken: Vec<&'static str> },
    Found(Box<Found>),
    Failed(anyhow::Error),
}

struct Worker<'a> {
    target: &'a mut (dyn Target + Send),
    options: &'a Options,
    server: &'a ServerSpec,
}

impl Worker<'_> {
    fn work(
        mut self,
        next: &AtomicU64,
        stop: &AtomicBool,
        claimed: &Mutex<HashSet<&'static str>>,
        sender: &mpsc::Sender<Message>,
        started: Instant,
    ) {
        while !stop.load(Ordering::Relaxed) {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let out_of_cases = self.options.cases.is_some_and(|cases| index >= cases);
            let out_of_time = self.options.time.is_some_and(|time| started.elapsed() >= time);
            if out_of_cases || out_of_time {
                return;
            }
            let inputs = conversation(self.options.seed, index);
            let transcript = match self.target.run(&inputs) {
                Ok(transcript) => transcript,
                Err(error) => {
                    let _ = sender.send(Message::Failed(error));
                    return;
                }
            };
            let findings = check(&transcript, &self.options.policy);
            let mut broken: Vec<&'static str> = findings.iter().map(|f| f.rule).collect();
            broken.dedup();
            for rule in &broken {
                let new = claimed.lock().map(|mut claimed| claimed.insert(*rule)).unwrap_or(false);
                if new {
                    match self.minimize(index, &inputs, rule) {
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
            if sender.send(Message::Ran { broken }).is_err() {
                return;
            }
        }
    }

    fn minimize(&mut self, index: u64, inputs: &[Input], rule: &'static str) -> Result<Found> {
        let options = self.options;
        let minimized = minimize_finding(&mut *self.target, inputs, rule, &options.policy, options.shrink_budget)?;
        let Minimized { inputs, transcript, finding } = match minimized {
            Some(minimized) => minimized,
            None => {
                // Seen once, gone on the next run: a flaky server. Keep what was seen.
                let transcript = self.target.run(inputs)?;
                let level = crate::oracle::rule(rule).map_or(Level::Error, |r| r.level);
                let detail = "broken once, not reproduced on a second run (a flaky server?)".to_string();
                Minimized { inputs: inputs.to_vec(), transcript, finding: Finding { rule, level, event: None, detail } }
            }
        };
        let case = Case::for_finding(&inputs, &transcript, &finding, self.server);
        let case_file = match &options.out {
            Some(dir) => Some(case.save(dir, &format!("{}-{index}", finding.rule.to_lowercase()))?),
            None => None,
        };
        Ok(Found { finding, conversation: index, case, transcript, case_file })
    }
}
