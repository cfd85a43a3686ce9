//! The transcript of one conversation: what was sent, what came back, in the order the harness saw it, and how the
//! connection ended. It is the one interchange between running a server and checking it: the oracle reads nothing
//! else, so the same checks run in fuzzing, property tests, replay and on recorded traffic.

/// One thing the harness sends: a line (its bytes exactly, without the newline) or a sync point.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    /// One line, written to the server followed by a newline.
    Line(Vec<u8>),
    /// Wait until every reply to what was sent before has arrived (or the timeout passed) before going on.
    Sync,
}

/// One observation, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A line the harness wrote (without its newline).
    Sent(Vec<u8>),
    /// A line the server wrote (without its newline).
    Received {
        /// The line's bytes, cut at the harness's line bound when `truncated`.
        line: Vec<u8>,
        /// True when the server's line was longer than the harness keeps.
        truncated: bool,
    },
    /// A sync point: every request sent before it should have been answered by now.
    Sync,
}

/// How the connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every input was sent and the final sync passed; the harness then closed the connection.
    Closed,
    /// The server ended the connection (the process exited) before the script was done.
    Exited {
        /// The exit code, when there was one.
        code: Option<i32>,
        /// The signal that killed the process, when there was one.
        signal: Option<i32>,
        /// The last bytes of the server's stderr.
        stderr_tail: Vec<u8>,
    },
    /// The server stopped answering: a reply it owed did not come within the timeout.
    Hung {
        /// How long the harness waited, in milliseconds (0 for an in-process server that reported it).
        waited_ms: u64,
    },
    /// The server wrote more than the harness keeps: the transcript was cut after `events` events. Nothing after
    /// the cut was seen, so nothing that needs it is judged (a reply that may have come after it is not missing,
    /// and how the connection ended is unknown).
    Cut {
        /// How many events were kept.
        events: usize,
    },
}

/// A whole conversation: the events in order and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transcript {
    /// Sent lines, received lines and sync points, in the order observed.
    pub events: Vec<Event>,
    /// How the connection ended.
    pub ending: Ending,
}

impl Transcript {
    /// The lines the server wrote, in order.
    pub fn received(&self) -> impl Iterator<Item = &[u8]> {
        self.events.iter().filter_map(|e| match e {
            Event::Received { line, .. } => Some(line.as_slice()),
            _ => None,
        })
    }

    /// A human-readable rendering: `>>` for a sent line, `<<` for a received one, `--` for a sync point, then the
    /// ending. Non-UTF-8 bytes are shown escaped.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (index, event) in self.events.iter().enumerate() {
            let (mark, line) = match event {
                Event::Sent(line) => (">>", line.as_slice()),
                Event::Received { line, .. } => ("<<", line.as_slice()),
                Event::Sync => ("--", &b"sync"[..]),
            };
            out.push_str(&format!("{index:>4} {mark} {}\n", show_bytes(line, 400)));
        }
        out.push_str(&match &self.ending {
            Ending::Closed => "     == closed by the harness\n".to_string(),
            Ending::Exited { code, signal, .. } => {
                format!("     == server exited (code {code:?}, signal {signal:?})\n")
            }
            Ending::Hung { waited_ms } => format!("     == server hung (waited {waited_ms} ms)\n"),
            Ending::Cut { events } => {
                format!("     == CUT: the harness kept {events} events; nothing after was seen\n")
            }
        });
        out
    }
}

/// Shows bytes as text: invalid UTF-8 as U+FFFD, control characters escaped, cut after `max` characters.
pub fn show_bytes(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut shown = String::new();
    for c in text.chars().take(max) {
        if c.is_control() { shown.extend(c.escape_default()) } else { shown.push(c) }
    }
    if text.chars().count() > max {
        shown.push_str(&format!("... ({} bytes)", bytes.len()));
    }
    shown
}
