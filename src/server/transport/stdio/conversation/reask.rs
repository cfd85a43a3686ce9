//! Telling a tool whose handler never returns from a slow one, over stdio ([`crate::server::hangs`]). A tool call
//! given up on at the reply timeout while the server answered later requests (or a liveness ping) is asked again
//! (the same line under a harness id, and a progress token of its own) when it outlasted [`SLOWEST_FACTOR`] times
//! the slowest answer of its tool in the conversation or the run (where the wait is spent, [`HangWait::Wait`], also
//! a call of a tool never answered yet: the wait tells). What follows depends on [`Timeouts::hang`] and on what the
//! run learned:
//!
//! - a call a wait already showed hung in this run ([`Hangs::remembered`]) is not waited for again: the
//!   conversation notes the earlier wait ([`Known::Remembered`]);
//! - a fuzzing worker ([`HangWait::Suspect`]) does not wait: it notes the call as suspected ([`Known::Suspected`]),
//!   and the campaign confirms it on a fresh server that waits;
//! - a minimization ([`HangWait::Recall`]) asks again only a call already shown hung;
//! - otherwise ([`HangWait::Wait`]) the call is waited for as long as a client waits (each progress notification
//!   for it starting the wait again, up to [`PROGRESS_CAP`] times it), at least [`CONFIRM_FACTOR`] times the reply
//!   timeout and [`SLOWEST_FACTOR`] times its tool's slowest answer. Answered, the tool was slow (the answer is in
//!   the transcript, and nothing is judged); not answered, the conversation notes the wait ([`Note::Reasked`]), the
//!   run remembers the call as hung, and the oracle reports the re-asked call (`SERVER-HANDLER-HANG`).
//!
//! Only the first such call of a conversation is asked again, so the extra wait is bounded.

use super::Conversation;
use crate::protocol::RequestId;
use crate::protocol::envelope::{META, PROGRESS_TOKEN_KEY};
use crate::protocol::methods::{PROGRESS, TOOLS_CALL};
use crate::server::Timeouts;
use crate::server::hangs::{HangWait, Hangs, PROGRESS_CAP, SLOWEST_FACTOR};
use crate::server::transport::stdio::process::Stdout;
use crate::transcript::{Event, Known, Note};
use serde_json::Value;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// The re-asked call is waited for at least this many times the reply timeout (a server slow in everything gets
/// longer waits).
pub(super) const CONFIRM_FACTOR: u32 = 5;

/// The prefix of a re-asked call's id (a string id no script uses).
const REASK_PREFIX: &str = "mcp-wirefuzz-reask-";

/// A well-formed `tools/call` the conversation sent: what [`Conversation::reask`] needs of it.
#[derive(Clone)]
pub(super) struct ToolCall {
    /// The tool it calls.
    pub(super) tool: String,
    /// Its key among the run's hung calls ([`Hangs::key`]).
    pub(super) key: String,
    /// The line as sent.
    pub(super) line: Vec<u8>,
    /// When it was sent.
    pub(super) sent_at: Instant,
}

impl ToolCall {
    /// The call `line` makes, when it is a `tools/call` request naming a tool that every parser reads alike (one a
    /// server's parser may drop, such as a number of 5,000 digits, is not asked again: no handler may have run).
    pub(super) fn of(line: &[u8]) -> Option<ToolCall> {
        if !crate::protocol::json::read_alike(line) {
            return None;
        }
        let message: Value = serde_json::from_slice(line).ok()?;
        (message.get("method")?.as_str()? == TOOLS_CALL).then_some(())?;
        let tool = message.get("params")?.get("name")?.as_str()?.to_string();
        let key = Hangs::key(&tool, message.pointer("/params/arguments"));
        Some(ToolCall { tool, key, line: line.to_vec(), sent_at: Instant::now() })
    }
}

/// Milliseconds, for a note.
fn millis(duration: Duration) -> u64 {
    duration.as_millis().min(u128::from(u64::MAX)) as u64
}

impl Conversation<'_> {
    /// The slowest answer of `tool` seen in this conversation or earlier in the run, if any was.
    pub(super) fn slowest(&self, tool: &str) -> Option<Duration> {
        self.answered_tools.get(tool).copied().into_iter().chain(self.hangs.slowest(tool)).max()
    }

    /// Re-asks the tool call `id`, given up on as slow, when it is the conversation's first and it outlasted its
    /// tool's answers (see the module documentation).
    pub(super) fn reask(&mut self, id: &RequestId, timeouts: Timeouts) {
        let Some(ToolCall { tool, key, line, sent_at }) = self.tools.get(id).cloned() else { return };
        let Ok(mut message) = serde_json::from_slice::<Value>(&line) else { return };
        let remembered = self.hangs.remembered(&key);
        let unanswered = sent_at.elapsed();
        let slowest = self.slowest(&tool);
        // A call within its tool's usual time is slow like its tool. One of a tool never answered yet is asked again
        // only where the wait is spent: that wait, not a suspicion, tells.
        let outlasted = match (slowest, timeouts.hang) {
            (_, HangWait::Recall(_)) => false,
            (Some(slowest), _) => unanswered >= slowest * SLOWEST_FACTOR,
            (None, hang) => matches!(hang, HangWait::Wait(_)),
        };
        if self.reasked || (remembered.is_none() && !outlasted) {
            return;
        }
        let slowest = slowest.unwrap_or_default();
        self.reasked = true;
        let again = format!("{REASK_PREFIX}{}", self.sent);
        message["id"] = Value::String(again.clone());
        // A progress token is unique among the requests in flight: the first call may still be running.
        if let Some(token) = message.pointer_mut(&format!("/params/{META}/{PROGRESS_TOKEN_KEY}")) {
            *token = Value::String(again.clone());
        }
        let again_id = RequestId::String(again.clone());
        self.send(message.to_string().as_bytes());
        let wait = match (remembered, timeouts.hang) {
            (Some(waited), _) => {
                self.let_go_of(again_id);
                self.record(Event::Note(Note::Reasked { id: again, ms: millis(waited), known: Known::Remembered }));
                return;
            }
            (None, HangWait::Suspect(wait)) => {
                self.let_go_of(again_id);
                let known = Known::Suspected { slowest_ms: millis(slowest), wait_ms: millis(wait) };
                self.record(Event::Note(Note::Reasked { id: again, ms: millis(unanswered), known }));
                return;
            }
            (None, HangWait::Wait(wait) | HangWait::Recall(wait)) => {
                wait.max(timeouts.reply * CONFIRM_FACTOR).max(slowest * SLOWEST_FACTOR)
            }
        };
        let started = Instant::now();
        let mut until = started + wait;
        let mut waited = false;
        while self.open.contains_key(&again_id) {
            match self.process.output.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(Stdout::Line(line)) => {
                    // Work is happening: the wait starts again, up to its maximum.
                    if progress_of(&line.bytes, &again) {
                        until = (Instant::now() + wait).min(started + wait * PROGRESS_CAP);
                    }
                    self.receive(line);
                }
                Err(RecvTimeoutError::Timeout) => {
                    waited = true;
                    break;
                }
                // The server ended: the barrier that follows sees how.
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        self.let_go_of(again_id);
        if waited {
            let _ = self.note_failure();
            let waited = started.elapsed();
            self.hangs.hung(&key, waited);
            self.record(Event::Note(Note::Reasked { id: again, ms: millis(waited), known: Known::Waited }));
        }
    }

    /// Stops waiting for the request `id` (a reply to it later is neither counted nor a reorder).
    fn let_go_of(&mut self, id: RequestId) {
        if self.open.remove(&id).is_some() {
            self.let_go.insert(id);
        }
    }
}

/// True when `line` is a progress notification for the token `token`.
fn progress_of(line: &[u8], token: &str) -> bool {
    let Ok(message) = serde_json::from_slice::<Value>(line) else { return false };
    message.get("method").and_then(Value::as_str) == Some(PROGRESS)
        && message.pointer("/params/progressToken").and_then(Value::as_str) == Some(token)
}

#[cfg(test)]
mod tests {
    use crate::oracle::{Policy, check};
    use crate::server::Target;
    use crate::server::hangs::{HangWait, Hangs};
    use crate::server::transport::stdio::StdioTarget;
    use crate::server::transport::stdio::test_servers::*;
    use crate::transcript::{Event, Input, Known, Note, Transcript};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// A handshake-era conversation: `initialize`, then a call of `fetch` with `item` 1 (answered at once), then one
    /// with `item`.
    fn conversation(item: u32) -> Vec<Input> {
        let line = |text: String| Input::Line(text.into_bytes());
        let call = |id: &str, item: u32| {
            line(format!(
                r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"fetch","arguments":{{"item":{item}}}}}}}"#
            ))
        };
        let initialize = r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        vec![
            line(initialize.to_string()),
            line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string()),
            Input::Sync,
            call("a", 1),
            Input::Sync,
            call("b", item),
            Input::Sync,
        ]
    }

    /// Never answers item 9; answers everything else (pings included) at once.
    fn server() -> crate::server::ServerCommand {
        answering(
            r#"while read -r l; do id=$(idof "$l"); case "$l" in *'"item":9'*) ;; *) [ -n "$id" ] && reply "$id";; esac; done"#,
        )
    }

    fn hangs_found(transcript: &Transcript) -> Vec<String> {
        let findings = check(transcript, &Policy::default());
        let hung = findings.iter().filter(|f| f.rule == "SERVER-HANDLER-HANG");
        hung.map(|f| crate::trigger::signature(transcript, f)).collect()
    }

    fn note(transcript: &Transcript) -> Option<&Note> {
        transcript.events.iter().find_map(|event| match event {
            Event::Note(note) if note.of_wait() => Some(note),
            _ => None,
        })
    }

    #[test]
    fn a_call_a_wait_showed_hung_costs_the_runs_other_conversations_no_wait() {
        let wait = Duration::from_millis(1500);
        let timeouts = |hang| crate::server::Timeouts { hang, ..quick() };
        let hangs = Arc::new(Hangs::default());
        let mut waiting = StdioTarget::new(server(), timeouts(HangWait::Wait(wait))).sharing(hangs.clone());
        let first = waiting.run(&conversation(9)).unwrap();
        assert!(matches!(note(&first), Some(Note::Reasked { known: Known::Waited, .. })), "{}", first.render());
        let trigger = hangs_found(&first);
        assert_eq!(trigger.len(), 1, "{}", first.render());
        // The same call again, on the same target or another of the run: found as before, without the wait.
        let started = Instant::now();
        let again = waiting.run(&conversation(9)).unwrap();
        assert!(started.elapsed() < wait, "{:?}", started.elapsed());
        assert!(matches!(note(&again), Some(Note::Reasked { known: Known::Remembered, .. })), "{}", again.render());
        assert_eq!(hangs_found(&again), trigger, "{}", again.render());
        // A minimization's target finds it by the run's memory alone; on a run that knows no hung call, it neither
        // waits nor finds anything.
        let mut recalling = StdioTarget::new(server(), timeouts(HangWait::Recall(wait))).sharing(hangs.clone());
        assert_eq!(hangs_found(&recalling.run(&conversation(9)).unwrap()), trigger);
        let fresh = Arc::new(Hangs::default());
        let mut recalling = StdioTarget::new(server(), timeouts(HangWait::Recall(wait))).sharing(fresh.clone());
        let started = Instant::now();
        let unknown = recalling.run(&conversation(9)).unwrap();
        assert!(started.elapsed() < wait && note(&unknown).is_none(), "{}", unknown.render());
        assert!(hangs_found(&unknown).is_empty(), "{}", unknown.render());
        // A fuzzing target does not wait for a call it has not seen hang: it suspects it, with the same trigger.
        let mut suspecting = StdioTarget::new(server(), timeouts(HangWait::Suspect(wait))).sharing(fresh);
        let started = Instant::now();
        let suspected = suspecting.run(&conversation(9)).unwrap();
        assert!(started.elapsed() < wait, "{:?}", started.elapsed());
        assert!(note(&suspected).is_some_and(|note| note.suspected().is_some()), "{}", suspected.render());
        assert_eq!(hangs_found(&suspected), trigger, "{}", suspected.render());
        // A call answered is neither.
        let answered = suspecting.run(&conversation(2)).unwrap();
        assert!(note(&answered).is_none() && hangs_found(&answered).is_empty(), "{}", answered.render());
    }
}
