//! Telling a handler that never returns from a slow one, at the cost of one wait per hung call in a run. A client
//! gives a tool call a bounded time: the TypeScript SDK's client fails a request after 60 s
//! (`DEFAULT_REQUEST_TIMEOUT_MSEC` in shared/protocol.ts), and lifecycle.mdx §Timeouts has the sender time requests
//! out, cancel them and stop waiting, a progress notification resetting the clock up to a maximum it always
//! enforces. So a tool call the server leaves unanswered for [`HANG_WAIT`] while it answers other requests has a
//! handler that, for every client, never returns; one answered within it is slow, not hung.
//!
//! [`HangWait`] says how a target spends that wait: a fuzzing worker does not ([`HangWait::Suspect`]: a call given
//! up on is only suspected, and the campaign confirms it on a fresh server in the background), nor does a
//! minimization ([`HangWait::Recall`]: only calls already confirmed count); everything else does
//! ([`HangWait::Wait`]). [`Hangs`] is what a run learned, shared by its targets: how long each tool took to
//! answer (a call is suspected only when it outlasts its own tool's answers by [`SLOWEST_FACTOR`]), and the calls
//! (a tool and its exact arguments) a wait showed hung, so later conversations that reach one cost nothing more;
//! and whether the server outlives its closed input, so that once one conversation has waited the whole shutdown
//! wait for that, a fuzzing worker does not wait it again in every conversation.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// The wait that makes a tool call hung: the TypeScript SDK client's default request timeout (see the module
/// documentation). `fuzz --hang-wait` sets another.
pub const HANG_WAIT: Duration = Duration::from_secs(60);

/// How many times [`HangWait::wait`] a call reporting progress is waited for at most: each progress notification
/// for it starts the wait again, up to this maximum (lifecycle.mdx §Timeouts: implementations SHOULD always enforce
/// a maximum timeout, regardless of progress notifications).
pub const PROGRESS_CAP: u32 = 3;

/// A call of a tool is suspected only once it went unanswered this many times longer than the slowest answer of
/// that tool the run has seen: a tool slow by design (server-everything's long-running operation takes 10 s by
/// default) is not a hang on a loaded machine.
pub const SLOWEST_FACTOR: u32 = 3;

/// How a target tells a handler that never returns from a slow one (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HangWait {
    /// A tool call given up on is asked again and waited for this long.
    Wait(Duration),
    /// A tool call given up on is asked again but not waited for: it is noted as suspected, to be confirmed with a
    /// wait this long on a fresh server (a fuzzing worker's: its time is for new conversations).
    Suspect(Duration),
    /// Only a call a wait already showed hung counts as one; any other call given up on is slow, and not asked
    /// again (a minimization's: a candidate breaks the rule only where it reaches a call confirmed hung, so no
    /// candidate costs a wait this long).
    Recall(Duration),
}

impl HangWait {
    /// The wait that makes a call hung.
    pub fn wait(self) -> Duration {
        match self {
            HangWait::Wait(wait) | HangWait::Suspect(wait) | HangWait::Recall(wait) => wait,
        }
    }

    /// The same wait, spent: for a target that confirms what another suspected.
    pub fn waiting(self) -> HangWait {
        HangWait::Wait(self.wait())
    }
}

impl Default for HangWait {
    fn default() -> HangWait {
        HangWait::Wait(HANG_WAIT)
    }
}

/// What a run learned of its server's tool calls, shared by its targets (see the module documentation).
#[derive(Debug, Default)]
pub struct Hangs {
    known: Mutex<Known>,
}

#[derive(Debug, Default)]
struct Known {
    /// The slowest answer of each tool seen so far.
    slowest: HashMap<String, Duration>,
    /// The calls a wait showed hung ([`Hangs::key`]), each with how long it was waited for.
    hung: HashMap<String, Duration>,
    /// A conversation that owed nothing saw the server outlive its closed input for the whole shutdown wait.
    outlived_input: bool,
}

impl Hangs {
    /// The key of a call of `tool` with `arguments` (their JSON text as sent: a call asked again copies it).
    pub fn key(tool: &str, arguments: Option<&serde_json::Value>) -> String {
        let arguments = arguments.map_or_else(|| "-".to_string(), serde_json::Value::to_string);
        format!("{tool} {arguments}")
    }

    /// Counts an answer of `tool` that took `took`.
    pub fn answered(&self, tool: &str, took: Duration) {
        if let Ok(mut known) = self.known.lock() {
            let slowest = known.slowest.entry(tool.to_string()).or_default();
            *slowest = (*slowest).max(took);
        }
    }

    /// The slowest answer of `tool` seen so far, if any was.
    pub fn slowest(&self, tool: &str) -> Option<Duration> {
        self.known.lock().ok()?.slowest.get(tool).copied()
    }

    /// Remembers that the call `key` went unanswered for `waited` while the server went on.
    pub fn hung(&self, key: &str, waited: Duration) {
        if let Ok(mut known) = self.known.lock() {
            known.hung.insert(key.to_string(), waited);
        }
    }

    /// How long the call `key` was waited for when a wait showed it hung, if one did.
    pub fn remembered(&self, key: &str) -> Option<Duration> {
        self.known.lock().ok()?.hung.get(key).copied()
    }

    /// Remembers that the server, owing nothing, did not exit within the whole shutdown wait after its input
    /// closed (`SERVER-SHUTDOWN`): a fuzzing worker need not spend that wait again ([`Hangs::outlives_input`]).
    pub fn outlived_input(&self) {
        if let Ok(mut known) = self.known.lock() {
            known.outlived_input = true;
        }
    }

    /// True once a conversation of the run saw the server outlive its closed input ([`Hangs::outlived_input`]).
    pub fn outlives_input(&self) -> bool {
        self.known.lock().is_ok_and(|known| known.outlived_input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_remembers_the_slowest_answer_of_each_tool_and_the_calls_that_hung() {
        let hangs = Hangs::default();
        assert_eq!(hangs.slowest("search"), None);
        hangs.answered("search", Duration::from_millis(40));
        hangs.answered("search", Duration::from_millis(15));
        assert_eq!(hangs.slowest("search"), Some(Duration::from_millis(40)));
        let empty = Hangs::key("search", Some(&serde_json::json!({"query": ""})));
        let other = Hangs::key("search", Some(&serde_json::json!({"query": "x"})));
        assert_ne!(empty, other);
        hangs.hung(&empty, HANG_WAIT);
        assert_eq!((hangs.remembered(&empty), hangs.remembered(&other)), (Some(HANG_WAIT), None));
    }

    #[test]
    fn a_suspecting_wait_is_spent_by_the_target_that_confirms() {
        let suspect = HangWait::Suspect(Duration::from_secs(5));
        assert_eq!(suspect.waiting(), HangWait::Wait(Duration::from_secs(5)));
        assert_eq!(HangWait::default().wait(), HANG_WAIT);
    }
}
