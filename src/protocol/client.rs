//! The harness as an MCP client: the client capabilities a conversation declared in its `initialize`, and the line
//! the harness writes back to each request a server sends it. A `ping` gets an empty result. `sampling/createMessage`,
//! `elicitation/create` and `roots/list` get a valid result when the conversation declared the capability (and,
//! for tool-enabled sampling or a URL elicitation, the sub-capability), and otherwise the error a client that does
//! not offer the method answers with: -32601, or -32602 for a mode or tool use it did not declare. Any other
//! method gets -32601. Every transport (in-process, stdio, HTTP) calls [`Client::sent`] on every line it writes
//! and [`Client::answer`] on every line it reads; the oracle judges a server's requests by the same [`undeclared`].

use super::codes::{INVALID_PARAMS, METHOD_NOT_FOUND};
use super::methods::{ELICITATION_CREATE, GATED_SERVER_REQUESTS, INITIALIZE, PING, ROOTS_LIST, SAMPLING_CREATE};
use super::{Frame, Request};
use serde_json::{Map, Value, json};

/// The most requests of a server the harness answers in one conversation: a server that sends a new request for
/// every answer is not followed forever.
pub const MAX_ANSWERS: usize = 64;

/// The root the harness offers when it declared `roots`.
pub const ROOT_URI: &str = "file:///tmp/mcp-wirefuzz";

/// What one conversation's client declared, and how many of the server's requests it answered.
#[derive(Clone, Debug, Default)]
pub struct Client {
    /// The `capabilities` of the conversation's first `initialize` (an empty object when they were not one).
    declared: Option<Map<String, Value>>,
    answered: usize,
}

impl Client {
    /// Notes a line the harness wrote: the first `initialize` request fixes the declared capabilities.
    pub fn sent(&mut self, line: &[u8]) {
        if self.declared.is_some() || !line.windows(INITIALIZE.len()).any(|w| w == INITIALIZE.as_bytes()) {
            return;
        }
        if let Frame::Request(request) = Frame::parse(line)
            && request.method == INITIALIZE
        {
            let capabilities = request.params.as_ref().and_then(|params| params.get("capabilities"));
            self.declared = Some(capabilities.and_then(Value::as_object).cloned().unwrap_or_default());
        }
    }

    /// The line that answers `line` when the server wrote a request (a valid one, with an id), at most
    /// [`MAX_ANSWERS`] times per conversation; `None` for anything else.
    pub fn answer(&mut self, line: &[u8]) -> Option<Vec<u8>> {
        if self.answered >= MAX_ANSWERS || !line.windows(8).any(|w| w == b"\"method\"") {
            return None;
        }
        let Frame::Request(request) = Frame::parse(line) else { return None };
        self.answered += 1;
        let reply = match self.outcome(&request) {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": request.id.to_value(), "result": result }),
            Err((code, message)) => json!({
                "jsonrpc": "2.0",
                "id": request.id.to_value(),
                "error": { "code": code, "message": message },
            }),
        };
        Some(serde_json::to_vec(&reply).unwrap_or_default())
    }

    fn outcome(&self, request: &Request) -> Result<Value, (i64, String)> {
        let method = request.method.as_str();
        if method == PING {
            return Ok(json!({}));
        }
        let nothing = Map::new();
        match undeclared(method, request.params.as_ref(), self.declared.as_ref().unwrap_or(&nothing)) {
            Some(Undeclared::Capability(_)) => return Err((METHOD_NOT_FOUND, "Method not found".into())),
            Some(Undeclared::SamplingTools) => {
                return Err((INVALID_PARAMS, "the client did not declare sampling.tools".into()));
            }
            Some(Undeclared::ElicitationMode(mode)) => {
                return Err((INVALID_PARAMS, format!("the client did not declare elicitation mode {mode}")));
            }
            None => {}
        }
        match method {
            SAMPLING_CREATE => Ok(json!({
                "role": "assistant",
                "content": { "type": "text", "text": "mcp-wirefuzz" },
                "model": "mcp-wirefuzz",
                "stopReason": "endTurn",
            })),
            ELICITATION_CREATE => Ok(json!({ "action": "decline" })),
            ROOTS_LIST => Ok(json!({ "roots": [{ "uri": ROOT_URI, "name": "mcp-wirefuzz" }] })),
            _ => Err((METHOD_NOT_FOUND, "Method not found".into())),
        }
    }
}

/// What a server request would use that the client did not declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undeclared<'a> {
    /// The capability of its method (`sampling`, `elicitation` or `roots`).
    Capability(&'static str),
    /// Tool use in sampling (`tools` or `toolChoice`) without `sampling.tools`.
    SamplingTools,
    /// An elicitation in this mode, which the `elicitation` capability does not cover.
    ElicitationMode(&'a str),
}

/// What a server request of `method` with `params` uses beyond the client capabilities `declared`; `None` when
/// it uses nothing undeclared, or is not one of the requests a capability gates
/// ([`GATED_SERVER_REQUESTS`]). The harness answers by it, and the oracle judges by it.
pub fn undeclared<'a>(
    method: &str,
    params: Option<&'a Value>,
    declared: &Map<String, Value>,
) -> Option<Undeclared<'a>> {
    let (_, capability) = GATED_SERVER_REQUESTS.iter().find(|(gated, _)| *gated == method)?;
    let Some(offered) = declared.get(*capability) else { return Some(Undeclared::Capability(capability)) };
    let member = |name: &str| params.and_then(|params| params.get(name));
    match method {
        SAMPLING_CREATE
            if (member("tools").is_some() || member("toolChoice").is_some()) && offered.get("tools").is_none() =>
        {
            Some(Undeclared::SamplingTools)
        }
        ELICITATION_CREATE => {
            let mode = member("mode").and_then(Value::as_str).unwrap_or("form");
            (!elicitation_mode_declared(offered, mode)).then_some(Undeclared::ElicitationMode(mode))
        }
        _ => None,
    }
}

/// True when a declared `elicitation` capability covers `mode`: an empty object declares the form mode only
/// (MCP 2025-11-25 client/elicitation.mdx §Capabilities).
fn elicitation_mode_declared(elicitation: &Value, mode: &str) -> bool {
    match elicitation.as_object() {
        Some(modes) if modes.is_empty() => mode == "form",
        Some(modes) => modes.contains_key(mode),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn initialize(capabilities: &str) -> Vec<u8> {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"clientInfo":{{"name":"c","version":"1"}}}}}}"#
        )
        .into_bytes()
    }

    fn answer(client: &mut Client, line: &str) -> Value {
        serde_json::from_slice(&client.answer(line.as_bytes()).expect("an answer")).unwrap()
    }

    #[test]
    fn undeclared_requests_get_method_not_found_and_pings_an_empty_result() {
        let mut client = Client::default();
        client.sent(&initialize("{}"));
        for method in [SAMPLING_CREATE, ELICITATION_CREATE, ROOTS_LIST, "wirefuzz/other"] {
            let reply = answer(&mut client, &format!(r#"{{"jsonrpc":"2.0","id":"s1","method":"{method}"}}"#));
            assert_eq!(reply["error"]["code"], json!(METHOD_NOT_FOUND), "{method}");
            assert_eq!(reply["id"], json!("s1"));
        }
        let pong = answer(&mut client, r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
        assert_eq!(pong, json!({ "jsonrpc": "2.0", "id": 7, "result": {} }));
    }

    #[test]
    fn declared_requests_get_valid_results_within_the_sub_capabilities() {
        let mut client = Client::default();
        client.sent(&initialize(r#"{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}"#));
        // A second initialize does not change what the connection declared.
        client.sent(&initialize("{}"));
        let sampled = answer(&mut client, r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}"#);
        assert_eq!(sampled["result"]["role"], json!("assistant"));
        let tools = r#"{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{"tools":[]}}"#;
        assert_eq!(answer(&mut client, tools)["error"]["code"], json!(INVALID_PARAMS));
        let form = r#"{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"m"}}"#;
        assert_eq!(answer(&mut client, form)["result"], json!({ "action": "decline" }));
        let url = r#"{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"mode":"url"}}"#;
        assert_eq!(answer(&mut client, url)["error"]["code"], json!(INVALID_PARAMS));
        let roots = answer(&mut client, r#"{"jsonrpc":"2.0","id":5,"method":"roots/list"}"#);
        assert_eq!(roots["result"]["roots"][0]["uri"], json!(ROOT_URI));
    }

    #[test]
    fn only_requests_are_answered_and_only_so_many() {
        let mut client = Client::default();
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"method":"ping","id":1}"#,
            "not json",
        ] {
            assert_eq!(client.answer(line.as_bytes()), None, "{line}");
        }
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!((0..MAX_ANSWERS).all(|_| client.answer(ping).is_some()));
        assert_eq!(client.answer(ping), None);
    }

    #[test]
    fn an_empty_elicitation_capability_means_the_form_mode() {
        assert!(elicitation_mode_declared(&json!({}), "form"));
        assert!(!elicitation_mode_declared(&json!({}), "url"));
        assert!(elicitation_mode_declared(&json!({ "url": {} }), "url"));
        assert!(!elicitation_mode_declared(&json!({ "url": {} }), "form"));
        assert!(!elicitation_mode_declared(&json!(true), "form"));
    }
}
