//! A server under test as a child process over stdio: spawned directly (never through a shell), fed lines on
//! stdin by a writer thread (a server that stops reading cannot block the harness), its stdout read as lines with
//! a bound on each line's length and on how many lines wait unread, its stderr tail kept, and every wait bounded.
//!
//! Barriers: at each sync point, and before closing stdin, the harness waits until every request sent so far has
//! its reply (or the reply timeout passes), then until the output has been quiet for the settle time, so late
//! replies, duplicates and replies to notifications are seen. A server whose process ends early has crashed; one
//! that owes replies past the timeout, or does not exit after its input closes, has hung.

use super::Target;
use crate::protocol::era::BATCH_VERSION;
use crate::protocol::methods::INITIALIZE;
use crate::protocol::{Frame, IdField, RequestId};
use crate::transcript::{Ending, Event, Input, Transcript};
use anyhow::{Context, Result, bail};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread;
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
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            reply: Duration::from_secs(2),
            settle: Duration::from_millis(20),
            startup: Duration::from_secs(10),
            shutdown: Duration::from_secs(5),
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
        let process = match self.spare.take() {
            Some(process) => process,
            None => Process::spawn(&self.command)?,
        };
        if self.warm {
            self.spare = Some(Process::spawn(&self.command)?);
        }
        Ok(process.converse(inputs, self.timeouts))
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
}

impl Process {
    fn spawn(command: &ServerCommand) -> Result<Process> {
        let mut child = Command::new(&command.program)
            .args(&command.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start server `{}`", command.program))?;
        let mut stdin = child.stdin.take().context("child stdin")?;
        let stdout = child.stdout.take().context("child stdout")?;
        let stderr = child.stderr.take().context("child stderr")?;
        let (input, lines) = mpsc::channel::<Vec<u8>>();
        thread::spawn(move || {
            for line in lines {
                if stdin.write_all(&line).and_then(|_| stdin.flush()).is_err() {
                    return;
                }
            }
        });
        let (sender, output) = mpsc::sync_channel(PENDING_LINES);
        thread::spawn(move || read_lines(stdout, sender));
        let tail = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&tail);
        let (done, stderr_done) = mpsc::channel::<()>();
        thread::spawn(move || {
            read_tail(stderr, &writer, STDERR_TAIL_BYTES);
            drop(done);
        });
        Ok(Process { child, input: Some(input), output, stderr: tail, stderr_done })
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
        self.input = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
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

    /// Closes stdin, collects what the server writes until it closes stdout, and waits for it to exit.
    fn close(&mut self, timeouts: Timeouts) -> Ending {
        self.process.input = None;
        let budget = if self.heard { timeouts.shutdown.max(timeouts.reply) } else { timeouts.reply_for(false) };
        let until = Instant::now() + budget;
        loop {
            match self.process.output.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(Stdout::Line(line)) => self.receive(line),
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => return Ending::Hung { waited_ms: budget.as_millis() as u64 },
            }
        }
        match self.process.wait_for_exit(until.saturating_duration_since(Instant::now())) {
            Some(_) => Ending::Closed,
            None => Ending::Hung { waited_ms: budget.as_millis() as u64 },
        }
    }

    fn finish(self, ending: Ending) -> Transcript {
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
        assert!(transcript.events.len() <= MAX_EVENTS);
        assert!(matches!(transcript.ending, Ending::Hung { .. }));
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
