//! What the reference server lists and serves: its tools (`add`, `format_user`, `stats`, `logo`), its prompt
//! (`greeting`), its resources (`calc://readme`, `calc://logo`) and resource template (`calc://numbers/{n}`), with
//! the planted bugs of the surface rules. The same in both eras but for the code of an unknown resource (-32002 in
//! the handshake era, -32602 in 2026-07-28).

use super::mutants::Mutant;
use crate::protocol::Era;
use crate::protocol::RequestId;
use crate::protocol::codes::{INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, RESOURCE_NOT_FOUND};
use crate::protocol::http::PARAM_HEADER_KEY;
use serde_json::{Map, Value, json};
use std::sync::LazyLock;

/// The text of `calc://readme`.
pub const README: &str = "calc adds integers and formats users.";
/// A 1x1 PNG, base64.
pub const LOGO_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// A JSON-RPC error a method answers with.
pub struct Refusal {
    /// The code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// The data, if any.
    pub data: Option<Value>,
}

impl Refusal {
    /// A refusal without data.
    pub fn new(code: i64, message: impl Into<String>) -> Refusal {
        Refusal { code, message: message.into(), data: None }
    }
}

/// The surface of one connection: its planted bug and era.
pub struct CalcSurface {
    /// The planted bug, if any.
    pub mutant: Option<Mutant>,
    /// The connection's era.
    pub era: Era,
}

fn format_user_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "user": {
                "type": "object",
                "properties": {
                    "name": { "type": "string", "minLength": 1, "maxLength": 64 },
                    "age": { "type": "integer", "minimum": 0, "maximum": 150 }
                },
                "required": ["name"],
                "additionalProperties": false
            },
            "style": { "enum": ["short", "long"] },
            "tags": { "type": "array", "items": { "type": "string" }, "maxItems": 5 }
        },
        "required": ["user"],
        "additionalProperties": false
    })
}

fn format_user_output() -> Value {
    json!({
        "type": "object",
        "properties": { "text": { "type": "string" }, "length": { "type": "integer" } },
        "required": ["text", "length"]
    })
}

fn stats_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "values": { "type": "array", "items": { "type": "number" }, "minItems": 1, "maxItems": 50 },
            "mode": { "anyOf": [{ "const": "mean" }, { "const": "max" }] },
            "precision": { "type": ["integer", "null"], "minimum": 0, "maximum": 6 },
            "options": { "$ref": "#/$defs/options" }
        },
        "required": ["values"],
        "$defs": { "options": { "type": "object", "properties": { "label": { "type": "string", "maxLength": 32 } } } }
    })
}

/// The compiled input schemas of `format_user` and `stats`: the server validates every call.
static VALIDATORS: LazyLock<[Option<jsonschema::Validator>; 2]> =
    LazyLock::new(|| [crate::surface::compile(&format_user_input()), crate::surface::compile(&stats_input())]);

impl CalcSurface {
    fn has(&self, mutant: Mutant) -> bool {
        self.mutant == Some(mutant)
    }

    /// The `tools/list` items.
    pub fn tools(&self) -> Vec<Value> {
        let mut add = json!({
            "name": "add",
            "description": "Add two integers.",
            "inputSchema": {
                "type": "object",
                // `a` is mirrored into `Mcp-Param-A` on Streamable HTTP (2026-07-28 x-mcp-header).
                "properties": { "a": { "type": "integer", PARAM_HEADER_KEY: "A" }, "b": { "type": "integer" } },
                "required": ["a", "b"],
            },
        });
        if self.has(Mutant::BadParamHeader) && self.era == Era::Modern {
            add["inputSchema"]["properties"]["a"][PARAM_HEADER_KEY] = json!("First Number");
        }
        let stats_schema = if self.has(Mutant::InputSchemaNotObject) { json!("object") } else { stats_input() };
        let mut tools = vec![
            add.clone(),
            json!({ "name": "format_user", "description": "Format a user.", "inputSchema": format_user_input(),
                "outputSchema": format_user_output() }),
            json!({ "name": "stats", "description": "The mean or maximum of numbers.", "inputSchema": stats_schema }),
            json!({ "name": "logo", "description": "The calc logo.",
                "inputSchema": { "type": "object", "additionalProperties": false } }),
        ];
        if self.has(Mutant::DuplicateToolName) {
            tools.push(add);
        }
        tools
    }

    /// The `prompts/list` items.
    pub fn prompts(&self) -> Vec<Value> {
        vec![json!({
            "name": "greeting",
            "description": "Greets someone.",
            "arguments": [
                { "name": "name", "description": "Who to greet.", "required": true },
                { "name": "tone", "description": "How.", "required": false }
            ]
        })]
    }

    /// The `resources/list` items.
    pub fn resources(&self) -> Vec<Value> {
        vec![
            json!({ "uri": "calc://readme", "name": "readme", "mimeType": "text/plain" }),
            json!({ "uri": "calc://logo", "name": "logo", "mimeType": "image/png" }),
        ]
    }

    /// The `resources/templates/list` items.
    pub fn templates(&self) -> Vec<Value> {
        vec![json!({ "uriTemplate": "calc://numbers/{n}", "name": "number", "mimeType": "text/plain" })]
    }

    /// Answers a `tools/call`.
    pub fn call_tool(&self, params: Option<&Value>) -> Result<Value, Refusal> {
        let params = params
            .and_then(Value::as_object)
            .ok_or_else(|| Refusal::new(INVALID_PARAMS, "tools/call needs params with a tool name"))?;
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Refusal::new(INVALID_PARAMS, "tools/call needs a string tool name"))?;
        let empty = Map::new();
        let arguments = match params.get("arguments") {
            None => &empty,
            Some(Value::Object(arguments)) => arguments,
            Some(_) => return Ok(tool_error("arguments must be an object")),
        };
        match name {
            "add" => Ok(add(arguments)),
            "format_user" => self.format_user(arguments),
            "stats" => Ok(stats(arguments)),
            "logo" if self.has(Mutant::MissingCapabilityNoData) && self.era == Era::Modern => {
                Err(Refusal::new(MISSING_REQUIRED_CLIENT_CAPABILITY, "logo needs a capability the client lacks"))
            }
            "logo" => Ok(self.logo()),
            _ if self.has(Mutant::UnknownToolSucceeds) => {
                Ok(json!({ "content": [{ "type": "text", "text": "done" }], "isError": false }))
            }
            _ => Err(Refusal::new(INVALID_PARAMS, format!("Unknown tool: {name}"))),
        }
    }

    fn format_user(&self, arguments: &Map<String, Value>) -> Result<Value, Refusal> {
        let value = Value::Object(arguments.clone());
        if let Some(validator) = &VALIDATORS[0]
            && let Err(error) = validator.validate(&value)
        {
            if self.has(Mutant::InvalidArgsInternalError) {
                return Err(Refusal::new(INTERNAL_ERROR, "Internal error"));
            }
            return Ok(tool_error(&format!("invalid arguments: {error}")));
        }
        let user = &arguments["user"];
        if self.has(Mutant::ValidArgsInternalError) && user.get("age").is_some() {
            return Err(Refusal::new(INTERNAL_ERROR, "Internal error"));
        }
        let mut text = user["name"].as_str().unwrap_or_default().to_string();
        if let Some(age) = user.get("age") {
            text.push_str(&format!(" ({age})"));
        }
        if arguments.get("style") == Some(&json!("long")) {
            let tags: Vec<&str> = arguments
                .get("tags")
                .and_then(Value::as_array)
                .map_or(Vec::new(), |tags| tags.iter().filter_map(Value::as_str).collect());
            text.push_str(&format!(" [{}]", tags.join(", ")));
        }
        let length = text.chars().count();
        let length = if self.has(Mutant::OutputSchemaMismatch) { json!(length.to_string()) } else { json!(length) };
        let structured = json!({ "text": text, "length": length });
        Ok(json!({
            "content": [{ "type": "text", "text": structured.to_string() }],
            "structuredContent": structured,
            "isError": false,
        }))
    }

    fn logo(&self) -> Value {
        let data = if self.has(Mutant::BadImageData) { "not base64!" } else { LOGO_PNG };
        json!({
            "content": [
                { "type": "image", "data": data, "mimeType": "image/png" },
                { "type": "resource_link", "uri": "calc://logo", "name": "logo", "mimeType": "image/png" },
                { "type": "resource", "resource": { "uri": "calc://readme", "mimeType": "text/plain", "text": README } }
            ],
            "isError": false,
        })
    }

    /// Answers a `prompts/get`.
    pub fn get_prompt(&self, params: Option<&Value>) -> Result<Value, Refusal> {
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        if name != Some("greeting") {
            if self.has(Mutant::UnknownPromptInternalError) {
                return Err(Refusal::new(INTERNAL_ERROR, "Internal error"));
            }
            return Err(Refusal::new(INVALID_PARAMS, format!("Unknown prompt: {}", name.unwrap_or_default())));
        }
        let arguments = params.and_then(|p| p.get("arguments"));
        let who = arguments.and_then(|a| a.get("name")).and_then(Value::as_str);
        let who = match who {
            Some(who) => who,
            None if self.has(Mutant::MissingPromptArgumentServed) => "undefined",
            None => return Err(Refusal::new(INVALID_PARAMS, "Missing required argument: name")),
        };
        Ok(json!({
            "description": "A greeting.",
            "messages": [{ "role": "user", "content": { "type": "text", "text": format!("Please greet {who}.") } }]
        }))
    }

    /// Answers a `resources/read`.
    pub fn read_resource(&self, params: Option<&Value>) -> Result<Value, Refusal> {
        let uri = params.and_then(|p| p.get("uri")).and_then(Value::as_str).unwrap_or_default();
        let contents = match uri {
            "calc://readme" => json!([{ "uri": uri, "mimeType": "text/plain", "text": README }]),
            "calc://logo" if !self.has(Mutant::ListedResourceUnreadable) => {
                json!([{ "uri": uri, "mimeType": "image/png", "blob": LOGO_PNG }])
            }
            _ if uri.starts_with("calc://numbers/") => {
                let n = &uri["calc://numbers/".len()..];
                json!([{ "uri": uri, "mimeType": "text/plain", "text": format!("the number {n}") }])
            }
            _ if self.has(Mutant::UnknownResourceServed) => json!([]),
            _ => {
                let code = match self.era {
                    Era::Handshake => RESOURCE_NOT_FOUND,
                    Era::Modern if self.has(Mutant::ReservedErrorCode) => RESOURCE_NOT_FOUND,
                    Era::Modern => INVALID_PARAMS,
                };
                return Err(Refusal { data: Some(json!({ "uri": uri })), ..Refusal::new(code, "Resource not found") });
            }
        };
        Ok(json!({ "contents": contents }))
    }
}

fn add(arguments: &Map<String, Value>) -> Value {
    let (Some(a), Some(b)) = (integer_argument(arguments, "a"), integer_argument(arguments, "b")) else {
        return tool_error("add needs two integer arguments, a and b");
    };
    let Some(sum) = a.checked_add(b) else {
        return tool_error("the sum is out of range");
    };
    json!({
        "content": [{ "type": "text", "text": sum.to_string() }],
        "isError": false,
        "structuredContent": { "result": RequestId::int(sum).to_value() },
    })
}

fn stats(arguments: &Map<String, Value>) -> Value {
    let value = Value::Object(arguments.clone());
    if let Some(validator) = &VALIDATORS[1]
        && let Err(error) = validator.validate(&value)
    {
        return tool_error(&format!("invalid arguments: {error}"));
    }
    let values: Vec<f64> =
        arguments["values"].as_array().map_or(Vec::new(), |v| v.iter().filter_map(Value::as_f64).collect());
    let result = match arguments.get("mode").and_then(Value::as_str) {
        Some("max") => values.iter().copied().fold(f64::MIN, f64::max),
        _ => values.iter().sum::<f64>() / values.len().max(1) as f64,
    };
    let precision = arguments.get("precision").and_then(Value::as_u64).unwrap_or(2) as usize;
    json!({ "content": [{ "type": "text", "text": format!("{result:.precision$}") }], "isError": false })
}

/// An integer argument that fits in an `i128`, or `None`.
fn integer_argument(arguments: &Map<String, Value>, name: &str) -> Option<i128> {
    match arguments.get(name)? {
        Value::Number(n) => n.to_string().parse().ok(),
        _ => None,
    }
}

fn tool_error(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}
