//! HTTP vocabulary of the Streamable HTTP transport (2026-07-28 streamable-http.mdx): the `Mcp-Name` header, the
//! Base64 sentinel its values use when they are not plain ASCII, and the `Origin` check. Both the HTTP transport and
//! the HTTP rules read headers with these, and the built-in HTTP server answers with them.

use super::methods::{PROMPTS_GET, RESOURCES_READ, TOOLS_CALL};
use base64::Engine;
use serde_json::Value;

/// The methods whose `Mcp-Name` header mirrors `params.name` or `params.uri`.
pub const NAMED_METHODS: [&str; 3] = [TOOLS_CALL, RESOURCES_READ, PROMPTS_GET];

/// A `Mcp-Name` (or `Mcp-Param-*`) value: as is when it is plain printable ASCII without leading or trailing
/// spaces, else in the Base64 sentinel `=?base64?...?=` (2026-07-28 streamable-http.mdx §Value Encoding).
pub fn header_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_string()
    } else {
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(value))
    }
}

/// Decodes a header value written by [`header_value`] (a sentinel that is not valid Base64 UTF-8 stays as is).
pub fn decode_header_value(value: &str) -> String {
    value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
        .and_then(|encoded| base64::engine::general_purpose::STANDARD.decode(encoded).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| value.to_string())
}

/// The value `Mcp-Name` mirrors for a request: `params.name` or `params.uri` of the named methods.
pub fn mirrored_name(method: &str, params: Option<&Value>) -> Option<String> {
    if !NAMED_METHODS.contains(&method) {
        return None;
    }
    let params = params?;
    params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str).map(str::to_string)
}

/// The host of an `Origin` or `Host` value (`http://a.b:8080` gives `a.b`, `[::1]:80` gives `::1`).
fn host_of(value: &str) -> &str {
    let authority = value.split("://").nth(1).unwrap_or(value);
    let authority = authority.split('/').next().unwrap_or("");
    match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    }
}

/// True when an `Origin` value names a site other than this machine (`localhost`, `127.0.0.1`, `[::1]`) and other
/// than `host` (the request's Host header), whatever the port.
pub fn foreign_origin(origin: &str, host: Option<&str>) -> bool {
    let origin_host = host_of(origin.trim());
    !(matches!(origin_host, "localhost" | "127.0.0.1" | "::1")
        || host.is_some_and(|h| host_of(h.trim()) == origin_host))
}
