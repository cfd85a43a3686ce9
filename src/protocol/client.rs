//! The harness as an MCP client: the client capabilities a conversation declared in its `initialize`, the line the
//! harness writes back to each request a server sends it, and the retry of a 2026-07-28 request the server answered
//! with `input_required`.
//!
//! A `ping` gets an empty result. `sampling/createMessage`, `elicitation/create` and `roots/list` get a valid result
//! when the conversation declared the capability (and, for tool-enabled sampling or a URL elicitation, the
//! sub-capability): a text message, an accepted form filled from its schema, one root. Otherwise they get the error
//! a client that does not offer the method answers with: -32601, or -32602 for a mode or tool use it did not
//! declare. Any other method gets -32601. A conversation may ask for answers of another style (below): declined,
//! refused, malformed, late (after a `ping` of the client's own) or none (the client cancels its own requests
//! instead, as when its user dismisses the server's question).
//!
//! An `input_required` result (patterns/mrtr.mdx) gets the retry a client sends: the same method and params with a
//! new id, `inputResponses` answering each input request the request's `clientCapabilities` declared, and
//! `requestState` echoed. A request, or a conversation's `initialize`, may ask for answers in another style
//! ([`Answers`], under [`ANSWERS_KEY`] in its `_meta`): declined, refused, or a retry with its state tampered with
//! or dropped, or its inputs missing, extra or mistyped.
//!
//! Every transport (in-process, stdio, HTTP) calls [`Client::sent`] on every line it writes, and [`Client::answer`]
//! and [`Client::retry`] on every line it reads; the oracle judges a server's requests by the same [`undeclared`].

use super::codes::{INVALID_PARAMS, METHOD_NOT_FOUND};
use super::envelope::{CLIENT_CAPABILITIES_KEY, META, PROGRESS_TOKEN_KEY};
use super::message::mentions;
use super::methods::{
    CANCELLED, ELICITATION_CREATE, GATED_SERVER_REQUESTS, INITIALIZE, PING, PROMPTS_GET, RESOURCES_READ, ROOTS_LIST,
    SAMPLING_CREATE, TOOLS_CALL,
};
use super::{Frame, Outcome, ResponseId};
use serde_json::{Map, Value, json};

/// The most requests of a server the harness answers in one conversation: a server that sends a new request for
/// every answer is not followed forever.
pub const MAX_ANSWERS: usize = 64;

/// The root the harness offers when it declared `roots`.
pub const ROOT_URI: &str = "file:///tmp/mcp-wirefuzz";

/// The `_meta` key of a request (or of a conversation's `initialize`) that asks the harness to answer in a style
/// of [`Answers`]: the style's name. A key of the harness's own; servers ignore `_meta` keys they do not know.
pub const ANSWERS_KEY: &str = "dev.wirefuzz/answers";

/// The most retries of one request that went `input_required`: a server that asks again every round is not
/// followed forever.
pub const MAX_ROUNDS: usize = 4;

/// How the harness answers a server's requests, and retries an `input_required` request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Answers {
    /// Valid answers: a text message, an accepted form filled from its schema, one root.
    #[default]
    Accept,
    /// Elicitations declined (the rest as [`Answers::Accept`]).
    Decline,
    /// Every request of the server's refused with a JSON-RPC error (handshake era; in a retry, where inputs are
    /// results, as [`Answers::MistypedInput`]).
    Refuse,
    /// A retry whose `requestState` is not the one the server sent (a byte appended).
    TamperState,
    /// A retry without the `requestState` the server sent.
    DropState,
    /// A retry without the first input asked for.
    MissingInput,
    /// A retry with an input nobody asked for, beside the ones asked for.
    ExtraInput,
    /// A retry whose inputs are strings, not results.
    MistypedInput,
    /// A retry whose `requestState` is a stale one: the state of the `input_required` result the client got before
    /// this one in the conversation (an earlier round's, or another request's: replayed), none when there was none.
    StaleState,
    /// Results that break their schema (a sampling result with a role no message has, an elicitation with an
    /// action there is none of, roots that are not a list); in a retry, inputs of that shape.
    Malformed,
    /// Each answer after a `ping` of the client's own: the server reads a request while it waits for the answer
    /// (in a retry, as [`Answers::Accept`]).
    Late,
    /// No answer: the client cancels its own requests still unanswered instead (`notifications/cancelled`), as
    /// when its user dismisses the server's question; in the modern era, no retry.
    Ignore,
}

impl Answers {
    /// Every style.
    pub const ALL: [Answers; 12] = [
        Answers::Accept,
        Answers::Decline,
        Answers::Refuse,
        Answers::TamperState,
        Answers::DropState,
        Answers::MissingInput,
        Answers::ExtraInput,
        Answers::MistypedInput,
        Answers::StaleState,
        Answers::Malformed,
        Answers::Late,
        Answers::Ignore,
    ];

    /// The name [`ANSWERS_KEY`] carries.
    pub fn name(self) -> &'static str {
        match self {
            Answers::Accept => "accept",
            Answers::Decline => "decline",
            Answers::Refuse => "refuse",
            Answers::TamperState => "tamper-state",
            Answers::DropState => "drop-state",
            Answers::MissingInput => "missing-input",
            Answers::ExtraInput => "extra-input",
            Answers::MistypedInput => "mistyped-input",
            Answers::StaleState => "stale-state",
            Answers::Malformed => "malformed",
            Answers::Late => "late",
            Answers::Ignore => "ignore",
        }
    }

    /// The style a request's (or an `initialize`'s) params ask for; [`Answers::Accept`] when none or unknown.
    pub fn of(params: Option<&Value>) -> Answers {
        let named = params.and_then(|p| p.get(META)).and_then(|meta| meta.get(ANSWERS_KEY)).and_then(Value::as_str);
        Answers::ALL.into_iter().find(|style| Some(style.name()) == named).unwrap_or_default()
    }

    /// True for the styles that break a retry on purpose: the server may refuse it.
    pub fn breaks_retries(self) -> bool {
        matches!(
            self,
            Answers::Refuse
                | Answers::TamperState
                | Answers::DropState
                | Answers::MissingInput
                | Answers::ExtraInput
                | Answers::MistypedInput
                | Answers::StaleState
                | Answers::Malformed
        )
    }

    /// True for the styles in which a server's request gets no valid answer (an error, a malformed result, or
    /// none): the server's work that waited for it may end in an error.
    pub fn breaks_answers(self) -> bool {
        matches!(self, Answers::Refuse | Answers::Malformed | Answers::Ignore)
    }
}

/// A request the harness sent that a server may answer with `input_required`, until it is answered.
#[derive(Clone, Debug)]
struct Asked {
    id: Value,
    method: String,
    params: Value,
    /// The retries before this one in its chain.
    rounds: usize,
}

/// What one conversation's client declared, and how many of the server's requests it answered.
#[derive(Clone, Debug, Default)]
pub struct Client {
    /// The `capabilities` of the conversation's first `initialize` (an empty object when they were not one).
    declared: Option<Map<String, Value>>,
    /// The answer style the conversation's first `initialize` asked for.
    style: Answers,
    answered: usize,
    /// The requests that may go `input_required`, newest last (at most [`MAX_ANSWERS`]).
    asked: Vec<Asked>,
    /// Retries sent, for their ids.
    retried: usize,
    /// In the [`Answers::Ignore`] style, the ids of the conversation's requests still unanswered that a handler of
    /// the server's answers (at most [`MAX_ANSWERS`]): what the client cancels instead of answering.
    open: Vec<Value>,
    /// `ping` requests of the client's own sent in the [`Answers::Late`] style, for their ids.
    pinged: usize,
    /// The `requestState` of the last `input_required` result retried ([`Answers::StaleState`] sends it later).
    last_state: Option<String>,
}

impl Client {
    /// Notes a line the harness wrote: the first `initialize` request fixes the declared capabilities and the
    /// answer style; a request that may go `input_required` is kept for its retry.
    pub fn sent(&mut self, line: &[u8]) {
        let names = |method: &str| mentions(line, method);
        let initialize = self.declared.is_none() && names(INITIALIZE);
        if !initialize && ![TOOLS_CALL, PROMPTS_GET, RESOURCES_READ].into_iter().any(names) {
            return;
        }
        if self.style == Answers::Ignore && line.trim_ascii_start().starts_with(b"[") {
            // A batch's requests are open as any others, for a client that cancels them instead of answering.
            let items = serde_json::from_slice::<Vec<Value>>(line).unwrap_or_default();
            for item in items.iter().filter(|item| item.get("params").is_some_and(Value::is_object)) {
                let method = item.get("method").and_then(Value::as_str).unwrap_or_default();
                if let Some(id) = item.get("id").filter(|_| [TOOLS_CALL, PROMPTS_GET, RESOURCES_READ].contains(&method))
                {
                    self.opened(id.clone());
                }
            }
            return;
        }
        let Frame::Request(request) = Frame::parse(line) else { return };
        if request.method == INITIALIZE && self.declared.is_none() {
            let capabilities = request.params.as_ref().and_then(|params| params.get("capabilities"));
            self.declared = Some(capabilities.and_then(Value::as_object).cloned().unwrap_or_default());
            self.style = Answers::of(request.params.as_ref());
        } else if [TOOLS_CALL, PROMPTS_GET, RESOURCES_READ].contains(&request.method.as_str())
            && let Some(params) = request.params.filter(Value::is_object)
        {
            let id = request.id.to_value();
            let rounds = self.asked.iter().find(|asked| asked.id == id).map_or(0, |asked| asked.rounds);
            self.asked.retain(|asked| asked.id != id);
            if self.asked.len() >= MAX_ANSWERS {
                self.asked.remove(0);
            }
            if self.style == Answers::Ignore {
                self.opened(id.clone());
            }
            self.asked.push(Asked { id, method: request.method, params, rounds });
        }
    }

    /// Notes a request of the client's own as open (the newest [`MAX_ANSWERS`] are kept).
    fn opened(&mut self, id: Value) {
        if self.open.len() >= MAX_ANSWERS {
            self.open.remove(0);
        }
        self.open.push(id);
    }

    /// The lines the client writes in reaction to a line the server wrote: the answer to a server's request
    /// ([`Client::answer`]), or the retry of a request that went `input_required` ([`Client::retry`]); none for
    /// anything else.
    pub fn react(&mut self, line: &[u8]) -> Vec<Vec<u8>> {
        let answers = self.answer(line);
        if !answers.is_empty() {
            return answers;
        }
        if !self.open.is_empty()
            && let Frame::Response(response) = Frame::parse(line)
            && let ResponseId::Id(id) = response.id
        {
            let id = id.to_value();
            self.open.retain(|open| *open != id);
        }
        self.retry(line).into_iter().collect()
    }

    /// The lines that answer `line` when the server wrote a request (a valid one, with an id), at most
    /// [`MAX_ANSWERS`] times per conversation: the answer, after a `ping` of the client's own in the
    /// [`Answers::Late`] style; in the [`Answers::Ignore`] style, for a request the client declared, a
    /// `notifications/cancelled` for each request of its own still unanswered instead. None for anything else.
    pub fn answer(&mut self, line: &[u8]) -> Vec<Vec<u8>> {
        if self.answered >= MAX_ANSWERS || !line.windows(8).any(|w| w == b"\"method\"") {
            return Vec::new();
        }
        let Frame::Request(request) = Frame::parse(line) else { return Vec::new() };
        self.answered += 1;
        let nothing = Map::new();
        let declared = self.declared.as_ref().unwrap_or(&nothing);
        let params = request.params.as_ref();
        let gated = GATED_SERVER_REQUESTS.iter().any(|(gated, _)| *gated == request.method);
        if self.style == Answers::Ignore && gated && undeclared(&request.method, params, declared).is_none() {
            return self.open.drain(..).map(|id| cancel(&id)).collect();
        }
        let reply = match answer(&request.method, params, declared, self.style) {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": request.id.to_value(), "result": result }),
            Err((code, message)) => json!({
                "jsonrpc": "2.0",
                "id": request.id.to_value(),
                "error": { "code": code, "message": message },
            }),
        };
        let mut lines = Vec::with_capacity(2);
        if self.style == Answers::Late && gated {
            self.pinged += 1;
            let ping = json!({ "jsonrpc": "2.0", "id": format!("wirefuzz-late-{}", self.pinged), "method": PING });
            lines.push(serde_json::to_vec(&ping).unwrap_or_default());
        }
        lines.push(serde_json::to_vec(&reply).unwrap_or_default());
        lines
    }

    /// The retry of a request of the harness's that `line` answered with `input_required`: the same method and
    /// params, a new id (and progress token), `inputResponses` and the `requestState` echoed, in the request's
    /// [`Answers`] style; at most [`MAX_ROUNDS`] per request and [`MAX_ANSWERS`] per conversation. `None` for any
    /// other line.
    pub fn retry(&mut self, line: &[u8]) -> Option<Vec<u8>> {
        if self.answered >= MAX_ANSWERS || !line.windows(16).any(|w| w == b"\"input_required\"") {
            return None;
        }
        let Frame::Response(response) = Frame::parse(line) else { return None };
        let (ResponseId::Id(id), Outcome::Result(result)) = (&response.id, &response.outcome) else { return None };
        if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
            return None;
        }
        let id = id.to_value();
        let at = self.asked.iter().position(|asked| asked.id == id)?;
        let asked = self.asked.remove(at);
        if asked.rounds >= MAX_ROUNDS || Answers::of(Some(&asked.params)) == Answers::Ignore {
            return None;
        }
        self.answered += 1;
        self.retried += 1;
        let mut params = asked.params.clone();
        let style = Answers::of(Some(&params));
        let declared = params.get(META).and_then(|meta| meta.get(CLIENT_CAPABILITIES_KEY));
        let declared = declared.and_then(Value::as_object).cloned().unwrap_or_default();
        let mut responses = Map::new();
        if let Some(requests) = result.get("inputRequests").and_then(Value::as_object) {
            for (key, request) in requests {
                let method = request.get("method").and_then(Value::as_str).unwrap_or_default();
                // A refusal cannot be an input (inputs are results): a refusing client's inputs are mistyped.
                let asked_style = if style == Answers::Refuse { Answers::Accept } else { style };
                let input = match answer(method, request.get("params"), &declared, asked_style) {
                    Ok(_) if matches!(style, Answers::MistypedInput | Answers::Refuse) => json!("mcp-wirefuzz"),
                    Ok(result) => result,
                    // A client cannot answer what it did not declare: the input is left out.
                    Err(_) => continue,
                };
                responses.insert(key.clone(), input);
            }
        }
        match style {
            Answers::MissingInput => {
                let first = responses.keys().next().cloned();
                first.map(|key| responses.remove(&key));
            }
            Answers::ExtraInput => {
                responses.insert("wirefuzz-extra".into(), json!({ "action": "accept", "content": {} }));
            }
            _ => {}
        }
        let state = result.get("requestState").and_then(Value::as_str);
        let stale = std::mem::replace(&mut self.last_state, state.map(str::to_string));
        let object = params.as_object_mut()?;
        object.insert("inputResponses".into(), Value::Object(responses));
        object.remove("requestState");
        match (state, style) {
            (_, Answers::StaleState) => {
                if let Some(stale) = stale {
                    object.insert("requestState".into(), Value::String(stale));
                }
            }
            (_, Answers::DropState) | (None, _) => {}
            (Some(state), Answers::TamperState) => {
                object.insert("requestState".into(), Value::String(format!("{state}!")));
            }
            (Some(state), _) => {
                object.insert("requestState".into(), Value::String(state.to_string()));
            }
        }
        let retry_id = format!("wirefuzz-retry-{}", self.retried);
        if let Some(token) = object.get_mut(META).and_then(|meta| meta.get_mut(PROGRESS_TOKEN_KEY)) {
            *token = Value::String(format!("{retry_id}-progress"));
        }
        self.asked.push(Asked { id: json!(retry_id), rounds: asked.rounds + 1, ..asked });
        let retry = json!({ "jsonrpc": "2.0", "id": retry_id, "method": self.asked.last()?.method, "params": params });
        Some(serde_json::to_vec(&retry).unwrap_or_default())
    }
}

/// The result (or error) the client gives a server request of `method` with `params`, by the capabilities it
/// `declared` and in `style`.
fn answer(
    method: &str,
    params: Option<&Value>,
    declared: &Map<String, Value>,
    style: Answers,
) -> Result<Value, (i64, String)> {
    if method == PING {
        return Ok(json!({}));
    }
    match undeclared(method, params, declared) {
        Some(Undeclared::Capability(_)) => return Err((METHOD_NOT_FOUND, "Method not found".into())),
        Some(Undeclared::SamplingTools) => {
            return Err((INVALID_PARAMS, "the client did not declare sampling.tools".into()));
        }
        Some(Undeclared::ElicitationMode(mode)) => {
            return Err((INVALID_PARAMS, format!("the client did not declare elicitation mode {mode}")));
        }
        None => {}
    }
    if style == Answers::Refuse && GATED_SERVER_REQUESTS.iter().any(|(gated, _)| *gated == method) {
        return Err((-1, "The user refused the request".into()));
    }
    match method {
        SAMPLING_CREATE if style == Answers::Malformed => {
            Ok(json!({ "role": "mcp-wirefuzz", "content": "mcp-wirefuzz" }))
        }
        ELICITATION_CREATE if style == Answers::Malformed => Ok(json!({ "action": "mcp-wirefuzz", "content": [] })),
        ROOTS_LIST if style == Answers::Malformed => Ok(json!({ "roots": "mcp-wirefuzz" })),
        SAMPLING_CREATE => Ok(json!({
            "role": "assistant",
            "content": { "type": "text", "text": "mcp-wirefuzz" },
            "model": "mcp-wirefuzz",
            "stopReason": "endTurn",
        })),
        ELICITATION_CREATE if style == Answers::Decline => Ok(json!({ "action": "decline" })),
        ELICITATION_CREATE => {
            let schema = params.and_then(|p| p.get("requestedSchema"));
            Ok(json!({ "action": "accept", "content": form(schema) }))
        }
        ROOTS_LIST => Ok(json!({ "roots": [{ "uri": ROOT_URI, "name": "mcp-wirefuzz" }] })),
        _ => Err((METHOD_NOT_FOUND, "Method not found".into())),
    }
}

/// The `notifications/cancelled` for the client's own request `id`, as a client whose user dismissed a server's
/// question sends it (2025-11-25 basic/utilities/cancellation.mdx).
fn cancel(id: &Value) -> Vec<u8> {
    let reason = "mcp-wirefuzz: the user dismissed the server's request";
    let cancel = json!({ "jsonrpc": "2.0", "method": CANCELLED, "params": { "requestId": id, "reason": reason } });
    serde_json::to_vec(&cancel).unwrap_or_default()
}

/// An accepted form's content for an elicitation's `requestedSchema` (flat primitive properties): each property's
/// default, else its first enum value or `const`, else a plain value of its type within its bounds.
fn form(schema: Option<&Value>) -> Value {
    let properties = schema.and_then(|s| s.get("properties")).and_then(Value::as_object);
    let content: Map<String, Value> =
        properties.into_iter().flatten().map(|(name, property)| (name.clone(), field(property))).collect();
    Value::Object(content)
}

/// A value for one elicitation field.
fn field(property: &Value) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    let first_choice = |schema: &Value| {
        let listed = schema.get("enum").and_then(Value::as_array).and_then(|values| values.first()).cloned();
        let titled =
            ["oneOf", "anyOf"].iter().find_map(|key| schema.get(*key)?.as_array()?.first()?.get("const").cloned());
        listed.or(titled)
    };
    if let Some(choice) = first_choice(property) {
        return choice;
    }
    let bound = |key: &str| property.get(key).and_then(Value::as_f64);
    match property.get("type").and_then(Value::as_str) {
        Some("integer") => json!(bound("minimum").map_or(0, |min| min.ceil() as i64)),
        Some("number") => json!(bound("minimum").unwrap_or(0.0)),
        Some("boolean") => json!(true),
        Some("array") => {
            let item = property.get("items").and_then(first_choice);
            json!(item.into_iter().collect::<Vec<_>>())
        }
        _ => {
            let at_least = bound("minLength").unwrap_or(0.0) as usize;
            json!(
                format!("{:w<at_least$}", "mcp-wirefuzz")
                    .chars()
                    .take(bound("maxLength").map_or(usize::MAX, |max| max as usize).max(1))
                    .collect::<String>()
            )
        }
    }
}

/// What a server request would use that the client did not declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undeclared<'a> {
    /// The capability of its method (`sampling`, `elicitation` or `roots`).
    Capability(&'static str),
    /// Tool use in sampling (`tools` or `toolChoice`) without `sampling.tools`.
    SamplingTools,
    /// An elicitation in this mode, which the `elicitation` capability does not cover.
    ElicitationMode(&'a str),
}

/// What a server request of `method` with `params` uses beyond the client capabilities `declared`; `None` when
/// it uses nothing undeclared, or is not one of the requests a capability gates
/// ([`GATED_SERVER_REQUESTS`]). The harness answers by it, and the oracle judges by it.
pub fn undeclared<'a>(
    method: &str,
    params: Option<&'a Value>,
    declared: &Map<String, Value>,
) -> Option<Undeclared<'a>> {
    let (_, capability) = GATED_SERVER_REQUESTS.iter().find(|(gated, _)| *gated == method)?;
    let Some(offered) = declared.get(*capability) else { return Some(Undeclared::Capability(capability)) };
    let member = |name: &str| params.and_then(|params| params.get(name));
    match method {
        SAMPLING_CREATE
            if (member("tools").is_some() || member("toolChoice").is_some()) && offered.get("tools").is_none() =>
        {
            Some(Undeclared::SamplingTools)
        }
        ELICITATION_CREATE => {
            let mode = member("mode").and_then(Value::as_str).unwrap_or("form");
            (!elicitation_mode_declared(offered, mode)).then_some(Undeclared::ElicitationMode(mode))
        }
        _ => None,
    }
}

/// True when a declared `elicitation` capability covers `mode`: an empty object declares the form mode only
/// (MCP 2025-11-25 client/elicitation.mdx §Capabilities).
fn elicitation_mode_declared(elicitation: &Value, mode: &str) -> bool {
    match elicitation.as_object() {
        Some(modes) if modes.is_empty() => mode == "form",
        Some(modes) => modes.contains_key(mode),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn initialize(capabilities: &str) -> Vec<u8> {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"clientInfo":{{"name":"c","version":"1"}}}}}}"#
        )
        .into_bytes()
    }

    fn answer(client: &mut Client, line: &str) -> Value {
        let mut lines = client.answer(line.as_bytes());
        assert_eq!(lines.len(), 1, "one answer: {lines:?}");
        serde_json::from_slice(&lines.remove(0)).unwrap()
    }

    #[test]
    fn undeclared_requests_get_method_not_found_and_pings_an_empty_result() {
        let mut client = Client::default();
        client.sent(&initialize("{}"));
        for method in [SAMPLING_CREATE, ELICITATION_CREATE, ROOTS_LIST, "wirefuzz/other"] {
            let reply = answer(&mut client, &format!(r#"{{"jsonrpc":"2.0","id":"s1","method":"{method}"}}"#));
            assert_eq!(reply["error"]["code"], json!(METHOD_NOT_FOUND), "{method}");
            assert_eq!(reply["id"], json!("s1"));
        }
        let pong = answer(&mut client, r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
        assert_eq!(pong, json!({ "jsonrpc": "2.0", "id": 7, "result": {} }));
    }

    #[test]
    fn declared_requests_get_valid_results_within_the_sub_capabilities() {
        let mut client = Client::default();
        client.sent(&initialize(r#"{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}"#));
        // A second initialize does not change what the connection declared.
        client.sent(&initialize("{}"));
        let sampled = answer(&mut client, r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}"#);
        assert_eq!(sampled["result"]["role"], json!("assistant"));
        let tools = r#"{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{"tools":[]}}"#;
        assert_eq!(answer(&mut client, tools)["error"]["code"], json!(INVALID_PARAMS));
        let form = r#"{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"m"}}"#;
        assert_eq!(answer(&mut client, form)["result"], json!({ "action": "accept", "content": {} }));
        let url = r#"{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"mode":"url"}}"#;
        assert_eq!(answer(&mut client, url)["error"]["code"], json!(INVALID_PARAMS));
        let roots = answer(&mut client, r#"{"jsonrpc":"2.0","id":5,"method":"roots/list"}"#);
        assert_eq!(roots["result"]["roots"][0]["uri"], json!(ROOT_URI));
    }

    #[test]
    fn only_requests_are_answered_and_only_so_many() {
        let mut client = Client::default();
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"method":"ping","id":1}"#,
            "not json",
        ] {
            assert_eq!(client.answer(line.as_bytes()), Vec::<Vec<u8>>::new(), "{line}");
        }
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!((0..MAX_ANSWERS).all(|_| client.answer(ping).len() == 1));
        assert!(client.answer(ping).is_empty());
    }

    /// A client of `style` that declared every capability.
    fn styled_client(style: &str) -> Client {
        let capabilities = r#"{"sampling":{},"elicitation":{},"roots":{}},"_meta":{"dev.wirefuzz/answers":"STYLE"}"#;
        let mut client = Client::default();
        client.sent(&initialize(&capabilities.replace("STYLE", style)));
        client
    }

    #[test]
    fn malformed_answers_break_each_result_schema_and_late_ones_follow_a_ping_of_the_clients_own() {
        let mut client = styled_client("malformed");
        let ask = |method: &str| format!(r#"{{"jsonrpc":"2.0","id":"s","method":"{method}","params":{{}}}}"#);
        let sampled = answer(&mut client, &ask(SAMPLING_CREATE));
        assert!(!["user", "assistant"].contains(&sampled["result"]["role"].as_str().unwrap()), "{sampled}");
        assert!(!sampled["result"]["content"].is_object(), "{sampled}");
        let elicited = answer(&mut client, &ask(ELICITATION_CREATE));
        assert!(!["accept", "decline", "cancel"].contains(&elicited["result"]["action"].as_str().unwrap()));
        assert!(!answer(&mut client, &ask(ROOTS_LIST))["result"]["roots"].is_array());
        // A ping is still answered as it should be.
        assert_eq!(answer(&mut client, &ask(PING))["result"], json!({}));

        let mut late = styled_client("late");
        let lines: Vec<Value> =
            late.answer(ask(ROOTS_LIST).as_bytes()).iter().map(|line| serde_json::from_slice(line).unwrap()).collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!((lines[0]["method"].clone(), lines[0]["id"].clone()), (json!(PING), json!("wirefuzz-late-1")));
        assert_eq!(lines[1]["id"], json!("s"));
        assert_eq!(lines[1]["result"]["roots"][0]["uri"], json!(ROOT_URI));
        // What is not a gated request is answered at once.
        assert_eq!(late.answer(ask(PING).as_bytes()).len(), 1);
    }

    #[test]
    fn an_ignoring_client_cancels_its_own_requests_still_open_instead_of_answering() {
        let mut client = styled_client("ignore");
        let call = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t"}}}}"#);
        for id in [2, 3, 4] {
            client.sent(call(id).as_bytes());
        }
        // The call with id 3 was answered: it is not cancelled.
        assert!(client.react(br#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#).is_empty());
        let sample = br#"{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{}}"#;
        let cancels: Vec<Value> =
            client.react(sample).iter().map(|line| serde_json::from_slice(line).unwrap()).collect();
        let cancelled: Vec<&Value> = cancels.iter().map(|cancel| &cancel["params"]["requestId"]).collect();
        assert_eq!(cancelled, [&json!(2), &json!(4)], "{cancels:?}");
        assert!(cancels.iter().all(|cancel| cancel["method"] == json!(CANCELLED) && cancel.get("id").is_none()));
        // Nothing is left to cancel; a ping and an undeclared request still get their answers.
        assert!(client.react(sample).is_empty());
        assert_eq!(client.react(br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#).len(), 1);
        let url = br#"{"jsonrpc":"2.0","id":8,"method":"elicitation/create","params":{"mode":"url"}}"#;
        let refused: Value = serde_json::from_slice(&client.react(url)[0]).unwrap();
        assert_eq!(refused["error"]["code"], json!(INVALID_PARAMS));
    }

    #[test]
    fn an_empty_elicitation_capability_means_the_form_mode() {
        assert!(elicitation_mode_declared(&json!({}), "form"));
        assert!(!elicitation_mode_declared(&json!({}), "url"));
        assert!(elicitation_mode_declared(&json!({ "url": {} }), "url"));
        assert!(!elicitation_mode_declared(&json!({ "url": {} }), "form"));
        assert!(!elicitation_mode_declared(&json!(true), "form"));
    }

    /// A modern tools/call with `meta` as its `_meta` (the envelope added), as the harness sent it.
    fn call(client: &mut Client, id: &str, meta: Value) -> Value {
        let mut meta = meta;
        meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
        let line =
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":meta}});
        client.sent(line.to_string().as_bytes());
        line
    }

    fn input_required(id: &str, state: Option<&str>) -> Vec<u8> {
        let mut result = json!({"resultType":"input_required","inputRequests":{
            "who":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object",
                "properties":{"name":{"type":"string","minLength":20},"age":{"type":"integer","minimum":3},
                "tier":{"type":"string","enum":["gold","silver"]},"ok":{"type":"boolean","default":false}}}}},
            "roots":{"method":"roots/list"},
            "llm":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}}});
        if let Some(state) = state {
            result["requestState"] = json!(state);
        }
        json!({"jsonrpc":"2.0","id":id,"result":result}).to_string().into_bytes()
    }

    fn retry(client: &mut Client, line: &[u8]) -> Value {
        serde_json::from_slice(&client.retry(line).expect("a retry")).unwrap()
    }

    #[test]
    fn an_input_required_result_gets_a_retry_with_the_declared_inputs_and_the_state_echoed() {
        let mut client = Client::default();
        let everything = json!({"sampling":{},"elicitation":{},"roots":{}});
        let sent = call(
            &mut client,
            "c1",
            json!({CLIENT_CAPABILITIES_KEY: {"elicitation":{}, "roots":{}},
            PROGRESS_TOKEN_KEY: "p1"}),
        );
        let again = retry(&mut client, &input_required("c1", Some("s-1")));
        assert_eq!(again["method"], sent["method"]);
        assert_eq!(again["id"], json!("wirefuzz-retry-1"), "a new id");
        let params = &again["params"];
        assert_eq!(params["requestState"], json!("s-1"), "echoed byte for byte");
        assert_eq!(params["arguments"], sent["params"]["arguments"]);
        assert_ne!(params["_meta"][PROGRESS_TOKEN_KEY], json!("p1"), "a progress token of its own");
        let inputs = params["inputResponses"].as_object().unwrap();
        assert!(!inputs.contains_key("llm"), "sampling was not declared: {inputs:?}");
        assert_eq!(inputs["roots"]["roots"][0]["uri"], json!(ROOT_URI));
        let form = &inputs["who"]["content"];
        assert_eq!(inputs["who"]["action"], json!("accept"));
        assert!(form["name"].as_str().unwrap().len() >= 20, "{form}");
        assert_eq!(
            (form["age"].clone(), form["tier"].clone(), form["ok"].clone()),
            (json!(3), json!("gold"), json!(false))
        );
        // The retry went input_required again: a second round, up to MAX_ROUNDS in all.
        let mut rounds = 1;
        let mut id = again["id"].as_str().unwrap().to_string();
        while let Some(line) = client.retry(&input_required(&id, None)) {
            let line: Value = serde_json::from_slice(&line).unwrap();
            assert!(line["params"].get("requestState").is_none(), "no state was sent, none is echoed");
            id = line["id"].as_str().unwrap().to_string();
            rounds += 1;
        }
        assert_eq!(rounds, MAX_ROUNDS);
        // Anything else gets no retry: a complete result, an unknown id, a request.
        let _ = call(&mut client, "c2", json!({CLIENT_CAPABILITIES_KEY: everything}));
        let complete = json!({"jsonrpc":"2.0","id":"c2","result":{"resultType":"complete","content":[]}});
        assert_eq!(client.retry(complete.to_string().as_bytes()), None);
        assert_eq!(client.retry(&input_required("nobody", Some("s"))), None);
    }

    #[test]
    fn a_request_may_ask_for_a_broken_retry() {
        let everything = json!({"sampling":{},"elicitation":{},"roots":{}});
        let styled = |style: Answers| {
            let mut client = Client::default();
            call(&mut client, "c", json!({CLIENT_CAPABILITIES_KEY: everything, ANSWERS_KEY: style.name()}));
            retry(&mut client, &input_required("c", Some("s-1")))["params"].clone()
        };
        assert_eq!(styled(Answers::TamperState)["requestState"], json!("s-1!"));
        assert!(styled(Answers::DropState).get("requestState").is_none());
        assert_eq!(styled(Answers::MissingInput)["inputResponses"].as_object().unwrap().len(), 2);
        assert!(styled(Answers::ExtraInput)["inputResponses"]["wirefuzz-extra"].is_object());
        for style in [Answers::MistypedInput, Answers::Refuse] {
            let inputs = styled(style)["inputResponses"].clone();
            assert!(inputs.as_object().unwrap().values().all(Value::is_string), "{style:?}: {inputs}");
        }
        assert_eq!(styled(Answers::Decline)["inputResponses"]["who"], json!({"action":"decline"}));
        let malformed = styled(Answers::Malformed)["inputResponses"].clone();
        assert_eq!(malformed["roots"]["roots"], json!("mcp-wirefuzz"), "{malformed}");
        assert_eq!(styled(Answers::Late)["requestState"], json!("s-1"));
        // A stale state: none in the first round, the first round's in the second, another request's after that.
        let mut client = Client::default();
        call(&mut client, "c", json!({CLIENT_CAPABILITIES_KEY: everything, ANSWERS_KEY: "stale-state"}));
        let first = retry(&mut client, &input_required("c", Some("s-1")));
        assert!(first["params"].get("requestState").is_none(), "{first}");
        let second = retry(&mut client, &input_required(first["id"].as_str().unwrap(), Some("s-2")));
        assert_eq!(second["params"]["requestState"], json!("s-1"));
        call(&mut client, "d", json!({CLIENT_CAPABILITIES_KEY: everything, ANSWERS_KEY: "stale-state"}));
        assert_eq!(retry(&mut client, &input_required("d", Some("t-1")))["params"]["requestState"], json!("s-2"));
        // A client that ignores the server's questions does not retry.
        let mut client = Client::default();
        call(&mut client, "c", json!({CLIENT_CAPABILITIES_KEY: everything, ANSWERS_KEY: "ignore"}));
        assert_eq!(client.retry(&input_required("c", Some("s-1"))), None);
        assert_eq!(styled(Answers::Accept)["requestState"], json!("s-1"));
    }

    #[test]
    fn a_conversation_may_ask_for_declined_or_refused_answers() {
        let elicit = r#"{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"m"}}"#;
        let capabilities = r#"{"sampling":{},"elicitation":{},"roots":{}},"_meta":{"dev.wirefuzz/answers":"STYLE"}"#;
        for (style, expected) in [("decline", json!({"action":"decline"})), ("refuse", Value::Null)] {
            let mut client = Client::default();
            client.sent(&initialize(&capabilities.replace("STYLE", style)));
            let reply = answer(&mut client, elicit);
            assert_eq!(reply["result"], expected, "{style}");
            assert_eq!(reply["error"].is_object(), style == "refuse", "{style}");
        }
    }
}
