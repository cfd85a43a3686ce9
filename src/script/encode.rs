//! Turning a [`Script`] into the lines sent: each message is decided once as its [`Parts`] (id, method, params,
//! envelope), then written straight to bytes in a fixed key order (`jsonrpc`, `id`, `method`, `params`), the bytes
//! `serde_json` writes for the same value, or, for a step that mutates it, built as a JSON object that the
//! mutation edits and serializes.

use super::arguments;
use super::edges::{self, Edge};
use super::id::{IdKind, Ids, literal};
use super::message::{
    Call, CompletePlan, Envelope, ListenPlan, Message, Note, PromptArguments, Request, ResourceUri, SubscribePlan,
    ToolCall,
};
use super::odd_string::OddString;
use super::{Declares, Opening, Script, Step};
use crate::protocol::client::{ANSWERS_KEY, Answers};
use crate::protocol::envelope::{self, CLIENT_CAPABILITIES_KEY, LOG_LEVEL_KEY, META, PROGRESS_TOKEN_KEY};
use crate::protocol::era::LATEST_MODERN_VERSION;
use crate::protocol::logging::LOG_LEVELS;
use crate::protocol::methods::{DISCOVER, INITIALIZE, INITIALIZED};
use crate::surface::Surface;
use crate::transcript::Input;
use serde_json::{Map, Value, json};
use std::sync::LazyLock;

/// The `clientInfo` every `initialize` carries.
pub const CLIENT_NAME: &str = "mcp-wirefuzz";

/// Encodes `script` for a server with `surface`, step by step; see [`Script::encode_on`].
pub(crate) fn encode(script: &Script, surface: &Surface) -> Vec<Input> {
    let mut ids = Ids::new();
    let mut out = Vec::with_capacity(script.steps.0.len() + 3);
    match script.opening {
        Opening::Handshake(version, declares) => {
            let id = ids.assign(IdKind::SmallInt);
            let params = Some(initialize_params(version.as_str(), declares));
            out.push(Parts::new(Some(id), INITIALIZE, params, false).line());
            out.push(Parts::new(None, INITIALIZED, None, false).line());
            out.push(Input::Sync);
        }
        Opening::Modern | Opening::NotificationFirst => {
            if script.opening == Opening::NotificationFirst {
                out.push(Parts::of(&Message::Notification(Note::Cancelled), &mut ids, surface).line());
            }
            let id = ids.assign(IdKind::SmallInt);
            out.push(Parts::new(Some(id), DISCOVER, None, true).line());
            out.push(Input::Sync);
        }
        Opening::Nothing => {}
    }
    for step in &script.steps.0 {
        // A value seen in an earlier result is taken from the replies before the latest sync point: one comes first.
        if refers(step) && out.last().is_some_and(|input| *input != Input::Sync) {
            out.push(Input::Sync);
        }
        out.push(match step {
            Step::Send(message) => Parts::of(message, &mut ids, surface).line(),
            Step::Mutated(request, mutation) => {
                let ordinal = ids.peek();
                Input::Line(mutation.apply(build_request(request, &mut ids, surface), ordinal))
            }
            Step::Batch(messages) => {
                let mut line = vec![b'['];
                for (i, message) in messages.0.iter().enumerate() {
                    if i > 0 {
                        line.push(b',');
                    }
                    Parts::of(message, &mut ids, surface).write(&mut line);
                }
                line.push(b']');
                Input::Line(line)
            }
            Step::Raw(raw) => Input::Line(raw.bytes().to_vec()),
            Step::Sync => Input::Sync,
            Step::Sequence(plans) => {
                for (at, plan) in plans.0.iter().enumerate() {
                    if out.last().is_some_and(|input| *input != Input::Sync) {
                        out.push(Input::Sync);
                    }
                    let call = Call::Tool(super::sequenced(at, *plan));
                    let request =
                        Request { call, id: IdKind::SmallInt, envelope: super::envelope(script.opening.era()) };
                    out.push(Parts::of_request(&request, &mut ids, surface).line());
                }
                continue;
            }
        });
    }
    out
}

/// Whether a step holds a tool call or a prompt get with an argument seen in an earlier result ([`Edge::Seen`]).
fn refers(step: &Step) -> bool {
    let seen = |request: &Request| match request.call {
        Call::Tool(plan) => plan.arguments.edge == Edge::Seen,
        Call::Prompt(plan) => plan.arguments == PromptArguments::Edge(Edge::Seen),
        _ => false,
    };
    let message = |message: &Message| matches!(message, Message::Request(request) if seen(request));
    match step {
        Step::Send(m) => message(m),
        Step::Mutated(request, _) => seen(request),
        Step::Batch(messages) => messages.0.iter().any(message),
        Step::Raw(_) | Step::Sync | Step::Sequence(_) => false,
    }
}

/// A value serialized compactly, as `to_string` writes it, straight into bytes.
pub(crate) fn json_bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("a JSON value always serializes")
}

/// Appends `value` serialized compactly.
fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(out, value).expect("a JSON value always serializes into memory");
}

/// The serialized 2026-07-28 envelope, the same for every request that carries it.
static ENVELOPE: LazyLock<Vec<u8>> = LazyLock::new(|| json_bytes(&envelope::envelope(LATEST_MODERN_VERSION)));

/// One message, decided: what its members hold. A request has an id; a notification has none.
struct Parts {
    id: Option<Value>,
    method: &'static str,
    /// Always present for a modern message (an empty object when the method takes none).
    params: Option<Value>,
    /// The full 2026-07-28 envelope goes into `params._meta` (added as the last member of an object `params`).
    modern: bool,
}

impl Parts {
    /// The parts of a message; a modern one without params gets an empty object to carry the envelope.
    fn new(id: Option<Value>, method: &'static str, params: Option<Value>, modern: bool) -> Parts {
        let params = params.or_else(|| modern.then(|| json!({})));
        Parts { id, method, params, modern }
    }

    /// The parts of `message`; a request takes the next id.
    fn of(message: &Message, ids: &mut Ids, surface: &Surface) -> Parts {
        match message {
            Message::Request(r) => Parts::of_request(r, ids, surface),
            Message::Notification(note) => {
                let params = match note {
                    Note::Cancelled => {
                        let id = ids.last().cloned().unwrap_or(json!(0));
                        Some(json!({ "requestId": id, "reason": "wirefuzz" }))
                    }
                    Note::Initialized | Note::Unknown => None,
                };
                Parts::new(None, note.method(), params, false)
            }
        }
    }

    /// The parts of a request; takes the next id.
    fn of_request(r: &Request, ids: &mut Ids, surface: &Surface) -> Parts {
        let ordinal = ids.peek();
        let id = ids.assign(r.id);
        let params = match r.call {
            Call::ToolsCall(arguments) => Some(tool_call_params(arguments, ordinal)),
            Call::Initialize(version) => Some(initialize_params(version.as_str(), Declares::Nothing)),
            Call::Tool(plan) => Some(match surface.tools.get(usize::from(plan.tool) % surface.tools.len().max(1)) {
                // A call of a listed tool asks for progress: a token of its own, never reused in the conversation.
                // In 2026-07-28 half of them (bit 4 of the plan's tool draw) declare every client capability (so
                // an `input_required` flow can run) and ask for log messages (`debug`, or `warning` by bit 3),
                // their answers in the style the draw's top three bits pick: the call's own, so a minimized case
                // keeps it.
                Some(tool) => {
                    let mut meta = json!({ PROGRESS_TOKEN_KEY: format!("wirefuzz-progress-{ordinal}") });
                    if r.envelope == Envelope::Modern && plan.tool & 0x10 != 0 {
                        meta[CLIENT_CAPABILITIES_KEY] = Declares::Everything(Answers::Accept).capabilities();
                        meta[LOG_LEVEL_KEY] = json!(if plan.tool & 0x08 != 0 { "warning" } else { "debug" });
                        let style = MODERN_STYLES[usize::from(plan.tool >> 5) % MODERN_STYLES.len()];
                        if style != Answers::Accept {
                            meta[ANSWERS_KEY] = json!(style.name());
                        }
                    }
                    json!({
                        "name": tool.name,
                        "arguments": arguments::arguments(&tool.input_schema, plan.arguments),
                        META: meta,
                    })
                }
                None => tool_call_params(ToolCall::UnknownTool, ordinal),
            }),
            Call::Prompt(plan) => Some(prompt_params(surface, usize::from(plan.prompt), plan.arguments)),
            Call::Resource(plan) => Some(json!({ "uri": resource_uri(surface, usize::from(plan.index), plan.uri) })),
            Call::BadCursor(_) => Some(json!({ "cursor": BAD_CURSOR })),
            Call::Listen(plan) => Some(listen_params(surface, plan)),
            Call::SetLevel(draw) => {
                Some(json!({ "level": LOG_LEVELS.get(usize::from(draw % 9)).unwrap_or(&BAD_LEVEL) }))
            }
            Call::Complete(plan) => Some(complete_params(surface, plan)),
            Call::Subscribe(SubscribePlan(bits)) => {
                let index = usize::from(bits & 0x7f) % surface.resources.len().max(1);
                Some(json!({ "uri": surface.resources.get(index).map_or(UNKNOWN_URI, String::as_str) }))
            }
            Call::ToolsList
            | Call::Discover
            | Call::PromptsList
            | Call::ResourcesList
            | Call::Ping
            | Call::Unknown
            | Call::TemplatesList => None,
        };
        Parts::new(Some(id), r.call.method(), params, r.envelope == Envelope::Modern)
    }

    /// The message as one line.
    fn line(self) -> Input {
        let mut line = Vec::with_capacity(256);
        self.write(&mut line);
        Input::Line(line)
    }

    /// Appends the message's JSON text: the bytes `serde_json` writes for [`Parts::object`].
    fn write(self, out: &mut Vec<u8>) {
        out.extend_from_slice(br#"{"jsonrpc":"2.0""#);
        if let Some(id) = &self.id {
            out.extend_from_slice(br#","id":"#);
            write_json(out, id);
        }
        out.extend_from_slice(br#","method":"#);
        write_json(out, self.method);
        match self.params {
            None => {}
            Some(Value::Object(members)) if self.modern && !members.contains_key(META) => {
                out.extend_from_slice(br#","params":{"#);
                for (name, value) in &members {
                    write_json(out, name);
                    out.push(b':');
                    write_json(out, value);
                    out.push(b',');
                }
                out.extend_from_slice(br#""_meta":"#);
                out.extend_from_slice(&ENVELOPE);
                out.push(b'}');
            }
            Some(params) => {
                out.extend_from_slice(br#","params":"#);
                write_json(out, &enveloped(params, self.modern));
            }
        }
        out.push(b'}');
    }

    /// The message as a JSON object, for a mutation to edit.
    fn object(self) -> Map<String, Value> {
        let mut message = Map::new();
        message.insert("jsonrpc".into(), json!("2.0"));
        if let Some(id) = self.id {
            message.insert("id".into(), id);
        }
        message.insert("method".into(), json!(self.method));
        if let Some(params) = self.params {
            message.insert("params".into(), enveloped(params, self.modern));
        }
        message
    }
}

/// `params` with the envelope in its `_meta` member when `modern` and `params` is an object (beside what `_meta`
/// already holds: a progress token, declared capabilities, which the envelope does not replace).
fn enveloped(mut params: Value, modern: bool) -> Value {
    if modern && let Some(members) = params.as_object_mut() {
        let envelope = envelope::envelope(LATEST_MODERN_VERSION);
        match (members.get_mut(META), envelope) {
            (Some(Value::Object(meta)), Value::Object(keys)) => {
                for (key, value) in keys {
                    meta.entry(key).or_insert(value);
                }
            }
            (_, envelope) => {
                members.insert(META.into(), envelope);
            }
        }
    }
    params
}

/// A request as a JSON object, for a mutation to edit; takes the next id.
fn build_request(r: &Request, ids: &mut Ids, surface: &Surface) -> Map<String, Value> {
    Parts::of_request(r, ids, surface).object()
}

/// The cursor sent where none was issued.
pub const BAD_CURSOR: &str = "wirefuzz-no-such-cursor";
/// The prompt name sent where an unknown prompt is asked for.
pub const UNKNOWN_PROMPT: &str = "wirefuzz-no-such-prompt";
/// The URI read where an unknown resource is asked for: a scheme no server uses.
pub const UNKNOWN_URI: &str = "wirefuzz-unknown:///no/such/resource";

/// A log level no version defines.
pub const BAD_LEVEL: &str = "wirefuzz";
/// The name of a `subscriptions/listen` filter key no version defines.
pub const UNKNOWN_FILTER_KEY: &str = "wirefuzzChanged";

/// The params of a `subscriptions/listen`: the filter its plan's bits ask for ([`ListenPlan`]).
fn listen_params(surface: &Surface, ListenPlan(bits): ListenPlan) -> Value {
    let mut filter = Map::new();
    for (bit, key) in ["toolsListChanged", "promptsListChanged", "resourcesListChanged"].into_iter().enumerate() {
        if bits & (1 << bit) != 0 {
            filter.insert(key.into(), Value::Bool(true));
        }
    }
    if bits & 0x08 != 0 {
        let index = usize::from(bits >> 5) % surface.resources.len().max(1);
        let uri = surface.resources.get(index).map_or(UNKNOWN_URI, String::as_str);
        filter.insert("resourceSubscriptions".into(), json!([uri]));
    }
    if bits & 0x10 != 0 {
        filter.insert(UNKNOWN_FILTER_KEY.into(), Value::Bool(true));
    }
    json!({ "notifications": filter })
}

/// The params of a `completion/complete` ([`CompletePlan`]): a listed template's first variable, or a listed
/// prompt's first argument, with the value `w`; an unknown prompt when nothing of the kind is listed.
fn complete_params(surface: &Surface, CompletePlan(bits): CompletePlan) -> Value {
    let pick = usize::from(bits >> 2);
    let template = surface.templates.get(pick % surface.templates.len().max(1)).filter(|_| bits & 1 != 0);
    let prompt = surface.prompts.get(pick % surface.prompts.len().max(1));
    let (reference, argument) = match (template, prompt) {
        (Some(template), _) => {
            let variable = template_variables(template).into_iter().next().unwrap_or_else(|| "wirefuzz".into());
            (json!({ "type": "ref/resource", "uri": template }), variable)
        }
        (None, Some(prompt)) => {
            let argument = prompt.arguments.first().map_or("wirefuzz", |(name, _)| name.as_str());
            (json!({ "type": "ref/prompt", "name": prompt.name }), argument.to_string())
        }
        (None, None) => (json!({ "type": "ref/prompt", "name": UNKNOWN_PROMPT }), "wirefuzz".to_string()),
    };
    let mut params = json!({ "ref": reference, "argument": { "name": argument, "value": "w" } });
    if bits & 0x02 != 0 {
        params["context"] = json!({ "arguments": {} });
    }
    params
}

/// The variable names of a URI template (RFC 6570), in order.
fn template_variables(template: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(end) = rest[start..].find('}') else { break };
        let expression = rest[start + 1..start + end].trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        let variables = expression.split(',').map(|name| name.trim_end_matches('*'));
        names.extend(variables.filter(|name| !name.is_empty()).map(String::from));
        rest = &rest[start + end + 1..];
    }
    names
}

/// The params of a `prompts/get` of prompt `index` (modulo the number of prompts).
fn prompt_params(surface: &Surface, index: usize, arguments: PromptArguments) -> Value {
    let prompt = surface.prompts.get(index % surface.prompts.len().max(1));
    let Some(prompt) = prompt.filter(|_| arguments != PromptArguments::UnknownPrompt) else {
        return json!({ "name": UNKNOWN_PROMPT, "arguments": {} });
    };
    let mut given = Map::new();
    for (name, required) in &prompt.arguments {
        match arguments {
            PromptArguments::Odd(class) => {
                given.insert(name.clone(), Value::String(class.text()));
            }
            PromptArguments::Edge(edge) => {
                let string = json!({ "type": "string" });
                match edges::value(edge, name, &string, &json!("wirefuzz"), None, 0) {
                    Some(value) => given.insert(name.clone(), value),
                    None if *required => given.insert(name.clone(), json!("wirefuzz")),
                    None => None,
                };
            }
            _ if *required => {
                given.insert(name.clone(), json!("wirefuzz"));
            }
            _ => {}
        }
    }
    if arguments == PromptArguments::MissingRequired
        && let Some((name, _)) = prompt.arguments.iter().find(|(_, required)| *required)
    {
        given.remove(name);
    }
    json!({ "name": prompt.name, "arguments": given })
}

/// The URI a `resources/read` reads.
fn resource_uri(surface: &Surface, index: usize, uri: ResourceUri) -> String {
    match uri {
        ResourceUri::Listed => match surface.resources.get(index % surface.resources.len().max(1)) {
            Some(uri) => uri.clone(),
            None => UNKNOWN_URI.into(),
        },
        ResourceUri::Template(class) => match surface.templates.get(index % surface.templates.len().max(1)) {
            Some(template) => expand(template, class),
            None => UNKNOWN_URI.into(),
        },
        ResourceUri::Unknown => UNKNOWN_URI.into(),
        ResourceUri::TemplateEdge(edge) => match surface.templates.get(index % surface.templates.len().max(1)) {
            Some(template) => {
                let string = json!({ "type": "string" });
                let value = edges::value(edge, "", &string, &json!("wirefuzz"), None, 0);
                let text = value.as_ref().and_then(Value::as_str).unwrap_or("wirefuzz");
                fill(template, &percent_encoded(text))
            }
            None => UNKNOWN_URI.into(),
        },
    }
}

/// A URI template (RFC 6570) with every variable set: `wirefuzz`, or for an odd class other than the empty one,
/// that odd string percent-encoded.
pub fn expand(template: &str, class: OddString) -> String {
    let value = match class {
        OddString::Empty => "wirefuzz".to_string(),
        OddString::Huge => "w".repeat(2_000),
        other => percent_encoded(&other.text()),
    };
    fill(template, &value)
}

/// `text` percent-encoded: every byte but the unreserved characters of RFC 3986.
fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A URI template (RFC 6570) with every variable set to `value` (already encoded).
fn fill(template: &str, value: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            rest = &rest[start..];
            break;
        };
        let expression = &rest[start + 1..start + end];
        let (operator, names) = match expression.chars().next() {
            Some(op @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(op), &expression[1..]),
            _ => (None, expression),
        };
        let names: Vec<&str> = names.split(',').map(|n| n.trim_end_matches('*')).collect();
        match operator {
            Some('?') | Some('&') => {
                let pairs: Vec<String> = names.iter().map(|n| format!("{n}={value}")).collect();
                out.push(operator.unwrap_or('?'));
                out.push_str(&pairs.join("&"));
            }
            Some(op @ ('.' | '/' | ';' | '#')) => {
                out.push(op);
                out.push_str(&vec![value; names.len()].join(","));
            }
            _ => out.push_str(&vec![value; names.len()].join(",")),
        }
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out
}

/// The answer styles a generated 2026-07-28 tool call that declares every capability asks for, by the top three
/// bits of its plan's tool draw: the ones that shape a retry (a refusal's retry is a mistyped one, so the stale
/// state takes its place).
const MODERN_STYLES: [Answers; 8] = [
    Answers::Accept,
    Answers::Decline,
    Answers::StaleState,
    Answers::TamperState,
    Answers::DropState,
    Answers::MissingInput,
    Answers::ExtraInput,
    Answers::MistypedInput,
];

/// The params of an `initialize` asking for `version`, declaring `declares` (and the style of its answers in
/// `_meta`, when not the plain one).
fn initialize_params(version: &str, declares: Declares) -> Value {
    let mut params = json!({
        "protocolVersion": version,
        "capabilities": declares.capabilities(),
        "clientInfo": { "name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION") },
    });
    if let Declares::Everything(style) = declares
        && style != Answers::Accept
    {
        params[META] = json!({ ANSWERS_KEY: style.name() });
    }
    params
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
        ToolCall::OddName(class) => json!({ "name": class.text(), "arguments": {} }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_edge_goes_into_every_argument_a_string_edge_fits() {
        let mut surface = Surface::default();
        let prompt = json!({ "name": "p", "arguments": [{ "name": "topic", "required": true }, { "name": "tone" }] });
        surface.add("prompts", &prompt);
        let params = |edge| prompt_params(&surface, 0, PromptArguments::Edge(edge))["arguments"].clone();
        assert_eq!(params(Edge::Zero), json!({ "topic": "", "tone": "" }));
        assert_eq!(
            params(Edge::PathLike),
            json!({ "topic": "../../../../etc/passwd", "tone": "../../../../etc/passwd" })
        );
        // No string is -1: the required arguments, plain.
        assert_eq!(params(Edge::MinusOne), json!({ "topic": "wirefuzz" }));
        assert_eq!(params(Edge::Seen)["topic"][crate::transcript::seen::SEEN]["name"], json!("topic"));
    }
    use arbitrary::{Arbitrary, Unstructured};

    /// The bytes written straight are the bytes of the object a mutation starts from, serialized: the two
    /// renderings of [`Parts`] never drift apart.
    #[test]
    fn written_messages_are_their_objects_serialized() {
        let mut seen = 0;
        for seed in 0..3_000u64 {
            let data: Vec<u8> =
                (0..256).map(|i| (seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 57)) as u8 ^ i as u8).collect();
            let Ok(messages) = Vec::<Message>::arbitrary(&mut Unstructured::new(&data)) else { continue };
            let (mut written_ids, mut built_ids) = (Ids::new(), Ids::new());
            let surface = Surface::built_in();
            for message in &messages {
                let mut written = Vec::new();
                Parts::of(message, &mut written_ids, &surface).write(&mut written);
                let built = json_bytes(&Value::Object(Parts::of(message, &mut built_ids, &surface).object()));
                assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&built), "{message:?}");
                seen += 1;
            }
        }
        assert!(seen > 1_000, "{seen} messages compared");
        for modern in [false, true] {
            for params in [None, Some(json!({ "a": 1 })), Some(json!([1])), Some(json!({ META: "x", "b": 2 }))] {
                let parts = || Parts::new(Some(json!(7)), "m", params.clone(), modern);
                let mut written = Vec::new();
                parts().write(&mut written);
                assert_eq!(written, json_bytes(&Value::Object(parts().object())), "{params:?} modern {modern}");
            }
        }
    }
}

#[cfg(test)]
mod template_tests {
    use super::*;

    #[test]
    fn templates_expand_every_variable() {
        assert_eq!(expand("calc://numbers/{n}", OddString::Empty), "calc://numbers/wirefuzz");
        assert_eq!(expand("x://{a}/{+b}{?c,d}", OddString::Empty), "x://wirefuzz/wirefuzz?c=wirefuzz&d=wirefuzz");
        assert_eq!(expand("x://{a}", OddString::Separators), "x://a%E2%80%A8b%E2%80%A9c");
        assert_eq!(expand("x://{open", OddString::Empty), "x://{open");
        let mut surface = Surface::default();
        surface.templates.push("file:///{path}".into());
        let uri = |edge| resource_uri(&surface, 0, ResourceUri::TemplateEdge(edge));
        assert_eq!(uri(Edge::PathLike), "file:///..%2F..%2F..%2F..%2Fetc%2Fpasswd");
        assert_eq!(uri(Edge::Zero), "file:///");
        assert_eq!(uri(Edge::Seen), "file:///wirefuzz");
    }
}
