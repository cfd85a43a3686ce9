//! Edge values and stateful sequences reach a server author's own bugs, found by the property-test generator and
//! shrunk to the simplest script: a tool whose result breaks its outputSchema only for `""` (a NaN written as
//! `null`), and one whose `get` breaks only after a `create` of the same id (ids a client cannot guess). The clean
//! versions of the same server pass. The server is a small one of this test's own, in-process, not calc.

use mcp_wirefuzz::oracle::{self, Policy};
use mcp_wirefuzz::script::edges::Edge;
use mcp_wirefuzz::script::{Call, Message, Script, Step, scripts};
use mcp_wirefuzz::server::{InProcessServer, ServerConnection, Status, run_in_process};
use mcp_wirefuzz::surface::Surface;
use mcp_wirefuzz::transcript::Event;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The rule both planted bugs break.
const RULE: &str = "MCP-TOOL-OUTPUT-SCHEMA";
/// The most scripts drawn before giving up (the deterministic runner finds each bug well before).
const CASES: u32 = 600;

/// Which bug the store has.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bug {
    Clean,
    /// `measure` divides by the text's length: `""` gives NaN, which serde_json writes as `null`.
    EmptyRatio,
    /// `get` of a stored item leaves out its `name`, which its outputSchema requires.
    StoredGet,
}

/// A store of named items with three tools: `measure {text}`, `create {name}` (ids from 7001 on) and `get {id}`.
struct Store(Bug);

struct Connection {
    bug: Bug,
    items: BTreeMap<i64, String>,
    next: i64,
}

impl InProcessServer for Store {
    type Connection = Connection;

    fn connect(&self) -> Connection {
        Connection { bug: self.0, items: BTreeMap::new(), next: 7001 }
    }
}

impl ServerConnection for Connection {
    fn receive(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> Status {
        let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) else { return Status::Running };
        let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str)) else {
            return Status::Running;
        };
        let params = message.get("params").and_then(Value::as_object).cloned().unwrap_or_default();
        let reply = match self.answer(method, &params) {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(code) => json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": "refused" } }),
        };
        out.push(serde_json::to_vec(&reply).unwrap());
        Status::Running
    }
}

impl Connection {
    fn answer(&mut self, method: &str, params: &Map<String, Value>) -> Result<Value, i64> {
        match method {
            "initialize" => Ok(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": { "tools": {} },
                "serverInfo": { "name": "store", "version": "1.0.0" },
            })),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": tools() })),
            "tools/call" => self.call(params),
            _ => Err(-32601),
        }
    }

    fn call(&mut self, params: &Map<String, Value>) -> Result<Value, i64> {
        let arguments = params.get("arguments").and_then(Value::as_object).ok_or(-32602)?;
        let structured = |value: Value| json!({ "content": [{ "type": "text", "text": value.to_string() }], "structuredContent": value });
        match params.get("name").and_then(Value::as_str) {
            Some("measure") => {
                let text = arguments.get("text").and_then(Value::as_str).ok_or(-32602)?;
                let vowels = text.chars().filter(|c| "aeiou".contains(*c)).count() as f64;
                let length = text.chars().count() as f64;
                let ratio = if self.bug != Bug::EmptyRatio && length == 0.0 { 0.0 } else { vowels / length };
                Ok(structured(json!({ "ratio": ratio })))
            }
            Some("create") => {
                let name = arguments.get("name").and_then(Value::as_str).ok_or(-32602)?;
                let id = self.next;
                self.next += 1;
                self.items.insert(id, name.to_string());
                Ok(structured(json!({ "id": id })))
            }
            Some("get") => {
                let id = arguments.get("id").and_then(Value::as_i64).ok_or(-32602)?;
                match self.items.get(&id) {
                    Some(_) if self.bug == Bug::StoredGet => Ok(structured(json!({ "id": id }))),
                    Some(name) => Ok(structured(json!({ "id": id, "name": name }))),
                    None => Ok(json!({ "content": [{ "type": "text", "text": "no such item" }], "isError": true })),
                }
            }
            _ => Ok(json!({ "content": [{ "type": "text", "text": "no such tool" }], "isError": true })),
        }
    }
}

fn tools() -> Value {
    let object = |properties: Value, required: &[&str]| json!({ "type": "object", "properties": properties, "required": required });
    json!([
        { "name": "measure", "inputSchema": object(json!({ "text": { "type": "string" } }), &["text"]),
          "outputSchema": object(json!({ "ratio": { "type": "number" } }), &["ratio"]) },
        { "name": "create", "inputSchema": object(json!({ "name": { "type": "string" } }), &["name"]),
          "outputSchema": object(json!({ "id": { "type": "integer" } }), &["id"]) },
        { "name": "get", "inputSchema": object(json!({ "id": { "type": "integer" } }), &["id"]),
          "outputSchema": object(json!({ "id": { "type": "integer" }, "name": { "type": "string" } }), &["id", "name"]) },
    ])
}

/// The store's surface, as learning it would give.
fn surface() -> Surface {
    let mut surface = Surface::default();
    for tool in tools().as_array().unwrap() {
        surface.add("tools", tool);
    }
    surface.learned = true;
    surface
}

/// Whether `script` makes the store break [`RULE`].
fn breaks(bug: Bug, surface: &Surface, policy: &Policy, script: &Script) -> bool {
    let transcript = run_in_process(&Store(bug), &script.encode_on(surface));
    oracle::check(&transcript, policy).iter().any(|finding| finding.rule == RULE)
}

/// The smallest script proptest's deterministic runner finds breaking [`RULE`], if any.
fn smallest_failure(bug: Bug) -> Option<Script> {
    let surface = surface();
    let policy = Policy::default().with_surface(Arc::new(surface.clone()));
    let config = Config { cases: CASES, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let outcome = runner.run(&scripts(), |script| match breaks(bug, &surface, &policy, &script) {
        true => Err(TestCaseError::fail("broke its outputSchema")),
        false => Ok(()),
    });
    match outcome {
        Ok(()) => None,
        Err(TestError::Fail(_, minimal)) => Some(minimal),
        Err(TestError::Abort(reason)) => panic!("proptest gave up: {reason}"),
    }
}

/// The `tools/call` lines the script sends to the store, as their `params`.
fn tool_calls(script: &Script) -> Vec<Value> {
    let transcript = run_in_process(&Store(Bug::Clean), &script.encode_on(&surface()));
    let sent = transcript.events.iter().filter_map(|event| match event {
        Event::Sent(line) => serde_json::from_slice::<Value>(line).ok(),
        _ => None,
    });
    sent.filter(|message| message["method"] == "tools/call").map(|message| message["params"].clone()).collect()
}

#[test]
fn a_result_broken_only_for_the_empty_string_is_found_and_shrinks_to_it() {
    let minimal = smallest_failure(Bug::EmptyRatio).expect("the empty-string bug was not found");
    let calls = tool_calls(&minimal);
    assert_eq!(calls.len(), 1, "{minimal:?}");
    assert_eq!(calls[0]["name"], "measure");
    assert_eq!(calls[0]["arguments"], json!({ "text": "" }), "{minimal:?}");
}

#[test]
fn a_get_broken_only_after_a_create_is_found_with_a_two_call_sequence() {
    let minimal = smallest_failure(Bug::StoredGet).expect("the bug behind a create was not found");
    let calls = tool_calls(&minimal);
    let names: Vec<&Value> = calls.iter().map(|call| &call["name"]).collect();
    assert_eq!(names, [&json!("create"), &json!("get")], "{minimal:?}");
    assert_eq!(calls[1]["arguments"], json!({ "id": 7001 }), "the id the create returned: {minimal:?}");
    // The shrunk script keeps the reference: the get's id is taken from the create's reply, not guessed.
    let seen = minimal.steps.0.iter().any(|step| match step {
        Step::Sequence(plans) => plans.0.len() == 2,
        Step::Send(Message::Request(request)) => {
            matches!(request.call, Call::Tool(plan) if plan.arguments.edge == Edge::Seen)
        }
        _ => false,
    });
    assert!(seen, "{minimal:?}");
}

#[test]
fn the_clean_store_passes() {
    assert_eq!(smallest_failure(Bug::Clean), None);
}
