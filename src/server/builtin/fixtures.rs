//! The official conformance suite's fixtures (`serve --conformance-fixtures`): the tools, prompts and resources its
//! server scenarios call by name (`test_simple_text`, `test://static-text`, `test_simple_prompt`, the
//! `test_input_required_result_*` tools of 2026-07-28, ...), served beside calc's own so the reference server can be
//! held to `@modelcontextprotocol/conformance`. Their contents follow the suite's own `everything-server.ts`.
//!
//! A `requestState` is sealed: its payload travels with a keyed SipHash tag (a per-process random key), so a
//! tampered, foreign or replayed-from-another-process state is refused with -32602, as the spec asks of state a
//! server cannot trust (patterns/mrtr.mdx).

use super::surface::{LOGO_PNG, Refusal};
use crate::protocol::Era;
use crate::protocol::codes::{INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY};
use crate::protocol::envelope::{CLIENT_CAPABILITIES_KEY, LOG_LEVEL_KEY, META, PROGRESS_TOKEN_KEY};
use crate::protocol::logging::level_index;
use crate::protocol::methods::{ELICITATION_CREATE, GATED_SERVER_REQUESTS, ROOTS_LIST, SAMPLING_CREATE};
use serde_json::{Map, Value, json};
use std::hash::{BuildHasher, RandomState};
use std::sync::LazyLock;

/// A minimal WAV file, base64 (the suite's `TEST_AUDIO_BASE64`).
pub const AUDIO_WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// What a fixture tool call produced: the notifications it sends before its reply, and the reply.
pub struct Called {
    /// `notifications/message` and `notifications/progress`, in order.
    pub notifications: Vec<Value>,
    /// The result or the JSON-RPC error.
    pub reply: Result<Value, Refusal>,
}

impl Called {
    fn result(result: Value) -> Called {
        Called { notifications: Vec::new(), reply: Ok(result) }
    }
}

/// The least severe level a connection's client asked for (`logging/setLevel`, or the modern request's
/// `_meta` logLevel); `None` when it asked for nothing.
pub type LogLevel = Option<usize>;

/// The fixture tools, as `tools/list` items (the same in both eras).
pub fn tools() -> Vec<Value> {
    let empty = json!({ "type": "object", "properties": {} });
    let text_argument = |name: &str| {
        json!({ "type": "object", "properties": { name: { "type": "string" } },
        "required": [name] })
    };
    // Both eras list every fixture (a client learns one surface); a tool whose flow belongs to the other era says
    // so in a plain result there.
    let mut tools: Vec<(&str, &str, Value)> = vec![
        ("test_simple_text", "Tests simple text content response", empty.clone()),
        ("test_image_content", "Tests image content response", empty.clone()),
        ("test_audio_content", "Tests audio content response", empty.clone()),
        ("test_embedded_resource", "Tests embedded resource content response", empty.clone()),
        ("test_multiple_content_types", "Tests response with multiple content types", empty.clone()),
        ("test_tool_with_logging", "Tests tool that emits log messages during execution", empty.clone()),
        ("test_tool_with_progress", "Tests tool that reports progress notifications", empty.clone()),
        ("test_error_handling", "Tests error response handling", empty.clone()),
        ("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", json_schema_2020_12()),
        ("test_sampling", "Asks the client for a sampling mid-call (handshake era)", text_argument("prompt")),
        ("test_elicitation", "Asks the client for an elicitation mid-call (handshake era)", text_argument("message")),
        ("test_elicitation_sep1034_defaults", "Elicits a form with defaults (handshake era)", empty.clone()),
        ("test_elicitation_sep1330_enums", "Elicits a form with enums (handshake era)", empty.clone()),
    ];
    for (name, description) in [
        ("test_missing_capability", "Needs the client's sampling capability"),
        ("test_input_required_result_elicitation", "Asks for an elicitation (input_required)"),
        ("test_input_required_result_sampling", "Asks for a sampling (input_required)"),
        ("test_input_required_result_list_roots", "Asks for the roots (input_required)"),
        ("test_input_required_result_request_state", "Asks for a confirmation with a requestState"),
        ("test_input_required_result_multiple_inputs", "Asks for three inputs at once"),
        ("test_input_required_result_multi_round", "Asks for input over two rounds"),
        ("test_input_required_result_tampered_state", "Refuses a requestState it did not seal"),
        ("test_input_required_result_capabilities", "Asks only for what the client declared"),
        ("test_streaming_elicitation", "Answers with a complete result"),
        ("test_logging_tool", "Logs only when the request asked for a log level"),
    ] {
        tools.push((name, description, empty.clone()));
    }
    tools
        .into_iter()
        .map(|(name, description, schema)| json!({ "name": name, "description": description, "inputSchema": schema }))
        .collect()
}

/// Answers a `tools/call` of a fixture tool; `None` when `name` is none of them.
pub fn call_tool(name: &str, params: &Map<String, Value>, era: Era, level: LogLevel) -> Option<Called> {
    let text = |text: &str| json!({ "content": [{ "type": "text", "text": text }] });
    let image = json!({ "type": "image", "data": LOGO_PNG, "mimeType": "image/png" });
    let called = match name {
        "test_simple_text" => Called::result(text("This is a simple text response for testing.")),
        "test_image_content" => Called::result(json!({ "content": [image] })),
        "test_audio_content" => {
            Called::result(json!({ "content": [{ "type": "audio", "data": AUDIO_WAV, "mimeType": "audio/wav" }] }))
        }
        "test_embedded_resource" => Called::result(json!({ "content": [{ "type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain",
            "text": "This is an embedded resource content." } }] })),
        "test_multiple_content_types" => Called::result(json!({ "content": [
            { "type": "text", "text": "Multiple content types test:" },
            image,
            { "type": "resource", "resource": { "uri": "test://mixed-content-resource",
                "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}" } },
        ] })),
        "test_tool_with_logging" => {
            let notifications = ["Tool execution started", "Tool processing data", "Tool execution completed"]
                .into_iter()
                .filter_map(|data| log_message(level, era, "info", data))
                .collect();
            Called { notifications, reply: Ok(text("Tool with logging executed successfully")) }
        }
        "test_tool_with_progress" => {
            let token = params.get(META).and_then(|meta| meta.get(PROGRESS_TOKEN_KEY));
            let notifications = token.map_or(Vec::new(), |token| {
                [0, 50, 100]
                    .into_iter()
                    .map(|step| {
                        let params = json!({ PROGRESS_TOKEN_KEY: token, "progress": step, "total": 100,
                            "message": format!("Completed step {step} of 100") });
                        json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": params })
                    })
                    .collect()
            });
            let shown = token
                .map_or_else(|| "no progress token".to_string(), |t| t.as_str().map_or(t.to_string(), str::to_string));
            Called { notifications, reply: Ok(text(&shown)) }
        }
        "test_error_handling" => Called::result(json!({ "content": [{ "type": "text",
            "text": "This tool intentionally returns an error for testing" }], "isError": true })),
        "json_schema_2020_12_tool" => {
            let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
            Called::result(text(&format!("JSON Schema 2020-12 tool called with: {arguments}")))
        }
        // Reached in 2026-07-28 only: the reference connection asks the client itself in the handshake era.
        _ if mid_call_request(name, None).is_some() => {
            Called::result(text("This tool asks the client mid-call, which only the handshake era does"))
        }
        _ => {
            let reply = modern_tool(name, params)?;
            match era {
                Era::Handshake => {
                    Called::result(text("This tool's flow (input_required, per-request capabilities) is 2026-07-28's"))
                }
                Era::Modern => Called { notifications: modern_tool_notifications(name, level), reply },
            }
        }
    };
    Some(called)
}

/// A `notifications/message` at `level` when the client asked for it: in the handshake era unless
/// `logging/setLevel` asked for a more severe level, in 2026-07-28 only when the request's `_meta` named a level
/// (and not a more severe one).
fn log_message(asked: LogLevel, era: Era, level: &str, data: &str) -> Option<Value> {
    let wanted = match (asked, era) {
        (Some(least), _) => level_index(level).is_some_and(|index| index >= least),
        (None, Era::Handshake) => true,
        (None, Era::Modern) => false,
    };
    wanted.then(|| {
        json!({ "jsonrpc": "2.0", "method": "notifications/message",
            "params": { "level": level, "logger": "calc", "data": data } })
    })
}

/// The handshake-era fixture tools that ask the client mid-call: the capability the request needs, its method and
/// params; `None` for the other tools.
pub fn mid_call_request(name: &str, arguments: Option<&Value>) -> Option<(&'static str, &'static str, Value)> {
    let argument = |key: &str| arguments.and_then(|a| a.get(key)).and_then(Value::as_str).unwrap_or_default();
    let form = |message: &str, properties: Value| json!({ "message": message, "requestedSchema": { "type": "object", "properties": properties, "required": [] } });
    Some(match name {
        "test_sampling" => (
            "sampling",
            SAMPLING_CREATE,
            json!({ "maxTokens": 100,
            "messages": [{ "role": "user", "content": { "type": "text", "text": argument("prompt") } }] }),
        ),
        "test_elicitation" => (
            "elicitation",
            ELICITATION_CREATE,
            json!({ "message": argument("message"),
            "requestedSchema": { "type": "object", "required": ["response"],
                "properties": { "response": { "type": "string", "description": "User's response" } } } }),
        ),
        "test_elicitation_sep1034_defaults" => (
            "elicitation",
            ELICITATION_CREATE,
            form(
                "Please review and update the form fields with defaults",
                json!({
                    "name": { "type": "string", "description": "User name", "default": "John Doe" },
                    "age": { "type": "integer", "description": "User age", "default": 30 },
                    "score": { "type": "number", "description": "User score", "default": 95.5 },
                    "status": { "type": "string", "description": "User status",
                        "enum": ["active", "inactive", "pending"], "default": "active" },
                    "verified": { "type": "boolean", "description": "Verification status", "default": true }
                }),
            ),
        ),
        "test_elicitation_sep1330_enums" => (
            "elicitation",
            ELICITATION_CREATE,
            form(
                "Please select options from the enum fields",
                json!({
                    "untitledSingle": { "type": "string", "description": "Select one option",
                        "enum": ["option1", "option2", "option3"] },
                    "titledSingle": { "type": "string", "description": "Select one option with titles", "oneOf": [
                        { "const": "value1", "title": "First Option" }, { "const": "value2", "title": "Second Option" },
                        { "const": "value3", "title": "Third Option" }] },
                    "legacyEnum": { "type": "string", "description": "Select one option (legacy)",
                        "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"] },
                    "untitledMulti": { "type": "array", "description": "Select multiple options", "minItems": 1,
                        "maxItems": 3, "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
                    "titledMulti": { "type": "array", "description": "Select multiple options with titles",
                        "minItems": 1, "maxItems": 3, "items": { "anyOf": [
                            { "const": "value1", "title": "First Choice" }, { "const": "value2", "title": "Second Choice" },
                            { "const": "value3", "title": "Third Choice" }] } }
                }),
            ),
        ),
        _ => return None,
    })
}

/// What is wrong with a client's `result` for a request of `method` the server sent, when it breaks the result's
/// schema (schema.ts CreateMessageResult, ElicitResult, ListRootsResult); `None` when it is well-formed.
pub fn malformed_answer(method: &str, result: &Value) -> Option<&'static str> {
    let field = |name: &str| result.get(name);
    let one_of = |name: &str, values: &[&str]| field(name).and_then(Value::as_str).is_some_and(|v| values.contains(&v));
    match method {
        SAMPLING_CREATE if !one_of("role", &["user", "assistant"]) => {
            Some("a sampling result's role is user or assistant")
        }
        SAMPLING_CREATE if !field("content").is_some_and(|c| c.is_object() || c.is_array()) => {
            Some("a sampling result's content is a content block")
        }
        ELICITATION_CREATE if !one_of("action", &["accept", "decline", "cancel"]) => {
            Some("an elicitation result's action is accept, decline or cancel")
        }
        ELICITATION_CREATE if field("content").is_some_and(|c| !c.is_object()) => {
            Some("an elicitation result's content is an object")
        }
        ROOTS_LIST if !field("roots").is_some_and(Value::is_array) => Some("a roots result's roots are a list"),
        _ => None,
    }
}

/// The result of a mid-call fixture tool once the client answered: what it said, or why not (an isError result
/// when the answer breaks its schema).
pub fn mid_call_result(method: &str, answer: Result<&Value, &str>) -> Value {
    if let Ok(result) = answer
        && let Some(why) = malformed_answer(method, result)
    {
        let text = format!("The client's answer is malformed: {why}");
        return json!({ "content": [{ "type": "text", "text": text }], "isError": true });
    }
    let text = match (method, answer) {
        (SAMPLING_CREATE, Ok(result)) => {
            let said = result.get("content").and_then(|c| c.get("text")).and_then(Value::as_str);
            format!("LLM response: {}", said.unwrap_or("No response"))
        }
        (_, Ok(result)) => {
            let action = result.get("action").and_then(Value::as_str).unwrap_or("unknown");
            let content = result.get("content").cloned().unwrap_or_else(|| json!({}));
            format!("User response: action={action}, content={content}")
        }
        (_, Err(why)) => format!("The client refused: {why}"),
    };
    json!({ "content": [{ "type": "text", "text": text }] })
}

/// The 2026-07-28 fixture tools: the capability check and the `input_required` rounds.
fn modern_tool(name: &str, params: &Map<String, Value>) -> Option<Result<Value, Refusal>> {
    let text = |text: String| Ok(json!({ "content": [{ "type": "text", "text": text }] }));
    // Input responses are the client's answers, keyed as the server asked: an object of objects, or absent.
    let responses = match params.get("inputResponses") {
        None => None,
        Some(Value::Object(responses)) if responses.values().all(Value::is_object) => Some(responses),
        Some(_) => return Some(Err(Refusal::new(INVALID_PARAMS, "inputResponses must map each key to a result"))),
    };
    let response = |key: &str| responses.and_then(|responses| responses.get(key));
    let capabilities = params.get(META).and_then(|meta| meta.get(CLIENT_CAPABILITIES_KEY));
    let declares = |capability: &str| capabilities.and_then(|c| c.get(capability)).is_some_and(Value::is_object);
    let state = match params.get("requestState") {
        None => None,
        Some(sealed) => match sealed.as_str().and_then(unseal) {
            Some(state) => Some(state),
            None => return Some(Err(Refusal::new(INVALID_PARAMS, "Invalid or expired requestState"))),
        },
    };
    let kind = state.as_ref().and_then(|s| s.get("kind")).and_then(Value::as_str);
    let reply = match name {
        "test_missing_capability" if !declares("sampling") => Err(missing_capability("sampling")),
        "test_missing_capability" => text("Success".into()),
        "test_input_required_result_elicitation" => match response("user_name") {
            Some(answer) => text(format!("Hello, {}!", answer_field(answer, "name"))),
            None => Ok(input_required(json!({ "user_name": ask_text("What is your name?", "name") }), None)),
        },
        "test_input_required_result_sampling" => match response("sample_request") {
            Some(answer) => {
                let said = answer.get("content").and_then(|c| c.get("text")).and_then(Value::as_str);
                text(format!("Sampling result: {}", said.unwrap_or("no response")))
            }
            None => Ok(input_required(json!({ "sample_request": sample("What is the capital of France?") }), None)),
        },
        "test_input_required_result_list_roots" => match response("roots_request") {
            Some(answer) => {
                let roots = answer.get("roots").and_then(Value::as_array).map_or(0, Vec::len);
                text(format!("Found {roots} root(s)"))
            }
            None => Ok(input_required(json!({ "roots_request": { "method": ROOTS_LIST, "params": {} } }), None)),
        },
        "test_input_required_result_request_state" | "test_input_required_result_tampered_state" => {
            let confirmed =
                response("confirm").is_some_and(|answer| answer_content(answer).get("ok") == Some(&json!(true)));
            match (kind, confirmed) {
                (Some("confirm"), true) => text("state-ok: requestState validated".into()),
                _ => Ok(input_required(json!({ "confirm": confirm() }), Some(json!({ "kind": "confirm" })))),
            }
        }
        "test_input_required_result_multiple_inputs" => {
            match (kind, response("user_name"), response("greeting"), response("client_roots")) {
                (Some("multiple-inputs"), Some(user), Some(greeting), Some(roots)) => {
                    let greeting = greeting.get("content").and_then(|c| c.get("text")).and_then(Value::as_str);
                    let roots = roots.get("roots").and_then(Value::as_array).map_or(0, Vec::len);
                    text(format!(
                        "Name: {}; Greeting: {}; Roots: {roots}",
                        answer_field(user, "name"),
                        greeting.unwrap_or("Hello there!")
                    ))
                }
                _ => Ok(input_required(
                    json!({
                        "user_name": ask_text("What is your name?", "name"),
                        "greeting": sample("Generate a greeting"),
                        "client_roots": { "method": ROOTS_LIST, "params": {} },
                    }),
                    Some(json!({ "kind": "multiple-inputs" })),
                )),
            }
        }
        "test_input_required_result_multi_round" => {
            let round = state.as_ref().and_then(|s| s.get("round")).and_then(Value::as_u64);
            match (round, response("step1"), response("step2")) {
                (Some(1), Some(answer), _) => Ok(input_required(
                    json!({ "step2": ask_text("Step 2: What is your favorite color?", "color") }),
                    Some(json!({ "round": 2, "name": answer_field(answer, "name") })),
                )),
                (Some(2), _, Some(answer)) => {
                    let who = state.as_ref().and_then(|s| s.get("name")).and_then(Value::as_str).unwrap_or("friend");
                    text(format!("Multi-round complete for {who} who likes {}", answer_field(answer, "color")))
                }
                _ => Ok(input_required(
                    json!({ "step1": ask_text("Step 1: What is your name?", "name") }),
                    Some(json!({ "round": 1 })),
                )),
            }
        }
        "test_input_required_result_capabilities" => {
            let mut requests = Map::new();
            if declares("elicitation") {
                requests.insert("elicit_input".into(), ask_text("Elicitation input", "value"));
            }
            if declares("sampling") {
                requests.insert("sample_input".into(), sample("Sample request"));
            }
            match responses.filter(|responses| !responses.is_empty()) {
                Some(responses) => {
                    let keys: Vec<&str> = responses.keys().map(String::as_str).collect();
                    text(format!("capabilities-ok: received {}", keys.join(",")))
                }
                None if requests.is_empty() => text("No supported capabilities declared".into()),
                None => Ok(input_required(Value::Object(requests), Some(json!({ "kind": "capabilities" })))),
            }
        }
        "test_streaming_elicitation" => text("Streaming complete".into()),
        "test_logging_tool" => text("Logging evaluated".into()),
        _ => return None,
    };
    Some(gated(reply, params))
}

/// A server must not ask for what the client did not declare (patterns/mrtr.mdx): an `input_required` reply that
/// would is refused instead, as a request that needs a capability the client lacks (-32021).
fn gated(reply: Result<Value, Refusal>, params: &Map<String, Value>) -> Result<Value, Refusal> {
    let capabilities = params.get(META).and_then(|meta| meta.get(CLIENT_CAPABILITIES_KEY));
    let declares = |capability: &str| capabilities.and_then(|c| c.get(capability)).is_some_and(Value::is_object);
    if let Ok(result) = &reply
        && let Some(requests) = result.get("inputRequests").and_then(Value::as_object)
    {
        let needed = requests.values().filter_map(|request| request.get("method")?.as_str());
        let mut gates = needed.filter_map(|method| GATED_SERVER_REQUESTS.iter().find(|(m, _)| *m == method));
        if let Some((_, capability)) = gates.find(|(_, capability)| !declares(capability)) {
            return Err(missing_capability(capability));
        }
    }
    reply
}

/// The -32021 refusal of a call that needs `capability`, which the client did not declare.
fn missing_capability(capability: &str) -> Refusal {
    Refusal {
        code: MISSING_REQUIRED_CLIENT_CAPABILITY,
        message: format!("this call needs the client's {capability} capability"),
        data: Some(json!({ "requiredCapabilities": { capability: {} } })),
    }
}

/// The notifications `test_logging_tool` sends in 2026-07-28: one, only when the request named a log level.
fn modern_tool_notifications(name: &str, level: LogLevel) -> Vec<Value> {
    match name {
        "test_logging_tool" => {
            log_message(level, Era::Modern, "info", "Diagnostic trace logging activated").into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// The modern request's `_meta` log level, as an index in [`crate::protocol::logging::LOG_LEVELS`].
pub fn requested_level(params: &Map<String, Value>) -> LogLevel {
    params.get(META)?.get(LOG_LEVEL_KEY)?.as_str().and_then(level_index)
}

/// An `input_required` result asking for `requests`, with `state` sealed as its `requestState`.
fn input_required(requests: Value, state: Option<Value>) -> Value {
    let mut result = json!({ "resultType": "input_required", "inputRequests": requests });
    if let Some(state) = state {
        result["requestState"] = Value::String(seal(&state));
    }
    result
}

/// An elicitation asking for one string field.
fn ask_text(message: &str, field: &str) -> Value {
    json!({ "method": ELICITATION_CREATE, "params": { "message": message, "requestedSchema": {
        "type": "object", "properties": { field: { "type": "string" } }, "required": [field] } } })
}

/// An elicitation asking for a boolean `ok`.
fn confirm() -> Value {
    json!({ "method": ELICITATION_CREATE, "params": { "message": "Please confirm", "requestedSchema": {
        "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] } } })
}

/// A sampling request for one user message.
fn sample(prompt: &str) -> Value {
    json!({ "method": SAMPLING_CREATE, "params": { "messages": [{ "role": "user",
        "content": { "type": "text", "text": prompt } }], "maxTokens": 100 } })
}

/// The `content` of an elicitation answer (an object, or empty).
fn answer_content(answer: &Value) -> Map<String, Value> {
    answer.get("content").and_then(Value::as_object).cloned().unwrap_or_default()
}

/// A string field of an elicitation answer's content, or `unknown`.
fn answer_field(answer: &Value, field: &str) -> String {
    answer_content(answer).get(field).and_then(Value::as_str).unwrap_or("unknown").to_string()
}

/// The key the process seals request states with.
static SEAL_KEY: LazyLock<RandomState> = LazyLock::new(RandomState::new);

/// `state` as a sealed `requestState`: `{"data": <state as JSON text>, "tag": <keyed hash of it>}` as JSON text.
pub fn seal(state: &Value) -> String {
    let data = state.to_string();
    json!({ "data": data, "tag": format!("{:016x}", SEAL_KEY.hash_one(&data)) }).to_string()
}

/// The state a sealed `requestState` carries, or `None` when it was not sealed by this process or was altered.
pub fn unseal(sealed: &str) -> Option<Value> {
    let envelope: Value = serde_json::from_str(sealed).ok()?;
    let data = envelope.get("data")?.as_str()?;
    let tag = envelope.get("tag")?.as_str()?;
    (tag == format!("{:016x}", SEAL_KEY.hash_one(data))).then(|| serde_json::from_str(data).ok())?
}

/// The fixture prompts, as `prompts/list` items (the same in both eras).
pub fn prompts() -> Vec<Value> {
    vec![
        json!({ "name": "test_simple_prompt", "description": "A simple prompt without arguments" }),
        json!({ "name": "test_prompt_with_arguments", "description": "A prompt with required arguments",
            "arguments": [
                { "name": "arg1", "description": "First test argument", "required": true },
                { "name": "arg2", "description": "Second test argument", "required": true }
            ] }),
        json!({ "name": "test_prompt_with_embedded_resource", "description": "A prompt with an embedded resource",
            "arguments": [{ "name": "resourceUri", "description": "URI of the resource to embed", "required": true }] }),
        json!({ "name": "test_prompt_with_image", "description": "A prompt that includes image content" }),
        json!({ "name": "test_input_required_result_prompt",
            "description": "A prompt that asks for context (input_required, 2026-07-28)" }),
    ]
}

/// Answers a `prompts/get` of a fixture prompt; `None` when `name` is none of them.
pub fn get_prompt(name: &str, params: &Map<String, Value>, era: Era) -> Option<Result<Value, Refusal>> {
    let user = |content: Value| json!({ "role": "user", "content": content });
    let text = |text: String| json!({ "type": "text", "text": text });
    let argument = |key: &str| params.get("arguments").and_then(|a| a.get(key)).and_then(Value::as_str);
    let messages = match name {
        "test_simple_prompt" => vec![user(text("This is a simple prompt for testing.".into()))],
        "test_prompt_with_arguments" => match (argument("arg1"), argument("arg2")) {
            (Some(arg1), Some(arg2)) => {
                vec![user(text(format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")))]
            }
            _ => return Some(Err(Refusal::new(INVALID_PARAMS, "Missing required arguments: arg1 and arg2"))),
        },
        "test_prompt_with_embedded_resource" => match argument("resourceUri") {
            Some(uri) => vec![
                user(json!({ "type": "resource", "resource": { "uri": uri, "mimeType": "text/plain",
                    "text": "Embedded resource content for testing." } })),
                user(text("Please process the embedded resource above.".into())),
            ],
            None => return Some(Err(Refusal::new(INVALID_PARAMS, "Missing required argument: resourceUri"))),
        },
        "test_prompt_with_image" => vec![
            user(json!({ "type": "image", "data": LOGO_PNG, "mimeType": "image/png" })),
            user(text("Please analyze the image above.".into())),
        ],
        "test_input_required_result_prompt" if era == Era::Handshake => {
            vec![user(text("This prompt's flow (input_required) is 2026-07-28's".into()))]
        }
        "test_input_required_result_prompt" => {
            let answer = params.get("inputResponses").and_then(|r| r.get("user_context"));
            match answer {
                Some(answer) => vec![user(text(format!("Prompt with context: {}", answer_field(answer, "context"))))],
                None => {
                    let asks = json!({ "user_context": ask_text("What context should the prompt use?", "context") });
                    return Some(gated(Ok(input_required(asks, None)), params));
                }
            }
        }
        _ => return None,
    };
    Some(Ok(json!({ "messages": messages })))
}

/// The fixture resources, as `resources/list` items.
pub fn resources() -> Vec<Value> {
    vec![
        json!({ "uri": "test://static-text", "name": "static-text", "mimeType": "text/plain" }),
        json!({ "uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png" }),
        json!({ "uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain" }),
    ]
}

/// The fixture resource template, as a `resources/templates/list` item.
pub fn templates() -> Vec<Value> {
    vec![json!({ "uriTemplate": "test://template/{id}/data", "name": "template", "mimeType": "application/json" })]
}

/// Answers a `resources/read` of a fixture resource; `None` when `uri` is none of them.
pub fn read_resource(uri: &str) -> Option<Value> {
    let contents = match uri {
        "test://static-text" => {
            json!({ "uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource." })
        }
        "test://static-binary" => json!({ "uri": uri, "mimeType": "image/png", "blob": LOGO_PNG }),
        "test://watched-resource" => {
            json!({ "uri": uri, "mimeType": "text/plain", "text": "Watched resource content" })
        }
        _ => {
            let id = uri.strip_prefix("test://template/")?.strip_suffix("/data")?;
            if id.is_empty() || id.contains('/') {
                return None;
            }
            let data = json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
            json!({ "uri": uri, "mimeType": "application/json", "text": data.to_string() })
        }
    };
    Some(json!({ "contents": [contents] }))
}

/// Answers `completion/complete`: no suggestions, for any prompt argument or template variable the fixtures have.
pub fn complete(params: Option<&Value>) -> Result<Value, Refusal> {
    let reference = params.and_then(|p| p.get("ref"));
    let argument = params.and_then(|p| p.get("argument"));
    let kind = reference.and_then(|r| r.get("type")).and_then(Value::as_str);
    if !matches!(kind, Some("ref/prompt" | "ref/resource")) || !argument.is_some_and(Value::is_object) {
        return Err(Refusal::new(INVALID_PARAMS, "completion/complete needs a ref and an argument"));
    }
    Ok(json!({ "completion": { "values": [], "total": 0, "hasMore": false } }))
}

/// The input schema of `json_schema_2020_12_tool`: `$schema`, `$defs` with an `$anchor`, `$ref`, composition and
/// conditional keywords, `additionalProperties: false`.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": { "address": { "$anchor": "addressDef", "type": "object",
            "properties": { "street": { "type": "string" }, "city": { "type": "string" } } } },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests;
