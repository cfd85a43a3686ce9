//! The server's surface: the tools, prompts, resources and resource templates it lists. It is learned once per run
//! by [`learn`] on fresh connections, in an era the server serves (from the [`ServerModel`]), following
//! `nextCursor` pagination for at most [`MAX_PAGES`] pages per list. Scripts draw tool calls, prompt gets and
//! resource reads from it ([`crate::script::Script::encode_on`]), and the oracle judges their replies with it
//! (through [`crate::oracle::Policy::with_surface`]).

use crate::model::ServerModel;
use crate::oracle::Policy;
use crate::protocol::envelope::{self, META};
use crate::protocol::era::{LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION};
use crate::protocol::methods::{INITIALIZE, INITIALIZED, PROMPTS_LIST, RESOURCES_LIST, TEMPLATES_LIST, TOOLS_LIST};
use crate::protocol::{Era, Frame};
use crate::script::message::{Call, Envelope, HandshakeVersion, Message, Request};
use crate::script::{Bounded, IdKind, Opening, Script, Step};
use crate::server::Target;
use crate::transcript::{Event, Input, Transcript};
use serde_json::{Map, Value, json};
use std::fmt;
use std::sync::{Arc, LazyLock, OnceLock};

/// The most pages read of one list.
pub const MAX_PAGES: usize = 16;
/// The four lists, each with the member that holds its items.
pub const LISTS: [(&str, &str); 4] = [
    (TOOLS_LIST, "tools"),
    (PROMPTS_LIST, "prompts"),
    (RESOURCES_LIST, "resources"),
    (TEMPLATES_LIST, "resourceTemplates"),
];

/// A tool the server lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tool {
    /// Its name.
    pub name: String,
    /// Its `inputSchema` (`{}` when it had none).
    pub input_schema: Value,
    /// Its `outputSchema`, when it declares one.
    pub output_schema: Option<Value>,
}

/// A prompt the server lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    /// Its name.
    pub name: String,
    /// Its arguments: name, and whether it is required.
    pub arguments: Vec<(String, bool)>,
}

/// What the server lists, as far as it was learned.
#[derive(Debug, Default)]
pub struct Surface {
    /// The tools scripts call (all listed, or those `--tool` kept).
    pub tools: Vec<Tool>,
    /// Every tool name listed, kept or not: a name outside it is unknown to the server.
    pub all_tool_names: Vec<String>,
    /// The prompts.
    pub prompts: Vec<Prompt>,
    /// The URIs of the listed resources.
    pub resources: Vec<String>,
    /// The `uriTemplate`s of the listed resource templates.
    pub templates: Vec<String>,
    /// Whether the surface was learned from the server (false: empty, nothing known, nothing judged).
    pub learned: bool,
    /// What learning ran into: a list that got an error, pagination cut short.
    pub notes: Vec<String>,
    /// The compiled input and output schemas of `tools`, built once on first use.
    validators: OnceLock<Vec<(Option<jsonschema::Validator>, Option<jsonschema::Validator>)>>,
}

impl Clone for Surface {
    fn clone(&self) -> Surface {
        Surface {
            tools: self.tools.clone(),
            all_tool_names: self.all_tool_names.clone(),
            prompts: self.prompts.clone(),
            resources: self.resources.clone(),
            templates: self.templates.clone(),
            learned: self.learned,
            notes: self.notes.clone(),
            validators: OnceLock::new(),
        }
    }
}

impl PartialEq for Surface {
    fn eq(&self, other: &Surface) -> bool {
        (&self.tools, &self.all_tool_names, &self.prompts, &self.resources, &self.templates, self.learned)
            == (&other.tools, &other.all_tool_names, &other.prompts, &other.resources, &other.templates, other.learned)
    }
}

impl Eq for Surface {}

impl fmt::Display for Surface {
    /// `3 tools, 1 prompt, 2 resources, 1 resource template`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        write!(
            f,
            "{}, {}, {}, {}",
            count(self.tools.len(), "tool"),
            count(self.prompts.len(), "prompt"),
            count(self.resources.len(), "resource"),
            count(self.templates.len(), "resource template")
        )?;
        if self.tools.len() < self.all_tool_names.len() {
            write!(f, " (focused on {} of {} tools)", self.tools.len(), self.all_tool_names.len())?;
        }
        Ok(())
    }
}

/// The built-in server's surface, learned once from it in-process.
static BUILT_IN: LazyLock<Arc<Surface>> = LazyLock::new(|| {
    let mut target = crate::server::InProcess(crate::server::builtin::reference::Calc);
    Arc::new(learn(&mut target, &ServerModel::built_in()).unwrap_or_default())
});

impl Surface {
    /// The built-in server's surface (learned from it once).
    pub fn built_in() -> Arc<Surface> {
        BUILT_IN.clone()
    }

    /// The tool named `name`, if it is among the tools scripts call.
    pub fn tool(&self, name: &str) -> Option<(usize, &Tool)> {
        self.tools.iter().enumerate().find(|(_, tool)| tool.name == name)
    }

    /// Whether the server lists a tool of this name (kept by `--tool` or not).
    pub fn lists_tool(&self, name: &str) -> bool {
        self.all_tool_names.iter().any(|n| n == name)
    }

    /// The prompt named `name`.
    pub fn prompt(&self, name: &str) -> Option<&Prompt> {
        self.prompts.iter().find(|prompt| prompt.name == name)
    }

    /// The compiled input and output schema of tool `index` (`None` where a schema does not compile).
    pub fn validators(&self, index: usize) -> (Option<&jsonschema::Validator>, Option<&jsonschema::Validator>) {
        let all = self.validators.get_or_init(|| {
            self.tools
                .iter()
                .map(|tool| (compile(&tool.input_schema), tool.output_schema.as_ref().and_then(compile)))
                .collect()
        });
        all.get(index).map_or((None, None), |(input, output)| (input.as_ref(), output.as_ref()))
    }

    /// Keeps only the tools named; an error names those the server does not list.
    pub fn focus(mut self, names: &[String]) -> anyhow::Result<Surface> {
        if names.is_empty() {
            return Ok(self);
        }
        let unknown: Vec<&str> = names.iter().filter(|n| !self.lists_tool(n)).map(String::as_str).collect();
        if !unknown.is_empty() {
            anyhow::bail!(
                "--tool {}: the server lists no such tool (it lists: {})",
                unknown.join(", "),
                self.all_tool_names.join(", ")
            );
        }
        self.tools.retain(|tool| names.contains(&tool.name));
        self.validators = OnceLock::new();
        Ok(self)
    }

    /// Leaves out the tools named (they stay listed, so calling them is not calling an unknown tool); an error
    /// names those the server does not list.
    pub fn skip(mut self, names: &[String]) -> anyhow::Result<Surface> {
        let unknown: Vec<&str> = names.iter().filter(|n| !self.lists_tool(n)).map(String::as_str).collect();
        if !unknown.is_empty() {
            anyhow::bail!("--skip-tool {}: the server lists no such tool", unknown.join(", "));
        }
        self.tools.retain(|tool| !names.contains(&tool.name));
        self.validators = OnceLock::new();
        Ok(self)
    }

    /// The surface as a JSON object, for the JSON report.
    pub fn to_json(&self) -> Value {
        json!({
            "tools": self.tools.iter().map(|t| json!({
                "name": t.name, "input_schema": t.input_schema, "output_schema": t.output_schema,
            })).collect::<Vec<_>>(),
            "all_tool_names": self.all_tool_names,
            "prompts": self.prompts.iter().map(|p| json!({
                "name": p.name,
                "arguments": p.arguments.iter().map(|(name, required)| json!({"name": name, "required": required}))
                    .collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "resources": self.resources,
            "resource_templates": self.templates,
            "notes": self.notes,
        })
    }
}

impl Surface {
    /// The sweep a run starts with: scripts in `era` that call every tool with valid arguments (the simplest and
    /// one more) and with arguments that break a type, a required member, the declared members and the object
    /// shape, get every prompt with and without its
    /// required arguments, read every listed resource and an expansion of every template, and ask for an unknown
    /// tool, prompt and resource, and for every list with no cursor and with a cursor never issued. At most 12 requests a script.
    pub fn sweep(&self, era: Era) -> Vec<Script> {
        use crate::script::arguments::{ArgPlan, Breakage, OddString};
        use crate::script::message::{PromptArguments, PromptPlan, ResourcePlan, ResourceUri, ToolPlan};
        let mut calls = Vec::new();
        for tool in 0..self.tools.len().min(256) {
            let tool = tool as u8;
            let plans = [
                (Breakage::None, 0),
                (Breakage::None, 1),
                (Breakage::WrongType, 0),
                (Breakage::MissingRequired, 0),
                (Breakage::ExtraProperty, 0),
                (Breakage::NotAnObject, 0),
            ];
            for (breakage, seed) in plans {
                calls.push(Call::Tool(ToolPlan { tool, arguments: ArgPlan { breakage, seed } }));
            }
        }
        for prompt in 0..self.prompts.len().min(256) {
            for arguments in [PromptArguments::Required, PromptArguments::MissingRequired] {
                calls.push(Call::Prompt(PromptPlan { prompt: prompt as u8, arguments }));
            }
        }
        for index in 0..self.resources.len().min(256) {
            calls.push(Call::Resource(ResourcePlan { index: index as u8, uri: ResourceUri::Listed }));
        }
        for index in 0..self.templates.len().min(256) {
            let uri = ResourceUri::Template(OddString::Empty);
            calls.push(Call::Resource(ResourcePlan { index: index as u8, uri }));
        }
        calls.extend([Call::ToolsList, Call::PromptsList, Call::ResourcesList, Call::TemplatesList]);
        calls.extend(unknowns());
        scripts(era, &calls)
    }

    /// For a server that serves both eras, besides the sweep in the handshake era: one script in `era` that asks
    /// for an unknown tool, prompt and resource and for every list with a cursor never issued (the errors whose
    /// codes differ by era, MCP-ERROR-CODE-RESERVED).
    pub fn unknowns_in(&self, era: Era) -> Vec<Script> {
        scripts(era, &unknowns())
    }
}

/// The calls of the sweep that ask for what the server does not have: an unknown tool, prompt and resource, and
/// every list with a cursor never issued.
fn unknowns() -> Vec<Call> {
    use crate::script::message::{ListKind, PromptArguments, PromptPlan, ResourcePlan, ResourceUri};
    let mut calls = vec![
        Call::ToolsCall(crate::script::ToolCall::UnknownTool),
        Call::Prompt(PromptPlan { prompt: 0, arguments: PromptArguments::UnknownPrompt }),
        Call::Resource(ResourcePlan { index: 0, uri: ResourceUri::Unknown }),
    ];
    for list in [ListKind::Tools, ListKind::Prompts, ListKind::Resources, ListKind::Templates] {
        calls.push(Call::BadCursor(list));
    }
    calls
}

/// `calls` as scripts in `era`, at most 12 requests a script.
fn scripts(era: Era, calls: &[Call]) -> Vec<Script> {
    let (opening, envelope) = match era {
        Era::Handshake => (Opening::Handshake(HandshakeVersion::V2025_11_25), Envelope::Plain),
        Era::Modern => (Opening::Modern, Envelope::Modern),
    };
    calls
        .chunks(12)
        .map(|chunk| {
            let steps = chunk
                .iter()
                .map(|call| {
                    Step::Send(Message::Request(Request { call: call.clone(), id: IdKind::SmallInt, envelope }))
                })
                .collect();
            Script { opening, steps: Bounded(steps) }
        })
        .collect()
}

/// `policy` with the surface of `target` learned, in an era its model says the server serves (the handshake era
/// without one). For replaying and shrinking a case: a case file keeps no surface, and the surface rules judge
/// nothing without one.
pub fn with_learned(policy: Policy, target: &mut dyn Target) -> anyhow::Result<Policy> {
    let model = policy.model().cloned().unwrap_or_else(|| ServerModel::stated(crate::model::Eras::Unknown));
    let surface = learn(target, &model)?;
    Ok(policy.with_surface(Arc::new(surface)))
}

/// Compiles a schema as MCP uses it (2020-12 unless it names another draft); `None` when it does not compile.
pub fn compile(schema: &Value) -> Option<jsonschema::Validator> {
    if !schema.is_object() && !schema.is_boolean() {
        return None;
    }
    let mut options = jsonschema::options();
    if schema.get("$schema").is_none() {
        options = options.with_draft(jsonschema::Draft::Draft202012);
    }
    options.build(schema).ok()
}

/// The conversation that reads one page of `method` in `era`, with `cursor`; the list request has id 2 after a
/// handshake, id 1 in the modern era.
pub fn page_inputs(era: Era, method: &str, cursor: Option<&str>) -> Vec<Input> {
    let line = |value: Value| Input::Line(value.to_string().into_bytes());
    let mut params = Map::new();
    if let Some(cursor) = cursor {
        params.insert("cursor".into(), json!(cursor));
    }
    match era {
        Era::Handshake => {
            let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": INITIALIZE, "params": {
                "protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
                "clientInfo": { "name": crate::script::CLIENT_NAME, "version": env!("CARGO_PKG_VERSION") } } });
            let mut list = json!({ "jsonrpc": "2.0", "id": 2, "method": method });
            if !params.is_empty() {
                list["params"] = Value::Object(params);
            }
            vec![
                line(initialize),
                line(json!({ "jsonrpc": "2.0", "method": INITIALIZED })),
                Input::Sync,
                line(list),
                Input::Sync,
            ]
        }
        Era::Modern => {
            params.insert(META.into(), envelope::envelope(LATEST_MODERN_VERSION));
            vec![line(json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params })), Input::Sync]
        }
    }
}

/// Learns the surface of `target`: each list, page by page, each page on a fresh connection in an era the model
/// says the server serves (the handshake era when it serves both or nobody knows). A list that gets an error or
/// no reply is empty (noted); a target that cannot run a conversation is an error.
pub fn learn(target: &mut dyn Target, model: &ServerModel) -> anyhow::Result<Surface> {
    let era = match model.serves(Era::Handshake) {
        Some(false) => Era::Modern,
        _ => Era::Handshake,
    };
    let mut surface = Surface { learned: true, ..Surface::default() };
    for (method, key) in LISTS {
        let mut cursor: Option<String> = None;
        let mut seen = Vec::new();
        for page in 0.. {
            if page == MAX_PAGES {
                surface.notes.push(format!("{method}: stopped after {MAX_PAGES} pages"));
                break;
            }
            let transcript = target.run(&page_inputs(era, method, cursor.as_deref()))?;
            let id = if era == Era::Handshake { 2 } else { 1 };
            let result = match list_result(&transcript, id) {
                Ok(result) => result,
                Err(why) => {
                    surface.notes.push(format!("{method}: {why}"));
                    break;
                }
            };
            let items = result.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            for item in items {
                surface.add(key, item);
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !seen.iter().any(|c| c == next) => {
                    seen.push(next.to_string());
                    cursor = Some(next.to_string());
                }
                Some(_) => {
                    surface.notes.push(format!("{method}: nextCursor repeats an earlier cursor; stopped"));
                    break;
                }
                None => break,
            }
        }
    }
    Ok(surface)
}

impl Surface {
    /// Adds one listed item of the list whose items sit under `key`; items without a string name (or uri) are
    /// left out (the oracle judges list shapes).
    fn add(&mut self, key: &str, item: &Value) {
        let text = |name: &str| item.get(name).and_then(Value::as_str).map(str::to_string);
        match key {
            "tools" => {
                let Some(name) = text("name") else { return };
                self.all_tool_names.push(name.clone());
                let input_schema = item.get("inputSchema").cloned().unwrap_or_else(|| json!({}));
                let output_schema = item.get("outputSchema").filter(|s| !s.is_null()).cloned();
                self.tools.push(Tool { name, input_schema, output_schema });
            }
            "prompts" => {
                let Some(name) = text("name") else { return };
                let arguments = item.get("arguments").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                let arguments = arguments
                    .iter()
                    .filter_map(|a| {
                        let name = a.get("name")?.as_str()?.to_string();
                        Some((name, a.get("required").and_then(Value::as_bool).unwrap_or(false)))
                    })
                    .collect();
                self.prompts.push(Prompt { name, arguments });
            }
            "resources" => self.resources.extend(text("uri")),
            _ => self.templates.extend(text("uriTemplate")),
        }
    }
}

/// The result object of the reply with id `id`, or why there is none.
fn list_result(transcript: &Transcript, id: i64) -> Result<Map<String, Value>, String> {
    for event in &transcript.events {
        let Event::Received { line, .. } = event else { continue };
        let Frame::Response(_) = Frame::parse(line) else { continue };
        let Ok(Value::Object(mut reply)) = serde_json::from_slice::<Value>(line) else { continue };
        if reply.get("id") != Some(&json!(id)) {
            continue;
        }
        return match (reply.remove("result"), reply.remove("error")) {
            (Some(Value::Object(result)), _) => Ok(result),
            (_, Some(error)) => Err(format!("error {}", error.get("code").unwrap_or(&Value::Null))),
            _ => Err("a reply that is not a result object".into()),
        };
    }
    Err("no reply".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Eras;
    use crate::server::{InProcessServer, ServerConnection, Status};

    #[test]
    fn the_built_in_server_lists_its_tools_prompts_and_resources() {
        let surface = Surface::built_in();
        assert!(surface.learned && surface.notes.is_empty(), "{:?}", surface.notes);
        assert_eq!(surface.tools[0].name, "add");
        assert!(surface.tools.iter().any(|t| t.output_schema.is_some()));
        assert!(!surface.prompts.is_empty() && !surface.resources.is_empty() && !surface.templates.is_empty());
        for index in 0..surface.tools.len() {
            assert!(surface.validators(index).0.is_some(), "{}", surface.tools[index].name);
        }
        let modern = learn(&mut crate::server::InProcess(crate::server::builtin::reference::Calc), &{
            ServerModel::stated(Eras::Modern)
        })
        .unwrap();
        assert_eq!(&modern, &*surface, "both eras list the same surface");
    }

    #[test]
    fn the_sweep_calls_every_tool_both_ways_and_reads_every_resource() {
        let surface = Surface::built_in();
        let policy = crate::oracle::Policy::default().with_model(ServerModel::built_in()).with_surface(surface.clone());
        for era in [Era::Handshake, Era::Modern] {
            let mut coverage = crate::oracle::coverage::Coverage::default();
            for script in surface.sweep(era) {
                let transcript = crate::server::run_in_process(
                    &crate::server::builtin::reference::Calc,
                    &script.encode_on(&surface),
                );
                let (findings, covered) = crate::oracle::check_covered(&transcript, &policy);
                assert!(findings.is_empty(), "{findings:?}\n{}", transcript.render());
                coverage.merge(&covered);
            }
            for tool in &surface.tools {
                let counts = &coverage.tools[&tool.name];
                assert!(counts.valid >= 2 && counts.invalid >= 1, "{era}: {}: {counts:?}", tool.name);
            }
            assert_eq!(coverage.methods["resources/read"].results, 3, "{era}: two resources and a template");
            let exercised: Vec<&str> =
                crate::oracle::surface_rules().iter().copied().filter(|r| !coverage.exercised.contains(r)).collect();
            let reserved = if era == Era::Modern { vec![] } else { vec!["MCP-ERROR-CODE-RESERVED"] };
            assert_eq!(exercised, reserved, "{era}: rules the sweep does not exercise");
        }
        // A dual-era server gets the unknowns in the modern era too, where their codes are judged: the planted
        // -32002 for an unknown resource breaks MCP-ERROR-CODE-RESERVED in the first such script.
        let scripts = crate::campaign::sweep(&policy);
        assert_eq!(scripts.len(), surface.sweep(Era::Handshake).len() + 1);
        let planted =
            crate::server::builtin::reference::Planted(crate::server::builtin::mutants::Mutant::ReservedErrorCode);
        let last = crate::server::run_in_process(&planted, &scripts.last().unwrap().encode_on(&surface));
        let findings = crate::oracle::check(&last, &policy);
        assert!(findings.iter().any(|f| f.rule == "MCP-ERROR-CODE-RESERVED"), "{findings:?}");
    }

    /// Lists tools `t0`..`t4`, two per page, cursors `p1`, `p2`; a cursor it never issued gets -32602.
    struct Paged;

    impl InProcessServer for Paged {
        type Connection = Paged;
        fn connect(&self) -> Paged {
            Paged
        }
    }

    impl ServerConnection for Paged {
        fn receive(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> Status {
            let request: Value = serde_json::from_slice(line).unwrap();
            let Some(id) = request.get("id") else { return Status::Running };
            let page = match request["params"]["cursor"].as_str() {
                None => 0,
                Some("p1") => 1,
                Some("p2") => 2,
                Some(_) => {
                    let error = json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,"message":"bad cursor"}});
                    out.push(error.to_string().into_bytes());
                    return Status::Running;
                }
            };
            let result = match request["method"].as_str() {
                Some("initialize") => json!({"protocolVersion":"2025-11-25","capabilities":{},
                    "serverInfo":{"name":"paged","version":"1"}}),
                Some("tools/list") => {
                    let tools: Vec<Value> = (page * 2..(page * 2 + 2).min(5))
                        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
                        .collect();
                    let mut result = json!({ "tools": tools });
                    if page < 2 {
                        result["nextCursor"] = json!(format!("p{}", page + 1));
                    }
                    result
                }
                _ => {
                    let error = json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"nope"}});
                    out.push(error.to_string().into_bytes());
                    return Status::Running;
                }
            };
            out.push(json!({"jsonrpc":"2.0","id":id,"result":result}).to_string().into_bytes());
            Status::Running
        }
    }

    #[test]
    fn pagination_is_followed_and_errors_are_noted() {
        let surface = learn(&mut crate::server::InProcess(Paged), &ServerModel::stated(Eras::Handshake)).unwrap();
        let names: Vec<&str> = surface.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["t0", "t1", "t2", "t3", "t4"]);
        assert_eq!(surface.notes.len(), 3, "{:?}", surface.notes);
        assert_eq!(surface.to_string(), "5 tools, 0 prompts, 0 resources, 0 resource templates");
        let focused = surface.clone().focus(&["t3".into()]).unwrap();
        assert_eq!(focused.tools.len(), 1);
        assert!(focused.lists_tool("t0") && focused.to_string().ends_with("(focused on 1 of 5 tools)"));
        assert!(surface.clone().focus(&["nope".into()]).is_err());
        let skipped = surface.clone().skip(&["t0".into(), "t4".into()]).unwrap();
        assert_eq!(skipped.tools.len(), 3);
        assert!(skipped.lists_tool("t0") && surface.skip(&["nope".into()]).is_err());
    }
}
