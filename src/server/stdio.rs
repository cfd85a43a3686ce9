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

use super::Target;
use crate::protocol::era::BATCH_VERSION;
use crate::protocol::methods::INITIALIZE;
use crate::protocol::{Frame, IdField, RequestId};
use crate::transcript::{Ending, Event, Input, Transcript};
use anyhow::{Context, Result, bail};
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, killpg, sigprocmask};
use nix::unistd::Pid;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// The longest stdout line kept whole; the rest of a longer line is read and discarded.
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// How much of the server's stderr is kept (its last bytes).
pub const STDERR_TAIL_BYTES: usize = 64 << 10;
/// How many stdout lines may wait unread before the server is made to wait (bounds memory).
const PENDING_LINES: usize = 64;
/// The most events one conversation records; a server that floods its output is cut off there.
pub const MAX_EVENTS: usize = 100_000;
/// How long the stderr tail of an exited server may take to reach its end (a process that inherited the server's
/// stderr can hold it open; then the tail is taken as it stands).
const STDERR_DRAIN: Duration = Duration::from_millis(500);
/// How long a server's process group has between SIGTERM and SIGKILL when its conversation ends.
pub const END_GRACE: Duration = Duration::from_millis(100);
/// How often a thread blocked on a server's pipe looks whether its conversation has ended.
const POLL_TICK: Duration = Duration::from_millis(20);
/// How long the output of a server that has exited is still read when something it started holds the output open.
const EXIT_DRAIN: Duration = Duration::from_millis(100);
/// The process groups of the servers running now, so they can all be ended when the harness is stopped by a
/// signal ([`end_all`]).
static GROUPS: Mutex<Vec<Pid>> = Mutex::new(Vec::new());

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

/// The command line of a server: a program and its arguments, run without a shell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerCommand {
    /// The program (a path, or a name looked up on PATH).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl ServerCommand {
    /// Splits `[program, args...]`; fails on an empty list.
    pub fn from_argv(argv: &[String]) -> Result<ServerCommand> {
        let Some((program, args)) = argv.split_first() else { bail!("no server command given") };
        Ok(ServerCommand { program: program.clone(), args: args.to_vec() })
    }

    /// The command as argv.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.clone()).chain(self.args.iter().cloned()).collect()
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

/// Timing of a stdio conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// How long a reply the server owes may take.
    pub reply: Duration,
    /// How long the output must stay quiet at a barrier before the harness goes on.
    pub settle: Duration,
    /// Extra time a process gets until it has written its first line (start-up: an interpreter importing its SDK
    /// takes over a second, more on a loaded machine).
    pub startup: Duration,
    /// How long a server that has started may take to exit once its input is closed.
    pub shutdown: Duration,
    /// How long the harness waits, after the last barrier, for the server to end on its own before it closes its
    /// input (0 while fuzzing; replay of a crash case waits, so a crash a little slower than the settle time is
    /// still seen as a crash).
    pub linger: Duration,
    /// When the whole run must be over (`fuzz --time`): a process still running then is killed, and its
    /// conversation is an error ([`super::DeadlinePassed`]), not a transcript to judge.
    pub deadline: Option<Instant>,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            reply: Duration::from_secs(2),
            settle: Duration::from_millis(20),
            startup: Duration::from_secs(10),
            shutdown: Duration::from_secs(5),
            linger: Duration::ZERO,
            deadline: None,
        }
    }
}

impl Timeouts {
    /// The reply timeout, with the start-up allowance while the server has written nothing yet.
    fn reply_for(&self, heard: bool) -> Duration {
        if heard { self.reply } else { self.reply + self.startup }
    }
}

/// A server started as a child process for every conversation, with one process started ahead (warm) so start-up
/// overlaps the previous conversation.
#[derive(Debug)]
pub struct StdioTarget {
    command: ServerCommand,
    timeouts: Timeouts,
    warm: bool,
    spare: Option<Process>,
}

impl StdioTarget {
    /// A target that starts `command` for each conversation, with a warm spare process.
    pub fn new(command: ServerCommand, timeouts: Timeouts) -> StdioTarget {
        StdioTarget { command, timeouts, warm: true, spare: None }
    }

    /// Turns the warm spare off (one fresh process started when each conversation starts).
    pub fn cold(mut self) -> StdioTarget {
        self.warm = false;
        self
    }
}

impl Target for StdioTarget {
    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        let deadline = self.timeouts.deadline;
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            self.spare = None;
            return Err(super::DeadlinePassed.into());
        }
        let process = match self.spare.take() {
            Some(process) => process,
            None => Process::spawn(&self.command, deadline)?,
        };
        if self.warm {
            self.spare = Some(Process::spawn(&self.command, deadline)?);
        }
        let watch = Arc::clone(&process.watch);
        let transcript = process.converse(inputs, self.timeouts);
        if watch.cut.load(Ordering::Relaxed) {
            return Err(super::DeadlinePassed.into());
        }
        Ok(transcript)
    }
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

    /// Runs one conversation on this process and ends it.
    fn converse(mut self, inputs: &[Input], timeouts: Timeouts) -> Transcript {
        let mut talk = Conversation {
            process: &mut self,
            events: Vec::new(),
            open: HashMap::new(),
            unmatched: 0,
            stalled: false,
            heard: false,
            cut: false,
            batches: Batches::default(),
        };
        for input in inputs {
            match input {
                Input::Line(line) => talk.send(line),
                Input::Sync => {
                    if let Some(ending) = talk.barrier(timeouts) {
                        return talk.finish(ending);
                    }
                    talk.events.push(Event::Sync);
                }
            }
        }
        if let Some(ending) = talk.barrier(timeouts) {
            return talk.finish(ending);
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

    /// Waits up to `limit` for the process to exit.
    fn wait_for_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < until => thread::sleep(Duration::from_millis(1)),
                _ => return None,
            }
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
/// does not leave it running.
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
        self.record(Event::Sent(line.to_vec()));
        if self.batches.granted && line.trim_ascii_start().starts_with(b"[") {
            if let Ok(serde_json::Value::Array(items)) = serde_json::from_slice(line) {
                for item in items {
                    if let Some(id) = owed_reply(&serde_json::to_vec(&item).unwrap_or_default()) {
                        *self.open.entry(id).or_default() += 1;
                    }
                }
            }
        } else if let Some(id) = owed_reply(line) {
            if !self.batches.granted && asks_for_batches(line) {
                self.batches.asked.push(id.clone());
            }
            *self.open.entry(id).or_default() += 1;
        }
        if let Some(input) = &self.process.input {
            let mut framed = line.to_vec();
            framed.push(b'\n');
            let _ = input.send(framed);
        }
    }

    fn receive(&mut self, line: OutputLine) {
        self.heard = true;
        let value = serde_json::from_slice(&line.bytes).ok();
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

    /// Counts a reply against the request it answers, or as unmatched.
    fn take(&mut self, reply: &serde_json::Value) {
        match reply_to(reply) {
            Some(Some(id)) if self.open.contains_key(&id) => {
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
    /// Requests still unanswered afterwards are not waited for again.
    fn barrier(&mut self, timeouts: Timeouts) -> Option<Ending> {
        let started = Instant::now();
        let limit = if self.stalled { timeouts.settle } else { timeouts.reply_for(self.heard) };
        loop {
            let left = limit.saturating_sub(started.elapsed());
            let wait = if self.owes() { left } else { timeouts.settle.min(left) };
            match self.process.output.recv_timeout(wait) {
                Ok(Stdout::Line(line)) => self.receive(line),
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => {
                    let status = self.process.wait_for_exit(timeouts.reply)?;
                    return Some(self.process.exited(status));
                }
                Err(RecvTimeoutError::Timeout) => {
                    if !self.owes() || started.elapsed() >= limit {
                        self.stalled |= self.owes();
                        self.open.clear();
                        self.unmatched = 0;
                        return None;
                    }
                }
            }
        }
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
                    if exited.is_none() && matches!(self.process.child.try_wait(), Ok(Some(_))) {
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
            Some(_) => Ending::Closed,
            None => Ending::Hung { waited_ms: budget.as_millis() as u64 },
        }
    }

    fn finish(self, ending: Ending) -> Transcript {
        let ending = if self.cut { Ending::Cut { events: self.events.len() } } else { ending };
        Transcript { events: self.events, ending }
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
}
