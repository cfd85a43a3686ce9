//! Recordings: one server's answers to a seed's conversations, kept on disk (`diff --record DIR`), so a later
//! version can be compared with them without the old server (`diff --recorded DIR`).
//!
//! `DIR/recording.jsonl` holds a header line (`{"mcp-wirefuzz-recording": 1, "seed": ..., "server": ...}`), then
//! one line per conversation: `{"inputs": [...], "received": [...], "ending": "closed"}`. A line of bytes is a JSON
//! string when it is UTF-8, else `{"hex": "..."}`; a sync point is `null`; the ending is written as in a diff case.
//! [`Played`] is the target that answers from a recording: the same inputs, the recorded answers.

use super::Conversations;
use crate::case::{ending_text, from_hex, parse_ending, to_hex};
use crate::server::{CutShort, ServerSpec, Target};
use crate::transcript::{Ending, Event, Input, Transcript};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;

/// The file a recording folder holds.
pub const FILE: &str = "recording.jsonl";
/// The header's format key and version.
const FORMAT: &str = "mcp-wirefuzz-recording";

/// One recorded conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// What was sent.
    pub inputs: Vec<Input>,
    /// What the server wrote.
    pub received: Vec<Vec<u8>>,
    /// How its connection ended.
    pub ending: Ending,
}

/// A whole recording.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recording {
    /// The seed its conversations were generated from.
    pub seed: u64,
    /// The server it recorded, as reports describe it.
    pub server: String,
    /// The conversations, in order.
    pub conversations: Vec<Recorded>,
}

impl Recording {
    /// Writes the recording into `dir` (created if needed) as [`FILE`], replacing one that is there.
    pub fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join(FILE);
        let temporary = dir.join(format!(".{FILE}.tmp"));
        let write = || -> std::io::Result<()> {
            let mut file = std::io::BufWriter::new(std::fs::File::create(&temporary)?);
            writeln!(file, "{}", json!({ FORMAT: 1, "seed": self.seed, "server": self.server }))?;
            for conversation in &self.conversations {
                let inputs: Vec<Value> = conversation
                    .inputs
                    .iter()
                    .map(|input| match input {
                        Input::Sync => Value::Null,
                        Input::Line(bytes) => bytes_value(bytes),
                    })
                    .collect();
                let received: Vec<Value> = conversation.received.iter().map(|line| bytes_value(line)).collect();
                let ending = ending_text(&conversation.ending);
                writeln!(file, "{}", json!({ "inputs": inputs, "received": received, "ending": ending }))?;
            }
            file.into_inner().map_err(|e| e.into_error())?.sync_all()
        };
        write().with_context(|| format!("cannot write {}", temporary.display()))?;
        std::fs::rename(&temporary, &path).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Reads the recording in `dir`; errors name the line.
    pub fn load(dir: &Path) -> Result<Recording> {
        let path = dir.join(FILE);
        let file = std::fs::File::open(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let mut recording = Recording::default();
        for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
            let at = || format!("{} line {}", path.display(), index + 1);
            let value: Value = serde_json::from_str(&line.with_context(at)?).with_context(at)?;
            if index == 0 {
                if value.get(FORMAT).and_then(Value::as_u64) != Some(1) {
                    bail!("{}: not a recording (its first line has no `{FORMAT}: 1`)", at());
                }
                recording.seed = value.get("seed").and_then(Value::as_u64).unwrap_or(0);
                recording.server = value.get("server").and_then(Value::as_str).unwrap_or("").to_string();
                continue;
            }
            let list = |key: &str| value.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
            let inputs = list("inputs")
                .iter()
                .map(|item| match item {
                    Value::Null => Ok(Input::Sync),
                    item => Ok(Input::Line(value_bytes(item)?)),
                })
                .collect::<Result<Vec<Input>>>()
                .with_context(at)?;
            let received = list("received").iter().map(value_bytes).collect::<Result<Vec<_>>>().with_context(at)?;
            let ending = parse_ending(value.get("ending").and_then(Value::as_str).unwrap_or("")).with_context(at)?;
            recording.conversations.push(Recorded { inputs, received, ending });
        }
        if recording.conversations.is_empty() && recording.server.is_empty() {
            bail!("{}: empty", path.display());
        }
        Ok(recording)
    }
}

/// Records `server` answering `conversations` through `target` (up to `cases`, or until the conversations or the
/// deadline end), `tick` told the count after each.
pub fn record(
    server: &ServerSpec,
    target: &mut dyn Target,
    conversations: &Conversations,
    cases: Option<u64>,
    seed: u64,
    mut tick: impl FnMut(u64),
) -> Result<Recording> {
    let mut recording = Recording { seed, server: server.describe(), conversations: Vec::new() };
    let mut index = 0;
    while cases.is_none_or(|cases| index < cases) {
        let Some(inputs) = conversations.get(index) else { break };
        let transcript = match target.run(&inputs) {
            Err(error) if CutShort::DeadlinePassed.is(&error) => break,
            ran => ran?,
        };
        let received = transcript.received().map(<[u8]>::to_vec).collect();
        recording.conversations.push(Recorded { inputs, received, ending: transcript.ending });
        index += 1;
        tick(index);
    }
    Ok(recording)
}

fn bytes_value(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => Value::String(text.to_string()),
        Err(_) => json!({ "hex": to_hex(bytes) }),
    }
}

fn value_bytes(value: &Value) -> Result<Vec<u8>> {
    match value {
        Value::String(text) => Ok(text.as_bytes().to_vec()),
        other => match other.get("hex").and_then(Value::as_str) {
            Some(hex) => from_hex(hex),
            None => bail!("a line is a string or {{\"hex\": \"...\"}}"),
        },
    }
}

/// A target that answers from a recording: the transcript recorded for the same inputs. Inputs it has no record
/// of (a shorter conversation, while minimizing) are an error: the recorded server cannot be asked again.
pub struct Played {
    answers: HashMap<Vec<Input>, (Vec<Vec<u8>>, Ending)>,
}

impl Played {
    /// A target playing `conversations`.
    pub fn new(conversations: Vec<Recorded>) -> Played {
        let answers = conversations.into_iter().map(|c| (c.inputs, (c.received, c.ending))).collect();
        Played { answers }
    }
}

/// The error of a [`Played`] target asked what it has no record of.
#[derive(Debug)]
pub struct NotRecorded;

impl std::fmt::Display for NotRecorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the recording holds no answer to this conversation")
    }
}

impl std::error::Error for NotRecorded {}

impl Target for Played {
    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        let Some((received, ending)) = self.answers.get(inputs) else { return Err(NotRecorded.into()) };
        let mut events: Vec<Event> = Vec::new();
        for input in inputs {
            events.push(match input {
                Input::Line(line) => Event::Sent(line.clone()),
                Input::Sync => Event::Sync,
            });
        }
        events.extend(received.iter().map(|line| Event::Received { line: line.clone(), truncated: false }));
        Ok(Transcript { events, ending: ending.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_comes_back_from_disk_and_plays_its_answers() {
        let dir = std::env::temp_dir().join(format!("wirefuzz-recording-{}", std::process::id()));
        let conversation = Recorded {
            inputs: vec![Input::Line(b"{\"id\":1}".to_vec()), Input::Sync, Input::Line(b"\xff\x00".to_vec())],
            received: vec![b"{\"id\":1,\"result\":{}}".to_vec(), b"not json \xfe".to_vec()],
            ending: Ending::Exited { code: Some(3), signal: None, stderr_tail: Vec::new() },
        };
        let recording = Recording { seed: 7, server: "`srv`".into(), conversations: vec![conversation.clone()] };
        recording.save(&dir).unwrap();
        assert_eq!(Recording::load(&dir).unwrap(), recording);
        let mut played = Played::new(recording.conversations);
        let transcript = played.run(&conversation.inputs).unwrap();
        assert_eq!(
            transcript.received().collect::<Vec<_>>(),
            vec![&conversation.received[0][..], &conversation.received[1][..]]
        );
        assert_eq!(transcript.ending, conversation.ending);
        assert!(played.run(&conversation.inputs[..1]).unwrap_err().is::<NotRecorded>());
        std::fs::write(dir.join(FILE), "{\"something\": 1}\n").unwrap();
        assert!(Recording::load(&dir).unwrap_err().to_string().contains("not a recording"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
