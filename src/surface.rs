//! The server's surface: the tools, prompts, resources and resource templates it lists, data only. It is learned
//! once per run ([`crate::learn::surface`]); scripts draw tool calls, prompt gets and resource reads from it
//! ([`crate::script::Script::encode_on`]) and the sweep a run starts with ([`Surface::sweep`]), and the oracle judges
//! their replies with it (through [`crate::oracle::Policy::with_surface`]).

use crate::protocol::Era;
use crate::script::message::{Call, Envelope, HandshakeVersion, Message, Request};
use crate::script::{Bounded, IdKind, Opening, Script, Step};
use serde_json::{Value, json};
use std::fmt;
use std::sync::OnceLock;

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

impl Surface {
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

impl Surface {
    /// Adds one listed item of the list whose items sit under `key` (`tools`, `prompts`, `resources` or
    /// `resourceTemplates`); items without a string name (or uri) are left out (the oracle judges list shapes).
    pub fn add(&mut self, key: &str, item: &Value) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ServerModel;

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
}
