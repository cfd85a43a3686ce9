//! A server under test as a child process over stdio: [`StdioTarget`], which picks a process for each
//! conversation (a warm spare, or one kept from the last self-contained conversation) and the barrier it uses.
//! Every wait is bounded and every buffer too. The rooms of the idea:
//!
//! - `process.rs`: the process and its hygiene (started by [`crate::server::launch`], pipes, ending its group), and
//!   the thread that starts processes ahead.
//! - `sentinel.rs`: sentinel requests and the calibration that decides which ones a server takes.
//! - `conversation/`: one conversation on a process, what was sent and read, what is still owed (`mod.rs`); how it
//!   knows the replies before a sync point are complete, by the clock or a sentinel, and how it closes
//!   (`barrier.rs`); a tool call given up on, asked again to tell a handler that never returns from a slow one
//!   (`reask.rs`).
//! - `usage.rs`: the memory and descriptors the server's processes hold, sampled over a long conversation.
//! - [`attach`]: the stub `mcp-wirefuzz attach` that runs as the server process and hands its stdio to a fork
//!   server; the target turns the stub's own failure into a harness error.
//! - [`python`]: which server commands are Python programs; [`fork`]: the fork server the harness starts for one,
//!   with `attach` standing in for the program per conversation, or the reason it runs plain processes instead.

pub mod attach;
mod conversation;
pub mod fork;
mod process;
pub mod python;
mod sentinel;
#[cfg(test)]
mod test_servers;
mod usage;

pub use conversation::barrier::Barrier;
pub use process::no_huge_pages;

use crate::model::Eras;
use crate::protocol::envelope;
use crate::protocol::message::mentions;
use crate::protocol::methods::{INITIALIZE, INITIALIZED, LISTEN, SET_LEVEL, SUBSCRIBE, TOOLS_CALL, UNSUBSCRIBE};
use crate::protocol::{Frame, IdField, RequestId};
use crate::server::hangs::Hangs;
use crate::server::latency::Latency;
use crate::server::{CutShort, ServerCommand, Target, Timeouts};
use crate::transcript::{Ending, Input, Transcript};
use anyhow::{Result, bail};
use conversation::End;
use process::{Process, Spawner};
use sentinel::{Sentinels, calibrated, first_wait};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A server started as a child process for every conversation, with one process started ahead (warm) so start-up
/// overlaps the previous conversation. Given the server's eras ([`StdioTarget::with_sentinels`]), it knows when
/// replies are complete from sentinel requests instead of the clock, once a calibration showed the server answers
/// in order, and runs conversations of self-contained modern requests on a process it keeps, where the calibration
/// showed a kept process answers them as a fresh one would.
#[derive(Debug)]
pub struct StdioTarget {
    command: ServerCommand,
    timeouts: Timeouts,
    warm: bool,
    sentinels: Sentinels,
    /// False when every conversation gets a fresh process, even where process reuse would apply.
    reuse: bool,
    /// The process kept after a conversation of self-contained modern requests, for the next such conversation.
    kept: Option<Process>,
    /// The first wait for a sentinel, set at calibration; doubled each time a server it stalled spoke later.
    wait: Option<Duration>,
    /// The reply times measured in this target's conversations: the reply timeout follows them when
    /// [`Timeouts::adaptive`].
    latency: Latency,
    /// What the run learned of the server's tool calls, shared with the run's other targets
    /// ([`StdioTarget::sharing`]).
    hangs: Arc<Hangs>,
    /// Starts the warm spare beside the running conversation (declared last: the processes it started are ended
    /// before it is).
    spawner: Option<Spawner>,
}

impl StdioTarget {
    /// A target that starts `command` for each conversation, with a warm spare process.
    pub fn new(command: ServerCommand, timeouts: Timeouts) -> StdioTarget {
        StdioTarget {
            command,
            timeouts,
            warm: true,
            sentinels: Sentinels::Off,
            reuse: true,
            kept: None,
            wait: None,
            latency: Latency::default(),
            hangs: Arc::default(),
            spawner: None,
        }
    }

    /// Runs every conversation on a fresh process, even one that process reuse would apply to: for probes that must
    /// see what a freshly started server does.
    pub fn fresh_each(mut self) -> StdioTarget {
        self.reuse = false;
        self
    }

    /// Shares what the run learned of the server's tool calls with the run's other targets: a call a wait showed
    /// hung on one costs the others no wait ([`crate::server::hangs`]).
    pub fn sharing(mut self, hangs: Arc<Hangs>) -> StdioTarget {
        self.hangs = hangs;
        self
    }

    /// Turns the warm spare off (one fresh process started when each conversation starts).
    pub fn cold(mut self) -> StdioTarget {
        self.warm = false;
        self
    }

    /// Uses sentinel barriers on a server that serves `eras` (see [`Barrier`]), once a calibration run on a fresh
    /// process (before the first conversation) shows it answers in order; and, on a server that serves 2026-07-28
    /// and answers a modern request alike on a fresh process and on one that served others (see `sentinel.rs`),
    /// keeps a process across conversations of self-contained modern requests. Unknown eras keep the clock.
    pub fn with_sentinels(mut self, eras: Eras) -> StdioTarget {
        self.sentinels = if eras == Eras::Unknown { Sentinels::Off } else { Sentinels::Uncalibrated(eras) };
        self
    }

    /// The barrier conversations use now: calibrates the server first when that is still to do.
    fn barrier(&mut self) -> Result<Barrier> {
        if let Sentinels::Uncalibrated(eras) = self.sentinels {
            self.warm_up();
            self.sentinels = calibrated(&self.command, eras, self.timeouts)?;
        }
        Ok(match self.sentinels {
            Sentinels::InOrder { eras, pre_init, neutral, pace, .. } => {
                let wait = *self.wait.get_or_insert_with(|| first_wait(pace, self.timeouts.reply));
                Barrier::Sentinel { eras, pre_init, neutral, wait }
            }
            _ => Barrier::Clock,
        })
    }

    /// True when the target may keep a process for the next conversation of self-contained modern requests: it
    /// reuses processes, and the calibration showed the server answers such requests alike on a fresh process and on
    /// one that served others.
    fn may_keep(&self) -> bool {
        self.reuse && matches!(self.sentinels, Sentinels::InOrder { fresh_alike: true, .. })
    }

    /// [`StdioTarget::may_keep`], calibrating the server first if that has not been done.
    pub fn keeps_processes(&mut self) -> Result<bool> {
        self.barrier()?;
        Ok(self.may_keep())
    }

    /// Starts the spawner of a warm target, when it is not running yet: its first process starts at once.
    fn warm_up(&mut self) {
        if self.warm && self.spawner.is_none() {
            self.spawner = Some(Spawner::new(&self.command, self.timeouts.deadline));
        }
    }

    /// A fresh process: the warm spare, with the next spare ordered beside it; on a cold target, one started now.
    fn fresh(&mut self) -> Result<Process> {
        self.warm_up();
        match &mut self.spawner {
            Some(spawner) => spawner.take(),
            None => Process::spawn(&self.command, self.timeouts.deadline),
        }
    }
}

impl Target for StdioTarget {
    fn patient(&self, factor: u32) -> Option<Box<dyn Target + Send>> {
        let stretched = Timeouts { hang: self.timeouts.hang.waiting(), ..self.timeouts.stretched(factor) };
        let patient = StdioTarget::new(self.command.clone(), stretched).cold().fresh_each();
        Some(Box::new(patient.sharing(self.hangs.clone())))
    }

    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        if self.timeouts.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            self.kept = None;
            self.spawner = None;
            return Err(CutShort::DeadlinePassed.into());
        }
        let barrier = self.barrier()?;
        let keep = self.may_keep() && self_contained(inputs);
        let mut process = match self.kept.take() {
            Some(process) if keep => process,
            kept => {
                self.kept = kept;
                self.fresh()?
            }
        };
        let (mut barrier, mut keep) = (barrier, keep);
        loop {
            match self.converse(process, inputs, barrier, keep)? {
                (_, End::Reordered) => {
                    // The server answers out of order after all: sentinels are off from now on, and the
                    // conversation runs again on the clock.
                    self.sentinels = Sentinels::Off;
                    self.kept = None;
                    barrier = Barrier::Clock;
                }
                (_, End::Late) => {
                    // A server whose sentinel was given up after the first wait wrote later: it is slow, not
                    // silent. The conversation runs again waiting the full reply timeout, and later conversations
                    // first wait twice as long.
                    let reply = self.timeouts.reply;
                    self.wait = self.wait.map(|wait| (wait * 2).min(reply));
                    if let Barrier::Sentinel { wait, .. } = &mut barrier {
                        *wait = reply;
                    }
                }
                (transcript, End::Kept(process)) => {
                    self.kept = Some(process);
                    return Ok(transcript);
                }
                (transcript, End::Done) => return Ok(transcript),
            }
            keep = false;
            process = self.fresh()?;
        }
    }
}

impl StdioTarget {
    /// Runs one conversation on `process`; an error when the run's deadline cut it, or when the process was a stub of
    /// `mcp-wirefuzz attach` that ran no server.
    fn converse(&self, process: Process, inputs: &[Input], barrier: Barrier, keep: bool) -> Result<(Transcript, End)> {
        let watch = Arc::clone(&process.watch);
        let mut timeouts = self.timeouts;
        if timeouts.adaptive {
            timeouts.reply = self.latency.reply_timeout(timeouts.reply);
        }
        let (transcript, end) = process.converse(inputs, timeouts, barrier, keep, &self.latency, &self.hangs);
        if watch.cut.load(Ordering::Relaxed) {
            return Err(CutShort::DeadlinePassed.into());
        }
        // The harness is ending every server (a signal stopped it): a crash or silence now is its own doing.
        if crate::server::children::ending() {
            return Err(CutShort::Halted.into());
        }
        if let Ending::Exited { code: Some(code), stderr_tail, .. } = &transcript.ending
            && *code == i32::from(attach::LOST_EXIT)
        {
            let tail = String::from_utf8_lossy(stderr_tail);
            if let Some(note) = tail.lines().rev().find(|line| line.starts_with(attach::LOST_NOTE)) {
                bail!("{note} (the fork server is gone or was never started; a stub's exit is not the server's)");
            }
        }
        Ok((transcript, end))
    }
}

/// Methods that leave state on a connection (or open the handshake era), or may change the server's own (a tool
/// call: a note stored, a lock a panic poisoned): a conversation sending one, even malformed, gets a process of its
/// own, so what it finds does not depend on the conversations before it.
const STATEFUL: &[&str] = &[INITIALIZE, INITIALIZED, TOOLS_CALL, SET_LEVEL, SUBSCRIBE, UNSUBSCRIBE, LISTEN];

/// True when a conversation may run on a process that served others: every line is a well-formed request that
/// carries the modern envelope and names no method that leaves state ([`STATEFUL`]). Modern requests are
/// self-contained, so on a server that serves 2026-07-28 such a conversation sees what it would see on a fresh
/// process (which, locking its era or not, has seen only such requests). Notifications and malformed lines get a
/// fresh process: a server may treat them by what its process saw before (rmcp ends on some of them).
pub fn self_contained(inputs: &[Input]) -> bool {
    inputs.iter().all(|input| match input {
        Input::Sync => true,
        Input::Line(line) => {
            matches!(Frame::parse(line), Frame::Request(request)
                if request.params.as_ref().is_some_and(|p| p.is_object())
                    && envelope::carries_modern_envelope(&request.method, request.params.as_ref()))
                && !STATEFUL.iter().any(|method| names_method(line, method))
        }
    })
}

/// True when `line` holds `"method"` followed by `method` as a JSON string, anywhere (a batch member, a malformed
/// line): a byte search, so no parser's leniency can hide it.
fn names_method(line: &[u8], method: &str) -> bool {
    mentions(line, method) && mentions(line, "method")
}

/// Whether a server message is a reply: `Some(Some(id))` for a response carrying a request id, `Some(None)` for
/// one carrying a null, missing or invalid id or a broken shape, `None` for anything that is not a response.
fn reply_to(message: &serde_json::Value) -> Option<Option<RequestId>> {
    let serde_json::Value::Object(object) = message else { return None };
    if object.contains_key("method") || !(object.contains_key("result") || object.contains_key("error")) {
        return None;
    }
    Some(IdField::of(object.get("id")).valid().cloned())
}

#[cfg(test)]
mod tests {
    use super::sentinel::MIN_WAIT;
    use super::test_servers::*;
    use super::*;
    use crate::transcript::Event;

    #[test]
    fn an_adaptive_reply_timeout_follows_a_server_slower_than_it() {
        // Answers every line 150 ms late; the reply timeout is 50 ms.
        let slow = sh(r#"while read -r l; do sleep 0.15; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; done"#);
        let timeouts = Timeouts { reply: Duration::from_millis(50), startup: Duration::from_secs(2), ..quick() };
        let answered_in_time = |adaptive: bool| {
            let mut target = StdioTarget::new(slow.clone(), Timeouts { adaptive, ..timeouts }).cold();
            let mut last = Vec::new();
            // Two replies measured per conversation: enough conversations for the measure to count, and one more.
            for _ in 0..crate::server::latency::MIN_SAMPLES / 2 + 1 {
                last = target.run(&[request(1), Input::Sync, request(1), Input::Sync]).unwrap().events;
            }
            // The second request's reply came before its sync point, not after it.
            let sync = last.iter().rposition(|event| matches!(event, Event::Sync)).unwrap();
            last[..sync].iter().filter(|event| matches!(event, Event::Received { .. })).count() == 2
        };
        assert!(answered_in_time(true), "after 20 replies measured, the timeout is 4 x 256 ms");
        assert!(!answered_in_time(false), "pinned, it stays 50 ms");
    }

    #[test]
    fn a_stub_that_ran_no_server_is_a_harness_error_and_any_other_exit_is_the_servers() {
        let note = super::attach::LOST_NOTE;
        let lost = sh(&format!("echo 'starting' >&2; echo '{note} no fork server at /x.sock' >&2; exit 125"));
        let error = StdioTarget::new(lost, quick()).run(&[request(1), Input::Sync]).unwrap_err();
        assert!(error.to_string().contains("the fork server is gone"), "{error:#}");
        // The same code from a server itself, without the stub's note: the server's exit, judged as such.
        let exits = sh("echo 'bye' >&2; exit 125");
        let transcript = StdioTarget::new(exits, quick()).run(&[request(1), Input::Sync]).unwrap();
        assert!(matches!(transcript.ending, Ending::Exited { code: Some(125), .. }), "{transcript:?}");
    }
    #[test]
    fn a_late_reply_after_a_sentinel_turns_sentinels_off_and_reruns_the_conversation() {
        let late = answering(
            r#"while read -r l; do id=$(idof "$l"); case "$l" in *'"slow"'*) (sleep 0.1; reply "$id") & ;; *) [ -n "$id" ] && reply "$id";; esac; done; wait"#,
        );
        let mut target = StdioTarget::new(late, quick()).with_sentinels(Eras::Modern);
        let slow = Input::Line(
            br#"{"jsonrpc":"2.0","id":"s","method":"slow","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_vec(),
        );
        let transcript = target.run(&[slow, Input::Sync]).unwrap();
        assert!(matches!(transcript.events[1], Event::Received { .. }), "{}", transcript.render());
        assert!(matches!(transcript.events[2], Event::Sync));
        assert_eq!(target.sentinels, Sentinels::Off);
    }

    #[test]
    fn a_guessed_stall_stands_only_while_the_server_stays_silent() {
        // In order, but `slow` takes 1 s: longer than the first wait (the calibration's pace is milliseconds),
        // well within the reply timeout. `mute` is never answered.
        let slow = answering(
            r#"while read -r l; do id=$(idof "$l"); case "$l" in *'"slow"'*) sleep 1; reply "$id";; *'"mute"'*) ;; *) [ -n "$id" ] && reply "$id";; esac; done"#,
        );
        let patient = Timeouts { reply: Duration::from_secs(4), ..quick() };
        let request = |id: &str, method: &str| {
            Input::Line(format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"{method}","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#).into_bytes())
        };
        let mut target = StdioTarget::new(slow.clone(), patient).with_sentinels(Eras::Modern);
        target.run(&[]).unwrap();
        let calibrated = target.wait.unwrap();
        assert!(calibrated >= MIN_WAIT && calibrated <= patient.reply, "{calibrated:?}");
        // The calibrated wait depends on the machine's load; the rest of the test sets one well under `slow`'s 1 s.
        let first = Duration::from_millis(100);
        target.wait = Some(first);
        // The slow reply comes after the guess: the conversation runs again, waiting the full reply timeout, so the
        // reply is before the sync point as on the clock; later conversations first wait twice as long.
        let inputs = [request("s", "slow"), Input::Sync, request("m", "mute"), Input::Sync];
        let transcript = target.run(&inputs).unwrap();
        let clock = StdioTarget::new(slow, patient).run(&inputs).unwrap();
        assert_eq!(transcript.events, clock.events, "{}", transcript.render());
        assert!(matches!(transcript.events[1], Event::Received { .. }), "{}", transcript.render());
        assert_eq!(target.wait, Some((first * 2).min(patient.reply)));
        // A request that is never answered is found after the first wait, not the reply timeout.
        let started = Instant::now();
        let mute = target.run(&[request("m", "mute"), Input::Sync]).unwrap();
        assert!(started.elapsed() < patient.reply, "{:?}", started.elapsed());
        assert_eq!(mute.events.len(), 2, "{}", mute.render());
    }
    #[test]
    fn a_long_conversation_records_what_the_servers_processes_hold_and_a_leak_is_a_finding() {
        // A Python server answering every request, keeping what `leak` makes for each line it reads.
        let server = |leak: &str| {
            let script = format!(
                "import sys, json\nkept = []\nfor line in sys.stdin:\n    m = json.loads(line)\n    kept.append({leak})\n    \
                 print(json.dumps({{'jsonrpc': '2.0', 'id': m['id'], 'result': {{}}}}), flush=True)\n"
            );
            ServerCommand::from_argv(&["python3".into(), "-c".into(), script]).unwrap()
        };
        let timeouts = Timeouts { startup: Duration::from_secs(5), ..quick() };
        let inputs: Vec<Input> = (0..200).flat_map(|id| [request(id), Input::Sync]).collect();
        let run = |leak: &str| StdioTarget::new(server(leak), timeouts).cold().run(&inputs).unwrap();
        let usage = |transcript: &Transcript| -> Vec<(u64, u64, u64)> {
            let notes = transcript.events.iter().filter_map(|event| match event {
                Event::Note(crate::transcript::Note::Usage { lines, rss_kb, fds }) => Some((*lines, *rss_kb, *fds)),
                _ => None,
            });
            notes.collect()
        };
        let growth = |transcript: &Transcript| {
            let findings = crate::oracle::check(transcript, &crate::oracle::Policy::default());
            findings
                .into_iter()
                .filter(|f| f.rule == crate::oracle::rules::RESOURCE_GROWTH)
                .map(|f| f.detail)
                .collect::<Vec<_>>()
        };
        let clean = run("None");
        let samples = usage(&clean);
        assert_eq!(samples.len(), 200 / super::usage::EVERY, "{samples:?}");
        assert!(samples.iter().all(|(_, rss_kb, fds)| *rss_kb > 1_000 && *fds >= 3), "{samples:?}");
        assert_eq!(growth(&clean), Vec::<String>::new());
        // One descriptor more per line: the descriptors grow by about 200.
        let leaking = run("open('/dev/null')");
        let (first, last) = (usage(&leaking)[0], *usage(&leaking).last().unwrap());
        assert!(last.2 >= first.2 + 150, "{first:?} {last:?}");
        assert!(growth(&leaking).iter().any(|detail| detail.contains("open descriptors")), "{:?}", growth(&leaking));
        // A MiB more per line: the memory grows by about 200 MiB.
        let swelling = run("b'x' * (1 << 20)");
        assert!(growth(&swelling).iter().any(|detail| detail.contains("resident memory")), "{:?}", growth(&swelling));
        // A short conversation is not sampled.
        assert!(usage(&StdioTarget::new(server("None"), timeouts).cold().run(&inputs[..100]).unwrap()).is_empty());
    }

    #[test]
    fn a_kept_process_serves_the_next_self_contained_conversation() {
        let counting = answering(
            r#"n=0; while read -r l; do id=$(idof "$l"); case "$l" in *'"tools/list"'*) n=$((n+1)); printf '{"jsonrpc":"2.0","id":"%s","result":{"n":%s}}\n' "$id" "$n";; *) [ -n "$id" ] && reply "$id";; esac; done"#,
        );
        let list = Input::Line(
            br#"{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_vec(),
        );
        let mut target = StdioTarget::new(counting.clone(), quick()).with_sentinels(Eras::Modern);
        let first = target.run(&[list.clone(), Input::Sync]).unwrap();
        let second = target.run(&[list.clone(), Input::Sync]).unwrap();
        let count = |t: &Transcript| t.received().next().map(|l| String::from_utf8_lossy(l).contains(r#""n":2"#));
        assert_eq!((count(&first), count(&second)), (Some(false), Some(true)), "{}", second.render());
        assert_eq!(second.ending, Ending::Closed);
        // A conversation that is not self-contained gets a fresh process.
        let note = Input::Line(br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#.to_vec());
        let fresh = target.run(&[list.clone(), note, Input::Sync]).unwrap();
        assert_eq!(count(&fresh), Some(false), "{}", fresh.render());
        // A target for probes keeps none.
        let mut probes = StdioTarget::new(counting, quick()).with_sentinels(Eras::Modern).fresh_each();
        let runs = [probes.run(&[list.clone(), Input::Sync]).unwrap(), probes.run(&[list, Input::Sync]).unwrap()];
        assert_eq!(runs.map(|run| count(&run)), [Some(false), Some(false)]);
    }
}
