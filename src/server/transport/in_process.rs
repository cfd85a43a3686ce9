//! The in-process transport: a conversation with an [`InProcessServer`] run on the harness's own thread, one line
//! at a time, each reply attributed to the line that caused it ([`InProcess`], [`run_in_process`]); a panic is the
//! server crashing, but a handler's panic the server went on serving after is a note ([`Note::Failure`]) after the
//! line that caused it. A request of the server's own gets the harness's answer at once ([`Client::answer`]), as
//! a line the harness sent. At the end the harness waits as long as the connection lets it ([`Note::Waited`]).
//! [`serve`] puts such a server on a byte stream (`mcp-wirefuzz serve`).

use crate::protocol::client::Client;
use crate::server::{InProcessServer, ServerConnection, Status, Target};
use crate::transcript::{Ending, Event, Input, Note, Transcript, seen};
use std::borrow::Cow;
use std::io::{self, BufRead, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};

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
    let mut client = Client::default();
    let mut inputs = inputs;
    while let Some(input) = inputs.next() {
        let line = match input {
            Cow::Borrowed(Input::Sync) | Cow::Owned(Input::Sync) => {
                let from = events.len();
                let released = release(&mut connection, &mut replies, &mut events)
                    .and_then(|()| answer_requests(&mut connection, &mut client, &mut replies, &mut events, from));
                match released {
                    Ok(Status::Running) => {}
                    Ok(status) => {
                        let ending = stopped(status, inputs, &mut events);
                        return Transcript { events, ending };
                    }
                    Err(panic) => return Transcript { events, ending: panicked(panic) },
                }
                events.push(Event::Sync);
                continue;
            }
            // A reference to a value seen in an earlier result is resolved as the line is sent.
            Cow::Borrowed(Input::Line(line)) => seen::resolve(line, &events).into_owned(),
            Cow::Owned(Input::Line(line)) if seen::holds(&line) => seen::resolve(&line, &events).into_owned(),
            Cow::Owned(Input::Line(line)) => line,
        };
        client.sent(&line);
        replies.clear();
        let status = catch_unwind(AssertUnwindSafe(|| connection.receive(&line, &mut replies)));
        let from = events.len();
        events.push(Event::Sent(line));
        events.extend(replies.drain(..).map(|line| Event::Received { line, truncated: false }));
        noted(&mut connection, &mut events);
        let status = status.and_then(|status| match status {
            Status::Running => answer_requests(&mut connection, &mut client, &mut replies, &mut events, from),
            status => Ok(status),
        });
        let ending = match status {
            Ok(Status::Running) => continue,
            Ok(status) => stopped(status, inputs, &mut events),
            Err(panic) => panicked(panic),
        };
        return Transcript { events, ending };
    }
    replies.clear();
    let closed = catch_unwind(AssertUnwindSafe(|| connection.close(&mut replies)));
    events.extend(replies.drain(..).map(|line| Event::Received { line, truncated: false }));
    noted(&mut connection, &mut events);
    let ending = match closed {
        Ok(waited) => {
            events.extend(waited.map(|ms| Event::Note(Note::Waited { ms })));
            Ending::Closed
        }
        Err(panic) => panicked(panic),
    };
    Transcript { events, ending }
}

/// The ending of a server that stopped running (`Exited` or `Hung`), with the inputs still to send.
fn stopped<'a>(status: Status, inputs: impl Iterator<Item = Cow<'a, Input>>, events: &mut Vec<Event>) -> Ending {
    match status {
        Status::Exited(code) => Ending::Exited { code: Some(code), signal: None, stderr_tail: Vec::new() },
        Status::Running | Status::Hung => {
            // A client goes on writing into a hung server's pipe: the rest is sent, and never answered.
            events.extend(inputs.map(|input| match input.into_owned() {
                Input::Line(line) => Event::Sent(line),
                Input::Sync => Event::Sync,
            }));
            Ending::Hung { waited_ms: 0 }
        }
    }
}

/// Answers the requests among the lines the server wrote since event `from` ([`Client::answer`]), then those the
/// answers bring, recording each answer and what the server wrote in reaction; the status the server is left in,
/// or `Err` when it panicked.
fn answer_requests(
    connection: &mut impl ServerConnection,
    client: &mut Client,
    replies: &mut Vec<Vec<u8>>,
    events: &mut Vec<Event>,
    from: usize,
) -> std::thread::Result<Status> {
    let mut next = from;
    loop {
        let answers: Vec<Vec<u8>> = events[next..]
            .iter()
            .flat_map(|event| match event {
                Event::Received { line, .. } => client.react(line),
                _ => Vec::new(),
            })
            .collect();
        next = events.len();
        if answers.is_empty() {
            return Ok(Status::Running);
        }
        for answer in answers {
            replies.clear();
            let status = catch_unwind(AssertUnwindSafe(|| connection.receive(&answer, replies)));
            events.push(Event::Sent(answer));
            events.extend(replies.drain(..).map(|line| Event::Received { line, truncated: false }));
            noted(connection, events);
            match status? {
                Status::Running => {}
                status => return Ok(status),
            }
        }
    }
}

/// Records the handler failures the connection saw since it was last asked.
fn noted(connection: &mut impl ServerConnection, events: &mut Vec<Event>) {
    events.extend(connection.failures().into_iter().map(|failure| Event::Note(Note::Failure(failure))));
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
    noted(connection, events);
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
    use crate::server::builtin::{mutants, reference};

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
