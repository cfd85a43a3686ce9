//! The trigger of a finding: a short, stable name for what set it off, so that one rule broken for two different
//! reasons gives two case files instead of hiding the second bug behind the first.
//!
//! A trigger is computed from the transcript alone (the sent lines are in it), so a campaign, the shrinker and a
//! replayed case all compute the same one. It names the line at fault: the sent line a finding points at, or, for a
//! finding on a received line, the request that line answers (matched by id), followed by `:error-CODE` when the
//! reply is an error. A sent line is named by what is odd about it, in the vocabulary of the generator's mutations
//! ([`crate::script::Mutation::name`]): `extra-field`, `big-id`, `drop-jsonrpc`, `trailing-data`, ... (several joined
//! by `+`); an oddity inside `params` is prefixed with the method, since servers validate params per method
//! (`ping/meta-not-object`). A line with nothing odd is named by its shape: the method, `+envelope` when it carries
//! the 2026-07-28 envelope, `+string-id` for a string id (`tools/call+envelope`). A received line that answers no
//! sent request is named by what it is (`reply:error-32600`, `reply:result`, `server-request:METHOD`,
//! `server-notification:METHOD`); a finding on no line is `no-line`. A server that stopped answering
//! (`SERVER-HANG`) in a conversation where it wrote nothing at all is `silent`, whatever line came first: one bug,
//! one case file, not one per opening.
//!
//! The name is read off the bytes, not remembered from the generator, so it holds for case files, replays and
//! recorded traffic alike, and a shrunk line cannot keep a name it no longer earns: dropping the extra member of an
//! `extra-field` line changes its trigger, so a shrinker that keeps the trigger keeps the member.

use crate::oracle::Finding;
use crate::protocol::envelope::{CLIENT_CAPABILITIES_KEY, META, PROTOCOL_VERSION_KEY};
use crate::protocol::era::{HANDSHAKE_VERSIONS, MODERN_VERSIONS};
use crate::protocol::id::{fraction_dropped, mangled_integer};
use crate::protocol::json::parse_value;
use crate::protocol::{Frame, IdField, Outcome, RequestId, ResponseId};
use crate::transcript::{Event, Transcript};
use serde_json::{Map, Value};

/// Strings at least this long (longer than any a plain request carries) are `huge-string`.
const HUGE_STRING: usize = 10_000;
/// Strings at least this long (the line limit of common server transports) are `giant-string`.
const GIANT_STRING: usize = 10 << 20;
/// Nesting deeper than this (the common parser limit) is `deep-nesting`; deeper than [`VERY_DEEP`],
/// `very-deep-nesting`.
const DEEP: usize = 128;
/// See [`DEEP`].
const VERY_DEEP: usize = 1000;
/// The largest integer id every JSON parser holds exactly: 2^53 - 1.
const SAFE_INTEGER: i128 = (1 << 53) - 1;
/// The members a JSON-RPC message may have.
const MEMBERS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// The trigger of `finding` in `transcript` (see the module documentation).
pub fn signature(transcript: &Transcript, finding: &Finding) -> String {
    let wrote = || transcript.received().next().is_some();
    if finding.rule == crate::oracle::rules::SERVER_HANG && !wrote() {
        return "silent".to_string();
    }
    let Some(index) = finding.event else { return "no-line".to_string() };
    match transcript.events.get(index) {
        Some(Event::Sent(line)) => sent(&transcript.events[..index], line),
        Some(Event::Received { line, .. }) => received(&transcript.events[..index], line),
        Some(Event::Sync) => "sync".to_string(),
        Some(Event::Http(exchange)) => format!("http {} {}", exchange.method, exchange.status),
        Some(Event::Note(crate::transcript::Note::Usage { .. })) => "usage".to_string(),
        Some(Event::Note(_)) => "note".to_string(),
        None => "no-line".to_string(),
    }
}

/// The trigger as a file-name part: lower-case letters, digits and single dashes, at most 60 characters.
pub fn file_part(trigger: &str) -> String {
    let mut out = String::new();
    for c in trigger.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out: String = out.chars().take(60).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() { "line".to_string() } else { out }
}

/// A method the server named, as a trigger part: its ASCII letters, digits and `/_-.` only, at most 48 of them.
fn method_part(method: &str) -> String {
    let kept = method.chars().filter(|c| c.is_ascii_alphanumeric() || "/_-.".contains(*c));
    kept.take(48).collect()
}

/// A received line: the request it answers (the latest sent before it with its id), then the error code.
fn received(before: &[Event], line: &[u8]) -> String {
    let (id, outcome) = match Frame::parse(line) {
        Frame::Response(response) => (response.id, Some(response.outcome)),
        Frame::Request(request) => return format!("server-request:{}", method_part(&request.method)),
        Frame::Notification(note) => return format!("server-notification:{}", method_part(&note.method)),
        Frame::NotJson { .. } | Frame::Blank => return "reply:not-json".to_string(),
        _ => return "reply:invalid".to_string(),
    };
    let code = match &outcome {
        Some(Outcome::Error(error)) => format!(":error{}", error.code),
        _ => String::new(),
    };
    let answered = latest_sent_with(before, &id).and_then(|at| match &before[at] {
        Event::Sent(request) => Some((at, request)),
        _ => None,
    });
    match answered {
        Some((at, request)) => format!("{}{code}", sent(&before[..at], request)),
        None if code.is_empty() => "reply:result".to_string(),
        None => format!("reply{code}"),
    }
}

/// When event `at` of `events` is a response, the event of the last line sent before it with the response's id:
/// the request it answers (other lines may have been sent between the two).
pub fn answered(events: &[Event], at: usize) -> Option<usize> {
    let Some(Event::Received { line, .. }) = events.get(at) else { return None };
    let Frame::Response(response) = Frame::parse(line) else { return None };
    latest_sent_with(&events[..at], &response.id)
}

/// The event of the last line among `before` sent with `id`, when `id` is one; else of the last sent with a big
/// integer id that `id` is the mangled form of ([`mangled_integer`]: a reply under a rounded id is the big id's).
fn latest_sent_with(before: &[Event], id: &ResponseId) -> Option<usize> {
    let ResponseId::Id(id) = id else { return None };
    let sent_with = |wanted: &dyn Fn(&RequestId) -> bool| {
        before.iter().rposition(|event| matches!(event, Event::Sent(sent) if sent_id(sent).is_some_and(|s| wanted(&s))))
    };
    let exact = sent_with(&|sent| sent == id);
    // A line sent with a number id whose fraction a parser drops (go-sdk answers `1.5` as `1`), when no line was
    // sent with the integer or that line was answered already, as the JSON-RPC layer matches it.
    let fraction = match id {
        RequestId::Integer(whole) => before.iter().rposition(
            |event| matches!(event, Event::Sent(sent) if fraction_of(sent).is_some_and(|f| fraction_dropped(f, whole))),
        ),
        RequestId::String(_) => None,
    };
    let answered_after = |from: usize| {
        before[from + 1..].iter().any(|event| {
            matches!(event, Event::Received { line, .. }
                if matches!(Frame::parse(line), Frame::Response(reply) if reply.id == ResponseId::Id(id.clone())))
        })
    };
    match (exact, fraction) {
        (Some(exact), Some(fraction)) if fraction > exact && answered_after(exact) => Some(fraction),
        (Some(exact), _) => Some(exact),
        (None, fraction) => fraction,
    }
    .or_else(|| match id {
        RequestId::Integer(got) => sent_with(&|sent| matches!(sent, RequestId::Integer(s) if mangled_integer(s, got))),
        RequestId::String(_) => None,
    })
}

/// The number id with a fraction a sent line carries (`1.5`), if it carries one.
fn fraction_of(line: &[u8]) -> Option<f64> {
    let message = serde_json::from_slice::<Map<String, Value>>(line).ok()?;
    message.get("id")?.as_f64().filter(|id| id.fract() != 0.0)
}

/// The id a sent line carries, when one can be read off it (by a lenient reader too: a line with a lone surrogate
/// escape is still a request to a parser that takes it).
fn sent_id(line: &[u8]) -> Option<RequestId> {
    let id = |line: &[u8]| match Frame::parse(line) {
        Frame::Request(request) => Some(request.id),
        Frame::Invalid { id, .. } => id,
        _ => None,
    };
    id(line).or_else(|| crate::protocol::json::lenient_text(line).and_then(|text| id(&text)))
}

/// A sent line: its oddities, or its shape when it has none. `before` is what was sent and received before it.
fn sent(before: &[Event], line: &[u8]) -> String {
    let mut tags = byte_tags(line);
    let noted = match Frame::skim(line) {
        Ok(noted) => noted,
        Err(frame) => {
            match *frame {
                Frame::Blank if line.is_empty() => tags.push("empty-line"),
                Frame::Blank => tags.push("blank-line"),
                Frame::NotJson { after_value: true, .. } => {
                    let half = line.len() / 2;
                    tags.push(if line[..half] == line[half..] { "two-objects" } else { "trailing-data" });
                }
                _ if depth(line) > DEEP => {
                    tags.push(if depth(line) > VERY_DEEP { "very-deep-nesting" } else { "deep-nesting" })
                }
                _ if tags.is_empty() => tags.push("not-json"),
                _ => {}
            }
            return tags.join("+");
        }
    };
    if noted.duplicate_keys {
        tags.push("duplicate-key");
    }
    if noted.beyond_limits {
        tags.push("huge-number");
    }
    // The skim leaves most of `params` out; the line parsed, so parsing it whole cannot fail.
    let value = parse_value(line).unwrap_or(noted.value);
    let object = match value {
        Value::Object(object) => object,
        Value::Array(items) if items.is_empty() => return joined(tags, "empty-batch"),
        Value::Array(_) => return joined(tags, "batch"),
        Value::Null => return joined(tags, "bare-null"),
        Value::Bool(_) => return joined(tags, "bare-bool"),
        Value::Number(_) => return joined(tags, "bare-number"),
        Value::String(_) => return joined(tags, "bare-string"),
    };
    match object.values().map(longest_string).max().unwrap_or(0) {
        GIANT_STRING.. => tags.push("giant-string"),
        HUGE_STRING.. => tags.push("huge-string"),
        _ => {}
    }
    if object.is_empty() {
        return joined(tags, "empty-object");
    }
    if object.contains_key("result") || object.contains_key("error") {
        return joined(tags, "response");
    }
    if object.keys().any(|k| !MEMBERS.contains(&k.as_str())) {
        tags.push("extra-field");
    }
    match object.get("jsonrpc") {
        None => tags.push("drop-jsonrpc"),
        Some(Value::String(v)) if v == "2.0" => {}
        Some(Value::String(v)) if v == "1.0" => tags.push("jsonrpc-1.0"),
        Some(Value::Number(_)) => tags.push("jsonrpc-number"),
        Some(_) => tags.push("jsonrpc-invalid"),
    }
    let method = match object.get("method") {
        None => {
            tags.push("drop-method");
            "no-method"
        }
        Some(Value::String(method)) => method.as_str(),
        Some(_) => {
            tags.push("method-not-string");
            "no-method"
        }
    };
    let mut string_id = false;
    match IdField::of(object.get("id")) {
        IdField::Absent if !method.starts_with("notifications/") && method != "no-method" => tags.push("drop-id"),
        IdField::Absent => {}
        IdField::Null => tags.push("null-id"),
        IdField::Invalid(Value::Number(_)) => tags.push("float-id"),
        IdField::Invalid(_) => tags.push("invalid-id"),
        IdField::Valid(id) => {
            if let RequestId::Integer(text) = &id
                && text.parse::<i128>().map_or(true, |n| n.abs() > SAFE_INTEGER)
            {
                tags.push("big-id");
            }
            if before.iter().any(|e| matches!(e, Event::Sent(line) if sent_id(line).as_ref() == Some(&id))) {
                tags.push("reused-id");
            }
            string_id = matches!(id, RequestId::String(_));
        }
    }
    let (params_tags, envelope) = params_tags(object.get("params"));
    let shape = |tags: Vec<&str>| -> String {
        let mut shape = method.to_string();
        if envelope {
            shape.push_str("+envelope");
        }
        if string_id {
            shape.push_str("+string-id");
        }
        joined(tags, &shape)
    };
    match (tags.is_empty(), params_tags.is_empty()) {
        (true, true) => shape(Vec::new()),
        (_, false) => {
            let params = format!("{method}/{}", params_tags.join("+"));
            joined(tags, &params)
        }
        (false, true) => tags.join("+"),
    }
}

/// `tags` joined by `+`, then `last`.
fn joined<'a>(mut tags: Vec<&'a str>, last: &'a str) -> String {
    tags.push(last);
    tags.join("+")
}

/// What the bytes of a line show before it is parsed: a byte-order mark, invalid UTF-8, a lone surrogate escape, a
/// trailing carriage return.
fn byte_tags(line: &[u8]) -> Vec<&'static str> {
    let mut tags = Vec::new();
    if line.starts_with(b"\xef\xbb\xbf") {
        tags.push("bom-prefix");
    }
    if std::str::from_utf8(line).is_err() {
        tags.push("invalid-utf8");
    }
    if has_lone_surrogate(line) {
        tags.push("lone-surrogate");
    }
    if line.ends_with(b"\r") && !line.iter().all(u8::is_ascii_whitespace) {
        tags.push("trailing-cr");
    }
    tags
}

/// True when the line holds a `\uD800`-`\uDFFF` escape that is not half of a pair.
fn has_lone_surrogate(line: &[u8]) -> bool {
    let escape = |at: usize| -> Option<u16> {
        let hex = line.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let mut at = 0;
    while at < line.len() {
        match escape(at) {
            Some(0xD800..=0xDBFF) if matches!(escape(at + 6), Some(0xDC00..=0xDFFF)) => at += 12,
            Some(0xD800..=0xDFFF) => return true,
            Some(_) => at += 6,
            None => at += 1,
        }
    }
    false
}

/// The deepest nesting of brackets and braces outside strings.
fn depth(line: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0, false, false);
    for &b in line {
        match (in_string, b) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') => in_string = false,
            (true, _) => {}
            (false, b'"') => in_string = true,
            (false, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// What is odd about `params`, and whether it carries a complete, well-formed 2026-07-28 envelope.
fn params_tags(params: Option<&Value>) -> (Vec<&'static str>, bool) {
    let mut tags = Vec::new();
    let params = match params {
        None => return (tags, false),
        Some(Value::Object(params)) => params,
        Some(Value::Array(_)) => return (vec!["params-array"], false),
        Some(Value::String(_)) => return (vec!["params-string"], false),
        Some(Value::Null) => return (vec!["params-null"], false),
        Some(_) => return (vec!["params-invalid"], false),
    };
    if matches!(params.get(crate::script::mutation::EXTRA), Some(Value::Bool(_))) {
        tags.push("extra-param");
    }
    let envelope = match params.get(META) {
        None => false,
        Some(Value::Object(meta)) => envelope_tags(meta, &mut tags),
        Some(_) => {
            tags.push("meta-not-object");
            false
        }
    };
    (tags, envelope)
}

/// Adds what is odd about an envelope; true when it is complete and names a modern version.
fn envelope_tags(meta: &Map<String, Value>, tags: &mut Vec<&'static str>) -> bool {
    let version = meta.get(PROTOCOL_VERSION_KEY);
    let capabilities = meta.get(CLIENT_CAPABILITIES_KEY);
    if version.is_none() && capabilities.is_none() {
        // An envelope-less `_meta` (a progress token, say) is not an envelope at all unless it is empty.
        if meta.is_empty() {
            tags.push("missing-both-keys");
        }
        return false;
    }
    let before = tags.len();
    match version {
        None => tags.push("missing-version-key"),
        Some(Value::Number(_)) => tags.push("version-number"),
        Some(Value::Null) => tags.push("version-null"),
        Some(Value::String(v)) if v.is_empty() => tags.push("version-empty"),
        Some(Value::String(v)) if MODERN_VERSIONS.contains(&v.as_str()) => {}
        Some(Value::String(v)) if HANDSHAKE_VERSIONS.contains(&v.as_str()) => tags.push("version-legacy"),
        Some(Value::String(v)) if is_date(v) => tags.push("version-unsupported"),
        Some(Value::String(_)) => tags.push("version-malformed"),
        Some(_) => tags.push("version-invalid"),
    }
    match capabilities {
        None => tags.push("missing-capabilities-key"),
        Some(Value::Object(_)) => {}
        Some(Value::String(_)) => tags.push("capabilities-string"),
        Some(_) => tags.push("capabilities-invalid"),
    }
    tags.len() == before
}

/// True for `YYYY-MM-DD`.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// The byte length of the longest string in `value`.
fn longest_string(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(longest_string).max().unwrap_or(0),
        Value::Object(members) => members.values().map(longest_string).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::Level;
    use crate::script::message::{Call, Envelope, Request};
    use crate::script::{Bounded, IdKind, Mutation, Opening, Script, Step};
    use crate::transcript::{Ending, Input};

    #[test]
    fn a_server_that_wrote_nothing_and_hung_is_silent_whatever_came_first() {
        let hang = |first: &[u8], reply: Option<&[u8]>| {
            let mut events = vec![Event::Sent(first.to_vec())];
            events.extend(reply.map(|line| Event::Received { line: line.to_vec(), truncated: false }));
            let transcript = Transcript { events, ending: Ending::Hung { waited_ms: 1 } };
            let finding = Finding {
                rule: crate::oracle::rules::SERVER_HANG,
                level: Level::Error,
                event: Some(0),
                detail: String::new(),
            };
            signature(&transcript, &finding)
        };
        let initialize = br#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#;
        assert_eq!(hang(initialize, None), "silent");
        assert_eq!(hang(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, None), "silent");
        // It answered something, then stopped: the line is named.
        assert_eq!(hang(initialize, Some(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#)), "initialize");
    }

    /// The trigger of a finding on the last line the script sends.
    fn last_line(script: &Script) -> String {
        let events: Vec<Event> = script
            .encode_on(&crate::surface::Surface::built_in())
            .into_iter()
            .map(|input| match input {
                Input::Line(line) => Event::Sent(line),
                Input::Sync => Event::Sync,
            })
            .collect();
        let finding = Finding { rule: "R", level: Level::Error, event: Some(events.len() - 1), detail: String::new() };
        signature(&Transcript { events, ending: Ending::Closed }, &finding)
    }

    fn mutated(call: Call, envelope: Envelope, mutation: Mutation) -> Script {
        let request = Request { call, id: IdKind::SmallInt, envelope };
        Script { opening: Opening::Nothing, steps: Bounded(vec![Step::Mutated(request, mutation)]) }
    }

    /// The events of `lines`, each sent.
    fn sent_lines(lines: &[&str]) -> Vec<Event> {
        lines.iter().map(|l| Event::Sent(l.as_bytes().to_vec())).collect()
    }

    fn at(events: Vec<Event>, event: usize) -> String {
        let finding = Finding { rule: "R", level: Level::Error, event: Some(event), detail: String::new() };
        signature(&Transcript { events, ending: Ending::Closed }, &finding)
    }

    /// Every mutation the generator applies is named as the mutation is, where the bytes show it.
    #[test]
    fn mutated_lines_are_named_by_their_mutation() {
        let unnamed = |m: Mutation| match m {
            Mutation::DropParams => Some("ping"),
            Mutation::Truncated => Some("not-json"),
            Mutation::TrailingGarbage => Some("trailing-data"),
            // A retype is named by the member its bytes show odd; the representative retypes `jsonrpc`.
            Mutation::Retype(..) => Some("jsonrpc-invalid"),
            _ => None,
        };
        for mutation in Mutation::ALL {
            let ping = last_line(&mutated(Call::Ping, Envelope::Plain, mutation));
            let expected = unnamed(mutation).map(str::to_string).unwrap_or_else(|| {
                let in_params = mutation.name().starts_with("params-")
                    || matches!(
                        mutation,
                        Mutation::ExtraParam | Mutation::MetaNotObject | Mutation::CapabilitiesString
                    )
                    || mutation.name().starts_with("missing-")
                    || mutation.name().starts_with("version-");
                if in_params { format!("ping/{}", mutation.name()) } else { mutation.name().to_string() }
            });
            assert_eq!(ping, expected, "{mutation:?}");
            let modern = last_line(&mutated(Call::ToolsList, Envelope::Modern, mutation));
            assert_eq!(modern, expected.replace("ping", "tools/list"), "{mutation:?} on a modern request");
        }
    }

    #[test]
    fn plain_lines_are_named_by_their_shape() {
        let shape = |line: &str| at(sent_lines(&[line]), 0);
        assert_eq!(shape(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#), "tools/list");
        assert_eq!(shape(r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#), "ping+string-id");
        let modern = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","_meta":
            {"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        assert_eq!(shape(modern), "tools/call+envelope");
        assert_eq!(shape(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), "notifications/initialized");
        assert_eq!(shape(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#), "big-id");
        assert_eq!(shape(r#"{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}"#), "ping");
        assert_eq!(shape(r#"{"jsonrpc":"2.0","id":null,"method":"ping","x":1}"#), "extra-field+null-id");
        assert_eq!(shape(r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#), "float-id");
        assert_eq!(
            shape(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":null}}"#),
            "ping/meta-not-object"
        );
        assert_eq!(shape(r#"[]"#), "empty-batch");
        assert_eq!(shape(r#"{}"#), "empty-object");
        assert_eq!(shape(r#"42"#), "bare-number");
        assert_eq!(shape(r#"{"jsonrpc":"2.0","id":"stray","result":{}}"#), "response");
        assert_eq!(shape("this is not json"), "not-json");
        let giant =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"s":"{}"}}}}"#, "x".repeat(GIANT_STRING));
        assert_eq!(shape(&giant), "giant-string");
        let sent = [r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#];
        assert_eq!(at(sent_lines(&sent), 1), "reused-id");
    }

    #[test]
    fn a_reply_is_named_by_the_request_it_answers() {
        let mut events = sent_lines(&[
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":true}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        ]);
        for reply in [
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":"2","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage"}"#,
            "oops",
        ] {
            events.push(Event::Received { line: reply.as_bytes().to_vec(), truncated: false });
        }
        let names: Vec<String> = (2..8).map(|i| at(events.clone(), i)).collect();
        let expected = [
            "tools/list",
            "extra-field:error-32600",
            "reply:error-32700",
            "reply:result",
            "server-request:sampling/createMessage",
            "reply:not-json",
        ];
        assert_eq!(names, expected);
        assert_eq!(at(events.clone(), 0), "extra-field");
        // A reply under a fractional id's integer part (go-sdk) is named by that line once the line sent with the
        // integer was answered; before, the reply is that line's.
        let (ping_8, ping_8_5) =
            (r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#, r#"{"jsonrpc":"2.0","id":8.5,"method":"ping"}"#);
        let reply = || Event::Received { line: br#"{"jsonrpc":"2.0","id":8,"result":{}}"#.to_vec(), truncated: false };
        let answered: Vec<Event> =
            sent_lines(&[ping_8]).into_iter().chain([reply()]).chain(sent_lines(&[ping_8_5])).collect();
        assert_eq!(at(answered.into_iter().chain([reply()]).collect(), 3), "float-id");
        let open: Vec<Event> = sent_lines(&[ping_8, ping_8_5]).into_iter().chain([reply()]).collect();
        assert_eq!(at(open, 2), "ping");
        // A reply under a big id rounded (TS SDK on zod 3) is named by the big id's line, as its silence is.
        let big = sent_lines(&[r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#]);
        let rounded = Event::Received {
            line: br#"{"jsonrpc":"2.0","id":9007199254740992,"result":{}}"#.to_vec(),
            truncated: false,
        };
        assert_eq!(at(big.iter().cloned().chain([rounded.clone()]).collect(), 1), at(big, 0));
        // So is one whose line a lenient reader alone takes (a lone surrogate escape beside the big id).
        let lenient =
            sent_lines(&[r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","params":{"x":"\ud800"}}"#]);
        assert_eq!(at(lenient.iter().cloned().chain([rounded]).collect(), 1), at(lenient, 0));
        let none = Finding { rule: "R", level: Level::Error, event: None, detail: String::new() };
        assert_eq!(signature(&Transcript { events, ending: Ending::Closed }, &none), "no-line");
    }

    #[test]
    fn file_parts_are_plain() {
        assert_eq!(file_part("ping/meta-not-object"), "ping-meta-not-object");
        assert_eq!(file_part("extra-field:error-32600"), "extra-field-error-32600");
        assert_eq!(file_part("tools/call+envelope+string-id"), "tools-call-envelope-string-id");
        assert_eq!(file_part("jsonrpc-1.0"), "jsonrpc-1-0");
        assert_eq!(file_part("//"), "line");
        assert!(file_part(&"a/".repeat(100)).len() <= 60);
    }
}
