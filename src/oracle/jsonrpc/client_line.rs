//! What the layer reads off a line the client sent, beyond its classified frame: whether conforming parsers may
//! read it differently ([`Ambiguous`]), the id a lenient reader still finds in a line that is not strict JSON, and
//! members beyond the four a request defines.

use crate::protocol::json::{self, Noted, whole_integer};
use crate::protocol::{Frame, IdField, RequestId};
use serde_json::Value;

/// A client line on which conforming parsers legitimately differ: a request whose id is a whole-valued literal
/// that is not an integer literal (`1.0`, `1e+3`), a number literal beyond common parser limits (RFC 8259 §6), an
/// object with a duplicate member name (RFC 8259 §4), or a line that only a lenient reader parses (a byte-order
/// mark, a lone surrogate escape, bytes that are not UTF-8 inside a string: RFC 8259 §8.1, §8.2, §9). Silence is an
/// acceptable answer to it, and so is any error; a result only under its id.
pub(in crate::oracle) struct Ambiguous {
    /// The ids a reply to the line may carry: the id as read (last member wins), and for a whole-valued id its
    /// integer value.
    pub(super) ids: Vec<RequestId>,
    /// A whole-valued id as sent (`1.0`), which a reply may also echo.
    pub(super) literal: Option<Value>,
    /// A number literal is beyond the limits: to a strict JSON-RPC server that cannot parse it, the line is
    /// unparseable and owes -32700.
    pub(super) beyond_limits: bool,
}

/// What a client line's JSON object shows before it is classified: the facts [`ambiguous`] reads off it.
pub(in crate::oracle) struct Oddities {
    /// A number literal somewhere in it is beyond common parser limits.
    beyond_limits: bool,
    /// Some object in it repeats a member name.
    duplicate_keys: bool,
    /// Only a lenient reader parses the line ([`json::lenient_text`]).
    lenient: bool,
    /// The `id` member, when it is a number (a whole-valued one like `1.0` makes the line ambiguous).
    id_number: Option<serde_json::Number>,
}

impl Oddities {
    /// Reads the facts off a parsed line (`lenient` when only a lenient reader parsed it); `None` when it is not an
    /// object (batches and non-objects stay malformed, whatever they hold).
    pub(in crate::oracle) fn of(noted: &Noted, lenient: bool) -> Option<Oddities> {
        let Value::Object(object) = &noted.value else { return None };
        Some(Oddities {
            beyond_limits: noted.beyond_limits,
            duplicate_keys: noted.duplicate_keys,
            lenient,
            id_number: match object.get("id") {
                Some(Value::Number(n)) => Some(n.clone()),
                _ => None,
            },
        })
    }
}

/// What makes a client line ambiguous, given what its object showed and how it was classified, or `None` for a
/// line every conforming parser reads the same way. A line only a lenient reader parses is ambiguous when that
/// reader finds a request or a notification in it; an invalid object stays malformed under either reading.
pub(in crate::oracle) fn ambiguous(oddities: Oddities, frame: &Frame) -> Option<Ambiguous> {
    let Oddities { beyond_limits, duplicate_keys, lenient, id_number } = oddities;
    let mut ambiguous = beyond_limits || duplicate_keys;
    let mut ids = Vec::new();
    let mut literal = None;
    match frame {
        Frame::Request(request) => {
            ambiguous |= lenient;
            ids.push(request.id.clone());
        }
        Frame::Notification(_) => ambiguous |= lenient,
        // A whole-valued id (`1.0`) is the integer to some parsers, whatever else is wrong with the line.
        Frame::Invalid { id: None, .. } => {
            if let Some(n) = id_number
                && let Some(whole) = whole_integer(&n.to_string())
            {
                ambiguous = true;
                ids.push(RequestId::Integer(whole));
                literal = Some(Value::Number(n));
            }
        }
        Frame::Invalid { id: Some(id), .. } => ids.push(id.clone()),
        _ => {}
    }
    ambiguous.then_some(Ambiguous { ids, literal, beyond_limits })
}

/// The id a lenient reader still finds in a line that is not strict JSON: invalid UTF-8 replaced by U+FFFD, a
/// byte-order mark skipped, the first of several values on the line. Servers that read this way answer such lines
/// under that id, and a result there means they executed malformed input.
pub(in crate::oracle) fn lenient_id(line: &[u8]) -> Option<RequestId> {
    let text = String::from_utf8_lossy(line);
    let first = json::skim_first_message(text.trim_start_matches('\u{feff}').as_bytes())?;
    IdField::of(first.get("id")).valid().cloned()
}

/// The `id` member of the object `text` starts with, found without building what is nested in it: for a line
/// nested deeper than the parser's limit (RFC 8259 §9 lets each parser set its own; a server with a higher one
/// answers the line under this id). A whole-valued number (`2.0`) is the integer many parsers read it as.
pub(in crate::oracle) fn top_level_id(text: &[u8]) -> Option<RequestId> {
    let value = top_level_id_value(text)?;
    IdField::of(Some(&value)).valid().cloned().or_else(|| match &value {
        Value::Number(n) => whole_integer(&n.to_string()).map(RequestId::Integer),
        _ => None,
    })
}

/// The `id` member of the object `text` starts with, as written ([`top_level_id`] reads it as an id).
pub(in crate::oracle) fn top_level_id_value(text: &[u8]) -> Option<Value> {
    let (mut depth, mut in_string, mut escaped, mut key_start) = (0usize, false, false, None);
    for (at, &byte) in text.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    in_string = false;
                    let key = depth == 1 && key_start.is_some_and(|start| &text[start..at] == b"id");
                    if let Some(rest) = text[at + 1..].trim_ascii_start().strip_prefix(b":").filter(|_| key) {
                        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
                        return values.next()?.ok();
                    }
                }
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => {
                in_string = true;
                key_start = Some(at + 1);
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            _ => {}
        }
    }
    None
}

/// True for an object with a member beyond the four a JSON-RPC 2.0 request defines (`jsonrpc`, `id`, `method`,
/// `params`).
pub(in crate::oracle) fn has_extra_members(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|object| object.keys().any(|key| !matches!(key.as_str(), "jsonrpc" | "id" | "method" | "params")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_of_a_line_nested_past_the_parser_limit_is_found() {
        let deep = format!(r#"{{"method":"id","params":{{"x":{}{}}},"id":"7"}}"#, "[".repeat(300), "]".repeat(300));
        assert!(json::skim_first_message(deep.as_bytes()).is_none());
        assert_eq!(top_level_id(deep.as_bytes()), Some(RequestId::string("7")));
        assert_eq!(top_level_id(br#"{"a":{"id":1},"b":"id"}"#), None);
        assert_eq!(top_level_id(br#"{"id" : 12, "x": ["]"]}"#), Some(RequestId::Integer("12".into())));
    }
}
