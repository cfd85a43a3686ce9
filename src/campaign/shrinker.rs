//! The campaign's shrink worker: it confirms each finding as it arrives, then minimizes the confirmed ones one at a
//! time and saves each case file over the one written as seen.

use super::{BASELINED, Confirmation, Confirmed, Found, Job, Message, Options, Reserve, case_name, confirm};
use crate::case::Case;
use crate::server::{DeadlinePassed, ServerSpec, Target};
use crate::shrink::{Budget, Minimized, minimize_reproduced};
use anyhow::Result;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

/// The shrink worker, on targets of its own: confirms each finding as it arrives ([`confirm`]), then minimizes the
/// confirmed ones one at a time, in the order found; findings that arrive meanwhile are confirmed before the next
/// minimization starts.
pub(super) struct Shrinker<'a> {
    pub(super) target: &'a mut (dyn Target + Send),
    /// The same server with stretched waits, for findings that rest on silence (`None`: in-process).
    pub(super) patient: Option<Box<dyn Target + Send>>,
    pub(super) options: &'a Options,
    pub(super) server: &'a ServerSpec,
    /// The time held back from fuzzing for the findings still to confirm: released as each is.
    pub(super) reserve: Reserve,
}

impl Shrinker<'_> {
    /// Confirms and minimizes the findings that come on `queue` until it closes, reporting each on `sender`.
    pub(super) fn work(
        &mut self,
        queue: mpsc::Receiver<Job>,
        stop: &AtomicBool,
        sender: &mpsc::Sender<Message>,
        deadline: Option<Instant>,
    ) {
        let mut confirmed: std::collections::VecDeque<Confirmed> = std::collections::VecDeque::new();
        let mut open = true;
        loop {
            // Every finding that came is confirmed before the next minimization.
            while open {
                let job = match confirmed.is_empty() {
                    true => queue.recv().map_err(|_| mpsc::TryRecvError::Disconnected),
                    false => queue.try_recv(),
                };
                match job {
                    Ok(job) => match self.confirm(job, stop, deadline) {
                        Ok(Some((found, job))) => {
                            let _ = sender.send(Message::Confirmed(Box::new(found)));
                            confirmed.extend(job);
                        }
                        Ok(None) => {}
                        Err(error) => {
                            let _ = sender.send(Message::Failed(error));
                            return;
                        }
                    },
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => open = false,
                }
            }
            let Some((job, confirming)) = confirmed.pop_front() else { return };
            let past = deadline.is_some_and(|deadline| Instant::now() >= deadline);
            if stop.load(Ordering::Relaxed) || past {
                // Left as written: unminimized, and the file says so.
                continue;
            }
            let began = Instant::now();
            let budget = self.budget(deadline);
            match self.minimize(&job, confirming, budget) {
                Ok(found) => {
                    let _ = sender.send(Message::Minimized(Box::new(found), began.elapsed()));
                }
                Err(error) if error.is::<DeadlinePassed>() => {}
                Err(error) => {
                    let _ = sender.send(Message::Failed(error));
                    return;
                }
            }
        }
    }

    /// Runs a finding again ([`confirm::confirm`]; not one the baseline knows) and says how that went: the finding
    /// with its confirmation, and, when it is confirmed, the job again with the run that confirmed it (to minimize
    /// from). An unconfirmed or baselined finding's case file gets a first line saying so; it is not minimized.
    /// `None` when the run stopped or its deadline passed first (the finding stays pending).
    fn confirm(
        &mut self,
        job: Job,
        stop: &AtomicBool,
        deadline: Option<Instant>,
    ) -> Result<Option<(Found, Option<Confirmed>)>> {
        let past = deadline.is_some_and(|deadline| Instant::now() >= deadline);
        if stop.load(Ordering::Relaxed) || past {
            self.reserve.release(job.estimate);
            return Ok(None);
        }
        let (rule, trigger) = (job.first.rule, &job.seen.trigger);
        if self.options.baseline.known(&job.seen.transcript, &job.first, trigger).is_some() {
            // Not minimized either: a known finding fails nothing, and each run of its conversation costs time (a
            // shutdown finding the whole shutdown wait). Its case file says so.
            self.reserve.release(job.estimate);
            let found = Found { confirmation: Confirmation::Baselined, ..job.seen.clone() };
            return Ok(Some((self.kept_as_seen(found, job.index, BASELINED)?, None)));
        }
        let patient = self.patient.as_mut().map(|patient| patient.as_mut() as &mut dyn Target);
        let confirmation =
            confirm::confirm(&mut *self.target, patient, &job.inputs, rule, trigger, &self.options.policy);
        self.reserve.release(job.estimate);
        let (confirmation, confirming) = match confirmation {
            Err(error) if error.is::<DeadlinePassed>() => return Ok(None),
            confirmation => confirmation?,
        };
        let found = Found { confirmation, ..job.seen.clone() };
        if let Confirmation::Unconfirmed(_) = &found.confirmation {
            let note = format!("# {}; not minimized", found.confirmation);
            return Ok(Some((self.kept_as_seen(found, job.index, &note)?, None)));
        }
        let job = Job { seen: found.clone(), ..job };
        Ok(Some((found, confirming.map(|run| (job, run)))))
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

    /// The minimization budget of a finding: the configured one, cut to the time left before the deadline.
    pub(super) fn budget(&self, deadline: Option<Instant>) -> Budget {
        let shrink = self.options.shrink;
        match deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                Budget { time: Some(shrink.time.map_or(left, |t| t.min(left))), ..shrink }
            }
            None => shrink,
        }
    }

    /// Minimizes a confirmed finding within `budget`, starting from the run that confirmed it and keeping its rule
    /// and its trigger, and saves its case over the one written as seen.
    fn minimize(&mut self, job: &Job, confirming: Minimized, budget: Budget) -> Result<Found> {
        let options = self.options;
        let (first, seen) = (&job.first, &job.seen);
        let Minimized { inputs, transcript, finding, trigger } =
            minimize_reproduced(&mut *self.target, confirming, &options.policy, budget)?;
        let case = Case::for_finding(&inputs, &transcript, &finding, self.server, &options.policy);
        let case_file = match &options.out {
            Some(dir) => Some(case.save(dir, &case_name(first.rule, &seen.trigger, job.index))?),
            None => None,
        };
        let confirmation = seen.confirmation.clone();
        Ok(Found {
            finding,
            trigger,
            conversation: job.index,
            case,
            transcript,
            case_file,
            confirmation,
            minimized: true,
        })
    }
}
