//! The campaign's shrink worker: it confirms each finding as it arrives, then minimizes the confirmed ones one at a
//! time and saves each case file over the one written as seen. A minimization gives way whenever a finding waits
//! to be confirmed, and goes on from where it stopped once that one is.

use super::{
    BASELINED, Confirmation, Confirmed, Deadlines, Found, Job, Message, Options, UNMINIMIZED, case_name, confirm,
};
use crate::case::Case;
use crate::server::{CutShort, ServerSpec, Target};
use crate::shrink::{Budget, Minimized, minimize_giving_way};
use crate::transcript::{Event, Transcript};
use anyhow::Result;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The shrink worker, on targets of its own: confirms each finding as it arrives ([`confirm`]), then minimizes the
/// confirmed ones one at a time, in the order found; findings that arrive meanwhile are confirmed first.
pub(super) struct Shrinker<'a> {
    pub(super) target: &'a mut (dyn Target + Send),
    /// The same server with stretched waits, for findings that rest on silence (`None`: in-process).
    pub(super) patient: Option<Box<dyn Target + Send>>,
    pub(super) options: &'a Options,
    pub(super) server: &'a ServerSpec,
    /// Findings sent to this worker and not yet taken: a minimization gives way while there are any.
    pub(super) waiting: Arc<AtomicUsize>,
}

/// The most hangs confirmed in the background at once ([`Shrinker::in_background`]).
const MAX_AWAITED: usize = 4;

/// A hang confirmed in the background: its job and how its confirmation went.
type Awaited = (Job, Result<(Confirmation, Option<Minimized>)>);

/// Reports how a finding's confirmation went on `sender` and queues it for minimization when it was confirmed; false
/// when the campaign must stop (the confirmation failed: a target could not run).
fn report(
    result: Result<Option<(Found, Option<Confirmed>)>>,
    seen_as: (&'static str, String),
    sender: &mpsc::Sender<Message>,
    confirmed: &mut VecDeque<Confirmed>,
) -> bool {
    match result {
        Ok(Some((found, job))) => {
            let _ = sender.send(Message::Confirmed(Box::new(found), seen_as));
            confirmed.extend(job);
            true
        }
        Ok(None) => true,
        Err(error) => {
            let _ = sender.send(Message::Failed(error));
            false
        }
    }
}

/// True when `transcript` only suspects a hang: the wait that confirms it is still to come.
fn suspects(transcript: &Transcript) -> bool {
    transcript.events.iter().any(|event| matches!(event, Event::Note(note) if note.suspected().is_some()))
}

/// How a minimization step ended: done (the finding minimized), or given way to a confirmation (the smallest
/// conversation so far, to go on from).
enum Step {
    Done(Box<Found>),
    GaveWay(Minimized),
}

impl Shrinker<'_> {
    /// Confirms and minimizes the findings that come on `queue` until it closes (or the fuzzing workers are given
    /// up on), reporting each on `sender`; nothing is run again past `deadlines.settle`. A hang only suspected
    /// waits on a thread of its own ([`Shrinker::in_background`]), so its wait holds up no other finding.
    pub(super) fn work(
        &mut self,
        queue: mpsc::Receiver<Job>,
        stop: &AtomicBool,
        sender: &mpsc::Sender<Message>,
        deadlines: Deadlines,
    ) {
        let mut confirmed: VecDeque<Confirmed> = VecDeque::new();
        let mut open = true;
        let (done, back) = mpsc::channel::<Awaited>();
        let mut awaited = 0;
        let mut held: Vec<Message> = Vec::new();
        loop {
            // Every finding that came is confirmed before the next minimization goes on.
            while open {
                let job = match confirmed.is_empty() && awaited == 0 {
                    true => next_job(&queue, deadlines.fuzz),
                    false => queue.try_recv(),
                };
                match job {
                    Ok(job) => {
                        self.waiting.fetch_sub(1, Ordering::Relaxed);
                        let Some(job) = self.in_background(job, &done, awaited, stop, deadlines.settle) else {
                            awaited += 1;
                            continue;
                        };
                        let seen_as = (job.first.rule, job.seen.trigger.clone());
                        let result = self.confirm(job, stop, deadlines.settle);
                        if !report(result, seen_as, sender, &mut confirmed) {
                            return;
                        }
                    }
                    // (A fuzzing worker still busy past the deadline and its grace is given up on, as in `next_job`.)
                    Err(mpsc::TryRecvError::Empty) => {
                        open = !Deadlines::given_up(deadlines.fuzz);
                        break;
                    }
                    Err(mpsc::TryRecvError::Disconnected) => open = false,
                }
            }
            // The hangs confirmed in the background meanwhile.
            let wait = match confirmed.is_empty() && awaited > 0 {
                true => super::TICK,
                false => Duration::ZERO,
            };
            while let Ok((job, confirmation)) = back.recv_timeout(wait) {
                awaited -= 1;
                self.waiting.fetch_sub(1, Ordering::Relaxed);
                let seen_as = (job.first.rule, job.seen.trigger.clone());
                let result = match confirmation {
                    Err(error) if CutShort::DeadlinePassed.is(&error) => Ok(None),
                    confirmation => confirmation.and_then(|confirmation| self.settled(job, confirmation)),
                };
                if !report(result, seen_as, sender, &mut confirmed) {
                    return;
                }
            }
            // A minimization that ended while a finding waited to be confirmed is reported once none waits: a
            // finding's confirmation comes before any minimization ends.
            if self.waiting.load(Ordering::Relaxed) == 0 {
                held.drain(..).for_each(|message| drop(sender.send(message)));
            }
            let Some((job, confirming)) = confirmed.pop_front() else {
                let given_up = Deadlines::given_up(deadlines.settle) || stop.load(Ordering::Relaxed);
                if open || (awaited > 0 && !given_up) {
                    continue;
                }
                held.drain(..).for_each(|message| drop(sender.send(message)));
                return;
            };
            let past = deadlines.settle.is_some_and(|deadline| Instant::now() >= deadline);
            if stop.load(Ordering::Relaxed) || past {
                // Left as written: unminimized, and the file says so.
                continue;
            }
            let began = Instant::now();
            let budget = self.budget(job.spent, deadlines, confirmed.len() + 1);
            let spent = || job.spent + began.elapsed();
            match self.minimize(&job, confirming, budget) {
                Ok(Step::Done(found)) => held.push(Message::Minimized(found, spent())),
                Ok(Step::GaveWay(partial)) => {
                    let spent = spent();
                    confirmed.push_front((Job { spent, ..job }, partial));
                }
                Err(error) if CutShort::DeadlinePassed.is(&error) => {}
                Err(error) => {
                    let _ = sender.send(Message::Failed(error));
                    return;
                }
            }
        }
    }

    /// Confirms a hang the fuzzing only suspected ([`crate::transcript::Known::Suspected`]) on a thread of its own, with patient
    /// targets of its own (the wait is idle time, not work), when fewer than [`MAX_AWAITED`] are `awaited` already;
    /// what it finds comes back on `done`, and counts as waiting meanwhile, so a minimization gives way to it.
    /// `None` when the job was taken; the job back when it is to be confirmed here instead.
    fn in_background(
        &self,
        job: Job,
        done: &mpsc::Sender<Awaited>,
        awaited: usize,
        stop: &AtomicBool,
        deadline: Option<Instant>,
    ) -> Option<Job> {
        let suspected = suspects(&job.seen.transcript);
        let past = deadline.is_some_and(|deadline| Instant::now() >= deadline);
        let known = self.options.baseline.known(&job.seen.transcript, &job.first, &job.seen.trigger).is_some();
        if !suspected || awaited >= MAX_AWAITED || past || known || stop.load(Ordering::Relaxed) {
            return Some(job);
        }
        let (Some(mut target), Some(mut patient)) =
            (self.target.patient(confirm::STRETCH), self.target.patient(confirm::STRETCH))
        else {
            return Some(job);
        };
        let (done, waiting, policy) = (done.clone(), self.waiting.clone(), self.options.policy.clone());
        std::thread::spawn(move || {
            let seen = confirm::Seen {
                inputs: &job.inputs,
                transcript: &job.seen.transcript,
                finding: &job.first,
                trigger: &job.seen.trigger,
            };
            // A panic comes back as the campaign's failure, never as a confirmation awaited for ever.
            let confirming = || confirm::confirm(target.as_mut(), Some(patient.as_mut()), seen, &policy);
            let confirmation =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(confirming)).unwrap_or_else(|panic| {
                    Err(anyhow::anyhow!(
                        "the confirmation of a hang panicked: {}",
                        super::panic_message(panic.as_ref())
                    ))
                });
            waiting.fetch_add(1, Ordering::Relaxed);
            if done.send((job, confirmation)).is_err() {
                waiting.fetch_sub(1, Ordering::Relaxed);
            }
        });
        None
    }

    /// Runs a finding again ([`confirm::confirm`]; not one the baseline knows) and says how that went
    /// ([`Shrinker::settled`]). `None` when the run stopped or its deadline passed first (the finding stays
    /// pending).
    fn confirm(
        &mut self,
        job: Job,
        stop: &AtomicBool,
        deadline: Option<Instant>,
    ) -> Result<Option<(Found, Option<Confirmed>)>> {
        let past = deadline.is_some_and(|deadline| Instant::now() >= deadline);
        if stop.load(Ordering::Relaxed) || past {
            return Ok(None);
        }
        let trigger = &job.seen.trigger;
        if self.options.baseline.known(&job.seen.transcript, &job.first, trigger).is_some() {
            // Not minimized either: a known finding fails nothing, and each run of its conversation costs time (a
            // shutdown finding the whole shutdown wait). Its case file says so.
            let found = Found { confirmation: Confirmation::Baselined, ..job.seen.clone() };
            return Ok(Some((self.kept_as_seen(found, job.index, BASELINED)?, None)));
        }
        let patient = self.patient.as_mut().map(|patient| patient.as_mut() as &mut dyn Target);
        let seen =
            confirm::Seen { inputs: &job.inputs, transcript: &job.seen.transcript, finding: &job.first, trigger };
        let confirmation = confirm::confirm(&mut *self.target, patient, seen, &self.options.policy);
        match confirmation {
            Err(error) if CutShort::DeadlinePassed.is(&error) => Ok(None),
            confirmation => self.settled(job, confirmation?),
        }
    }

    /// How a finding's confirmation went: the finding with its confirmation, and, when it is confirmed, the job
    /// again with the run that confirmed it (to minimize from). An unconfirmed finding's case file gets a first
    /// line saying so; it is not minimized. A finding confirmed as another, on part of its conversation or with
    /// the wait its first run only suspected has its case as seen written again from the confirming run.
    fn settled(
        &self,
        job: Job,
        (confirmation, confirming): (Confirmation, Option<Minimized>),
    ) -> Result<Option<(Found, Option<Confirmed>)>> {
        let rule = job.first.rule;
        let mut found = Found { confirmation, ..job.seen.clone() };
        if let Confirmation::Unconfirmed(_) = &found.confirmation {
            let note = format!("# {}; not minimized", found.confirmation);
            return Ok(Some((self.kept_as_seen(found, job.index, &note)?, None)));
        }
        let suspected = suspects(&job.seen.transcript);
        let renamed = |run: &&Minimized| run.finding.rule != rule || run.inputs != job.inputs || suspected;
        if let Some(run) = confirming.as_ref().filter(renamed) {
            // Confirmed as the stronger finding its run showed, or on the conversation up to its call, or with the
            // wait its first run only suspected ([`confirm::confirm`]): the case as seen is the confirming run's now.
            if let Some(old) = &found.case_file {
                let _ = std::fs::remove_file(old);
            }
            let case = Case::for_finding(&run.inputs, &run.transcript, &run.finding, self.server, &self.options.policy);
            let (finding, trigger, transcript) = (run.finding.clone(), run.trigger.clone(), run.transcript.clone());
            found = self.kept_as_seen(Found { finding, trigger, case, transcript, ..found }, job.index, UNMINIMIZED)?;
        }
        let confirmed = confirming.map(|run| {
            let job = Job { inputs: run.inputs.clone(), first: found.finding.clone(), seen: found.clone(), ..job };
            (job, run)
        });
        Ok(Some((found, confirmed)))
    }

    /// A finding that stays as seen (baselined or unconfirmed: not minimized), its case file written again with
    /// `note` as its first comment.
    fn kept_as_seen(&self, mut found: Found, index: u64, note: &str) -> Result<Found> {
        if let Some(dir) = &self.options.out {
            let name = case_name(found.finding.rule, &found.trigger, index);
            found.case_file = Some(found.case.save_noted(dir, &name, note)?);
        }
        Ok(found)
    }

    /// The budget of a finding's minimization that has taken `spent` so far, with `queued` findings (this one
    /// among them) still to minimize: the configured one less `spent`, cut to the time left before
    /// `deadlines.settle`; once fuzzing is over, the findings still to minimize share that time evenly.
    pub(super) fn budget(&self, spent: Duration, deadlines: Deadlines, queued: usize) -> Budget {
        let shrink = self.options.shrink;
        let time = shrink.time.map(|time| time.saturating_sub(spent));
        let Some(settle) = deadlines.settle else { return Budget { time, ..shrink } };
        let left = settle.saturating_duration_since(Instant::now());
        let fuzzing_over = deadlines.fuzz.is_none_or(|fuzz| Instant::now() >= fuzz);
        let share = if fuzzing_over { left / queued.max(1) as u32 } else { left };
        Budget { time: Some(time.map_or(share, |time| time.min(share))), ..shrink }
    }

    /// Minimizes a confirmed finding within `budget`, starting from the run that confirmed it (or from where an
    /// earlier step gave way) and keeping its rule and its trigger; when done, saves its case over the one written
    /// as seen.
    fn minimize(&mut self, job: &Job, confirming: Minimized, budget: Budget) -> Result<Step> {
        let options = self.options;
        let (first, seen) = (&job.first, &job.seen);
        let waiting = self.waiting.clone();
        let give_way = move || waiting.load(Ordering::Relaxed) > 0;
        let (minimized, done) = minimize_giving_way(&mut *self.target, confirming, &options.policy, budget, &give_way)?;
        if !done {
            return Ok(Step::GaveWay(minimized));
        }
        let Minimized { inputs, transcript, finding, trigger } = minimized;
        let case = Case::for_finding(&inputs, &transcript, &finding, self.server, &options.policy);
        let case_file = match &options.out {
            Some(dir) => Some(case.save(dir, &case_name(first.rule, &seen.trigger, job.index))?),
            None => None,
        };
        Ok(Step::Done(Box::new(Found {
            finding,
            trigger,
            case,
            transcript,
            case_file,
            minimized: true,
            ..seen.clone()
        })))
    }
}

/// The next finding on `queue`, waiting for one; [`mpsc::TryRecvError::Disconnected`] when the queue closed, or
/// when `fuzz`'s deadline and grace have passed (a fuzzing worker still busy then is given up on, and so is what it
/// might still send).
fn next_job(queue: &mpsc::Receiver<Job>, fuzz: Option<Instant>) -> Result<Job, mpsc::TryRecvError> {
    loop {
        match queue.recv_timeout(super::TICK) {
            Ok(job) => return Ok(job),
            Err(mpsc::RecvTimeoutError::Timeout) if !Deadlines::given_up(fuzz) => {}
            Err(_) => return Err(mpsc::TryRecvError::Disconnected),
        }
    }
}
