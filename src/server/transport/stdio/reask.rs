//! Telling a tool whose handler never returns from a slow one, over stdio: a tool call given up on at the reply
//! timeout while the server answered later requests (or a liveness ping), when another call of the same tool was
//! answered in the conversation, is asked again (the same line under a harness id, and a progress token of its own)
//! and waited for [`CONFIRM_FACTOR`] times the reply timeout, [`SLOWEST_FACTOR`] times the longest the tool took to
//! answer in the conversation, and at least [`Timeouts::reask_floor`] (30 s). Answered, the tool was slow (the
//! answer is in the transcript, and nothing is judged); not answered, the conversation notes the wait
//! ([`Note::Waited`]) and the oracle reports the re-asked call (`SERVER-HANDLER-HANG`). Only the first such call of
//! a conversation is re-asked, so the extra wait is bounded.

use super::conversation::Conversation;
use super::process::Stdout;
use crate::protocol::RequestId;
use crate::protocol::envelope::{META, PROGRESS_TOKEN_KEY};
use crate::protocol::methods::TOOLS_CALL;
use crate::server::Timeouts;
use crate::transcript::Note;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Instant;

/// The re-asked call is waited for this many times the reply timeout (and see [`SLOWEST_FACTOR`],
/// [`Timeouts::reask_floor`]).
pub(super) const CONFIRM_FACTOR: u32 = 5;

/// The re-asked call is waited for this many times the longest the same tool took to answer in the conversation: a
/// tool slow by design (server-everything's long-running operation takes 10 s by default) is not a hang on a loaded
/// machine.
pub(super) const SLOWEST_FACTOR: u32 = 3;

/// The prefix of a re-asked call's id (a string id no script uses).
const REASK_PREFIX: &str = "mcp-wirefuzz-reask-";

/// The tool a line calls, when it is a `tools/call` request.
pub(super) fn called_tool(line: &[u8]) -> Option<String> {
    let message: serde_json::Value = serde_json::from_slice(line).ok()?;
    (message.get("method")?.as_str()? == TOOLS_CALL).then_some(())?;
    Some(message.get("params")?.get("name")?.as_str()?.to_string())
}

impl Conversation<'_> {
    /// Re-asks the tool call `id`, given up on as slow, when it is the conversation's first and another call of its
    /// tool was answered (see the module documentation).
    pub(super) fn reask(&mut self, id: &RequestId, timeouts: Timeouts) {
        let Some((tool, line, _)) = self.tools.get(id).cloned() else { return };
        let Some(&slowest) = self.answered_tools.get(&tool) else { return };
        if self.reasked {
            return;
        }
        self.reasked = true;
        let Ok(mut message) = serde_json::from_slice::<serde_json::Value>(&line) else { return };
        let again = format!("{REASK_PREFIX}{}", self.sent);
        message["id"] = serde_json::Value::String(again.clone());
        // A progress token is unique among the requests in flight: the first call may still be running.
        if let Some(token) = message.pointer_mut(&format!("/params/{META}/{PROGRESS_TOKEN_KEY}")) {
            *token = serde_json::Value::String(again.clone());
        }
        let again = RequestId::String(again);
        self.send(message.to_string().as_bytes());
        let wait = (timeouts.reply * CONFIRM_FACTOR).max(slowest * SLOWEST_FACTOR).max(timeouts.reask_floor);
        let until = Instant::now() + wait;
        let mut waited = false;
        while self.open.contains_key(&again) {
            match self.process.output.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(Stdout::Line(line)) => self.receive(line),
                Err(RecvTimeoutError::Timeout) => {
                    waited = true;
                    break;
                }
                // The server ended: the barrier that follows sees how.
                Ok(Stdout::End) | Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        if self.open.remove(&again).is_some() {
            self.let_go.insert(again);
        }
        if waited {
            let _ = self.note_failure();
            self.record(crate::transcript::Event::Note(Note::Waited { ms: wait.as_millis() as u64 }));
        }
    }
}
