//! `mcp-wirefuzz attach SOCKET`: the client side of a fork server (`forkservers/`), used as the server command.
//!
//! A stdio server in an interpreted language spends most of a short conversation starting up. A fork server
//! imports the SDK once and forks a fresh server per connection; this stub stands in for that server as the child
//! process the stdio target starts: it hands its stdin, stdout and stderr to the fork server (one byte `F` with
//! the three fds, SCM_RIGHTS over a Unix socket), lets go of stdin and stdout so only the forked server holds
//! them, waits for the status line (`exit N` or `signal N`) and ends the same way. When the harness kills the stub
//! (a hung server), the fork server sees the socket close and kills the forked server.

use anyhow::{Context, Result, bail};
use nix::sys::signal::{self, SigHandler, Signal};
use nix::sys::socket::{ControlMessage, MsgFlags, UnixAddr, sendmsg};
use std::fs::File;
use std::io::{ErrorKind, IoSlice, Read};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

/// The byte the stub sends with its three fds.
pub const HELLO: &[u8] = b"F";
/// The exit code of a stub that ran no server: the fork server was not there, or went away without a status.
pub const LOST_EXIT: u8 = 125;
/// How the stub's last stderr line starts when it ran no server: the harness reads it to stop with an error of its
/// own rather than report the stub's exit as the server's.
pub const LOST_NOTE: &str = "mcp-wirefuzz attach: no server ran:";

/// The longest status line the stub reads (`exit 255` or `signal 64` fit many times over).
const STATUS_BYTES: u64 = 64;

/// How the forked server ended, as the fork server reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It exited with this code.
    Exit(u8),
    /// A signal killed it.
    Signal(i32),
    /// The fork server closed the connection without a status (it died, or is not a fork server).
    Lost,
}

/// Connects to the fork server at `socket` (retrying for up to `wait` while it starts), hands it this process's
/// stdin, stdout and stderr, lets go of stdin and stdout, and waits until the forked server ends.
pub fn attach(socket: &Path, wait: Duration) -> Result<Outcome> {
    let mut stream = connect(socket, wait)?;
    let fds = [0, 1, 2];
    sendmsg::<UnixAddr>(
        stream.as_raw_fd(),
        &[IoSlice::new(HELLO)],
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::empty(),
        None,
    )
    .with_context(|| format!("cannot hand stdio to the fork server at {}", socket.display()))?;
    let null = File::options().read(true).write(true).open("/dev/null").context("cannot open /dev/null")?;
    nix::unistd::dup2_stdin(&null).context("cannot let go of stdin")?;
    nix::unistd::dup2_stdout(&null).context("cannot let go of stdout")?;
    let mut line = Vec::new();
    // A read error leaves no whole status line: the fork server is lost either way.
    let _ = (&mut stream).take(STATUS_BYTES).read_to_end(&mut line);
    Ok(parse_status(&line))
}

/// Ends this process as `outcome` says: the same exit code, or the same signal (with its default action
/// restored, so a signal the stub would ignore still kills it). A lost fork server exits with [`LOST_EXIT`].
pub fn exit_as(outcome: Outcome) -> ! {
    match outcome {
        Outcome::Exit(code) => std::process::exit(code.into()),
        Outcome::Signal(number) => {
            if let Ok(signal) = Signal::try_from(number) {
                // SAFETY: restoring the default action installs no Rust handler; nothing runs concurrently with
                // it that relies on the old disposition (Rust ignores SIGPIPE; the stub has no other threads).
                let _ = unsafe { signal::signal(signal, SigHandler::SigDfl) };
                let _ = signal::raise(signal);
            }
            std::process::exit(128 + number.clamp(0, 127))
        }
        Outcome::Lost => lost("the fork server closed the connection without a status"),
    }
}

/// Ends the stub when it ran no server, saying why after [`LOST_NOTE`], with [`LOST_EXIT`].
pub fn lost(why: &str) -> ! {
    eprintln!("{LOST_NOTE} {why}");
    std::process::exit(LOST_EXIT.into())
}

fn connect(socket: &Path, wait: Duration) -> Result<UnixStream> {
    let until = Instant::now() + wait;
    loop {
        match UnixStream::connect(socket) {
            Ok(stream) => return Ok(stream),
            Err(error)
                if matches!(error.kind(), ErrorKind::NotFound | ErrorKind::ConnectionRefused)
                    && Instant::now() < until =>
            {
                thread::sleep(Duration::from_millis(20));
            }
            Err(error) => {
                bail!(
                    "no fork server at {} ({error}); start one first (e.g. forkservers/python/wirefuzz_forkserver.py)",
                    socket.display()
                )
            }
        }
    }
}

/// Reads `exit N` or `signal N` (one line); anything else is [`Outcome::Lost`].
fn parse_status(line: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(line);
    let mut words = text.split_whitespace();
    match (words.next(), words.next().map(str::parse::<i64>)) {
        (Some("exit"), Some(Ok(code))) => Outcome::Exit((code & 0xFF) as u8),
        (Some("signal"), Some(Ok(number))) if (1..=64).contains(&number) => Outcome::Signal(number as i32),
        _ => Outcome::Lost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_are_read_and_anything_else_is_lost() {
        assert_eq!(parse_status(b"exit 0\n"), Outcome::Exit(0));
        assert_eq!(parse_status(b"exit 3\n"), Outcome::Exit(3));
        assert_eq!(parse_status(b"signal 9\n"), Outcome::Signal(9));
        assert_eq!(parse_status(b""), Outcome::Lost);
        assert_eq!(parse_status(b"signal 0\n"), Outcome::Lost);
        assert_eq!(parse_status(b"exit nine\n"), Outcome::Lost);
        assert_eq!(parse_status(b"\xff\xfe"), Outcome::Lost);
    }

    #[test]
    fn a_missing_socket_is_a_clear_error_after_the_wait() {
        let started = Instant::now();
        let error = connect(Path::new("/no/such/wirefuzz.sock"), Duration::from_millis(100)).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert!(format!("{error:#}").contains("no fork server at /no/such/wirefuzz.sock"), "{error:#}");
    }
}
