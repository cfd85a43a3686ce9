//! HTTP vocabulary of the Streamable HTTP transport (2026-07-28 streamable-http.mdx): the `Mcp-Name` header, the
//! Base64 sentinel its values use when they are not plain ASCII, the `x-mcp-header` annotations of a tool's
//! parameters, and the `Origin` check. Both the HTTP transport and
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

/// The key of a property schema that mirrors the property into a `Mcp-Param-{name}` header (2026-07-28
/// server/tools.mdx §x-mcp-header).
pub const PARAM_HEADER_KEY: &str = "x-mcp-header";

/// Schema keywords whose values are data, not schemas: an `x-mcp-header` key inside one is no annotation.
const DATA_KEYWORDS: [&str; 4] = ["const", "default", "enum", "examples"];

/// One `x-mcp-header` annotation of a tool's `inputSchema`: the chain of `properties` keys to the property, and the
/// header's name part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    /// The property names from the schema's root.
    pub path: Vec<String>,
    /// The `{name}` of `Mcp-Param-{name}`.
    pub name: String,
}

/// The `x-mcp-header` annotations of a tool's `inputSchema`, or the first constraint of 2026-07-28
/// server/tools.mdx §x-mcp-header one breaks: a non-empty HTTP token (RFC 9110 §5.1 `1*tchar`), unique
/// case-insensitively in the schema, on a property whose `type` is string, integer or boolean (a type list of those
/// and `null` too; an untyped property is not judged), reached from the root through `properties` keys only.
pub fn param_headers(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    annotations(schema, Some(Vec::new()), &mut found)?;
    let mut names: Vec<String> = Vec::new();
    for header in &found {
        let lower = header.name.to_ascii_lowercase();
        if names.contains(&lower) {
            return Err(format!("x-mcp-header {:?} names a header another parameter names too", header.name));
        }
        names.push(lower);
    }
    Ok(found)
}

/// Collects the annotations under `node`; `path` is its chain of `properties` keys when it is statically reachable.
fn annotations(node: &Value, path: Option<Vec<String>>, found: &mut Vec<ParamHeader>) -> Result<(), String> {
    let object = match node {
        Value::Object(object) => object,
        Value::Array(items) => {
            return items.iter().try_for_each(|item| annotations(item, None, found));
        }
        _ => return Ok(()),
    };
    if let Some(annotation) = object.get(PARAM_HEADER_KEY) {
        let at = path.as_ref().filter(|path| !path.is_empty());
        let Some(at) = at else {
            return Err(format!("an {PARAM_HEADER_KEY} outside a chain of properties: {annotation}"));
        };
        let Some(name) = annotation.as_str() else {
            return Err(format!("{PARAM_HEADER_KEY} of {} is not a string: {annotation}", at.join(".")));
        };
        let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(tchar) {
            return Err(format!("{PARAM_HEADER_KEY} {name:?} of {} is not an HTTP token", at.join(".")));
        }
        let primitive = |t: &Value| matches!(t.as_str(), Some("string" | "integer" | "boolean" | "null"));
        let typed_wrong = match object.get("type") {
            Some(Value::Array(types)) => !types.iter().all(primitive) || types.iter().all(|t| t == "null"),
            Some(other) => !primitive(other) || other == "null",
            None => false,
        };
        if typed_wrong {
            return Err(format!(
                "{PARAM_HEADER_KEY} {name:?} is on {}, whose type is not string, integer or boolean",
                at.join(".")
            ));
        }
        found.push(ParamHeader { path: at.clone(), name: name.to_string() });
    }
    for (key, value) in object {
        if key == PARAM_HEADER_KEY || DATA_KEYWORDS.contains(&key.as_str()) {
            continue;
        }
        match (key.as_str(), value, &path) {
            ("properties", Value::Object(properties), Some(path)) => {
                for (name, property) in properties {
                    let mut deeper = path.clone();
                    deeper.push(name.clone());
                    annotations(property, Some(deeper), found)?;
                }
            }
            ("properties", Value::Object(properties), None) => {
                properties.values().try_for_each(|property| annotations(property, None, found))?;
            }
            _ => annotations(value, None, found)?,
        }
    }
    Ok(())
}

/// The string a parameter value is mirrored as (streamable-http.mdx §Value Encoding, before the Base64 sentinel):
/// a string as is, an integer in decimal, a boolean as `true` or `false`; `None` for any other value, which no
/// header mirrors.
pub fn param_value(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) if number.is_i64() || number.is_u64() => Some(number.to_string()),
        _ => None,
    }
}

/// The `Mcp-Param-{name}` headers a `tools/call` with `arguments` carries for a tool annotated with `headers`: each
/// name and the value at its path (not yet encoded), in annotation order; a path with no mirrorable value has none.
pub fn param_values(headers: &[ParamHeader], arguments: &Value) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|header| {
            let value = header.path.iter().try_fold(arguments, |node, key| node.get(key))?;
            Some((format!("Mcp-Param-{}", header.name), param_value(value)?))
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(property: Value) -> Value {
        json!({ "type": "object", "properties": { "region": property, "query": { "type": "string" } } })
    }

    #[test]
    fn param_headers_are_read_from_properties_chains_and_their_constraints_checked() {
        let nested = json!({ "type": "object", "properties": {
            "where": { "type": "object", "properties": { "zone": { "type": "integer", "x-mcp-header": "Zone" } } },
            "region": { "type": "string", "x-mcp-header": "Region", "default": { "x-mcp-header": "not one" } } } });
        let mut found = param_headers(&nested).unwrap();
        found.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(
            found,
            [
                ParamHeader { path: vec!["region".into()], name: "Region".into() },
                ParamHeader { path: vec!["where".into(), "zone".into()], name: "Zone".into() },
            ]
        );
        assert_eq!(
            param_headers(&schema(json!({ "type": ["string", "null"], "x-mcp-header": "R" }))).unwrap().len(),
            1
        );
        assert_eq!(param_headers(&json!({ "type": "object" })).unwrap(), []);
        let headers = param_headers(&nested).unwrap();
        let arguments = json!({ "where": { "zone": 7 }, "region": "Zürich" });
        let mut values = param_values(&headers, &arguments);
        values.sort();
        assert_eq!(values, [("Mcp-Param-Region".into(), "Zürich".into()), ("Mcp-Param-Zone".into(), "7".into())]);
        assert_eq!(param_values(&headers, &json!({ "where": { "zone": 1.5 }, "region": null })), []);
        assert_eq!(param_value(&json!(true)), Some("true".into()));
        for broken in [
            schema(json!({ "type": "string", "x-mcp-header": "" })),
            schema(json!({ "type": "string", "x-mcp-header": "Two Words" })),
            schema(json!({ "type": "string", "x-mcp-header": "Line\n" })),
            schema(json!({ "type": "string", "x-mcp-header": 7 })),
            schema(json!({ "type": "number", "x-mcp-header": "Region" })),
            schema(json!({ "type": "object", "x-mcp-header": "Region" })),
            schema(json!({ "type": "array", "items": { "type": "string", "x-mcp-header": "Item" } })),
            schema(json!({ "anyOf": [{ "type": "string", "x-mcp-header": "Region" }] })),
            json!({ "type": "object", "x-mcp-header": "Root" }),
            json!({ "type": "object", "properties": { "a": { "type": "string", "x-mcp-header": "Same" },
                "b": { "type": "string", "x-mcp-header": "same" } } }),
        ] {
            assert!(param_headers(&broken).is_err(), "{broken}");
        }
    }
}
