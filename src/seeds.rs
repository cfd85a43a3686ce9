//! The protocol lesson's seed transcripts (`tests/fixtures/seed-transcripts.json`, a copy of
//! `shared/fixtures/seed-transcripts.json`): loading them, replaying a case against a server, and comparing what came
//! back as JSON values.

use crate::protocol::IdField;
use crate::server::transport::stdio::StdioTarget;
use crate::server::{InProcessServer, ServerCommand, ServerConnection, Target, Timeouts};
use crate::transcript::{Ending, Input};
use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The fixture as shipped with the crate.
pub const BUILTIN_FIXTURE: &str = include_str!("../tests/fixtures/seed-transcripts.json");

/// One seed case: a fresh connection and the messages sent on it in order.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedCase {
    /// The case's name.
    pub name: String,
    /// The steps, in order.
    pub steps: Vec<SeedStep>,
}

/// One message sent and what must come back for it.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedStep {
    /// The message to send.
    pub send: Value,
    /// The reply expected for it.
    pub expect: Expected,
}

/// What must come back for one message.
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    /// Exactly this reply (compared as JSON values, key order free).
    Reply(Value),
    /// A reply holding at least these members with these values (recursively through objects).
    Contains(Value),
    /// No reply at all.
    Nothing,
}

/// Parses a seed-transcript fixture.
pub fn load(json: &str) -> Result<Vec<SeedCase>> {
    let root: Value = serde_json::from_str(json).context("seed fixture is not JSON")?;
    let cases = root.get("cases").and_then(Value::as_array).context("seed fixture has no `cases` array")?;
    cases.iter().map(load_case).collect()
}

/// The built-in fixture, parsed.
pub fn builtin() -> Vec<SeedCase> {
    load(BUILTIN_FIXTURE).expect("the shipped seed fixture parses")
}

fn load_case(case: &Value) -> Result<SeedCase> {
    let name = case.get("name").and_then(Value::as_str).context("seed case without a name")?.to_string();
    let steps = case.get("steps").and_then(Value::as_array).with_context(|| format!("{name}: no steps"))?;
    let steps = steps
        .iter()
        .map(|step| {
            let send = step.get("send").cloned().with_context(|| format!("{name}: step without `send`"))?;
            let expect = match (step.get("reply"), step.get("reply_contains")) {
                (Some(Value::Null), None) => Expected::Nothing,
                (Some(reply), None) => Expected::Reply(reply.clone()),
                (None, Some(fields)) => Expected::Contains(fields.clone()),
                _ => bail!("{name}: a step needs exactly one of `reply` and `reply_contains`"),
            };
            Ok(SeedStep { send, expect })
        })
        .collect::<Result<_>>()?;
    Ok(SeedCase { name, steps })
}

impl SeedCase {
    /// The lines to send, one per step.
    pub fn lines(&self) -> Vec<Vec<u8>> {
        self.steps.iter().map(|s| serde_json::to_vec(&s.send).unwrap_or_default()).collect()
    }

    /// Replays the case on a fresh in-process connection; returns the mismatches (empty when it passes).
    pub fn check_in_process<S: InProcessServer>(&self, server: &S) -> Vec<String> {
        let mut connection = server.connect();
        let mut replies = Vec::new();
        for line in self.lines() {
            connection.receive(&line, &mut replies);
        }
        self.compare(&replies)
    }

    /// Replays the case through a child process (stdin closed after the last line); returns the mismatches.
    pub fn check_child(&self, command: &ServerCommand, timeouts: Timeouts) -> Result<Vec<String>> {
        let inputs: Vec<Input> = self.lines().into_iter().map(Input::Line).collect();
        let transcript = StdioTarget::new(command.clone(), timeouts).cold().run(&inputs)?;
        let replies: Vec<Vec<u8>> = transcript.received().map(<[u8]>::to_vec).collect();
        let mut mismatches = self.compare(&replies);
        if transcript.ending != Ending::Closed {
            mismatches.push(format!("the conversation did not end cleanly: {:?}", transcript.ending));
        }
        Ok(mismatches)
    }

    /// Compares the lines a server wrote with what the steps expect. Replies are matched to steps by id, so a
    /// server may answer pipelined requests in any order; every line must be claimed by exactly one step.
    pub fn compare(&self, replies: &[Vec<u8>]) -> Vec<String> {
        let parsed: Vec<Option<Value>> = replies.iter().map(|line| serde_json::from_slice(line).ok()).collect();
        let mut claimed = vec![false; replies.len()];
        let mut mismatches = Vec::new();
        for (index, step) in self.steps.iter().enumerate() {
            let id = IdField::of(step.send.get("id"));
            let (want, exact) = match &step.expect {
                Expected::Nothing => continue,
                Expected::Reply(want) => (want, true),
                Expected::Contains(want) => (want, false),
            };
            let found = (0..replies.len())
                .find(|&i| !claimed[i] && parsed[i].as_ref().is_some_and(|reply| IdField::of(reply.get("id")) == id));
            if let Some(i) = found {
                claimed[i] = true;
            }
            match found.and_then(|i| parsed[i].as_ref()) {
                None => mismatches.push(format!("step {}: no reply with id {}", index + 1, show_id(&id))),
                Some(got) if exact && got != want => {
                    mismatches.push(format!("step {}: expected {want}\n  got {got}", index + 1))
                }
                Some(got) if !exact && !contains(got, want) => {
                    mismatches.push(format!("step {}: expected a reply containing {want}\n  got {got}", index + 1))
                }
                Some(_) => {}
            }
        }
        for (line, claimed) in replies.iter().zip(&claimed) {
            if !claimed {
                mismatches.push(format!("unexpected line: {}", String::from_utf8_lossy(line)));
            }
        }
        mismatches
    }
}

fn show_id(id: &IdField) -> String {
    match id {
        IdField::Valid(id) => id.to_string(),
        other => format!("{other:?}"),
    }
}

/// True when `got` holds every member of `want` with the same value, recursing through objects; other values
/// must be equal.
pub fn contains(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Object(got), Value::Object(want)) => {
            want.iter().all(|(key, w)| got.get(key).is_some_and(|g| contains(g, w)))
        }
        _ => got == want,
    }
}
