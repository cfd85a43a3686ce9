//! Servers under test, in three rooms around one contract.
//!
//! This file is the contract every server and transport shares: the [`Target`] trait (one conversation per call),
//! the in-process server interface ([`InProcessServer`], [`ServerConnection`], [`Status`]), a server's command line
//! ([`ServerCommand`]), the waits ([`Timeouts`]), the bounds ([`MAX_LINE_BYTES`], [`STDERR_TAIL_BYTES`],
//! [`MAX_EVENTS`], [`END_GRACE`]), and which server a command runs against ([`ServerSpec`]).
//!
//! - [`transport`]: how a conversation reaches a server: in-process, a child process over stdio, Streamable HTTP.
//! - [`adapter`]: what makes a server written against another interface an [`InProcessServer`] (async servers
//!   that speak lines, rmcp handlers).
//! - [`builtin`]: the servers that ship with the harness (the reference server, its planted bugs, the quirky one).
//! - [`latency`] and [`hangs`]: what a run measures of its server's reply times, and how it tells a handler that
//!   never returns from a slow one.
//!
//! The public face for a Rust server author stays at this level: [`InProcess`] and [`run_in_process`], and, with
//! their features, `server::rmcp` and `server::async_lines` (re-exports of the adapters).

pub mod adapter;
pub mod builtin;
pub mod children;
pub mod hangs;
pub mod latency;
pub mod launch;
pub mod transport;

#[cfg(feature = "async-lines")]
pub use adapter::async_lines;
#[cfg(feature = "rmcp")]
pub use adapter::rmcp;
pub use transport::in_process::{InProcess, run_in_process};

use builtin::{mutants, reference};
use hangs::HangWait;
use transport::{http, stdio};

use crate::transcript::{Input, Transcript};
use anyhow::{Result, bail};
use std::time::{Duration, Instant};

/// The longest stdout line kept whole; the rest of a longer line is read and discarded.
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// How much of the server's stderr is kept (its last bytes).
pub const STDERR_TAIL_BYTES: usize = 64 << 10;
/// The most events one conversation records; a server that floods its output is cut off there.
pub const MAX_EVENTS: usize = 100_000;
/// How long a server's process group has between SIGTERM and SIGKILL when its conversation ends.
pub const END_GRACE: Duration = Duration::from_millis(100);
/// The command line of a server: a program and its arguments, run without a shell. It may be started through a
/// stand-in (the stub of a fork server that runs the program, see `stdio::fork`); reports, case files and
/// reproduction commands name the program and its arguments all the same.
#[derive(Clone, Debug)]
pub struct ServerCommand {
    /// The program (a path, or a name looked up on PATH).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The command line started in this one's place, if any.
    stand_in: Option<Vec<String>>,
}

impl PartialEq for ServerCommand {
    /// The same program and arguments: the same server, however it is started.
    fn eq(&self, other: &ServerCommand) -> bool {
        self.program == other.program && self.args == other.args
    }
}

impl Eq for ServerCommand {}

impl ServerCommand {
    /// Splits `[program, args...]`; fails on an empty list.
    pub fn from_argv(argv: &[String]) -> Result<ServerCommand> {
        let Some((program, args)) = argv.split_first() else { bail!("no server command given") };
        Ok(ServerCommand { program: program.clone(), args: args.to_vec(), stand_in: None })
    }

    /// The command as argv (the command named, not its stand-in).
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.clone()).chain(self.args.iter().cloned()).collect()
    }

    /// The same command, started as `argv` (not empty) in its place.
    pub fn with_stand_in(mut self, argv: Vec<String>) -> ServerCommand {
        self.stand_in = Some(argv).filter(|argv| !argv.is_empty());
        self
    }

    /// The program and arguments started for this command: its stand-in's, if it has one.
    pub fn started(&self) -> (&str, &[String]) {
        match self.stand_in.as_deref() {
            Some([program, args @ ..]) => (program, args),
            _ => (&self.program, &self.args),
        }
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
    /// True when the reply timeout grows with the server's measured reply time ([`latency`]; a stdio target
    /// measures its own conversations); false when it is pinned (`--timeout`).
    pub adaptive: bool,
    /// How a tool call given up on as slow is told from a handler that never returns (over stdio,
    /// `SERVER-HANDLER-HANG`): waited for, or only suspected ([`hangs`]).
    pub hang: HangWait,
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
            adaptive: false,
            hang: HangWait::default(),
        }
    }
}

impl Timeouts {
    /// These timeouts with the reply timeout, the settle time and the shutdown budget `factor` times longer (the
    /// start-up allowance, generous already, and the deadline stay).
    pub fn stretched(self, factor: u32) -> Timeouts {
        Timeouts { reply: self.reply * factor, settle: self.settle * factor, shutdown: self.shutdown * factor, ..self }
    }

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

/// A borrowed in-process server serves as the server itself (`InProcess(&server)` is a target).
impl<S: InProcessServer> InProcessServer for &S {
    type Connection = S::Connection;

    fn connect(&self) -> S::Connection {
        (**self).connect()
    }
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

    /// The client is done: it waits for every reply still owed as long as a client ever would, and appends what
    /// came to `out`. Returns how long it waited, in milliseconds, when that wait is one no slow handler outlasts
    /// (an async server's virtual clock: a request still unanswered after it is one its handler never returns
    /// from). The default is [`ServerConnection::release`], and `None`.
    fn close(&mut self, out: &mut Vec<Vec<u8>>) -> Option<u64> {
        self.release(out);
        None
    }

    /// Takes the handler failures seen since the last call, each one text (a panic's location and message) of a
    /// failure the connection went on serving after (a panic in a task a handler ran in). The default sees none.
    fn failures(&mut self) -> Vec<String> {
        Vec::new()
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

    /// The same server with its waits `factor` times longer ([`Timeouts::stretched`]), each conversation on a fresh
    /// process or connection, spending the wait that tells a hung handler ([`Timeouts::hang`]) where this target
    /// only suspects one: it confirms a finding that rests on silence ([`crate::campaign::confirm`]). `None` when
    /// the target's verdicts do not depend on waits (an in-process server).
    fn patient(&self, _factor: u32) -> Option<Box<dyn Target + Send>> {
        None
    }
}

/// The error of a conversation the harness cut short, so that its server was killed and what it said is not
/// judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutShort {
    /// The run's deadline passed during the conversation (`fuzz --time`).
    DeadlinePassed,
    /// The harness was ending its servers ([`children::end_all`], when a signal stops it).
    Halted,
}

impl CutShort {
    /// True when `error` is this one, or carries it as its cause.
    pub fn is(self, error: &anyhow::Error) -> bool {
        error.chain().any(|cause| cause.downcast_ref::<CutShort>() == Some(&self))
    }
}

impl std::fmt::Display for CutShort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CutShort::DeadlinePassed => "the run's deadline passed during the conversation",
            CutShort::Halted => "the harness was ending its servers during the conversation (stopped by a signal)",
        })
    }
}

impl std::error::Error for CutShort {}

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

    /// The targets of a campaign on a server known to serve `eras`: `jobs` fuzzing ones with `fuzzing`'s waits,
    /// and the shrink worker's with `settling`'s. A child process's fuzzing targets keep a spare started ahead, use
    /// sentinel barriers and keep a process across self-contained modern conversations
    /// ([`stdio::StdioTarget::with_sentinels`]), and only suspect a handler that never returns
    /// ([`HangWait::Suspect`]); the shrink worker's counts only calls a wait showed hung ([`HangWait::Recall`]),
    /// its patient targets spend the wait; and all of them share what the run learned of the server's tool calls
    /// ([`hangs::Hangs`]).
    pub fn campaign_targets(
        &self,
        fuzzing: Timeouts,
        settling: Timeouts,
        eras: crate::model::Eras,
        jobs: usize,
    ) -> (Vec<Box<dyn Target + Send>>, Box<dyn Target + Send>) {
        let ServerSpec::Command(command) = self else {
            return ((0..jobs).map(|_| self.pooled_target(fuzzing)).collect(), self.target(settling));
        };
        let hangs = std::sync::Arc::new(hangs::Hangs::default());
        let suspecting = Timeouts { hang: HangWait::Suspect(fuzzing.hang.wait()), ..fuzzing };
        let fuzzer = |_| -> Box<dyn Target + Send> {
            let target = stdio::StdioTarget::new(command.clone(), suspecting).with_sentinels(eras);
            Box::new(target.sharing(hangs.clone()))
        };
        let recalling = Timeouts { hang: HangWait::Recall(settling.hang.wait()), ..settling };
        let shrinker = stdio::StdioTarget::new(command.clone(), recalling).cold().sharing(hangs.clone());
        ((0..jobs).map(fuzzer).collect(), Box::new(shrinker))
    }

    /// A target on a server known to serve `eras` (a child process uses sentinel barriers), with a fresh process
    /// for every conversation (`check`'s probes): what each probe sees is what a freshly started server does.
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
