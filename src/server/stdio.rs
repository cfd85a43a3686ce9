//! A server under test as a child process over stdio: spawned directly (never through a shell), fed lines on
//! stdin by a writer thread (a server that stops reading cannot block the harness), its stdout read as lines with
//! a bound on each line's length and on how many lines wait unread, its stderr tail kept, and every wait bounded.
//!
//! Barriers: at each sync point, and before closing stdin, the harness waits until every request sent so far has
//! its reply (or the reply timeout passes), then until the output has been quiet for the settle time, so late
//! replies, duplicates and replies to notifications are seen. A server whose process ends early has crashed; one
//! that owes replies past the timeout, or does not exit after its input closes, has hung.
//!
//! Process hygiene: each server runs in a process group of its own and dies with the harness thread that started
//! it (a parent-death signal); when its conversation ends the whole group gets SIGTERM, then SIGKILL after
//! [`END_GRACE`], so a grandchild holding stdout open or a server deaf to SIGTERM is not left behind. The threads
//! around a process poll their pipe and stop when the conversation ends: none outlives it.

use super::{END_GRACE, MAX_EVENTS, MAX_LINE_BYTES, STDERR_TAIL_BYTES, ServerCommand, Target, Timeouts};
use crate::model::Eras;
use crate::protocol::envelope::{self, META};
use crate::protocol::era::{BATCH_VERSION, LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION};
use crate::protocol::id::is_big;
use crate::protocol::methods::{CANCELLED, DISCOVER, INITIALIZE, INITIALIZED, PING, TOOLS_CALL, TOOLS_LIST};
use crate::protocol::{Era, Frame, IdField, Outcome, RequestId, Response};
use crate::transcript::{Ending, Event, Input, Transcript};
use anyhow::{Context, Result, bail};
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, killpg, sigprocmask};
use nix::unistd::Pid;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How many stdout lines may wait unread before the server is made to wait (bounds memory).
const PENDING_LINES: usize = 64;
/// How long the stderr tail of an exited server may take to reach its end (a process that inherited the server's
/// stderr can hold it open; then the tail is taken as it stands).
const STDERR_DRAIN: Duration = Duration::from_millis(500);
/// How often a thread blocked on a server's pipe looks whether its conversation has ended.
const POLL_TICK: Duration = Duration::from_millis(20);
/// How long the output of a server that has exited is still read when something it started holds the output open.
const EXIT_DRAIN: Duration = Duration::from_millis(100);
/// The process groups of the servers running now, so they can all be ended when the harness is stopped by a
/// signal ([`end_all`]).
static GROUPS: Mutex<Vec<Pid>> = Mutex::new(Vec::new());

/// Turns transparent huge pages off for this process and the servers it starts (the setting is inherited across
/// fork and exec); the CLI calls it first thing. mimalloc, and other allocators, ask for huge pages, and every
/// process or thread that comes and goes then makes the kernel clear fresh 2 MiB pages: with a process per
/// conversation over stdio, that was a fifth of the CPU of a run of the built-in server. It changes how fast a
/// server gets memory, never what it does.
pub fn no_huge_pages() {
    let _ = nix::sys::prctl::set_thp_disable(true);
}

/// Ends every server process group still running (SIGTERM, then SIGKILL after [`END_GRACE`]): for a harness
/// stopped by a signal, which then exits without ending its conversations.
pub fn end_all() {
    let groups = GROUPS.lock().map(|groups| groups.clone()).unwrap_or_default();
    for &group in &groups {
        let _ = killpg(group, Signal::SIGTERM);
    }
    if !groups.is_empty() {
        thread::sleep(END_GRACE);
    }
    for &group in &groups {
        let _ = killpg(group, Signal::SIGKILL);
    }
}

/// One stdout line of the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputLine {
    /// The line's bytes without its newline, cut at [`MAX_LINE_BYTES`].
    pub bytes: Vec<u8>,
    /// True when the line was longer than [`MAX_LINE_BYTES`] and was cut.
    pub truncated: bool,
}

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
    /// Starts the warm spare beside the running conversation (declared last: the processes it started are ended
    /// before it is).
    spawner: Option<Spawner>,
}

/// A thread of a target's own that starts its server processes ahead, so the next one starts up while the
/// current conversation runs, and the conversation does not wait for `fork` and `exec`. A process started there
/// gets SIGKILL when that thread ends (its parent-death signal, see [`start`]), so the thread lives as long as the
/// target; it ends when the target drops it.
#[derive(Debug)]
struct Spawner {
    orders: Option<Sender<()>>,
    started: Receiver<Result<Process>>,
    thread: Option<JoinHandle<()>>,
}

impl Spawner {
    /// A spawner for `command`, with one process ordered.
    fn new(command: &ServerCommand, deadline: Option<Instant>) -> Spawner {
        let (orders, ordered) = mpsc::channel::<()>();
        let (done, started) = mpsc::channel();
        let command = command.clone();
        let thread = thread::spawn(move || {
            for () in ordered {
                if done.send(Process::spawn(&command, deadline)).is_err() {
                    return;
                }
            }
        });
        let spawner = Spawner { orders: Some(orders), started, thread: Some(thread) };
        spawner.order();
        spawner
    }

    /// Asks the thread for one more process (one is always ordered and not yet taken).
    fn order(&self) {
        if let Some(orders) = &self.orders {
            let _ = orders.send(());
        }
    }

    /// The process ordered last (waiting for its start when it is not there yet), and the next one ordered.
    fn take(&mut self) -> Result<Process> {
        let process = self.started.recv().map_err(|_| anyhow::anyhow!("the thread starting server processes ended"))?;
        self.order();
        process
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        self.orders = None;
        // Ends the processes started and not taken (before their parent-death signal would).
        while self.started.recv().is_ok() {}
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Whether a target uses sentinel requests as barriers, and for which eras.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sentinels {
    /// Timeouts and settle windows only.
    Off,
    /// The server serves these eras; the first conversation calibrates it.
    Uncalibrated(Eras),
    /// Calibrated: the server answers in order in the eras it serves; `pre_init` when a ping before `initialize`
    /// leaves its handshake as it was; `neutral` when it answers a [`Form::Neutral`] line by its id, in order, and
    /// such a line leaves every era it serves open; `fresh_alike` when it serves 2026-07-28 and answers a modern
    /// request alike whether or not it is the first its process sees ([`calibrate_history`]), so a process may be
    /// kept for the next self-contained conversation; `pace` how long it took, from its first reply to its last, to
    /// answer the calibration's pipelined lines (the slowest form).
    InOrder { eras: Eras, pre_init: bool, neutral: bool, fresh_alike: bool, pace: Duration },
}

/// How many times the calibration's pace per pair a sentinel is first waited for ([`Barrier::Sentinel::wait`]).
const PACE_FACTOR: u32 = 50;
/// The shortest first wait for a sentinel.
const MIN_WAIT: Duration = Duration::from_millis(50);

/// The first wait for a sentinel on a server calibrated at `pace`: [`PACE_FACTOR`] times the pace per calibration
/// pair, at least [`MIN_WAIT`], at most the reply timeout.
fn first_wait(pace: Duration, reply: Duration) -> Duration {
    (pace * PACE_FACTOR / CALIBRATION_PAIRS as u32).max(MIN_WAIT).min(reply)
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
            spawner: None,
        }
    }

    /// Runs every conversation on a fresh process, even one that process reuse would apply to: for probes that must
    /// see what a freshly started server does.
    pub fn fresh_each(mut self) -> StdioTarget {
        self.reuse = false;
        self
    }

    /// Turns the warm spare off (one fresh process started when each conversation starts).
    pub fn cold(mut self) -> StdioTarget {
        self.warm = false;
        self
    }

    /// Uses sentinel barriers on a server that serves `eras` (see [`Barrier`]), once a calibration run on a fresh
    /// process (before the first conversation) shows it answers in order; and, on a server that serves 2026-07-28
    /// and answers a modern request alike on a fresh process and on one that served others ([`calibrate_history`]),
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
    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        if self.timeouts.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            self.kept = None;
            self.spawner = None;
            return Err(super::DeadlinePassed.into());
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
        let (transcript, end) = process.converse(inputs, self.timeouts, barrier, keep);
        if watch.cut.load(Ordering::Relaxed) {
            return Err(super::DeadlinePassed.into());
        }
        if let Ending::Exited { code: Some(code), stderr_tail, .. } = &transcript.ending
            && *code == i32::from(super::attach::LOST_EXIT)
        {
            let tail = String::from_utf8_lossy(stderr_tail);
            if let Some(note) = tail.lines().rev().find(|line| line.starts_with(super::attach::LOST_NOTE)) {
                bail!("{note} (the fork server is gone or was never started; a stub's exit is not the server's)");
            }
        }
        Ok((transcript, end))
    }
}

/// How a conversation knows the replies before a sync point are complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Barrier {
    /// Every owed reply or the reply timeout, then quiet output for the settle time.
    Clock,
    /// A sentinel `ping` with a harness-only id, on a server (serving `eras`) calibrated to answer in order:
    /// once its reply is read, every line before it has been answered or dropped. Sent only where the
    /// conversation's own state makes a ping harmless (see `Conversation::form`); elsewhere the clock.
    Sentinel {
        /// The eras the server serves.
        eras: Eras,
        /// True when the calibration showed a ping before `initialize` leaves the handshake as it was.
        pre_init: bool,
        /// True when the calibration showed the server answers a [`Form::Neutral`] line by its id, in order, and
        /// that such a line leaves every era it serves open: a sentinel for where no ping is harmless.
        neutral: bool,
        /// How long a sentinel is waited for before the server is taken as silent: shorter than the reply timeout
        /// when derived from the calibration's pace. Such a guess stands only when the server then writes nothing
        /// more, not even the sentinel's reply, until its output ends (or the shutdown budget passes); a line after
        /// it voids the conversation, which runs again waiting the full reply timeout.
        wait: Duration,
    },
}

/// How a sentinel is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// A `ping` enveloped for 2026-07-28.
    Modern,
    /// A plain `ping`, on a connection whose `initialize` handshake is done.
    Handshake,
    /// An invalid request: a harness id and no method (`{"jsonrpc":"2.0","id":"…"}`). JSON-RPC 2.0 answers it
    /// with -32600 and, as the id can be read, that id; it is no request, so it opens no era, and a server that
    /// drops requests still answers it. Used wherever the calibration showed the server answers it in order and
    /// keeps its eras open after it; a ping only on other servers.
    Neutral,
}

impl Form {
    /// The forms a server serving `eras` is sent.
    fn of(eras: Eras) -> Vec<Form> {
        match eras {
            Eras::Modern => vec![Form::Modern],
            Eras::Handshake => vec![Form::Handshake],
            Eras::Dual => vec![Form::Modern, Form::Handshake],
            Eras::Unknown => Vec::new(),
        }
    }

    /// A sentinel with `id`, in this form: a `ping`, or the neutral line.
    fn sentinel(self, id: &str) -> Vec<u8> {
        self.request(id, PING)
    }

    /// A request of `method` with `id`, in this form (the neutral form has no method).
    fn request(self, id: &str, method: &str) -> Vec<u8> {
        let message = match self {
            Form::Modern => serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method,
                "params": { META: envelope::envelope(LATEST_MODERN_VERSION) } }),
            Form::Handshake => serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method }),
            Form::Neutral => serde_json::json!({ "jsonrpc": "2.0", "id": id }),
        };
        message.to_string().into_bytes()
    }
}

/// The prefix of every sentinel id: no generated conversation uses it, and a reply carrying it is never recorded.
const SENTINEL_PREFIX: &str = "mcp-wirefuzz-barrier-";

/// The calibrations made in this process, by server command and eras: the targets of one run share them.
static CALIBRATED: Mutex<Vec<(Vec<String>, Eras, Sentinels)>> = Mutex::new(Vec::new());

/// How `command`, serving `eras`, takes sentinels: calibrated once per command and eras (the targets of a run
/// wait for the first), each calibration on a fresh process, all started at once. In order when every form's
/// calibration passed; `pre_init` when, besides, the server serves the handshake era and a ping before
/// `initialize` passed too; `neutral` when, besides, [`calibrate_neutral`] passed for every form; `fresh_alike`
/// when, besides, the server serves 2026-07-28 and [`calibrate_history`] passed.
fn calibrated(command: &ServerCommand, eras: Eras, timeouts: Timeouts) -> Result<Sentinels> {
    let deadline = timeouts.deadline;
    let mut known = CALIBRATED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let argv = command.argv();
    if let Some((_, _, sentinels)) = known.iter().find(|(a, e, _)| *a == argv && *e == eras) {
        return Ok(*sentinels);
    }
    let spawn = || {
        Form::of(eras)
            .into_iter()
            .map(|form| Ok((form, Process::spawn(command, deadline)?)))
            .collect::<Result<Vec<_>>>()
    };
    let (forms, neutral) = (spawn()?, spawn()?);
    let handshake = eras.serves(Era::Handshake) == Some(true);
    let pre_init = if handshake { Some(Process::spawn(command, deadline)?) } else { None };
    let modern = eras.serves(Era::Modern) == Some(true);
    let history = if modern { Some(Process::spawn(command, deadline)?) } else { None };
    let paces = forms.into_iter().map(|(form, process)| calibrate(process, form, timeouts)).collect::<Vec<_>>();
    let pace = paces.iter().try_fold(Duration::ZERO, |slowest, pace| pace.map(|pace| pace.max(slowest)));
    let pre_init = pace.is_some() && pre_init.is_some_and(|process| calibrate_pre_init(process, timeouts));
    let neutral =
        pace.is_some() && neutral.into_iter().all(|(form, process)| calibrate_neutral(process, form, timeouts));
    let fresh_alike = pace.is_some() && history.is_some_and(|process| calibrate_history(process, timeouts));
    let sentinels = match pace {
        Some(pace) => Sentinels::InOrder { eras, pre_init, neutral, fresh_alike, pace },
        None => Sentinels::Off,
    };
    known.push((argv, eras, sentinels));
    Ok(sentinels)
}

/// Requests pipelined by a calibration run, each followed by a sentinel.
const CALIBRATION_PAIRS: usize = 16;

/// The `initialize` request a calibration sends, with `id`.
fn initialize(id: &str) -> Vec<u8> {
    let initialize = serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": INITIALIZE,
        "params": { "protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
            "clientInfo": { "name": "mcp-wirefuzz", "version": env!("CARGO_PKG_VERSION") } } });
    initialize.to_string().into_bytes()
}

/// The `notifications/initialized` line a calibration sends.
fn initialized() -> Vec<u8> {
    serde_json::json!({ "jsonrpc": "2.0", "method": INITIALIZED }).to_string().into_bytes()
}

/// Runs a calibration on a fresh process: `form`'s opening (an `initialize` handshake for the handshake form), then
/// [`CALIBRATION_PAIRS`] requests, each followed by a sentinel, all written at once. When every reply came, each
/// request's before the sentinel after it, and the sentinels' in order: the time from the first line read to the last
/// reply.
fn calibrate(process: Process, form: Form, timeouts: Timeouts) -> Option<Duration> {
    let mut lines = Vec::new();
    let mut expected = Vec::new();
    if form == Form::Handshake {
        lines.push(initialize("mcp-wirefuzz-calibrate-init"));
        lines.push(initialized());
        expected.push("mcp-wirefuzz-calibrate-init".to_string());
    }
    let methods: &[&str] = match form {
        Form::Modern => &[DISCOVER, TOOLS_LIST, PING, "mcp-wirefuzz/no-such-method"],
        Form::Handshake | Form::Neutral => &[PING, TOOLS_LIST, "mcp-wirefuzz/no-such-method"],
    };
    for pair in 0..CALIBRATION_PAIRS {
        let request = format!("mcp-wirefuzz-calibrate-{pair}");
        let sentinel = format!("{SENTINEL_PREFIX}{pair}");
        lines.push(form.request(&request, methods[pair % methods.len()]));
        lines.push(form.sentinel(&sentinel));
        expected.push(request);
        expected.push(sentinel);
    }
    send_all(&process, lines)?;
    // One notification is sent on a handshake: a server may answer it, wrongly, with a null id (the planted bug
    // notification-reply, which still answers every request in order).
    let strays = Some(usize::from(form == Form::Handshake));
    replies_in_order(&process, Expected { ids: &expected, opening: None, exact: false, strays }, timeouts)
        .map(|(pace, _)| pace)
}

/// Writes `lines` to a calibration's process, all at once; `None` when its input is gone.
fn send_all(process: &Process, lines: Vec<Vec<u8>>) -> Option<()> {
    let input = process.input.as_ref()?;
    for line in lines {
        let _ = input.send([line, b"\n".to_vec()].concat());
    }
    Some(())
}

/// What a calibration expects back.
struct Expected<'a> {
    /// The ids sent, in the order sent; the sentinels' start with [`SENTINEL_PREFIX`].
    ids: &'a [String],
    /// The id of the era's opening, when its reply must be a result.
    opening: Option<&'a str>,
    /// True when every reply must come in the order sent; else only each sentinel's after the replies to everything
    /// sent before it.
    exact: bool,
    /// How many replies with ids never sent may come (`None`: any number, ignored).
    strays: Option<usize>,
}

/// Reads the replies to a calibration's lines until every expected id came: the time from the first line read to
/// the last reply, and what each id got ([`outcome`]). `None` as soon as the calibration cannot pass (a reply out of the order expected or twice, too
/// many strays, the opening answered without a result), and when the output ends or stays quiet past the reply
/// timeout with the start-up allowance.
fn replies_in_order(
    process: &Process,
    expected: Expected,
    timeouts: Timeouts,
) -> Option<(Duration, HashMap<String, String>)> {
    let mut seen: Vec<&str> = Vec::new();
    let mut outcomes = HashMap::new();
    let mut strays = 0;
    let mut first = None;
    let until = Instant::now() + timeouts.reply_for(false);
    while seen.len() < expected.ids.len() {
        let Ok(Stdout::Line(line)) = process.output.recv_timeout(until.saturating_duration_since(Instant::now()))
        else {
            return None;
        };
        first.get_or_insert_with(Instant::now);
        let Ok(reply) = serde_json::from_slice::<serde_json::Value>(&line.bytes) else { continue };
        let Some(id) = reply_to(&reply) else { continue };
        let at = match &id {
            Some(RequestId::String(id)) => expected.ids.iter().position(|sent| sent == id),
            _ => None,
        };
        let Some(at) = at else {
            match expected.strays {
                Some(limit) if strays == limit => return None,
                Some(_) => strays += 1,
                None => {}
            }
            continue;
        };
        let id = expected.ids[at].as_str();
        let opening_failed = expected.opening == Some(id) && !reply.get("result").is_some_and(|r| r.is_object());
        if !expected.admits(&seen, at) || opening_failed {
            return None;
        }
        seen.push(id);
        outcomes.insert(id.to_string(), outcome(&reply));
    }
    first.map(|first| (first.elapsed(), outcomes))
}

/// What a reply says, to compare replies by, read as the oracle reads replies: `result`, its error code, or
/// `invalid` (not a valid JSON-RPC response).
fn outcome(reply: &serde_json::Value) -> String {
    match Frame::classify(reply.clone()) {
        Frame::Response(Response { outcome: Outcome::Result(_), .. }) => "result".to_string(),
        Frame::Response(Response { outcome: Outcome::Error(error), .. }) => format!("error {}", error.code),
        _ => "invalid".to_string(),
    }
}

/// Runs a calibration of history on a fresh process, for a server that serves 2026-07-28: modern requests of a few
/// methods, a `ping` first, then the same again, and a sentinel. True when each method got the same outcome both
/// times: the server answers a modern request alike whether or not its process saw others first, so a kept process
/// shows a conversation what a fresh one would. rmcp does not: it answers a modern `ping` that comes first with a
/// result, as a handshake ping, and every later one with -32601 (ping is gone in 2026-07-28).
fn calibrate_history(process: Process, timeouts: Timeouts) -> bool {
    let methods = [PING, DISCOVER, TOOLS_LIST, "mcp-wirefuzz/no-such-method"];
    let id = |round: usize, n: usize| format!("mcp-wirefuzz-history-{round}-{n}");
    let mut lines = Vec::new();
    let mut ids = Vec::new();
    for round in 0..2 {
        for (n, method) in methods.iter().enumerate() {
            lines.push(Form::Modern.request(&id(round, n), method));
            ids.push(id(round, n));
        }
    }
    let sentinel = format!("{SENTINEL_PREFIX}history");
    lines.push(Form::Modern.sentinel(&sentinel));
    ids.push(sentinel);
    let expected = Expected { ids: &ids, opening: None, exact: false, strays: Some(0) };
    send_all(&process, lines).is_some()
        && replies_in_order(&process, expected, timeouts)
            .is_some_and(|(_, outcomes)| (0..methods.len()).all(|n| outcomes.get(&id(0, n)) == outcomes.get(&id(1, n))))
}

impl Expected<'_> {
    /// True when the reply to `ids[at]` may come after the replies `seen` (ids, as they came): it did not come
    /// before, and it is in its place (the next sent, when `exact`; for a sentinel, after everything sent before it).
    fn admits(&self, seen: &[&str], at: usize) -> bool {
        let id = self.ids[at].as_str();
        let in_place = match self.exact {
            true => at == seen.len(),
            false => {
                !id.starts_with(SENTINEL_PREFIX) || self.ids[..at].iter().all(|sent| seen.contains(&sent.as_str()))
            }
        };
        in_place && !seen.contains(&id)
    }
}

/// Runs a calibration of pings before `initialize` on a fresh process: a plain sentinel, then an `initialize`
/// handshake and a second sentinel. True when both sentinels and a result to `initialize` came, in order.
fn calibrate_pre_init(process: Process, timeouts: Timeouts) -> bool {
    let expected =
        [format!("{SENTINEL_PREFIX}pre"), "mcp-wirefuzz-calibrate-init".to_string(), format!("{SENTINEL_PREFIX}post")];
    let lines = vec![
        Form::Handshake.sentinel(&expected[0]),
        initialize(&expected[1]),
        initialized(),
        Form::Handshake.sentinel(&expected[2]),
    ];
    send_all(&process, lines).is_some()
        && replies_in_order(
            &process,
            Expected { ids: &expected, opening: Some(&expected[1]), exact: false, strays: None },
            timeouts,
        )
        .is_some()
}

/// Runs a calibration of [`Form::Neutral`] lines on a fresh process, for the era of `form`: a neutral line, the
/// era's opening (an enveloped `server/discover`, or `initialize` then `notifications/initialized` with a neutral
/// line between them), a neutral line, and a ping of the form. True when every line was answered by its id, in the
/// order sent, and the opening got a result: the server answers neutral lines in order, and one sent before the
/// opening left that era open. Stops at the first reply out of order, so a server silent on neutral lines costs
/// no timeout.
fn calibrate_neutral(process: Process, form: Form, timeouts: Timeouts) -> bool {
    let opening = "mcp-wirefuzz-calibrate-open".to_string();
    let [pre, mid, post, ping] = ["pre", "mid", "post", "ping"].map(|name| format!("{SENTINEL_PREFIX}neutral-{name}"));
    let mut lines = vec![Form::Neutral.sentinel(&pre)];
    let mut expected = vec![pre];
    match form {
        Form::Modern => {
            lines.push(form.request(&opening, DISCOVER));
            expected.push(opening.clone());
        }
        _ => {
            lines.extend([initialize(&opening), Form::Neutral.sentinel(&mid), initialized()]);
            expected.extend([opening.clone(), mid]);
        }
    }
    lines.extend([Form::Neutral.sentinel(&post), form.sentinel(&ping)]);
    expected.extend([post, ping]);
    send_all(&process, lines).is_some()
        && replies_in_order(
            &process,
            Expected { ids: &expected, opening: Some(&opening), exact: true, strays: None },
            timeouts,
        )
        .is_some()
}

/// Methods that leave state on a connection (or open the handshake era): a conversation sending one, even
/// malformed, gets a process of its own.
const STATEFUL: &[&str] = &[
    INITIALIZE,
    INITIALIZED,
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
];

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
    let quoted = format!("\"{method}\"");
    line.windows(quoted.len()).any(|w| w == quoted.as_bytes()) && line.windows(8).any(|w| w == b"\"method\"")
}

/// How a conversation on a process ended for the target.
enum End {
    /// The process is done (closed, exited or killed).
    Done,
    /// The conversation ended cleanly with the process still serving: it may serve the next one.
    Kept(Process),
    /// A reply came after a sentinel had shown its request dropped: the server reorders, the transcript is void.
    Reordered,
    /// The server wrote a line after a sentinel was given up before the reply timeout: the transcript is void.
    Late,
}

/// What the stdout reader thread reports.
enum Stdout {
    Line(OutputLine),
    End,
}

/// A running server process and the threads around it.
#[derive(Debug)]
struct Process {
    child: Child,
    input: Option<Sender<Vec<u8>>>,
    output: Receiver<Stdout>,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Disconnected once the stderr reader has read the stream to its end.
    stderr_done: Receiver<()>,
    /// When the conversation is over, and the run's deadline.
    watch: Arc<Watch>,
    /// The writer and the two reader threads, joined when the process is ended.
    threads: Vec<JoinHandle<()>>,
}

impl Process {
    fn spawn(command: &ServerCommand, deadline: Option<Instant>) -> Result<Process> {
        let mut child = start(command).with_context(|| format!("cannot start server `{}`", command.program))?;
        let group = Pid::from_raw(child.id() as i32);
        if let Ok(mut groups) = GROUPS.lock() {
            groups.push(group);
        }
        let watch = Arc::new(Watch { over: AtomicBool::new(false), cut: AtomicBool::new(false), deadline, group });
        let mut stdin = Pipe::new(child.stdin.take().context("child stdin")?, &watch)?;
        let stdout = Pipe::new(child.stdout.take().context("child stdout")?, &watch)?;
        let stderr = Pipe::new(child.stderr.take().context("child stderr")?, &watch)?;
        let (input, lines) = mpsc::channel::<Vec<u8>>();
        let writer = thread::spawn(move || {
            for line in lines {
                if stdin.write_all(&line).and_then(|_| stdin.flush()).is_err() {
                    return;
                }
            }
        });
        let (sender, output) = mpsc::sync_channel(PENDING_LINES);
        let reader = thread::spawn(move || read_lines(stdout, sender));
        let tail = Arc::new(Mutex::new(Vec::new()));
        let writer_tail = Arc::clone(&tail);
        let (done, stderr_done) = mpsc::channel::<()>();
        let tail_reader = thread::spawn(move || {
            read_tail(stderr, &writer_tail, STDERR_TAIL_BYTES);
            drop(done);
        });
        let threads = vec![writer, reader, tail_reader];
        Ok(Process { child, input: Some(input), output, stderr: tail, stderr_done, watch, threads })
    }

    /// Ends the process and everything it started: its group gets SIGTERM, then SIGKILL after [`END_GRACE`] if
    /// anything of it is still there; the process is reaped and the threads around it are joined.
    fn end(&mut self) {
        self.input = None;
        self.watch.over.store(true, Ordering::Relaxed);
        // The reader may wait for room in the channel: dropping the receiver frees it.
        drop(std::mem::replace(&mut self.output, mpsc::sync_channel(0).1));
        end_group(&mut self.child, END_GRACE);
        if let Ok(mut groups) = GROUPS.lock() {
            groups.retain(|&group| group != self.watch.group);
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }

    /// Runs one conversation on this process. It ends with stdin closed and the process gone, or, with `keep` and a
    /// clean run (every sentinel answered, nothing dropped), with the process handed back still serving.
    fn converse(mut self, inputs: &[Input], timeouts: Timeouts, barrier: Barrier, keep: bool) -> (Transcript, End) {
        let mut talk = Conversation {
            process: &mut self,
            events: Vec::new(),
            open: HashMap::new(),
            unmatched: 0,
            stalled: false,
            heard: false,
            cut: false,
            batches: Batches::default(),
            barrier,
            handshake: Handshake::default(),
            sentinels: 0,
            settled: false,
            dropped: HashSet::new(),
            reordered: false,
            tool_calls: HashMap::new(),
            order: HashMap::new(),
            sent: 0,
            answered_up_to: None,
            let_go: HashSet::new(),
            reused: HashSet::new(),
            twins_answered: HashSet::new(),
            guessed: false,
            late: false,
            unsynced: false,
            spoke: false,
        };
        // Only a ping sentinel reads the era the lines ahead open (`Conversation::form`): the clock and neutral
        // sentinels need not parse them at every sync point.
        let reads_ahead = matches!(barrier, Barrier::Sentinel { neutral: false, .. });
        for (at, input) in inputs.iter().enumerate() {
            match input {
                Input::Line(line) => talk.send(line),
                Input::Sync => {
                    if reads_ahead {
                        talk.handshake.ahead = first_opening(&inputs[at + 1..]);
                    }
                    if let Some(ending) = talk.barrier(timeouts) {
                        return talk.finish(ending);
                    }
                    talk.events.push(Event::Sync);
                }
            }
        }
        talk.handshake.ahead = first_opening(&[]);
        if let Some(ending) = talk.barrier(timeouts) {
            return talk.finish(ending);
        }
        let idle = talk.dropped.is_empty() && talk.let_go.is_empty();
        if keep && talk.settled && !talk.stalled && !talk.reordered && !talk.cut && idle {
            let events = std::mem::take(&mut talk.events);
            return (Transcript { events, ending: Ending::Closed }, End::Kept(self));
        }
        if let Some(ending) = talk.linger(timeouts.linger, timeouts.reply) {
            return talk.finish(ending);
        }
        let ending = talk.close(timeouts);
        talk.finish(ending)
    }

    /// The stderr tail of an exited process, once its reader has read to the end (or [`STDERR_DRAIN`] passed):
    /// the exit is often seen before the reader thread has read the last bytes written.
    fn stderr_tail(&self) -> Vec<u8> {
        let _ = self.stderr_done.recv_timeout(STDERR_DRAIN);
        self.stderr.lock().map(|tail| tail.clone()).unwrap_or_default()
    }

    fn exited(&mut self, status: ExitStatus) -> Ending {
        Ending::Exited { code: status.code(), signal: status.signal(), stderr_tail: self.stderr_tail() }
    }

    /// Waits up to `limit` for the process to exit, looking again after 50 µs, then twice as long each time up to
    /// 1 ms: a server usually exits within microseconds of closing its output.
    fn wait_for_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + limit;
        let mut pause = Duration::from_micros(50);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < until => thread::sleep(pause),
                _ => return None,
            }
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.end();
    }
}

/// Starts `command` with piped stdio in a process group of its own (so the whole group can be ended), set to get
/// SIGKILL when the thread that started it dies (Linux's parent-death signal), so a harness killed with `kill -9`
/// does not leave it running. It inherits the harness's transparent huge pages setting ([`no_huge_pages`]).
fn start(command: &ServerCommand) -> std::io::Result<Child> {
    let parent = nix::unistd::getpid();
    let mut process = Command::new(&command.program);
    process.args(&command.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    // SAFETY: the closure runs between fork and exec and only makes three system calls (sigprocmask, prctl,
    // getppid); it allocates nothing and takes no lock.
    unsafe {
        process.pre_exec(move || {
            // The harness blocks the signals it waits for; the server starts with none blocked.
            sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            // The harness died before the signal was armed: the child was already orphaned.
            if nix::unistd::getppid() != parent {
                return Err(nix::errno::Errno::ESRCH.into());
            }
            Ok(())
        });
    }
    process.spawn()
}

/// Ends the process group led by `child`: SIGTERM to the group, SIGKILL to what is left of it after `grace`, and
/// reaps the child. A group already gone costs nothing.
fn end_group(child: &mut Child, grace: Duration) {
    let group = Pid::from_raw(child.id() as i32);
    if killpg(group, Signal::SIGTERM).is_ok() {
        let until = Instant::now() + grace;
        loop {
            // Reaping the leader lets the group empty; a group with no process left refuses signal 0.
            let _ = child.try_wait();
            if killpg(group, None).is_err() {
                break;
            }
            if Instant::now() >= until {
                let _ = killpg(group, Signal::SIGKILL);
                break;
            }
            thread::sleep(Duration::from_millis(2));
        }
    }
    let _ = child.wait();
}

/// What the threads around a process watch: the end of its conversation, and the run's deadline.
#[derive(Debug)]
struct Watch {
    /// Set when the conversation is over: the pipe threads stop at their next poll.
    over: AtomicBool,
    /// Set when the deadline passed while the process ran: it was killed, its conversation is not judged.
    cut: AtomicBool,
    /// When the run must be over.
    deadline: Option<Instant>,
    /// The process group of the server.
    group: Pid,
}

impl Watch {
    /// True once the conversation is over; past the deadline, kills the server's group first (once), so the
    /// conversation ends at once.
    fn over(&self) -> bool {
        let late = self.deadline.is_some_and(|deadline| Instant::now() >= deadline);
        if late && !self.over.load(Ordering::Relaxed) && !self.cut.swap(true, Ordering::Relaxed) {
            let _ = killpg(self.group, Signal::SIGKILL);
        }
        self.over.load(Ordering::Relaxed)
    }
}

/// One end of a pipe to a server, made non-blocking and waited on with `poll`, so the thread using it stops
/// within [`POLL_TICK`] of its conversation's end even when something the server started still holds the other end.
struct Pipe<F> {
    file: F,
    watch: Arc<Watch>,
}

impl<F: AsFd> Pipe<F> {
    fn new(file: F, watch: &Arc<Watch>) -> Result<Pipe<F>> {
        let flags = OFlag::from_bits_truncate(fcntl(file.as_fd(), FcntlArg::F_GETFL)?);
        fcntl(file.as_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
        Ok(Pipe { file, watch: Arc::clone(watch) })
    }

    /// Runs `io` until it does not block; `None` once the conversation is over.
    fn retry<T>(
        &mut self,
        ready: PollFlags,
        mut io: impl FnMut(&mut F) -> std::io::Result<T>,
    ) -> Option<std::io::Result<T>> {
        loop {
            if self.watch.over() {
                return None;
            }
            match io(&mut self.file) {
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    let tick = PollTimeout::try_from(POLL_TICK).unwrap_or(PollTimeout::NONE);
                    let _ = poll(&mut [PollFd::new(self.file.as_fd(), ready)], tick);
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                done => return Some(done),
            }
        }
    }
}

impl<F: Read + AsFd> Read for Pipe<F> {
    /// Reads what is there; end of input once the conversation is over.
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        self.retry(PollFlags::POLLIN, |file| file.read(buffer)).unwrap_or(Ok(0))
    }
}

impl<F: Write + AsFd> Write for Pipe<F> {
    /// Writes what the pipe takes; a broken pipe once the conversation is over.
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let over = || Err(std::io::ErrorKind::BrokenPipe.into());
        self.retry(PollFlags::POLLOUT, |file| file.write(bytes)).unwrap_or_else(over)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// The state of one conversation: what was recorded and which requests still owe a reply.
struct Conversation<'a> {
    process: &'a mut Process,
    events: Vec<Event>,
    /// Open request ids and how many requests with that id are open.
    open: HashMap<RequestId, usize>,
    /// Replies since the last barrier whose id matched no open request (a wrong id, or null).
    unmatched: usize,
    /// Set once a reply failed to come in time; later barriers only settle.
    stalled: bool,
    /// Set once the server has written a line (it has started).
    heard: bool,
    /// Set once an event was dropped past [`MAX_EVENTS`]: the transcript ends as cut.
    cut: bool,
    /// Whether the connection takes batches (it negotiated 2025-03-26), so a batch's requests owe replies too.
    batches: Batches,
    /// How barriers know the replies are complete.
    barrier: Barrier,
    /// How far the conversation's own `initialize` handshake is (when a plain sentinel becomes harmless).
    handshake: Handshake,
    /// Sentinels sent so far (each gets the next id).
    sentinels: u64,
    /// True when the last barrier ended on a sentinel's reply.
    settled: bool,
    /// Requests a sentinel showed dropped; a reply to one later means the server reorders.
    dropped: HashSet<RequestId>,
    /// Set when a sentinel was given up after a first wait shorter than the reply timeout.
    guessed: bool,
    /// Set when the server wrote a line after that: the guess was wrong, the transcript is void.
    late: bool,
    /// Set when a line was sent since the last barrier. Without one, a barrier on a server calibrated to answer in
    /// order has nothing to wait for: the last barrier (or the start) saw everything the lines before it caused, and
    /// the clock would only wait for lines the server writes on its own.
    unsynced: bool,
    /// Set once the conversation has written a line.
    spoke: bool,
    /// Set when a reply came after a sentinel had shown its request dropped.
    reordered: bool,
    /// The well-formed `tools/call` requests sent, by id: the `notifications/cancelled` that lets each go, and the
    /// order it was sent in ([`Conversation::cancel_slow_tools`]).
    tool_calls: HashMap<RequestId, (Vec<u8>, u64)>,
    /// The send order of every request that owes a reply (the last one sent with that id).
    order: HashMap<RequestId, u64>,
    /// Requests sent so far.
    sent: u64,
    /// The latest send order among the requests answered (a sentinel's reply answers everything sent before it).
    answered_up_to: Option<u64>,
    /// Requests no longer waited for: tool calls cancelled after the reply timeout, and requests whose id the
    /// client reused while they were open once one of the twins was answered. A late reply to one is neither
    /// counted nor a reorder.
    let_go: HashSet<RequestId>,
    /// Ids sent while a request with the same id was open (the client reused them).
    reused: HashSet<RequestId>,
    /// Reused ids a reply came for: the oracle takes such a group of twins as answered, whichever the reply was
    /// for, and judges none of them.
    twins_answered: HashSet<RequestId>,
}

/// The conversation's own handshake, as the server sees it: the era its first request opened, whether an
/// `initialize` got a result, and whether `notifications/initialized` was sent.
#[derive(Default)]
struct Handshake {
    opened: Option<Era>,
    /// At a sync point, the era the next request after it will open ([`first_opening`] of the lines still to send;
    /// `None` when unclear): a sentinel sent there opens the same era. Lines already sent had their say before any
    /// sentinel, so only the lines ahead can make it unclear.
    ahead: Option<Option<Era>>,
    initialize_ids: Vec<RequestId>,
    initialized: bool,
    result: bool,
}

/// How far the connection is from taking batches: the ids of the `initialize` requests that asked for 2025-03-26,
/// until a result grants it.
#[derive(Default)]
struct Batches {
    asked: Vec<RequestId>,
    granted: bool,
}

impl Conversation<'_> {
    fn send(&mut self, line: &[u8]) {
        self.unsynced = true;
        self.spoke = true;
        self.record(Event::Sent(line.to_vec()));
        self.handshake.sent(line);
        if self.batches.granted && line.trim_ascii_start().starts_with(b"[") {
            if let Ok(serde_json::Value::Array(items)) = serde_json::from_slice(line) {
                for item in items {
                    if let Some(id) = owed_reply(&serde_json::to_vec(&item).unwrap_or_default()) {
                        self.owe(id);
                    }
                }
            }
        } else if let Some(id) = owed_reply(line) {
            if !self.batches.granted && asks_for_batches(line) {
                self.batches.asked.push(id.clone());
            }
            self.sent += 1;
            self.order.insert(id.clone(), self.sent);
            if let Some(cancel) = tool_call_cancel(line) {
                self.tool_calls.insert(id.clone(), (cancel, self.sent));
            }
            self.owe(id);
        }
        if let Some(input) = &self.process.input {
            let mut framed = line.to_vec();
            framed.push(b'\n');
            let _ = input.send(framed);
        }
    }

    fn receive(&mut self, line: OutputLine) {
        self.heard = true;
        self.late |= self.guessed;
        let value = serde_json::from_slice(&line.bytes).ok();
        if let Some(reply) = &value {
            if sentinel_reply(reply).is_some() {
                return;
            }
            if let Some(Some(id)) = reply_to(reply) {
                self.reordered |= self.dropped.contains(&id);
                self.handshake.answered(&id, reply);
            }
        }
        match value {
            Some(serde_json::Value::Array(items)) if self.batches.granted => {
                items.iter().for_each(|item| self.take(item))
            }
            Some(reply) => {
                if !self.batches.asked.is_empty() && grants_batches(&reply, &self.batches.asked) {
                    self.batches = Batches { asked: Vec::new(), granted: true };
                }
                self.take(&reply);
            }
            None => {}
        }
        self.record(Event::Received { line: line.bytes, truncated: line.truncated });
    }

    /// Counts a request sent with `id` as owed its reply, noting an id reused while a request with it is open.
    fn owe(&mut self, id: RequestId) {
        if self.open.contains_key(&id) {
            self.reused.insert(id.clone());
        }
        *self.open.entry(id).or_default() += 1;
    }

    /// Counts a reply against the request it answers, or as unmatched.
    fn take(&mut self, reply: &serde_json::Value) {
        match reply_to(reply) {
            Some(Some(id)) if self.let_go.contains(&id) && !self.open.contains_key(&id) => {}
            Some(Some(id)) if self.open.contains_key(&id) => {
                if self.reused.contains(&id) {
                    self.twins_answered.insert(id.clone());
                }
                let answered = self.order.get(&id).copied();
                self.answered_up_to = self.answered_up_to.max(answered);
                let count = self.open.entry(id.clone()).or_default();
                *count -= 1;
                if *count == 0 {
                    self.open.remove(&id);
                }
            }
            Some(_) => self.unmatched += 1,
            None => {}
        }
    }

    /// True while some request has neither its reply nor a reply with a wrong id that may stand for it.
    fn owes(&self) -> bool {
        self.open.values().sum::<usize>() > self.unmatched
    }

    fn record(&mut self, event: Event) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        } else {
            self.cut = true;
        }
    }

    /// Waits for every owed reply (up to the reply timeout), then for quiet output; `Some` when the server ended.
    /// Requests still unanswered afterwards are not waited for again. Where a sentinel is harmless, its reply ends
    /// the wait instead of the clock ([`Conversation::sentinel_barrier`]).
    fn barrier(&mut self, timeouts: Timeouts) -> Option<Ending> {
        if !std::mem::take(&mut self.unsynced) && matches!(self.barrier, Barrier::Sentinel { .. }) {
            return None;
        }
        self.settled = false;
        let started = Instant::now();
        let limit = if self.stalled { timeouts.settle } else { timeouts.reply_for(self.heard) };
        loop {
            // A sentinel waits for a server still starting (the clock, owed nothing, would wait only the settle
            // time): so a line it crashes on is read before its input closes, however slow the machine. Not
            // sent before the conversation has sent anything.
            if !self.stalled
                && (self.heard || self.spoke)
                && let Some(form) = self.form()
            {
                return self.sentinel_barrier(form, timeouts);
            }
            let left = limit.saturating_sub(started.elapsed());
            let wait = if self.owes() { left } else { timeouts.settle.min(left) };
            match self.process.output.recv_timeout(wait) {
                Ok(Stdout::Line(line)) => self.receive(line),
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => return self.ended(timeouts),
                Err(RecvTimeoutError::Timeout) => {
                    if !self.owes() || started.elapsed() >= limit {
                        if !self.stalled {
                            self.cancel_slow_tools();
                        }
                        self.stalled |= self.owes();
                        self.open.clear();
                        self.unmatched = 0;
                        return None;
                    }
                }
            }
        }
    }

    /// The sentinel form the conversation may send now, if any: only on a server calibrated to answer in order,
    /// and only in a state where a `ping` changes nothing the conversation would see. A modern-only server takes
    /// an enveloped ping at any time; a dual-era server once the conversation's first request opened the modern
    /// era (a ping must not open the era for it); a handshake connection once the conversation's own `initialize`
    /// got a result and it sent `notifications/initialized`, or at any time when the calibration showed a ping
    /// before `initialize` is harmless (on a dual-era server, once the first request opened the handshake era).
    /// A server calibrated for [`Form::Neutral`] lines gets one at any time instead (it opens no era).
    fn form(&self) -> Option<Form> {
        let Barrier::Sentinel { eras, pre_init, neutral, .. } = self.barrier else { return None };
        if neutral {
            return Some(Form::Neutral);
        }
        let ready = pre_init || (self.handshake.result && self.handshake.initialized);
        let era = match (self.handshake.opened, self.handshake.ahead) {
            (Some(era), _) | (None, Some(Some(era))) => Some(era),
            // No request ahead: a modern ping opens an era no line of the conversation will see.
            (None, Some(None)) => Some(Era::Modern),
            (None, None) => None,
        };
        match (eras, era) {
            (Eras::Modern, _) | (Eras::Dual, Some(Era::Modern)) => Some(Form::Modern),
            (Eras::Handshake, _) | (Eras::Dual, Some(Era::Handshake)) if ready => Some(Form::Handshake),
            _ => None,
        }
    }

    /// Sends a sentinel and reads until its reply; when a request is still owed then, a second one (a server that
    /// reads its input in chunks may have read the first sentinel with the request and answered it first). Requests
    /// owed after that were dropped. A sentinel not answered within the barrier's wait stalls the conversation, as an
    /// owed reply would; when that wait is shorter than the reply timeout, the stall is a guess that stands only while
    /// the server stays silent (see [`Barrier::Sentinel`]). The start-up allowance counts only until the server's
    /// first line.
    fn sentinel_barrier(&mut self, form: Form, timeouts: Timeouts) -> Option<Ending> {
        let Barrier::Sentinel { wait, .. } = self.barrier else { return None };
        let guess = wait < timeouts.reply;
        for _ in 0..2 {
            let id = format!("{SENTINEL_PREFIX}{}", self.sentinels);
            self.sentinels += 1;
            if let Some(input) = &self.process.input {
                let mut line = form.sentinel(&id);
                line.push(b'\n');
                let _ = input.send(line);
            }
            let mut until = Instant::now() + if self.heard { wait } else { wait + timeouts.startup };
            loop {
                // A server that writes without end never lets the wait time out: the clock is read here too.
                let received = match Instant::now() < until {
                    true => self.process.output.recv_timeout(until.saturating_duration_since(Instant::now())),
                    false => Err(RecvTimeoutError::Timeout),
                };
                match received {
                    Ok(Stdout::Line(line)) => {
                        let answered = serde_json::from_slice::<serde_json::Value>(&line.bytes)
                            .is_ok_and(|reply| sentinel_reply(&reply) == Some(id.as_str()));
                        if guess && !self.heard {
                            until = until.min(Instant::now() + wait);
                        }
                        self.receive(line);
                        if answered {
                            break;
                        }
                    }
                    Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => return self.ended(timeouts),
                    Err(RecvTimeoutError::Timeout) => {
                        self.stalled = true;
                        self.guessed |= guess;
                        self.open.clear();
                        self.unmatched = 0;
                        return None;
                    }
                }
            }
            if !self.owes() {
                break;
            }
        }
        // The sentinel's reply answers everything sent before it: a tool call still open is running, not dropped;
        // but one whose id the client reused is not waited for once a twin was answered.
        self.answered_up_to = Some(self.sent);
        let twins: Vec<RequestId> = self.open.keys().filter(|id| self.twins_answered.contains(*id)).cloned().collect();
        for id in twins {
            self.open.remove(&id);
            self.let_go.insert(id);
        }
        if let Some(ending) = self.await_slow_tools(timeouts) {
            return Some(ending);
        }
        self.dropped.extend(self.open.drain().map(|(id, _)| id));
        self.unmatched = 0;
        self.settled = true;
        None
    }

    /// The open tool calls the server answered later requests past: running, not dropped.
    fn slow_tools(&self) -> Vec<RequestId> {
        let Some(up_to) = self.answered_up_to else { return Vec::new() };
        self.open.keys().filter(|id| self.tool_calls.get(*id).is_some_and(|(_, at)| *at < up_to)).cloned().collect()
    }

    /// After a sentinel's reply: waits up to the reply timeout for the tool calls still running, then cancels those
    /// still open ([`Conversation::cancel_slow_tools`]); `Some` when the server ended.
    fn await_slow_tools(&mut self, timeouts: Timeouts) -> Option<Ending> {
        let until = Instant::now() + timeouts.reply;
        while !self.slow_tools().is_empty() && Instant::now() < until {
            match self.process.output.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(Stdout::Line(line)) => self.receive(line),
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => return self.ended(timeouts),
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
        self.cancel_slow_tools();
        None
    }

    /// Cancels every tool call still open at the reply timeout while the server answered a request sent after it:
    /// a slow tool, not a hung server (lifecycle.mdx §Timeouts: on a timeout the sender SHOULD issue a
    /// cancellation notification and stop waiting; cancellation.mdx: no response is owed then). The
    /// `notifications/cancelled` lines are recorded, so the oracle owes those calls nothing.
    fn cancel_slow_tools(&mut self) {
        for id in self.slow_tools() {
            self.open.remove(&id);
            if let Some((cancel, _)) = self.tool_calls.get(&id).cloned() {
                self.record(Event::Sent(cancel.clone()));
                if let Some(input) = &self.process.input {
                    let mut framed = cancel;
                    framed.push(b'\n');
                    let _ = input.send(framed);
                }
            }
            self.let_go.insert(id);
        }
    }

    /// The output ended: how the process exited, once it has (waiting up to the reply timeout for it).
    fn ended(&mut self, timeouts: Timeouts) -> Option<Ending> {
        let status = self.process.wait_for_exit(timeouts.reply)?;
        Some(self.process.exited(status))
    }

    /// Collects output for up to `linger` with stdin still open; `Some` when the server ended its output in that
    /// time (then it gets up to `exit` to exit).
    fn linger(&mut self, linger: Duration, exit: Duration) -> Option<Ending> {
        let until = Instant::now() + linger;
        while !linger.is_zero() {
            match self.process.output.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(Stdout::Line(line)) => self.receive(line),
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => {
                    let status = self.process.wait_for_exit(exit)?;
                    return Some(self.process.exited(status));
                }
                Err(RecvTimeoutError::Timeout) => return None,
            }
        }
        None
    }

    /// Closes stdin, collects what the server writes until it closes stdout, and waits for it to exit. A server
    /// that exits while something it started (a grandchild) holds its stdout open has closed: what it wrote is
    /// read for [`EXIT_DRAIN`] more, and the grandchild is ended with the server's process group.
    fn close(&mut self, timeouts: Timeouts) -> Ending {
        self.process.input = None;
        let budget = if self.heard { timeouts.shutdown.max(timeouts.reply) } else { timeouts.reply_for(false) };
        let until = Instant::now() + budget;
        let mut exited: Option<Instant> = None;
        loop {
            let limit = exited.map_or(until, |at| until.min(at + EXIT_DRAIN));
            let wait = limit.saturating_duration_since(Instant::now()).min(POLL_TICK);
            match self.process.output.recv_timeout(wait) {
                Ok(Stdout::Line(line)) => self.receive(line),
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    if exited.is_none()
                        && let Ok(Some(status)) = self.process.child.try_wait()
                    {
                        self.exits(status);
                        exited = Some(Instant::now());
                    }
                    if Instant::now() >= limit {
                        if exited.is_some() {
                            return Ending::Closed;
                        }
                        return Ending::Hung { waited_ms: budget.as_millis() as u64 };
                    }
                }
            }
        }
        match self.process.wait_for_exit(until.saturating_duration_since(Instant::now())) {
            Some(status) => {
                self.exits(status);
                Ending::Closed
            }
            None => Ending::Hung { waited_ms: budget.as_millis() as u64 },
        }
    }

    /// Follows the exit of a server whose input was closed: after a guessed stall, an exit that is not a success
    /// voids the guess (the server may have been about to crash on a line before its input closed, which the full
    /// reply timeout would have seen as a crash).
    fn exits(&mut self, status: ExitStatus) {
        self.late |= self.guessed && !status.success();
    }

    /// The transcript, and how the process ended for the target: void when the server showed it reorders, or that
    /// a guessed stall was wrong.
    fn finish(self, ending: Ending) -> (Transcript, End) {
        let end = match (self.reordered, self.late) {
            (true, _) => End::Reordered,
            (false, true) => End::Late,
            (false, false) => End::Done,
        };
        let ending = if self.cut { Ending::Cut { events: self.events.len() } } else { ending };
        (Transcript { events: self.events, ending }, end)
    }
}

/// The era the first request of `inputs` opens: `Some(None)` when no line may be a request, `None` when unclear.
/// A lenient server may take a line that is not a well-formed request as one (a batch, an object with a method
/// and extra members, a value with trailing bytes), so every line up to the first well-formed request that may be
/// one must open the same era; a notification before it makes it unclear (a buggy server may let it pick the era).
fn first_opening(inputs: &[Input]) -> Option<Option<Era>> {
    let mut era = None;
    for input in inputs {
        let Input::Line(line) = input else { continue };
        let (this, well_formed) = match Frame::parse(line) {
            Frame::Request(request) => (envelope::opening_era(&request.method, request.params.as_ref()), true),
            // A server may (wrongly) let a notification pick its era: a sentinel ahead of it would pick first.
            Frame::Notification(_) => return None,
            Frame::Blank | Frame::Response(_) => continue,
            _ => match lenient_opening(line) {
                Some(this) => (this, false),
                None => continue,
            },
        };
        if era.is_some_and(|era| era != this) {
            return None;
        }
        era = Some(this);
        if well_formed {
            break;
        }
    }
    Some(era)
}

/// The era a line that is not a well-formed request would open if a lenient server took it as one: its first JSON
/// value, or a batch's first member, as an object with a method and an id.
fn lenient_opening(line: &[u8]) -> Option<Era> {
    let value = serde_json::Deserializer::from_slice(line).into_iter::<serde_json::Value>().next()?.ok()?;
    let object = match &value {
        serde_json::Value::Array(items) => items.first()?,
        object => object,
    };
    let method = object.get("method")?;
    object.get("id")?;
    Some(envelope::opening_era(method.as_str().unwrap_or_default(), object.get("params")))
}

/// The sentinel id a reply answers, when it answers one (its id carries [`SENTINEL_PREFIX`]).
fn sentinel_reply(reply: &serde_json::Value) -> Option<&str> {
    reply_to(reply)?;
    reply.get("id")?.as_str().filter(|id| id.starts_with(SENTINEL_PREFIX))
}

impl Handshake {
    /// Follows a line the conversation sent.
    fn sent(&mut self, line: &[u8]) {
        match Frame::parse(line) {
            Frame::Request(request) => {
                self.opened.get_or_insert(envelope::opening_era(&request.method, request.params.as_ref()));
                if request.method == INITIALIZE {
                    self.initialize_ids.push(request.id);
                }
            }
            Frame::Notification(notification) if notification.method == INITIALIZED => self.initialized = true,
            _ => {}
        }
    }

    /// Follows a reply to request `id`.
    fn answered(&mut self, id: &RequestId, reply: &serde_json::Value) {
        if self.initialize_ids.contains(id) && reply.get("result").is_some_and(|r| r.is_object()) {
            self.result = true;
        }
    }
}

/// The id a line's reply will carry, when the line is a request that owes one: a valid request whose params are
/// absent or an object (MCP's shape; anything else is malformed and may be answered or not).
fn owed_reply(line: &[u8]) -> Option<RequestId> {
    match Frame::parse(line) {
        Frame::Request(request) if request.params.as_ref().is_none_or(|p| p.is_object()) => Some(request.id),
        _ => None,
    }
}

/// For a well-formed `tools/call` request (params an object naming a tool, `_meta` absent or an object, no member
/// beyond the four, a string id or an integer one within ±(2^53 − 1): a request every parser reads alike, so that
/// dropping it is no finding of its own), the `notifications/cancelled` that cancels it, carrying its id as sent and
/// its `_meta` (the era's envelope).
fn tool_call_cancel(line: &[u8]) -> Option<Vec<u8>> {
    let message: serde_json::Value = serde_json::from_slice(line).ok()?;
    let params = message.get("params")?.as_object()?;
    if message.get("method")?.as_str()? != TOOLS_CALL || !params.get("name")?.is_string() {
        return None;
    }
    let plain = message.as_object()?.keys().all(|key| matches!(key.as_str(), "jsonrpc" | "id" | "method" | "params"));
    let id_alike = IdField::of(message.get("id")).valid().is_some_and(|id| !is_big(id));
    if !plain || !id_alike {
        return None;
    }
    let mut cancel = serde_json::json!({ "requestId": message.get("id")?, "reason": "timed out" });
    match params.get(META) {
        None => {}
        Some(serde_json::Value::Object(meta)) => {
            let mut meta = meta.clone();
            meta.remove("progressToken");
            cancel[META] = serde_json::Value::Object(meta);
        }
        Some(_) => return None,
    }
    let notification = serde_json::json!({ "jsonrpc": "2.0", "method": CANCELLED, "params": cancel });
    Some(notification.to_string().into_bytes())
}

/// True for an `initialize` request asking for the version whose connections take batches.
fn asks_for_batches(line: &[u8]) -> bool {
    matches!(Frame::parse(line), Frame::Request(request) if request.method == INITIALIZE
        && request.params.as_ref().and_then(|p| p.get("protocolVersion")) == Some(&BATCH_VERSION.into()))
}

/// True for a result to one of the `asked` initialize requests that grants the version whose connections take
/// batches.
fn grants_batches(reply: &serde_json::Value, asked: &[RequestId]) -> bool {
    IdField::of(reply.get("id")).valid().is_some_and(|id| asked.contains(id))
        && reply.get("result").and_then(|r| r.get("protocolVersion")) == Some(&BATCH_VERSION.into())
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

fn read_lines(stdout: impl Read, sender: SyncSender<Stdout>) {
    let mut reader = BufReader::new(stdout);
    while let Ok(Some(line)) = read_bounded_line(&mut reader, MAX_LINE_BYTES) {
        if sender.send(Stdout::Line(line)).is_err() {
            return;
        }
    }
    let _ = sender.send(Stdout::End);
}

/// Reads one line, keeping at most `max` bytes of it; `None` at end of input. A final line without a newline is
/// returned as a line.
pub fn read_bounded_line(reader: &mut impl BufRead, max: usize) -> std::io::Result<Option<OutputLine>> {
    let mut bytes = Vec::new();
    let mut truncated = false;
    let mut saw_any = false;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(saw_any.then_some(OutputLine { bytes, truncated }));
        }
        saw_any = true;
        let (chunk, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..at], Some(at + 1)),
            None => (buffer, None),
        };
        let room = max.saturating_sub(bytes.len());
        truncated |= chunk.len() > room;
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(buffer.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Some(OutputLine { bytes, truncated }));
        }
    }
}

/// Keeps the last `keep` bytes of `stream` in `tail` until the stream ends.
pub(crate) fn read_tail(mut stream: impl Read, tail: &Mutex<Vec<u8>>, keep: usize) {
    let mut chunk = [0u8; 8192];
    while let Ok(n) = stream.read(&mut chunk) {
        if n == 0 {
            return;
        }
        let Ok(mut tail) = tail.lock() else { return };
        tail.extend_from_slice(&chunk[..n]);
        if tail.len() > keep {
            let excess = tail.len() - keep;
            tail.drain(..excess);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> ServerCommand {
        ServerCommand::from_argv(&["sh".into(), "-c".into(), script.into()]).unwrap()
    }

    fn quick() -> Timeouts {
        Timeouts {
            reply: Duration::from_millis(300),
            settle: Duration::from_millis(10),
            startup: Duration::from_millis(200),
            shutdown: Duration::from_millis(300),
            linger: Duration::ZERO,
            deadline: None,
        }
    }

    fn request(id: u32) -> Input {
        Input::Line(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).into_bytes())
    }

    #[test]
    fn a_stub_that_ran_no_server_is_a_harness_error_and_any_other_exit_is_the_servers() {
        let note = super::super::attach::LOST_NOTE;
        let lost = sh(&format!("echo 'starting' >&2; echo '{note} no fork server at /x.sock' >&2; exit 125"));
        let error = StdioTarget::new(lost, quick()).run(&[request(1), Input::Sync]).unwrap_err();
        assert!(error.to_string().contains("the fork server is gone"), "{error:#}");
        // The same code from a server itself, without the stub's note: the server's exit, judged as such.
        let exits = sh("echo 'bye' >&2; exit 125");
        let transcript = StdioTarget::new(exits, quick()).run(&[request(1), Input::Sync]).unwrap();
        assert!(matches!(transcript.ending, Ending::Exited { code: Some(125), .. }), "{transcript:?}");
    }

    #[test]
    fn a_calibration_compares_replies_by_result_or_error_code() {
        let said = |reply: serde_json::Value| outcome(&reply);
        assert_eq!(said(serde_json::json!({"jsonrpc": "2.0", "id": "a", "result": {}})), "result");
        let refused = serde_json::json!({"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "no"}});
        assert_eq!(said(refused), "error -32601");
        // Both members, or an error without a code, is no valid response: not a result, whatever it carries.
        let both = serde_json::json!({"jsonrpc": "2.0", "id": "a", "result": {}, "error": {"code": 1, "message": ""}});
        assert_eq!(said(both), "invalid");
        assert_eq!(said(serde_json::json!({"jsonrpc": "2.0", "id": "a", "error": {}})), "invalid");
    }

    #[test]
    fn long_lines_are_cut_not_buffered() {
        let mut input = vec![b'x'; 10_000];
        input.extend_from_slice(b"\nshort\nlast");
        let mut reader = std::io::Cursor::new(input);
        let first = read_bounded_line(&mut reader, 100).unwrap().unwrap();
        assert_eq!((first.bytes.len(), first.truncated), (100, true));
        let second = read_bounded_line(&mut reader, 100).unwrap().unwrap();
        assert_eq!((second.bytes, second.truncated), (b"short".to_vec(), false));
        assert_eq!(read_bounded_line(&mut reader, 100).unwrap().unwrap().bytes, b"last".to_vec());
        assert_eq!(read_bounded_line(&mut reader, 100).unwrap(), None);
    }

    #[test]
    fn replies_are_collected_and_the_server_closed() {
        let echo = sh(r#"while read -r line; do echo '{"jsonrpc":"2.0","id":1,"result":{}}'; done"#);
        let transcript = StdioTarget::new(echo, quick()).run(&[request(1), Input::Sync]).unwrap();
        assert_eq!(transcript.ending, Ending::Closed);
        assert_eq!(transcript.events.len(), 3, "{transcript:?}");
        assert!(matches!(transcript.events[2], Event::Sync));
    }

    #[test]
    fn a_server_that_never_answers_has_hung() {
        let transcript = StdioTarget::new(sh("sleep 10"), quick()).run(&[request(1)]).unwrap();
        assert_eq!(transcript.ending, Ending::Hung { waited_ms: 500 });
    }

    #[test]
    fn a_server_that_exits_early_has_crashed_with_its_stderr() {
        let crash = sh("read -r line; echo 'boom' >&2; exit 3");
        let transcript = StdioTarget::new(crash, quick()).cold().run(&[request(1), Input::Sync, request(2)]).unwrap();
        let Ending::Exited { code: Some(3), stderr_tail, .. } = transcript.ending else { panic!("{transcript:?}") };
        assert_eq!(stderr_tail, b"boom\n".to_vec());
        // The exit is seen at once; the tail is still read to its last byte.
        let loud = sh("read -r line; head -c 50000 /dev/zero | tr '\\0' e >&2; echo 'boom' >&2; exit 4");
        for _ in 0..10 {
            let transcript = StdioTarget::new(loud.clone(), quick()).cold().run(&[request(1), Input::Sync]).unwrap();
            let Ending::Exited { code: Some(4), stderr_tail, .. } = transcript.ending else { panic!("{transcript:?}") };
            assert_eq!(stderr_tail.len(), 50_005);
            assert!(stderr_tail.ends_with(b"eboom\n"));
        }
    }

    #[test]
    fn a_flood_and_a_huge_line_stay_bounded() {
        let huge = sh("head -c 3000000 /dev/zero | tr '\\0' a; echo; yes");
        let transcript = StdioTarget::new(huge, quick()).run(&[request(1)]).unwrap();
        let Event::Received { line, truncated: true } = &transcript.events[1] else { panic!("not cut") };
        assert_eq!(line.len(), MAX_LINE_BYTES);
        assert_eq!(transcript.ending, Ending::Cut { events: transcript.events.len() });
    }

    #[test]
    fn a_slow_tool_call_is_cancelled_when_later_requests_are_answered() {
        let call = Input::Line(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}"#.to_vec());
        // Answers every ping (id 2) and never the tool call: a slow tool on a live server.
        let slow = sh(
            r#"while read -r line; do case "$line" in *'"ping"'*) echo '{"jsonrpc":"2.0","id":2,"result":{}}';; esac; done"#,
        );
        let transcript = StdioTarget::new(slow.clone(), quick()).run(&[call.clone(), request(2), Input::Sync]).unwrap();
        let cancel =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"timed out"}}"#;
        assert!(transcript.events.contains(&Event::Sent(cancel.to_vec())), "{transcript:?}");
        assert_eq!(transcript.ending, Ending::Closed);
        let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
        assert!(findings.is_empty(), "{findings:?}");
        // A call with an id beyond 2^53 that a JavaScript server drops is JSONRPC-BIG-ID, never cancelled.
        let big = Input::Line(
            br#"{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"slow"}}"#.to_vec(),
        );
        let transcript = StdioTarget::new(slow.clone(), quick()).run(&[big, request(2), Input::Sync]).unwrap();
        let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
        assert!(findings.iter().any(|f| f.rule == "JSONRPC-BIG-ID"), "{findings:?}");
        // The same call with nothing answered after it: no sign of life, so it is still owed.
        let transcript = StdioTarget::new(slow, quick()).run(&[request(2), Input::Sync, call, Input::Sync]).unwrap();
        assert!(!transcript.events.iter().any(|e| matches!(e, Event::Sent(line) if line == cancel)));
        let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
        assert!(findings.iter().any(|f| f.rule == "JSONRPC-RESPONSE-MISSING"), "{findings:?}");
    }

    #[test]
    fn a_tool_call_whose_id_was_reused_is_not_waited_for_once_a_twin_is_answered() {
        let line = |text: &str| Input::Line(text.as_bytes().to_vec());
        let call = line(r#"{"jsonrpc":"2.0","id":"4","method":"tools/call","params":{"name":"slow"}}"#);
        let ping = |id: &str| line(&format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping"}}"#));
        // Answers everything in order but tool calls: a slow tool on a live server.
        let server = answering(
            r#"while read -r l; do case "$l" in *tools/call*) continue;; esac; id=$(idof "$l"); [ -n "$id" ] && reply "$id"; done"#,
        );
        // How many cancellations the conversation sent (one per slow tool it waited for); it is judged clean.
        let cancels = |inputs: &[Input]| {
            let mut target = StdioTarget::new(server.clone(), quick()).with_sentinels(Eras::Handshake);
            let transcript = target.run(inputs).unwrap();
            let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
            assert!(findings.is_empty(), "{findings:?}");
            let cancel = |l: &Vec<u8>| l.windows(9).any(|w| w == b"cancelled");
            transcript.events.iter().filter(|e| matches!(e, Event::Sent(l) if cancel(l))).count()
        };
        assert_eq!(cancels(&[call.clone(), ping("5"), Input::Sync]), 1, "a slow tool: waited for, then cancelled");
        assert_eq!(cancels(&[call, ping("4"), Input::Sync]), 0, "a reused id: who answered what is not judged");
    }

    #[test]
    fn a_cut_transcript_says_so_and_judges_nothing_it_did_not_see() {
        // The reply comes after more notifications than the harness keeps.
        let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
        let flood = sh(&format!(
            r#"read -r line; yes '{note}' | head -n {}; echo '{{"jsonrpc":"2.0","id":1,"result":{{}}}}'; read -r line"#,
            MAX_EVENTS + 10
        ));
        let patient = Timeouts { reply: Duration::from_secs(20), ..quick() };
        let transcript = StdioTarget::new(flood, patient).cold().run(&[request(1), Input::Sync]).unwrap();
        let kept = transcript.events.len();
        assert!(kept >= MAX_EVENTS && transcript.ending == Ending::Cut { events: kept }, "{:?}", transcript.ending);
        assert!(transcript.render().contains(&format!("CUT: the harness kept {kept} events")));
        let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
        assert!(
            findings.iter().all(|f| f.rule != "JSONRPC-RESPONSE-MISSING" && f.rule != "SERVER-HANG"),
            "{findings:?}"
        );
        // What was seen is still judged, and says the transcript was cut.
        let mut broken = transcript.clone();
        broken.events.insert(1, Event::Received { line: b"{oops".to_vec(), truncated: false });
        let findings = crate::oracle::check(&broken, &crate::oracle::Policy::default());
        assert!(
            !findings.is_empty()
                && findings
                    .iter()
                    .all(|f| f.detail.ends_with(&format!("(the transcript was cut after {kept} events)"))),
            "{findings:?}"
        );
    }

    #[test]
    fn a_barrier_waits_for_the_reply_to_a_batch_on_2025_03_26_only() {
        let init = |version: &str| {
            Input::Line(
                format!(
                    r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}"}}}}"#
                )
                .into_bytes(),
            )
        };
        let batch = Input::Line(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec());
        for (version, waits) in [("2025-03-26", true), ("2025-06-18", false)] {
            let server = sh(&format!(
                r#"read -r a; echo '{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":"{version}"}}}}'; read -r b; sleep 0.2; echo '[{{"jsonrpc":"2.0","id":1,"result":{{}}}}]'; read -r c"#
            ));
            let inputs = [init(version), Input::Sync, batch.clone(), Input::Sync];
            let transcript = StdioTarget::new(server, quick()).cold().run(&inputs).unwrap();
            let array = transcript
                .events
                .iter()
                .position(|e| matches!(e, Event::Received { line, .. } if line.starts_with(b"[")));
            let last_sync = transcript.events.iter().rposition(|e| matches!(e, Event::Sync));
            assert_eq!(array < last_sync, waits, "{version}: {transcript:?}");
        }
    }

    /// True while process `pid` runs (a zombie waiting to be reaped does not run).
    fn running(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
    }

    #[test]
    fn the_whole_process_group_ends_with_the_conversation() {
        let dir = std::env::temp_dir().join(format!("wirefuzz-group-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pids = dir.join("pids");
        // Deaf to SIGTERM, and a grandchild (deaf too) holding stdout open after the server exits.
        let script = format!(
            r#"trap '' TERM; (trap '' TERM; sleep 30) & echo $! > {0}; echo $$ >> {0}; read -r line; exit 0"#,
            pids.display()
        );
        let started = Instant::now();
        let transcript = StdioTarget::new(sh(&script), quick()).cold().run(&[request(1)]).unwrap();
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        // The server exited once its input closed: the grandchild holding its output does not make it hang.
        assert_eq!(transcript.ending, Ending::Closed, "{transcript:?}");
        let written = std::fs::read_to_string(&pids).unwrap();
        for pid in written.split_whitespace() {
            // SIGKILL was sent; its delivery takes a moment.
            let until = Instant::now() + Duration::from_secs(1);
            while running(pid) && Instant::now() < until {
                thread::sleep(Duration::from_millis(5));
            }
            assert!(!running(pid), "process {pid} still runs");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_program_is_a_clear_error() {
        let command = ServerCommand::from_argv(&["/no/such/server".into()]).unwrap();
        let error = StdioTarget::new(command, quick()).run(&[]).unwrap_err();
        assert!(format!("{error:#}").contains("cannot start server `/no/such/server`"));
        assert!(ServerCommand::from_argv(&[]).is_err());
    }

    #[test]
    fn only_mcp_shaped_requests_owe_a_reply() {
        assert_eq!(owed_reply(br#"{"jsonrpc":"2.0","id":"a","method":"x","params":{}}"#), Some(RequestId::string("a")));
        assert_eq!(owed_reply(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#), None);
        assert_eq!(owed_reply(br#"{"jsonrpc":"2.0","method":"x"}"#), None);
        assert_eq!(owed_reply(b"{oops"), None);
        let reply = |line: &str| reply_to(&serde_json::from_str(line).unwrap());
        assert_eq!(reply(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#), Some(Some(RequestId::string("a"))));
        assert_eq!(reply(r#"{"jsonrpc":2,"id":null,"error":{},"result":1}"#), Some(None));
        assert_eq!(reply(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert_eq!(reply("42"), None);
    }

    /// A shell server answering every line that carries a string id with an empty result, `script` choosing when:
    /// `$id` is the line's id, `reply` writes the answer.
    fn answering(script: &str) -> ServerCommand {
        sh(&format!(
            r#"reply() {{ printf '{{"jsonrpc":"2.0","id":"%s","result":{{}}}}\n' "$1"; }}
idof() {{ case "$1" in *'"id":"'*) x=${{1#*'"id":"'}}; printf %s "${{x%%\"*}}";; esac; }}
{script}"#
        ))
    }

    const IN_ORDER: &str = r#"while read -r l; do id=$(idof "$l"); [ -n "$id" ] && reply "$id"; done"#;

    #[test]
    fn calibration_tells_servers_that_answer_in_order_from_those_that_reorder() {
        let in_order = answering(IN_ORDER);
        let sentinels = calibrated(&in_order, Eras::Dual, quick()).unwrap();
        assert!(
            matches!(sentinels, Sentinels::InOrder { eras: Eras::Dual, pre_init: true, neutral: true, .. }),
            "{sentinels:?}"
        );
        let swapped = answering(
            r#"while read -r a; do read -r b; for l in "$b" "$a"; do id=$(idof "$l"); [ -n "$id" ] && reply "$id"; done; done"#,
        );
        assert_eq!(calibrated(&swapped, Eras::Modern, quick()).unwrap(), Sentinels::Off);
        let deaf = answering(r#"while read -r l; do :; done"#);
        assert_eq!(calibrated(&deaf, Eras::Handshake, quick()).unwrap(), Sentinels::Off);
    }

    #[test]
    fn a_process_is_kept_only_on_a_server_that_answers_modern_requests_alike_however_many_it_saw() {
        let fresh_alike = |server: &ServerCommand, eras: Eras| {
            matches!(calibrated(server, eras, quick()).unwrap(), Sentinels::InOrder { fresh_alike: true, .. })
        };
        let in_order = answering(IN_ORDER);
        assert!(fresh_alike(&in_order, Eras::Modern) && fresh_alike(&in_order, Eras::Dual));
        assert!(!fresh_alike(&in_order, Eras::Handshake), "no modern requests, nothing to keep a process for");
        // As rmcp does: a modern ping that comes first is answered as a handshake ping, later ones with -32601.
        let first_ping = answering(
            r#"n=0; pinged=; while read -r l; do id=$(idof "$l"); [ -z "$id" ] && continue
case "$l" in
*'"ping"'*) if [ -z "$pinged" ]; then pinged=1; reply "$id"; else printf '{"jsonrpc":"2.0","id":"%s","error":{"code":-32601,"message":"ping"}}\n' "$id"; fi;;
*'"tools/list"'*) n=$((n+1)); printf '{"jsonrpc":"2.0","id":"%s","result":{"n":%s}}\n' "$id" "$n";;
*) reply "$id";;
esac; done"#,
        );
        let sentinels = calibrated(&first_ping, Eras::Modern, quick()).unwrap();
        assert!(matches!(sentinels, Sentinels::InOrder { fresh_alike: false, .. }), "{sentinels:?}");
        let list = Input::Line(
            br#"{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_vec(),
        );
        let mut target = StdioTarget::new(first_ping, quick()).with_sentinels(Eras::Modern);
        for _ in 0..2 {
            let transcript = target.run(&[list.clone(), Input::Sync]).unwrap();
            let reply = transcript.received().next().map(|l| String::from_utf8_lossy(l).to_string());
            assert!(reply.as_deref().is_some_and(|r| r.contains(r#""n":1"#)), "{}", transcript.render());
        }
    }

    #[test]
    fn neutral_sentinels_need_a_server_that_answers_them_in_order_and_keeps_its_eras_open() {
        // Silent on a line without a method (as the Python SDK is): in order, but no neutral sentinels.
        let silent = answering(r#"while read -r l; do case "$l" in *'"method"'*) reply "$(idof "$l")";; esac; done"#);
        let sentinels = calibrated(&silent, Eras::Dual, quick()).unwrap();
        assert!(matches!(sentinels, Sentinels::InOrder { pre_init: true, neutral: false, .. }), "{sentinels:?}");
        // Answers it, but a line without a method pins the handshake era: a modern discover after it is refused.
        let pinning = answering(
            r#"pinned=; while read -r l; do id=$(idof "$l"); case "$l" in *'"method"'*) ;; *) pinned=1;; esac
case "$l" in *discover*) if [ -n "$pinned" ]; then printf '{"jsonrpc":"2.0","id":"%s","error":{"code":-32600,"message":"era"}}\n' "$id"; continue; fi;; esac
reply "$id"; done"#,
        );
        let sentinels = calibrated(&pinning, Eras::Dual, quick()).unwrap();
        assert!(matches!(sentinels, Sentinels::InOrder { neutral: false, .. }), "{sentinels:?}");
        // The same server serving only the handshake era, and refusing pings before `initialize`: it needs neutral
        // sentinels there, and they leave its handshake as it was.
        let strict = answering(
            r#"ready=; while read -r l; do id=$(idof "$l"); case "$l" in *initialize*) ready=1;; esac
case "$l" in *'"ping"'*) [ -z "$ready" ] && continue;; esac; [ -n "$id" ] && reply "$id"; done"#,
        );
        let sentinels = calibrated(&strict, Eras::Handshake, quick()).unwrap();
        assert!(matches!(sentinels, Sentinels::InOrder { pre_init: false, neutral: true, .. }), "{sentinels:?}");
    }

    #[test]
    fn neutral_sentinels_go_everywhere_on_a_server_that_takes_them_and_pings_only_where_harmless() {
        let line = |text: &str| Input::Line(text.as_bytes().to_vec());
        let note = line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#);
        let modern = line(
            r#"{"jsonrpc":"2.0","id":"m","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        // The second notification is ahead of the first request at the sync point: no ping may go there.
        let inputs = [note.clone(), Input::Sync, note, modern, Input::Sync];
        let seen = |answers_neutral: bool| {
            let log = std::env::temp_dir().join(format!("wirefuzz-neutral-{}-{answers_neutral}", std::process::id()));
            let _ = std::fs::remove_file(&log);
            let filter = if answers_neutral { "" } else { r#"case "$l" in *'"method"'*) ;; *) continue;; esac;"# };
            let server = answering(&format!(
                r#"while read -r l; do printf '%s\n' "$l" >> '{}'; {filter} id=$(idof "$l"); [ -n "$id" ] && reply "$id"; done"#,
                log.display()
            ));
            let mut target = StdioTarget::new(server, quick()).with_sentinels(Eras::Dual);
            let transcript = target.run(&inputs).unwrap();
            assert_eq!(transcript.events.iter().filter(|e| matches!(e, Event::Received { .. })).count(), 1);
            let lines = std::fs::read_to_string(&log).unwrap();
            let _ = std::fs::remove_file(&log);
            // Calibration runs wrote their lines first: the conversation's start with its first notification.
            let at = lines.find("notifications/cancelled").unwrap();
            let lines = &lines[lines[..at].rfind('\n').map_or(0, |n| n + 1)..];
            // The lines the server read, each named by its method, or `neutral` for a sentinel without one.
            lines
                .lines()
                .map(|l| match serde_json::from_str::<serde_json::Value>(l).unwrap().get("method") {
                    Some(method) => method.as_str().unwrap().to_string(),
                    None => "neutral".to_string(),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            seen(true),
            ["notifications/cancelled", "neutral", "notifications/cancelled", "tools/list", "neutral"]
        );
        // Without them: the clock where the era ahead is unclear, a modern ping once the conversation opened it.
        assert_eq!(seen(false), ["notifications/cancelled", "notifications/cancelled", "tools/list", "ping"]);
    }

    #[test]
    fn a_sentinel_answered_before_a_request_ends_the_calibration_at_once() {
        // The planted bug null-id-on-error: errors carry a null id. The calibration cannot pass; it used to wait
        // out the reply timeout and the start-up allowance for each form (24 s on a dual-era server).
        let null_errors = answering(
            r#"while read -r l; do case "$l" in *no-such-method*) printf '{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}\n';; *) id=$(idof "$l"); [ -n "$id" ] && reply "$id";; esac; done"#,
        );
        // A server that drops a request: the sentinel after it is answered first.
        let dropping = answering(
            r#"while read -r l; do case "$l" in *no-such-method*) ;; *) id=$(idof "$l"); [ -n "$id" ] && reply "$id";; esac; done"#,
        );
        for server in [null_errors, dropping] {
            let started = Instant::now();
            assert_eq!(calibrated(&server, Eras::Dual, Timeouts::default()).unwrap(), Sentinels::Off);
            assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        }
        // Extra lines do not end it: a notification, a log line, and (the planted bug notification-reply) a reply
        // with a null id to `notifications/initialized`, next to every reply owed.
        let chatty = answering(
            r#"printf '{"jsonrpc":"2.0","method":"notifications/message","params":{}}\nstarting\n'; while read -r l; do id=$(idof "$l"); if [ -n "$id" ]; then reply "$id"; else printf '{"jsonrpc":"2.0","id":null,"result":{}}\n'; fi; done"#,
        );
        assert!(matches!(calibrated(&chatty, Eras::Dual, quick()).unwrap(), Sentinels::InOrder { .. }));
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
    fn sentinels_wait_for_the_conversations_own_era_and_handshake() {
        let line = |text: &str| Input::Line(text.as_bytes().to_vec());
        let modern = line(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        let legacy = line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let note = line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#);
        let lenient_legacy = line(r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#);
        // A notification before the first request: a buggy server may let it pick the era.
        assert_eq!(first_opening(&[note.clone(), modern.clone()]), None);
        assert_eq!(first_opening(&[note.clone(), Input::Sync]), None);
        assert_eq!(first_opening(&[legacy.clone(), modern.clone()]), Some(Some(Era::Handshake)));
        assert_eq!(first_opening(&[lenient_legacy.clone(), modern.clone()]), None);
        assert_eq!(first_opening(&[lenient_legacy, legacy.clone()]), Some(Some(Era::Handshake)));
        assert!(self_contained(&[modern.clone(), Input::Sync, modern.clone()]));
        assert!(!self_contained(&[modern.clone(), note]));
        assert!(!self_contained(&[modern, legacy]));
        let setlevel = line(
            r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert!(!self_contained(&[setlevel]));
    }

    #[test]
    fn a_calibration_wants_every_sentinel_after_what_was_sent_before_it_or_all_in_order_when_exact() {
        let sentinel = |n: u32| format!("{SENTINEL_PREFIX}{n}");
        let ids = ["a".to_string(), sentinel(0), "b".to_string(), sentinel(1)];
        // True when the replies `came` (indices into `ids`) are each admitted in turn.
        let passes = |exact: bool, came: &[usize]| {
            let expected = Expected { ids: &ids, opening: None, exact, strays: None };
            let mut seen = Vec::new();
            came.iter().all(|&at| {
                let admitted = expected.admits(&seen, at);
                seen.push(ids[at].as_str());
                admitted
            })
        };
        for exact in [false, true] {
            assert!(passes(exact, &[0, 1, 2, 3]));
            assert!(!passes(exact, &[1, 0, 2, 3]), "a sentinel before the request sent ahead of it");
            assert!(!passes(exact, &[0, 1, 3, 2]));
            assert!(!passes(exact, &[0, 0, 1, 2, 3]), "a reply twice");
        }
        assert!(passes(false, &[0, 2, 1, 3]), "a request answered before the sentinel sent ahead of it");
        assert!(!passes(true, &[0, 2, 1, 3]));
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
