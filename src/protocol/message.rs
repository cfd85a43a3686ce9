//! One line of JSON-RPC traffic, classified: request, notification, response, or one of the ways a line can fail to
//! be any of them. [`Frame::parse`] never panics, whatever the bytes.

use super::id::IdField;
use super::id::RequestId;
use super::json::{self, Noted};
use serde_json::{Map, Value};
use std::fmt;

/// A request: a valid `id`, a string `method`, and optional structured `params`.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The id, exactly as sent.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The `params` member, an object or an array when present.
    pub params: Option<Value>,
}

/// A notification: a string `method` and no `id` member.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The `params` member, an object or an array when present.
    pub params: Option<Value>,
}

/// The id a response carries: a request id, `null`, or none at all (the MCP schema allows an error without one).
#[derive(Clone, Debug, PartialEq)]
pub enum ResponseId {
    /// A string or integer id.
    Id(RequestId),
    /// `"id": null`.
    Null,
    /// No `id` member.
    Absent,
}

/// A JSON-RPC error object whose `code` is an integer and whose `message` is a string.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorObject {
    /// The error code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// The optional `data` member.
    pub data: Option<Value>,
}

/// What a response carries: a result or an error.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The `result` member.
    Result(Value),
    /// The `error` member.
    Error(ErrorObject),
}

/// A response: an id and exactly one of `result` or a well-formed `error`.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The id the response carries.
    pub id: ResponseId,
    /// The result or the error.
    pub outcome: Outcome,
}

/// Why an object is not a valid JSON-RPC 2.0 message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The `jsonrpc` member is missing.
    JsonrpcMissing,
    /// The `jsonrpc` member is not the string `"2.0"`.
    JsonrpcNotTwoPointZero,
    /// `method` is present but not a string.
    MethodNotString,
    /// `id` is present on a request but is null, a float, a bool, an array or an object.
    RequestIdInvalid,
    /// `params` is present but neither an object nor an array.
    ParamsNotStructured,
    /// A response has both `result` and `error`.
    ResultAndError,
    /// A response's `error` is not an object with an integer `code` and a string `message`.
    ErrorMalformed,
    /// A response's `id` is a float, a bool, an array or an object.
    ResponseIdInvalid,
    /// The object has neither `method` nor `result` nor `error`.
    NotAMessage,
}

impl Problem {
    /// A short phrase for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Problem::JsonrpcMissing => "the jsonrpc member is missing",
            Problem::JsonrpcNotTwoPointZero => "jsonrpc is not the string \"2.0\"",
            Problem::MethodNotString => "method is not a string",
            Problem::RequestIdInvalid => "the id is not a string or an integer",
            Problem::ParamsNotStructured => "params is neither an object nor an array",
            Problem::ResultAndError => "the response has both result and error",
            Problem::ErrorMalformed => "the error object lacks an integer code or a string message",
            Problem::ResponseIdInvalid => "the response id is not a string, an integer or null",
            Problem::NotAMessage => "the object has no method, result or error",
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// One line of traffic, classified.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    /// An empty or whitespace-only line (no SDK answers these; no one should expect a reply).
    Blank,
    /// Not UTF-8 JSON text, or more than one JSON value on the line.
    NotJson {
        /// The parser's complaint.
        error: String,
        /// The line starts with a complete JSON value and goes on after it (two values, trailing garbage).
        after_value: bool,
    },
    /// A JSON array: a batch, which MCP removed in 2025-06-18.
    Batch(Vec<Value>),
    /// JSON that is neither an object nor an array.
    NotObject(Value),
    /// An object that is not a valid JSON-RPC 2.0 message.
    Invalid {
        /// What is wrong with it (the first problem found).
        problem: Problem,
        /// The id, where one can still be read off the object.
        id: Option<RequestId>,
        /// The `method` member, when it is a string.
        method: Option<String>,
    },
    /// A valid request.
    Request(Request),
    /// A valid notification.
    Notification(Notification),
    /// A valid response or error response.
    Response(Response),
}

/// The coarse kind of a frame, as the issue tracker and reports name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A request.
    Request,
    /// A notification.
    Notification,
    /// A response carrying `result`.
    Result,
    /// A response carrying `error`.
    Error,
    /// JSON that is not a JSON-RPC 2.0 message (including batches and blank lines).
    NotJsonRpc,
    /// Not JSON at all.
    NotJson,
}

impl Frame {
    /// Classifies one line (its trailing newline may be present or not). Never panics.
    pub fn parse(line: &[u8]) -> Frame {
        Frame::parse_with(line, json::parse_value).map_or_else(|frame| *frame, Frame::classify)
    }

    /// The first half of [`Frame::parse`] for a caller that reads only a message's envelope and what the text
    /// shows besides ([`json::skim_message`]: `params` is built only as far as the MCP layer reads it), or the
    /// frame of a line that has no value ([`Frame::Blank`] or [`Frame::NotJson`]). [`Frame::classify`] of the
    /// value gives the frame [`Frame::parse`] gives, but for the skimmed parts of its `params`.
    pub fn skim(line: &[u8]) -> Result<Noted, Box<Frame>> {
        Frame::parse_with(line, json::skim_message)
    }

    fn parse_with<T>(line: &[u8], parse: impl FnOnce(&[u8]) -> Result<T, json::NotOneValue>) -> Result<T, Box<Frame>> {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            return Err(Box::new(Frame::Blank));
        }
        parse(line).map_err(|e| Box::new(Frame::NotJson { error: e.error.to_string(), after_value: e.after_value }))
    }

    /// Classifies a parsed JSON value.
    pub fn classify(value: Value) -> Frame {
        match value {
            Value::Object(object) => classify_object(object),
            Value::Array(items) => Frame::Batch(items),
            other => Frame::NotObject(other),
        }
    }

    /// The coarse kind.
    pub fn kind(&self) -> Kind {
        match self {
            Frame::Request(_) => Kind::Request,
            Frame::Notification(_) => Kind::Notification,
            Frame::Response(Response { outcome: Outcome::Result(_), .. }) => Kind::Result,
            Frame::Response(Response { outcome: Outcome::Error(_), .. }) => Kind::Error,
            Frame::NotJson { .. } => Kind::NotJson,
            Frame::Blank | Frame::Batch(_) | Frame::NotObject(_) | Frame::Invalid { .. } => Kind::NotJsonRpc,
        }
    }
}

fn classify_object(mut object: Map<String, Value>) -> Frame {
    let id_field = IdField::of(object.get("id"));
    let method = match object.get("method") {
        Some(Value::String(m)) => Some(m.clone()),
        _ => None,
    };
    let invalid = |problem: Problem| Frame::Invalid { problem, id: id_field.valid().cloned(), method: method.clone() };
    match object.get("jsonrpc") {
        None => return invalid(Problem::JsonrpcMissing),
        Some(Value::String(v)) if v == "2.0" => {}
        Some(_) => return invalid(Problem::JsonrpcNotTwoPointZero),
    }
    if object.contains_key("method") {
        let Some(method) = method.clone() else {
            return invalid(Problem::MethodNotString);
        };
        let params = object.remove("params");
        if matches!(params, Some(ref p) if !p.is_object() && !p.is_array()) {
            return invalid(Problem::ParamsNotStructured);
        }
        return match id_field {
            IdField::Absent => Frame::Notification(Notification { method, params }),
            IdField::Valid(id) => Frame::Request(Request { id, method, params }),
            IdField::Null | IdField::Invalid(_) => invalid(Problem::RequestIdInvalid),
        };
    }
    let id = match id_field {
        IdField::Absent => ResponseId::Absent,
        IdField::Null => ResponseId::Null,
        IdField::Valid(ref id) => ResponseId::Id(id.clone()),
        IdField::Invalid(_) => return invalid(Problem::ResponseIdInvalid),
    };
    let outcome = match (object.remove("result"), object.remove("error")) {
        (Some(_), Some(_)) => return invalid(Problem::ResultAndError),
        (Some(result), None) => Outcome::Result(result),
        (None, Some(error)) => match error_object(error) {
            Some(error) => Outcome::Error(error),
            None => return invalid(Problem::ErrorMalformed),
        },
        (None, None) => return invalid(Problem::NotAMessage),
    };
    Frame::Response(Response { id, outcome })
}

fn error_object(error: Value) -> Option<ErrorObject> {
    let Value::Object(mut error) = error else { return None };
    let code = match error.get("code") {
        Some(Value::Number(n)) if super::id::is_integer_literal(&n.to_string()) => n.as_i64()?,
        _ => return None,
    };
    let message = match error.remove("message") {
        Some(Value::String(m)) => m,
        _ => return None,
    };
    Some(ErrorObject { code, message, data: error.remove("data") })
}

/// True when `line` holds `text` as a JSON string (`"text"`, quotes included), anywhere: a byte search, the cheap
/// test before a parse, which no parser's leniency can hide (a batch member, a malformed line).
pub fn mentions(line: &[u8], text: &str) -> bool {
    let quoted = format!("\"{text}\"");
    line.windows(quoted.len()).any(|w| w == quoted.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> Kind {
        Frame::parse(line.as_bytes()).kind()
    }

    #[test]
    fn classifies_every_kind() {
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), Kind::Request);
        assert_eq!(kind(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), Kind::Notification);
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#), Kind::Result);
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#), Kind::Error);
        assert_eq!(kind(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#), Kind::NotJsonRpc);
        assert_eq!(kind("[]"), Kind::NotJsonRpc);
        assert_eq!(kind("42"), Kind::NotJsonRpc);
        assert_eq!(kind("  \r"), Kind::NotJsonRpc);
        assert_eq!(kind("{not json"), Kind::NotJson);
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":1,"method":"a"}{"jsonrpc":"2.0","id":2,"method":"b"}"#),
            Kind::NotJson
        );
    }

    #[test]
    fn invalid_requests_keep_a_recoverable_id() {
        let frame = Frame::parse(br#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#);
        assert_eq!(
            frame,
            Frame::Invalid {
                problem: Problem::JsonrpcNotTwoPointZero,
                id: Some(RequestId::string("x")),
                method: Some("ping".into())
            }
        );
        let frame = Frame::parse(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#);
        assert!(matches!(frame, Frame::Invalid { problem: Problem::RequestIdInvalid, id: None, .. }));
        let frame = Frame::parse(br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":7}"#);
        assert!(matches!(frame, Frame::Invalid { problem: Problem::ParamsNotStructured, id: Some(_), .. }));
    }

    #[test]
    fn responses_are_checked_for_shape() {
        let both = Frame::parse(br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#);
        assert!(matches!(both, Frame::Invalid { problem: Problem::ResultAndError, .. }));
        let float_code = Frame::parse(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601.0,"message":"m"}}"#);
        assert!(matches!(float_code, Frame::Invalid { problem: Problem::ErrorMalformed, .. }));
        let absent = Frame::parse(br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"m","data":[1]}}"#);
        let Frame::Response(response) = absent else { panic!("not a response") };
        assert_eq!(response.id, ResponseId::Absent);
        assert!(matches!(response.outcome, Outcome::Error(ErrorObject { code: -32700, data: Some(_), .. })));
    }

    #[test]
    fn text_after_a_complete_value_is_told_from_other_text_that_is_not_json() {
        let after_value = |line: &str| match Frame::parse(line.as_bytes()) {
            Frame::NotJson { after_value, .. } => after_value,
            other => panic!("{other:?}"),
        };
        assert!(after_value(r#"{"a":1} garbage"#));
        assert!(after_value(r#"{"a":1}{"a":1}"#));
        assert!(!after_value(r#"{"jsonrpc":"2.0","id":1,"meth"#));
        assert!(!after_value("{not json}"));
        assert!(!after_value(&"[".repeat(200)));
    }

    #[test]
    fn hostile_input_never_panics() {
        let deep = "[".repeat(100_000);
        assert_eq!(kind(&deep), Kind::NotJson);
        // Strictly not JSON to serde_json, though RFC 8259 §8.2 makes it grammatical: the oracle reads such a line
        // leniently (json::lenient_text) and calls it ambiguous.
        assert_eq!(kind("\"\\ud800\""), Kind::NotJson);
        assert_eq!(Frame::parse(&json::lenient_text(b"\"\\ud800\"").unwrap()).kind(), Kind::NotJsonRpc);
        assert_eq!(Frame::parse(&[0xff, 0xfe, b'{']).kind(), Kind::NotJson);
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":1,"error":{"code":99999999999999999999999,"message":"m"}}"#),
            Kind::NotJsonRpc
        );
    }

    /// What the oracle reads of a frame: its kind, id, method, problem, and of `params` its type, the envelope's
    /// keys and protocol version, `protocolVersion`, and the types of `capabilities` and `clientInfo`.
    fn envelope_view(frame: &Frame) -> String {
        let params_view = |params: Option<&Value>| {
            let json_type = |v: Option<&Value>| match v {
                None => "absent",
                Some(Value::Null) => "null",
                Some(Value::Bool(_)) => "bool",
                Some(Value::Number(_)) => "number",
                Some(Value::String(_)) => "string",
                Some(Value::Array(_)) => "array",
                Some(Value::Object(_)) => "object",
            };
            let meta = super::super::envelope::meta(params);
            let keys = meta.map(|m| m.keys().cloned().collect::<Vec<_>>());
            let version = meta.and_then(|m| m.get(super::super::envelope::PROTOCOL_VERSION_KEY));
            let member = |name: &str| params.and_then(|p| p.get(name));
            format!(
                "params {} meta {keys:?} version {version:?} protocolVersion {:?} capabilities {} clientInfo {}",
                json_type(params),
                member("protocolVersion"),
                json_type(member("capabilities")),
                json_type(member("clientInfo")),
            )
        };
        match frame {
            Frame::Request(r) => format!("request {:?} {} {}", r.id, r.method, params_view(r.params.as_ref())),
            Frame::Notification(n) => format!("notification {} {}", n.method, params_view(n.params.as_ref())),
            Frame::Invalid { problem, id, method } => format!("invalid {problem:?} {id:?} {method:?}"),
            Frame::Batch(_) => "batch".to_string(),
            other => format!("{other:?}"),
        }
    }

    fn skimmed(line: &[u8]) -> (Frame, bool, bool) {
        match Frame::skim(line) {
            Ok(noted) => (Frame::classify(noted.value), noted.duplicate_keys, noted.beyond_limits),
            Err(frame) => (*frame, false, false),
        }
    }

    fn noted(line: &[u8]) -> (bool, bool) {
        json::parse_noting(line).map_or((false, false), |n| (n.duplicate_keys, n.beyond_limits))
    }

    #[test]
    fn a_skimmed_line_reads_as_the_parsed_one_where_the_oracle_looks() {
        let mut lines: Vec<Vec<u8>> = (0..3000)
            .flat_map(|i| crate::campaign::conversation(7, i))
            .filter_map(|input| match input {
                crate::transcript::Input::Line(line) => Some(line),
                crate::transcript::Input::Sync => None,
            })
            .collect();
        lines.extend(
            [
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[{"a":1,"a":2},"x",1e400]}"#,
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"x":[1]},"clientInfo":"c"}}"#,
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7,"b":{"c":1,"c":2}}}}"#,
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":["io.modelcontextprotocol/protocolVersion"]}}"#,
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"\u005fmeta":{"io.modelcontextprotocol/protocolVersion":"v"}}}"#,
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":"text"}"#,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[{"d":1,"d":1}]}}"#,
                r#"[{"jsonrpc":"2.0","id":1,"method":"m","params":{"$serde_json::private::Number":"x"}}]"#,
                r#"{"jsonrpc":"2.0","method":"m","params":{"x":"\ud800"}}"#,
            ]
            .map(|line| line.as_bytes().to_vec()),
        );
        let mut kinds = std::collections::HashSet::new();
        for line in &lines {
            let parsed = Frame::parse(line);
            let (skimmed, duplicate_keys, beyond_limits) = skimmed(line);
            assert_eq!(envelope_view(&skimmed), envelope_view(&parsed), "{}", String::from_utf8_lossy(line));
            assert_eq!((duplicate_keys, beyond_limits), noted(line), "{}", String::from_utf8_lossy(line));
            kinds.insert(parsed.kind());
        }
        assert_eq!(
            kinds.len(),
            6,
            "the lines cover requests, notifications, results, errors, invalid and non-JSON lines"
        );
    }

    #[test]
    fn skimming_drops_what_the_oracle_does_not_read() {
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x":1}}}}"#;
        let value = Frame::skim(line).unwrap().value;
        let expected = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        assert_eq!(value.to_string(), expected);
    }

    #[test]
    fn mentions_is_a_search_for_the_quoted_string() {
        assert!(mentions(br#"[{"jsonrpc":"2.0","method":"ping"}"#, "ping"));
        assert!(!mentions(br#"{"method":"pings"}"#, "ping"));
        assert!(!mentions(b"ping", "ping"));
    }
}
