//! The HTTP rules: judged on the [`Event::Http`] exchanges of a transcript taken over Streamable HTTP, with the
//! line each POST carried (the [`Event::Sent`] just before it) and the lines its response brought (the
//! [`Event::Received`] after it). The JSON-RPC and MCP layers judge those lines as they judge stdio; here only
//! what HTTP adds: statuses, media types, routing headers, sessions and origins.

use super::rules::{
    BATCH, BIG_ID, DUPLICATE_RESPONSE, EXTRA_MEMBER, HTTP_CONTENT_TYPE, HTTP_ERROR_STATUS, HTTP_GET,
    HTTP_GET_STREAM_RESPONSE, HTTP_HEADER_MISMATCH, HTTP_MODERN_GET_DELETE_405, HTTP_MODERN_NO_SESSION,
    HTTP_NOTIFICATION_202, HTTP_ORIGIN, HTTP_PROTOCOL_VERSION_HEADER, HTTP_RESPONSE, HTTP_SESSION_DELETED,
    HTTP_SESSION_REQUIRED, HTTP_SSE_BROADCAST, HTTP_SSE_EVENT_ID, ID_ECHO, MALFORMED_SERVED, NOTIFICATION_REPLY,
    NULL_ID, RESPONSE_MISSING,
};
use super::{Finding, Level, Policy, rules};
use crate::model::Eras;
use crate::protocol::codes::{
    HEADER_MISMATCH, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::protocol::envelope::{self, PROTOCOL_VERSION_KEY};
use crate::protocol::era::{BATCH_VERSION, HANDSHAKE_VERSIONS, MODERN_VERSIONS};
use crate::protocol::http::{decode_header_value, foreign_origin, mirrored_name, param_headers, param_values};
use crate::protocol::methods::{INITIALIZE, TOOLS_CALL};
use crate::protocol::{Era, Frame};
use crate::surface::Surface;
use crate::transcript::{Ending, Event, Exchange, Transcript};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Refusals for reasons a rule about something else accepts: a foreign origin (403), an `Accept` without both
/// media types (406), a body too large (413), a body that is not `application/json` (415), headers too large (431).
const OTHER_REFUSALS: [u16; 5] = [403, 406, 413, 415, 431];

/// True when the transcript was taken over HTTP.
pub fn applies(transcript: &Transcript) -> bool {
    transcript.events.iter().any(|e| matches!(e, Event::Http(_)))
}

/// One exchange in context.
struct Seen<'a> {
    index: usize,
    exchange: &'a Exchange,
    frame: Option<Frame>,
    /// The indices and parsed values of the response's lines.
    replies: Vec<(usize, Option<Value>)>,
}

impl Seen<'_> {
    fn success(&self) -> bool {
        (200..300).contains(&self.exchange.status)
    }

    fn message(&self) -> Option<(&str, Option<&Value>)> {
        match self.frame.as_ref()? {
            Frame::Request(r) => Some((&r.method, r.params.as_ref())),
            Frame::Notification(n) => Some((&n.method, n.params.as_ref())),
            _ => None,
        }
    }

    /// The era of the exchange: the body's own when it is a message, else the protocol-version header's.
    fn era(&self) -> Era {
        match self.message() {
            Some((method, params)) => envelope::opening_era(method, params),
            None if self
                .exchange
                .request_values("mcp-protocol-version")
                .iter()
                .any(|v| MODERN_VERSIONS.contains(v)) =>
            {
                Era::Modern
            }
            None => Era::Handshake,
        }
    }

    /// The first error response among the replies: its event and code.
    fn error_code(&self) -> Option<(usize, i64)> {
        self.replies.iter().find_map(|(index, value)| {
            let value = value.as_ref()?;
            if value.get("method").is_some() {
                return None;
            }
            Some((*index, value.get("error")?.get("code")?.as_i64()?))
        })
    }
}

/// Appends the HTTP findings of `transcript` and drops the JSON-RPC layer's missing-response findings for requests
/// the server refused at the HTTP level (an error status is the answer there).
pub fn check(transcript: &Transcript, policy: &Policy, findings: &mut Vec<Finding>) {
    let seen = exchanges(transcript);
    // A message refused at the HTTP level (an error status) was answered there: the JSON-RPC rules that ask for a
    // JSON-RPC answer, or forbid one to a notification (the refusal MAY carry an id-less error), do not apply to
    // its lines; and one refused with no body or with -32020 was never read as MCP, so the MCP rules do not judge
    // it either.
    let mut refused: HashMap<usize, bool> = HashMap::new();
    // A request too large that lost its connection was refused too: a server may close the connection on one while
    // it is still being sent, and its 413 or 431 is then lost with it (RFC 9110 §15.5.14).
    let lost_as_too_large = |s: &&Seen| s.exchange.status == 0 && s.exchange.problem.is_some() && oversized(s.exchange);
    for s in seen.iter().filter(|s| s.exchange.status >= 400 || s.exchange.body_cut || lost_as_too_large(s)) {
        // A version header naming no version must be refused with 400 whatever the body (legacy rule), so the
        // body was not judged as MCP either.
        let unread = s.replies.is_empty()
            || s.error_code().is_some_and(|(_, code)| code == HEADER_MISMATCH)
            || names_no_version(s.exchange);
        let sent = s.frame.as_ref().and(s.index.checked_sub(1));
        for event in sent.into_iter().chain(s.replies.iter().map(|(event, _)| *event)) {
            refused.insert(event, unread);
        }
    }
    // Over HTTP each response belongs to its POST: replies to the requests of a batch body (which servers may keep
    // serving on any version) and replies to a body nested past the oracle's parser limit (RFC 8259 §9 lets a
    // server parse deeper) are that body's answers, not strays or answers to malformed input.
    let mut own: HashSet<usize> = HashSet::new();
    // Batch replies whose id an earlier request used too: the MCP layer, matching by id, may judge them as that
    // request's answer.
    let mut misread: HashSet<usize> = HashSet::new();
    let mut earlier: Vec<Value> = Vec::new();
    for s in &seen {
        let deep = matches!(&s.frame, Some(Frame::NotJson { error, .. }) if error.contains("recursion limit"));
        let ids: Vec<Value> = match &s.frame {
            Some(Frame::Batch(items)) => items.iter().filter_map(|item| item.get("id").cloned()).collect(),
            _ => Vec::new(),
        };
        for (event, reply) in &s.replies {
            let id = reply.as_ref().and_then(|r| r.get("id"));
            if deep || id.is_some_and(|id| ids.iter().any(|sent| same_id(sent, id))) {
                own.insert(*event);
            }
            if !ids.is_empty() && id.is_some_and(|id| earlier.iter().any(|sent| same_id(sent, id))) {
                misread.insert(*event);
            }
        }
        if let (Some(Frame::Request(_)), Some(Event::Sent(line))) =
            (&s.frame, s.index.checked_sub(1).and_then(|i| transcript.events.get(i)))
        {
            earlier.extend(serde_json::from_slice::<Value>(line).ok().and_then(|v| v.get("id").cloned()));
        }
    }
    findings.retain(|f| !(f.rule.starts_with("MCP-") && f.event.is_some_and(|e| misread.contains(&e))));
    // The batch rule follows one connection; over HTTP a batch belongs to the session it carried. It is judged
    // here on its own exchange: a batch answered with a 2xx array was accepted, and a batch on a session that did
    // not negotiate 2025-03-26 (another initialize opened another session) owes nothing.
    let mut negotiated: HashMap<&str, Option<String>> = HashMap::new();
    let mut not_owed: HashSet<usize> = HashSet::new();
    for s in &seen {
        let session = s.exchange.response_header("mcp-session-id");
        if let (Some(Frame::Request(r)), Some(id)) = (&s.frame, session)
            && r.method == INITIALIZE
        {
            let version = s
                .replies
                .iter()
                .find_map(|(_, v)| Some(v.as_ref()?.get("result")?.get("protocolVersion")?.as_str()?.to_string()));
            negotiated.entry(id).or_insert(version);
        }
        if let Some(Frame::Batch(_)) = &s.frame {
            let carried = s.exchange.request_values("mcp-session-id").first().copied();
            let version = carried.and_then(|id| negotiated.get(id).cloned().flatten());
            let array = s.success() && s.replies.iter().any(|(_, v)| v.as_ref().is_some_and(Value::is_array));
            if array || version.as_deref() != Some(BATCH_VERSION) {
                not_owed.extend(s.index.checked_sub(1));
            }
        }
    }
    findings.retain(|f| !(f.rule == BATCH && f.event.is_some_and(|e| not_owed.contains(&e))));
    let stray = [ID_ECHO, DUPLICATE_RESPONSE, MALFORMED_SERVED];
    findings.retain(|f| !(stray.contains(&f.rule) && f.event.is_some_and(|e| own.contains(&e))));
    let answered_by_status = [RESPONSE_MISSING, BIG_ID, EXTRA_MEMBER, NOTIFICATION_REPLY, NULL_ID];
    findings.retain(|f| match f.event.and_then(|e| refused.get(&e)) {
        Some(unread) => !(answered_by_status.contains(&f.rule) || *unread && f.rule.starts_with("MCP-")),
        None => true,
    });
    let serves = |era: Era| policy.model().and_then(|m| m.eras.serves(era)).unwrap_or(true);
    // Only a server the model calls modern-only owes the 2026-07-28 answers to legacy traffic: a dual-era one
    // serves GET streams and sessions to its legacy clients, and an unknown one may be either.
    let modern_only = policy.model().is_some_and(|m| m.eras == Eras::Modern);
    let mut add = |rule: &'static str, event: usize, detail: String| {
        let level = rules::rule(rule).map_or(Level::Error, |r| r.level);
        findings.push(Finding { rule, level, event: Some(event), detail });
    };
    let last = seen.last().map(|s| s.index);
    get_streams(transcript, &seen, &mut add);
    let surface = policy.surface().filter(|surface| surface.learned).map(|surface| &**surface);
    let mut sessions: HashMap<String, Option<String>> = HashMap::new();
    let mut deleted: HashSet<String> = HashSet::new();
    // The event ids seen, by session (`None`: streams without one), each with the exchange it came in.
    let mut event_ids: HashMap<Option<&str>, HashMap<&str, usize>> = HashMap::new();
    for s in &seen {
        let exchange = s.exchange;
        let session = exchange.request_values("mcp-session-id").first().copied();
        let legacy = s.era() == Era::Handshake;
        for id in exchange.event_ids.iter().filter(|_| legacy) {
            let ids = event_ids.entry(session).or_default();
            if let Some(&first) = ids.get(id.as_str()) {
                let detail = format!("SSE event id {id:?} came again, first in the stream of event {first}");
                add(HTTP_SSE_EVENT_ID, s.index, detail);
            } else {
                ids.insert(id, s.index);
            }
        }
        let status = exchange.status;
        let era = s.era();
        let ended = Some(s.index) == last && transcript.ending != Ending::Closed;
        if let Some(problem) = &exchange.problem
            && !ended
            && !exchange.body_cut
            && !oversized(exchange)
            && !problem.contains("timeout")
        {
            add(HTTP_RESPONSE, s.index, format!("{} got no well-formed response: {problem}", exchange.method));
        }
        // No response (the body was cut, the connection dropped): the status rules have nothing to judge.
        if status == 0 {
            continue;
        }
        let host = exchange.request_values("host").first().copied();
        if let Some(origin) = exchange.request_values("origin").into_iter().find(|o| foreign_origin(o, host))
            && s.success()
        {
            add(HTTP_ORIGIN, s.index, format!("a request from the foreign Origin {origin:?} was served with {status}"));
        }
        if modern_only {
            if matches!(exchange.method.as_str(), "GET" | "DELETE")
                && status != 405
                && !OTHER_REFUSALS.contains(&status)
            {
                add(
                    HTTP_MODERN_GET_DELETE_405,
                    s.index,
                    format!("a modern-only server answered {} with {status}, not 405", exchange.method),
                );
            }
            if let Some(id) = exchange.response_header("mcp-session-id") {
                let how = if exchange.request_values("mcp-session-id").contains(&id) { "echoed" } else { "minted" };
                add(
                    HTTP_MODERN_NO_SESSION,
                    s.index,
                    format!("a modern-only server {how} the session {id:?} on {} ({status})", exchange.method),
                );
            }
        }
        let session = exchange.request_values("mcp-session-id").first().map(|v| v.to_string());
        if let Some(id) = &session
            && deleted.contains(id)
            && status != 404
            && !(exchange.method == "GET" && status == 405)
            && !(status == 400 && names_no_version(exchange))
            && !OTHER_REFUSALS.contains(&status)
            && serves(Era::Handshake)
        {
            add(HTTP_SESSION_DELETED, s.index, format!("session {id:?} was ended by DELETE, yet got {status}"));
        }
        match exchange.method.as_str() {
            "GET" if era == Era::Handshake && serves(Era::Handshake) && s.success() => {
                let media = exchange.media_type();
                if media.as_deref() != Some("text/event-stream") {
                    let media = media.unwrap_or_else(|| "no content type".into());
                    add(HTTP_GET, s.index, format!("GET got {status} with {media}, not an SSE stream or 405"));
                }
            }
            "DELETE" => {
                if let Some(id) = session.filter(|_| s.success()) {
                    deleted.insert(id);
                }
                continue;
            }
            "POST" => {}
            _ => continue,
        }
        if exchange.method != "POST" {
            continue;
        }
        let notification = matches!(s.frame, Some(Frame::Notification(_)))
            || era == Era::Handshake && matches!(s.frame, Some(Frame::Response(_)));
        if notification && s.success() && (status != 202 || exchange.body_len > 0 || !s.replies.is_empty()) {
            add(
                HTTP_NOTIFICATION_202,
                s.index,
                format!(
                    "a notification was accepted with {status} and {} body bytes, not 202 and none",
                    exchange.body_len
                ),
            );
        }
        let request = matches!(s.frame, Some(Frame::Request(_)));
        if request && s.success() {
            let media = exchange.media_type();
            if !matches!(media.as_deref(), Some("application/json" | "text/event-stream")) {
                let media = media.unwrap_or_else(|| "no Content-Type".into());
                add(HTTP_CONTENT_TYPE, s.index, format!("a request was answered {status} with {media}"));
            }
        }
        if era == Era::Modern && serves(Era::Modern) && request {
            if let Some((event, code)) = s.error_code() {
                let due = match code {
                    UNSUPPORTED_PROTOCOL_VERSION | HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY => Some(400),
                    METHOD_NOT_FOUND => Some(404),
                    _ => None,
                };
                if let Some(due) = due.filter(|due| *due != status) {
                    add(HTTP_ERROR_STATUS, event, format!("error {code} came with status {status}, not {due}"));
                }
            }
            if let Some(mismatch) =
                header_mismatch(s, serves(Era::Handshake), surface).filter(|_| !otherwise_refusable(exchange, status))
            {
                let code = s.error_code().map(|(_, code)| code);
                let accepted = match code {
                    // A server whose parser refuses the body (a number past its limits, RFC 8259 §9) never
                    // read what the headers should match.
                    Some(HEADER_MISMATCH | PARSE_ERROR) => true,
                    Some(UNSUPPORTED_PROTOCOL_VERSION) => mismatch.version_header,
                    _ => false,
                };
                // A version header naming no version at all may be judged by the legacy transport's rules instead
                // (400 for the version, 404 for an unknown session, whatever the body): a dual-era server cannot
                // tell which revision the client speaks.
                let legacy_refusal = mismatch.unknown_version && (400..500).contains(&status);
                if (status != 400 || !accepted) && !legacy_refusal {
                    let got = code.map_or_else(|| "no error".to_string(), |c| format!("error {c}"));
                    add(
                        HTTP_HEADER_MISMATCH,
                        s.index,
                        format!("{}, yet the request got {status} and {got}", mismatch.what),
                    );
                }
            }
        }
        // Legacy routing: no protocol-version header, or a handshake version (a dual-era server routes by it).
        let legacy_routed =
            exchange.request_values("mcp-protocol-version").iter().all(|v| HANDSHAKE_VERSIONS.contains(v));
        if era == Era::Handshake && serves(Era::Handshake) {
            let initialize = matches!(&s.frame, Some(Frame::Request(r)) if r.method == INITIALIZE);
            if initialize && s.success() {
                let negotiated = s
                    .replies
                    .iter()
                    .find_map(|(_, v)| Some(v.as_ref()?.get("result")?.get("protocolVersion")?.as_str()?.to_string()));
                if let Some(id) = exchange.response_header("mcp-session-id").filter(|_| negotiated.is_some()) {
                    sessions.insert(id.to_string(), negotiated);
                }
                continue;
            }
            let live = |id: &String| sessions.contains_key(id) && !deleted.contains(id);
            let refused = status > 400 && !OTHER_REFUSALS.contains(&status);
            if request && legacy_routed && session.is_none() && !sessions.is_empty() && refused {
                add(
                    HTTP_SESSION_REQUIRED,
                    s.index,
                    format!("a request without its session was refused with {status}, not 400"),
                );
            }
            if let Some(id) = session.as_ref().filter(|id| live(id))
                && sessions.get(id).cloned().flatten().is_some_and(|v| v.as_str() >= "2025-06-18")
            {
                let versions = exchange.request_values("mcp-protocol-version");
                let known = |v: &&str| HANDSHAKE_VERSIONS.contains(v) || MODERN_VERSIONS.contains(v);
                if let Some(bad) = versions.iter().find(|v| !known(v))
                    && status != 400
                    && !OTHER_REFUSALS.contains(&status)
                {
                    add(
                        HTTP_PROTOCOL_VERSION_HEADER,
                        s.index,
                        format!("MCP-Protocol-Version {bad:?} names no protocol version, yet the request got {status}"),
                    );
                }
            }
        }
    }
}

/// HTTP-GET-STREAM-RESPONSE and HTTP-SSE-BROADCAST: the messages of each GET stream of the client's own (legacy
/// era, not a resumption) against the rule that it carries no response, and its requests against every other
/// stream's (the lines the POSTs' streams brought, the other GET streams' messages).
fn get_streams(transcript: &Transcript, seen: &[Seen], add: &mut impl FnMut(&'static str, usize, String)) {
    let listened: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.exchange.method == "GET" && !s.exchange.stream.is_empty() && s.era() == Era::Handshake)
        .filter(|s| s.exchange.request_values("last-event-id").is_empty())
        .collect();
    if listened.is_empty() {
        return;
    }
    let parse = |line: &[u8]| serde_json::from_slice::<Value>(line).ok();
    let is_request = |message: &Value| message.get("method").is_some() && message.get("id").is_some();
    let on_posts: Vec<Value> = transcript
        .events
        .iter()
        .filter_map(|event| match event {
            Event::Received { line, .. } => parse(line).filter(is_request),
            _ => None,
        })
        .collect();
    for (nth, s) in listened.iter().enumerate() {
        for message in s.exchange.stream.iter().filter_map(|line| parse(line)) {
            let response =
                message.get("method").is_none() && (message.get("result").is_some() || message.get("error").is_some());
            if response {
                let shown = crate::transcript::show_bytes(message.to_string().as_bytes(), 200);
                add(HTTP_GET_STREAM_RESPONSE, s.index, format!("the GET stream carried a JSON-RPC response: {shown}"));
                continue;
            }
            if !is_request(&message) {
                continue;
            }
            let other_get = listened.iter().enumerate().any(|(other, o)| {
                other != nth && o.exchange.stream.iter().filter_map(|line| parse(line)).any(|m| m == message)
            });
            if other_get || on_posts.contains(&message) {
                let shown = crate::transcript::show_bytes(message.to_string().as_bytes(), 200);
                let also = if other_get { "another GET stream" } else { "a POST's stream" };
                add(
                    HTTP_SSE_BROADCAST,
                    s.index,
                    format!("the server's request went on the GET stream and on {also}: {shown}"),
                );
            }
        }
    }
}

/// True when a request may be refused for something other than what a rule judges: a refusal status of
/// [`OTHER_REFUSALS`], a body the harness cut, a `Content-Type` other than `application/json`, an `Accept`
/// without both media types, or a body past 10 MiB; the server may answer any of them first.
fn otherwise_refusable(exchange: &Exchange, status: u16) -> bool {
    let media = |values: Vec<&str>| values.join(",").to_ascii_lowercase();
    let content_type = media(exchange.request_values("content-type"));
    let accept = media(exchange.request_values("accept"));
    OTHER_REFUSALS.contains(&status)
        || exchange.body_cut
        || content_type.split(';').next().map(str::trim) != Some("application/json")
        || !(accept.contains("application/json") && accept.contains("text/event-stream"))
        || oversized(exchange)
}

/// True for a request a server may refuse as too large, by closing the connection while it is still being sent
/// (its response is then lost): a body past 10 MiB, or a header value past 8 KiB (Node's whole-head limit is
/// 16 KiB).
fn oversized(exchange: &Exchange) -> bool {
    let length = exchange.request_values("content-length").first().and_then(|v| v.parse::<u64>().ok());
    length.is_some_and(|n| n > 10 << 20) || exchange.request_headers.iter().any(|(_, v)| v.len() > 8 << 10)
}

/// True when the request's MCP-Protocol-Version names no protocol version (a 400 for it is due on its own).
fn names_no_version(exchange: &Exchange) -> bool {
    let known = |v: &&str| HANDSHAKE_VERSIONS.contains(v) || MODERN_VERSIONS.contains(v);
    exchange.request_values("mcp-protocol-version").iter().any(|v| !known(v))
}

/// True when a reply's id stands for a sent id: equal, or the same number (`7.0` comes back as `7` from a
/// JavaScript server).
fn same_id(sent: &Value, got: &Value) -> bool {
    sent == got || matches!((sent.as_f64(), got.as_f64()), (Some(a), Some(b)) if a == b)
}

/// A header that does not match a fully enveloped modern request.
struct Mismatch {
    what: String,
    /// True when the protocol-version header is the one that differs.
    version_header: bool,
    /// True when that header names no known protocol version.
    unknown_version: bool,
}

/// What in a modern request's headers does not match its body, if anything is judged to (see
/// [`HTTP_HEADER_MISMATCH`]): the version, method and name headers, and the `Mcp-Param-*` headers of a call of a
/// tool the learned `surface` lists with valid `x-mcp-header` annotations.
fn header_mismatch(s: &Seen, legacy_routes: bool, surface: Option<&Surface>) -> Option<Mismatch> {
    let Some(Frame::Request(request)) = &s.frame else { return None };
    let meta = envelope::meta(request.params.as_ref())?;
    let version = meta.get(PROTOCOL_VERSION_KEY)?.as_str()?;
    if !meta.get(envelope::CLIENT_CAPABILITIES_KEY).is_some_and(Value::is_object) {
        return None;
    }
    let exchange = s.exchange;
    let headers = exchange.request_values("mcp-protocol-version");
    if headers.is_empty() || legacy_routes && headers.iter().any(|v| HANDSHAKE_VERSIONS.contains(v)) {
        return None;
    }
    if let Some(other) = headers.iter().find(|v| **v != version) {
        return Some(Mismatch {
            what: format!("MCP-Protocol-Version {other:?} differs from the envelope's {version:?}"),
            version_header: true,
            unknown_version: !HANDSHAKE_VERSIONS.contains(other) && !MODERN_VERSIONS.contains(other),
        });
    }
    let methods = exchange.request_values("mcp-method");
    if methods.is_empty() || methods.iter().any(|m| *m != request.method) {
        return Some(Mismatch {
            what: format!("Mcp-Method {methods:?} does not match the body's {:?}", request.method),
            version_header: false,
            unknown_version: false,
        });
    }
    if let Some(name) = mirrored_name(&request.method, request.params.as_ref()) {
        let names = exchange.request_values("mcp-name");
        if names.is_empty() || names.iter().any(|n| decode_header_value(n) != name) {
            return Some(Mismatch {
                what: format!("Mcp-Name {names:?} does not match the body's {name:?}"),
                version_header: false,
                unknown_version: false,
            });
        }
    }
    let params = request.params.as_ref().filter(|_| request.method == TOOLS_CALL)?;
    let (_, tool) = surface?.tool(params.get("name")?.as_str()?)?;
    let annotations = param_headers(&tool.input_schema).ok()?;
    let expected = param_values(&annotations, params.get("arguments").unwrap_or(&Value::Null));
    for annotation in &annotations {
        let header = format!("Mcp-Param-{}", annotation.name);
        let sent: Vec<String> = exchange.request_values(&header).into_iter().map(decode_header_value).collect();
        let wanted: Vec<String> =
            expected.iter().filter(|(name, _)| *name == header).map(|(_, value)| value.clone()).collect();
        if sent != wanted {
            return Some(Mismatch {
                what: format!("{header} {sent:?} does not match the argument's {wanted:?}"),
                version_header: false,
                unknown_version: false,
            });
        }
    }
    None
}

/// Every exchange with its body's frame and its response's lines. A response that is not an SSE stream holds one
/// line at most (its body) and none when it has no body: the lines after it are the rest of the SSE stream it was
/// sent from within (the harness's answer to a request of the server's, POSTed while that stream stays open).
fn exchanges(transcript: &Transcript) -> Vec<Seen<'_>> {
    let events = &transcript.events;
    let mut seen: Vec<Seen> = Vec::new();
    for (index, event) in events.iter().enumerate() {
        let Event::Http(exchange) = event else { continue };
        let frame = match index.checked_sub(1).map(|i| &events[i]) {
            Some(Event::Sent(line)) if exchange.method == "POST" => Some(Frame::parse(line)),
            _ => None,
        };
        let mut replies: Vec<(usize, Option<Value>)> = events[index + 1..]
            .iter()
            .enumerate()
            .map_while(|(offset, event)| match event {
                Event::Received { line, .. } => Some((index + 1 + offset, serde_json::from_slice(line).ok())),
                _ => None,
            })
            .collect();
        if !is_stream(exchange) {
            let own = replies.len().min(usize::from(exchange.body_len > 0));
            let rest = replies.split_off(own);
            if let Some(stream) = seen.iter_mut().rev().find(|s| is_stream(s.exchange)) {
                stream.replies.extend(rest);
            }
        }
        seen.push(Seen { index, exchange, frame, replies });
    }
    seen
}

/// Whether the response is an SSE stream.
fn is_stream(exchange: &Exchange) -> bool {
    exchange.media_type().as_deref() == Some("text/event-stream")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ServerModel;
    use crate::oracle::check;

    /// An exchange with its request and response headers.
    fn exchange(method: &str, status: u16, sent: &[(&str, &str)], got: &[(&str, &str)]) -> Event {
        let pairs = |headers: &[(&str, &str)]| headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
        Event::Http(Box::new(Exchange {
            method: method.into(),
            status,
            request_headers: pairs(sent),
            response_headers: pairs(got),
            ..Exchange::default()
        }))
    }

    /// The rules `events` breaks on a server with `eras` (none: no model).
    fn fired(events: &[Event], eras: Option<Eras>) -> Vec<&'static str> {
        let policy = eras.map_or_else(Policy::default, |eras| Policy::default().with_model(ServerModel::stated(eras)));
        let transcript = Transcript { events: events.to_vec(), ending: Ending::Closed };
        check(&transcript, &policy).into_iter().map(|f| f.rule).collect()
    }

    const MODERN_PING: &str = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;

    #[test]
    fn a_modern_only_server_answers_get_and_delete_with_405() {
        for method in ["GET", "DELETE"] {
            for status in [200, 202, 404] {
                let events = [exchange(method, status, &[], &[("Content-Type", "text/event-stream")])];
                assert!(fired(&events, Some(Eras::Modern)).contains(&HTTP_MODERN_GET_DELETE_405), "{method} {status}");
                // A dual, handshake or unknown server may serve a GET stream and end sessions.
                for eras in [Some(Eras::Dual), Some(Eras::Handshake), None] {
                    assert!(!fired(&events, eras).contains(&HTTP_MODERN_GET_DELETE_405), "{method} {status} {eras:?}");
                }
            }
            for status in [405, 403] {
                assert_eq!(fired(&[exchange(method, status, &[], &[])], Some(Eras::Modern)), Vec::<&str>::new());
            }
        }
    }

    #[test]
    fn a_modern_only_server_neither_mints_nor_echoes_a_session() {
        let post = |sent: &[(&str, &str)], got: &[(&str, &str)]| {
            vec![Event::Sent(MODERN_PING.as_bytes().to_vec()), exchange("POST", 202, sent, got)]
        };
        let minted = post(&[], &[("Mcp-Session-Id", "s1")]);
        let echoed = post(&[("Mcp-Session-Id", "old")], &[("mcp-session-id", "old")]);
        for events in [&minted, &echoed] {
            assert!(fired(events, Some(Eras::Modern)).contains(&HTTP_MODERN_NO_SESSION));
            for eras in [Some(Eras::Dual), Some(Eras::Handshake), None] {
                assert!(!fired(events, eras).contains(&HTTP_MODERN_NO_SESSION), "{eras:?}");
            }
        }
        let detail = |events: &[Event]| {
            let policy = Policy::default().with_model(ServerModel::stated(Eras::Modern));
            let transcript = Transcript { events: events.to_vec(), ending: Ending::Closed };
            check(&transcript, &policy).into_iter().find(|f| f.rule == HTTP_MODERN_NO_SESSION).map(|f| f.detail)
        };
        assert!(detail(&minted).is_some_and(|d| d.contains("minted")));
        assert!(detail(&echoed).is_some_and(|d| d.contains("echoed")));
        // A session header on the request, ignored: nothing to report.
        let ignored = post(&[("Mcp-Session-Id", "old")], &[]);
        assert_eq!(fired(&ignored, Some(Eras::Modern)), Vec::<&str>::new());
    }

    #[test]
    fn an_sse_event_id_appears_once_in_a_session() {
        let stream = |method: &str, session: &str, ids: &[&str]| {
            let mut event =
                exchange(method, 200, &[("Mcp-Session-Id", session)], &[("Content-Type", "text/event-stream")]);
            if let Event::Http(exchange) = &mut event {
                exchange.event_ids = ids.iter().map(|id| id.to_string()).collect();
            }
            event
        };
        let rules = |events: &[Event]| fired(events, Some(Eras::Dual));
        // Quiet: a POST's priming id, then the resumed GET's later ids; the same id in two sessions.
        assert!(
            !rules(&[stream("POST", "s", &["a/0"]), stream("GET", "s", &["a/1", "a/2"])]).contains(&HTTP_SSE_EVENT_ID)
        );
        assert!(!rules(&[stream("POST", "s", &["1"]), stream("POST", "t", &["1"])]).contains(&HTTP_SSE_EVENT_ID));
        // Fires: the resumed stream repeats its Last-Event-ID's event; one stream repeats an id.
        assert!(
            rules(&[stream("POST", "s", &["a/0"]), stream("GET", "s", &["a/0", "a/1"])]).contains(&HTTP_SSE_EVENT_ID)
        );
        assert!(rules(&[stream("POST", "s", &["x", "x"])]).contains(&HTTP_SSE_EVENT_ID));
        // A 2026-07-28 stream is not resumable: its ids are not judged.
        let mut modern = stream("POST", "", &["x", "x"]);
        if let Event::Http(exchange) = &mut modern {
            exchange.request_headers = vec![("MCP-Protocol-Version".into(), "2026-07-28".into())];
        }
        assert!(!rules(&[modern]).contains(&HTTP_SSE_EVENT_ID));
    }

    #[test]
    fn a_request_too_large_that_lost_its_connection_was_refused_not_left_unanswered() {
        let list = r#"{"jsonrpc":"2.0","id":"","method":"tools/list"}"#;
        let lost = |length: &str| {
            let mut event = exchange("POST", 0, &[("Content-Length", length)], &[]);
            if let Event::Http(exchange) = &mut event {
                exchange.problem = Some("the connection failed: Connection reset by peer (os error 104)".into());
            }
            vec![Event::Sent(list.as_bytes().to_vec()), event]
        };
        // Past 10 MiB: the server may have closed the connection on it, its 413 lost; a small one was dropped.
        assert!(!fired(&lost("11534382"), Some(Eras::Handshake)).contains(&RESPONSE_MISSING));
        assert!(fired(&lost("48"), Some(Eras::Handshake)).contains(&RESPONSE_MISSING));
    }

    #[test]
    fn a_get_stream_carries_no_response_and_no_request_another_stream_carried() {
        let get = |messages: &[&str], resumed: bool| {
            let mut sent = vec![("Mcp-Session-Id", "s")];
            if resumed {
                sent.push(("Last-Event-ID", "s/1/0"));
            }
            let mut event = exchange("GET", 200, &sent, &[("Content-Type", "text/event-stream")]);
            if let Event::Http(exchange) = &mut event {
                exchange.stream = messages.iter().map(|m| m.as_bytes().to_vec()).collect();
            }
            event
        };
        let ask = r#"{"jsonrpc":"2.0","id":"calc-ping-1","method":"ping"}"#;
        let note = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        let reply = r#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
        let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add"}}"#;
        let post = |lines: &[&str]| {
            let mut events = vec![
                Event::Sent(call.as_bytes().to_vec()),
                exchange("POST", 200, &[("Mcp-Session-Id", "s")], &[("Content-Type", "text/event-stream")]),
            ];
            events.extend(lines.iter().map(|l| Event::Received { line: l.as_bytes().to_vec(), truncated: false }));
            events
        };
        let rules = |events: Vec<Event>| {
            let found = fired(&events, Some(Eras::Dual));
            [HTTP_GET_STREAM_RESPONSE, HTTP_SSE_BROADCAST].into_iter().filter(|r| found.contains(r)).collect::<Vec<_>>()
        };
        let with = |get_event: Event, lines: &[&str]| [vec![get_event], post(lines)].concat();
        // Quiet: requests and notifications of the server's own on the GET stream only; equal notifications on
        // both (two messages, maybe); a response on a stream resumed with Last-Event-ID.
        assert_eq!(rules(with(get(&[ask, note], false), &[reply])), Vec::<&str>::new());
        assert_eq!(rules(with(get(&[note], false), &[note, reply])), Vec::<&str>::new());
        assert_eq!(rules(with(get(&[reply], true), &[])), Vec::<&str>::new());
        // Fires: a response on the GET stream; the same request on the GET stream and the POST's.
        assert_eq!(rules(with(get(&[reply], false), &[])), [HTTP_GET_STREAM_RESPONSE]);
        assert_eq!(rules(with(get(&[ask], false), &[ask, reply])), [HTTP_SSE_BROADCAST]);
        assert_eq!(rules([vec![get(&[ask], false)], vec![get(&[ask], false)]].concat()), [HTTP_SSE_BROADCAST]);
    }

    #[test]
    fn a_missing_client_capability_comes_with_400() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let refused = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"needs elicitation","data":{"requiredCapabilities":{"elicitation":{}}}}}"#;
        let headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "t")];
        let answered = |status: u16| {
            let mut response = exchange("POST", status, &headers, &[("Content-Type", "application/json")]);
            if let Event::Http(exchange) = &mut response {
                exchange.body_len = refused.len();
            }
            vec![
                Event::Sent(call.as_bytes().to_vec()),
                response,
                Event::Received { line: refused.as_bytes().to_vec(), truncated: false },
            ]
        };
        assert!(fired(&answered(200), Some(Eras::Modern)).contains(&HTTP_ERROR_STATUS));
        assert!(!fired(&answered(400), Some(Eras::Modern)).contains(&HTTP_ERROR_STATUS));
    }

    #[test]
    fn the_answer_posted_from_within_a_stream_owns_none_of_the_streams_later_lines() {
        let line = |text: &str| text.as_bytes().to_vec();
        let received = |text: &str| Event::Received { line: line(text), truncated: false };
        let sse = [("Content-Type", "text/event-stream")];
        let handshake = [("MCP-Protocol-Version", "2025-11-25")];
        // A tool call's stream asks the client; the answer is POSTed (202, no body) while the stream stays open;
        // the call's result then comes in the stream.
        let answered = |status: u16, body_len: usize| {
            let mut answer = exchange("POST", status, &handshake, &[]);
            if let Event::Http(exchange) = &mut answer {
                exchange.body_len = body_len;
            }
            vec![
                Event::Sent(line(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask"}}"#)),
                exchange("POST", 200, &handshake, &sse),
                received(r#"{"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"message":"?"}}"#),
                Event::Sent(line(r#"{"jsonrpc":"2.0","id":"s1","result":{"action":"decline"}}"#)),
                answer,
                received(r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#),
            ]
        };
        let rules = |events: &[Event]| fired(events, Some(Eras::Dual));
        assert!(!rules(&answered(202, 0)).contains(&HTTP_NOTIFICATION_202), "{:?}", rules(&answered(202, 0)));
        // The answer's own response with a body, or a status other than 202, still breaks the rule.
        assert!(rules(&answered(202, 2)).contains(&HTTP_NOTIFICATION_202));
        assert!(rules(&answered(200, 0)).contains(&HTTP_NOTIFICATION_202));
    }

    /// Every short transcript over a few HTTP-shaped events, in every order, is judged without a panic.
    #[test]
    fn any_order_of_exchanges_and_lines_is_judged_without_panic() {
        let exchange = |method: &str, status: u16, headers: &[(&str, &str)]| {
            Event::Http(Box::new(Exchange {
                method: method.into(),
                status,
                request_headers: headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
                response_headers: vec![("Mcp-Session-Id".into(), "s".into())],
                ..Exchange::default()
            }))
        };
        let pool = [
            Event::Sent(
                br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#.to_vec(),
            ),
            Event::Sent(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec()),
            Event::Received {
                line: br#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26"}}"#.to_vec(),
                truncated: false,
            },
            Event::Sync,
            exchange("GET", 200, &[("Mcp-Session-Id", "s")]),
            exchange("POST", 400, &[("Origin", "http://evil.example"), ("MCP-Protocol-Version", "x")]),
            exchange("DELETE", 0, &[("Mcp-Session-Id", "s")]),
        ];
        for n in 0..pool.len().pow(4) {
            let events: Vec<Event> = (0..4).map(|digit| pool[n / pool.len().pow(digit) % pool.len()].clone()).collect();
            for ending in [Ending::Closed, Ending::Hung { waited_ms: 1 }] {
                check(&Transcript { events: events.clone(), ending }, &Policy::default());
            }
        }
    }
}
