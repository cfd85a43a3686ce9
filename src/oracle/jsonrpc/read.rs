//! Reading a line the server wrote: whether it is one JSON object (framing), and the version, message, response
//! and error-object shape it must have, each fault a finding of the line wherever it appears.

use crate::oracle::rules::{ERROR_SHAPE, FRAMING, MESSAGE_SHAPE, RESPONSE_SHAPE, VERSION};
use crate::oracle::{ServerLine, ServerReading};
use crate::protocol::id::is_integer_literal;
use crate::protocol::{ErrorObject, IdField, Outcome};
use crate::transcript::show_bytes;
use serde_json::Value;

/// Reads one line the server wrote: what it is (`None` when it is not a JSON object at all), and the framing,
/// version and shape findings it calls for.
pub(in crate::oracle) fn read_line(line: &[u8], truncated: bool) -> ServerReading {
    let mut findings = Vec::new();
    let line = read_object(line, truncated, &mut findings);
    ServerReading { line, findings }
}

/// [`read_line`]'s reading, with its findings (rule ids and details) pushed to `findings`.
fn read_object(line: &[u8], truncated: bool, findings: &mut Vec<(&'static str, String)>) -> Option<ServerLine> {
    let shown = || show_bytes(line, 120);
    if truncated {
        let detail =
            format!("the line was longer than the harness keeps and was cut at {} bytes: {}", line.len(), shown());
        findings.push((FRAMING, detail));
        return None;
    }
    if let Err(e) = std::str::from_utf8(line) {
        findings.push((FRAMING, format!("not valid UTF-8 (at byte {}): {}", e.valid_up_to(), shown())));
        return None;
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        findings.push((FRAMING, format!("a blank line ({:?})", shown())));
        return None;
    }
    let mut object = match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(object)) => object,
        Ok(other) => {
            findings.push((FRAMING, format!("{} is not a JSON object: {}", json_type(&other), shown())));
            return None;
        }
        Err(e) => {
            findings.push((FRAMING, format!("not one JSON value ({e}): {}", shown())));
            return None;
        }
    };
    match object.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        None => findings.push((VERSION, format!("no jsonrpc member: {}", shown()))),
        Some(other) => findings.push((VERSION, format!("jsonrpc is {other}, not \"2.0\": {}", shown()))),
    }
    let id = IdField::of(object.get("id"));
    if let Some(method) = object.get("method") {
        let mut problems = Vec::new();
        if !method.is_string() {
            problems.push(format!("method is {}", json_type(method)));
        }
        if object.get("params").is_some_and(|p| !p.is_object() && !p.is_array()) {
            problems.push("params is neither an object nor an array".to_string());
        }
        if matches!(id, IdField::Null | IdField::Invalid(_)) {
            problems.push("the id is neither a string nor an integer".to_string());
        }
        if !problems.is_empty() {
            findings.push((MESSAGE_SHAPE, format!("{}: {}", problems.join("; "), shown())));
        }
        return Some(ServerLine::Outgoing { id });
    }
    let outcome = match (object.remove("result"), object.remove("error")) {
        (Some(_), Some(_)) => {
            findings.push((RESPONSE_SHAPE, format!("both result and error: {}", shown())));
            None
        }
        (None, None) => {
            findings.push((RESPONSE_SHAPE, format!("neither method, result nor error: {}", shown())));
            None
        }
        (Some(result @ Value::Object(_)), None) => Some(Outcome::Result(result)),
        (Some(result), None) => {
            findings
                .push((RESPONSE_SHAPE, format!("the result is {}, not an object: {}", json_type(&result), shown())));
            None
        }
        (None, Some(error)) => match error_object(&error) {
            Ok(error) => Some(Outcome::Error(error)),
            Err(problems) => {
                findings.push((ERROR_SHAPE, format!("{}: {}", problems.join("; "), shown())));
                None
            }
        },
    };
    Some(ServerLine::Reply { id, outcome })
}

/// The error object, or every way it is malformed.
fn error_object(error: &Value) -> Result<ErrorObject, Vec<String>> {
    let Value::Object(error) = error else {
        return Err(vec![format!("error is {}, not an object", json_type(error))]);
    };
    let mut problems = Vec::new();
    let code = match error.get("code") {
        None => {
            problems.push("error.code is missing".to_string());
            None
        }
        Some(Value::Number(n)) if !is_integer_literal(&n.to_string()) => {
            problems.push(format!("error.code {n} is not an integer literal"));
            None
        }
        Some(Value::Number(n)) => {
            let code = n.as_i64();
            if code.is_none() {
                problems.push(format!("error.code {n} does not fit in 64 bits"));
            }
            code
        }
        Some(other) => {
            problems.push(format!("error.code is {}", json_type(other)));
            None
        }
    };
    let message = match error.get("message") {
        Some(Value::String(message)) => Some(message.clone()),
        None => {
            problems.push("error.message is missing".to_string());
            None
        }
        Some(other) => {
            problems.push(format!("error.message is {}", json_type(other)));
            None
        }
    };
    match (code, message) {
        (Some(code), Some(message)) => Ok(ErrorObject { code, message, data: error.get("data").cloned() }),
        _ => Err(problems),
    }
}

/// A JSON value's type, with an article, for details.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
