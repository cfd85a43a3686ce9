//! Servers under test: the in-process server interface, the built-in servers (`builtin`), async servers in-process
//! (`async_lines`, and `rmcp` for rmcp servers), servers over HTTP (`http`), and child processes over stdio (and the stub that attaches such a
//! process to a fork server).
//!
//! The transport contract lives here, shared by every transport and the commands that start one: the [`Target`]
//! trait, a server's command line ([`ServerCommand`]), the waits ([`Timeouts`]) and the bounds ([`MAX_LINE_BYTES`],
//! [`STDERR_TAIL_BYTES`], [`MAX_EVENTS`], [`END_GRACE`]).

#[cfg(feature = "async-lines")]
pub mod async_lines;
pub mod attach;
pub mod builtin;
pub mod http;
#[cfg(feature = "rmcp")]
pub mod rmcp;
pub mod stdio;

use builtin::{mutants, reference};

use crate::transcript::{Ending, Event, Input, Transcript};
use anyhow::{Result, bail};
use std::borrow::Cow;
use std::io::{self, BufRead, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

/// The longest stdout line kept whole; the rest of a longer line is read and discarded.
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// How much of the server's stderr is kept (its last bytes).
pub const STDERR_TAIL_BYTES: usize = 64 << 10;
/// The most events one conversation records; a server that floods its output is cut off there.
pub const MAX_EVENTS: usize = 100_000;
/// How long a server's process group has between SIGTERM and SIGKILL when its conversation ends.
pub const END_GRACE: Duration = Duration::from_millis(100);
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

/// Timing of a conversation with a server out of process (a child over stdio, or over HTTP).
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
    /// conversation is an error ([`DeadlinePassed`]), not a transcript to judge.
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

/// How a server connection stands after it has handled one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Still serving.
    Running,
    /// The server ended the connection (a process would exit with this code).
    Exited(i32),
    /// The server stopped answering and never will again on this connection.
    Hung,
}

/// A server that runs inside the harness: it opens connections that are fed one line at a time.
pub trait InProcessServer {
    /// One connection's state.
    type Connection: ServerConnection;

    /// Opens a fresh connection, as a newly started process would be.
    fn connect(&self) -> Self::Connection;
}

/// One connection of an in-process server.
pub trait ServerConnection {
    /// Hands the server one line as the client sent it (without its newline) and appends every line the server
    /// writes in reaction to `out` (each without its newline).
    fn receive(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> Status;

    /// The client now waits for every reply (a sync point, or the end of its input): appends to `out` whatever
    /// the server held back. The default holds nothing back.
    fn release(&mut self, out: &mut Vec<Vec<u8>>) {
        let _ = out;
    }
}

/// A server under test as the harness drives it: one conversation per call, each on a fresh connection.
pub trait Target {
    /// Runs `inputs` on a fresh connection and records what happened. An error means the harness could not run
    /// the conversation at all (the server could not be started); a misbehaving server is a transcript, never an
    /// error.
    fn run(&mut self, inputs: &[Input]) -> anyhow::Result<Transcript>;

    /// [`Target::run`], handed inputs the caller no longer needs: a target may move their lines into the
    /// transcript instead of copying them.
    fn run_owned(&mut self, inputs: Vec<Input>) -> anyhow::Result<Transcript> {
        self.run(&inputs)
    }
}

/// The error of a conversation that the run's deadline cut short (`fuzz --time`): its server was killed, and what
/// it said is not judged.
#[derive(Debug)]
pub struct DeadlinePassed;

impl std::fmt::Display for DeadlinePassed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the run's deadline passed during the conversation")
    }
}

impl std::error::Error for DeadlinePassed {}

/// An in-process server as a target: exact (each reply is attributed to the line that caused it) and fast.
#[derive(Clone, Debug, Default)]
pub struct InProcess<S>(pub S);

impl<S: InProcessServer> Target for InProcess<S> {
    fn run(&mut self, inputs: &[Input]) -> anyhow::Result<Transcript> {
        Ok(run_in_process(&self.0, inputs))
    }

    fn run_owned(&mut self, inputs: Vec<Input>) -> anyhow::Result<Transcript> {
        let len = inputs.len();
        Ok(converse(&self.0, inputs.into_iter().map(Cow::Owned), len))
    }
}

/// Runs one conversation on a fresh connection of an in-process server. A panic inside the server is recorded as
/// the server exiting with code 101, its message as the stderr tail.
pub fn run_in_process<S: InProcessServer>(server: &S, inputs: &[Input]) -> Transcript {
    converse(server, inputs.iter().map(Cow::Borrowed), inputs.len())
}

/// The conversation of [`run_in_process`], over inputs that are borrowed (each line copied into the transcript)
/// or owned (each line moved there).
fn converse<'a, S: InProcessServer>(
    server: &S,
    inputs: impl Iterator<Item = Cow<'a, Input>>,
    len: usize,
) -> Transcript {
    let mut connection = server.connect();
    let mut events = Vec::with_capacity(len * 2);
    let mut replies = Vec::new();
    let mut inputs = inputs;
    while let Some(input) = inputs.next() {
        let line = match input {
            Cow::Borrowed(Input::Sync) | Cow::Owned(Input::Sync) => {
                if let Err(panic) = release(&mut connection, &mut replies, &mut events) {
                    return Transcript { events, ending: panicked(panic) };
                }
                events.push(Event::Sync);
                continue;
            }
            Cow::Borrowed(Input::Line(line)) => line.clone(),
            Cow::Owned(Input::Line(line)) => line,
        };
        replies.clear();
        let status = catch_unwind(AssertUnwindSafe(|| connection.receive(&line, &mut replies)));
        events.push(Event::Sent(line));
        events.extend(replies.drain(..).map(|line| Event::Received { line, truncated: false }));
        let ending = match status {
            Ok(Status::Running) => continue,
            Ok(Status::Exited(code)) => Ending::Exited { code: Some(code), signal: None, stderr_tail: Vec::new() },
            Ok(Status::Hung) => {
                // A client goes on writing into a hung server's pipe: the rest is sent, and never answered.
                events.extend(inputs.map(|input| match input.into_owned() {
                    Input::Line(line) => Event::Sent(line),
                    Input::Sync => Event::Sync,
                }));
                Ending::Hung { waited_ms: 0 }
            }
            Err(panic) => panicked(panic),
        };
        return Transcript { events, ending };
    }
    let ending = match release(&mut connection, &mut replies, &mut events) {
        Ok(()) => Ending::Closed,
        Err(panic) => panicked(panic),
    };
    Transcript { events, ending }
}

/// Records what a connection held back and releases now; `Err` when the server panicked meanwhile.
fn release(
    connection: &mut impl ServerConnection,
    replies: &mut Vec<Vec<u8>>,
    events: &mut Vec<Event>,
) -> std::thread::Result<()> {
    replies.clear();
    let released = catch_unwind(AssertUnwindSafe(|| connection.release(replies)));
    events.extend(replies.drain(..).map(|line| Event::Received { line, truncated: false }));
    released
}

/// The ending of a server that panicked: exit code 101 (as a Rust process), the panic's message as its stderr.
fn panicked(panic: Box<dyn std::any::Any + Send>) -> Ending {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into());
    Ending::Exited { code: Some(101), signal: None, stderr_tail: message.into_bytes() }
}

/// Which server a command runs against: the built-in one, the built-in one with a planted bug, or a child
/// process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerSpec {
    /// The reference server, in-process.
    BuiltIn,
    /// The reference server with one planted bug, in-process.
    Mutant(mutants::Mutant),
    /// A server started as a child process over stdio.
    Command(ServerCommand),
    /// A server reached over Streamable HTTP (started by the harness when it has a command).
    Http(http::HttpSpec),
}

impl ServerSpec {
    /// A target for a few runs (a replay, a check): a child process is started when each run starts.
    pub fn target(&self, timeouts: Timeouts) -> Box<dyn Target + Send> {
        match self {
            ServerSpec::Command(command) => Box::new(stdio::StdioTarget::new(command.clone(), timeouts).cold()),
            ServerSpec::Http(spec) => Box::new(spec.target(timeouts)),
            _ => self.pooled_target(timeouts),
        }
    }

    /// A target for a campaign worker: a child process keeps one spare started ahead, so start-up overlaps the
    /// previous conversation.
    pub fn pooled_target(&self, timeouts: Timeouts) -> Box<dyn Target + Send> {
        match self {
            ServerSpec::BuiltIn => Box::new(InProcess(reference::Calc)),
            ServerSpec::Mutant(mutant) => Box::new(InProcess(reference::Planted(*mutant))),
            ServerSpec::Command(command) => Box::new(stdio::StdioTarget::new(command.clone(), timeouts)),
            ServerSpec::Http(spec) => Box::new(spec.target(timeouts)),
        }
    }

    /// [`ServerSpec::pooled_target`] for a server known to serve `eras`: a child process is also told its eras, so
    /// it can use sentinel barriers and keep a process across self-contained modern conversations
    /// ([`stdio::StdioTarget::with_sentinels`]).
    pub fn sentinel_target(&self, timeouts: Timeouts, eras: crate::model::Eras) -> Box<dyn Target + Send> {
        match self {
            ServerSpec::Command(command) => {
                Box::new(stdio::StdioTarget::new(command.clone(), timeouts).with_sentinels(eras))
            }
            _ => self.pooled_target(timeouts),
        }
    }

    /// [`ServerSpec::sentinel_target`] with a fresh process for every conversation (`check`'s probes): what each
    /// probe sees is what a freshly started server does.
    pub fn probe_target(&self, timeouts: Timeouts, eras: crate::model::Eras) -> Box<dyn Target + Send> {
        match self {
            ServerSpec::Command(command) => {
                Box::new(stdio::StdioTarget::new(command.clone(), timeouts).with_sentinels(eras).fresh_each())
            }
            _ => self.pooled_target(timeouts),
        }
    }

    /// The planted bug, if any.
    pub fn mutant(&self) -> Option<mutants::Mutant> {
        match self {
            ServerSpec::Mutant(mutant) => Some(*mutant),
            _ => None,
        }
    }

    /// The child-process command, if any.
    pub fn command(&self) -> Option<&ServerCommand> {
        match self {
            ServerSpec::Command(command) => Some(command),
            _ => None,
        }
    }

    /// A short description for reports: `built-in server`, `built-in server with mutant NAME`, or the command.
    pub fn describe(&self) -> String {
        match self {
            ServerSpec::BuiltIn => "built-in server".into(),
            ServerSpec::Mutant(mutant) => format!("built-in server with mutant {mutant}"),
            ServerSpec::Command(command) => format!("`{}`", command.argv().join(" ")),
            ServerSpec::Http(spec) => spec.describe(),
        }
    }
}

/// Serves one connection of `server` over a byte stream, one message per line, until end of input or until the
/// server stops; returns the status it stopped with ([`Status::Running`] at end of input).
pub fn serve<S: InProcessServer>(server: &S, mut input: impl BufRead, mut output: impl Write) -> io::Result<Status> {
    let mut connection = server.connect();
    let mut line = Vec::new();
    let mut replies = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(Status::Running);
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        replies.clear();
        let status = connection.receive(&line, &mut replies);
        for reply in &replies {
            output.write_all(reply)?;
            output.write_all(b"\n")?;
        }
        output.flush()?;
        if status != Status::Running {
            return Ok(status);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_inputs_give_the_same_transcript_as_borrowed_ones() {
        for (index, mutant) in (0..200).zip(mutants::Mutant::ALL.iter().cycle()) {
            let inputs = crate::campaign::conversation(3, index);
            let mut target = InProcess(reference::Planted(*mutant));
            let borrowed = target.run(&inputs).unwrap();
            assert_eq!(target.run_owned(inputs).unwrap(), borrowed, "conversation {index}, {}", mutant.name());
        }
    }

    struct Scripted(Status, bool);

    impl InProcessServer for Scripted {
        type Connection = Scripted;

        fn connect(&self) -> Scripted {
            Scripted(self.0, self.1)
        }
    }

    impl ServerConnection for Scripted {
        fn receive(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> Status {
            assert!(!self.1, "server bug");
            out.push(line.to_vec());
            self.0
        }
    }

    fn lines(n: usize) -> Vec<Input> {
        (0..n).flat_map(|i| [Input::Line(vec![b'a' + i as u8]), Input::Sync]).collect()
    }

    #[test]
    fn a_running_server_is_closed_by_the_harness() {
        let transcript = run_in_process(&Scripted(Status::Running, false), &lines(2));
        assert_eq!(transcript.ending, Ending::Closed);
        assert_eq!(transcript.events.len(), 6);
        assert_eq!(transcript.events[1], Event::Received { line: b"a".to_vec(), truncated: false });
        assert_eq!(transcript.events[2], Event::Sync);
    }

    #[test]
    fn exit_hang_and_panic_end_the_conversation() {
        let exited = run_in_process(&Scripted(Status::Exited(3), false), &lines(2));
        assert_eq!(exited.events.len(), 2);
        assert!(matches!(exited.ending, Ending::Exited { code: Some(3), .. }));
        let hung = run_in_process(&Scripted(Status::Hung, false), &lines(2));
        assert_eq!(hung.ending, Ending::Hung { waited_ms: 0 });
        let panicked = run_in_process(&Scripted(Status::Running, true), &lines(2));
        let Ending::Exited { code: Some(101), stderr_tail, .. } = panicked.ending else { panic!("not an exit") };
        assert_eq!(stderr_tail, b"server bug".to_vec());
    }

    #[test]
    fn serve_writes_one_line_per_reply_and_stops_with_the_server() {
        let mut output = Vec::new();
        let status = serve(&Scripted(Status::Exited(4), false), &b"x\ny\n"[..], &mut output).unwrap();
        assert_eq!((status, output), (Status::Exited(4), b"x\n".to_vec()));
    }
}
