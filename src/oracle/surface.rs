//! The surface rules: tool calls, prompt gets, resource reads and lists judged against what the server listed
//! (the policy's [`Surface`]), and the error codes 2026-07-28 reserves. Only requests on a connection that was
//! opened properly are judged: a plain request after an `initialize` that got a result, or a fully enveloped
//! 2026-07-28 request on a server that serves 2026-07-28 before any plain request; a reply that refuses the era or
//! the lifecycle is the MCP layer's business.

use super::coverage::{Counts, Coverage};
use super::rules::{
    COMPLETION_SHAPE, CONTENT_SHAPE, CURSOR_INVALID, ERROR_CODE_RESERVED, LIST_DUPLICATE_NAME, LIST_SHAPE,
    PROMPT_ARGUMENTS, PROMPT_UNKNOWN, RESOURCE_READABLE, RESOURCE_UNKNOWN, TOOL_INVALID_ARGS, TOOL_OUTPUT_SCHEMA,
    TOOL_PARAM_HEADER, TOOL_UNKNOWN, TOOL_VALID_ARGS,
};
use super::{Findings, LayerInput, ServerLine};
use crate::protocol::client::Answers;
use crate::protocol::codes::{
    INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, RESOURCE_NOT_FOUND,
};
use crate::protocol::envelope::{self, META, PROTOCOL_VERSION_KEY};
use crate::protocol::era::LATEST_MODERN_VERSION;

/// The first version whose tools.mdx reports input validation and API failures in results (SEP-1303), not as
/// JSON-RPC errors.
const SEP_1303_VERSION: &str = "2025-11-25";
use crate::protocol::http::param_headers;
use crate::protocol::methods::{
    CANCELLED, COMPLETE, INITIALIZE, PROMPTS_GET, PROMPTS_LIST, RESOURCES_LIST, RESOURCES_READ, TEMPLATES_LIST,
    TOOLS_CALL, TOOLS_LIST,
};
use crate::protocol::{Era, ErrorObject, Frame, Outcome};
use crate::script::{BAD_CURSOR, UNKNOWN_URI};
use crate::surface::{Surface, compile};
use crate::transcript::{Event, Transcript};
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};

/// Codes 2026-07-28 defines in the reserved range -32020..-32099.
const DEFINED_RESERVED: [i64; 3] = [-32020, -32021, -32022];
/// The most values a completion result may hold (schema.ts CompleteResult: must not exceed 100 items).
const MAX_COMPLETION_VALUES: usize = 100;
/// -32042, the 2025-11-25 URL elicitation code, reserved in 2026-07-28.
const URL_ELICITATION: i64 = -32042;

/// The rules this module judges, in catalogue order.
pub const RULES: [&str; 15] = [
    TOOL_VALID_ARGS,
    TOOL_INVALID_ARGS,
    TOOL_OUTPUT_SCHEMA,
    CONTENT_SHAPE,
    TOOL_UNKNOWN,
    PROMPT_UNKNOWN,
    PROMPT_ARGUMENTS,
    RESOURCE_UNKNOWN,
    RESOURCE_READABLE,
    CURSOR_INVALID,
    LIST_SHAPE,
    LIST_DUPLICATE_NAME,
    TOOL_PARAM_HEADER,
    COMPLETION_SHAPE,
    ERROR_CODE_RESERVED,
];

/// Checks the replies to the surface methods (with the policy's surface) and the codes of modern errors, and
/// counts what was sent and what came back into `coverage`.
pub(super) fn check(input: &LayerInput, findings: &mut Findings, coverage: &mut Coverage) {
    let LayerInput { transcript, reads, answers, policy, .. } = *input;
    let serves_modern = policy.model().and_then(|m| m.serves(Era::Modern)) == Some(true);
    if let Some(surface) = policy.surface().filter(|s| s.learned) {
        for tool in &surface.tools {
            coverage.tools.entry(tool.name.clone()).or_default();
        }
        for uri in &surface.resources {
            coverage.resources.entry(uri.clone()).or_default();
        }
    }
    let cancelled = cancelled_requests(transcript);
    let awaiting_broken = input.awaiting_broken;
    let waited = transcript.events.iter().position(|event| matches!(event, Event::Note(note) if note.of_wait()));
    let mut initialized_from: Option<usize> = None;
    // The version that `initialize` negotiated (its result's protocolVersion).
    let mut negotiated: Option<String> = None;
    let mut plain_seen = false;
    // A server that serves 2026-07-28 and got an enveloped request (one parsers differ on included) before any
    // un-enveloped one may hold the connection modern (rmcp 3.11.0 does, even when that request got an error, and
    // then refuses un-enveloped requests for their missing `_meta`): no later un-enveloped request is judged as
    // handshake.
    let (mut plain_request, mut modern_opened) = (false, false);
    for (index, read) in reads.iter().enumerate() {
        // As in the MCP layer, a line parsers differ on, an invalid request or a batch may open the connection in
        // the handshake era: no later enveloped request is judged as modern.
        if let Some((Frame::Request(request), _)) = read.sent()
            && serves_modern
            && !plain_request
            && envelope::carries_modern_envelope(&request.method, request.params.as_ref())
        {
            modern_opened = true;
        }
        let request = match read.sent() {
            Some((Frame::Request(request), None)) => request,
            Some((Frame::Batch(_), _) | (Frame::Invalid { id: Some(_), method: Some(_), .. }, _) | (_, Some(_))) => {
                plain_seen = true;
                continue;
            }
            _ => continue,
        };
        let reply = answers[index].and_then(|at| match reads[at].server_line() {
            Some(ServerLine::Reply { outcome: Some(outcome), .. }) => Some((at, outcome)),
            _ => None,
        });
        let was_cancelled = reply.is_none() && cancelled.contains_key(&index);
        let count = |counts: &mut Counts, reply: Option<&Outcome>| count(counts, reply, was_cancelled);
        count(coverage.methods.entry(request.method.clone()).or_default(), reply.map(|(_, o)| o));
        let params = request.params.as_ref();
        let era = if envelope::carries_modern_envelope(&request.method, params) {
            let meta = envelope::meta(params).filter(|meta| envelope::is_valid(meta));
            let version = meta.and_then(|m| m.get(PROTOCOL_VERSION_KEY)).and_then(Value::as_str);
            (serves_modern && !plain_seen && version == Some(LATEST_MODERN_VERSION)).then_some(Era::Modern)
        } else {
            plain_seen = true;
            plain_request = true;
            if request.method == INITIALIZE {
                if initialized_from.is_none()
                    && let Some((_, Outcome::Result(result))) = reply
                {
                    initialized_from = Some(index);
                    negotiated = result.get("protocolVersion").and_then(Value::as_str).map(str::to_string);
                }
                None
            } else {
                initialized_from.filter(|from| *from < index && !modern_opened).map(|_| Era::Handshake)
            }
        };
        let surface = policy.surface().filter(|s| s.learned);
        // The line itself: a request read through a template keeps only the types of its params.
        let sent_line = || match transcript.events.get(index) {
            Some(Event::Sent(line)) => serde_json::from_slice::<Value>(line).ok(),
            _ => None,
        };
        if request.method == RESOURCES_READ
            && let Some(line) = sent_line()
            && let Some(uri) = line.get("params").and_then(|p| p.get("uri")).and_then(Value::as_str)
            && surface.is_some_and(|s| s.resources.iter().any(|listed| listed == uri))
        {
            count(coverage.resources.entry(uri.to_string()).or_default(), reply.map(|(_, o)| o));
        }
        if request.method == TOOLS_CALL
            && let Some(Event::Sent(line)) = transcript.events.get(index)
            && let Ok(sent) = serde_json::from_slice::<Value>(line)
            && let Some(name) = sent.get("params").and_then(|p| p.get("name")).and_then(Value::as_str)
        {
            let counts = coverage.tools.entry(name.to_string()).or_default();
            count(counts, reply.map(|(_, o)| o));
            if let Some((tool, _)) = surface.and_then(|s| s.tool(name)) {
                let arguments = sent["params"].get("arguments").cloned().unwrap_or_else(|| Value::Object(Map::new()));
                if let Some(validator) = surface.and_then(|s| s.validators(tool).0) {
                    match arguments.is_object() && validator.is_valid(&arguments) {
                        true => counts.valid += 1,
                        false => counts.invalid += 1,
                    }
                }
            }
        }
        let (Some(era), Some((at, outcome))) = (era, reply) else { continue };
        // A reply that came only after the harness's long wait for it (a hung handler's call, answered with an
        // error when the SDK closes the connection) is no answer of the handler's: SERVER-HANDLER-HANG has it.
        if waited.is_some_and(|waited| index < waited && waited < at) {
            continue;
        }
        // An error for a call that waited on an answer the client broke on purpose, or that the client
        // cancelled, is the client's doing (the Python SDK answers a cancelled request with error 0).
        let cancelled_first = cancelled.get(&index).is_some_and(|cancel| *cancel < at);
        if matches!(outcome, Outcome::Error(_)) && (awaiting_broken.contains(&index) || cancelled_first) {
            continue;
        }
        let before = findings.0.len();
        let mut judge = Judge { findings, at, exercised: &mut coverage.exercised };
        if era == Era::Modern
            && let Outcome::Error(error) = outcome
        {
            judge.reserved_code(error);
        }
        // A completion's result has a shape of its own, whatever the server lists.
        if request.method == COMPLETE {
            judge.completion(outcome);
            tally(coverage, &findings.0[before..], &request.method, None);
            continue;
        }
        let Some(surface) = surface else { continue };
        // An `input_required` result asks the client for input: it is not the call's answer, and the MCP layer
        // judges it (MCP-INPUT-REQUIRED).
        if let Outcome::Result(result) = outcome
            && result.get("resultType").and_then(Value::as_str) == Some("input_required")
        {
            continue;
        }
        if !matches!(
            request.method.as_str(),
            TOOLS_CALL | PROMPTS_GET | RESOURCES_READ | TOOLS_LIST | PROMPTS_LIST | RESOURCES_LIST | TEMPLATES_LIST
        ) {
            continue;
        }
        // The skimmed frame holds only what the MCP layer reads of params: read the line whole.
        let Some(Event::Sent(line)) = transcript.events.get(index) else { continue };
        let Ok(sent) = serde_json::from_slice::<Value>(line) else { continue };
        let params = sent.get("params").and_then(Value::as_object).cloned().unwrap_or_default();
        // A `_meta` that is not an object makes the params invalid whatever the rest says (schema.ts
        // RequestParams): any error answers such a request (the Python SDK's -32602), so none is judged here.
        if params.get(META).is_some_and(|meta| !meta.is_object()) && matches!(outcome, Outcome::Error(_)) {
            continue;
        }
        // A retry of an `input_required` request carries the client's inputs and the server's state: the server
        // judges them, and may refuse them (-32602 for a state it cannot trust or that expired, patterns/mrtr.mdx),
        // whatever any error answers a retry the harness broke on purpose. A valid retry's other errors are judged.
        let retry = params.contains_key("inputResponses") || params.contains_key("requestState");
        let broken = Answers::of(sent.get("params")).breaks_retries();
        if retry && matches!(outcome, Outcome::Error(error) if broken || error.code == INVALID_PARAMS) {
            continue;
        }
        match request.method.as_str() {
            TOOLS_CALL => {
                // Before 2025-11-25 (SEP-1303) tools.mdx lists invalid arguments and server errors among protocol
                // errors: a JSON-RPC error for arguments the schema accepts breaks nothing there.
                let sep_1303 = era == Era::Modern || negotiated.as_deref().is_some_and(|v| v >= SEP_1303_VERSION);
                judge.tool_call(surface, &params, outcome, sep_1303)
            }
            PROMPTS_GET => judge.prompt_get(surface, &params, outcome),
            RESOURCES_READ => judge.resource_read(surface, &params, outcome, era),
            method => judge.list(method, &params, outcome, era),
        }
        let name = params.get("name").and_then(Value::as_str).filter(|_| request.method == TOOLS_CALL);
        tally(coverage, &findings.0[before..], &request.method, name);
    }
}

/// Counts `found` against `method` (and the tool `name` it called) in `coverage`.
fn tally(coverage: &mut Coverage, found: &[super::Finding], method: &str, name: Option<&str>) {
    for finding in found {
        *coverage.methods.entry(method.to_string()).or_default().findings.entry(finding.rule).or_default() += 1;
        if let Some(name) = name {
            *coverage.tools.entry(name.to_string()).or_default().findings.entry(finding.rule).or_default() += 1;
        }
    }
}

/// The sent requests a later `notifications/cancelled` names, by event, each with the cancel's event: a cancel is
/// for the latest line sent with its id. Only a transcript that names the method at all is parsed.
fn cancelled_requests(transcript: &Transcript) -> HashMap<usize, usize> {
    let mut cancelled = HashMap::new();
    let names_cancel = |line: &[u8]| line.windows(CANCELLED.len()).any(|w| w == CANCELLED.as_bytes());
    if !transcript.events.iter().any(|event| matches!(event, Event::Sent(line) if names_cancel(line))) {
        return cancelled;
    }
    let mut latest: HashMap<String, usize> = HashMap::new();
    for (at, event) in transcript.events.iter().enumerate() {
        let Event::Sent(line) = event else { continue };
        let Ok(message) = serde_json::from_slice::<Value>(line) else { continue };
        if message.get("method").and_then(Value::as_str) == Some(CANCELLED)
            && let Some(id) = message.get("params").and_then(|p| p.get("requestId"))
            && let Some(&request) = latest.get(&id.to_string())
        {
            cancelled.entry(request).or_insert(at);
        }
        if let Some(id) = message.get("id") {
            latest.insert(id.to_string(), at);
        }
    }
    cancelled
}

/// Counts one request and its reply; `cancelled` when it got none and the client cancelled it.
fn count(counts: &mut Counts, reply: Option<&Outcome>, cancelled: bool) {
    counts.calls += 1;
    match reply {
        None if cancelled => counts.cancelled += 1,
        None => counts.no_reply += 1,
        Some(Outcome::Result(result)) => {
            counts.results += 1;
            if result.get("isError") == Some(&Value::Bool(true)) {
                counts.is_error += 1;
            }
        }
        Some(Outcome::Error(error)) => *counts.errors.entry(error.code).or_default() += 1,
    }
}

/// Findings about the reply at event `at`, and the rules that judged it.
struct Judge<'a> {
    findings: &'a mut Findings,
    at: usize,
    exercised: &'a mut BTreeSet<&'static str>,
}

impl Judge<'_> {
    fn add(&mut self, rule: &'static str, detail: impl Into<String>) {
        self.findings.add(rule, Some(self.at), detail.into());
    }

    /// Notes that `rule` judged this reply.
    fn judged(&mut self, rule: &'static str) {
        self.exercised.insert(rule);
    }

    fn reserved_code(&mut self, error: &ErrorObject) {
        self.judged(ERROR_CODE_RESERVED);
        let code = error.code;
        let reserved = code == RESOURCE_NOT_FOUND
            || code == URL_ELICITATION
            || ((-32099..=-32020).contains(&code) && !DEFINED_RESERVED.contains(&code));
        if reserved {
            self.add(
                ERROR_CODE_RESERVED,
                format!("error code {code} on a modern connection, where 2026-07-28 reserves it"),
            );
        }
    }

    /// Judges a tools/call of a listed tool (its arguments against its schemas); a JSON-RPC error for arguments its
    /// inputSchema accepts only when `sep_1303` (the connection's version reports such failures in results).
    fn tool_call(&mut self, surface: &Surface, params: &Map<String, Value>, outcome: &Outcome, sep_1303: bool) {
        let Some(name) = params.get("name").and_then(Value::as_str) else { return };
        if !surface.lists_tool(name) {
            self.judged(TOOL_UNKNOWN);
            if let Outcome::Result(result) = outcome
                && result.get("isError") != Some(&Value::Bool(true))
            {
                self.add(TOOL_UNKNOWN, format!("tools/call of the unlisted tool {name:?} got a successful result"));
            }
            return;
        }
        let Some((index, _)) = surface.tool(name) else { return };
        let arguments = params.get("arguments").cloned().unwrap_or_else(|| Value::Object(Map::new()));
        let (input, output) = surface.validators(index);
        let valid = input.map(|v| arguments.is_object() && v.is_valid(&arguments));
        match valid {
            Some(true) if sep_1303 => self.judged(TOOL_VALID_ARGS),
            Some(true) => {}
            Some(false) => self.judged(TOOL_INVALID_ARGS),
            None => {}
        }
        match outcome {
            // The spec's answer when the call needs a capability the client did not declare (basic/index.mdx:
            // MissingRequiredClientCapabilityError); which capabilities a tool needs is the server's to know.
            Outcome::Error(error) if error.code == MISSING_REQUIRED_CLIENT_CAPABILITY => {}
            Outcome::Error(error) => match valid {
                Some(true) if sep_1303 => self.add(
                    TOOL_VALID_ARGS,
                    format!("tools/call {name} with arguments its inputSchema accepts got error {}", error.code),
                ),
                Some(false) if error.code != INVALID_PARAMS => self.add(
                    TOOL_INVALID_ARGS,
                    format!(
                        "tools/call {name} with arguments its inputSchema refuses got error {}, not -32602 or an \
                         isError result",
                        error.code
                    ),
                ),
                _ => {}
            },
            Outcome::Result(result) => {
                self.call_result(result);
                let is_error = result.get("isError") == Some(&Value::Bool(true));
                if let (false, Some(validator)) = (is_error, output) {
                    self.judged(TOOL_OUTPUT_SCHEMA);
                    match result.get("structuredContent") {
                        None => self.add(
                            TOOL_OUTPUT_SCHEMA,
                            format!("{name} declares an outputSchema but its result has no structuredContent"),
                        ),
                        Some(structured) => {
                            if let Err(error) = validator.validate(structured) {
                                let detail = format!("{name}'s structuredContent breaks its outputSchema: {error}");
                                self.add(TOOL_OUTPUT_SCHEMA, shorten(&detail));
                            }
                        }
                    }
                }
            }
        }
    }

    /// A tools/call result: a content array, a boolean isError, well-formed items.
    fn call_result(&mut self, result: &Value) {
        self.judged(CONTENT_SHAPE);
        if result.get("isError").is_some_and(|e| !e.is_boolean()) {
            self.add(CONTENT_SHAPE, "tools/call result: isError is not a boolean");
        }
        match result.get("content") {
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    if let Some(problem) = content_problem(item) {
                        self.add(CONTENT_SHAPE, format!("tools/call result content[{i}]: {problem}"));
                    }
                }
            }
            _ => self.add(CONTENT_SHAPE, "tools/call result: content is not an array"),
        }
    }

    fn prompt_get(&mut self, surface: &Surface, params: &Map<String, Value>, outcome: &Outcome) {
        let Some(name) = params.get("name").and_then(Value::as_str) else { return };
        let not_served = matches!(outcome, Outcome::Error(e) if e.code == METHOD_NOT_FOUND);
        let Some(prompt) = surface.prompt(name) else {
            self.judged(PROMPT_UNKNOWN);
            if !not_served && !matches!(outcome, Outcome::Error(e) if e.code == INVALID_PARAMS) {
                let got = describe(outcome);
                self.add(PROMPT_UNKNOWN, format!("prompts/get of the unlisted prompt {name:?} got {got}, not -32602"));
            }
            return;
        };
        let given = params.get("arguments").and_then(Value::as_object);
        let missing =
            prompt.arguments.iter().find(|(arg, required)| *required && given.is_none_or(|g| !g.contains_key(arg)));
        if let Some((arg, _)) = missing {
            self.judged(PROMPT_ARGUMENTS);
            if !not_served && !matches!(outcome, Outcome::Error(e) if e.code == INVALID_PARAMS) {
                let got = describe(outcome);
                let detail = format!("prompts/get {name} without its required argument {arg:?} got {got}, not -32602");
                self.add(PROMPT_ARGUMENTS, detail);
            }
            return;
        }
        if let Outcome::Result(result) = outcome {
            self.judged(CONTENT_SHAPE);
            let messages = result.get("messages").and_then(Value::as_array);
            let Some(messages) = messages else {
                return self.add(CONTENT_SHAPE, "prompts/get result: messages is not an array");
            };
            for (i, message) in messages.iter().enumerate() {
                if let Some(problem) = message.get("content").map_or(Some("no content".into()), content_problem) {
                    self.add(CONTENT_SHAPE, format!("prompts/get result messages[{i}].content: {problem}"));
                }
            }
        }
    }

    fn resource_read(&mut self, surface: &Surface, params: &Map<String, Value>, outcome: &Outcome, era: Era) {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else { return };
        let listed = surface.resources.iter().any(|r| r == uri);
        if listed {
            self.judged(RESOURCE_READABLE);
        }
        if uri == UNKNOWN_URI {
            self.judged(RESOURCE_UNKNOWN);
        }
        match outcome {
            Outcome::Result(result) => {
                if uri == UNKNOWN_URI && !listed && !surface.templates.iter().any(|t| t.starts_with('{')) {
                    return self
                        .add(RESOURCE_UNKNOWN, format!("resources/read of the unknown URI {uri:?} got a result"));
                }
                let Some(contents) = result.get("contents").and_then(Value::as_array) else {
                    return self.add(CONTENT_SHAPE, "resources/read result: contents is not an array");
                };
                for (i, item) in contents.iter().enumerate() {
                    if let Some(problem) = resource_contents_problem(item) {
                        self.add(CONTENT_SHAPE, format!("resources/read result contents[{i}]: {problem}"));
                    }
                }
            }
            Outcome::Error(error) if listed && error.code != METHOD_NOT_FOUND => self.add(
                RESOURCE_READABLE,
                format!("resources/read of the listed resource {uri:?} got error {}", error.code),
            ),
            Outcome::Error(error) if uri == UNKNOWN_URI => {
                let accepted = match era {
                    Era::Handshake => [RESOURCE_NOT_FOUND, INVALID_PARAMS].contains(&error.code),
                    // -32002 is judged by MCP-ERROR-CODE-RESERVED.
                    Era::Modern => [RESOURCE_NOT_FOUND, INVALID_PARAMS].contains(&error.code),
                };
                if !accepted && error.code != METHOD_NOT_FOUND {
                    let want = if era == Era::Modern { "-32602" } else { "-32002 or -32602" };
                    let detail =
                        format!("resources/read of the unknown URI {uri:?} got error {}, not {want}", error.code);
                    self.add(RESOURCE_UNKNOWN, detail);
                }
            }
            Outcome::Error(_) => {}
        }
    }

    /// A `completion/complete` result: `completion.values` an array of at most 100 strings, `total` an integer
    /// when present, `hasMore` a boolean when present (schema.ts CompleteResult).
    fn completion(&mut self, outcome: &Outcome) {
        let Outcome::Result(result) = outcome else { return };
        if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
            return;
        }
        self.judged(COMPLETION_SHAPE);
        let Some(completion) = result.get("completion").and_then(Value::as_object) else {
            return self.add(COMPLETION_SHAPE, "completion/complete result: completion is not an object");
        };
        let mut problems = Vec::new();
        match completion.get("values").and_then(Value::as_array) {
            None => problems.push("values is not an array".to_string()),
            Some(values) if values.len() > MAX_COMPLETION_VALUES => {
                problems.push(format!("values has {} items, more than {MAX_COMPLETION_VALUES}", values.len()))
            }
            Some(values) => {
                if let Some(at) = values.iter().position(|value| !value.is_string()) {
                    problems.push(format!("values[{at}] is not a string"));
                }
            }
        }
        if completion.get("total").is_some_and(|total| !(total.is_u64() || total.is_i64())) {
            problems.push("total is not an integer".to_string());
        }
        if completion.get("hasMore").is_some_and(|more| !more.is_boolean()) {
            problems.push("hasMore is not a boolean".to_string());
        }
        if !problems.is_empty() {
            self.add(COMPLETION_SHAPE, format!("completion/complete result: {}", problems.join("; ")));
        }
    }

    fn list(&mut self, method: &str, params: &Map<String, Value>, outcome: &Outcome, era: Era) {
        if params.get("cursor").and_then(Value::as_str) == Some(BAD_CURSOR) {
            self.judged(CURSOR_INVALID);
            match outcome {
                Outcome::Error(error) if error.code == INVALID_PARAMS || error.code == METHOD_NOT_FOUND => {}
                other => {
                    let got = describe(other);
                    self.add(CURSOR_INVALID, format!("{method} with a cursor never issued got {got}, not -32602"))
                }
            }
            return;
        }
        let Outcome::Result(result) = outcome else { return };
        self.judged(LIST_SHAPE);
        self.judged(LIST_DUPLICATE_NAME);
        let (key, name_key) = match method {
            TOOLS_LIST => ("tools", "name"),
            PROMPTS_LIST => ("prompts", "name"),
            RESOURCES_LIST => ("resources", "uri"),
            _ => ("resourceTemplates", "uriTemplate"),
        };
        if result.get("nextCursor").is_some_and(|c| !c.is_string()) {
            self.add(LIST_SHAPE, format!("{method} result: nextCursor is not a string"));
        }
        let Some(items) = result.get(key).and_then(Value::as_array) else {
            return self.add(LIST_SHAPE, format!("{method} result: {key} is not an array"));
        };
        let mut seen = BTreeSet::new();
        for (i, item) in items.iter().enumerate() {
            if let Some(problem) = item_problem(key, item) {
                self.add(LIST_SHAPE, shorten(&format!("{method} result {key}[{i}]: {problem}")));
            }
            if let Some(name) = item.get(name_key).and_then(Value::as_str)
                && !seen.insert(name)
            {
                self.add(LIST_DUPLICATE_NAME, format!("{method} result lists {name_key} {name:?} twice"));
            }
            // `x-mcp-header` is 2026-07-28's: a legacy list's is an unknown keyword.
            if method == TOOLS_LIST
                && era == Era::Modern
                && let Some(schema) = item.get("inputSchema")
            {
                self.judged(TOOL_PARAM_HEADER);
                if let Err(problem) = param_headers(schema) {
                    let name = item.get("name").and_then(Value::as_str).unwrap_or("?");
                    self.add(TOOL_PARAM_HEADER, shorten(&format!("tools/list result tools[{i}] ({name}): {problem}")));
                }
            }
        }
    }
}

/// What is wrong with one listed item, if anything.
fn item_problem(key: &str, item: &Value) -> Option<String> {
    let Some(object) = item.as_object() else { return Some("not an object".into()) };
    let text = |name: &str| object.get(name).is_some_and(Value::is_string);
    match key {
        "tools" => {
            if !text("name") {
                return Some("name is not a string".into());
            }
            for schema_key in ["inputSchema", "outputSchema"] {
                match object.get(schema_key) {
                    None if schema_key == "outputSchema" => {}
                    Some(schema) if schema.is_object() && compile(schema).is_some() => {}
                    Some(schema) if schema.is_object() => return Some(format!("{schema_key} does not compile")),
                    other => {
                        let shown = other.map_or("missing".into(), |v| shorten(&v.to_string()));
                        return Some(format!("{schema_key} is not a JSON Schema object: {shown}"));
                    }
                }
            }
            None
        }
        "prompts" => {
            if !text("name") {
                return Some("name is not a string".into());
            }
            match object.get("arguments") {
                None => None,
                Some(Value::Array(arguments))
                    if arguments.iter().all(|a| a.get("name").is_some_and(Value::is_string)) =>
                {
                    None
                }
                Some(_) => Some("arguments is not an array of objects with a string name".into()),
            }
        }
        "resources" => (!text("uri") || !text("name")).then(|| "uri or name is not a string".into()),
        _ => (!text("uriTemplate") || !text("name")).then(|| "uriTemplate or name is not a string".into()),
    }
}

/// What is wrong with one content block, if anything (unknown types are not judged).
fn content_problem(item: &Value) -> Option<String> {
    let Some(object) = item.as_object() else { return Some("not an object".into()) };
    let text = |name: &str| object.get(name).is_some_and(Value::is_string);
    let Some(kind) = object.get("type").and_then(Value::as_str) else { return Some("type is not a string".into()) };
    match kind {
        "text" => (!text("text")).then(|| "text content without a string text".into()),
        "image" | "audio" => {
            if !text("mimeType") {
                return Some(format!("{kind} content without a string mimeType"));
            }
            match object.get("data").and_then(Value::as_str) {
                Some(data) if is_base64(data) => None,
                Some(data) => Some(format!("{kind} data is not base64: {}", shorten(data))),
                None => Some(format!("{kind} content without string data")),
            }
        }
        "resource_link" => {
            (!text("uri") || !text("name")).then(|| "resource_link without a string uri and name".into())
        }
        "resource" => match object.get("resource") {
            Some(resource) => resource_contents_problem(resource).map(|p| format!("embedded resource: {p}")),
            None => Some("resource content without a resource".into()),
        },
        _ => None,
    }
}

/// What is wrong with one resource contents object: a string uri, and a string text or a base64 blob.
fn resource_contents_problem(item: &Value) -> Option<String> {
    let Some(object) = item.as_object() else { return Some("not an object".into()) };
    if !object.get("uri").is_some_and(Value::is_string) {
        return Some("uri is not a string".into());
    }
    match (object.get("text"), object.get("blob")) {
        (Some(Value::String(_)), _) => None,
        (None, Some(Value::String(blob))) if is_base64(blob) => None,
        (None, Some(Value::String(blob))) => Some(format!("blob is not base64: {}", shorten(blob))),
        _ => Some("neither a string text nor a string blob".into()),
    }
}

/// Standard base64 with padding (RFC 4648 §4), as schema.ts's `format: "byte"` means.
fn is_base64(data: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(data.as_bytes()).is_ok()
}

/// `an error -32603`, `a successful result`, `an isError result`.
fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Error(error) => format!("error {}", error.code),
        Outcome::Result(result) if result.get("isError") == Some(&Value::Bool(true)) => "an isError result".into(),
        Outcome::Result(_) => "a result".into(),
    }
}

fn shorten(text: &str) -> String {
    crate::transcript::show_bytes(text.as_bytes(), 200)
}

#[cfg(test)]
mod tests;
