//! The sweep a run starts with: scripts drawn from the server's [`Surface`] that call every tool, get every prompt,
//! read every resource and template, and ask for what the server does not have. A generator over the surface's
//! data, so it lives with the scripts, not with the data.

use super::arguments::{ArgPlan, Breakage};
use super::edges::Edge;
use super::message::{
    Call, CompletePlan, Envelope, HandshakeVersion, ListKind, Message, PromptArguments, PromptPlan, Request,
    ResourcePlan, ResourceUri, ToolPlan,
};
use super::odd_string::OddString;
use super::{Bounded, Declares, IdKind, Opening, Script, Step, ToolCall};
use crate::protocol::Era;
use crate::surface::Surface;

impl Surface {
    /// The sweep a run starts with: scripts in `era` that call every tool with valid arguments (the simplest and
    /// one more) and with arguments that break a type, a required member, the declared members and the object
    /// shape, get every prompt with and without its required arguments, read every listed resource and an
    /// expansion of every template, complete each prompt's first argument and each template's first variable, and
    /// ask for an unknown tool, prompt and resource, and for every list with no cursor and with a cursor never
    /// issued. At most 12 requests a script.
    pub fn sweep(&self, era: Era) -> Vec<Script> {
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
                calls.push(Call::Tool(ToolPlan { tool, arguments: ArgPlan { breakage, seed, edge: Edge::Plain } }));
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
        // A completion of each prompt's first argument and each template's first variable (a server that offers
        // none answers -32601).
        for prompt in (0..self.prompts.len().min(64)).filter(|&p| !self.prompts[p].arguments.is_empty()) {
            calls.push(Call::Complete(CompletePlan((prompt as u8) << 2)));
        }
        for template in 0..self.templates.len().min(64) {
            calls.push(Call::Complete(CompletePlan((template as u8) << 2 | 1)));
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
    let mut calls = vec![
        Call::ToolsCall(ToolCall::UnknownTool),
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
        Era::Handshake => (Opening::Handshake(HandshakeVersion::V2025_11_25, Declares::Nothing), Envelope::Plain),
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
            // calc offers no completions: its -32601 leaves the completion rule unexercised. Reserved codes and
            // x-mcp-header annotations are 2026-07-28's.
            let reserved = match era {
                Era::Modern => vec!["MCP-COMPLETION-SHAPE"],
                Era::Handshake => vec!["MCP-TOOL-PARAM-HEADER", "MCP-COMPLETION-SHAPE", "MCP-ERROR-CODE-RESERVED"],
            };
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
