//! Turning a [`Script`] into the lines sent: messages are built as JSON values in a fixed key order (`jsonrpc`,
//! `id`, `method`, `params`), serialized compactly, and mutated as bytes when a step asks for it.

use super::id::{IdKind, Ids, literal};
use super::message::{Call, Envelope, Message, Note, Request, ToolCall};
use super::{Opening, Script, Step};
use crate::protocol::envelope::{self, META};
use crate::protocol::era::LATEST_MODERN_VERSION;
use crate::protocol::methods::{DISCOVER, INITIALIZE, INITIALIZED};
use crate::transcript::Input;
use serde_json::{Map, Value, json};

/// The `clientInfo` every `initialize` carries.
pub const CLIENT_NAME: &str = "mcp-wirefuzz";

/// Encodes `script`, step by step; see [`Script::encode`].
pub(crate) fn encode(script: &Script) -> Vec<Input> {
    let mut ids = Ids::new();
    let mut out = Vec::new();
    let line = |value: Map<String, Value>| Input::Line(json_bytes(&Value::Object(value)));
    match script.opening {
        Opening::Handshake(version) => {
            let id = ids.assign(IdKind::SmallInt);
            out.push(line(request(id, INITIALIZE, Some(initialize_params(version.as_str())))));
            out.push(line(notification(INITIALIZED, None)));
            out.push(Input::Sync);
        }
        Opening::Modern => {
            let id = ids.assign(IdKind::SmallInt);
            out.push(line(enveloped(request(id, DISCOVER, None))));
            out.push(Input::Sync);
        }
        Opening::Nothing => {}
    }
    for step in &script.steps.0 {
        out.push(match step {
            Step::Send(message) => line(build(message, &mut ids)),
            Step::Mutated(request, mutation) => {
                let ordinal = ids.peek();
                Input::Line(mutation.apply(build_request(request, &mut ids), ordinal))
            }
            Step::Batch(messages) => {
                let items = messages.0.iter().map(|m| Value::Object(build(m, &mut ids))).collect();
                Input::Line(json_bytes(&Value::Array(items)))
            }
            Step::Raw(raw) => Input::Line(raw.bytes().to_vec()),
            Step::Sync => Input::Sync,
        });
    }
    out
}

/// A value serialized compactly, as `to_string` writes it, straight into bytes.
pub(crate) fn json_bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("a JSON value always serializes")
}

/// A message as a JSON object.
fn build(message: &Message, ids: &mut Ids) -> Map<String, Value> {
    match message {
        Message::Request(r) => build_request(r, ids),
        Message::Notification(note) => {
            let params = match note {
                Note::Cancelled => {
                    let id = ids.last().cloned().unwrap_or(json!(0));
                    Some(json!({ "requestId": id, "reason": "wirefuzz" }))
                }
                Note::Initialized | Note::Unknown => None,
            };
            notification(note.method(), params)
        }
    }
}

/// A request as a JSON object; takes the next id.
fn build_request(r: &Request, ids: &mut Ids) -> Map<String, Value> {
    let ordinal = ids.peek();
    let id = ids.assign(r.id);
    let params = match r.call {
        Call::ToolsCall(arguments) => Some(tool_call_params(arguments, ordinal)),
        Call::Initialize(version) => Some(initialize_params(version.as_str())),
        Call::ToolsList | Call::Discover | Call::PromptsList | Call::ResourcesList | Call::Ping | Call::Unknown => None,
    };
    let message = request(id, r.call.method(), params);
    match r.envelope {
        Envelope::Plain => message,
        Envelope::Modern => enveloped(message),
    }
}

/// `{"jsonrpc":"2.0","id":...,"method":...}` with `params` when given.
fn request(id: Value, method: &str, params: Option<Value>) -> Map<String, Value> {
    let mut message = Map::new();
    message.insert("jsonrpc".into(), json!("2.0"));
    message.insert("id".into(), id);
    message.insert("method".into(), json!(method));
    if let Some(params) = params {
        message.insert("params".into(), params);
    }
    message
}

/// `{"jsonrpc":"2.0","method":...}` with `params` when given.
fn notification(method: &str, params: Option<Value>) -> Map<String, Value> {
    let mut message = request(Value::Null, method, params);
    message.shift_remove("id");
    message
}

/// The message with the full 2026-07-28 envelope added as the last member of its `params`.
fn enveloped(mut message: Map<String, Value>) -> Map<String, Value> {
    let params = message.entry("params").or_insert_with(|| json!({}));
    if let Some(params) = params.as_object_mut() {
        params.insert(META.into(), envelope::envelope(LATEST_MODERN_VERSION));
    }
    message
}

/// The params of an `initialize` asking for `version`.
fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": { "name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION") },
    })
}

/// The params of a `tools/call`; `ordinal` varies the good arguments so replies tell calls apart.
fn tool_call_params(arguments: ToolCall, ordinal: u64) -> Value {
    let add = |arguments: Value| json!({ "name": "add", "arguments": arguments });
    match arguments {
        ToolCall::Good => add(json!({ "a": ordinal, "b": 2 })),
        ToolCall::MissingArgument => add(json!({ "a": 1 })),
        ToolCall::StringArgument => add(json!({ "a": "1", "b": 2 })),
        ToolCall::FloatArgument => add(json!({ "a": literal("1.5"), "b": 2 })),
        ToolCall::HugeInteger => add(json!({ "a": literal("123456789012345678901234567890"), "b": 2 })),
        ToolCall::ExtraArgument => add(json!({ "a": 1, "b": 2, "c": 3 })),
        ToolCall::UnknownTool => json!({ "name": "subtract", "arguments": { "a": 1, "b": 2 } }),
        ToolCall::MissingName => json!({ "arguments": { "a": 1, "b": 2 } }),
    }
}
