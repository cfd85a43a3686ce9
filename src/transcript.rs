//! The transcript of one conversation: what was sent, what came back, in the order the harness saw it, and how the
//! connection ended. It is the one interchange between running a server and checking it: the oracle reads nothing
//! else, so the same checks run in fuzzing, property tests, replay and on recorded traffic.

pub mod seen;

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
    /// One HTTP exchange (the HTTP transport only): recorded right after the line it carried as its body (a POST),
    /// or alone (a GET or DELETE); the lines of its response follow it as [`Event::Received`].
    Http(Box<Exchange>),
    /// What the harness learned beside the server's lines, at the point it learned it ([`Note`]).
    Note(Note),
}

/// The log line fastmcp writes right before the traceback of an error a tool raised, which it answers with an
/// isError result (`Error calling tool 'NAME'`): a [`Note::Failure`] whose first line holds it left no request
/// unanswered (the transports keep it as the excerpt's first line, the oracle blames no request for it).
pub const FASTMCP_CAUGHT: &str = "Error calling tool '";

/// What the harness learned about the server beside its lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// A handler failed: in-process, a panic's location and message (the server went on serving, as rmcp does
    /// when a handler's task panics); over stdio and HTTP, the excerpt of the server's stderr that shows a panic
    /// (`panicked at`) or a Python traceback, taken when a request was left unanswered.
    Failure(String),
    /// The harness waited this long (in-process: virtual time) with every reply still owed: a request unanswered
    /// after such a wait is one its handler never returns from, not a slow one.
    Waited {
        /// How long, in milliseconds.
        ms: u64,
    },
    /// Over stdio, a tool call given up on as slow was asked again under the harness id `id` and went unanswered
    /// ([`crate::server::hangs`]): the note is about that request alone.
    Reasked {
        /// The id the call was asked again under.
        id: String,
        /// How long it went unanswered, in milliseconds: the wait ([`Known::Waited`], [`Known::Remembered`]), or
        /// how long the first call had gone unanswered ([`Known::Suspected`]).
        ms: u64,
        /// How the harness knows it.
        known: Known,
    },
    /// Over stdio, a fuzzing worker waited only `waited_ms` for the server to exit once its input closed, since the
    /// run had already seen the server, owing nothing, outlive its closed input for the whole shutdown wait
    /// (`SERVER-SHUTDOWN`, found and confirmed on that conversation): how this one ended is not judged.
    ExitUnawaited {
        /// How long the exit was waited for, in milliseconds.
        waited_ms: u64,
    },
    /// Over stdio, in a long conversation: what the server's processes held after `lines` lines were sent
    /// (`SERVER-RESOURCE-GROWTH`).
    Usage {
        /// The lines sent so far.
        lines: u64,
        /// Their resident memory, in KiB.
        rss_kb: u64,
        /// Their open file descriptors.
        fds: u64,
    },
}

/// How the harness knows a call asked again goes unanswered ([`Note::Reasked`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Known {
    /// It waited the whole time.
    Waited,
    /// The same call (tool and arguments) went unanswered that long on a fresh server earlier in the run; it was not
    /// waited for again.
    Remembered,
    /// It was not waited for: the first call outlasted its tool's slowest answer, `slowest_ms`, far enough to be
    /// suspected, and a fresh server waits `wait_ms` to confirm it.
    Suspected {
        /// The slowest answer of the tool the run had seen, in milliseconds.
        slowest_ms: u64,
        /// The wait that confirms it, in milliseconds.
        wait_ms: u64,
    },
}

impl Note {
    /// True for a note of the harness's long wait for replies still owed: waited, remembered from an earlier wait,
    /// or suspected without one.
    pub fn of_wait(&self) -> bool {
        matches!(self, Note::Waited { .. } | Note::Reasked { .. })
    }

    /// The wait that confirms a hang this note only suspects ([`Known::Suspected`]), in milliseconds.
    pub fn suspected(&self) -> Option<u64> {
        match self {
            Note::Reasked { known: Known::Suspected { wait_ms, .. }, .. } => Some(*wait_ms),
            _ => None,
        }
    }

    /// True for a hang this conversation did not wait for (suspected, or remembered from the run).
    pub fn unwaited(&self) -> bool {
        matches!(self, Note::Reasked { known: Known::Remembered | Known::Suspected { .. }, .. })
    }

    /// One line for a rendered transcript.
    pub fn summary(&self) -> String {
        match self {
            Note::Failure(text) => format!("handler failed: {}", show_bytes(text.as_bytes(), 400)),
            Note::Waited { ms } => format!("waited {ms} ms for any reply still owed"),
            Note::Reasked { id, ms, known: Known::Waited } => format!("{id}: waited {ms} ms, no reply"),
            Note::Reasked { id, ms, known: Known::Remembered } => {
                format!("{id}: not waited for: the same call went unanswered for {ms} ms earlier in the run")
            }
            Note::Reasked { id, ms, known: Known::Suspected { slowest_ms, wait_ms } } => format!(
                "{id}: suspected: unanswered after {ms} ms, its tool's slowest answer {slowest_ms} ms; not waited \
                 for here (a fresh server waits {wait_ms} ms to confirm it)"
            ),
            Note::Usage { lines, rss_kb, fds } => {
                format!("after {lines} lines the server's processes hold {rss_kb} KiB resident and {fds} descriptors")
            }
            Note::ExitUnawaited { waited_ms } => {
                format!("the exit waited for {waited_ms} ms only: the run had seen the server outlive its closed input")
            }
        }
    }
}

/// One HTTP request and what came back, as the oracle's HTTP rules judge it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exchange {
    /// The request method (`POST`, `GET`, `DELETE`).
    pub method: String,
    /// The request headers exactly as sent, in order (duplicates and odd casing kept).
    pub request_headers: Vec<(String, String)>,
    /// The response status; 0 when no complete response head came (see `problem`).
    pub status: u16,
    /// The response headers, in order.
    pub response_headers: Vec<(String, String)>,
    /// How many body bytes came (counted to the harness's bound).
    pub body_len: usize,
    /// The first bytes of a body that was not recorded as JSON-RPC lines (an HTML error page, say).
    pub excerpt: Vec<u8>,
    /// What went wrong at the HTTP level, when something did (a malformed head, a body cut short).
    pub problem: Option<String>,
    /// True when the harness cut the request's chunked body short on purpose (the server may then close the
    /// connection without a response, RFC 9112 §8).
    pub body_cut: bool,
    /// The `id` fields of the SSE events read from the response, in order (at most a bound of them).
    pub event_ids: Vec<String>,
    /// The messages of a GET's own SSE stream, read beside the conversation's POSTs while the harness held it open.
    /// They are not lines of the transcript (they came in no order the harness can tell against the POSTs'): only
    /// the HTTP rules judge them.
    pub stream: Vec<Vec<u8>>,
}

impl Exchange {
    /// Every value of a request header, matched case-insensitively.
    pub fn request_values(&self, name: &str) -> Vec<&str> {
        values(&self.request_headers, name)
    }

    /// The first value of a response header, matched case-insensitively.
    pub fn response_header(&self, name: &str) -> Option<&str> {
        values(&self.response_headers, name).into_iter().next()
    }

    /// The response's media type (`Content-Type` without parameters, lowercased), if any.
    pub fn media_type(&self) -> Option<String> {
        let value = self.response_header("content-type")?;
        Some(value.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
    }

    /// One line for a rendered transcript: `POST 400 application/json (12 bytes)`.
    pub fn summary(&self) -> String {
        let media = self.media_type().unwrap_or_else(|| "no content-type".into());
        let problem = self.problem.as_deref().map(|p| format!("; {p}")).unwrap_or_default();
        let stream = match self.stream.len() {
            0 => String::new(),
            n => format!(", {n} message(s) on its stream"),
        };
        format!("{} {} {media} ({} bytes{stream}){problem}", self.method, self.status, self.body_len)
    }
}

impl Exchange {
    /// The summary with every header, then each message of a GET's own stream: `POST 200 application/json
    /// (9 bytes) | > Name: value | < Name: value | ~ {"jsonrpc":...}`.
    pub fn detail(&self) -> String {
        let mut out = self.summary();
        for (mark, headers) in [(">", &self.request_headers), ("<", &self.response_headers)] {
            for (name, value) in headers {
                out.push_str(&format!(" | {mark} {name}: {}", show_bytes(value.as_bytes(), 200)));
            }
        }
        for message in &self.stream {
            out.push_str(&format!(" | ~ {}", show_bytes(message, 400)));
        }
        out
    }
}

fn values<'a>(headers: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
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
                Event::Http(exchange) => {
                    out.push_str(&format!("{index:>4} ht {}\n", exchange.summary()));
                    for message in &exchange.stream {
                        out.push_str(&format!("       ~ {}\n", show_bytes(message, 400)));
                    }
                    continue;
                }
                Event::Note(note) => {
                    out.push_str(&format!("{index:>4} !! {}\n", note.summary()));
                    continue;
                }
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
