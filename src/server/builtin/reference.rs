//! The built-in reference server "calc": the tool `add(a: int, b: int) -> int` and a few with richer schemas
//! (`format_user`: nested objects, an enum, an array, an `outputSchema`; `stats`: `$ref`, `anyOf`, a nullable
//! type; `logo`: an image), a prompt, two resources and a resource template; server name `calc`, empty version,
//! serving both protocol eras as `shared/PROTOCOL.md` describes, one era per connection, and answering malformed
//! input as JSON-RPC 2.0 asks (-32700 for a line that is not JSON, -32600 for an invalid request).
//!
//! It is the oracle's clean baseline: it must reproduce the protocol lesson's seed transcripts exactly.

use super::fixtures;
use super::mutants::Mutant;
use crate::protocol::codes::{
    INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::protocol::envelope::{
    self, CLIENT_CAPABILITIES_KEY, LOG_LEVEL_KEY, META, PROGRESS_TOKEN_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
};
use crate::protocol::era::{BATCH_VERSION, HANDSHAKE_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_VERSIONS};
use crate::protocol::methods::{
    ACKNOWLEDGED, CACHEABLE, CANCELLED, COMPLETE, DISCOVER, ELICITATION_CREATE, INITIALIZE, LISTEN, PING, PROMPTS_GET,
    PROMPTS_LIST, RESOURCES_LIST, RESOURCES_READ, SET_LEVEL, SUBSCRIBE, TEMPLATES_LIST, TOOLS_CALL, TOOLS_LIST,
    UNSUBSCRIBE,
};
use crate::protocol::{Era, Frame, Problem, Request, RequestId};
use crate::server::{InProcessServer, ServerConnection, Status};
use serde_json::{Value, json};

/// The server's name and version, in `serverInfo`: the seed lesson's calc server (defined with the data the server
/// model compares them with).
pub use crate::model::{SERVER_NAME, SERVER_VERSION};
/// The -32600 message for an enveloped request on a handshake connection (the lesson's exact words).
pub const HANDSHAKE_REFUSES_MODERN: &str = "this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it";
/// The -32022 message for `initialize` on a modern connection.
pub const MODERN_REFUSES_INITIALIZE: &str =
    "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted";
/// The -32602 message when `params._meta` is missing or not an object.
pub const META_NOT_OBJECT: &str = "params._meta must be an object carrying the required 'io.modelcontextprotocol/protocolVersion' and 'io.modelcontextprotocol/clientCapabilities' envelope keys";
/// The start of the -32602 message that names missing envelope keys.
pub const MISSING_KEYS_PREFIX: &str = "params._meta is missing the required envelope key(s): ";

/// The reference server. Each connection starts with no era; its first request fixes one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Calc;

impl InProcessServer for Calc {
    type Connection = CalcConnection;

    fn connect(&self) -> CalcConnection {
        CalcConnection::default()
    }
}

/// The reference server serving the official conformance suite's fixtures too ([`fixtures`]):
/// `serve --conformance-fixtures`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CalcWithFixtures;

impl InProcessServer for CalcWithFixtures {
    type Connection = CalcConnection;

    fn connect(&self) -> CalcConnection {
        CalcConnection::default().with_fixtures()
    }
}

/// The reference server with one planted bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planted(pub Mutant);

impl InProcessServer for Planted {
    type Connection = CalcConnection;

    fn connect(&self) -> CalcConnection {
        CalcConnection { mutant: Some(self.0), ..CalcConnection::default() }
    }
}

/// One connection of [`Calc`] or [`Planted`].
#[derive(Clone, Debug, Default)]
pub struct CalcConnection {
    era: Option<Era>,
    initialized: bool,
    mutant: Option<Mutant>,
    /// Set by the planted bug [`Mutant::WedgedAfterParseError`]: requests are no longer answered.
    wedged: bool,
    /// The version `initialize` negotiated: on [`BATCH_VERSION`] a batch array is served, each request in it
    /// answered in one array reply (JSON-RPC 2.0 §6).
    version: Option<&'static str>,
    /// The elicitation requests the planted bug [`Mutant::ElicitsUndeclared`] sent.
    elicited: u64,
    /// Serves the conformance suite's fixtures beside calc's own.
    fixtures: bool,
    /// The least severe log level `logging/setLevel` asked for (an index in [`crate::protocol::logging::LOG_LEVELS`]).
    log_level: Option<usize>,
    /// Notifications the request being answered sends before its reply (a fixture's log and progress).
    notices: Vec<Value>,
    /// The `subscriptions/listen` streams open on this connection, by request id: each stays open (no reply)
    /// until the client cancels it or the connection ends.
    listens: Vec<RequestId>,
    /// Set while answering a request whose reply comes later (a listen stream, a call waiting for the client).
    withheld: bool,
    /// The `capabilities` the client declared in `initialize`.
    client_capabilities: Value,
    /// The tool calls waiting for the client's answer to a request of the server's: its id, the call's id, the
    /// request's method.
    asks: Vec<(String, RequestId, &'static str)>,
    /// How many requests the server sent the client (their ids count up).
    asked: u64,
    /// Set by the planted bug [`Mutant::CrashesOnMalformedAnswer`] on an answer it cannot read: the process exits.
    crashed: bool,
    /// Set by the planted bug [`Mutant::HangsOnMalformedAnswer`] on an answer it cannot read: the call that waited
    /// for it is never answered.
    hung: bool,
}

impl CalcConnection {
    /// A connection of a server that serves only the modern era: its era is fixed before its first message, so an
    /// `initialize` is refused as on any modern connection.
    pub fn modern_only() -> CalcConnection {
        CalcConnection { era: Some(Era::Modern), ..CalcConnection::default() }
    }

    /// The same connection, serving the conformance suite's fixtures too.
    pub fn with_fixtures(self) -> CalcConnection {
        CalcConnection { fixtures: true, ..self }
    }

    /// Ends the listen stream `id` gracefully, as a server that closes it does (basic/patterns/subscriptions.mdx:
    /// a successful response to the listen request): the response, or `None` when no such stream is open.
    pub fn close_listen(&mut self, id: &RequestId) -> Option<Vec<u8>> {
        let at = self.listens.iter().position(|open| open == id)?;
        self.listens.remove(at);
        let result = json!({ "resultType": "complete", "_meta": { SUBSCRIPTION_ID_KEY: id.to_value() } });
        Some(self.encode(json!({ "jsonrpc": "2.0", "id": id.to_value(), "result": result })))
    }
}

/// A JSON-RPC error the server answers with.
struct RpcError {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl From<super::surface::Refusal> for RpcError {
    fn from(refusal: super::surface::Refusal) -> RpcError {
        RpcError { code: refusal.code, message: refusal.message, data: refusal.data }
    }
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into(), data: None }
    }

    fn method_not_found(method: &str) -> RpcError {
        RpcError { data: Some(Value::String(method.into())), ..RpcError::new(METHOD_NOT_FOUND, "Method not found") }
    }
}

type Reply = Result<Value, RpcError>;

impl ServerConnection for CalcConnection {
    /// As every server connection, but a call the planted bug [`Mutant::HangsOnMalformedAnswer`] left unanswered
    /// is one its handler never returns from: the client's wait at the end is reported as an async server's is
    /// (the long wait of [`crate::server::adapter::async_lines::HANG_WAIT`]).
    fn close(&mut self, out: &mut Vec<Vec<u8>>) -> Option<u64> {
        self.release(out);
        self.hung.then(|| crate::server::adapter::async_lines::HANG_WAIT.as_millis() as u64)
    }

    fn receive(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> Status {
        if self.has(Mutant::CrashOnBatch) && line.trim_ascii_start().starts_with(b"[") {
            return Status::Exited(70);
        }
        if self.has(Mutant::HangOnDeepNesting) && nesting_depth(line) > 100 {
            return Status::Hung;
        }
        let mut messages = Vec::new();
        if self.version == Some(BATCH_VERSION)
            && line.trim_ascii_start().starts_with(b"[")
            && let Ok(Value::Array(batch)) = serde_json::from_slice::<Value>(line)
            && !batch.is_empty()
        {
            for item in batch {
                self.handle(&serde_json::to_vec(&item).unwrap_or_default(), &mut messages, out);
            }
            // The array answers the batch with responses only (JSON-RPC 2.0 §6); a message of the server's own (a
            // request to the client, a notification) goes on a line of its own, before it.
            let (own, responses): (Vec<Value>, Vec<Value>) =
                messages.into_iter().partition(|message| message.get("method").is_some());
            out.extend(own.into_iter().map(|message| self.encode(message)));
            if !responses.is_empty() {
                let items: Vec<Vec<u8>> = responses.into_iter().map(|message| self.encode(message)).collect();
                out.push([&b"["[..], &items.join(&b","[..]), b"]"].concat());
            }
            if self.crashed {
                return Status::Exited(70);
            }
            return Status::Running;
        }
        self.handle(line, &mut messages, out);
        if self.crashed {
            return Status::Exited(70);
        }
        out.extend(messages.into_iter().map(|message| self.encode(message)));
        Status::Running
    }
}

impl CalcConnection {
    /// Handles one message (a line, or an item of a batch): its replies go to `messages`, a planted log line
    /// straight to `out`.
    fn handle(&mut self, line: &[u8], messages: &mut Vec<Value>, out: &mut Vec<Vec<u8>>) {
        match Frame::parse(line) {
            Frame::Response(response) => self.answered(response, messages),
            Frame::Blank => {}
            Frame::NotJson { .. } => {
                self.wedged |= self.has(Mutant::WedgedAfterParseError);
                messages.push(error_message(Value::Null, RpcError::new(PARSE_ERROR, "Parse error")));
            }
            Frame::Batch(_) => messages.push(error_message(
                Value::Null,
                RpcError::new(INVALID_REQUEST, "Invalid Request: MCP does not accept batches"),
            )),
            Frame::NotObject(_) => messages.push(error_message(
                Value::Null,
                RpcError::new(INVALID_REQUEST, "Invalid Request: a message must be a JSON object"),
            )),
            Frame::Invalid { problem, id: Some(id), method: Some(method) }
                if self.has(Mutant::ServesInvalidRequest)
                    && matches!(problem, Problem::JsonrpcMissing | Problem::JsonrpcNotTwoPointZero) =>
            {
                let params = serde_json::from_slice::<Value>(line).ok().and_then(|v| v.get("params").cloned());
                self.answer(&Request { id, method, params }, messages, out);
            }
            // A broken response from the client is not answered: a reply would carry an id of the client's own.
            Frame::Invalid { method: None, .. } if looks_like_response(line) => {}
            Frame::Invalid { problem, id, .. } => {
                let id = id.map_or(Value::Null, |id| id.to_value());
                messages.push(error_message(id, RpcError::new(INVALID_REQUEST, format!("Invalid Request: {problem}"))));
            }
            Frame::Notification(notification) => {
                // The client ends a listen stream by cancelling it; no reply is owed then.
                if notification.method == CANCELLED
                    && let Some(id) = notification.params.as_ref().and_then(|p| p.get("requestId"))
                {
                    self.listens.retain(|open| open.to_value() != *id);
                    // A call the client cancelled while it waited for the client's answer is not answered.
                    self.asks.retain(|(_, call, _)| call.to_value() != *id);
                }
                if self.has(Mutant::NotificationSelectsEra) {
                    self.era.get_or_insert(Era::Handshake);
                }
                if self.has(Mutant::NotificationReply) {
                    messages.push(json!({ "jsonrpc": "2.0", "id": null, "result": {} }));
                }
            }
            Frame::Request(request) if !self.wedged => self.answer(&request, messages, out),
            Frame::Request(_) => {}
        }
    }

    fn has(&self, mutant: Mutant) -> bool {
        self.mutant == Some(mutant)
    }

    /// Answers a request: its response goes to `messages`; a planted log line goes straight to `out`.
    fn answer(&mut self, request: &Request, messages: &mut Vec<Value>, out: &mut Vec<Vec<u8>>) {
        let reply = self.request(request);
        messages.append(&mut self.notices);
        if std::mem::take(&mut self.withheld) {
            return;
        }
        let response = match reply {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": request.id.to_value(), "result": result }),
            Err(error) => error_message(request.id.to_value(), error),
        };
        if request.method == TOOLS_CALL {
            if self.has(Mutant::ElicitsUndeclared) && self.era == Some(Era::Handshake) {
                self.elicited += 1;
                messages.push(json!({
                    "jsonrpc": "2.0",
                    "id": format!("calc-elicit-{}", self.elicited),
                    "method": ELICITATION_CREATE,
                    "params": confirm_elicitation(),
                }));
            }
            if self.has(Mutant::LogsUnrequested) && self.era == Some(Era::Modern) {
                messages.push(log_message("info"));
            }
            let asked_level = request.params.as_ref().and_then(|p| p.get(META)?.get(LOG_LEVEL_KEY)).is_some();
            if self.has(Mutant::LogsBelowLevel) && self.era == Some(Era::Modern) && asked_level {
                messages.push(log_message("debug"));
            }
            if self.has(Mutant::LogsUndeclared) && self.era == Some(Era::Handshake) {
                messages.push(log_message("info"));
            }
            if self.has(Mutant::LogOnStdout) {
                out.push(b"calc: tools/call add".to_vec());
            }
            if self.has(Mutant::DuplicateReply) {
                messages.push(response.clone());
            }
        }
        messages.push(response);
        let token = request.params.as_ref().and_then(|params| params.get(META)?.get(PROGRESS_TOKEN_KEY));
        if let (true, true, Some(token)) = (request.method == TOOLS_CALL, self.has(Mutant::ProgressAfterResult), token)
        {
            let params = json!({ PROGRESS_TOKEN_KEY: token, "progress": 1, "total": 1 });
            messages.push(json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": params }));
        }
    }

    fn request(&mut self, request: &Request) -> Reply {
        let params = request.params.as_ref();
        let era = *self.era.get_or_insert_with(|| envelope::opening_era(&request.method, params));
        match era {
            Era::Handshake => {
                let mut result = self.handshake_request(request)?;
                if let (true, Some(object)) = (self.has(Mutant::HandshakeResultType), result.as_object_mut()) {
                    object.insert("resultType".into(), json!("complete"));
                }
                Ok(result)
            }
            Era::Modern => self.modern_request(request),
        }
    }

    fn handshake_request(&mut self, request: &Request) -> Reply {
        let params = request.params.as_ref();
        if request.method == DISCOVER && self.has(Mutant::NotificationSelectsEra) {
            return Err(RpcError::method_not_found(DISCOVER));
        }
        if envelope::carries_modern_envelope(&request.method, params) && !self.has(Mutant::HandshakeAcceptsModern) {
            return Err(RpcError::new(INVALID_REQUEST, HANDSHAKE_REFUSES_MODERN));
        }
        match request.method.as_str() {
            INITIALIZE => self.initialize(params),
            PING => Ok(json!({})),
            SET_LEVEL | COMPLETE | SUBSCRIBE | UNSUBSCRIBE if self.fixtures && !self.initialized => {
                Err(RpcError::new(INVALID_PARAMS, "the connection is not initialized: send initialize first"))
            }
            TOOLS_LIST | TOOLS_CALL | PROMPTS_LIST | RESOURCES_LIST | PROMPTS_GET | RESOURCES_READ | TEMPLATES_LIST
                if !self.initialized =>
            {
                Err(RpcError::new(INVALID_PARAMS, "the connection is not initialized: send initialize first"))
            }
            _ => self.serve_method(request, Era::Handshake),
        }
    }

    fn initialize(&mut self, params: Option<&Value>) -> Reply {
        if self.initialized {
            return Err(RpcError::new(INVALID_REQUEST, "initialize may be sent only once per connection"));
        }
        let invalid = || RpcError::new(INVALID_PARAMS, "initialize needs protocolVersion, capabilities and clientInfo");
        let params = params.and_then(Value::as_object).ok_or_else(invalid)?;
        let requested = params.get("protocolVersion").and_then(Value::as_str).ok_or_else(invalid)?;
        let client_info = params.get("clientInfo").and_then(Value::as_object).ok_or_else(invalid)?;
        let named = client_info.get("name").is_some_and(Value::is_string)
            && client_info.get("version").is_some_and(Value::is_string);
        if !params.get("capabilities").is_some_and(Value::is_object) || !named {
            return Err(invalid());
        }
        let version = HANDSHAKE_VERSIONS.into_iter().find(|v| *v == requested).unwrap_or(LATEST_HANDSHAKE_VERSION);
        self.initialized = true;
        self.version = Some(version);
        self.client_capabilities = params.get("capabilities").cloned().unwrap_or_default();
        Ok(json!({
            "protocolVersion": version,
            "capabilities": capabilities(false, self.fixtures),
            "serverInfo": server_info(),
        }))
    }

    /// Answers a request on a modern connection: envelope checks first, then the method.
    fn modern_request(&mut self, request: &Request) -> Reply {
        let params = request.params.as_ref();
        if request.method == INITIALIZE {
            if self.has(Mutant::ModernAcceptsInitialize) {
                return self.initialize(params);
            }
            let mut data = json!({ "supported": MODERN_VERSIONS });
            if let Some(requested) = params.and_then(|p| p.get("protocolVersion")).filter(|v| v.is_string()) {
                data["requested"] = requested.clone();
            }
            return Err(RpcError {
                data: Some(data),
                ..RpcError::new(UNSUPPORTED_PROTOCOL_VERSION, MODERN_REFUSES_INITIALIZE)
            });
        }
        let meta = envelope::meta(params).ok_or_else(|| RpcError::new(INVALID_PARAMS, META_NOT_OBJECT))?;
        let mut missing = envelope::missing_keys(meta);
        if !missing.is_empty() {
            if self.has(Mutant::WrongMissingKey) {
                missing = vec![PROTOCOL_VERSION_KEY];
            }
            return Err(RpcError::new(INVALID_PARAMS, format!("{MISSING_KEYS_PREFIX}{}", missing.join(", "))));
        }
        let Some(version) = meta.get(PROTOCOL_VERSION_KEY).and_then(Value::as_str) else {
            return Err(RpcError::new(INVALID_PARAMS, "the protocol-version envelope value must be a string"));
        };
        if !MODERN_VERSIONS.contains(&version) && !self.has(Mutant::AcceptsAnyVersion) {
            let data = json!({ "supported": MODERN_VERSIONS, "requested": version });
            return Err(RpcError {
                data: (!self.has(Mutant::UnsupportedVersionNoData)).then_some(data),
                ..RpcError::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
            });
        }
        if !meta.get(CLIENT_CAPABILITIES_KEY).is_some_and(Value::is_object) {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "Invalid request parameters: clientCapabilities must be an object",
            ));
        }
        let mut result = match request.method.as_str() {
            DISCOVER => {
                json!({ "supportedVersions": MODERN_VERSIONS, "capabilities": capabilities(true, self.fixtures) })
            }
            LISTEN => return self.listen(request),
            PING if self.has(Mutant::ModernServesPing) => json!({}),
            _ => self.serve_method(request, Era::Modern)?,
        };
        self.stamp_modern(&request.method, &mut result);
        if request.method == TOOLS_CALL && self.has(Mutant::InputRequiredUndeclared) {
            // Asks for an elicitation whatever the request's clientCapabilities declared.
            result = json!({
                "resultType": "input_required",
                "inputRequests": { "confirm": { "method": ELICITATION_CREATE, "params": confirm_elicitation() } },
                "requestState": "calc-add",
                "_meta": { SERVER_INFO_KEY: server_info() },
            });
        }
        Ok(result)
    }

    /// The methods both eras serve the same way (but the code for an unknown resource), the fixtures' methods
    /// when it serves them, and method-not-found for the rest.
    fn serve_method(&mut self, request: &Request, era: Era) -> Reply {
        let (method, params) = (request.method.as_str(), request.params.as_ref());
        let surface = super::surface::CalcSurface { mutant: self.mutant, era };
        if matches!(method, TOOLS_LIST | PROMPTS_LIST | RESOURCES_LIST | TEMPLATES_LIST)
            && params.and_then(|p| p.get("cursor")).is_some()
            && !self.has(Mutant::CursorIgnored)
        {
            return Err(RpcError::new(INVALID_PARAMS, "Invalid cursor"));
        }
        if self.fixtures
            && let Some(reply) = self.serve_fixture(request, era)
        {
            return reply;
        }
        if method == TOOLS_CALL
            && self.reads_answers_unchecked()
            && let Some(reply) = self.ask_before_calling(request, era)
        {
            return reply;
        }
        let fixtures = |own: Vec<Value>, theirs: fn() -> Vec<Value>| {
            if self.fixtures { own.into_iter().chain(theirs()).collect() } else { own }
        };
        match method {
            TOOLS_LIST => Ok(json!({ "tools": fixtures(surface.tools(), fixtures::tools) })),
            TOOLS_CALL => surface.call_tool(params).map_err(RpcError::from),
            PROMPTS_LIST if !self.has(Mutant::AdvertisedButMissing) => {
                Ok(json!({ "prompts": fixtures(surface.prompts(), fixtures::prompts) }))
            }
            PROMPTS_GET => surface.get_prompt(params).map_err(RpcError::from),
            RESOURCES_LIST => Ok(json!({ "resources": fixtures(surface.resources(), fixtures::resources) })),
            TEMPLATES_LIST => Ok(json!({ "resourceTemplates": fixtures(surface.templates(), fixtures::templates) })),
            RESOURCES_READ => surface.read_resource(params).map_err(RpcError::from),
            COMPLETE if self.has(Mutant::CompletionOverflow) => {
                let values: Vec<String> = (0..101).map(|i| format!("calc-{i}")).collect();
                Ok(json!({ "completion": { "values": values, "hasMore": false } }))
            }
            other => Err(RpcError::method_not_found(other)),
        }
    }

    /// A fixture's answer ([`fixtures`]), or `None` when the request is not one of theirs. Notifications a fixture
    /// tool sends go to [`CalcConnection::notices`].
    fn serve_fixture(&mut self, request: &Request, era: Era) -> Option<Reply> {
        let (method, params) = (request.method.as_str(), request.params.as_ref());
        let object = params.and_then(Value::as_object);
        let name = object.and_then(|p| p.get("name")).and_then(Value::as_str);
        let reply = match (method, era) {
            (TOOLS_CALL, Era::Handshake) if fixtures::mid_call_request(name?, None).is_some() => {
                let arguments = object.and_then(|p| p.get("arguments"));
                let (capability, method, params) = fixtures::mid_call_request(name?, arguments)?;
                self.ask(&request.id, capability, method, params)
            }
            (TOOLS_CALL, _) => {
                let object = object?;
                let level = match era {
                    Era::Handshake => self.log_level,
                    Era::Modern => fixtures::requested_level(object),
                };
                let called = fixtures::call_tool(name?, object, era, level)?;
                self.notices.extend(called.notifications);
                called.reply.map_err(RpcError::from)
            }
            (PROMPTS_GET, _) => fixtures::get_prompt(name?, object?, era)?.map_err(RpcError::from),
            (RESOURCES_READ, _) => {
                let uri = object?.get("uri")?.as_str()?;
                Ok(fixtures::read_resource(uri)?)
            }
            (COMPLETE, _) => fixtures::complete(params).map_err(RpcError::from),
            (SET_LEVEL, Era::Handshake) => {
                let level = object.and_then(|p| p.get("level")).and_then(Value::as_str);
                match level.and_then(crate::protocol::logging::level_index) {
                    Some(index) => {
                        self.log_level = Some(index);
                        Ok(json!({}))
                    }
                    None => Err(RpcError::new(INVALID_PARAMS, "logging/setLevel needs a level")),
                }
            }
            (SUBSCRIBE | UNSUBSCRIBE, Era::Handshake) => match object.and_then(|p| p.get("uri")) {
                Some(Value::String(_)) => Ok(json!({})),
                _ => Err(RpcError::new(INVALID_PARAMS, format!("{method} needs a uri"))),
            },
            _ => return None,
        };
        Some(reply)
    }

    /// Opens a `subscriptions/listen` stream (basic/patterns/subscriptions.mdx): the acknowledgement first, with
    /// the honoured subset of the filter (the list-changed kinds and the resource URIs it asked for; calc's lists
    /// and resources never change, so nothing follows it) and the subscription id, the listen request's id; the
    /// stream stays open, unanswered.
    fn listen(&mut self, request: &Request) -> Reply {
        let filter = request.params.as_ref().and_then(|p| p.get("notifications"));
        let Some(filter) = filter.and_then(Value::as_object) else {
            return Err(RpcError::new(INVALID_PARAMS, "subscriptions/listen needs a notifications object"));
        };
        let mut honoured: serde_json::Map<String, Value> = filter
            .iter()
            .filter(|(kind, wanted)| LIST_CHANGED_KINDS.contains(&kind.as_str()) && **wanted == json!(true))
            .map(|(kind, _)| (kind.clone(), json!(true)))
            .collect();
        if let Some(Value::Array(uris)) = filter.get("resourceSubscriptions") {
            let uris: Vec<Value> = uris.iter().filter(|uri| uri.is_string()).cloned().collect();
            honoured.insert("resourceSubscriptions".into(), Value::Array(uris));
        }
        let id = request.id.to_value();
        self.notices.push(json!({ "jsonrpc": "2.0", "method": ACKNOWLEDGED,
            "params": { "notifications": honoured, "_meta": { SUBSCRIPTION_ID_KEY: id } } }));
        if self.has(Mutant::ListenUnfiltered) {
            self.notices.push(json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                "params": { "_meta": { SUBSCRIPTION_ID_KEY: id } } }));
        }
        self.listens.push(request.id.clone());
        self.withheld = true;
        Ok(json!({}))
    }

    /// A handshake-era fixture tool that asks the client mid-call ([`fixtures::mid_call_request`]): the request
    /// goes out and the call's reply waits for the answer, when the client declared the capability; otherwise the
    /// call says it cannot ask (a server must not use what the client did not declare).
    fn ask(&mut self, call: &RequestId, capability: &str, method: &'static str, params: Value) -> Reply {
        if !self.client_capabilities.get(capability).is_some_and(Value::is_object) {
            let text = format!("The client did not declare {capability}, so nothing was asked");
            return Ok(json!({ "content": [{ "type": "text", "text": text }] }));
        }
        self.asked += 1;
        let id = format!("calc-ask-{}", self.asked);
        self.notices.push(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.asks.push((id, call.clone(), method));
        self.withheld = true;
        Ok(json!({}))
    }

    /// True for the planted bugs that ask before a call and read the answer without a check.
    fn reads_answers_unchecked(&self) -> bool {
        self.has(Mutant::CrashesOnMalformedAnswer) || self.has(Mutant::HangsOnMalformedAnswer)
    }

    /// What the planted bug does with an answer of the wrong shape: the process exits
    /// ([`Mutant::CrashesOnMalformedAnswer`]), or the call is never answered ([`Mutant::HangsOnMalformedAnswer`]).
    fn misread_answer(&mut self) {
        self.crashed |= self.has(Mutant::CrashesOnMalformedAnswer);
        self.hung |= self.has(Mutant::HangsOnMalformedAnswer);
    }

    /// The planted bugs [`Mutant::CrashesOnMalformedAnswer`] and [`Mutant::HangsOnMalformedAnswer`]: a call of `add`
    /// first asks the client what it declared (a sampling in the handshake era; a confirmation through
    /// `input_required` in 2026-07-28, whose retry it reads without a check, failing on an answer of the wrong
    /// shape). `None` to serve the call as usual.
    fn ask_before_calling(&mut self, request: &Request, era: Era) -> Option<Reply> {
        let params = request.params.as_ref();
        if params?.get("name")? != "add" {
            return None;
        }
        match era {
            Era::Handshake if self.client_capabilities.get("sampling").is_some_and(Value::is_object) => {
                let prompt = json!({ "prompt": "Should calc add these?" });
                let (capability, method, asked) = fixtures::mid_call_request("test_sampling", Some(&prompt))?;
                Some(self.ask(&request.id, capability, method, asked))
            }
            Era::Handshake => None,
            Era::Modern => {
                let declared = params?.get(META)?.get(CLIENT_CAPABILITIES_KEY)?.get("elicitation")?.is_object();
                match params?.get("inputResponses") {
                    None if declared => Some(Ok(json!({
                        "resultType": "input_required",
                        "inputRequests": { "confirm": { "method": ELICITATION_CREATE, "params": confirm_elicitation() } },
                        "requestState": "calc-add",
                    }))),
                    None => None,
                    Some(responses) => {
                        let confirm = responses.get("confirm").unwrap_or(&Value::Null);
                        if fixtures::malformed_answer(ELICITATION_CREATE, confirm).is_some() {
                            self.misread_answer();
                            // The retry is the call itself: its reply is withheld.
                            self.withheld |= self.hung;
                        }
                        None
                    }
                }
            }
        }
    }

    /// The client answered a request of the server's: the call that waited for it gets its reply. Other responses
    /// are not answered (a reply would carry an id of the client's own).
    fn answered(&mut self, response: crate::protocol::Response, messages: &mut Vec<Value>) {
        let crate::protocol::ResponseId::Id(RequestId::String(id)) = &response.id else { return };
        let Some(at) = self.asks.iter().position(|(asked, _, _)| asked == id) else { return };
        let (_, call, method) = self.asks.remove(at);
        if let (true, crate::protocol::Outcome::Result(result)) = (self.reads_answers_unchecked(), &response.outcome)
            && fixtures::malformed_answer(method, result).is_some()
        {
            self.misread_answer();
            return;
        }
        let result = match &response.outcome {
            crate::protocol::Outcome::Result(result) => fixtures::mid_call_result(method, Ok(result)),
            crate::protocol::Outcome::Error(error) => fixtures::mid_call_result(method, Err(&error.message)),
        };
        messages.push(json!({ "jsonrpc": "2.0", "id": call.to_value(), "result": result }));
    }

    /// Adds what every modern result carries: `resultType`, the caching hints where the method is cacheable, and
    /// the serverInfo stamp in `_meta`.
    fn stamp_modern(&self, method: &str, result: &mut Value) {
        let Some(object) = result.as_object_mut() else { return };
        if !self.has(Mutant::NoResultType) {
            object.entry("resultType").or_insert_with(|| json!("complete"));
        }
        if CACHEABLE.contains(&method) && !self.has(Mutant::NoCacheHints) {
            object.insert("ttlMs".into(), json!(0));
            object.insert("cacheScope".into(), json!("private"));
        }
        if !self.has(Mutant::NoServerInfo) {
            object.insert("_meta".into(), json!({ SERVER_INFO_KEY: server_info() }));
        }
    }

    /// Serializes one message, with the output bug of the planted mutant applied.
    fn encode(&self, mut message: Value) -> Vec<u8> {
        if let Some(mutant) = self.mutant {
            plant_output_bug(mutant, &mut message);
        }
        serde_json::to_vec(&message).unwrap_or_default()
    }
}

/// Applies a mutant's output bug to a message about to be written (mutants without one leave it alone).
fn plant_output_bug(mutant: Mutant, message: &mut Value) {
    let Some(object) = message.as_object_mut() else { return };
    let is_error = object.contains_key("error");
    match mutant {
        Mutant::IdAsString => {
            if let Some(Value::Number(n)) = object.get("id") {
                let text = n.to_string();
                object.insert("id".into(), Value::String(text));
            }
        }
        Mutant::BigIdRounded => {
            let as_double = object.get("id").and_then(Value::as_number).and_then(|n| n.to_string().parse::<f64>().ok());
            if let Some(rounded) = as_double.and_then(|f| format!("{f:.0}").parse::<serde_json::Number>().ok()) {
                object.insert("id".into(), Value::Number(rounded));
            }
        }
        Mutant::NullIdOnError if is_error => {
            object.insert("id".into(), Value::Null);
        }
        Mutant::JsonrpcNumber if !is_error => {
            object.insert("jsonrpc".into(), json!(2.0));
        }
        Mutant::ResultAndError if is_error => {
            object.insert("result".into(), Value::Null);
        }
        Mutant::FloatErrorCode => {
            if let Some(error) = object.get_mut("error").and_then(Value::as_object_mut) {
                let code = error.get("code").map(Value::to_string).unwrap_or_default();
                if let Ok(float) = format!("{code}.0").parse::<serde_json::Number>() {
                    error.insert("code".into(), Value::Number(float));
                }
            }
        }
        _ => {}
    }
}

/// True for an object that carries `result` or `error` and no `method`: a response, however broken.
fn looks_like_response(line: &[u8]) -> bool {
    serde_json::from_slice::<Value>(line).ok().and_then(|v| v.as_object().cloned()).is_some_and(|object| {
        !object.contains_key("method") && (object.contains_key("result") || object.contains_key("error"))
    })
}

/// How deeply arrays and objects nest in a line, counted on the bytes (strings skipped), so it works on lines too
/// deep to parse.
fn nesting_depth(line: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &byte in line {
        match (in_string, escaped, byte) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, _, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The capabilities of either era: the same keys, listChanged and subscribe on only in the modern era (served by
/// `subscriptions/listen`). With the fixtures, logging and completions too, and subscribe in both eras.
fn capabilities(modern: bool, fixtures: bool) -> Value {
    let mut capabilities = json!({
        "prompts": { "listChanged": modern },
        "resources": { "listChanged": modern, "subscribe": modern || fixtures },
        "tools": { "listChanged": modern },
    });
    if fixtures {
        capabilities["logging"] = json!({});
        capabilities["completions"] = json!({});
    }
    capabilities
}

/// The `subscriptions/listen` filter keys of the list-changed notifications.
const LIST_CHANGED_KINDS: [&str; 3] = ["toolsListChanged", "promptsListChanged", "resourcesListChanged"];

/// The `notifications/message` the planted logging bugs send from a `tools/call`, at `level`.
fn log_message(level: &str) -> Value {
    let params = json!({ "level": level, "logger": "calc", "data": "tools/call" });
    json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": params })
}

/// The params of the elicitation the planted bugs ask for: a confirmation, with nothing to fill in.
fn confirm_elicitation() -> Value {
    json!({ "message": "Add these numbers?", "requestedSchema": { "type": "object", "properties": {} } })
}

fn server_info() -> Value {
    json!({ "name": SERVER_NAME, "version": SERVER_VERSION })
}

fn error_message(id: Value, error: RpcError) -> Value {
    let mut object = json!({ "code": error.code, "message": error.message });
    if let Some(data) = error.data {
        object["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": object })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Sends each line on one fresh connection; returns the replies per line, parsed.
    fn talk(lines: &[Value]) -> Vec<Vec<Value>> {
        talk_on(Calc.connect(), lines)
    }

    /// Sends each line on `connection`; returns the replies per line, parsed.
    pub(in crate::server::builtin) fn talk_on(mut connection: CalcConnection, lines: &[Value]) -> Vec<Vec<Value>> {
        lines
            .iter()
            .map(|line| {
                let mut out = Vec::new();
                assert_eq!(connection.receive(&serde_json::to_vec(line).unwrap(), &mut out), Status::Running);
                out.iter().map(|l| serde_json::from_slice(l).unwrap()).collect()
            })
            .collect()
    }

    fn modern(id: i64, method: &str, version: Value) -> Value {
        json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"_meta":{
            PROTOCOL_VERSION_KEY: version, CLIENT_CAPABILITIES_KEY: {}}}})
    }

    fn initialize(id: i64) -> Value {
        json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{"protocolVersion":"2024-11-05",
            "capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    }

    #[test]
    fn a_modern_connection_refuses_initialize_and_removed_methods() {
        let replies = talk(&[
            modern(1, "tools/list", json!("2026-07-28")),
            initialize(2),
            modern(3, "ping", json!("2026-07-28")),
        ]);
        assert_eq!(replies[0][0]["result"]["ttlMs"], json!(0));
        assert_eq!(replies[1][0]["error"]["code"], json!(UNSUPPORTED_PROTOCOL_VERSION));
        assert_eq!(replies[1][0]["error"]["data"], json!({"supported":["2026-07-28"],"requested":"2024-11-05"}));
        assert_eq!(replies[2][0]["error"]["code"], json!(METHOD_NOT_FOUND));
    }

    #[test]
    fn the_envelope_ladder_answers_in_order() {
        let no_meta = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"});
        let number_version = modern(3, "tools/list", json!(20260728));
        let replies = talk(&[modern(1, "server/discover", json!("2026-07-28")), no_meta, number_version]);
        assert_eq!(replies[0][0]["result"]["supportedVersions"], json!(["2026-07-28"]));
        assert_eq!(replies[1][0]["error"], json!({"code": INVALID_PARAMS, "message": META_NOT_OBJECT}));
        assert_eq!(replies[2][0]["error"]["code"], json!(INVALID_PARAMS));
    }

    #[test]
    fn a_handshake_connection_negotiates_and_gates() {
        let early = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
        let replies = talk(&[early.clone(), initialize(2), early, initialize(4)]);
        assert_eq!(replies[0][0]["error"]["code"], json!(INVALID_PARAMS));
        assert_eq!(replies[1][0]["result"]["protocolVersion"], json!("2024-11-05"));
        assert!(replies[1][0]["result"].get("resultType").is_none());
        assert_eq!(replies[2][0]["result"]["tools"][0]["name"], json!("add"));
        assert_eq!(replies[3][0]["error"]["code"], json!(INVALID_REQUEST));
    }

    #[test]
    fn unknown_versions_get_the_latest_handshake_version() {
        let mut init = initialize(1);
        init["params"]["protocolVersion"] = json!("2026-07-28");
        assert_eq!(talk(&[init])[0][0]["result"]["protocolVersion"], json!(LATEST_HANDSHAKE_VERSION));
    }

    #[test]
    fn tool_argument_errors_are_tool_results() {
        let call = |id: i64, arguments: Value| {
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"add","arguments":arguments,
                "_meta":{PROTOCOL_VERSION_KEY:"2026-07-28",CLIENT_CAPABILITIES_KEY:{}}}})
        };
        let huge = json!({"a": 170141183460469231731687303715884105727_i128, "b": 1});
        let replies = talk(&[call(1, json!({"a": "1", "b": 2})), call(2, huge), call(3, json!({"a": -4, "b": 1}))]);
        assert_eq!(replies[0][0]["result"]["isError"], json!(true));
        assert_eq!(replies[1][0]["result"]["isError"], json!(true));
        assert_eq!(replies[2][0]["result"]["structuredContent"]["result"], json!(-3));
    }

    #[test]
    fn notifications_and_stray_responses_get_nothing() {
        let replies = talk(&[
            json!({"jsonrpc":"2.0","method":"notifications/whatever"}),
            json!({"jsonrpc":"2.0","id":4,"result":{}}),
            json!({"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}),
            json!({"id":6,"error":{"code":1.5}}),
        ]);
        assert!(replies.iter().all(Vec::is_empty), "{replies:?}");
        assert_eq!(talk(&[json!({"jsonrpc":"2.0","id":7})])[0][0]["error"]["code"], json!(INVALID_REQUEST));
    }

    #[test]
    fn a_bare_initialized_notification_does_not_spend_the_handshake() {
        let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
        let replies = talk(&[ping, json!({"jsonrpc":"2.0","method":"notifications/initialized"}), initialize(2)]);
        assert_eq!(replies[2][0]["result"]["protocolVersion"], json!("2024-11-05"));
    }
}
