//! The quirky server: the reference server "calc" doing everything that is legal but unusual, in the style of the
//! planted bugs (`mcp-wirefuzz serve --quirks`), so the oracle can be shown to stay quiet on it. It answers what
//! calc answers, but holds replies to pipelined lines and releases them in another order (id-less -32700/-32600
//! errors too), writes members in any order with JSON whitespace between tokens (never a newline), escapes
//! characters that need no escape (`"\u0061"`), adds `error.data` where calc has none, and may drop the reply to a
//! request the client cancelled with `notifications/cancelled` while it was open, and refuses what calc leaves
//! unanswered the way a hand-written JSON-RPC loop does (a blank line, a stray response, an id echoed exactly as
//! sent). Over stdio it also starts slowly,
//! writes one reply in several flushed pieces with pauses between, writes noise on stderr, and answers late (well
//! within the reply timeout).
//!
//! Which quirks are on is a [`Quirks`] set; when each one strikes is drawn from the seed.

use super::reference::{Calc, CalcConnection};
use crate::protocol::methods::CANCELLED;
use crate::protocol::{Frame, IdField, RequestId};
use crate::script::draws::Draws;
use crate::server::{InProcessServer, ServerConnection, Status};
use serde_json::Value;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

/// Which legal but unusual behaviours are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quirks {
    /// Replies to pipelined lines are held and released later, in another order.
    pub reorder: bool,
    /// A held reply to a request the client then cancelled may never be sent.
    pub drop_cancelled: bool,
    /// Object members in any order, JSON whitespace between tokens.
    pub layout: bool,
    /// Characters that need no escape are escaped (`\u0061`, `\/`).
    pub escapes: bool,
    /// Errors carry `data` where calc sends none.
    pub error_data: bool,
    /// What calc leaves unanswered or answers with id null, refused the way a hand-written JSON-RPC loop does: a
    /// blank line gets -32700 with id null, a response the client sends gets -32600 under its id, and a line whose
    /// id is no string or integer gets its refusal under that id exactly as sent (JSON-RPC 2.0 §5, §5.1).
    pub refusals: bool,
}

impl Quirks {
    /// Every quirk on.
    pub const ALL: Quirks =
        Quirks { reorder: true, drop_cancelled: true, layout: true, escapes: true, error_data: true, refusals: true };
    /// Only the quirks of a reply's bytes (layout, escapes, error data): replies in order, none dropped or added.
    pub const BYTES: Quirks = Quirks { reorder: false, drop_cancelled: false, refusals: false, ..Quirks::ALL };
}

/// The quirky server: calc with `quirks`, each striking when the generator seeded with `seed` says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quirky {
    /// Seeds each connection's draws.
    pub seed: u64,
    /// The quirks that are on.
    pub quirks: Quirks,
}

impl Quirky {
    /// Every quirk on, seeded with `seed`.
    pub fn new(seed: u64) -> Quirky {
        Quirky { seed, quirks: Quirks::ALL }
    }
}

impl InProcessServer for Quirky {
    type Connection = QuirkyConnection;

    fn connect(&self) -> QuirkyConnection {
        QuirkyConnection {
            calc: Calc.connect(),
            quirks: self.quirks,
            draws: Draws(self.seed ^ 0x5157_4952_4b59),
            held: Vec::new(),
        }
    }
}

/// One connection of [`Quirky`].
#[derive(Clone, Debug)]
pub struct QuirkyConnection {
    calc: CalcConnection,
    quirks: Quirks,
    draws: Draws,
    /// Replies written by calc and not yet sent, with the request id each answers (if any).
    held: Vec<(Option<RequestId>, Vec<u8>)>,
}

impl ServerConnection for QuirkyConnection {
    fn receive(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> Status {
        if self.quirks.drop_cancelled
            && let Some(id) = cancelled(line)
            && self.draws.one_in(2)
        {
            self.held.retain(|(answers, _)| answers.as_ref() != Some(&id));
        }
        let mut replies = Vec::new();
        let status = self.calc.receive(line, &mut replies);
        if self.quirks.refusals {
            refuse(line, &mut replies);
        }
        for reply in replies {
            let id = reply_id(&reply);
            let reply = self.rewrite(reply);
            if self.quirks.reorder && status == Status::Running && self.draws.one_in(2) {
                self.held.push((id, reply));
            } else {
                out.push(reply);
            }
        }
        if status != Status::Running || self.draws.one_in(4) {
            self.release(out);
        }
        status
    }

    fn release(&mut self, out: &mut Vec<Vec<u8>>) {
        while !self.held.is_empty() {
            let pick = self.draws.below(self.held.len());
            out.push(self.held.swap_remove(pick).1);
        }
    }
}

impl QuirkyConnection {
    /// A reply as this connection writes it: the same message, in unusual but legal bytes.
    fn rewrite(&mut self, reply: Vec<u8>) -> Vec<u8> {
        let Ok(mut message) = serde_json::from_slice::<Value>(&reply) else { return reply };
        if self.quirks.error_data {
            add_error_data(&mut message);
        }
        let mut line = Vec::with_capacity(reply.len() * 2);
        self.write(&message, &mut line);
        line
    }

    /// Writes `value` as JSON, with the layout and escape quirks that are on.
    fn write(&mut self, value: &Value, out: &mut Vec<u8>) {
        match value {
            Value::Object(members) => {
                let mut order: Vec<(&String, &Value)> = members.iter().collect();
                if self.quirks.layout && order.len() > 1 {
                    let turn = self.draws.below(order.len());
                    order.rotate_left(turn);
                    if self.draws.one_in(2) {
                        order.reverse();
                    }
                }
                out.push(b'{');
                for (i, (name, member)) in order.into_iter().enumerate() {
                    if i > 0 {
                        self.space(out);
                        out.push(b',');
                    }
                    self.space(out);
                    self.string(name, out);
                    self.space(out);
                    out.push(b':');
                    self.space(out);
                    self.write(member, out);
                }
                self.space(out);
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    self.space(out);
                    self.write(item, out);
                }
                self.space(out);
                out.push(b']');
            }
            Value::String(text) => self.string(text, out),
            other => out.extend_from_slice(other.to_string().as_bytes()),
        }
    }

    /// JSON whitespace (spaces and tabs; never a line break), when the layout quirk strikes.
    fn space(&mut self, out: &mut Vec<u8>) {
        if self.quirks.layout && self.draws.one_in(3) {
            for _ in 0..=self.draws.below(3) {
                out.push([b' ', b'\t'][self.draws.below(2)]);
            }
        }
    }

    /// A JSON string, with needless escapes when that quirk strikes.
    fn string(&mut self, text: &str, out: &mut Vec<u8>) {
        let needless = self.quirks.escapes && self.draws.one_in(2);
        out.push(b'"');
        for c in text.chars() {
            match c {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                '/' if needless => out.extend_from_slice(b"\\/"),
                c if (c as u32) < 0x20 => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
                c if needless && c.is_ascii_alphanumeric() && self.draws.one_in(2) => {
                    out.extend_from_slice(format!("\\u{:04X}", c as u32).as_bytes())
                }
                c if needless && !c.is_ascii() => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.extend_from_slice(format!("\\u{unit:04x}").as_bytes());
                    }
                }
                c => {
                    let mut bytes = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut bytes).as_bytes());
                }
            }
        }
        out.push(b'"');
    }
}

/// Adds `error.data` to an error that has none.
fn add_error_data(message: &mut Value) {
    if let Some(error) = message.get_mut("error").and_then(Value::as_object_mut)
        && !error.contains_key("data")
    {
        error.insert("data".into(), serde_json::json!({ "quirk": "extra error data", "retry": false }));
    }
}

/// What a hand-written loop answers where calc is silent or answers with id null ([`Quirks::refusals`]).
fn refuse(line: &[u8], replies: &mut Vec<Vec<u8>>) {
    let refusal = |id: &Value, code: i64, message: &str| {
        let error = serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
        error.to_string().into_bytes()
    };
    if line.iter().all(u8::is_ascii_whitespace) {
        return replies.push(refusal(&Value::Null, -32700, "Parse error: no JSON text"));
    }
    let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) else { return };
    let Some(id) = message.get("id") else { return };
    let response = !message.contains_key("method") && (message.contains_key("result") || message.contains_key("error"));
    if response && replies.is_empty() {
        return replies.push(refusal(id, -32600, "Invalid Request: a response, not a request"));
    }
    if !matches!(IdField::of(Some(id)), IdField::Valid(_)) {
        for reply in replies.iter_mut() {
            if let Ok(Value::Object(mut answer)) = serde_json::from_slice::<Value>(reply)
                && answer.get("id") == Some(&Value::Null)
                && answer.contains_key("error")
            {
                answer.insert("id".into(), id.clone());
                *reply = Value::Object(answer).to_string().into_bytes();
            }
        }
    }
}

/// The request id of a reply calc wrote, when it carries one.
fn reply_id(reply: &[u8]) -> Option<RequestId> {
    let message = serde_json::from_slice::<Value>(reply).ok()?;
    IdField::of(message.get("id")).valid().cloned()
}

/// The request id a `notifications/cancelled` line cancels.
fn cancelled(line: &[u8]) -> Option<RequestId> {
    let Frame::Notification(note) = Frame::parse(line) else { return None };
    if note.method != CANCELLED {
        return None;
    }
    IdField::of(note.params?.get("requestId")).valid().cloned()
}

/// How long the stdio server waits before it reads anything (a slow start).
pub const SLOW_START: Duration = Duration::from_millis(300);
/// How long the stdio server waits for more input before it releases what it holds.
const IDLE: Duration = Duration::from_millis(15);

/// Serves one connection of `server` over stdio with the stdio quirks too: a slow start, replies released late
/// when the input goes quiet, each reply in several flushed pieces with pauses between, noise on `noise` (stderr).
/// Returns as [`crate::server::transport::in_process::serve`] does.
pub fn serve(
    server: &Quirky,
    input: impl Read + Send + 'static,
    mut output: impl Write,
    mut noise: impl Write,
) -> io::Result<Status> {
    let mut draws = Draws(server.seed ^ 0x0053_5444_494f);
    let _ = writeln!(noise, "quirky calc: starting slowly (seed {})", server.seed);
    thread::sleep(SLOW_START);
    let (sender, lines) = mpsc::channel::<Vec<u8>>();
    thread::spawn(move || {
        let mut input = BufReader::new(input);
        loop {
            let mut line = Vec::new();
            match input.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if line.last() == Some(&b'\n') {
                        line.pop();
                    }
                    if sender.send(line).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let mut connection = server.connect();
    let mut replies = Vec::new();
    loop {
        replies.clear();
        let status = match lines.recv_timeout(IDLE) {
            Ok(line) => {
                if draws.one_in(3) {
                    let _ = writeln!(noise, "quirky calc: read {} bytes", line.len());
                }
                connection.receive(&line, &mut replies)
            }
            Err(RecvTimeoutError::Timeout) => {
                connection.release(&mut replies);
                // Now and then late on top: one release in six (a long session syncs a few hundred times).
                if !replies.is_empty() && draws.one_in(6) {
                    thread::sleep(Duration::from_millis(20 + draws.below(150) as u64));
                }
                Status::Running
            }
            Err(RecvTimeoutError::Disconnected) => {
                connection.release(&mut replies);
                write_pieces(&replies, &mut output, &mut draws)?;
                return Ok(Status::Running);
            }
        };
        write_pieces(&replies, &mut output, &mut draws)?;
        if status != Status::Running {
            return Ok(status);
        }
    }
}

/// Writes each reply and its newline, sometimes in several flushed pieces with short pauses between.
fn write_pieces(replies: &[Vec<u8>], output: &mut impl Write, draws: &mut Draws) -> io::Result<()> {
    for reply in replies {
        let mut rest = &reply[..];
        while rest.len() > 1 && draws.one_in(2) {
            let (piece, tail) = rest.split_at(1 + draws.below(rest.len() - 1));
            output.write_all(piece)?;
            output.flush()?;
            thread::sleep(Duration::from_millis(1 + draws.below(5) as u64));
            rest = tail;
        }
        output.write_all(rest)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_the_same_messages_in_other_bytes() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"wirefuzz/unknown"}"#,
            "{oops",
        ];
        let (mut plain, mut quirky) = (Calc.connect(), Quirky::new(7).connect());
        let (mut expected, mut got, mut differ) = (Vec::new(), Vec::new(), false);
        for line in lines {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            plain.receive(line.as_bytes(), &mut a);
            quirky.receive(line.as_bytes(), &mut b);
            expected.extend(a);
            got.extend(b);
        }
        quirky.release(&mut got);
        let parse = |line: &Vec<u8>| {
            assert!(!line.contains(&b'\n'));
            let mut value: Value = serde_json::from_slice(line).unwrap();
            if let Some(error) = value.get_mut("error").and_then(Value::as_object_mut)
                && error.get("data").is_some_and(|d| d.get("quirk").is_some())
            {
                error.remove("data");
            }
            value
        };
        for (calc, quirky) in expected.iter().zip(&got) {
            differ |= calc != quirky;
        }
        assert!(differ, "no quirk struck");
        let mut got: Vec<Value> = got.iter().map(parse).collect();
        assert_eq!(got.len(), expected.len());
        for message in expected.iter().map(parse) {
            let at = got.iter().position(|other| *other == message);
            got.swap_remove(at.unwrap_or_else(|| panic!("{message} is missing from {got:?}")));
        }
    }

    #[test]
    fn a_cancelled_request_may_go_unanswered() {
        let request = br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
        let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#;
        let dropped = (0..64).any(|seed| {
            let mut connection = Quirky::new(seed).connect();
            let mut out = Vec::new();
            connection.receive(request, &mut out);
            connection.receive(cancel, &mut out);
            connection.release(&mut out);
            out.is_empty()
        });
        assert!(dropped);
    }
}
