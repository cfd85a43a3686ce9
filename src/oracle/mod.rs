//! The oracle: a pure function from a [`Transcript`] to the [`Finding`]s it shows, under a [`Policy`].
//!
//! Each line is parsed into a value once: sent lines with [`Frame::skim`] (which builds of `params` only what the
//! MCP layer reads, and notes what makes them ambiguous; then classified), received lines by [`jsonrpc`], which
//! also checks their framing and shape. Then the layers run over that same reading, in this order:
//!
//! - [`jsonrpc`] (ids, liveness, malformed input; true of any JSON-RPC server; lines parsers legitimately differ on
//!   are judged leniently) receives the transcript and its reading and returns its matching
//!   ([`jsonrpc::Matched`]): which reply answers each request, what is still owed, how far the server read.
//! - [`mcp`] (the connection's era, fixed by the first request that gets a result, and the replies each era calls
//!   for) and [`surface`] (tools, prompts, resources and lists, judged against what the server listed) receive
//!   one [`LayerInput`]: the transcript, its reading, that matching and the policy.
//! - [`http`] judges the HTTP exchanges of the transcript as recorded, apart from the line layers.
//!
//! Every layer pushes its findings and returns nothing else but what a later layer reads; the layers differ in what
//! they receive because each reads what an earlier one learned, so the contract is this order, not one signature.
//! [`batch`] spreads 2025-03-26 batches into single lines before the line layers run and puts their findings back
//! on the batch after. The rules, their levels and sources are in [`rules`], the opt-in sets of rules in
//! [`profiles`], and which rules a run checks in [`policy`]. Nothing here does I/O, and no transcript makes it
//! panic.

mod answers;
mod batch;
pub mod coverage;
mod growth;
mod handlers;
mod http;
mod jsonrpc;
mod mcp;
mod memo;
pub mod policy;
pub mod profiles;
pub mod rules;
mod surface;
mod template;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

pub use policy::{Policy, UnknownProfile, UnknownRule};
pub use profiles::{PROFILES, Profile, profile, render_catalogue};
pub use rules::{Level, RULES, Rule, rule};

use crate::protocol::json;
use crate::protocol::{Frame, IdField, Outcome, RequestId};
use crate::transcript::{Ending, Event, Transcript, show_bytes};
use rules::{SERVER_CRASH, SERVER_HANG, SERVER_SHUTDOWN};
use std::fmt;
use std::rc::Rc;

/// The ids of the surface rules (tools, prompts, resources, lists, reserved codes), whose coverage is reported.
pub fn surface_rules() -> &'static [&'static str] {
    &surface::RULES
}

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The id of the rule, as in [`RULES`].
    pub rule: &'static str,
    /// The rule's level.
    pub level: Level,
    /// The index into `transcript.events` of the line at fault: the received line, or the sent line left
    /// unanswered (`None` when no line is, e.g. for some endings of an empty conversation).
    pub event: Option<usize>,
    /// One line a human understands, quoting the offending bytes shortened.
    pub detail: String,
}

impl fmt::Display for Finding {
    /// `error JSONRPC-ID-ECHO at event 3: ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.event {
            Some(event) => write!(f, "{} {} at event {event}: {}", self.level, self.rule, self.detail),
            None => write!(f, "{} {}: {}", self.level, self.rule, self.detail),
        }
    }
}

/// Checks a transcript against every rule the policy enables. Findings come in transcript order.
pub fn check(transcript: &Transcript, policy: &Policy) -> Vec<Finding> {
    check_covered(transcript, policy).0
}

/// [`check`], and what the transcript exercised ([`coverage::Coverage`]).
pub fn check_covered(transcript: &Transcript, policy: &Policy) -> (Vec<Finding>, coverage::Coverage) {
    let mut coverage = coverage::Coverage::default();
    let serves = |era| policy.model().and_then(|model| model.serves(era));
    let spread =
        batch::spread(transcript, (serves(crate::protocol::Era::Handshake), serves(crate::protocol::Era::Modern)));
    let judged = spread.as_ref().map_or(transcript, |spread| &spread.transcript);
    let mut findings = Findings::default();
    let reads = read(judged, &mut findings);
    let jsonrpc::Matched { answers, owed, read_past } = jsonrpc::check(judged, &reads, &mut findings);
    let awaiting_broken = answers::awaiting_broken_answers(judged, &reads, &answers);
    let input =
        LayerInput { transcript: judged, reads: &reads, answers: &answers, awaiting_broken: &awaiting_broken, policy };
    mcp::check(&input, &mut findings);
    surface::check(&input, &mut findings, &mut coverage);
    handlers::check(&input, &mut findings);
    growth::check(judged, &mut findings);
    let unanswered = unanswered_requests(&reads, &answers);
    check_ending(judged, owed, unanswered, crash_line(&reads, read_past), &mut findings);
    handlers::supersede(&mut findings);
    let mut findings = match &spread {
        Some(spread) => spread.put_back(findings.0, transcript),
        None => findings.0,
    };
    if http::applies(transcript) {
        http::check(transcript, policy, &mut findings);
    }
    let judged = |rule: &str| policy.enabled(rule) && era_served(rule, policy);
    let mut findings: Vec<Finding> = findings.into_iter().filter(|f| judged(f.rule)).collect();
    findings.sort_by_key(|f| f.event);
    if let Ending::Cut { events } = transcript.ending {
        for finding in &mut findings {
            finding.detail.push_str(&format!(" (the transcript was cut after {events} events)"));
        }
    }
    for counts in coverage.tools.values_mut().chain(coverage.methods.values_mut()) {
        counts.findings.retain(|rule, _| judged(rule));
    }
    (findings, coverage)
}

/// False when the server model says the server serves none of the eras `rule` applies to: a rule of one era never
/// judges a server the model says serves only the other (whatever a conversation's own lines look like). True
/// without a model, or where the model does not say.
fn era_served(rule: &str, policy: &Policy) -> bool {
    let (Some(rule), Some(model)) = (rules::rule(rule), policy.model()) else { return true };
    rule.eras.iter().any(|&era| model.serves(era) != Some(false))
}

/// What a layer that judges replies by the request they answer receives ([`mcp`], [`surface`]): the transcript as
/// judged (batches spread, see [`batch`]), each of its events read once, which reply answers each request (the
/// JSON-RPC layer's matching), and the policy. Such a layer pushes its findings to a [`Findings`] and returns
/// nothing.
#[derive(Clone, Copy)]
struct LayerInput<'t> {
    /// The transcript as judged.
    transcript: &'t Transcript,
    /// Each event, read once (indexed like `transcript.events`).
    reads: &'t [Read],
    /// For each event, the received line that answers the request sent there ([`jsonrpc::Matched::answers`]).
    answers: &'t [Option<usize>],
    /// The handler requests left waiting on an answer the client broke on purpose
    /// ([`answers::awaiting_broken_answers`]): how they end is the client's doing.
    awaiting_broken: &'t std::collections::HashSet<usize>,
    /// The rules on, and what is known of the server.
    policy: &'t Policy,
}

/// An event of the transcript, read once (lines read before are shared, see [`memo`] and [`template`]).
enum Read {
    /// A line the client sent, and the id of a request read through its template (whose frame carries the
    /// template's id instead).
    Sent(Rc<SentLine>, Option<RequestId>),
    /// A line the server wrote.
    Received(Rc<ServerReading>),
    /// A sync point.
    Sync,
    /// An HTTP exchange (judged by [`http`]) or a note of the harness: not a line the JSON-RPC and MCP layers read.
    Aside,
}

impl Read {
    /// The classified frame of a sent line, and what makes it ambiguous. A request's id may be its template's:
    /// the id sent is [`Read::Sent`]'s own when it has one.
    fn sent(&self) -> Option<(&Frame, Option<&jsonrpc::Ambiguous>)> {
        match self {
            Read::Sent(sent, _) => Some((&sent.frame, sent.ambiguous.as_ref())),
            _ => None,
        }
    }

    /// The JSON-RPC object a received line holds, if it is one.
    fn server_line(&self) -> Option<&ServerLine> {
        match self {
            Read::Received(reading) => reading.line.as_ref(),
            _ => None,
        }
    }
}

/// A line the client sent, classified, and what makes it ambiguous when conforming parsers may read it
/// differently.
struct SentLine {
    frame: Frame,
    ambiguous: Option<jsonrpc::Ambiguous>,
    /// For a line that is not JSON: the id a lenient reader still finds in it ([`jsonrpc::lenient_id`]).
    lenient_id: Option<RequestId>,
    /// An object with members beyond `jsonrpc`, `id`, `method` and `params` (see [`jsonrpc::has_extra_members`]).
    extra_members: bool,
}

/// What a line the server wrote is, and the framing and shape findings it makes wherever it appears.
struct ServerReading {
    /// `None` when the line is not a JSON-RPC object at all (a framing finding was made).
    line: Option<ServerLine>,
    /// Rule ids and details.
    findings: Vec<(&'static str, String)>,
}

/// A JSON object the server wrote.
enum ServerLine {
    /// A line with a `method` member: a request (with an id) or a notification of the server's own.
    Outgoing {
        /// The `id` member.
        id: IdField,
    },
    /// A response.
    Reply {
        /// The `id` member.
        id: IdField,
        /// The result or error, or `None` when the response's shape is broken (a finding was made).
        outcome: Option<Outcome>,
    },
}

thread_local! {
    static SENT: memo::Memo<SentLine> = memo::Memo::new();
    static RECEIVED: memo::Memo<ServerReading> = memo::Memo::new();
}

fn read(transcript: &Transcript, findings: &mut Findings) -> Vec<Read> {
    let events = transcript.events.iter().enumerate();
    let mut template = Vec::new();
    events
        .map(|(index, event)| match event {
            Event::Sent(line) => read_sent_shared(line, &mut template),
            Event::Received { line, truncated } => {
                let reading = match truncated {
                    true => Rc::new(jsonrpc::read_line(line, true)),
                    false => RECEIVED.with(|memo| memo.read(line, |line| jsonrpc::read_line(line, false))),
                };
                for (rule, detail) in &reading.findings {
                    findings.add(rule, Some(index), detail.clone());
                }
                Read::Received(reading)
            }
            Event::Sync => Read::Sync,
            Event::Http(_) | Event::Note(_) => Read::Aside,
        })
        .collect()
}

/// The reading of a sent line. A line with an id template ([`template`]) that reads as a plain request (not
/// ambiguous) is kept under its template only, so later lines that differ only in their id share it; any other
/// line is kept under its own bytes.
fn read_sent_shared(line: &[u8], template: &mut Vec<u8>) -> Read {
    SENT.with(|memo| {
        let Some(id) = template::split(line, template) else { return Read::Sent(memo.read(line, read_sent), None) };
        let plain = |reading: &SentLine| matches!(reading.frame, Frame::Request(_)) && reading.ambiguous.is_none();
        if let Some(kept) = memo.get(template)
            && plain(&kept)
        {
            return Read::Sent(kept, Some(id));
        }
        if let Some(kept) = memo.get(line) {
            return Read::Sent(kept, None);
        }
        let reading = Rc::new(read_sent(line));
        if plain(&reading) {
            memo.keep(template, &reading);
            return Read::Sent(reading, Some(id));
        }
        memo.keep(line, &reading);
        Read::Sent(reading, None)
    })
}

/// The UTF-8 byte-order mark, which a lenient reader skips.
const BYTE_ORDER_MARK: &[u8] = b"\xef\xbb\xbf";

/// Classifies a sent line, parsing it once (again, leniently, for a line that is not strict JSON: see
/// [`json::lenient_text`]).
fn read_sent(line: &[u8]) -> SentLine {
    match Frame::skim(line) {
        Err(frame) => {
            // A line that is JSON to a lenient reader (a byte-order mark, a lone surrogate escape, bytes that are
            // not UTF-8 inside a string) is read as that reader reads it, and is ambiguous.
            if let Frame::NotJson { after_value: false, .. } = *frame
                && let Some(text) = json::lenient_text(line)
                && let Ok(noted) = Frame::skim(&text)
            {
                return classified(noted, true);
            }
            // A lenient reader reads UTF-8 text after a byte-order mark as the parser did: where the parser failed
            // inside the first value, so does it, and there is no id to find.
            let lenient = match *frame {
                Frame::NotJson { after_value, .. } => {
                    after_value || line.starts_with(BYTE_ORDER_MARK) || std::str::from_utf8(line).is_err()
                }
                _ => false,
            };
            // A line nested deeper than the parser's limit keeps the id a server with a higher limit reads in it.
            let deep = matches!(&*frame, Frame::NotJson { error, .. } if error.contains("recursion limit"));
            let lenient_id = match deep {
                true => jsonrpc::top_level_id(line),
                false => lenient.then(|| jsonrpc::lenient_id(line)).flatten(),
            };
            SentLine { frame: *frame, ambiguous: None, lenient_id, extra_members: false }
        }
        Ok(noted) => classified(noted, false),
    }
}

/// The classified reading of a parsed line; `lenient` when only a lenient reader parses it.
fn classified(noted: json::Noted, lenient: bool) -> SentLine {
    let oddities = jsonrpc::Oddities::of(&noted, lenient);
    let extra_members = jsonrpc::has_extra_members(&noted.value);
    let frame = Frame::classify(noted.value);
    let ambiguous = oddities.and_then(|oddities| jsonrpc::ambiguous(oddities, &frame));
    SentLine { frame, ambiguous, lenient_id: None, extra_members }
}

/// The line a server that exited most likely died on, read off what it answered, not off when its exit was seen
/// (over stdio that depends on the machine's speed: a slow exit is seen a step later, after more lines were
/// written). It is the first line sent after the last one answered by id (the server had read that far) that
/// owes an answer or is malformed, looked for up to the next sync point; a well-formed notification or response
/// needs no answer, so a crash on one shows only when nothing after it in its step does. `None` when nothing was
/// sent after the last answered line.
fn crash_line(reads: &[Read], read_past: Option<usize>) -> Option<usize> {
    let from = read_past.map_or(0, |past| past + 1);
    let first = from + reads.get(from..)?.iter().position(|read| read.sent().is_some())?;
    let step = reads[first..].iter().take_while(|read| !matches!(read, Read::Sync));
    let quiet = |frame: &Frame| matches!(frame, Frame::Notification(_) | Frame::Response(_) | Frame::Blank);
    let owing = step.zip(first..).find(|(read, _)| read.sent().is_some_and(|(frame, _)| !quiet(frame)));
    Some(owing.map_or(first, |(_, index)| index))
}

/// How many valid requests got no reply at all (answered by none of the lines the server wrote, whether or not a
/// reply was still owed: the client may have cancelled them).
fn unanswered_requests(reads: &[Read], answers: &[Option<usize>]) -> usize {
    let request = |read: &Read| matches!(read.sent(), Some((Frame::Request(_), _)));
    reads.iter().zip(answers).filter(|(read, answer)| request(read) && answer.is_none()).count()
}

/// True when the transport did not wait out the server's exit ([`crate::transcript::Note::ExitUnawaited`]).
fn unawaited_exit(transcript: &Transcript) -> bool {
    transcript.events.iter().any(|event| matches!(event, Event::Note(crate::transcript::Note::ExitUnawaited { .. })))
}

/// The ending's finding; `owed` when a request was still owed its reply; `unanswered` how many requests got no
/// reply (owed or not); `crashed_on` the line a crash is put on ([`crash_line`]).
fn check_ending(
    transcript: &Transcript,
    owed: bool,
    unanswered: usize,
    crashed_on: Option<usize>,
    findings: &mut Findings,
) {
    let last_sent = transcript.events.iter().rposition(|e| matches!(e, Event::Sent(_)));
    let after = match last_sent {
        Some(index) => format!("after event {index}"),
        None => "before anything was sent".to_string(),
    };
    match &transcript.ending {
        Ending::Closed => {}
        Ending::Exited { code, signal, stderr_tail } => {
            let how = match (code, signal) {
                (_, Some(signal)) => format!("killed by signal {signal}"),
                (Some(code), None) => format!("exited with code {code}"),
                (None, None) => "exited".to_string(),
            };
            let tail = String::from_utf8_lossy(stderr_tail);
            let tail = tail.trim();
            let stderr = if tail.is_empty() {
                "stderr empty".to_string()
            } else {
                format!("stderr ends: {}", show_bytes(tail.as_bytes(), 200))
            };
            let on = crashed_on.or(last_sent);
            let line =
                on.map_or_else(String::new, |index| format!(" (the first line it left unanswered is event {index})"));
            findings.add(SERVER_CRASH, on, format!("the server {how} {after}{line}; {stderr}"));
        }
        // Silent with a reply still owed, the server hangs; with every request answered, it only did not exit
        // when its input closed.
        Ending::Hung { waited_ms } if owed => findings.add(
            SERVER_HANG,
            last_sent,
            format!("the server stopped answering {after} (waited {waited_ms} ms)"),
        ),
        // The exit was not waited for: the run had already seen this server outlive its closed input.
        Ending::Hung { .. } if unawaited_exit(transcript) => {}
        Ending::Hung { waited_ms } => {
            let answered = match unanswered {
                0 => "the server answered every request".to_string(),
                n => format!(
                    "the server owed no reply, but left {n} request(s) unanswered (cancelled by the client as slow, or \
                     lines a server may leave unanswered),"
                ),
            };
            findings.add(
                SERVER_SHUTDOWN,
                last_sent,
                format!("{answered} but did not exit {waited_ms} ms after its input closed"),
            )
        }
        // How a cut conversation ended was not seen.
        Ending::Cut { .. } => {}
    }
}

/// The findings made so far, before the policy filters them.
#[derive(Default)]
struct Findings(Vec<Finding>);

impl Findings {
    fn add(&mut self, rule: &'static str, event: Option<usize>, detail: String) {
        let level = rules::rule(rule).map_or(Level::Error, |r| r.level);
        self.0.push(Finding { rule, level, event, detail });
    }
}

/// The line of an event, shortened for a finding's detail.
fn shown(transcript: &Transcript, index: usize) -> String {
    match transcript.events.get(index) {
        Some(Event::Sent(line) | Event::Received { line, .. }) => show_bytes(line, 120),
        _ => String::new(),
    }
}
