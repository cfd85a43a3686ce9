//! The harness entry points on a server of the user's own, not calc: a notes server whose tools (`store_note`,
//! `get_note`, each with an outputSchema) are its own. The harness learns them in-process and calls them with
//! schema-driven arguments, so a tool bug planted in `get_note` (a note not found is a result whose
//! structuredContent breaks the outputSchema) is found by `harness::property` and `harness::fuzz`; the clean server
//! passes. A case whose expected rule an in-process replay cannot judge fails the replay test, naming the case
//! and the rule.
//!
//! The notes server keeps calc's protocol handling (eras, envelopes, batches, refusals) and replaces its tools:
//! `tools/list` lists the notes tools, and a `tools/call` of one is served by the notes server, in a result calc
//! shaped for the connection's era.

use mcp_wirefuzz::harness;
use mcp_wirefuzz::oracle::Policy;
use mcp_wirefuzz::server::builtin::reference::{Calc, CalcConnection};
use mcp_wirefuzz::server::{InProcessServer, ServerConnection, Status};
use proptest::test_runner::Config;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The notes server; `planted`: `get_note` of an id never stored answers `{"title": null}` (against its
/// outputSchema) instead of an isError result.
#[derive(Clone, Copy)]
struct Notes {
    planted: bool,
}

/// One connection: calc underneath, the notes stored so far, and the tool calls calc is answering for the notes
/// server (by request id).
struct NotesConnection {
    calc: CalcConnection,
    planted: bool,
    notes: Vec<String>,
    calls: HashMap<String, Value>,
}

impl InProcessServer for Notes {
    type Connection = NotesConnection;

    fn connect(&self) -> NotesConnection {
        NotesConnection { calc: Calc.connect(), planted: self.planted, notes: Vec::new(), calls: HashMap::new() }
    }
}

fn tools() -> Value {
    json!([
        {
            "name": "store_note",
            "description": "Stores a note; answers its id.",
            "inputSchema": { "type": "object", "properties": { "title": { "type": "string" } },
                "required": ["title"], "additionalProperties": false },
            "outputSchema": { "type": "object", "properties": { "id": { "type": "integer" } }, "required": ["id"] }
        },
        {
            "name": "get_note",
            "description": "The note with this id.",
            "inputSchema": { "type": "object", "properties": { "id": { "type": "integer" } },
                "required": ["id"], "additionalProperties": false },
            "outputSchema": { "type": "object", "properties": { "title": { "type": "string" } },
                "required": ["title"] }
        }
    ])
}

impl NotesConnection {
    /// A request of a notes tool becomes a call of calc's `add` (calc shapes the result for the era; the notes
    /// server fills it in), remembered by id; anything else is left as it is. `true` when it changed.
    fn redirect(&mut self, message: &mut Value) -> bool {
        match message {
            Value::Array(items) => items.iter_mut().fold(false, |changed, item| self.redirect(item) | changed),
            Value::Object(request) => {
                let is_call = request.get("method").and_then(Value::as_str) == Some("tools/call");
                let Some(params) = request.get_mut("params").and_then(Value::as_object_mut) else { return false };
                let name = params.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
                if !is_call || !["store_note", "get_note"].contains(&name.as_str()) {
                    // Calc's own tools are not the notes server's: calc refuses a tool it does not know.
                    let calcs = ["add", "format_user", "stats", "logo"].contains(&name.as_str());
                    if is_call && calcs {
                        params.insert("name".into(), json!(format!("{name}?")));
                    }
                    return is_call && calcs;
                }
                let call = json!({ "name": name, "arguments": params.get("arguments").cloned() });
                params.insert("name".into(), json!("add"));
                params.insert("arguments".into(), json!({ "a": 0, "b": 0 }));
                if let Some(id) = request.get("id") {
                    self.calls.insert(id.to_string(), call);
                }
                true
            }
            _ => false,
        }
    }

    /// A reply of calc: the tools it lists become the notes tools; the result of a redirected call becomes the
    /// notes tool's.
    fn fill(&mut self, reply: &mut Value, listing: &[String]) {
        match reply {
            Value::Array(items) => items.iter_mut().for_each(|item| self.fill(item, listing)),
            Value::Object(reply) => {
                let id = reply.get("id").map(Value::to_string).unwrap_or_default();
                // Whatever answered it (calc may refuse the call), the redirected call is settled by this reply: a
                // later request that reuses its id is not the call.
                let call = self.calls.remove(&id);
                let Some(result) = reply.get_mut("result").and_then(Value::as_object_mut) else { return };
                if listing.contains(&id) && result.contains_key("tools") {
                    result.insert("tools".into(), tools());
                } else if let Some(call) = call {
                    result.remove("structuredContent");
                    result.extend(self.serve(&call));
                }
            }
            _ => {}
        }
    }

    /// The notes tool's result members.
    fn serve(&mut self, call: &Value) -> Map<String, Value> {
        let arguments = call["arguments"].as_object().filter(|a| a.len() == 1);
        let structured = match (call["name"].as_str(), arguments) {
            (Some("store_note"), Some(arguments)) if arguments.get("title").is_some_and(Value::is_string) => {
                self.notes.push(arguments["title"].as_str().unwrap_or_default().to_string());
                json!({ "id": self.notes.len() - 1 })
            }
            (Some("get_note"), Some(arguments)) if arguments.get("id").is_some_and(Value::is_i64) => {
                let id = arguments["id"].as_i64().unwrap_or_default();
                match usize::try_from(id).ok().and_then(|id| self.notes.get(id)) {
                    Some(title) => json!({ "title": title }),
                    None if self.planted => json!({ "title": null }),
                    None => return outcome(format!("no note {id}"), None),
                }
            }
            _ => return outcome("the arguments break the tool's inputSchema".into(), None),
        };
        outcome(structured.to_string(), Some(structured))
    }
}

/// A tool result's members: an isError result without structured content, or a result with it.
fn outcome(text: String, structured: Option<Value>) -> Map<String, Value> {
    let mut members = Map::new();
    members.insert("content".into(), json!([{ "type": "text", "text": text }]));
    members.insert("isError".into(), json!(structured.is_none()));
    if let Some(structured) = structured {
        members.insert("structuredContent".into(), structured);
    }
    members
}

/// The ids of the `tools/list` requests in `message`.
fn listings(message: &Value) -> Vec<String> {
    match message {
        Value::Array(items) => items.iter().flat_map(listings).collect(),
        Value::Object(request) if request.get("method").and_then(Value::as_str) == Some("tools/list") => {
            request.get("id").map(Value::to_string).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

impl ServerConnection for NotesConnection {
    fn receive(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> Status {
        let mut message = serde_json::from_slice::<Value>(line).unwrap_or(Value::Null);
        let listing = listings(&message);
        let status = if self.redirect(&mut message) {
            self.calc.receive(message.to_string().as_bytes(), out)
        } else {
            self.calc.receive(line, out)
        };
        for reply in out.iter_mut() {
            if let Ok(mut value) = serde_json::from_slice::<Value>(reply) {
                self.fill(&mut value, &listing);
                *reply = value.to_string().into_bytes();
            }
        }
        status
    }
}

fn message(run: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let panic = std::panic::catch_unwind(run).expect_err("expected a failure");
    panic.downcast_ref::<String>().cloned().unwrap_or_default()
}

fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

/// The case file a failure report ends with.
fn case_of(report: &str) -> &str {
    &report[report.find("# mcp-wirefuzz case").expect("a case file in the report")..]
}

#[test]
fn the_property_calls_the_servers_own_tools_and_finds_the_tool_bug() {
    let report = message(|| harness::property_under(&Notes { planted: true }, &Policy::default(), config(256)));
    assert!(report.contains("MCP-TOOL-OUTPUT-SCHEMA") && report.contains("get_note"), "{report}");
    assert!(report.contains("server surface: 2 tools"), "the report says what was learned: {report}");
    harness::property_under(&Notes { planted: false }, &Policy::default(), config(256));

    // The case the report prints fails the replay test while the bug is in, and passes once it is fixed.
    let dir = std::env::temp_dir().join(format!("wirefuzz-notes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("get-note.case"), case_of(&report)).unwrap();
    let failures = harness::replay_failures(&Notes { planted: true }, &dir, &Policy::default());
    assert!(failures.len() == 1 && failures[0].contains("MCP-TOOL-OUTPUT-SCHEMA"), "{failures:?}");
    harness::replay(&Notes { planted: false }, &dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_fuzz_body_calls_the_servers_own_tools() {
    let found = (0..2_000).map(|index| mcp_wirefuzz::campaign::conversation_bytes(1, index)).find_map(|bytes| {
        let planted = std::panic::catch_unwind(|| harness::fuzz(&Notes { planted: true }, &bytes)).err()?;
        Some((bytes, planted.downcast_ref::<String>().cloned().unwrap_or_default()))
    });
    let (bytes, report) = found.expect("the tool bug is found in 2,000 fuzz inputs");
    assert!(report.contains("MCP-TOOL-OUTPUT-SCHEMA") && report.contains("get_note"), "{report}");
    harness::fuzz(&Notes { planted: false }, &bytes);
}

#[test]
fn a_case_from_stdio_whose_rule_is_not_judged_in_process_fails_the_replay() {
    let dir = std::env::temp_dir().join(format!("wirefuzz-notes-stdio-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let hung = "# mcp-wirefuzz case\ncommand: [\"notes-server\"]\nexpect: SERVER-HANG\n\
                >> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n--\n";
    std::fs::write(dir.join("hung-get-note.case"), hung).unwrap();
    let report = message(|| harness::replay(&Notes { planted: false }, &dir));
    assert!(report.contains("hung-get-note.case: expects SERVER-HANG") && report.contains("cannot judge"), "{report}");
    std::fs::remove_dir_all(&dir).unwrap();
}
