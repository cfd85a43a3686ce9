//! The MCP layer: what the server serves (its [`ServerModel`], or what the transcript shows), how the connection
//! was opened, and for each request the class of reply that calls for: envelope errors, version refusals, era
//! refusals, and the shape of the results.
//!
//! The default judgement (profile `spec`): modern-era rules apply only to a server that serves 2026-07-28. On such
//! a server a fully enveloped request sent before any `initialize` and any un-enveloped request is served under
//! 2026-07-28; notifications never select an era. After an `initialize` or an un-enveloped request, an enveloped
//! request may be refused with -32600, served under legacy semantics, or served under 2026-07-28. After a modern
//! request, `initialize` may get an error and an un-enveloped request the other era's refusal. The one-era lock of
//! mcp 2.3.0 is the profile rule MCP-ERA-SINGLE.

mod capabilities;
mod listen;
mod logging;
mod progress;

use super::rules::{
    ADVERTISED_METHODS, CACHE_HINTS, DISCOVER_SHAPE, ENVELOPE_KEY_NAMED, ENVELOPE_MISSING_KEY, ERA_SINGLE,
    HANDSHAKE_NO_RESULT_TYPE, INITIALIZE_PARAMS, INITIALIZE_SHAPE, INPUT_REQUIRED, MISSING_CAPABILITY,
    MODERN_REMOVED_METHOD, MODERN_RESULT_TYPE, MODERN_SERVER_INFO, PING, UNSOLICITED_REQUEST, UNSUPPORTED_VERSION,
    VERSION_NOT_STRING,
};
use super::{Findings, LayerInput, Policy, Read, ServerLine, shown};
use crate::model::ServerModel;
use crate::protocol::codes::{
    INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::protocol::envelope::{self, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY};
use crate::protocol::era::HANDSHAKE_VERSIONS;
use crate::protocol::id::is_integer_literal;
use crate::protocol::methods::{
    CACHEABLE, DISCOVER, INITIALIZE, PROMPTS_LIST, REMOVED_IN_MODERN, RESOURCES_LIST, TOOLS_CALL, TOOLS_LIST,
};
use crate::protocol::{Era, Frame, IdField, Outcome, Request};
use crate::transcript::{Transcript, show_bytes};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The methods whose result may be `input_required`.
const INPUT_REQUIRED_METHODS: &[&str] = &[TOOLS_CALL, "prompts/get", "resources/read"];
/// The list methods and the capability that advertises each.
const LIST_CAPABILITIES: &[(&str, &str)] =
    &[(TOOLS_LIST, "tools"), (PROMPTS_LIST, "prompts"), (RESOURCES_LIST, "resources")];

/// A request that was sent (its event index), and its reply (the event index and what it carries) when a
/// well-formed one came.
type Sent<'a> = (usize, &'a Request, Option<(usize, &'a Outcome)>);

/// How one request's reply is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Judge {
    /// As a handshake-era request (an envelope, if any, is ordinary metadata). With `refusal` the other era's
    /// refusal is accepted: after a modern request, -32602 or -32600 for an un-enveloped request and any error
    /// for `initialize`. On a server that serves 2026-07-28, a plain request before any `initialize` may get
    /// -32602 or -32600 too.
    Handshake { refusal: bool },
    /// As a 2026-07-28 request.
    Modern,
    /// An enveloped request on a connection an `initialize` or an un-enveloped request opened: -32600, a
    /// handshake-era reply, or a modern reply that passes the modern rules.
    Excused,
    /// Profile MCP-ERA-SINGLE: the request belongs to the other era than the connection's and must be refused.
    Refused(Era),
    /// Profile MCP-ERA-SINGLE, before the era is fixed: judged by its own era, the other era's refusal accepted.
    Tentative(Era),
}

/// One request and the reply it got, with how it is judged.
struct Exchange<'a> {
    /// The request.
    request: &'a Request,
    /// The event index of the request.
    sent: usize,
    /// The event index of the reply and what it carries, when a well-formed reply came.
    reply: Option<(usize, &'a Outcome)>,
    /// How the reply is judged.
    judge: Judge,
}

/// What the server advertised anywhere in the transcript.
#[derive(Default)]
struct Advertised {
    /// Top-level capability keys of successful `initialize` results.
    handshake: BTreeSet<String>,
    /// Top-level capability keys of `server/discover` results.
    modern: BTreeSet<String>,
    /// The event index of the first `initialize` request (in the order sent) that got a result: a request sent
    /// after it is on an initialized connection even when it was pipelined ahead of that result.
    initialize_sent: Option<usize>,
    /// The event index of the first `initialize` request whose reply is not known (none came, or which of two
    /// lines sharing its id a reply answered is not known): it may have succeeded.
    initialize_unknown: Option<usize>,
}

/// How the client opened the connection, from the lines it sent (in the order sent).
#[derive(Default)]
struct Opening {
    /// The first request carrying the modern envelope (its protocol-version key).
    first_modern: Option<usize>,
    /// The first line that may have opened the connection otherwise: `initialize`, any other request without the
    /// envelope, a line parsers differ on, an invalid object with a method and an id, or a batch. Notifications
    /// never select an era.
    excused_from: Option<usize>,
}

impl Opening {
    fn of(reads: &[Read]) -> Opening {
        let mut opening = Opening::default();
        for (index, read) in reads.iter().enumerate() {
            let Some((frame, ambiguous)) = read.sent() else { continue };
            let excuses = match frame {
                _ if ambiguous.is_some() => true,
                Frame::Request(request) => {
                    let modern = envelope::carries_modern_envelope(&request.method, request.params.as_ref());
                    if modern && opening.first_modern.is_none() {
                        opening.first_modern = Some(index);
                    }
                    !modern
                }
                Frame::Invalid { id, method, .. } => id.is_some() && method.is_some(),
                Frame::Batch(_) => true,
                _ => false,
            };
            if excuses && opening.excused_from.is_none() {
                opening.excused_from = Some(index);
            }
        }
        opening
    }

    /// True when the connection was still open to 2026-07-28 at event `at` (no excusing line before it).
    fn modern_open(&self, at: usize) -> bool {
        self.excused_from.is_none_or(|excused| excused >= at)
    }

    /// True when a modern request was sent before event `at`.
    fn after_modern(&self, at: usize) -> bool {
        self.first_modern.is_some_and(|first| first < at)
    }
}

/// Whether the server serves each era: the model's word, or for 2026-07-28 what the transcript shows (a
/// `server/discover` result, a -32022, or a result carrying `resultType`); `None` for the handshake era when only
/// the transcript speaks.
struct Serves {
    modern: bool,
    /// `Some` only when a model says it.
    handshake: Option<bool>,
}

impl Serves {
    fn of(model: Option<&ServerModel>, exchanges: &[Sent], reads: &[Read]) -> Serves {
        let handshake = model.and_then(|m| m.serves(Era::Handshake));
        if let Some(modern) = model.and_then(|m| m.serves(Era::Modern)) {
            return Serves { modern, handshake };
        }
        let discovered = exchanges
            .iter()
            .any(|(_, request, reply)| request.method == DISCOVER && matches!(reply, Some((_, Outcome::Result(_)))));
        let shown = reads.iter().any(|read| match read.server_line() {
            Some(ServerLine::Reply { outcome: Some(Outcome::Error(error)), .. }) => {
                error.code == UNSUPPORTED_PROTOCOL_VERSION
            }
            Some(ServerLine::Reply { outcome: Some(Outcome::Result(result)), .. }) => {
                result.get("resultType").is_some()
            }
            _ => false,
        });
        Serves { modern: discovered || shown, handshake }
    }
}

/// Checks every request's reply against what the server serves and how the connection was opened, and the
/// server's own requests on a connection open to 2026-07-28.
///
/// Requests on which parsers legitimately differ ([`super::jsonrpc::Ambiguous`]) are not judged here at all.
pub(super) fn check(input: &LayerInput, findings: &mut Findings) {
    let LayerInput { transcript, reads, answers, policy, .. } = *input;
    let reply_of = |sent: usize| {
        answers[sent].and_then(|at| match reads[at].server_line() {
            Some(ServerLine::Reply { outcome: Some(outcome), .. }) => Some((at, outcome)),
            _ => None,
        })
    };
    let requests: Vec<Sent> = reads
        .iter()
        .enumerate()
        .filter_map(|(index, read)| match read.sent() {
            Some((Frame::Request(request), None)) => Some((index, request, reply_of(index))),
            _ => None,
        })
        .collect();
    let serves = Serves::of(policy.model(), &requests, reads);
    let opening = Opening::of(reads);
    if serves.modern {
        for (index, read) in reads.iter().enumerate() {
            if let Some(ServerLine::Outgoing { id }) = read.server_line()
                && *id != IdField::Absent
                && opening.after_modern(index)
                && opening.modern_open(index)
            {
                let detail = format!("the server sent a request on a modern connection: {}", shown(transcript, index));
                findings.add(UNSOLICITED_REQUEST, Some(index), detail);
            }
        }
    }
    capabilities::check(input, findings);
    progress::check(input, findings);
    logging::check(input, findings);
    logging::check_levels(input, findings);
    listen::check(input, findings);
    let supported = supported_versions(reads, &requests, answers, policy);
    // Profile MCP-ERA-SINGLE: the first request that gets a result fixes the connection's era.
    let single = policy.enabled(ERA_SINGLE) && serves.modern && serves.handshake != Some(false);
    let fixed = requests.iter().find(|(_, _, reply)| matches!(reply, Some((_, Outcome::Result(_)))));
    let fixed = fixed.map(|&(sent, first, _)| (sent, envelope::opening_era(&first.method, first.params.as_ref())));
    let exchanges: Vec<Exchange> = requests
        .into_iter()
        // Array params are valid JSON-RPC but not MCP: any error, or silence, is an acceptable answer.
        .filter(|(_, request, _)| !matches!(request.params, Some(Value::Array(_))))
        .map(|(sent, request, reply)| {
            let params = request.params.as_ref();
            let enveloped = envelope::carries_modern_envelope(&request.method, params);
            let settled = fixed.filter(|&(from, _)| sent >= from).map(|(_, era)| era);
            let judge = match settled {
                Some(Era::Handshake) if single && enveloped => Judge::Refused(Era::Handshake),
                Some(Era::Modern) if single && request.method == INITIALIZE => Judge::Refused(Era::Modern),
                Some(Era::Modern) if single => Judge::Modern,
                Some(Era::Handshake) if single => Judge::Handshake { refusal: false },
                None if single => Judge::Tentative(envelope::opening_era(&request.method, params)),
                // Known to be handshake-only: the envelope is ordinary metadata.
                _ if !serves.modern && serves.handshake.is_some() => Judge::Handshake { refusal: false },
                // Not shown to serve 2026-07-28, and no model: an enveloped request may get anything a legacy or
                // a locked dual-era server gives it.
                _ if !serves.modern && enveloped => Judge::Excused,
                _ if request.method == INITIALIZE => {
                    Judge::Handshake { refusal: opening.after_modern(sent) || serves.handshake == Some(false) }
                }
                _ if enveloped && opening.modern_open(sent) => Judge::Modern,
                _ if enveloped => Judge::Excused,
                _ if serves.handshake == Some(false) => Judge::Modern,
                _ => Judge::Handshake { refusal: opening.after_modern(sent) },
            };
            Exchange { request, sent, reply, judge }
        })
        .collect();
    let mut advertised = advertised(&exchanges);
    // An `initialize` whose line parsers differ on, or that is not a valid request (an id like `4e+3`, an extra
    // member: not judged as a request), may have succeeded as well: a lenient server serves it.
    let ambiguous_initialize = reads.iter().position(|read| match read.sent() {
        Some((Frame::Request(request), Some(_))) => request.method == INITIALIZE,
        Some((Frame::Invalid { method: Some(method), .. }, _)) => method == INITIALIZE,
        _ => false,
    });
    if let Some(sent) = ambiguous_initialize {
        advertised.initialize_unknown = Some(advertised.initialize_unknown.map_or(sent, |first| first.min(sent)));
    }
    let mut checker = Checker {
        transcript,
        supported: &supported,
        findings,
        advertised: &advertised,
        handshake_only: !serves.modern && serves.handshake == Some(true),
        model: policy.model(),
    };
    for exchange in &exchanges {
        checker.exchange(exchange);
    }
}

/// The versions the server may serve: the policy's, those its model names, every string of a `server/discover`
/// result's `supportedVersions`, and every string of a -32022 error's `data.supported` other than the version that
/// error refuses.
fn supported_versions(
    reads: &[Read],
    requests: &[Sent],
    answers: &[Option<usize>],
    policy: &Policy,
) -> BTreeSet<String> {
    let mut supported: BTreeSet<String> = policy.supported_versions().iter().cloned().collect();
    supported.extend(policy.model().iter().flat_map(|model| model.versions.iter().cloned()));
    let mut answered: BTreeMap<usize, &Request> = BTreeMap::new();
    for &(sent, request, _) in requests {
        if let Some(at) = answers[sent] {
            answered.insert(at, request);
        }
    }
    for (at, read) in reads.iter().enumerate() {
        let Some(ServerLine::Reply { outcome: Some(outcome), .. }) = read.server_line() else { continue };
        let request = answered.get(&at);
        match outcome {
            Outcome::Result(result) if request.is_some_and(|r| r.method == DISCOVER) => {
                let listed = string_list(result.get("supportedVersions")).unwrap_or_default();
                supported.extend(listed.into_iter().map(str::to_string));
            }
            Outcome::Error(error) if error.code == UNSUPPORTED_PROTOCOL_VERSION => {
                let data = error.data.as_ref();
                let requested = data.and_then(|d| d.get("requested")).and_then(Value::as_str);
                let version = request.and_then(|r| envelope::meta(r.params.as_ref())?.get(PROTOCOL_VERSION_KEY));
                let refused = |v: &&str| Some(*v) == requested || version.and_then(Value::as_str) == Some(*v);
                let listed = string_list(data.and_then(|d| d.get("supported"))).unwrap_or_default();
                supported.extend(listed.into_iter().filter(|v| !refused(v)).map(str::to_string));
            }
            _ => {}
        }
    }
    supported
}

/// True when the request's `params._meta` is a valid 2026-07-28 envelope ([`envelope::is_valid`]).
fn valid_envelope(request: &Request) -> bool {
    envelope::meta(request.params.as_ref()).is_some_and(envelope::is_valid)
}

fn advertised(exchanges: &[Exchange]) -> Advertised {
    let mut advertised = Advertised::default();
    for exchange in exchanges.iter().filter(|e| !matches!(e.judge, Judge::Refused(_))) {
        if exchange.request.method == INITIALIZE && exchange.reply.is_none() {
            let sent = exchange.sent;
            advertised.initialize_unknown = Some(advertised.initialize_unknown.map_or(sent, |first| first.min(sent)));
        }
        let Some((_, Outcome::Result(result))) = exchange.reply else { continue };
        let Some(capabilities) = result.get("capabilities").and_then(Value::as_object) else { continue };
        let keys = capabilities.keys().cloned();
        match exchange.request.method.as_str() {
            INITIALIZE => {
                advertised.handshake.extend(keys);
                let sent = exchange.sent;
                advertised.initialize_sent = Some(advertised.initialize_sent.map_or(sent, |first| first.min(sent)));
            }
            DISCOVER => advertised.modern.extend(keys),
            _ => {}
        }
    }
    advertised
}

struct Checker<'a> {
    transcript: &'a Transcript,
    /// The versions the server may serve ([`supported_versions`]).
    supported: &'a BTreeSet<String>,
    findings: &'a mut Findings,
    advertised: &'a Advertised,
    /// True when the model says the server serves the handshake era only: every connection is a handshake one.
    handshake_only: bool,
    /// The server model, when the policy has one (the handshake versions its `initialize` accepts).
    model: Option<&'a ServerModel>,
}

impl Checker<'_> {
    fn exchange(&mut self, exchange: &Exchange) {
        let Some((at, outcome)) = exchange.reply else { return };
        let request = exchange.request;
        let mut reply = Reply { checker: self, at, sent: exchange.sent, outcome };
        match exchange.judge {
            Judge::Refused(Era::Handshake) => reply.expect_code(
                ERA_SINGLE,
                INVALID_REQUEST,
                "a request carrying the modern envelope on a handshake connection",
            ),
            Judge::Refused(Era::Modern) => reply.modern_refuses_initialize(request.params.as_ref()),
            Judge::Tentative(_) if reply.other_era_refusal(request) => {}
            Judge::Tentative(Era::Handshake) => reply.handshake(request, exchange.sent, false),
            Judge::Tentative(Era::Modern) | Judge::Modern => reply.modern(request),
            Judge::Handshake { refusal } => reply.handshake(request, exchange.sent, refusal),
            Judge::Excused => reply.excused(request, exchange.sent),
        }
    }
}

/// One reply being checked.
struct Reply<'c, 'a> {
    checker: &'c mut Checker<'a>,
    at: usize,
    /// The event index of the request it answers.
    sent: usize,
    outcome: &'c Outcome,
}

impl Reply<'_, '_> {
    fn add(&mut self, rule: &'static str, detail: impl Into<String>) {
        let line = shown(self.checker.transcript, self.at);
        self.checker.findings.add(rule, Some(self.at), format!("{}: {line}", detail.into()));
    }

    /// The reply must be an error with this code.
    fn expect_code(&mut self, rule: &'static str, code: i64, what: &str) {
        match self.outcome {
            Outcome::Error(error) if error.code == code => {}
            Outcome::Error(error) => self.add(rule, format!("{what} got error {}, not {code}", error.code)),
            Outcome::Result(_) => self.add(rule, format!("{what} got a result, not error {code}")),
        }
    }

    /// `initialize` on a modern connection: -32022, or -32602 when its params are not a valid initialize.
    fn modern_refuses_initialize(&mut self, params: Option<&Value>) {
        if !valid_initialize(params) {
            if let Outcome::Error(error) = self.outcome
                && error.code == INVALID_PARAMS
            {
                return;
            }
            let what = "initialize with invalid params on a modern connection";
            return match self.outcome {
                Outcome::Error(error) if error.code == UNSUPPORTED_PROTOCOL_VERSION => self.supported_listed(what),
                Outcome::Error(error) => {
                    self.add(ERA_SINGLE, format!("{what} got error {}, not -32022 or -32602", error.code))
                }
                Outcome::Result(_) => self.add(ERA_SINGLE, format!("{what} got a result, not error -32022 or -32602")),
            };
        }
        let what = "initialize on a modern connection";
        self.expect_code(ERA_SINGLE, UNSUPPORTED_PROTOCOL_VERSION, what);
        self.supported_listed(what);
    }

    /// A -32022 refusing `initialize` must name the supported versions.
    fn supported_listed(&mut self, what: &str) {
        if let Outcome::Error(error) = self.outcome
            && error.code == UNSUPPORTED_PROTOCOL_VERSION
            && string_list(error.data.as_ref().and_then(|d| d.get("supported"))).is_none()
        {
            self.add(ERA_SINGLE, format!("{what} got -32022 without a non-empty string array data.supported"));
        }
    }

    /// Before the era is fixed, the server may have locked the other era on an earlier request that failed: its
    /// refusal is accepted (-32600 for an enveloped request, -32602 for one without the envelope, -32022 or -32600
    /// for `initialize`). True when the reply was such a refusal and has been checked.
    fn other_era_refusal(&mut self, request: &Request) -> bool {
        let Outcome::Error(error) = self.outcome else { return false };
        let own = envelope::opening_era(&request.method, request.params.as_ref());
        match (request.method.as_str(), own, error.code) {
            (INITIALIZE, _, UNSUPPORTED_PROTOCOL_VERSION) => {
                self.supported_listed("initialize refused as on a modern connection");
                true
            }
            (INITIALIZE, _, INVALID_REQUEST) | (_, Era::Modern, INVALID_REQUEST) => true,
            (INITIALIZE, _, _) => false,
            (_, Era::Handshake, INVALID_PARAMS) => true,
            _ => false,
        }
    }

    /// A handshake-era reply. With `refusal`, the other era's refusal is accepted (see [`Judge::Handshake`]).
    fn handshake(&mut self, request: &Request, sent: usize, refusal: bool) {
        let method = request.method.as_str();
        let advertised = self.checker.advertised;
        let initialized = advertised.initialize_sent.is_some_and(|first| first < sent);
        if method == INITIALIZE {
            let maybe = initialized || advertised.initialize_unknown.is_some_and(|first| first < sent);
            return self.initialize(request.params.as_ref(), refusal, maybe);
        }
        // Before any initialize, a server that serves 2026-07-28 may take a plain request for a modern one that
        // lacks the envelope (the spec does not say which era a claim-less request selects), and after a modern
        // request it may refuse the other era; a method 2026-07-28 removed then does not exist, so -32601 is that
        // era's refusal too (TS server 2.4.0 answers a plain ping so after a modern tools/call).
        //
        // Once an `initialize` it answered selected legacy semantics (versioning.mdx), the server must serve them
        // (lifecycle.mdx: both parties MUST respect the negotiated version): rmcp answers initialize after a modern
        // request, then refuses a plain ping as lacking `_meta`.
        let removed = refusal && !initialized && REMOVED_IN_MODERN.contains(&method);
        let refusal = !initialized && (refusal || !self.checker.handshake_only);
        if let Outcome::Error(error) = self.outcome
            && refusal
            && (matches!(error.code, INVALID_PARAMS | INVALID_REQUEST) || (removed && error.code == METHOD_NOT_FOUND))
        {
            return;
        }
        if let Outcome::Result(result) = self.outcome
            && result.get("resultType").is_some()
            && (initialized || self.checker.handshake_only)
        {
            self.add(HANDSHAKE_NO_RESULT_TYPE, "a result on a handshake connection carries resultType");
        }
        match method {
            crate::protocol::methods::PING => match self.outcome {
                Outcome::Result(Value::Object(result)) if result.is_empty() => {}
                Outcome::Result(_) => self.add(PING, "ping got a result that is not {}"),
                // A ping whose params._meta is not an object is no valid ping (schema.ts RequestParams), and
                // ping.mdx's empty response is owed to a valid one: any error refuses it fairly (-32602 from the
                // Python SDK over HTTP, -32600 from mcp-go, whose message names the unparsable ping).
                Outcome::Error(_)
                    if request.params.as_ref().and_then(|p| p.get("_meta")).is_some_and(|m| !m.is_object()) => {}
                Outcome::Error(error) => self.add(PING, format!("ping got error {}, not the result {{}}", error.code)),
            },
            _ if initialized => {
                let advertised = self.checker.advertised;
                self.advertised_method(method, &advertised.handshake, "initialize");
            }
            _ => {}
        }
    }

    /// An enveloped request on a connection an `initialize` or an un-enveloped request opened: -32600 or any other
    /// error (a well-formed -32022 when it refuses a version the server does not name), a handshake-era result, or
    /// a modern result that passes the modern rules. A request whose envelope is not valid (a key missing, a version
    /// that is not a string, capabilities that are not an object) is no modern request such a server must see:
    /// rmcp serves it as the handshake-era request it also is, and after a second `initialize` stamps `resultType`
    /// on every result, so its result is judged as a handshake-era one.
    fn excused(&mut self, request: &Request, sent: usize) {
        match self.outcome {
            Outcome::Error(error) if error.code == UNSUPPORTED_PROTOCOL_VERSION => {
                let version = envelope::meta(request.params.as_ref()).and_then(|m| m.get(PROTOCOL_VERSION_KEY));
                if let Some(version) = version.and_then(Value::as_str)
                    && !self.checker.supported.contains(version)
                {
                    self.unsupported_version(version);
                }
            }
            Outcome::Error(_) => {}
            Outcome::Result(result) if result.get("resultType").is_some() && valid_envelope(request) => {
                self.modern(request)
            }
            Outcome::Result(_) => self.handshake(request, sent, false),
        }
    }

    /// An `initialize` reply: a result of the right shape without `resultType`, or for invalid params -32602 or
    /// -32022 (the modern era's refusal of `initialize`, whatever opened the connection: a server may lock on a line
    /// the oracle calls ambiguous), after a modern request or when it carries the modern envelope itself -32600 and
    /// -32601 too. A second `initialize` after a successful one may get anything.
    fn initialize(&mut self, params: Option<&Value>, refusal: bool, initialized: bool) {
        let result = match self.outcome {
            Outcome::Error(error) => {
                let judged = !initialized && !valid_initialize(params) && !matches!(params, Some(Value::Null));
                // After a modern request, `initialize` is a method 2026-07-28 removed: -32601 (rmcp) is as fair as
                // the other era's refusal. So it is for an `initialize` that carries the modern envelope itself: a
                // dual-era server may read it as a 2026-07-28 request (rmcp does).
                let enveloped = envelope::meta(params).is_some_and(|meta| meta.get(PROTOCOL_VERSION_KEY).is_some());
                let era_refusal = error.code == UNSUPPORTED_PROTOCOL_VERSION
                    || ((refusal || enveloped) && matches!(error.code, INVALID_REQUEST | METHOD_NOT_FOUND));
                if judged && error.code != INVALID_PARAMS && !era_refusal {
                    let detail = format!("an initialize with invalid params got error {}, not -32602", error.code);
                    self.add(INITIALIZE_PARAMS, detail);
                }
                return;
            }
            Outcome::Result(result) => result,
        };
        if result.get("resultType").is_some() {
            self.add(HANDSHAKE_NO_RESULT_TYPE, "a result on a handshake connection carries resultType");
        }
        let requested = params.and_then(|p| p.get("protocolVersion")).and_then(Value::as_str);
        let mut problems = Vec::new();
        match result.get("protocolVersion").and_then(Value::as_str) {
            None => problems.push("protocolVersion is not a string".to_string()),
            Some(answered) => problems.extend(self.negotiated(requested, answered)),
        }
        if !result.get("capabilities").is_some_and(Value::is_object) {
            problems.push("capabilities is not an object".to_string());
        }
        if !name_and_version(result.get("serverInfo")) {
            problems.push("serverInfo is not an object with string name and version".to_string());
        }
        if !problems.is_empty() {
            self.add(INITIALIZE_SHAPE, format!("initialize result: {}", problems.join("; ")));
        }
    }

    /// What is wrong with the version an `initialize` result answered, asked for `requested` (lifecycle.mdx §Version
    /// Negotiation): it must be a handshake version; a version the server accepts must be echoed; any other request
    /// gets a version the server accepts. When the model does not say which versions the server accepts, any
    /// handshake version is one it may support; so is the version asked for, whatever the model says.
    fn negotiated(&self, requested: Option<&str>, answered: &str) -> Option<String> {
        let model = self.checker.model;
        let accepts = |version: &str| model.and_then(|m| m.accepts(version));
        if !HANDSHAKE_VERSIONS.contains(&answered) {
            Some(format!("the answered version {answered:?} is not a handshake version"))
        } else if let Some(requested) = requested.filter(|r| accepts(r) == Some(true) && *r != answered) {
            Some(format!(
                "the client asked for {requested:?}, a version the server accepts, and it answered {answered:?}"
            ))
        } else if accepts(answered) == Some(false) && requested != Some(answered) {
            let asked = requested.map_or_else(|| "no version".to_string(), |r| format!("{r:?}"));
            let accepted = model.map(|m| m.accepted.join(", ")).unwrap_or_default();
            let answer = format!("the server answered {answered:?}, not a version it accepts ({accepted})");
            Some(format!("the client asked for {asked} and {answer}"))
        } else {
            None
        }
    }

    /// A list method the server advertised must not be -32601.
    fn advertised_method(&mut self, method: &str, advertised: &BTreeSet<String>, by: &str) {
        let Outcome::Error(error) = self.outcome else { return };
        let capability = LIST_CAPABILITIES.iter().find(|(list, _)| *list == method).map(|(_, capability)| *capability);
        if error.code == METHOD_NOT_FOUND
            && let Some(capability) = capability
            && advertised.contains(capability)
        {
            self.add(
                ADVERTISED_METHODS,
                format!("{method} got -32601 though {by} advertised the {capability} capability"),
            );
        }
    }

    fn modern(&mut self, request: &Request) {
        let method = request.method.as_str();
        let Some(meta) = envelope::meta(request.params.as_ref()) else {
            return self.expect_code(ENVELOPE_MISSING_KEY, INVALID_PARAMS, "a request without a params._meta object");
        };
        let missing = envelope::missing_keys(meta);
        if REMOVED_IN_MODERN.contains(&method) && !valid_envelope(request) {
            // A method 2026-07-28 removed, in an incomplete or invalid envelope (a key missing, a version that is
            // not a string): a dual-era server may serve it as the handshake-era method it still is there (rmcp
            // answers such a `ping` with `{}`), so no answer is wrong.
            return;
        }
        if !missing.is_empty() {
            // A string version the server does not serve breaks the other MUST as well (versioning.mdx: -32022), and
            // the spec orders neither: -32022 answers the request as rightly as -32602 (rmcp sends it on a
            // connection already serving 2026-07-28), its data judged as any -32022's.
            let unsupported = meta
                .get(PROTOCOL_VERSION_KEY)
                .and_then(Value::as_str)
                .filter(|version| !self.checker.supported.contains(*version));
            if let (Some(version), Outcome::Error(error)) = (unsupported, self.outcome)
                && error.code == UNSUPPORTED_PROTOCOL_VERSION
            {
                return self.unsupported_version(version);
            }
            let what = format!("a request lacking {}", missing.join(" and "));
            self.expect_code(ENVELOPE_MISSING_KEY, INVALID_PARAMS, &what);
            if let Outcome::Error(error) = self.outcome
                && error.code == INVALID_PARAMS
            {
                let unnamed: Vec<&str> = missing.into_iter().filter(|key| !error.message.contains(key)).collect();
                if !unnamed.is_empty() {
                    self.add(ENVELOPE_KEY_NAMED, format!("the -32602 message does not name {}", unnamed.join(" and ")));
                }
            }
            return;
        }
        let Some(version) = meta.get(PROTOCOL_VERSION_KEY).and_then(Value::as_str) else {
            return self.expect_code(VERSION_NOT_STRING, INVALID_PARAMS, "a non-string protocol version");
        };
        if !self.checker.supported.contains(version) {
            return self.unsupported_version(version);
        }
        if Era::of_version(version) == Some(Era::Handshake) {
            // A handshake version the server names as supported, served statelessly: its results follow that
            // version's shapes, not 2026-07-28's.
            return;
        }
        if REMOVED_IN_MODERN.contains(&method) {
            if let Outcome::Result(_) = self.outcome {
                self.add(MODERN_REMOVED_METHOD, format!("{method}, removed in 2026-07-28, got a result"));
            }
            return;
        }
        match self.outcome {
            Outcome::Error(error) => {
                if method == DISCOVER && error.code == METHOD_NOT_FOUND {
                    self.add(DISCOVER_SHAPE, "server/discover got -32601");
                }
                if error.code == MISSING_REQUIRED_CLIENT_CAPABILITY {
                    let transcript = self.checker.transcript;
                    for problem in capabilities::missing_capability_problems(transcript, self.sent, error.data.as_ref())
                    {
                        self.add(MISSING_CAPABILITY, problem);
                    }
                }
                let advertised = self.checker.advertised;
                self.advertised_method(method, &advertised.modern, "server/discover");
            }
            Outcome::Result(Value::Object(result)) => self.modern_result(method, result),
            Outcome::Result(_) => {}
        }
    }

    fn unsupported_version(&mut self, version: &str) {
        let what = format!("the unsupported version {version:?}");
        self.expect_code(UNSUPPORTED_VERSION, UNSUPPORTED_PROTOCOL_VERSION, &what);
        let Outcome::Error(error) = self.outcome else { return };
        if error.code != UNSUPPORTED_PROTOCOL_VERSION {
            return;
        }
        let data = error.data.as_ref();
        let mut problems = Vec::new();
        match string_list(data.and_then(|d| d.get("supported"))) {
            None => problems.push("data.supported is not a non-empty array of strings".to_string()),
            Some(supported) if supported.contains(&version) => {
                problems.push(format!("data.supported lists {version:?} itself"))
            }
            Some(_) => {}
        }
        match data.and_then(|d| d.get("requested")) {
            Some(Value::String(requested)) if requested == version => {}
            Some(other) => problems.push(format!("data.requested is {other}, not {version:?}")),
            None => problems.push("data.requested is missing".to_string()),
        }
        if !problems.is_empty() {
            self.add(UNSUPPORTED_VERSION, format!("-32022 for {what}: {}", problems.join("; ")));
        }
    }

    fn modern_result(&mut self, method: &str, result: &Map<String, Value>) {
        let result_type = result.get("resultType");
        match result_type.and_then(Value::as_str) {
            Some("complete") => {}
            Some("input_required") if INPUT_REQUIRED_METHODS.contains(&method) => {
                let transcript = self.checker.transcript;
                for problem in capabilities::input_required_problems(transcript, self.sent, result) {
                    self.add(INPUT_REQUIRED, problem);
                }
            }
            Some("input_required") => {
                self.add(MODERN_RESULT_TYPE, format!("resultType \"input_required\" is not allowed for {method}"))
            }
            Some(other) => {
                self.add(MODERN_RESULT_TYPE, format!("resultType {other:?} is neither complete nor input_required"))
            }
            None => {
                let what = result_type.map_or("missing".to_string(), |v| format!("{v}, not a string"));
                self.add(MODERN_RESULT_TYPE, format!("resultType is {what}"))
            }
        }
        let stamp = result.get("_meta").and_then(|m| m.get(SERVER_INFO_KEY));
        if !name_and_version(stamp) {
            let detail = format!("_meta[{SERVER_INFO_KEY:?}] is not an object with string name and version");
            self.add(MODERN_SERVER_INFO, detail);
        }
        let complete = result_type.and_then(Value::as_str) != Some("input_required");
        if complete && CACHEABLE.contains(&method) {
            let mut problems = Vec::new();
            match result.get("ttlMs") {
                Some(Value::Number(n)) if is_non_negative_integer(&n.to_string()) => {}
                Some(other) => problems.push(format!("ttlMs {} is not an integer >= 0", show_value(other))),
                None => problems.push("ttlMs is missing".to_string()),
            }
            match result.get("cacheScope").and_then(Value::as_str) {
                Some("public" | "private") => {}
                _ => problems.push("cacheScope is not \"public\" or \"private\"".to_string()),
            }
            if !problems.is_empty() {
                self.add(CACHE_HINTS, format!("{method} result: {}", problems.join("; ")));
            }
        }
        if method == DISCOVER {
            let mut problems = Vec::new();
            if string_list(result.get("supportedVersions")).is_none() {
                problems.push("supportedVersions is not a non-empty array of strings");
            }
            if !result.get("capabilities").is_some_and(Value::is_object) {
                problems.push("capabilities is not an object");
            }
            if !problems.is_empty() {
                self.add(DISCOVER_SHAPE, format!("server/discover result: {}", problems.join("; ")));
            }
        }
    }
}

/// The strings of a non-empty array of strings, or `None` for anything else.
fn string_list(value: Option<&Value>) -> Option<Vec<&str>> {
    let strings: Option<Vec<&str>> = value?.as_array()?.iter().map(Value::as_str).collect();
    strings.filter(|s| !s.is_empty())
}

/// An integer literal that is not below zero (`-0` included).
fn is_non_negative_integer(text: &str) -> bool {
    is_integer_literal(text) && (!text.starts_with('-') || text == "-0")
}

/// True for `initialize` params with a string `protocolVersion`, an object `capabilities` and an object
/// `clientInfo`.
fn valid_initialize(params: Option<&Value>) -> bool {
    params.and_then(Value::as_object).is_some_and(|params| {
        params.get("protocolVersion").is_some_and(Value::is_string)
            && params.get("capabilities").is_some_and(Value::is_object)
            && params.get("clientInfo").is_some_and(Value::is_object)
    })
}

/// True for an object with string `name` and `version`.
fn name_and_version(value: Option<&Value>) -> bool {
    value.and_then(Value::as_object).is_some_and(|info| {
        info.get("name").is_some_and(Value::is_string) && info.get("version").is_some_and(Value::is_string)
    })
}

fn show_value(value: &Value) -> String {
    show_bytes(value.to_string().as_bytes(), 40)
}

#[cfg(test)]
mod server_messages_tests;
#[cfg(test)]
mod tests;
