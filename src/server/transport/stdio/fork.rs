//! The fork server the harness starts by itself for a Python program over stdio, and whether a run goes through it.
//!
//! [`ForkServer::start`] writes the fork server (`forkservers/python/wirefuzz_forkserver.py`, built into the
//! harness) into a private folder and starts it with the program's own interpreter and options, on a socket in that
//! folder, with `--preload-imports`: it imports what the program imports at top level, the Python MCP SDKs installed
//! and what a trial run of the program (with no input: its start-up) imported, leaving to each server a module whose
//! import starts a thread or writes to stdout (it starts over without it). Per conversation
//! `mcp-wirefuzz attach SOCKET` stands in for the program ([`ServerCommand::with_stand_in`]), so each conversation
//! still has a fresh process. The fork server's process group is ended and its folder removed when it is dropped,
//! and by [`crate::server::children::end_all`] when a signal stops the harness.
//!
//! [`launch`] decides: a fork server that does not start, or whose first conversation fails where a plain process's
//! does not, leaves the program to plain processes, with the reason.

use super::StdioTarget;
use super::process::end_group;
use super::python::{Main, PythonProgram};
use crate::protocol::era::LATEST_HANDSHAKE_VERSION;
use crate::protocol::methods::INITIALIZE;
use crate::server::children::{self, track, untrack};
use crate::server::launch;
use crate::server::{ServerCommand, Target, Timeouts};
use crate::transcript::{Ending, Input, Transcript};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// The fork server's source, written into its folder (the harness runs from anywhere, without this repository).
const SOURCE: &str = include_str!("../../../../forkservers/python/wirefuzz_forkserver.py");
/// How the fork server's own stderr lines start.
const NOTE: &str = "wirefuzz-forkserver: ";
/// The line that names the fork server's preloads, after [`NOTE`].
const PRELOADED: &str = "preloaded: ";
/// A line that names a module the fork server left to each server, after [`NOTE`].
const LEFT_OUT: &str = "not preloading ";
/// How much of the end of the fork server's log is read for why it stopped, or what it preloaded.
const LOG_TAIL_BYTES: u64 = 8 << 10;
/// How long a fork server being stopped has to end itself and its children before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// The least time a fork server gets to listen: it imports the program's modules, then runs the program once (a
/// trial of up to 15 s) and imports what that imported, each once for the whole run.
const MIN_START: Duration = Duration::from_secs(60);
/// How often the start looks for the socket.
const START_TICK: Duration = Duration::from_millis(10);
/// A fork server the harness started for one Python program: its process group and its private folder (the socket,
/// the fork server's source, its log). Dropping it stops the fork server and removes the folder.
#[derive(Debug)]
pub struct ForkServer {
    child: Child,
    folder: PathBuf,
    socket: PathBuf,
    preloaded: String,
    left_out: Vec<String>,
}

impl ForkServer {
    /// Starts a fork server for `program` and waits up to `wait` until it listens; the error says why it did not,
    /// in one line. Like a server process, it gets SIGKILL when the thread that started it ends.
    pub fn start(program: &PythonProgram, wait: Duration) -> Result<ForkServer, String> {
        let folder = private_folder().map_err(|error| format!("cannot make a folder for it: {error}"))?;
        let child = match spawn(program, &folder) {
            Ok(child) => child,
            Err(error) => {
                let _ = fs::remove_dir_all(&folder);
                return Err(format!("cannot start `{}`: {error}", program.interpreter.join(" ")));
            }
        };
        track(Pid::from_raw(child.id() as i32));
        children::track_folder(&folder);
        let socket = folder.join("server.sock");
        let mut server = ForkServer { child, folder, socket, preloaded: String::new(), left_out: Vec::new() };
        server.listening(wait)?;
        Ok(server)
    }

    /// The command line that stands in for the program per conversation: `stub attach SOCKET`, `stub` being the
    /// `mcp-wirefuzz` executable.
    pub fn stand_in(&self, stub: &Path) -> Vec<String> {
        [stub, Path::new("attach"), &self.socket].iter().map(|p| p.display().to_string()).collect()
    }

    /// What it preloaded, in its words: the modules worth naming (none of the standard library's, none under one
    /// named), and how many more the program's start-up imports.
    pub fn preloaded(&self) -> &str {
        &self.preloaded
    }

    /// The modules it left to each server, each with why (`NAME: it started a thread at import`).
    pub fn left_out(&self) -> &[String] {
        &self.left_out
    }

    /// Waits until the socket is there (the fork server renames it into place once it listens), the fork server
    /// exits, or `wait` passes.
    fn listening(&mut self, wait: Duration) -> Result<(), String> {
        let until = Instant::now() + wait;
        loop {
            if self.socket.exists() {
                let log = self.log();
                let notes: Vec<&str> = log.lines().filter_map(|line| line.strip_prefix(NOTE)).collect();
                let preloaded = notes.iter().rev().find_map(|note| note.strip_prefix(PRELOADED));
                self.preloaded = preloaded.unwrap_or("nothing").to_string();
                self.left_out =
                    notes.iter().filter_map(|note| note.strip_prefix(LEFT_OUT)).map(str::to_string).collect();
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let log = self.log();
                let last = log.lines().rev().map(str::trim).find(|line| !line.is_empty());
                return Err(match last {
                    Some(line) => line.strip_prefix(NOTE).unwrap_or(line).to_string(),
                    None => format!("it exited ({status}) saying nothing"),
                });
            }
            if Instant::now() >= until {
                return Err(format!("it did not listen within {:.0} s", wait.as_secs_f64()));
            }
            thread::sleep(START_TICK);
        }
    }

    /// The end of the fork server's log (its stdout and stderr).
    fn log(&self) -> String {
        let mut tail = Vec::new();
        if let Ok(mut file) = File::open(self.folder.join("forkserver.log")) {
            let length = file.metadata().map_or(0, |m| m.len());
            let _ = file.seek(SeekFrom::Start(length.saturating_sub(LOG_TAIL_BYTES)));
            let _ = file.take(LOG_TAIL_BYTES).read_to_end(&mut tail);
        }
        String::from_utf8_lossy(&tail).into_owned()
    }
}

impl Drop for ForkServer {
    /// SIGTERM to its group (the fork server kills the servers it forked and removes its socket), SIGKILL to what
    /// is left after [`STOP_GRACE`]; then the folder goes.
    fn drop(&mut self) {
        let group = Pid::from_raw(self.child.id() as i32);
        end_group(&mut self.child, STOP_GRACE);
        untrack(group);
        let _ = fs::remove_dir_all(&self.folder);
        children::forget_folder(&self.folder);
    }
}

/// A new folder only this user can enter, under the system's temporary folder.
fn private_folder() -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!("mcp-wirefuzz-fork-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let folder = std::env::temp_dir().join(name);
    fs::DirBuilder::new().mode(0o700).create(&folder)?;
    Ok(folder)
}

/// Writes the fork server into `folder` and starts it there for `program`, its output to `forkserver.log`.
fn spawn(program: &PythonProgram, folder: &Path) -> std::io::Result<Child> {
    let source = folder.join("wirefuzz_forkserver.py");
    fs::write(&source, SOURCE)?;
    let log = File::create(folder.join("forkserver.log"))?;
    let log_out = log.try_clone()?;
    let (interpreter, options) = program.interpreter.split_first().ok_or(std::io::ErrorKind::InvalidInput)?;
    let mut args: Vec<OsString> = options.iter().map(OsString::from).collect();
    args.extend([
        source.into_os_string(),
        "--socket".into(),
        folder.join("server.sock").into(),
        "--preload-imports".into(),
    ]);
    match &program.main {
        Main::Script(script) => args.push(script.into()),
        Main::Module(module) => args.extend(["--module".into(), module.into()]),
    };
    args.extend(program.args.iter().map(OsString::from));
    launch::spawn(interpreter.as_ref(), &args, |command| {
        command.stdin(Stdio::null()).stdout(log_out).stderr(log);
        // What `env NAME=VALUE` gives the program: the fork server's environment is every forked server's.
        command.envs(program.env.iter().map(|(name, value)| (name, value)));
    })
}

/// How a Python program's run goes.
#[derive(Debug)]
pub enum Launch {
    /// Through `server`: `command` is the program's own, with the stand-in that attaches to it.
    Forked {
        /// The program's command, started as its stand-in.
        command: ServerCommand,
        /// The fork server (stopped when dropped).
        server: ForkServer,
    },
    /// As plain processes, for this reason (one line).
    Plain {
        /// Why not through a fork server.
        why: String,
    },
}

/// Starts a fork server for `program`, the Python program `command` starts (waiting the start-up and reply timeouts
/// for it to listen, and at least a minute), and runs a first conversation through it (an `initialize`, which every
/// server answers one way or another). A fork server that does not start, or a
/// first conversation that fails through it where a plain process's does not (no reply, a crash), leaves the
/// program to plain processes. `stub` is the `mcp-wirefuzz` executable, whose `attach` stands in for the program.
pub fn launch(command: &ServerCommand, program: &PythonProgram, stub: &Path, timeouts: Timeouts) -> Launch {
    let timeouts = Timeouts { deadline: None, linger: Duration::ZERO, ..timeouts };
    let server = match ForkServer::start(program, (timeouts.startup + timeouts.reply).max(MIN_START)) {
        Ok(server) => server,
        Err(why) => return Launch::Plain { why: format!("the fork server did not start: {why}") },
    };
    let forked = command.clone().with_stand_in(server.stand_in(stub));
    let first = match first_conversation(&forked, timeouts) {
        Ok(first) if answered(&first) => return Launch::Forked { command: forked, server },
        Ok(first) => first,
        Err(error) => {
            return Launch::Plain { why: format!("its first conversation through the fork server failed: {error:#}") };
        }
    };
    match first_conversation(command, timeouts) {
        Ok(plain) if answered(&plain) => Launch::Plain {
            why: format!(
                "through the fork server its first conversation {}, a plain process's did not",
                failed(&first)
            ),
        },
        // A plain process fails the same way: that is the server's own doing, judged through the fork server.
        _ => Launch::Forked { command: forked, server },
    }
}

/// One `initialize` on a fresh process of `command`, on the clock.
fn first_conversation(command: &ServerCommand, timeouts: Timeouts) -> anyhow::Result<Transcript> {
    let initialize = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": INITIALIZE, "params": {
        "protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
        "clientInfo": { "name": "mcp-wirefuzz", "version": env!("CARGO_PKG_VERSION") } } });
    let inputs = [Input::Line(initialize.to_string().into_bytes()), Input::Sync];
    StdioTarget::new(command.clone(), timeouts).cold().run(&inputs)
}

/// Whether a first conversation went as a working server's does: a line came back, and the server was still
/// serving when the harness closed its input.
fn answered(transcript: &Transcript) -> bool {
    transcript.received().next().is_some() && transcript.ending == Ending::Closed
}

/// How a first conversation that was not [`answered`] went, for the reason of a fallback.
fn failed(transcript: &Transcript) -> String {
    match &transcript.ending {
        Ending::Exited { code, signal, stderr_tail } => {
            let how = match (code, signal) {
                (_, Some(signal)) => format!("was killed by signal {signal}"),
                (Some(code), None) => format!("exited with code {code}"),
                (None, None) => "ended".to_string(),
            };
            let tail = String::from_utf8_lossy(stderr_tail);
            match tail.lines().rev().map(str::trim).find(|line| !line.is_empty()) {
                Some(last) => format!("{how} ({last})"),
                None => how,
            }
        }
        Ending::Cut { .. } => "wrote more than the harness keeps".to_string(),
        Ending::Closed | Ending::Hung { .. } => "got no reply".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python(script: &str) -> PythonProgram {
        let main = Main::Script(script.into());
        PythonProgram { interpreter: vec!["python3".into()], main, args: Vec::new(), env: Vec::new() }
    }

    #[test]
    fn a_fork_server_that_cannot_start_says_why_and_leaves_nothing_behind() {
        let error = ForkServer::start(&python("/no/such/server.py"), Duration::from_secs(30)).unwrap_err();
        assert!(error.contains("no such script: /no/such/server.py"), "{error}");
        let missing = PythonProgram { interpreter: vec!["/no/such/python3".into()], ..python("s.py") };
        let error = ForkServer::start(&missing, Duration::from_secs(30)).unwrap_err();
        assert!(error.starts_with("cannot start `/no/such/python3`"), "{error}");
        let prefix = format!("mcp-wirefuzz-fork-{}-", std::process::id());
        let left = fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
            .count();
        assert_eq!(left, 0);
    }

    #[test]
    fn a_stand_in_is_started_while_the_plain_command_is_named() {
        let plain = ServerCommand::from_argv(&["python3".into(), "s.py".into()]).unwrap();
        let stub = vec!["/bin/mcp-wirefuzz".to_string(), "attach".into(), "/tmp/x/server.sock".into()];
        let forked = plain.clone().with_stand_in(stub.clone());
        assert_eq!(forked.started(), ("/bin/mcp-wirefuzz", &stub[1..]));
        assert_eq!(forked.argv(), ["python3", "s.py"]);
        assert_eq!(forked, plain, "the same server, however it is started");
        assert_eq!(plain.started(), ("python3", &["s.py".to_string()][..]));
    }

    #[test]
    fn a_first_conversation_that_failed_is_told_in_one_line() {
        let ended = |ending| Transcript { events: Vec::new(), ending };
        let crash = Ending::Exited { code: Some(1), signal: None, stderr_tail: b"Traceback\nValueError: x\n".to_vec() };
        assert_eq!(failed(&ended(crash)), "exited with code 1 (ValueError: x)");
        let killed = Ending::Exited { code: None, signal: Some(9), stderr_tail: Vec::new() };
        assert_eq!(failed(&ended(killed)), "was killed by signal 9");
        assert_eq!(failed(&ended(Ending::Hung { waited_ms: 2 })), "got no reply");
        assert!(!answered(&ended(Ending::Closed)));
    }
}
