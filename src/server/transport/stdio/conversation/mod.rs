//! One conversation on a stdio server process: the lines sent and the replies read, which requests still owe a
//! reply (batches once the connection negotiated 2025-03-26, reused ids, tool calls that may be cancelled), the
//! conversation's own era and handshake (which decide where a ping sentinel is harmless), and how it ended for the
//! target ([`End`]). Its barriers are in [`barrier`], its re-asks of a silent tool call in [`reask`].

pub(super) mod barrier;
mod reask;

use super::process::Process;
use super::reply_to;
use super::sentinel::sentinel_reply;
use crate::protocol::client::Client;
use crate::protocol::envelope::{self, META, acknowledged_subscription};
use crate::protocol::era::BATCH_VERSION;
use crate::protocol::id::is_big;
use crate::protocol::methods::{CANCELLED, INITIALIZE, INITIALIZED, LISTEN, TOOLS_CALL};
use crate::protocol::{Era, Frame, IdField, RequestId};
use crate::server::hangs::Hangs;
use crate::server::latency::Latency;
use crate::server::transport::lines::OutputLine;
use crate::server::{MAX_EVENTS, Timeouts};
use crate::transcript::{Ending, Event, Input, Note, Transcript, seen};
use barrier::Barrier;
use reask::ToolCall;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// How a conversation on a process ended for the target.
pub(super) enum End {
    /// The process is done (closed, exited or killed).
    Done,
    /// The conversation ended cleanly with the process still serving: it may serve the next one.
    Kept(Process),
    /// A reply came after a sentinel had shown its request dropped: the server reorders, the transcript is void.
    Reordered,
    /// The server wrote a line after a sentinel was given up before the reply timeout: the transcript is void.
    Late,
}

impl Process {
    /// Runs one conversation on this process. It ends with stdin closed and the process gone, or, with `keep` and a
    /// clean run (every sentinel answered, nothing dropped), with the process handed back still serving.
    pub(super) fn converse(
        mut self,
        inputs: &[Input],
        timeouts: Timeouts,
        barrier: Barrier,
        keep: bool,
        latency: &Latency,
        hangs: &Hangs,
    ) -> (Transcript, End) {
        let mut talk = Conversation {
            process: &mut self,
            latency,
            hangs,
            asked: HashMap::new(),
            events: Vec::new(),
            open: HashMap::new(),
            unmatched: 0,
            stalled: false,
            heard: false,
            cut: false,
            batches: Batches::default(),
            barrier,
            handshake: Handshake::default(),
            sentinels: 0,
            settled: false,
            dropped: HashSet::new(),
            reordered: false,
            tool_calls: HashMap::new(),
            order: HashMap::new(),
            sent: 0,
            answered_up_to: None,
            let_go: HashSet::new(),
            reused: HashSet::new(),
            twins_answered: HashSet::new(),
            guessed: false,
            late: false,
            unsynced: false,
            spoke: false,
            failure_seen: None,
            tools: HashMap::new(),
            answered_tools: HashMap::new(),
            listens: HashSet::new(),
            reasked: false,
            client: Client::default(),
        };
        talk.failure_seen = failure_at(&talk.process.stderr_now());
        // Only a ping sentinel reads the era the lines ahead open (`Conversation::form`): the clock and neutral
        // sentinels need not parse them at every sync point.
        let reads_ahead = matches!(barrier, Barrier::Sentinel { neutral: false, .. });
        let mut sampler = super::usage::Sampler::of(talk.process.stdin_pipe.as_ref(), inputs);
        let mut lines = 0;
        for (at, input) in inputs.iter().enumerate() {
            match input {
                Input::Line(line) => {
                    lines += 1;
                    talk.send(&seen::resolve(line, &talk.events));
                }
                Input::Sync => {
                    if reads_ahead {
                        talk.handshake.ahead = first_opening(&inputs[at + 1..]);
                    }
                    if let Some(ending) = talk.barrier(timeouts) {
                        return talk.finish(ending);
                    }
                    if let Some(note) = sampler.as_mut().and_then(|sampler| sampler.at_sync(lines)) {
                        talk.events.push(Event::Note(note));
                    }
                    talk.events.push(Event::Sync);
                }
            }
        }
        talk.handshake.ahead = first_opening(&[]);
        if let Some(ending) = talk.barrier(timeouts) {
            return talk.finish(ending);
        }
        let idle = talk.dropped.is_empty() && talk.let_go.is_empty();
        if keep && talk.settled && !talk.stalled && !talk.reordered && !talk.cut && idle {
            let events = std::mem::take(&mut talk.events);
            return (Transcript { events, ending: Ending::Closed }, End::Kept(self));
        }
        if let Some(ending) = talk.linger(timeouts.linger, timeouts.reply) {
            return talk.finish(ending);
        }
        let ending = talk.close(timeouts);
        let _ = talk.note_failure();
        talk.finish(ending)
    }
}

/// The state of one conversation: what was recorded and which requests still owe a reply.
struct Conversation<'a> {
    process: &'a mut Process,
    /// Where the reply times of the conversation's requests go.
    latency: &'a Latency,
    /// What the run learned of the server's tool calls: how long each tool took, the calls a wait showed hung.
    hangs: &'a Hangs,
    /// When each request that owes a reply was sent, by id (tool calls aside: [`Conversation::tools`]), for
    /// [`Conversation::latency`].
    asked: HashMap<RequestId, Instant>,
    events: Vec<Event>,
    /// Open request ids and how many requests with that id are open.
    open: HashMap<RequestId, usize>,
    /// Replies since the last barrier whose id matched no open request (a wrong id, or null).
    unmatched: usize,
    /// Set once a reply failed to come in time; later barriers only settle.
    stalled: bool,
    /// Set once the server has written a line (it has started).
    heard: bool,
    /// Set once an event was dropped past [`MAX_EVENTS`]: the transcript ends as cut.
    cut: bool,
    /// Whether the connection takes batches (it negotiated 2025-03-26), so a batch's requests owe replies too.
    batches: Batches,
    /// How barriers know the replies are complete.
    barrier: Barrier,
    /// How far the conversation's own `initialize` handshake is (when a plain sentinel becomes harmless).
    handshake: Handshake,
    /// Sentinels sent so far (each gets the next id).
    sentinels: u64,
    /// True when the last barrier ended on a sentinel's reply.
    settled: bool,
    /// Requests a sentinel showed dropped; a reply to one later means the server reorders.
    dropped: HashSet<RequestId>,
    /// Set when a sentinel was given up after a first wait shorter than the reply timeout.
    guessed: bool,
    /// Set when the server wrote a line after that: the guess was wrong, the transcript is void.
    late: bool,
    /// Set when a line was sent since the last barrier. Without one, a barrier on a server calibrated to answer in
    /// order has nothing to wait for: the last barrier (or the start) saw everything the lines before it caused, and
    /// the clock would only wait for lines the server writes on its own.
    unsynced: bool,
    /// Set once the conversation has written a line.
    spoke: bool,
    /// Set when a reply came after a sentinel had shown its request dropped.
    reordered: bool,
    /// The well-formed `tools/call` requests sent, by id: the `notifications/cancelled` that lets each go, and the
    /// order it was sent in ([`Conversation::cancel_slow_tools`]).
    tool_calls: HashMap<RequestId, (Vec<u8>, u64)>,
    /// The send order of every request that owes a reply (the last one sent with that id).
    order: HashMap<RequestId, u64>,
    /// Requests sent so far.
    sent: u64,
    /// The latest send order among the requests answered (a sentinel's reply answers everything sent before it).
    answered_up_to: Option<u64>,
    /// Requests no longer waited for: tool calls cancelled after the reply timeout, and requests whose id the
    /// client reused while they were open once one of the twins was answered. A late reply to one is neither
    /// counted nor a reorder.
    let_go: HashSet<RequestId>,
    /// Ids sent while a request with the same id was open (the client reused them).
    reused: HashSet<RequestId>,
    /// Reused ids a reply came for: the oracle takes such a group of twins as answered, whichever the reply was
    /// for, and judges none of them.
    twins_answered: HashSet<RequestId>,
    /// The tool, the line and when it was sent, of every well-formed `tools/call`, by id (for
    /// [`Conversation::reask`]).
    tools: HashMap<RequestId, ToolCall>,
    /// The ids of the `subscriptions/listen` requests sent.
    listens: HashSet<RequestId>,
    /// The tools a call of which was answered, each with the longest such a call took.
    answered_tools: HashMap<String, Duration>,
    /// Set once a tool call was re-asked ([`Conversation::reask`]).
    reasked: bool,
    /// Where in the server's stderr the last handler failure already accounted for starts (noted, or there before
    /// the conversation began on a kept process): the same panic again, later, is a new one.
    failure_seen: Option<u64>,
    /// What the conversation declared, for answering the server's own requests.
    client: Client,
}

/// The conversation's own handshake, as the server sees it: the era its first request opened, whether an
/// `initialize` got a result, and whether `notifications/initialized` was sent.
#[derive(Default)]
struct Handshake {
    opened: Option<Era>,
    /// At a sync point, the era the next request after it will open ([`first_opening`] of the lines still to send;
    /// `None` when unclear): a sentinel sent there opens the same era. Lines already sent had their say before any
    /// sentinel, so only the lines ahead can make it unclear.
    ahead: Option<Option<Era>>,
    initialize_ids: Vec<RequestId>,
    initialized: bool,
    result: bool,
}

/// How far the connection is from taking batches: the ids of the `initialize` requests that asked for 2025-03-26,
/// until a result grants it.
#[derive(Default)]
struct Batches {
    asked: Vec<RequestId>,
    granted: bool,
}

impl Conversation<'_> {
    /// Records and sends a line, noting the reply it owes.
    fn send(&mut self, line: &[u8]) {
        self.unsynced = true;
        self.spoke = true;
        self.record(Event::Sent(line.to_vec()));
        self.handshake.sent(line);
        self.client.sent(line);
        if self.batches.granted && line.trim_ascii_start().starts_with(b"[") {
            if let Ok(serde_json::Value::Array(items)) = serde_json::from_slice(line) {
                for item in items {
                    if let Some(id) = owed_reply(&serde_json::to_vec(&item).unwrap_or_default()) {
                        self.owe(id);
                    }
                }
            }
        } else if let Some(id) = owed_reply(line) {
            if !self.batches.granted && asks_for_batches(line) {
                self.batches.asked.push(id.clone());
            }
            self.sent += 1;
            self.order.insert(id.clone(), self.sent);
            if super::names_method(line, LISTEN) {
                self.listens.insert(id.clone());
            }
            if let Some(cancel) = tool_call_cancel(line) {
                self.tool_calls.insert(id.clone(), (cancel, self.sent));
                if let Some(call) = ToolCall::of(line) {
                    self.tools.insert(id.clone(), call);
                }
            } else {
                self.asked.insert(id.clone(), Instant::now());
            }
            self.owe(id);
        } else if super::names_method(line, CANCELLED)
            && let Some(id) = cancelled_request(line)
            && self.open.remove(&id).is_some()
        {
            // A request the client cancelled owes no response (cancellation.mdx): it is not waited for.
            self.let_go.insert(id);
        }
        if let Some(input) = &self.process.input {
            let mut framed = line.to_vec();
            framed.push(b'\n');
            let _ = input.send(framed);
        }
    }

    /// Follows and records a line the server wrote.
    fn receive(&mut self, line: OutputLine) {
        self.heard = true;
        self.late |= self.guessed;
        let value = serde_json::from_slice(&line.bytes).ok();
        if let Some(reply) = &value {
            if sentinel_reply(reply).is_some() {
                return;
            }
            if let Some(Some(id)) = reply_to(reply) {
                self.reordered |= self.dropped.contains(&id);
                self.handshake.answered(&id, reply);
            }
            // An acknowledged listen stream stays open until the client cancels it: its response is not waited for.
            if !self.listens.is_empty()
                && let Some(id) = acknowledged_subscription(&line.bytes).filter(|id| self.listens.contains(id))
                && self.open.remove(&id).is_some()
            {
                self.let_go.insert(id);
            }
        }
        match value {
            Some(serde_json::Value::Array(items)) if self.batches.granted => {
                items.iter().for_each(|item| self.take(item))
            }
            Some(reply) => {
                if !self.batches.asked.is_empty() && grants_batches(&reply, &self.batches.asked) {
                    self.batches = Batches { asked: Vec::new(), granted: true };
                }
                self.take(&reply);
            }
            None => {}
        }
        // A request of the server's own gets the answer a client gives, and an `input_required` result its retry,
        // while the server can still read them.
        let answers = match self.process.input.is_some() && !line.truncated {
            true => self.client.react(&line.bytes),
            false => Vec::new(),
        };
        self.record(Event::Received { line: line.bytes, truncated: line.truncated });
        for answer in answers {
            self.send(&answer);
        }
    }

    /// Counts a request sent with `id` as owed its reply, noting an id reused while a request with it is open.
    fn owe(&mut self, id: RequestId) {
        if self.open.contains_key(&id) {
            self.reused.insert(id.clone());
        }
        *self.open.entry(id).or_default() += 1;
    }

    /// Counts a reply against the request it answers, or as unmatched.
    fn take(&mut self, reply: &serde_json::Value) {
        let to = reply_to(reply);
        // Late or not, a reply measures how long the server takes.
        if let Some(Some(id)) = &to
            && let Some(sent) = self.asked.remove(id)
        {
            self.latency.record(sent.elapsed());
        }
        match to {
            Some(Some(id)) if self.let_go.contains(&id) && !self.open.contains_key(&id) => {}
            Some(Some(id)) if self.open.contains_key(&id) => {
                if self.reused.contains(&id) {
                    self.twins_answered.insert(id.clone());
                }
                let answered = self.order.get(&id).copied();
                self.answered_up_to = self.answered_up_to.max(answered);
                if let Some(ToolCall { tool, sent_at, .. }) = self.tools.get(&id) {
                    let took = sent_at.elapsed();
                    let longest = self.answered_tools.entry(tool.clone()).or_default();
                    *longest = (*longest).max(took);
                    self.hangs.answered(tool, took);
                }
                let count = self.open.entry(id.clone()).or_default();
                *count -= 1;
                if *count == 0 {
                    self.open.remove(&id);
                }
            }
            Some(_) => self.unmatched += 1,
            None => {}
        }
    }

    /// True while some request has neither its reply nor a reply with a wrong id that may stand for it.
    fn owes(&self) -> bool {
        self.open.values().sum::<usize>() > self.unmatched
    }

    /// Notes a handler failure the server's stderr shows since the last one accounted for (see
    /// `transport::failures`): called where the conversation gives up on a request. True when it noted one that may
    /// have cost a reply (not a crash the SDK answered with an isError result: a slow call is still slow then).
    fn note_failure(&mut self) -> bool {
        use crate::server::transport::failures::{answered, authors_excerpt};
        let tail = self.process.stderr_now();
        let Some(at) = failure_at(&tail) else { return false };
        if self.failure_seen.is_some_and(|seen| seen >= at) {
            return false;
        }
        self.failure_seen = Some(at);
        let Some(excerpt) = authors_excerpt(&tail.bytes) else { return false };
        let cost_a_reply = !answered(&excerpt);
        self.record(Event::Note(Note::Failure(excerpt)));
        cost_a_reply
    }

    /// True when the server's stderr shows a handler failure not yet accounted for that costs a reply (not a crash
    /// the SDK answered): the request it failed on will not be answered. Nothing is noted.
    fn failed_unanswered(&self) -> bool {
        use crate::server::transport::failures::{answered, authors_excerpt};
        let tail = self.process.stderr_now();
        let new = failure_at(&tail).is_some_and(|at| self.failure_seen.is_none_or(|seen| at > seen));
        new && authors_excerpt(&tail.bytes).is_some_and(|excerpt| !answered(&excerpt))
    }

    fn record(&mut self, event: Event) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        } else {
            self.cut = true;
        }
    }

    /// The transcript, and how the process ended for the target: void when the server showed it reorders, or that
    /// a guessed stall was wrong.
    fn finish(self, ending: Ending) -> (Transcript, End) {
        let end = match (self.reordered, self.late) {
            (true, _) => End::Reordered,
            (false, true) => End::Late,
            (false, false) => End::Done,
        };
        let ending = if self.cut { Ending::Cut { events: self.events.len() } } else { ending };
        (Transcript { events: self.events, ending }, end)
    }
}

/// The era the first request of `inputs` opens: `Some(None)` when no line may be a request, `None` when unclear.
/// A lenient server may take a line that is not a well-formed request as one (a batch, an object with a method
/// and extra members, a value with trailing bytes), so every line up to the first well-formed request that may be
/// one must open the same era; a notification before it makes it unclear (a buggy server may let it pick the era).
fn first_opening(inputs: &[Input]) -> Option<Option<Era>> {
    let mut era = None;
    for input in inputs {
        let Input::Line(line) = input else { continue };
        let (this, well_formed) = match Frame::parse(line) {
            Frame::Request(request) => (envelope::opening_era(&request.method, request.params.as_ref()), true),
            // A server may (wrongly) let a notification pick its era: a sentinel ahead of it would pick first.
            Frame::Notification(_) => return None,
            Frame::Blank | Frame::Response(_) => continue,
            _ => match lenient_opening(line) {
                Some(this) => (this, false),
                None => continue,
            },
        };
        if era.is_some_and(|era| era != this) {
            return None;
        }
        era = Some(this);
        if well_formed {
            break;
        }
    }
    Some(era)
}

/// The era a line that is not a well-formed request would open if a lenient server took it as one: its first JSON
/// value, or a batch's first member, as an object with a method and an id.
fn lenient_opening(line: &[u8]) -> Option<Era> {
    let value = serde_json::Deserializer::from_slice(line).into_iter::<serde_json::Value>().next()?.ok()?;
    let object = match &value {
        serde_json::Value::Array(items) => items.first()?,
        object => object,
    };
    let method = object.get("method")?;
    object.get("id")?;
    Some(envelope::opening_era(method.as_str().unwrap_or_default(), object.get("params")))
}

impl Handshake {
    /// Follows a line the conversation sent.
    fn sent(&mut self, line: &[u8]) {
        match Frame::parse(line) {
            Frame::Request(request) => {
                self.opened.get_or_insert(envelope::opening_era(&request.method, request.params.as_ref()));
                if request.method == INITIALIZE {
                    self.initialize_ids.push(request.id);
                }
            }
            Frame::Notification(notification) if notification.method == INITIALIZED => self.initialized = true,
            _ => {}
        }
    }

    /// Follows a reply to request `id`.
    fn answered(&mut self, id: &RequestId, reply: &serde_json::Value) {
        if self.initialize_ids.contains(id) && reply.get("result").is_some_and(|r| r.is_object()) {
            self.result = true;
        }
    }
}

/// Where in the whole stderr stream the last failure report of `tail` starts, if it shows one.
fn failure_at(tail: &crate::server::transport::lines::Tail) -> Option<u64> {
    crate::server::transport::failures::last_marker(&tail.bytes).map(|at| tail.dropped + at as u64)
}

/// The id a line's reply will carry, when the line is a request that owes one: a valid request whose params are
/// absent or an object (MCP's shape; anything else is malformed and may be answered or not).
fn owed_reply(line: &[u8]) -> Option<RequestId> {
    match Frame::parse(line) {
        Frame::Request(request) if request.params.as_ref().is_none_or(|p| p.is_object()) => Some(request.id),
        _ => None,
    }
}

/// The request a `notifications/cancelled` names (`params.requestId`).
fn cancelled_request(line: &[u8]) -> Option<RequestId> {
    let message: serde_json::Value = serde_json::from_slice(line).ok()?;
    let id = message.get("params")?.get("requestId");
    IdField::of(id).valid().cloned().filter(|_| message.get("id").is_none())
}

/// For a well-formed `tools/call` request (params an object naming a tool, `_meta` absent or an object, no member
/// beyond the four, a string id or an integer one within ±(2^53 − 1): a request every parser reads alike, so that
/// dropping it is no finding of its own), the `notifications/cancelled` that cancels it, carrying its id as sent and
/// its `_meta` (the era's envelope).
fn tool_call_cancel(line: &[u8]) -> Option<Vec<u8>> {
    let message: serde_json::Value = serde_json::from_slice(line).ok()?;
    let params = message.get("params")?.as_object()?;
    if message.get("method")?.as_str()? != TOOLS_CALL || !params.get("name")?.is_string() {
        return None;
    }
    let plain = message.as_object()?.keys().all(|key| matches!(key.as_str(), "jsonrpc" | "id" | "method" | "params"));
    let id_alike = IdField::of(message.get("id")).valid().is_some_and(|id| !is_big(id));
    if !plain || !id_alike {
        return None;
    }
    let mut cancel = serde_json::json!({ "requestId": message.get("id")?, "reason": "timed out" });
    match params.get(META) {
        None => {}
        Some(serde_json::Value::Object(meta)) => {
            let mut meta = meta.clone();
            meta.remove("progressToken");
            cancel[META] = serde_json::Value::Object(meta);
        }
        Some(_) => return None,
    }
    let notification = serde_json::json!({ "jsonrpc": "2.0", "method": CANCELLED, "params": cancel });
    Some(notification.to_string().into_bytes())
}

/// True for an `initialize` request asking for the version whose connections take batches.
fn asks_for_batches(line: &[u8]) -> bool {
    matches!(Frame::parse(line), Frame::Request(request) if request.method == INITIALIZE
        && request.params.as_ref().and_then(|p| p.get("protocolVersion")) == Some(&BATCH_VERSION.into()))
}

/// True for a result to one of the `asked` initialize requests that grants the version whose connections take
/// batches.
fn grants_batches(reply: &serde_json::Value, asked: &[RequestId]) -> bool {
    IdField::of(reply.get("id")).valid().is_some_and(|id| asked.contains(id))
        && reply.get("result").and_then(|r| r.get("protocolVersion")) == Some(&BATCH_VERSION.into())
}

#[cfg(test)]
mod tests {
    use super::super::test_servers::*;
    use super::super::{StdioTarget, self_contained};
    use super::*;
    use crate::server::{MAX_LINE_BYTES, Target};
    use std::time::Duration;

    #[test]
    fn a_flood_and_a_huge_line_stay_bounded() {
        let huge = sh("head -c 3000000 /dev/zero | tr '\\0' a; echo; yes");
        let transcript = StdioTarget::new(huge, quick()).run(&[request(1)]).unwrap();
        let Event::Received { line, truncated: true } = &transcript.events[1] else { panic!("not cut") };
        assert_eq!(line.len(), MAX_LINE_BYTES);
        assert_eq!(transcript.ending, Ending::Cut { events: transcript.events.len() });
    }
    #[test]
    fn a_cut_transcript_says_so_and_judges_nothing_it_did_not_see() {
        // The reply comes after more notifications than the harness keeps.
        let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
        let flood = sh(&format!(
            r#"read -r line; yes '{note}' | head -n {}; echo '{{"jsonrpc":"2.0","id":1,"result":{{}}}}'; read -r line"#,
            MAX_EVENTS + 10
        ));
        let patient = Timeouts { reply: Duration::from_secs(20), ..quick() };
        let transcript = StdioTarget::new(flood, patient).cold().run(&[request(1), Input::Sync]).unwrap();
        let kept = transcript.events.len();
        assert!(kept >= MAX_EVENTS && transcript.ending == Ending::Cut { events: kept }, "{:?}", transcript.ending);
        assert!(transcript.render().contains(&format!("CUT: the harness kept {kept} events")));
        let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
        assert!(
            findings.iter().all(|f| f.rule != "JSONRPC-RESPONSE-MISSING" && f.rule != "SERVER-HANG"),
            "{findings:?}"
        );
        // What was seen is still judged, and says the transcript was cut.
        let mut broken = transcript.clone();
        broken.events.insert(1, Event::Received { line: b"{oops".to_vec(), truncated: false });
        let findings = crate::oracle::check(&broken, &crate::oracle::Policy::default());
        assert!(
            !findings.is_empty()
                && findings
                    .iter()
                    .all(|f| f.detail.ends_with(&format!("(the transcript was cut after {kept} events)"))),
            "{findings:?}"
        );
    }
    #[test]
    fn only_mcp_shaped_requests_owe_a_reply() {
        assert_eq!(owed_reply(br#"{"jsonrpc":"2.0","id":"a","method":"x","params":{}}"#), Some(RequestId::string("a")));
        assert_eq!(owed_reply(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#), None);
        assert_eq!(owed_reply(br#"{"jsonrpc":"2.0","method":"x"}"#), None);
        assert_eq!(owed_reply(b"{oops"), None);
        let reply = |line: &str| reply_to(&serde_json::from_str(line).unwrap());
        assert_eq!(reply(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#), Some(Some(RequestId::string("a"))));
        assert_eq!(reply(r#"{"jsonrpc":2,"id":null,"error":{},"result":1}"#), Some(None));
        assert_eq!(reply(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert_eq!(reply("42"), None);
    }
    #[test]
    fn sentinels_wait_for_the_conversations_own_era_and_handshake() {
        let line = |text: &str| Input::Line(text.as_bytes().to_vec());
        let modern = line(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        let legacy = line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let note = line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#);
        let lenient_legacy = line(r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#);
        // A notification before the first request: a buggy server may let it pick the era.
        assert_eq!(first_opening(&[note.clone(), modern.clone()]), None);
        assert_eq!(first_opening(&[note.clone(), Input::Sync]), None);
        assert_eq!(first_opening(&[legacy.clone(), modern.clone()]), Some(Some(Era::Handshake)));
        assert_eq!(first_opening(&[lenient_legacy.clone(), modern.clone()]), None);
        assert_eq!(first_opening(&[lenient_legacy, legacy.clone()]), Some(Some(Era::Handshake)));
        assert!(self_contained(&[modern.clone(), Input::Sync, modern.clone()]));
        assert!(!self_contained(&[modern.clone(), note]));
        assert!(!self_contained(&[modern, legacy]));
        let setlevel = line(
            r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert!(!self_contained(&[setlevel]));
        // A tool call may change the server's state: the next conversation gets a fresh process.
        let call = line(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert!(!self_contained(&[call]));
    }

    #[test]
    fn a_reference_is_resolved_from_the_replies_before_the_sync_point() {
        let server = sh(
            r#"n=41; while read -r l; do n=$((n+1)); printf '{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"id":%s}}}\n' "$n"; done"#,
        );
        let reference = crate::transcript::seen::reference("id", &["integer"], 0, serde_json::json!(0));
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"get","arguments":{{"id":{reference}}}}}}}"#
        );
        let inputs = [request(1), Input::Sync, Input::Line(call.into_bytes()), Input::Sync];
        let transcript = StdioTarget::new(server, quick()).cold().run(&inputs).unwrap();
        let sent: Vec<String> = transcript
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Sent(line) => Some(String::from_utf8_lossy(line).into_owned()),
                _ => None,
            })
            .collect();
        assert!(sent.iter().any(|line| line.contains(r#""arguments":{"id":42}"#)), "{sent:?}");
        assert!(!sent.iter().any(|line| line.contains("wirefuzz:seen")), "{sent:?}");
    }
}
