//! Servers under test: the in-process server interface, the built-in reference server, and child processes over
//! stdio.

pub mod reference;
pub mod stdio;

use std::io::{self, BufRead, Write};

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
