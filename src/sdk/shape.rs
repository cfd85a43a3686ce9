//! The trigger shape of an SDK deviation: what the finding's transcript must show for the finding to be the SDK's
//! own behaviour, not just which rule broke. A shape reads the line at fault ([`Fault`]: the request a finding
//! points at or that its reply answers, and that reply), the trigger and the connection's ending.

use crate::oracle::Finding;
use crate::protocol::envelope::{META, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY};
use crate::protocol::json::parse_value;
use crate::protocol::methods::{DISCOVER, INITIALIZE, PING};
use crate::transcript::{Ending, Event, Transcript};
use serde_json::Value;

/// What a finding must show to be an SDK's deviation (all of [`Shape::All`], any of [`Shape::Any`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The request at fault has one of these methods.
    Method(&'static [&'static str]),
    /// The request at fault has a `params._meta` that is not an object.
    MetaNotObject,
    /// The request at fault has `params` that are neither an object nor null (an array, a string, ...).
    ParamsNotObject,
    /// The request at fault has `"params": null`.
    ParamsNull,
    /// The request at fault is a `tools/call` whose `arguments` are present and not an object.
    ArgumentsNotObject,
    /// The request at fault carries the 2026-07-28 envelope (`_meta` names a protocol version).
    Enveloped,
    /// The trigger carries this tag (one of its parts split at `+`, `/` and `:`).
    Tag(&'static str),
    /// The line at fault is an error reply with no id (or a null one) and this code.
    IdlessError(i64),
    /// The reply at fault is an error with one of these codes.
    ErrorCode(&'static [i64]),
    /// The reply at fault carries a number id beyond ±(2^53 − 1): a big id that came back through a double (a
    /// server writes no such id of its own), whichever line carried it and whatever else was odd about that line.
    BigReplyId,
    /// The reply at fault is an error whose message holds this text (an SDK's own wording).
    ErrorMessage(&'static str),
    /// The reply at fault is a result whose `_meta` has no serverInfo at all (a malformed one is not this).
    NoServerInfo,
    /// The server exited with code 1, not in a panic, before any request but `ping` and `server/discover` got a
    /// result; its stderr is empty (in-process) or holds this text.
    ExitBeforeLifecycle(&'static str),
    /// The server exited with code 0 after a line at least this many bytes long was sent.
    ExitAfterLongLine(usize),
    /// Before the request at fault, `initialize` was sent twice, or after an enveloped request.
    Reinitialized,
    /// Before the request at fault, a notification was sent before any request but `server/discover`.
    NotificationFirst,
    /// Before the request at fault, an enveloped request other than `server/discover` was sent.
    AfterModernRequest,
    /// Every one of these.
    All(&'static [Shape]),
    /// At least one of these.
    Any(&'static [Shape]),
}

/// The line at fault of a finding: the request (sent) and the reply (received) it concerns, as far as each can be
/// read, and where the request was sent.
#[derive(Clone, Debug, Default)]
pub struct Fault {
    /// The request at fault: the sent line the finding points at, or the latest one sent with its reply's id.
    pub request: Option<Value>,
    /// The received line the finding points at.
    pub reply: Option<Value>,
    /// The index of the request's event (the finding's own event when it has no request).
    pub at: usize,
}

impl Fault {
    /// The line at fault of `finding` in `transcript`.
    pub fn of(transcript: &Transcript, finding: &Finding) -> Fault {
        Fault::at_event(transcript, finding.event)
    }

    /// The line at fault when the finding points at event `event`.
    pub fn at_event(transcript: &Transcript, event: Option<usize>) -> Fault {
        let Some(index) = event else { return Fault { at: transcript.events.len(), ..Fault::default() } };
        match transcript.events.get(index) {
            Some(Event::Sent(line)) => Fault { request: parse(line), reply: None, at: index },
            Some(Event::Received { line, .. }) => {
                let reply = parse(line);
                let id = reply.as_ref().and_then(|r| r.get("id")).filter(|id| !id.is_null());
                let request = id.and_then(|id| {
                    transcript.events[..index].iter().enumerate().rev().find_map(|(at, event)| match event {
                        Event::Sent(sent) => parse(sent).filter(|v| v.get("id") == Some(id)).map(|v| (at, v)),
                        _ => None,
                    })
                });
                match request {
                    Some((at, request)) => Fault { request: Some(request), reply, at },
                    None => Fault { request: None, reply, at: index },
                }
            }
            _ => Fault { at: index, ..Fault::default() },
        }
    }

    /// The request's method.
    pub fn method(&self) -> Option<&str> {
        self.request.as_ref()?.get("method")?.as_str()
    }

    /// The tool a `tools/call` at fault names.
    pub fn tool(&self) -> Option<&str> {
        match self.method() {
            Some(crate::protocol::methods::TOOLS_CALL) => self.request.as_ref()?.get("params")?.get("name")?.as_str(),
            _ => None,
        }
    }

    fn params(&self) -> Option<&Value> {
        self.request.as_ref()?.get("params")
    }
}

impl Shape {
    /// True when a finding with `trigger` and the line at fault `fault` in `transcript` has this shape.
    pub fn matches(&self, transcript: &Transcript, trigger: &str, fault: &Fault) -> bool {
        let error_code = || fault.reply.as_ref()?.get("error")?.get("code")?.as_i64();
        match *self {
            Shape::Method(methods) => fault.method().is_some_and(|m| methods.contains(&m)),
            Shape::MetaNotObject => fault.params().and_then(|p| p.get(META)).is_some_and(|m| !m.is_object()),
            Shape::ParamsNotObject => fault.params().is_some_and(|p| !p.is_object() && !p.is_null()),
            Shape::ParamsNull => fault.params().is_some_and(Value::is_null),
            Shape::ArgumentsNotObject => {
                fault.params().and_then(|p| p.get("arguments")).is_some_and(|a| !a.is_object())
            }
            Shape::Enveloped => fault.params().is_some_and(enveloped),
            Shape::Tag(tag) => trigger.split(['+', '/', ':']).any(|part| part == tag),
            Shape::IdlessError(code) => fault
                .reply
                .as_ref()
                .is_some_and(|reply| reply.get("id").is_none_or(Value::is_null) && error_code() == Some(code)),
            Shape::ErrorCode(codes) => error_code().is_some_and(|code| codes.contains(&code)),
            Shape::BigReplyId => {
                const MAX_SAFE: f64 = crate::protocol::id::MAX_SAFE_INTEGER as f64;
                let id = fault.reply.as_ref().and_then(|reply| reply.get("id")?.as_f64());
                id.is_some_and(|id| id.abs() > MAX_SAFE)
            }
            Shape::ErrorMessage(text) => fault
                .reply
                .as_ref()
                .and_then(|reply| reply.get("error")?.get("message")?.as_str())
                .is_some_and(|message| message.contains(text)),
            Shape::NoServerInfo => fault
                .reply
                .as_ref()
                .and_then(|reply| reply.get("result"))
                .is_some_and(|result| result.get(META).and_then(|m| m.get(SERVER_INFO_KEY)).is_none()),
            Shape::ExitBeforeLifecycle(text) => exit_before_lifecycle(transcript, text),
            Shape::ExitAfterLongLine(bytes) => {
                matches!(transcript.ending, Ending::Exited { code: Some(0), .. })
                    && transcript.events.iter().any(|e| matches!(e, Event::Sent(line) if line.len() >= bytes))
            }
            Shape::Reinitialized => {
                let mut enveloped_before = false;
                let mut initializes = 0;
                for request in requests(&transcript.events[..fault.at.min(transcript.events.len())]) {
                    match request.get("method").and_then(Value::as_str) {
                        Some(INITIALIZE) if enveloped_before || initializes > 0 => return true,
                        Some(INITIALIZE) => initializes += 1,
                        Some(DISCOVER) => {}
                        Some(_) => enveloped_before |= request.get("params").is_some_and(enveloped),
                        None => {}
                    }
                }
                false
            }
            Shape::NotificationFirst => {
                for message in messages(&transcript.events[..fault.at.min(transcript.events.len())]) {
                    match (message.get("id"), message.get("method").and_then(Value::as_str)) {
                        (None, Some(_)) => return true,
                        (Some(_), Some(DISCOVER)) => {}
                        (Some(_), Some(_)) => return false,
                        _ => {}
                    }
                }
                false
            }
            Shape::AfterModernRequest => {
                requests(&transcript.events[..fault.at.min(transcript.events.len())]).any(|r| {
                    r.get("method").and_then(Value::as_str) != Some(DISCOVER) && r.get("params").is_some_and(enveloped)
                })
            }
            Shape::All(shapes) => shapes.iter().all(|s| s.matches(transcript, trigger, fault)),
            Shape::Any(shapes) => shapes.iter().any(|s| s.matches(transcript, trigger, fault)),
        }
    }
}

/// A line as JSON, when it is one value.
fn parse(line: &[u8]) -> Option<Value> {
    // As the server reads it: a line with a byte-order mark (or what else a lenient reader accepts) is still the
    // message after it, and rmcp serves it.
    parse_value(line).ok().or_else(|| parse_value(&crate::protocol::json::lenient_text(line)?).ok())
}

/// True when `params._meta` names a protocol version.
fn enveloped(params: &Value) -> bool {
    params.get(META).and_then(|m| m.get(PROTOCOL_VERSION_KEY)).is_some()
}

/// The sent lines that are JSON objects, in order.
fn messages(events: &[Event]) -> impl Iterator<Item = Value> + '_ {
    events.iter().filter_map(|event| match event {
        Event::Sent(line) => parse(line).filter(Value::is_object),
        _ => None,
    })
}

/// The sent requests (objects with an id and a method), in order.
fn requests(events: &[Event]) -> impl Iterator<Item = Value> + '_ {
    messages(events).filter(|m| m.get("id").is_some() && m.get("method").is_some())
}

/// The server exited with code 1, not in a panic, while no request but `ping` and `server/discover` had a result.
fn exit_before_lifecycle(transcript: &Transcript, text: &str) -> bool {
    let Ending::Exited { code: Some(1), stderr_tail, .. } = &transcript.ending else { return false };
    let stderr = String::from_utf8_lossy(stderr_tail);
    if stderr.contains("panicked") || !(stderr.trim().is_empty() || stderr.contains(text)) {
        return false;
    }
    let events = &transcript.events;
    !events.iter().enumerate().any(|(index, event)| {
        let Event::Received { line, .. } = event else { return false };
        let Some(reply) = parse(line).filter(|reply| reply.get("result").is_some()) else { return false };
        // A reused id may name a ping and a later request: the result may be the ping's.
        let id = reply.get("id");
        let ping_or_discover = requests(&events[..index])
            .any(|r| r.get("id") == id && matches!(r.get("method").and_then(Value::as_str), Some(PING | DISCOVER)));
        !ping_or_discover && !matches!(Fault::at_event(transcript, Some(index)).method(), Some(PING | DISCOVER) | None)
    })
}
