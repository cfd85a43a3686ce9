//! A server under test as a child process over stdio: spawned directly (never through a shell), fed lines on
//! stdin, its stdout read as lines with a bound on each line's length, its stderr kept (the tail), and every wait
//! bounded by a deadline.

use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The longest stdout line kept whole; the rest of a longer line is read and discarded.
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// How much of the server's stderr is kept (its last bytes).
pub const STDERR_TAIL_BYTES: usize = 64 << 10;

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

    fn spawn(&self) -> Result<Child> {
        Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start server `{}`", self.program))
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

/// What a one-shot run of a child server produced.
#[derive(Debug)]
pub struct ChildRun {
    /// Every line written to stdout, in order.
    pub stdout: Vec<OutputLine>,
    /// How the process ended; `None` when it was killed at the deadline.
    pub exit: Option<ExitStatus>,
    /// True when the deadline passed before the server closed its stdout.
    pub timed_out: bool,
    /// The last [`STDERR_TAIL_BYTES`] of stderr.
    pub stderr_tail: Vec<u8>,
}

/// Starts the server, writes every line (each followed by a newline), closes stdin, and collects stdout until the
/// server closes it or `deadline` passes (then the process is killed).
pub fn run_once(command: &ServerCommand, lines: &[Vec<u8>], deadline: Duration) -> Result<ChildRun> {
    let started = Instant::now();
    let mut child = command.spawn()?;
    let mut stdin = child.stdin.take().context("child stdin")?;
    let stdout = child.stdout.take().context("child stdout")?;
    let stderr = child.stderr.take().context("child stderr")?;
    let input: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
    // A server that never reads must not block the harness: the writer has its own thread.
    thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let (tail_sender, tail_receiver) = mpsc::channel();
    thread::spawn(move || tail_sender.send(read_tail(stderr, STDERR_TAIL_BYTES)));
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || read_lines(stdout, sender));
    let mut stdout_lines = Vec::new();
    let mut timed_out = false;
    loop {
        let left = deadline.saturating_sub(started.elapsed());
        match receiver.recv_timeout(left) {
            Ok(line) => stdout_lines.push(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                timed_out = true;
                break;
            }
        }
    }
    let exit = if timed_out {
        let _ = child.kill();
        let _ = child.wait();
        None
    } else {
        wait_until(&mut child, started + deadline)?
    };
    // The process is gone; a grandchild may still hold the pipes, so the reader threads are not joined, and the
    // stderr tail is waited for only briefly.
    let stderr_tail = tail_receiver.recv_timeout(Duration::from_millis(200)).unwrap_or_default();
    Ok(ChildRun { stdout: stdout_lines, exit, timed_out, stderr_tail })
}

/// Waits for the child to exit until `until`, then kills it.
fn wait_until(child: &mut Child, until: Instant) -> Result<Option<ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(2));
    }
}

fn read_lines(stdout: ChildStdout, sender: mpsc::Sender<OutputLine>) {
    let mut reader = BufReader::new(stdout);
    loop {
        match read_bounded_line(&mut reader, MAX_LINE_BYTES) {
            Ok(Some(line)) => {
                if sender.send(line).is_err() {
                    return;
                }
            }
            Ok(None) | Err(_) => return,
        }
    }
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

fn read_tail(mut stream: impl Read, keep: usize) -> Vec<u8> {
    let mut tail = Vec::new();
    let mut chunk = [0u8; 8192];
    while let Ok(n) = stream.read(&mut chunk) {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&chunk[..n]);
        if tail.len() > 2 * keep {
            tail.drain(..tail.len() - keep);
        }
    }
    if tail.len() > keep {
        tail.drain(..tail.len() - keep);
    }
    tail
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn stderr_keeps_only_its_tail() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let tail = read_tail(std::io::Cursor::new(data.clone()), 1000);
        assert_eq!(tail, data[data.len() - 1000..].to_vec());
    }

    #[test]
    fn a_silent_server_hits_the_deadline() {
        let command = ServerCommand::from_argv(&["sleep".into(), "5".into()]).unwrap();
        let run = run_once(&command, &[b"{}".to_vec()], Duration::from_millis(200)).unwrap();
        assert!(run.timed_out && run.exit.is_none() && run.stdout.is_empty());
    }

    #[test]
    fn a_missing_program_is_a_clear_error() {
        let command = ServerCommand::from_argv(&["/no/such/server".into()]).unwrap();
        let error = run_once(&command, &[], Duration::from_secs(1)).unwrap_err();
        assert!(format!("{error:#}").contains("cannot start server `/no/such/server`"));
        assert!(ServerCommand::from_argv(&[]).is_err());
    }
}
