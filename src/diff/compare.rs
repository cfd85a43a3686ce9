//! What differs between two servers' answers to the same conversation: a pure function from the inputs and both
//! sides' replies to [`Divergence`]s, each of one [`Class`].
//!
//! Replies are paired with the request they answer by id (the same inputs went to both sides, so the same ids are
//! owed), then by a looser id (`1` and `"1"`, or a big integer rounded through a double) for a side that echoed it
//! changed. Each pair is classed: the same kind (both results, or both errors with the same code) whose values agree
//! once [`Ignore`]d paths are left out, or one divergence. What legitimately varies is left out by default: message
//! texts (`error.message`, `description`, `title`, `instructions`, the text of an `isError` result), server names
//! and versions (any string under a `serverInfo` key), timestamps and UUIDs, and the string ids of created objects
//! (`id`, `*Id`, `*_id` inside a result).

use crate::protocol::codes::{MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION};
use crate::protocol::id::is_integer_literal;
use crate::protocol::id::is_safe_integer;
use crate::protocol::json::{lenient_text, parse_value};
use crate::protocol::methods::{CANCELLED, DISCOVER, HANDSHAKE_REQUESTS, INITIALIZE, MODERN_REQUESTS, TOOLS_CALL};
use crate::transcript::{Ending, Input, show_bytes};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;

/// The most differences recorded for one reply pair (the first ones, in document order).
const MAX_PER_PAIR: usize = 16;
/// How a reply without an `id` member is filed.
const NO_ID: &str = "(none)";
/// How much of a reply a divergence keeps to show.
const SHOWN: usize = 600;

/// What kind of difference: the stable ids reports, case files and baselines use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// One side answered with a result, the other with an error.
    ResultVsError,
    /// Both answered with an error, with different codes.
    ErrorCode,
    /// Both answered with an error of the same code whose `data` differs (or, when texts are compared, its
    /// `message`).
    ErrorData,
    /// One side answered a request, the other said nothing.
    AnswerVsSilence,
    /// The connection ended differently: one side crashed (exited) or hung, the other did not.
    Ending,
    /// Both answered with results whose content differs (a member, a type, a value, a list's length).
    Result,
    /// Both answered with results whose `resultType` differs.
    ResultType,
    /// The answers to an era-selecting request (`initialize`, `server/discover`) differ, or one side answered
    /// -32022 (unsupported protocol version): the two serve different eras or versions.
    Era,
    /// The reply's id came back changed on one side (another type, a rounded number, or null).
    Id,
    /// The reply's envelope differs (`jsonrpc`, or a member beside `id` and `result` or `error`).
    Envelope,
    /// One side sent a reply to no request (to a notification, twice, or to a line it could not parse) that the
    /// other did not.
    ExtraReply,
    /// One side wrote other output the other did not: a line that is not JSON, or a notification or request of
    /// its own.
    ExtraOutput,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 12] = [
        Class::Ending,
        Class::AnswerVsSilence,
        Class::ResultVsError,
        Class::ErrorCode,
        Class::ErrorData,
        Class::Era,
        Class::Id,
        Class::Envelope,
        Class::ResultType,
        Class::Result,
        Class::ExtraReply,
        Class::ExtraOutput,
    ];

    /// The class's stable id (`result-vs-error`, ...).
    pub fn id(self) -> &'static str {
        match self {
            Class::ResultVsError => "result-vs-error",
            Class::ErrorCode => "error-code",
            Class::ErrorData => "error-data",
            Class::AnswerVsSilence => "answer-vs-silence",
            Class::Ending => "ending",
            Class::Result => "result",
            Class::ResultType => "result-type",
            Class::Era => "era",
            Class::Id => "id",
            Class::Envelope => "envelope",
            Class::ExtraReply => "extra-reply",
            Class::ExtraOutput => "extra-output",
        }
    }

    /// The class with this id.
    pub fn from_id(id: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|class| class.id() == id)
    }

    /// One line saying what the class means.
    pub fn meaning(self) -> &'static str {
        match self {
            Class::ResultVsError => "one side answered with a result, the other with an error",
            Class::ErrorCode => "both answered with an error, with different codes",
            Class::ErrorData => {
                "both answered with an error of the same code whose data (with --compare-texts, or message) differs"
            }
            Class::AnswerVsSilence => "one side answered a request, the other said nothing",
            Class::Ending => "the connection ended differently (one side crashed or hung)",
            Class::Result => "both answered with results whose content differs",
            Class::ResultType => "both answered with results whose resultType differs",
            Class::Era => "the answers to initialize or server/discover differ, or one side refused the version",
            Class::Id => "one side echoed the request's id changed",
            Class::Envelope => "the reply envelopes differ (jsonrpc, or extra members)",
            Class::ExtraReply => "one side sent a reply to no request that the other did not",
            Class::ExtraOutput => "one side wrote a line that is not JSON, or a message of its own, the other did not",
        }
    }
}

/// The book's table of classes (docs/src/reference/divergences.md): id and meaning, in report order.
pub fn render_classes() -> String {
    let mut out = String::from("| Class | Meaning |\n|---|---|\n");
    for class in Class::ALL {
        out.push_str(&format!("| `{}` | {} |\n", class.id(), class.meaning()));
    }
    out
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// One difference between the two sides' answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// What kind of difference.
    pub class: Class,
    /// The request's method (with the tool's name for `tools/call`), or `-` for output that answers no request.
    pub method: String,
    /// Where in the reply (`result.tools[].name`, `error.code`, ...), or what (`closed vs exited`); list indices
    /// are written `[]`, so the same place in another item is the same divergence.
    pub at: String,
    /// What side A answered there (an excerpt of its reply, or its ending).
    pub a: String,
    /// What side B answered there.
    pub b: String,
}

impl Divergence {
    /// The divergence's identity across conversations: class, method and place (`result tools/list result.x`).
    pub fn key(&self) -> String {
        format!("{} {} {}", self.class, self.method, self.at)
    }
}

/// Paths left out of the comparison: glob patterns over the paths [`Divergence::at`] shows (`*` matches within
/// one `.`-separated step, `**` across steps), and, unless turned off, message texts. Server names and versions,
/// timestamps, UUIDs and the ids of created objects are always left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignore {
    /// The patterns given (`--ignore`).
    pub patterns: Vec<String>,
    /// True when message texts are left out (`error.message`, `description`, `title`, `instructions`, the text of
    /// an `isError` result); false with `--compare-texts`.
    pub texts: bool,
}

impl Default for Ignore {
    fn default() -> Ignore {
        Ignore { patterns: Vec::new(), texts: true }
    }
}

impl Ignore {
    /// Message texts and `patterns` left out.
    pub fn with(patterns: Vec<String>) -> Ignore {
        Ignore { patterns, texts: true }
    }

    fn ignores(&self, path: &str) -> bool {
        self.patterns.iter().any(|pattern| glob(pattern.as_bytes(), path.as_bytes()))
    }
}

/// True when `pattern` matches all of `text`: `**` matches anything, `*` anything but `.`, every other byte
/// itself.
pub(crate) fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match pattern {
        [] => text.is_empty(),
        [b'*', b'*', rest @ ..] => (0..=text.len()).any(|skip| glob(rest, &text[skip..])),
        [b'*', rest @ ..] => {
            let step = text.iter().position(|&c| c == b'.').unwrap_or(text.len());
            (0..=step).any(|skip| glob(rest, &text[skip..]))
        }
        [c, rest @ ..] => text.first() == Some(c) && glob(rest, &text[1..]),
    }
}

/// One side of a conversation: the lines the server wrote and how its connection ended.
#[derive(Clone, Copy, Debug)]
pub struct Side<'a> {
    /// The server's lines, in order.
    pub received: &'a [Vec<u8>],
    /// How its connection ended.
    pub ending: &'a Ending,
}

/// A request the client sent: its id (as JSON text), a looser form of it, its method, and whether the client
/// cancelled it afterwards (`notifications/cancelled`: then an answer and silence are both allowed).
struct Sent {
    id: String,
    loose: String,
    method: String,
    cancelled: bool,
}

/// A side's output, sorted: replies by id, messages of its own by method, lines that are not JSON.
#[derive(Default)]
struct Output {
    replies: HashMap<String, VecDeque<(usize, Value)>>,
    messages: BTreeMap<String, usize>,
    not_json: Vec<String>,
    lines: Vec<String>,
}

impl Output {
    fn of(received: &[Vec<u8>]) -> Output {
        let mut output = Output::default();
        for (index, line) in received.iter().enumerate() {
            output.lines.push(show_bytes(line, SHOWN));
            let Some(value) = parse_lenient(line) else {
                output.not_json.push(show_bytes(line, SHOWN));
                continue;
            };
            let items = match value {
                Value::Array(items) => items,
                value => vec![value],
            };
            for item in items {
                match item.get("method").and_then(Value::as_str) {
                    Some(method) => *output.messages.entry(method.to_string()).or_default() += 1,
                    None => {
                        let id = item.get("id").map_or_else(|| NO_ID.to_string(), Value::to_string);
                        output.replies.entry(id).or_default().push_back((index, item));
                    }
                }
            }
        }
        output
    }

    /// Takes the first reply with exactly this id.
    fn take(&mut self, id: &str) -> Option<(usize, Value)> {
        let queue = self.replies.get_mut(id)?;
        let reply = queue.pop_front();
        if queue.is_empty() {
            self.replies.remove(id);
        }
        reply
    }

    /// How many errors whose id is lost (null, or no `id` member) carry `code` (any code for `None`).
    fn lost(&self, code: Option<&Value>) -> usize {
        let queues = ["null", NO_ID].into_iter().filter_map(|id| self.replies.get(id));
        queues.flatten().filter(|(_, reply)| lost_with(reply, code)).count()
    }

    /// Takes the first error whose id is lost and that carries `code` (any code for `None`).
    fn take_lost(&mut self, code: Option<&Value>) -> Option<(usize, Value)> {
        for id in ["null", NO_ID] {
            let Some(queue) = self.replies.get_mut(id) else { continue };
            let Some(at) = queue.iter().position(|(_, reply)| lost_with(reply, code)) else { continue };
            let reply = queue.remove(at);
            if queue.is_empty() {
                self.replies.remove(id);
            }
            return reply;
        }
        None
    }

    /// Takes the first reply (by arrival) whose id is `loose` in the looser form.
    fn take_loose(&mut self, loose: &str) -> Option<(usize, Value)> {
        let id = self
            .replies
            .iter()
            .filter(|(id, _)| loose_id_text(id) == loose)
            .min_by_key(|(_, queue)| queue.front().map_or(usize::MAX, |(index, _)| *index))
            .map(|(id, _)| id.clone())?;
        self.take(&id)
    }

    /// The replies no request took, in arrival order.
    fn left_over(self) -> Vec<(usize, Value)> {
        let mut left: Vec<(usize, Value)> = self.replies.into_values().flatten().collect();
        left.sort_by_key(|(index, _)| *index);
        left
    }
}

/// A line read as one JSON value, strictly or as a lenient reader would (a byte-order mark ignored, bytes that are
/// not UTF-8 read as U+FFFD): a server may take either reading, so requests and replies are read alike.
fn parse_lenient(line: &[u8]) -> Option<Value> {
    parse_value(line).ok().or_else(|| lenient_text(line).and_then(|text| parse_value(&text).ok()))
}

/// What is odd about an id, as a place names it: ` (a number with a fraction or exponent)` (`6.0`, `2e+3`: not an
/// integer literal, which MCP asks for), ` (an integer beyond 2^53)`, ` (neither string nor number)`, or nothing for
/// a plain string or integer. A server that drops such ids drops them whatever the method, and a baseline entry
/// (`answer-vs-silence * reply (a number*`) accepts that one cause.
fn id_kind(id_json: &str) -> &'static str {
    match serde_json::from_str::<Value>(id_json) {
        Ok(Value::String(_)) => "",
        Ok(Value::Number(_)) if !is_integer_literal(id_json) => " (a number with a fraction or exponent)",
        Ok(Value::Number(_)) if !is_safe_integer(id_json) => " (an integer beyond 2^53)",
        Ok(Value::Number(_)) => "",
        _ => " (neither string nor number)",
    }
}

/// True for an error that carries `code` (any error for `None`).
fn lost_with(reply: &Value, code: Option<&Value>) -> bool {
    match (reply.pointer("/error/code"), code) {
        (Some(found), Some(code)) => found == code,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// An id's looser form: a string's contents, a number as a double would keep it.
fn loose_id_text(id_json: &str) -> String {
    match serde_json::from_str::<Value>(id_json) {
        Ok(Value::String(text)) => loose_number(&text).unwrap_or(text),
        Ok(Value::Number(number)) => loose_number(&number.to_string()).unwrap_or_else(|| number.to_string()),
        _ => id_json.to_string(),
    }
}

fn loose_number(text: &str) -> Option<String> {
    text.parse::<f64>().ok().filter(|n| n.is_finite()).map(|n| format!("{n:e}"))
}

/// The requests `inputs` send, in order (a batch's in its order).
fn requests(inputs: &[Input]) -> Vec<Sent> {
    let (mut sent, mut cancelled) = (Vec::new(), Vec::new());
    for input in inputs {
        let Input::Line(line) = input else { continue };
        let Some(value) = parse_lenient(line) else { continue };
        let items = match value {
            Value::Array(items) => items,
            value => vec![value],
        };
        for item in items {
            if item.get("method").and_then(Value::as_str) == Some(CANCELLED)
                && let Some(id) = item.pointer("/params/requestId")
            {
                cancelled.push(id.to_string());
            }
            // A null id makes no request to pair by (its replies carry the null every id-less error does).
            let (Some(id), Some(method)) = (item.get("id"), item.get("method").and_then(Value::as_str)) else {
                continue;
            };
            if id.is_null() {
                continue;
            }
            let method = method_label(method, item.pointer("/params/name").and_then(Value::as_str));
            let id = id.to_string();
            sent.push(Sent { loose: loose_id_text(&id), id, method, cancelled: false });
        }
    }
    for request in sent.iter_mut() {
        request.cancelled = cancelled.contains(&request.id);
    }
    sent
}

/// How a divergence names a request's method: the method when MCP defines it (`tools/call` with the tool's name,
/// when that is a plain name), else `(other method)`, so that generated method names do not each make a divergence
/// of their own.
fn method_label(method: &str, tool: Option<&str>) -> String {
    let known = HANDSHAKE_REQUESTS.contains(&method) || MODERN_REQUESTS.contains(&method);
    let plain = |name: &str| {
        (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
    };
    match (known, method, tool) {
        (false, ..) => "(other method)".to_string(),
        (true, TOOLS_CALL, Some(tool)) if plain(tool) => format!("{TOOLS_CALL} {tool}"),
        (true, TOOLS_CALL, Some(_)) => format!("{TOOLS_CALL} (odd name)"),
        (true, method, _) => method.to_string(),
    }
}

/// Every divergence between side `a` and side `b`, which both got `inputs`: none when they agree. A side whose
/// transcript was cut short ([`Ending::Cut`]) is not compared at all (what came after the cut is unknown).
pub fn compare(inputs: &[Input], a: Side<'_>, b: Side<'_>, ignore: &Ignore) -> Vec<Divergence> {
    if matches!(a.ending, Ending::Cut { .. }) || matches!(b.ending, Ending::Cut { .. }) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let (mut left, mut right) = (Output::of(a.received), Output::of(b.received));
    let sent = requests(inputs);
    let mut pairs = Vec::new();
    for request in &sent {
        pairs.push((left.take(&request.id), right.take(&request.id)));
    }
    for (request, (ra, rb)) in sent.iter().zip(pairs.iter_mut()) {
        if ra.is_none() {
            *ra = left.take_loose(&request.loose);
        }
        if rb.is_none() {
            *rb = right.take_loose(&request.loose);
        }
    }
    // A request one side answered with an error and the other did not under any like id: an error with the same
    // code and a null id or none (the id lost) answers it, when that side has more of them than the other (a like
    // id-less error on both sides answers no request on either); not for a cancelled request (which may go
    // unanswered).
    for (request, (ra, rb)) in sent.iter().zip(pairs.iter_mut()) {
        if request.cancelled {
            continue;
        }
        // An id that is odd (a fraction, beyond 2^53) is one a server may be unable to hold: any error it lost.
        let odd = !id_kind(&request.id).is_empty();
        fn wanted(other: &Value, odd: bool) -> Option<Option<&Value>> {
            if odd { Some(None) } else { other.pointer("/error/code").map(Some) }
        }
        match (&ra, &rb) {
            (None, Some((_, other))) => {
                if let Some(code) = wanted(other, odd).filter(|code| left.lost(*code) > right.lost(*code)) {
                    *ra = left.take_lost(code);
                }
            }
            (Some((_, other)), None) => {
                if let Some(code) = wanted(other, odd).filter(|code| right.lost(*code) > left.lost(*code)) {
                    *rb = right.take_lost(code);
                }
            }
            _ => {}
        }
    }
    let ended = |ending: &Ending| !matches!(ending, Ending::Closed);
    let mut first_unanswered = None;
    for (request, pair) in sent.iter().zip(pairs) {
        let a_silent = pair.0.is_none();
        match pair {
            (None, None) => {}
            (Some((_, reply)), None) | (None, Some((_, reply))) => {
                let silent_ended = if a_silent { ended(a.ending) } else { ended(b.ending) };
                first_unanswered.get_or_insert_with(|| request.method.clone());
                if !silent_ended && !request.cancelled {
                    let (sa, sb) = sides(!a_silent, show_value(&reply), "(no reply)".into());
                    let at = format!("reply{}", id_kind(&request.id));
                    out.push(divergence(Class::AnswerVsSilence, &request.method, &at, sa, sb));
                }
            }
            (Some((_, ra)), Some((_, rb))) => {
                replies(&request.method, id_kind(&request.id), &ra, &rb, ignore, &mut out)
            }
        }
    }
    let kind = |ending: &Ending| match ending {
        Ending::Closed => "closed".to_string(),
        Ending::Exited { code, signal, .. } => match (code, signal) {
            (_, Some(signal)) => format!("exited (signal {signal})"),
            (Some(code), None) => format!("exited (code {code})"),
            (None, None) => "exited".to_string(),
        },
        Ending::Hung { .. } => "hung".to_string(),
        Ending::Cut { .. } => "cut".to_string(),
    };
    let same_ending = std::mem::discriminant(a.ending) == std::mem::discriminant(b.ending);
    if !same_ending {
        // Keyed by the endings alone: which request came next when a side ended is not the cause.
        let at = format!("{} vs {}", ending_word(a.ending), ending_word(b.ending));
        let after = |ending: &Ending| match (&first_unanswered, ended(ending)) {
            (Some(method), true) => format!(", {method} left unanswered"),
            _ => String::new(),
        };
        let (sa, sb) =
            (format!("{}{}", kind(a.ending), after(a.ending)), format!("{}{}", kind(b.ending), after(b.ending)));
        out.push(divergence(Class::Ending, "-", &at, sa, sb));
    }
    let (left_messages, right_messages) = (std::mem::take(&mut left.messages), std::mem::take(&mut right.messages));
    let (left_text, right_text) = (std::mem::take(&mut left.not_json), std::mem::take(&mut right.not_json));
    // Left-over replies answer no request: paired by id and error code first (a server may answer out of order),
    // then in order; the rest are extra on one side, told by kind, not by id (which one is left over first may
    // depend on timing).
    let (mut rest_a, mut rest_b) = (left.left_over(), right.left_over());
    let signature = |reply: &Value| (reply.get("id").cloned(), reply.pointer("/error/code").cloned());
    let mut matched = Vec::new();
    rest_a.retain(|(_, ra)| match rest_b.iter().position(|(_, rb)| signature(rb) == signature(ra)) {
        Some(at) => {
            matched.push((ra.clone(), rest_b.remove(at).1));
            false
        }
        None => true,
    });
    let in_order: Vec<(Value, Value)> =
        rest_a.iter().zip(&rest_b).map(|((_, a), (_, b))| (a.clone(), b.clone())).collect();
    for (ra, rb) in matched.iter().chain(&in_order) {
        replies("-", "", ra, rb, ignore, &mut out);
    }
    let paired = rest_a.len().min(rest_b.len());
    let mut kinds = Vec::new();
    for (on_a, extra) in rest_a[paired..].iter().map(|r| (true, r)).chain(rest_b[paired..].iter().map(|r| (false, r))) {
        let (_, reply) = extra;
        let at = match reply.get("id") {
            None => "reply with no id",
            Some(Value::Null) => "reply with id null",
            Some(id) if sent.iter().any(|request| request.id == *id.to_string()) => "second reply to a request",
            Some(_) => "reply with an id no request has",
        };
        if !kinds.contains(&at) {
            kinds.push(at);
            let (sa, sb) = sides(on_a, show_value(reply), "(none)".into());
            out.push(divergence(Class::ExtraReply, "-", at, sa, sb));
        }
    }
    for method in left_messages.keys().chain(right_messages.keys()) {
        let (na, nb) =
            (left_messages.get(method).copied().unwrap_or(0), right_messages.get(method).copied().unwrap_or(0));
        if na != nb && !out.iter().any(|d| d.class == Class::ExtraOutput && d.at == *method) {
            out.push(divergence(Class::ExtraOutput, "-", method, format!("{na} sent"), format!("{nb} sent")));
        }
    }
    if left_text.len() != right_text.len() {
        let on_a = left_text.len() > right_text.len();
        let more = if on_a { &left_text } else { &right_text };
        let line = more[left_text.len().min(right_text.len())].clone();
        let (sa, sb) = sides(on_a, line, "(none)".into());
        out.push(divergence(Class::ExtraOutput, "-", "a line that is not JSON", sa, sb));
    }
    out
}

fn ending_word(ending: &Ending) -> &'static str {
    match ending {
        Ending::Closed => "closed",
        Ending::Exited { .. } => "exited",
        Ending::Hung { .. } => "hung",
        Ending::Cut { .. } => "cut",
    }
}

fn sides(on_a: bool, shown: String, other: String) -> (String, String) {
    if on_a { (shown, other) } else { (other, shown) }
}

fn divergence(class: Class, method: &str, at: &str, a: String, b: String) -> Divergence {
    Divergence { class, method: method.to_string(), at: at.to_string(), a, b }
}

fn show_value(value: &Value) -> String {
    show_bytes(value.to_string().as_bytes(), SHOWN)
}

/// Compares two replies to the same request (a side that echoed the id changed has another id than the other's;
/// `odd_id` says what is odd about the request's id, [`id_kind`]).
fn replies(method: &str, odd_id: &str, a: &Value, b: &Value, ignore: &Ignore, out: &mut Vec<Divergence>) {
    let show = |class: Class, at: &str| divergence(class, method, at, show_value(a), show_value(b));
    // A changed id or envelope says all there is: what follows in the reply is the same answer.
    if a.get("id") != b.get("id") {
        return out.push(show(Class::Id, &format!("id{odd_id}")));
    }
    if a.get("jsonrpc") != b.get("jsonrpc") {
        return out.push(show(Class::Envelope, "jsonrpc"));
    }
    let code = |reply: &Value| reply.pointer("/error/code").cloned();
    let refused = |reply: &Value| code(reply).and_then(|c| c.as_i64()) == Some(UNSUPPORTED_PROTOCOL_VERSION);
    let era = method == INITIALIZE || method == DISCOVER || refused(a) != refused(b);
    let push = |out: &mut Vec<Divergence>, class: Class, at: &str| {
        out.push(show(if era { Class::Era } else { class }, at));
    };
    let members = |reply: &Value| -> Vec<String> {
        let mut keys: Vec<String> = reply.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
        keys.sort();
        keys
    };
    let (is_error_a, is_error_b) = (a.get("error").is_some(), b.get("error").is_some());
    let (is_result_a, is_result_b) = (a.get("result").is_some(), b.get("result").is_some());
    if is_error_a != is_error_b && is_result_a != is_result_b {
        push(out, Class::ResultVsError, "result vs error");
        return;
    }
    if members(a) != members(b) {
        push(out, Class::Envelope, &format!("members {} vs {}", members(a).join(","), members(b).join(",")));
        return;
    }
    if is_error_a {
        if code(a) != code(b) {
            push(out, Class::ErrorCode, "error.code");
            return;
        }
        // `data` is the server's to define (JSON-RPC 2.0 §5.1) but where MCP gives it a shape: -32022 and -32021.
        let shaped = matches!(
            code(a).and_then(|c| c.as_i64()),
            Some(UNSUPPORTED_PROTOCOL_VERSION | MISSING_REQUIRED_CLIENT_CAPABILITY)
        );
        let without_data = |reply: &Value| {
            let mut error = reply.get("error").cloned().unwrap_or(Value::Null);
            if ignore.texts
                && !shaped
                && let Some(error) = error.as_object_mut()
            {
                error.remove("data");
            }
            error
        };
        let mut found = Vec::new();
        differences(Some(&without_data(a)), Some(&without_data(b)), "error", ignore, false, &mut found);
        for at in found {
            push(out, Class::ErrorData, &at);
        }
        return;
    }
    let is_error_result = |reply: &Value| reply.pointer("/result/isError") == Some(&Value::Bool(true));
    let texts_free = is_error_result(a) && is_error_result(b);
    let mut found = Vec::new();
    differences(a.get("result"), b.get("result"), "result", ignore, texts_free, &mut found);
    for at in found {
        let class = if at == "result.resultType" { Class::ResultType } else { Class::Result };
        push(out, class, &at);
    }
}

/// Appends to `out` the paths where `a` and `b` differ (at most [`MAX_PER_PAIR`]), leaving out what `ignore` does;
/// `texts_free`: the text of content items is not compared (both replies are `isError` results).
fn differences(
    a: Option<&Value>,
    b: Option<&Value>,
    path: &str,
    ignore: &Ignore,
    texts_free: bool,
    out: &mut Vec<String>,
) {
    if out.len() >= MAX_PER_PAIR || ignore.ignores(path) {
        return;
    }
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (None, None) => return,
        _ => return out.push(path.to_string()),
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in keys(x, y) {
                if absent_alike(key, x.get(key).or(y.get(key)), ignore)
                    && (x.get(key).is_none() || y.get(key).is_none())
                {
                    continue;
                }
                let step = if is_plain_key(key) { format!("{path}.{key}") } else { format!("{path}[{key:?}]") };
                differences(x.get(key), y.get(key), &step, ignore, texts_free, out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() != y.len() => {
            let length = format!("{path}.length");
            if !ignore.ignores(&length) {
                out.push(length);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            let step = format!("{path}[]");
            for (x, y) in x.iter().zip(y) {
                differences(Some(x), Some(y), &step, ignore, texts_free, out);
            }
        }
        (Value::String(x), Value::String(y))
            if x != y && !varies(path, x, y, ignore.texts && texts_free, ignore.texts) =>
        {
            out.push(path.to_string())
        }
        (Value::String(_), Value::String(_)) => {}
        (x, y) if x != y => out.push(path.to_string()),
        _ => {}
    }
}

fn keys<'a>(x: &'a Map<String, Value>, y: &'a Map<String, Value>) -> Vec<&'a String> {
    let mut keys: Vec<&String> = x.keys().collect();
    keys.extend(y.keys().filter(|key| !x.contains_key(*key)));
    keys
}

/// True when a member present on one side only means what its absence means: a text (when texts are left out),
/// or the value the spec gives as the default when absent (`isError: false`, `taskSupport: "forbidden"`,
/// `listChanged: false`, `subscribe: false`), or an object of nothing but such members.
fn absent_alike(key: &str, present: Option<&Value>, ignore: &Ignore) -> bool {
    let text = ignore.texts && matches!(key, "description" | "title" | "instructions");
    let default = match (key, present) {
        ("isError" | "listChanged" | "subscribe", Some(Value::Bool(false))) => true,
        ("taskSupport", Some(Value::String(value))) => value == "forbidden",
        // An object of nothing but such members (`execution: {"taskSupport": "forbidden"}`); not an empty one, which
        // may say something by being there (a capability).
        (_, Some(Value::Object(members))) => {
            !members.is_empty() && members.iter().all(|(key, value)| absent_alike(key, Some(value), ignore))
        }
        _ => false,
    };
    text || default
}

fn is_plain_key(key: &str) -> bool {
    !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$')
}

/// True when two different strings at `path` are values that legitimately vary between servers (`texts`: message
/// texts among them).
fn varies(path: &str, x: &str, y: &str, texts_free: bool, texts: bool) -> bool {
    let last = path.rsplit(['.', '[']).next().unwrap_or(path).trim_end_matches(']');
    let text_key = texts && matches!(last, "message" | "description" | "title" | "instructions");
    let created_id = path.starts_with("result.")
        && (last == "id" || last.ends_with("Id") || last.ends_with("_id") || last == "\"id\"");
    text_key
        || created_id
        || path.contains("serverInfo")
        || (texts_free && path.starts_with("result.content[]") && last == "text")
        || (timestamp(x) && timestamp(y))
        || (uuid(x) && uuid(y))
}

/// `2026-12-05T10:00:00...`: an RFC 3339 date-time.
fn timestamp(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 19
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
}

/// `8-4-4-4-12` hexadecimal digits.
fn uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups.iter().all(|g| g.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests;
