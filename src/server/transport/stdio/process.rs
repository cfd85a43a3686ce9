//! The server process of the stdio transport and its hygiene: spawned directly (never through a shell) by
//! [`launch`] (a process group of its own, dying with the harness thread that started it); fed lines on
//! stdin by a writer thread (a server that stops reading cannot block the harness), its stdout read as bounded
//! lines with a bound on how many wait unread, its stderr tail kept. When its conversation ends the whole group
//! gets SIGTERM, then SIGKILL after [`END_GRACE`], so a grandchild holding stdout open or a server deaf to SIGTERM
//! is not left behind; the threads around a process poll their pipe and stop then: none outlives it. A
//! [`Spawner`] starts processes ahead, so start-up overlaps the previous conversation.

use crate::server::children::{track, untrack};
use crate::server::launch;
use crate::server::transport::lines::{OutputLine, Tail, read_bounded_line, read_tail};
use crate::server::{END_GRACE, MAX_LINE_BYTES, STDERR_TAIL_BYTES, ServerCommand};
use crate::transcript::Ending;
use anyhow::{Context, Result};
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::io::{BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How many stdout lines may wait unread before the server is made to wait (bounds memory).
const PENDING_LINES: usize = 64;
/// How long the stderr tail of an exited server may take to reach its end (a process that inherited the server's
/// stderr can hold it open; then the tail is taken as it stands).
const STDERR_DRAIN: Duration = Duration::from_millis(500);
/// How often a thread blocked on a server's pipe looks whether its conversation has ended.
pub(super) const POLL_TICK: Duration = Duration::from_millis(20);
/// How long the output of a server that has exited is still read when something it started holds the output open.
pub(super) const EXIT_DRAIN: Duration = Duration::from_millis(100);
/// Turns transparent huge pages off for this process and the servers it starts (the setting is inherited across
/// fork and exec); the CLI calls it first thing. mimalloc, and other allocators, ask for huge pages, and every
/// process or thread that comes and goes then makes the kernel clear fresh 2 MiB pages: with a process per
/// conversation over stdio, that was a fifth of the CPU of a run of the built-in server. It changes how fast a
/// server gets memory, never what it does. Linux only (elsewhere it does nothing).
pub fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_thp_disable(true);
}

/// A thread of a target's own that starts its server processes ahead, so the next one starts up while the
/// current conversation runs, and the conversation does not wait for `fork` and `exec`. A process started there
/// gets SIGKILL when that thread ends (its parent-death signal, see [`launch`]), so the thread lives as long as the
/// target; it ends when the target drops it.
#[derive(Debug)]
pub(super) struct Spawner {
    orders: Option<Sender<()>>,
    started: Receiver<Result<Process>>,
    thread: Option<JoinHandle<()>>,
}

impl Spawner {
    /// A spawner for `command`, with one process ordered.
    pub(super) fn new(command: &ServerCommand, deadline: Option<Instant>) -> Spawner {
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
    pub(super) fn take(&mut self) -> Result<Process> {
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

/// What the stdout reader thread reports.
pub(super) enum Stdout {
    /// A line it read.
    Line(OutputLine),
    /// The output ended.
    End,
}

/// A running server process and the threads around it.
#[derive(Debug)]
pub(super) struct Process {
    /// The server process, leader of its process group.
    pub(super) child: Child,
    /// Lines for the writer thread; `None` once stdin is closed.
    pub(super) input: Option<Sender<Vec<u8>>>,
    /// What the stdout reader thread reads, bounded ([`PENDING_LINES`] wait unread at most).
    pub(super) output: Receiver<Stdout>,
    stderr: Arc<Mutex<Tail>>,
    /// Disconnected once the stderr reader has read the stream to its end.
    stderr_done: Receiver<()>,
    /// When the conversation is over, and the run's deadline.
    pub(super) watch: Arc<Watch>,
    /// The writer and the two reader threads, joined when the process is ended.
    threads: Vec<JoinHandle<()>>,
    /// The pipe the server reads its stdin from (`pipe:[inode]`): the processes that read it are the server's, the
    /// command's own process or what it started ([`super::usage`]).
    pub(super) stdin_pipe: Option<String>,
}

impl Process {
    /// Starts `command` ([`start`]) with the writer and the two reader threads around it.
    pub(super) fn spawn(command: &ServerCommand, deadline: Option<Instant>) -> Result<Process> {
        let mut child = start(command).with_context(|| format!("cannot start server `{}`", command.program))?;
        let group = Pid::from_raw(child.id() as i32);
        track(group);
        let watch = Arc::new(Watch { over: AtomicBool::new(false), cut: AtomicBool::new(false), deadline, group });
        let stdin_pipe = child.stdin.as_ref().and_then(|stdin| super::usage::pipe_of(stdin.as_fd()));
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
        let tail = Arc::new(Mutex::new(Tail::default()));
        let writer_tail = Arc::clone(&tail);
        let (done, stderr_done) = mpsc::channel::<()>();
        let tail_reader = thread::spawn(move || {
            read_tail(stderr, &writer_tail, STDERR_TAIL_BYTES);
            drop(done);
        });
        let threads = vec![writer, reader, tail_reader];
        Ok(Process { child, input: Some(input), output, stderr: tail, stderr_done, watch, threads, stdin_pipe })
    }

    /// Ends the process and everything it started: its group gets SIGTERM, then SIGKILL after [`END_GRACE`] if
    /// anything of it is still there; the process is reaped and the threads around it are joined.
    fn end(&mut self) {
        self.input = None;
        self.watch.over.store(true, Ordering::Relaxed);
        // The reader may wait for room in the channel: dropping the receiver frees it.
        drop(std::mem::replace(&mut self.output, mpsc::sync_channel(0).1));
        end_group(&mut self.child, END_GRACE);
        untrack(self.watch.group);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }

    /// Runs one conversation on this process. It ends with stdin closed and the process gone, or, with `keep` and a
    /// clean run (every sentinel answered, nothing dropped), with the process handed back still serving.
    /// The stderr tail of an exited process, once its reader has read to the end (or [`STDERR_DRAIN`] passed):
    /// the exit is often seen before the reader thread has read the last bytes written.
    fn stderr_tail(&self) -> Vec<u8> {
        let _ = self.stderr_done.recv_timeout(STDERR_DRAIN);
        self.stderr.lock().map(|tail| tail.bytes.clone()).unwrap_or_default()
    }

    /// The stderr tail as read so far (the process may still be running), and how many bytes came before it.
    pub(super) fn stderr_now(&self) -> Tail {
        self.stderr.lock().map(|tail| tail.clone()).unwrap_or_default()
    }

    /// The ending of a process that exited with `status`, with its stderr tail.
    pub(super) fn exited(&mut self, status: ExitStatus) -> Ending {
        Ending::Exited { code: status.code(), signal: status.signal(), stderr_tail: self.stderr_tail() }
    }

    /// Waits up to `limit` for the process to exit, looking again after 50 µs, then twice as long each time up to
    /// 1 ms: a server usually exits within microseconds of closing its output.
    pub(super) fn wait_for_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
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

/// Starts `command` (what it starts: its stand-in, if it has one) with piped stdio ([`launch::spawn`]: its own
/// process group, no signal blocked, the parent-death signal).
fn start(command: &ServerCommand) -> std::io::Result<Child> {
    let (program, args) = command.started();
    launch::spawn(program.as_ref(), args, |process| {
        process.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    })
}

/// Ends the process group led by `child`: SIGTERM to the group, SIGKILL to what is left of it after `grace`, and
/// reaps the child. A group already gone costs nothing.
pub(super) fn end_group(child: &mut Child, grace: Duration) {
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
pub(super) struct Watch {
    /// Set when the conversation is over: the pipe threads stop at their next poll.
    over: AtomicBool,
    /// Set when the deadline passed while the process ran: it was killed, its conversation is not judged.
    pub(super) cut: AtomicBool,
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

/// Sends the lines of `stdout` (each bounded by [`MAX_LINE_BYTES`]) to `sender`, then [`Stdout::End`].
fn read_lines(stdout: impl Read, sender: SyncSender<Stdout>) {
    let mut reader = BufReader::new(stdout);
    while let Ok(Some(line)) = read_bounded_line(&mut reader, MAX_LINE_BYTES) {
        if sender.send(Stdout::Line(line)).is_err() {
            return;
        }
    }
    let _ = sender.send(Stdout::End);
}

#[cfg(test)]
mod tests {
    use super::super::StdioTarget;
    use super::super::test_servers::*;
    use super::*;
    use crate::server::{ServerCommand, Target};
    use crate::transcript::{Ending, Input};

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
}
