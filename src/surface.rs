//! The server's surface: the tools, prompts, resources and resource templates it lists, data only. It is learned
//! once per run ([`crate::learn::surface`]); scripts draw tool calls, prompt gets and resource reads from it
//! ([`crate::script::Script::encode_on`]) and the sweep a run starts with (`Surface::sweep`, in `script::sweep`), and the oracle judges
//! their replies with it (through [`crate::oracle::Policy::with_surface`]).

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

    /// What this surface and `other` both list: the tools, prompts, resources and templates of this one whose names
    /// (or URIs) `other` lists too, as this one describes them (`diff` calls only what both servers serve).
    pub fn shared_with(mut self, other: &Surface) -> Surface {
        self.tools.retain(|tool| other.lists_tool(&tool.name));
        self.all_tool_names.retain(|name| other.lists_tool(name));
        self.prompts.retain(|prompt| other.prompts.iter().any(|p| p.name == prompt.name));
        self.resources.retain(|uri| other.resources.contains(uri));
        self.templates.retain(|template| other.templates.contains(template));
        self.validators = OnceLock::new();
        self
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
