//! The barriers of a stdio conversation: how, at each sync point and before its input closes, the harness knows
//! the replies owed so far are complete. On the clock ([`Barrier::Clock`]): every owed reply or the reply timeout,
//! then quiet output for the settle time, so late replies, duplicates and replies to notifications are seen. With
//! a sentinel ([`Barrier::Sentinel`]) on a server calibrated to answer in order: its reply. A slow tool call is
//! cancelled rather than waited for; a server whose process ends early has crashed; one that owes replies past the
//! timeout, or does not exit after its input closes, has hung.

use super::Conversation;
use crate::model::Eras;
use crate::protocol::{Era, RequestId};
use crate::server::Timeouts;
use crate::server::hangs::{HangWait, SLOWEST_FACTOR};
use crate::server::transport::stdio::process::{EXIT_DRAIN, POLL_TICK, Stdout};
use crate::server::transport::stdio::sentinel::{Form, SENTINEL_PREFIX, sentinel_reply};
use crate::transcript::{Ending, Event, Note};
use std::process::ExitStatus;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// How a conversation knows the replies before a sync point are complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Barrier {
    /// Every owed reply or the reply timeout, then quiet output for the settle time.
    Clock,
    /// A sentinel `ping` with a harness-only id, on a server (serving `eras`) calibrated to answer in order:
    /// once its reply is read, every line before it has been answered or dropped. Sent only where the
    /// conversation's own state makes a ping harmless (see `Conversation::form`); elsewhere the clock.
    Sentinel {
        /// The eras the server serves.
        eras: Eras,
        /// True when the calibration showed a ping before `initialize` leaves the handshake as it was.
        pre_init: bool,
        /// True when the calibration showed the server answers a [`Form::Neutral`] line by its id, in order, and
        /// that such a line leaves every era it serves open: a sentinel for where no ping is harmless.
        neutral: bool,
        /// How long a sentinel is waited for before the server is taken as silent: shorter than the reply timeout
        /// when derived from the calibration's pace. Such a guess stands only when the server then writes nothing
        /// more, not even the sentinel's reply, until its output ends (or the shutdown budget passes); a line after
        /// it voids the conversation, which runs again waiting the full reply timeout.
        wait: Duration,
    },
}

/// How many sentinels a barrier sends for lines of the harness's own sent after the one before (the client's
/// answers and retries: at most [`crate::protocol::client::MAX_ANSWERS`] of them in a conversation).
const MAX_OWN_LINES: usize = crate::protocol::client::MAX_ANSWERS;

/// How often the stderr is looked at while a reply is owed: a handler's panic or traceback there means its request
/// will not be answered, so the barrier need not wait the whole reply timeout for it.
const FAILURE_POLL: Duration = Duration::from_millis(100);

/// How long a reply is still waited for once the stderr showed a handler's failure: long enough for the reply of a
/// request answered with the failure (a crash the SDK caught) or written just before it.
const FAILURE_GRACE: Duration = Duration::from_millis(250);

/// How long a server gets to exit once its input is closed when the conversation left a handler hung without waiting
/// for it (a hang only suspected, or one the run already knows): enough for a server that does exit, and no
/// shutdown wait for one its hung task keeps alive (the hang's finding explains it: no SERVER-SHUTDOWN beside it).
const AFTER_HANG: Duration = Duration::from_millis(500);

/// How long a fuzzing worker waits for the exit of a server the run already saw outlive its closed input
/// ([`crate::server::hangs::Hangs::outlives_input`]), when the conversation owes nothing: enough for a server that
/// does exit this time; not the whole shutdown wait again for one that never does.
const KNOWN_TO_OUTLIVE: Duration = Duration::from_millis(500);

impl Conversation<'_> {
    /// Waits for every owed reply (up to the reply timeout), then for quiet output; `Some` when the server ended.
    /// Requests still unanswered afterwards are not waited for again. Where a sentinel is harmless, its reply ends
    /// the wait instead of the clock ([`Conversation::sentinel_barrier`]).
    pub(super) fn barrier(&mut self, timeouts: Timeouts) -> Option<Ending> {
        if !std::mem::take(&mut self.unsynced) && matches!(self.barrier, Barrier::Sentinel { .. }) {
            return None;
        }
        self.settled = false;
        let started = Instant::now();
        let mut limit = match self.stalled {
            true => timeouts.settle,
            false => timeouts.reply_for(self.heard).max(self.tool_allowance(timeouts)),
        };
        let mut extended = false;
        loop {
            // A sentinel waits for a server still starting (the clock, owed nothing, would wait only the settle
            // time): so a line it crashes on is read before its input closes, however slow the machine. Not
            // sent before the conversation has sent anything.
            if !self.stalled
                && (self.heard || self.spoke)
                && let Some(form) = self.form()
            {
                return self.sentinel_barrier(form, timeouts);
            }
            let left = limit.saturating_sub(started.elapsed());
            let wait = if self.owes() { left.min(FAILURE_POLL) } else { timeouts.settle.min(left) };
            match self.process.output.recv_timeout(wait) {
                Ok(Stdout::Line(line)) => self.receive(line),
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => return self.ended(timeouts),
                Err(RecvTimeoutError::Timeout) => {
                    if self.owes() && started.elapsed() < limit && self.failed_unanswered() {
                        limit = limit.min(started.elapsed() + FAILURE_GRACE);
                    }
                    // A call the run already saw hang is not waited for again.
                    if !self.owes() || started.elapsed() >= limit || self.owes_only_hung() {
                        if !self.stalled {
                            if let Some(ending) = self.probe_liveness(timeouts) {
                                return Some(ending);
                            }
                            // A server that answers nothing more while only tool calls are owed may be busy in one
                            // (a handler that blocks it): where hangs are waited for, the calls get the wait a
                            // client gives them before the server counts as stalled, so a slow tool is not silent.
                            let waits = matches!(timeouts.hang, HangWait::Wait(_));
                            if waits
                                && !extended
                                && self.owes()
                                && self.owes_only_tools()
                                && self.slow_tools().is_empty()
                                && !self.owes_only_hung()
                            {
                                extended = true;
                                limit = limit.max(timeouts.hang.wait());
                                continue;
                            }
                            self.cancel_slow_tools(timeouts);
                        }
                        if self.owes() {
                            let _ = self.note_failure();
                        }
                        self.stalled |= self.owes();
                        self.open.clear();
                        self.unmatched = 0;
                        return None;
                    }
                }
            }
        }
    }

    /// The sentinel form the conversation may send now, if any: only on a server calibrated to answer in order,
    /// and only in a state where a `ping` changes nothing the conversation would see. A modern-only server takes
    /// an enveloped ping at any time; a dual-era server once the conversation's first request opened the modern
    /// era (a ping must not open the era for it); a handshake connection once the conversation's own `initialize`
    /// got a result and it sent `notifications/initialized`, or at any time when the calibration showed a ping
    /// before `initialize` is harmless (on a dual-era server, once the first request opened the handshake era).
    /// A server calibrated for [`Form::Neutral`] lines gets one at any time instead (it opens no era).
    fn form(&self) -> Option<Form> {
        let Barrier::Sentinel { eras, pre_init, neutral, .. } = self.barrier else { return None };
        if neutral {
            return Some(Form::Neutral);
        }
        let ready = pre_init || (self.handshake.result && self.handshake.initialized);
        let era = match (self.handshake.opened, self.handshake.ahead) {
            (Some(era), _) | (None, Some(Some(era))) => Some(era),
            // No request ahead: a modern ping opens an era no line of the conversation will see.
            (None, Some(None)) => Some(Era::Modern),
            (None, None) => None,
        };
        match (eras, era) {
            (Eras::Modern, _) | (Eras::Dual, Some(Era::Modern)) => Some(Form::Modern),
            (Eras::Handshake, _) | (Eras::Dual, Some(Era::Handshake)) if ready => Some(Form::Handshake),
            _ => None,
        }
    }

    /// Sends a sentinel and reads until its reply; when a request is still owed then, a second one (a server that
    /// reads its input in chunks may have read the first sentinel with the request and answered it first). Requests
    /// owed after that were dropped. A sentinel not answered within the barrier's wait stalls the conversation, as an
    /// owed reply would; when that wait is shorter than the reply timeout, the stall is a guess that stands only while
    /// the server stays silent (see [`Barrier::Sentinel`]). The start-up allowance counts only until the server's
    /// first line.
    fn sentinel_barrier(&mut self, form: Form, timeouts: Timeouts) -> Option<Ending> {
        let Barrier::Sentinel { wait, .. } = self.barrier else { return None };
        let guess = wait < timeouts.reply;
        // A sentinel answers only what was sent before it. A line the harness sent after it needs a sentinel of
        // its own: the client's retry of an `input_required` result, and its answer to a request of the server's
        // (the request the server was serving when it asked is not dropped: it waits for that answer). So does a
        // retry sent while slow tool calls were awaited. The client bounds what it sends, so this ends; the bound is
        // a second guard.
        let mut own = 0;
        loop {
            let mut rounds = 0;
            while rounds < 2 && own <= MAX_OWN_LINES {
                let before = self.events.len();
                let id = self.send_sentinel(form);
                let mut until = Instant::now() + if self.heard { wait } else { wait + timeouts.startup };
                loop {
                    // A server that writes without end never lets the wait time out: the clock is read here too.
                    let received = match Instant::now() < until {
                        true => self.process.output.recv_timeout(until.saturating_duration_since(Instant::now())),
                        false => Err(RecvTimeoutError::Timeout),
                    };
                    match received {
                        Ok(Stdout::Line(line)) => {
                            let answered = answers(&line.bytes, &id);
                            if guess && !self.heard {
                                until = until.min(Instant::now() + wait);
                            }
                            self.receive(line);
                            if answered {
                                break;
                            }
                        }
                        Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => return self.ended(timeouts),
                        Err(RecvTimeoutError::Timeout) => {
                            let _ = self.note_failure();
                            self.stalled = true;
                            self.guessed |= guess;
                            self.open.clear();
                            self.unmatched = 0;
                            return None;
                        }
                    }
                }
                let sent_since = self.events[before..].iter().any(|event| matches!(event, Event::Sent(_)));
                // (An open request counts here even when replies without a usable id seem to account for it: one
                // that waits for the harness's answer is still to come.)
                match (sent_since && !self.open.is_empty(), self.owes()) {
                    (true, _) => own += 1,
                    (false, true) => rounds += 1,
                    (false, false) => break,
                }
            }
            // The sentinel's reply answers everything sent before it: a tool call still open is running, not
            // dropped; but one whose id the client reused is not waited for once a twin was answered. (The sentinel
            // is not counted in `sent`: it comes after the last line sent, whose order is `sent`.)
            let covered = self.sent;
            self.answered_up_to = Some(covered + 1);
            let twins: Vec<RequestId> =
                self.open.keys().filter(|id| self.twins_answered.contains(*id)).cloned().collect();
            for id in twins {
                self.open.remove(&id);
                self.let_go.insert(id);
            }
            if let Some(ending) = self.await_slow_tools(timeouts) {
                return Some(ending);
            }
            let sent_after = self.open.keys().any(|id| self.order.get(id).is_some_and(|at| *at > covered));
            if !sent_after || own > MAX_OWN_LINES {
                break;
            }
            own += 1;
        }
        self.dropped.extend(self.open.drain().map(|(id, _)| id));
        self.unmatched = 0;
        self.settled = true;
        None
    }

    /// Sends a sentinel of `form` under the next harness id (not recorded: the transcript has no line of the
    /// harness's own), and returns that id.
    fn send_sentinel(&mut self, form: Form) -> String {
        let id = format!("{SENTINEL_PREFIX}{}", self.sentinels);
        self.sentinels += 1;
        if let Some(input) = &self.process.input {
            let mut line = form.sentinel(&id);
            line.push(b'\n');
            let _ = input.send(line);
        }
        id
    }

    /// On the clock, at the reply timeout with only tool calls owed: asks the server whether it still answers, with
    /// a `ping` under a harness id where one is harmless (the conversation's own handshake is done, or its first
    /// request opened the modern era). Answered within the reply timeout, the server is alive and the tool calls
    /// are running, not dropped: they count as slow ([`Conversation::slow_tools`]), so they are cancelled and the
    /// first may be asked again ([`Conversation::reask`]). A server that does not answer is left to the barrier,
    /// which takes it as stalled. `Some` when the server ended.
    fn probe_liveness(&mut self, timeouts: Timeouts) -> Option<Ending> {
        let only_tools = self.owes_only_tools();
        let form = match self.handshake.opened {
            Some(Era::Modern) => Form::Modern,
            Some(Era::Handshake) if self.handshake.result && self.handshake.initialized => Form::Handshake,
            _ => return None,
        };
        if !self.owes() || !only_tools || self.open.is_empty() {
            return None;
        }
        let id = self.send_sentinel(form);
        let until = Instant::now() + timeouts.reply;
        while Instant::now() < until {
            match self.process.output.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(Stdout::Line(line)) => {
                    let answered = answers(&line.bytes, &id);
                    self.receive(line);
                    if answered {
                        // The probe answers past every line sent before it (it is not counted in `sent`).
                        self.answered_up_to = Some(self.sent + 1);
                        return None;
                    }
                }
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => return self.ended(timeouts),
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
        None
    }

    /// True when every request still open is a tool call.
    fn owes_only_tools(&self) -> bool {
        self.open.keys().all(|id| self.tool_calls.contains_key(id))
    }

    /// True when every request still open is a tool call a wait showed hung earlier in the run.
    fn owes_only_hung(&self) -> bool {
        self.owes()
            && self
                .open
                .keys()
                .all(|id| self.tools.get(id).is_some_and(|call| self.hangs.remembered(&call.key).is_some()))
    }

    /// How long the open tool calls may take before they are given up on as slow: [`SLOWEST_FACTOR`] times the
    /// slowest answer of their tools seen so far (at most the wait that makes a call hung), so a tool slow by design
    /// is waited for as it is.
    fn tool_allowance(&self, timeouts: Timeouts) -> Duration {
        let open = self.open.keys().filter_map(|id| self.tools.get(id));
        let slowest = open.filter_map(|call| self.slowest(&call.tool)).max().unwrap_or_default();
        (slowest * SLOWEST_FACTOR).min(timeouts.hang.wait())
    }

    /// The open tool calls the server answered later requests past: running, not dropped.
    fn slow_tools(&self) -> Vec<RequestId> {
        let Some(up_to) = self.answered_up_to else { return Vec::new() };
        self.open.keys().filter(|id| self.tool_calls.get(*id).is_some_and(|(_, at)| *at < up_to)).cloned().collect()
    }

    /// After a sentinel's reply: waits up to the reply timeout for the tool calls still running, then cancels those
    /// still open ([`Conversation::cancel_slow_tools`]); `Some` when the server ended.
    fn await_slow_tools(&mut self, timeouts: Timeouts) -> Option<Ending> {
        let mut until = Instant::now() + timeouts.reply.max(self.tool_allowance(timeouts));
        while !self.slow_tools().is_empty() && Instant::now() < until && !self.owes_only_hung() {
            match self.process.output.recv_timeout(until.saturating_duration_since(Instant::now()).min(FAILURE_POLL)) {
                Ok(Stdout::Line(line)) => self.receive(line),
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => return self.ended(timeouts),
                Err(RecvTimeoutError::Timeout) if self.failed_unanswered() => {
                    until = until.min(Instant::now() + FAILURE_GRACE);
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        self.cancel_slow_tools(timeouts);
        None
    }

    /// Cancels every tool call still open at the reply timeout while the server answered a request sent after it:
    /// a slow tool, not a hung server (lifecycle.mdx §Timeouts: on a timeout the sender SHOULD issue a
    /// cancellation notification and stop waiting; cancellation.mdx: no response is owed then). The
    /// `notifications/cancelled` lines are recorded, so the oracle owes those calls nothing. A call may then be
    /// asked again, to tell a handler that never returns from a slow one ([`Conversation::reask`]).
    fn cancel_slow_tools(&mut self, timeouts: Timeouts) {
        let slow = self.slow_tools();
        // A call a handler's failure left unanswered is not slow: it is not asked again.
        let failed = !slow.is_empty() && self.note_failure();
        for id in slow {
            self.open.remove(&id);
            if let Some((cancel, _)) = self.tool_calls.get(&id).cloned() {
                self.record(Event::Sent(cancel.clone()));
                if let Some(input) = &self.process.input {
                    let mut framed = cancel;
                    framed.push(b'\n');
                    let _ = input.send(framed);
                }
            }
            self.let_go.insert(id.clone());
            if !failed {
                self.reask(&id, timeouts);
            }
        }
    }

    /// The output ended: how the process exited, once it has (waiting up to the reply timeout for it).
    fn ended(&mut self, timeouts: Timeouts) -> Option<Ending> {
        let status = self.process.wait_for_exit(timeouts.reply)?;
        Some(self.process.exited(status))
    }

    /// Collects output for up to `linger` with stdin still open; `Some` when the server ended its output in that
    /// time (then it gets up to `exit` to exit).
    pub(super) fn linger(&mut self, linger: Duration, exit: Duration) -> Option<Ending> {
        let until = Instant::now() + linger;
        while !linger.is_zero() {
            match self.process.output.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(Stdout::Line(line)) => self.receive(line),
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => {
                    let status = self.process.wait_for_exit(exit)?;
                    return Some(self.process.exited(status));
                }
                Err(RecvTimeoutError::Timeout) => return None,
            }
        }
        None
    }

    /// Closes stdin, collects what the server writes until it closes stdout, and waits for it to exit. A server
    /// that exits while something it started (a grandchild) holds its stdout open has closed: what it wrote is
    /// read for [`EXIT_DRAIN`] more, and the grandchild is ended with the server's process group.
    pub(super) fn close(&mut self, timeouts: Timeouts) -> Ending {
        self.process.input = None;
        // A server never heard from gets the start-up allowance to exit, unless a barrier already waited it out
        // (it stalled): then it is silent, not starting, and gets the reply timeout.
        // A handler left hung without a wait keeps the server alive, and its finding explains that: no shutdown wait.
        let hung = self.events.iter().any(|event| matches!(event, Event::Note(note) if note.unwaited()));
        // Owing nothing, a server that does not exit breaks SERVER-SHUTDOWN alone: a fuzzing worker waits that out
        // once a run, not in every conversation.
        let shutdown_only = self.heard && !hung && !self.owes();
        let known = shutdown_only && matches!(timeouts.hang, HangWait::Suspect(_)) && self.hangs.outlives_input();
        let budget = match (self.heard, self.stalled) {
            _ if hung => AFTER_HANG,
            _ if known => KNOWN_TO_OUTLIVE,
            (true, _) => timeouts.shutdown.max(timeouts.reply),
            (false, true) => timeouts.reply,
            (false, false) => timeouts.reply_for(false),
        };
        let ending = self.await_exit(budget);
        if let Ending::Hung { waited_ms } = ending {
            if known {
                self.events.push(Event::Note(Note::ExitUnawaited { waited_ms }));
            } else if shutdown_only && !self.stalled {
                self.hangs.outlived_input();
            }
        }
        ending
    }

    /// Collects what the server writes until it closes stdout, and waits for it to exit, for `budget` in all.
    fn await_exit(&mut self, budget: Duration) -> Ending {
        let until = Instant::now() + budget;
        let mut exited: Option<Instant> = None;
        loop {
            let limit = exited.map_or(until, |at| until.min(at + EXIT_DRAIN));
            let wait = limit.saturating_duration_since(Instant::now()).min(POLL_TICK);
            match self.process.output.recv_timeout(wait) {
                Ok(Stdout::Line(line)) => self.receive(line),
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    if exited.is_none()
                        && let Ok(Some(status)) = self.process.child.try_wait()
                    {
                        self.exits(status);
                        exited = Some(Instant::now());
                    }
                    if Instant::now() >= limit {
                        if exited.is_some() {
                            return Ending::Closed;
                        }
                        return Ending::Hung { waited_ms: budget.as_millis() as u64 };
                    }
                }
            }
        }
        match self.process.wait_for_exit(until.saturating_duration_since(Instant::now())) {
            Some(status) => {
                self.exits(status);
                Ending::Closed
            }
            None => Ending::Hung { waited_ms: budget.as_millis() as u64 },
        }
    }

    /// Follows the exit of a server whose input was closed: after a guessed stall, an exit that is not a success
    /// voids the guess (the server may have been about to crash on a line before its input closed, which the full
    /// reply timeout would have seen as a crash).
    fn exits(&mut self, status: ExitStatus) {
        self.late |= self.guessed && !status.success();
    }
}

/// True when `line` is the reply to the sentinel `id`.
fn answers(line: &[u8], id: &str) -> bool {
    serde_json::from_slice::<serde_json::Value>(line).is_ok_and(|reply| sentinel_reply(&reply) == Some(id))
}

#[cfg(test)]
mod tests {
    use crate::model::Eras;
    use crate::server::Target;
    use crate::server::transport::stdio::StdioTarget;
    use crate::server::transport::stdio::test_servers::*;
    use crate::transcript::{Ending, Event, Input};

    #[test]
    fn replies_are_collected_and_the_server_closed() {
        let echo = sh(r#"while read -r line; do echo '{"jsonrpc":"2.0","id":1,"result":{}}'; done"#);
        let transcript = StdioTarget::new(echo, quick()).run(&[request(1), Input::Sync]).unwrap();
        assert_eq!(transcript.ending, Ending::Closed);
        assert_eq!(transcript.events.len(), 3, "{transcript:?}");
        assert!(matches!(transcript.events[2], Event::Sync));
    }

    #[test]
    fn a_server_that_never_answers_has_hung() {
        let transcript = StdioTarget::new(sh("sleep 10"), quick()).run(&[request(1)]).unwrap();
        // The barrier waited the start-up allowance and the reply timeout; closing, the reply timeout.
        assert_eq!(transcript.ending, Ending::Hung { waited_ms: 300 });
        // Never stalled (no request owed a reply at a barrier): still starting, it gets the start-up allowance.
        let notification = Input::Line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec());
        let transcript = StdioTarget::new(sh("sleep 10"), quick()).run(&[notification]).unwrap();
        assert_eq!(transcript.ending, Ending::Hung { waited_ms: 500 });
    }
    #[test]
    fn a_call_left_unanswered_while_stderr_shows_a_panic_is_a_handler_panic_not_a_slow_tool() {
        let call = |item: u32| {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"fetch","arguments":{{"id":{item}}}}}}}"#
            );
            Input::Line(line.into_bytes())
        };
        // Panics (on stderr, as a Rust server's handler task does) for item 7, answers every other call and ping.
        let server = sh(r#"while read -r line; do case "$line" in
            *'"id":7'*) printf "thread 'tokio-runtime-worker' panicked at src/main.rs:40:21:\nindex out of bounds\n" >&2;;
            *'tools/call'*) echo '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}';;
            *'"ping"'*) echo '{"jsonrpc":"2.0","id":2,"result":{}}';;
            esac; done"#);
        let findings = |item: u32| {
            let transcript = StdioTarget::new(server.clone(), quick()).run(&[call(item), request(2), Input::Sync]);
            crate::oracle::check(&transcript.unwrap(), &crate::oracle::Policy::default())
        };
        let panicked = findings(7);
        assert_eq!(panicked.iter().map(|f| f.rule).collect::<Vec<_>>(), ["SERVER-HANDLER-PANIC"], "{panicked:?}");
        for part in [r#"tool "fetch" with arguments {"id":7}"#, "panicked at src/main.rs:40:21: | index out of bounds"]
        {
            assert!(panicked[0].detail.contains(part), "{part}: {}", panicked[0].detail);
        }
        assert!(findings(1).is_empty());
    }

    #[test]
    fn a_call_that_never_returns_is_asked_again_and_found_and_a_slow_one_is_not() {
        let call = |id: &str, item: u32| {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"fetch","arguments":{{"item":{item}}}}}}}"#
            );
            Input::Line(line.into_bytes())
        };
        let ping = Input::Line(br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#.to_vec());
        // Never answers item 9, answers item 5 after 0.6 s (twice the reply timeout), everything else at once.
        let server = answering(
            r#"while read -r l; do id=$(idof "$l"); case "$l" in *'"item":9'*) ;; *'"item":5'*) (sleep 0.6; reply "$id") & ;; *) [ -n "$id" ] && reply "$id";; esac; done"#,
        );
        let run = |item: u32| {
            let inputs = [call("a", 1), call("b", item), ping.clone(), Input::Sync];
            let transcript = StdioTarget::new(server.clone(), quick()).run(&inputs).unwrap();
            let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
            (transcript, findings.into_iter().filter(|f| f.rule == "SERVER-HANDLER-HANG").collect::<Vec<_>>())
        };
        let (hung, found) = run(9);
        assert_eq!(found.len(), 1, "{}", hung.render());
        assert!(found[0].detail.contains(r#"tool "fetch" with arguments {"item":9}"#), "{}", found[0].detail);
        let (slow, found) = run(5);
        assert!(found.is_empty(), "{found:?}\n{}", slow.render());
        assert!(slow.render().contains("mcp-wirefuzz-reask-"), "a slow call is asked again: {}", slow.render());
        let (quick_call, found) = run(1);
        assert!(found.is_empty() && !quick_call.render().contains("reask"), "{}", quick_call.render());
    }

    #[test]
    fn a_fuzzing_worker_waits_out_a_server_that_outlives_its_input_once_a_run() {
        use crate::server::Timeouts;
        use crate::server::hangs::{HangWait, Hangs};
        use std::sync::Arc;
        use std::time::{Duration, Instant};
        let ping = Input::Line(br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#.to_vec());
        let inputs = [ping, Input::Sync];
        // Answers every request, and stays up once its input closes.
        let outliving = answering(&format!("{IN_ORDER}; sleep 100"));
        let shutdown = Duration::from_millis(1500);
        let suspecting = Timeouts { shutdown, hang: HangWait::Suspect(Duration::from_secs(60)), ..quick() };
        let shutdown_findings = |transcript: &crate::transcript::Transcript| {
            let findings = crate::oracle::check(transcript, &crate::oracle::Policy::default());
            findings.iter().filter(|f| f.rule == "SERVER-SHUTDOWN").count()
        };
        let hangs = Arc::new(Hangs::default());
        let mut worker = StdioTarget::new(outliving.clone(), suspecting).sharing(hangs.clone());
        let first = worker.run(&inputs).unwrap();
        assert_eq!(first.ending, Ending::Hung { waited_ms: 1500 }, "{}", first.render());
        assert_eq!(shutdown_findings(&first), 1, "{}", first.render());
        assert!(hangs.outlives_input());
        // The next conversation waits for the exit only briefly, and judges nothing of it.
        let began = Instant::now();
        let second = worker.run(&inputs).unwrap();
        assert!(began.elapsed() < shutdown, "waited {:?}", began.elapsed());
        assert!(second.render().contains("the exit waited for 500 ms only"), "{}", second.render());
        assert_eq!(shutdown_findings(&second), 0, "{}", second.render());
        // A target that confirms (it spends its waits) still waits the whole shutdown wait, and finds it.
        let waiting = Timeouts { hang: HangWait::Wait(Duration::from_secs(60)), ..suspecting };
        let mut confirming = StdioTarget::new(outliving, waiting).sharing(hangs.clone());
        let third = confirming.run(&inputs).unwrap();
        assert_eq!(shutdown_findings(&third), 1, "{}", third.render());
        // A server that exits when its input closes is not remembered as one that outlives it.
        let fresh = Arc::new(Hangs::default());
        let exiting = answering(IN_ORDER);
        let transcript = StdioTarget::new(exiting, suspecting).sharing(fresh.clone()).run(&inputs).unwrap();
        assert_eq!(transcript.ending, Ending::Closed, "{}", transcript.render());
        assert!(!fresh.outlives_input());
    }

    /// Runs `inputs` with sentinels on `server` (handshake era); the transcript, and whether sentinels are still on
    /// afterwards (a sentinel that showed a request dropped before its reply came turns them off for the run).
    fn with_sentinels(
        server: &crate::server::ServerCommand,
        inputs: &[Input],
    ) -> (crate::transcript::Transcript, bool) {
        let mut target = StdioTarget::new(server.clone(), quick()).with_sentinels(Eras::Handshake);
        let transcript = target.run(inputs).unwrap();
        let on = !matches!(target.sentinels, crate::server::transport::stdio::sentinel::Sentinels::Off);
        (transcript, on)
    }

    #[test]
    fn a_request_waiting_for_the_harnesss_answer_is_not_taken_for_dropped() {
        let line = |text: &str| Input::Line(text.as_bytes().to_vec());
        // Asks the client (a ping of its own) on a `prompts/get` and answers it once the client's answer comes;
        // meanwhile answers every other request at once, and a line that is not JSON with a null id (a reply that
        // leaves the harness unsure which request it answers).
        let server = answering(
            r#"while read -r l; do case "$l" in
              *prompts/get*) echo '{"jsonrpc":"2.0","id":"ask-1","method":"ping"}';;
              *'"ask-1"'*) echo '{"jsonrpc":"2.0","id":"call","result":{"messages":[]}}';;
              *'not json'*) echo '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}';;
              *) id=$(idof "$l"); [ -n "$id" ] && reply "$id";;
            esac; done"#,
        );
        let get = line(r#"{"jsonrpc":"2.0","id":"call","method":"prompts/get","params":{"name":"ask"}}"#);
        let inputs = [get, line("not json"), line("not json either"), Input::Sync];
        let (transcript, on) = with_sentinels(&server, &inputs);
        let render = transcript.render();
        assert!(render.contains(r#">> {"jsonrpc":"2.0","id":"ask-1","result":{}}"#), "{render}");
        assert!(render.contains(r#"<< {"jsonrpc":"2.0","id":"call","result":{"messages":[]}}"#), "{render}");
        assert!(on, "the reply after the sentinel's is not a reordering: {render}");
        let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
        assert!(!findings.iter().any(|f| f.rule == "JSONRPC-RESPONSE-MISSING"), "{findings:?}");
    }

    #[test]
    fn a_retry_the_harness_sends_after_a_sentinel_gets_a_sentinel_of_its_own() {
        let line = |text: &str| Input::Line(text.as_bytes().to_vec());
        // Every tool call, the client's retries too, goes input_required again (the client stops after its rounds);
        // every other request is answered at once.
        let server = answering(
            r#"while read -r l; do id=$(idof "$l"); case "$l" in
              *tools/call*) printf '{"jsonrpc":"2.0","id":"%s","result":{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list","params":{}}}}}
' "$id";;
              *) [ -n "$id" ] && reply "$id";;
            esac; done"#,
        );
        let call = line(
            r#"{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"ask","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}}"#,
        );
        let (transcript, on) = with_sentinels(&server, &[call, Input::Sync]);
        let render = transcript.render();
        let retries = crate::protocol::client::MAX_ROUNDS;
        assert!(render.contains(&format!(r#"<< {{"jsonrpc":"2.0","id":"wirefuzz-retry-{retries}""#)), "{render}");
        assert!(on, "each retry's reply came after a sentinel sent before the retry: {render}");
    }

    #[test]
    fn a_slow_tool_call_is_cancelled_when_later_requests_are_answered() {
        let call = Input::Line(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}"#.to_vec());
        // Answers every ping (id 2) at once, and the tool call only when it is asked again, 0.4 s later: a slow
        // tool on a live server.
        let slow = answering(
            r#"while read -r l; do case "$l" in *'"ping"'*) echo '{"jsonrpc":"2.0","id":2,"result":{}}';; *mcp-wirefuzz-reask*) (sleep 0.4; reply "$(idof "$l")") & ;; esac; done"#,
        );
        let transcript = StdioTarget::new(slow.clone(), quick()).run(&[call.clone(), request(2), Input::Sync]).unwrap();
        let cancel =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"timed out"}}"#;
        assert!(transcript.events.contains(&Event::Sent(cancel.to_vec())), "{transcript:?}");
        assert_eq!(transcript.ending, Ending::Closed);
        let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
        assert!(findings.is_empty(), "{findings:?}");
        // A call with an id beyond 2^53 that a JavaScript server drops is JSONRPC-BIG-ID, never cancelled.
        let big = Input::Line(
            br#"{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"slow"}}"#.to_vec(),
        );
        let transcript = StdioTarget::new(slow.clone(), quick()).run(&[big, request(2), Input::Sync]).unwrap();
        let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
        assert!(findings.iter().any(|f| f.rule == "JSONRPC-BIG-ID"), "{findings:?}");
        // The same call with nothing answered after it: no sign of life, so it is still owed.
        let transcript = StdioTarget::new(slow, quick()).run(&[request(2), Input::Sync, call, Input::Sync]).unwrap();
        assert!(!transcript.events.iter().any(|e| matches!(e, Event::Sent(line) if line == cancel)));
        let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
        assert!(findings.iter().any(|f| f.rule == "JSONRPC-RESPONSE-MISSING"), "{findings:?}");
    }

    #[test]
    fn a_tool_call_whose_id_was_reused_is_not_waited_for_once_a_twin_is_answered() {
        let line = |text: &str| Input::Line(text.as_bytes().to_vec());
        let call = line(r#"{"jsonrpc":"2.0","id":"4","method":"tools/call","params":{"name":"slow"}}"#);
        let ping = |id: &str| line(&format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping"}}"#));
        // Answers everything in order but tool calls, and a tool call asked again 0.4 s later: a slow tool on a live
        // server.
        let server = answering(
            r#"while read -r l; do id=$(idof "$l"); case "$l" in *mcp-wirefuzz-reask*) (sleep 0.4; reply "$id") & continue;; *tools/call*) continue;; esac; [ -n "$id" ] && reply "$id"; done"#,
        );
        // How many cancellations the conversation sent (one per slow tool it waited for); it is judged clean.
        let cancels = |inputs: &[Input]| {
            let mut target = StdioTarget::new(server.clone(), quick()).with_sentinels(Eras::Handshake);
            let transcript = target.run(inputs).unwrap();
            let findings = crate::oracle::check(&transcript, &crate::oracle::Policy::default());
            assert!(findings.is_empty(), "{findings:?}");
            let cancel = |l: &Vec<u8>| l.windows(9).any(|w| w == b"cancelled");
            transcript.events.iter().filter(|e| matches!(e, Event::Sent(l) if cancel(l))).count()
        };
        assert_eq!(cancels(&[call.clone(), ping("5"), Input::Sync]), 1, "a slow tool: waited for, then cancelled");
        assert_eq!(cancels(&[call, ping("4"), Input::Sync]), 0, "a reused id: who answered what is not judged");
    }
    #[test]
    fn a_barrier_waits_for_the_reply_to_a_batch_on_2025_03_26_only() {
        let init = |version: &str| {
            Input::Line(
                format!(
                    r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}"}}}}"#
                )
                .into_bytes(),
            )
        };
        let batch = Input::Line(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec());
        for (version, waits) in [("2025-03-26", true), ("2025-06-18", false)] {
            let server = sh(&format!(
                r#"read -r a; echo '{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":"{version}"}}}}'; read -r b; sleep 0.2; echo '[{{"jsonrpc":"2.0","id":1,"result":{{}}}}]'; read -r c"#
            ));
            let inputs = [init(version), Input::Sync, batch.clone(), Input::Sync];
            let transcript = StdioTarget::new(server, quick()).cold().run(&inputs).unwrap();
            let array = transcript
                .events
                .iter()
                .position(|e| matches!(e, Event::Received { line, .. } if line.starts_with(b"[")));
            let last_sync = transcript.events.iter().rposition(|e| matches!(e, Event::Sync));
            assert_eq!(array < last_sync, waits, "{version}: {transcript:?}");
        }
    }
    #[test]
    fn neutral_sentinels_go_everywhere_on_a_server_that_takes_them_and_pings_only_where_harmless() {
        let line = |text: &str| Input::Line(text.as_bytes().to_vec());
        let note = line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#);
        let modern = line(
            r#"{"jsonrpc":"2.0","id":"m","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        // The second notification is ahead of the first request at the sync point: no ping may go there.
        let inputs = [note.clone(), Input::Sync, note, modern, Input::Sync];
        let seen = |answers_neutral: bool| {
            let log = std::env::temp_dir().join(format!("wirefuzz-neutral-{}-{answers_neutral}", std::process::id()));
            let _ = std::fs::remove_file(&log);
            let filter = if answers_neutral { "" } else { r#"case "$l" in *'"method"'*) ;; *) continue;; esac;"# };
            let server = answering(&format!(
                r#"while read -r l; do printf '%s\n' "$l" >> '{}'; {filter} id=$(idof "$l"); [ -n "$id" ] && reply "$id"; done"#,
                log.display()
            ));
            let mut target = StdioTarget::new(server, quick()).with_sentinels(Eras::Dual);
            let transcript = target.run(&inputs).unwrap();
            assert_eq!(transcript.events.iter().filter(|e| matches!(e, Event::Received { .. })).count(), 1);
            let lines = std::fs::read_to_string(&log).unwrap();
            let _ = std::fs::remove_file(&log);
            // Calibration runs wrote their lines first: the conversation's start with its first notification.
            let at = lines.find("notifications/cancelled").unwrap();
            let lines = &lines[lines[..at].rfind('\n').map_or(0, |n| n + 1)..];
            // The lines the server read, each named by its method, or `neutral` for a sentinel without one.
            lines
                .lines()
                .map(|l| match serde_json::from_str::<serde_json::Value>(l).unwrap().get("method") {
                    Some(method) => method.as_str().unwrap().to_string(),
                    None => "neutral".to_string(),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            seen(true),
            ["notifications/cancelled", "neutral", "notifications/cancelled", "tools/list", "neutral"]
        );
        // Without them: the clock where the era ahead is unclear, a modern ping once the conversation opened it.
        assert_eq!(seen(false), ["notifications/cancelled", "notifications/cancelled", "tools/list", "ping"]);
    }
}
