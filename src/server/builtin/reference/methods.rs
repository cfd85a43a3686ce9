//! The methods calc serves once its era's gate is passed: the lists, tools, prompts and resources of its surface,
//! the conformance fixtures' own when it serves them, and `subscriptions/listen` streams.

use super::{CalcConnection, Reply, RpcError};
use crate::protocol::codes::INVALID_PARAMS;
use crate::protocol::envelope::SUBSCRIPTION_ID_KEY;
use crate::protocol::methods::{
    ACKNOWLEDGED, COMPLETE, PROMPTS_GET, PROMPTS_LIST, RESOURCES_LIST, RESOURCES_READ, SET_LEVEL, SUBSCRIBE,
    TEMPLATES_LIST, TOOLS_CALL, TOOLS_LIST, UNSUBSCRIBE,
};
use crate::protocol::{Era, Request};
use crate::server::builtin::fixtures;
use crate::server::builtin::mutants::Mutant;
use crate::server::builtin::surface::CalcSurface;
use serde_json::{Value, json};

impl CalcConnection {
    /// The methods both eras serve the same way (but the code for an unknown resource), the fixtures' methods
    /// when it serves them, and method-not-found for the rest.
    pub(super) fn serve_method(&mut self, request: &Request, era: Era) -> Reply {
        let (method, params) = (request.method.as_str(), request.params.as_ref());
        let surface = CalcSurface { mutant: self.mutant, era };
        if matches!(method, TOOLS_LIST | PROMPTS_LIST | RESOURCES_LIST | TEMPLATES_LIST)
            && params.and_then(|p| p.get("cursor")).is_some()
            && !self.has(Mutant::CursorIgnored)
        {
            return Err(RpcError::new(INVALID_PARAMS, "Invalid cursor"));
        }
        if self.fixtures
            && let Some(reply) = self.serve_fixture(request, era)
        {
            return reply;
        }
        if method == TOOLS_CALL
            && self.reads_answers_unchecked()
            && let Some(reply) = self.ask_before_calling(request, era)
        {
            return reply;
        }
        let fixtures = |own: Vec<Value>, theirs: fn() -> Vec<Value>| {
            if self.fixtures { own.into_iter().chain(theirs()).collect() } else { own }
        };
        match method {
            TOOLS_LIST => Ok(json!({ "tools": fixtures(surface.tools(), fixtures::tools) })),
            TOOLS_CALL => surface.call_tool(params).map_err(RpcError::from),
            PROMPTS_LIST if !self.has(Mutant::AdvertisedButMissing) => {
                Ok(json!({ "prompts": fixtures(surface.prompts(), fixtures::prompts) }))
            }
            PROMPTS_GET => surface.get_prompt(params).map_err(RpcError::from),
            RESOURCES_LIST => Ok(json!({ "resources": fixtures(surface.resources(), fixtures::resources) })),
            TEMPLATES_LIST => Ok(json!({ "resourceTemplates": fixtures(surface.templates(), fixtures::templates) })),
            RESOURCES_READ => surface.read_resource(params).map_err(RpcError::from),
            COMPLETE if self.has(Mutant::CompletionOverflow) => {
                let values: Vec<String> = (0..101).map(|i| format!("calc-{i}")).collect();
                Ok(json!({ "completion": { "values": values, "hasMore": false } }))
            }
            other => Err(RpcError::method_not_found(other)),
        }
    }

    /// A fixture's answer ([`fixtures`]), or `None` when the request is not one of theirs. Notifications a fixture
    /// tool sends go to [`CalcConnection::notices`].
    fn serve_fixture(&mut self, request: &Request, era: Era) -> Option<Reply> {
        let (method, params) = (request.method.as_str(), request.params.as_ref());
        let object = params.and_then(Value::as_object);
        let name = object.and_then(|p| p.get("name")).and_then(Value::as_str);
        let reply = match (method, era) {
            (TOOLS_CALL, Era::Handshake) if fixtures::mid_call_request(name?, None).is_some() => {
                let arguments = object.and_then(|p| p.get("arguments"));
                let (capability, method, params) = fixtures::mid_call_request(name?, arguments)?;
                self.ask(&request.id, capability, method, params)
            }
            (TOOLS_CALL, _) => {
                let object = object?;
                let level = match era {
                    Era::Handshake => self.log_level,
                    Era::Modern => fixtures::requested_level(object),
                };
                let called = fixtures::call_tool(name?, object, era, level)?;
                self.notices.extend(called.notifications);
                called.reply.map_err(RpcError::from)
            }
            (PROMPTS_GET, _) => fixtures::get_prompt(name?, object?, era)?.map_err(RpcError::from),
            (RESOURCES_READ, _) => {
                let uri = object?.get("uri")?.as_str()?;
                Ok(fixtures::read_resource(uri)?)
            }
            (COMPLETE, _) => fixtures::complete(params).map_err(RpcError::from),
            (SET_LEVEL, Era::Handshake) => {
                let level = object.and_then(|p| p.get("level")).and_then(Value::as_str);
                match level.and_then(crate::protocol::logging::level_index) {
                    Some(index) => {
                        self.log_level = Some(index);
                        Ok(json!({}))
                    }
                    None => Err(RpcError::new(INVALID_PARAMS, "logging/setLevel needs a level")),
                }
            }
            (SUBSCRIBE | UNSUBSCRIBE, Era::Handshake) => match object.and_then(|p| p.get("uri")) {
                Some(Value::String(_)) => Ok(json!({})),
                _ => Err(RpcError::new(INVALID_PARAMS, format!("{method} needs a uri"))),
            },
            _ => return None,
        };
        Some(reply)
    }

    /// Opens a `subscriptions/listen` stream (basic/patterns/subscriptions.mdx): the acknowledgement first, with
    /// the honoured subset of the filter (the list-changed kinds and the resource URIs it asked for; calc's lists
    /// and resources never change, so nothing follows it) and the subscription id, the listen request's id; the
    /// stream stays open, unanswered.
    pub(super) fn listen(&mut self, request: &Request) -> Reply {
        let filter = request.params.as_ref().and_then(|p| p.get("notifications"));
        let Some(filter) = filter.and_then(Value::as_object) else {
            return Err(RpcError::new(INVALID_PARAMS, "subscriptions/listen needs a notifications object"));
        };
        let mut honoured: serde_json::Map<String, Value> = filter
            .iter()
            .filter(|(kind, wanted)| LIST_CHANGED_KINDS.contains(&kind.as_str()) && **wanted == json!(true))
            .map(|(kind, _)| (kind.clone(), json!(true)))
            .collect();
        if let Some(Value::Array(uris)) = filter.get("resourceSubscriptions") {
            let uris: Vec<Value> = uris.iter().filter(|uri| uri.is_string()).cloned().collect();
            honoured.insert("resourceSubscriptions".into(), Value::Array(uris));
        }
        let id = request.id.to_value();
        self.notices.push(json!({ "jsonrpc": "2.0", "method": ACKNOWLEDGED,
            "params": { "notifications": honoured, "_meta": { SUBSCRIPTION_ID_KEY: id } } }));
        if self.has(Mutant::ListenUnfiltered) {
            self.notices.push(json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                "params": { "_meta": { SUBSCRIPTION_ID_KEY: id } } }));
        }
        self.listens.push(request.id.clone());
        self.withheld = true;
        Ok(json!({}))
    }
}

/// The `subscriptions/listen` filter keys of the list-changed notifications.
const LIST_CHANGED_KINDS: [&str; 3] = ["toolsListChanged", "promptsListChanged", "resourcesListChanged"];
