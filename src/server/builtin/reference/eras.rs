//! The two protocol eras' gates before a method is served: a connection's era picked by its first request, the
//! handshake's `initialize` and its gate, the modern envelope ladder, and what every modern result carries.

use super::{
    CalcConnection, HANDSHAKE_REFUSES_MODERN, META_NOT_OBJECT, MISSING_KEYS_PREFIX, MODERN_REFUSES_INITIALIZE, Reply,
    RpcError, SERVER_NAME, SERVER_VERSION, confirm_elicitation,
};
use crate::protocol::codes::{INVALID_PARAMS, INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION};
use crate::protocol::envelope::{self, CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY};
use crate::protocol::era::{HANDSHAKE_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_VERSIONS};
use crate::protocol::methods::{
    CACHEABLE, COMPLETE, DISCOVER, ELICITATION_CREATE, INITIALIZE, LISTEN, PING, PROMPTS_GET, PROMPTS_LIST,
    RESOURCES_LIST, RESOURCES_READ, SET_LEVEL, SUBSCRIBE, TEMPLATES_LIST, TOOLS_CALL, TOOLS_LIST, UNSUBSCRIBE,
};
use crate::protocol::{Era, Request};
use crate::server::builtin::mutants::Mutant;
use serde_json::{Value, json};

impl CalcConnection {
    /// Answers a request in the connection's era, which the first request picks.
    pub(super) fn request(&mut self, request: &Request) -> Reply {
        let params = request.params.as_ref();
        let era = *self.era.get_or_insert_with(|| envelope::opening_era(&request.method, params));
        match era {
            Era::Handshake => {
                let mut result = self.handshake_request(request)?;
                if let (true, Some(object)) = (self.has(Mutant::HandshakeResultType), result.as_object_mut()) {
                    object.insert("resultType".into(), json!("complete"));
                }
                Ok(result)
            }
            Era::Modern => self.modern_request(request),
        }
    }

    fn handshake_request(&mut self, request: &Request) -> Reply {
        let params = request.params.as_ref();
        if request.method == DISCOVER && self.has(Mutant::NotificationSelectsEra) {
            return Err(RpcError::method_not_found(DISCOVER));
        }
        if envelope::carries_modern_envelope(&request.method, params) && !self.has(Mutant::HandshakeAcceptsModern) {
            return Err(RpcError::new(INVALID_REQUEST, HANDSHAKE_REFUSES_MODERN));
        }
        match request.method.as_str() {
            INITIALIZE => self.initialize(params),
            PING => Ok(json!({})),
            SET_LEVEL | COMPLETE | SUBSCRIBE | UNSUBSCRIBE if self.fixtures && !self.initialized => {
                Err(RpcError::new(INVALID_PARAMS, "the connection is not initialized: send initialize first"))
            }
            TOOLS_LIST | TOOLS_CALL | PROMPTS_LIST | RESOURCES_LIST | PROMPTS_GET | RESOURCES_READ | TEMPLATES_LIST
                if !self.initialized =>
            {
                Err(RpcError::new(INVALID_PARAMS, "the connection is not initialized: send initialize first"))
            }
            _ => self.serve_method(request, Era::Handshake),
        }
    }

    fn initialize(&mut self, params: Option<&Value>) -> Reply {
        if self.initialized {
            return Err(RpcError::new(INVALID_REQUEST, "initialize may be sent only once per connection"));
        }
        let invalid = || RpcError::new(INVALID_PARAMS, "initialize needs protocolVersion, capabilities and clientInfo");
        let params = params.and_then(Value::as_object).ok_or_else(invalid)?;
        let requested = params.get("protocolVersion").and_then(Value::as_str).ok_or_else(invalid)?;
        let client_info = params.get("clientInfo").and_then(Value::as_object).ok_or_else(invalid)?;
        let named = client_info.get("name").is_some_and(Value::is_string)
            && client_info.get("version").is_some_and(Value::is_string);
        if !params.get("capabilities").is_some_and(Value::is_object) || !named {
            return Err(invalid());
        }
        let version = HANDSHAKE_VERSIONS.into_iter().find(|v| *v == requested).unwrap_or(LATEST_HANDSHAKE_VERSION);
        self.initialized = true;
        self.version = Some(version);
        self.client_capabilities = params.get("capabilities").cloned().unwrap_or_default();
        Ok(json!({
            "protocolVersion": version,
            "capabilities": capabilities(false, self.fixtures),
            "serverInfo": server_info(),
        }))
    }

    /// Answers a request on a modern connection: envelope checks first, then the method.
    fn modern_request(&mut self, request: &Request) -> Reply {
        let params = request.params.as_ref();
        if request.method == INITIALIZE {
            if self.has(Mutant::ModernAcceptsInitialize) {
                return self.initialize(params);
            }
            let mut data = json!({ "supported": MODERN_VERSIONS });
            if let Some(requested) = params.and_then(|p| p.get("protocolVersion")).filter(|v| v.is_string()) {
                data["requested"] = requested.clone();
            }
            return Err(RpcError {
                data: Some(data),
                ..RpcError::new(UNSUPPORTED_PROTOCOL_VERSION, MODERN_REFUSES_INITIALIZE)
            });
        }
        let meta = envelope::meta(params).ok_or_else(|| RpcError::new(INVALID_PARAMS, META_NOT_OBJECT))?;
        let mut missing = envelope::missing_keys(meta);
        if !missing.is_empty() {
            if self.has(Mutant::WrongMissingKey) {
                missing = vec![PROTOCOL_VERSION_KEY];
            }
            return Err(RpcError::new(INVALID_PARAMS, format!("{MISSING_KEYS_PREFIX}{}", missing.join(", "))));
        }
        let Some(version) = meta.get(PROTOCOL_VERSION_KEY).and_then(Value::as_str) else {
            return Err(RpcError::new(INVALID_PARAMS, "the protocol-version envelope value must be a string"));
        };
        if !MODERN_VERSIONS.contains(&version) && !self.has(Mutant::AcceptsAnyVersion) {
            let data = json!({ "supported": MODERN_VERSIONS, "requested": version });
            return Err(RpcError {
                data: (!self.has(Mutant::UnsupportedVersionNoData)).then_some(data),
                ..RpcError::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
            });
        }
        if !meta.get(CLIENT_CAPABILITIES_KEY).is_some_and(Value::is_object) {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "Invalid request parameters: clientCapabilities must be an object",
            ));
        }
        let mut result = match request.method.as_str() {
            DISCOVER => {
                json!({ "supportedVersions": MODERN_VERSIONS, "capabilities": capabilities(true, self.fixtures) })
            }
            LISTEN => return self.listen(request),
            PING if self.has(Mutant::ModernServesPing) => json!({}),
            _ => self.serve_method(request, Era::Modern)?,
        };
        self.stamp_modern(&request.method, &mut result);
        if request.method == TOOLS_CALL && self.has(Mutant::InputRequiredUndeclared) {
            // Asks for an elicitation whatever the request's clientCapabilities declared.
            result = json!({
                "resultType": "input_required",
                "inputRequests": { "confirm": { "method": ELICITATION_CREATE, "params": confirm_elicitation() } },
                "requestState": "calc-add",
                "_meta": { SERVER_INFO_KEY: server_info() },
            });
        }
        Ok(result)
    }

    /// Adds what every modern result carries: `resultType`, the caching hints where the method is cacheable, and
    /// the serverInfo stamp in `_meta`.
    fn stamp_modern(&self, method: &str, result: &mut Value) {
        let Some(object) = result.as_object_mut() else { return };
        if !self.has(Mutant::NoResultType) {
            object.entry("resultType").or_insert_with(|| json!("complete"));
        }
        if CACHEABLE.contains(&method) && !self.has(Mutant::NoCacheHints) {
            object.insert("ttlMs".into(), json!(0));
            object.insert("cacheScope".into(), json!("private"));
        }
        if !self.has(Mutant::NoServerInfo) {
            object.insert("_meta".into(), json!({ SERVER_INFO_KEY: server_info() }));
        }
    }
}

/// The capabilities of either era: the same keys, listChanged and subscribe on only in the modern era (served by
/// `subscriptions/listen`). With the fixtures, logging and completions too, and subscribe in both eras.
fn capabilities(modern: bool, fixtures: bool) -> Value {
    let mut capabilities = json!({
        "prompts": { "listChanged": modern },
        "resources": { "listChanged": modern, "subscribe": modern || fixtures },
        "tools": { "listChanged": modern },
    });
    if fixtures {
        capabilities["logging"] = json!({});
        capabilities["completions"] = json!({});
    }
    capabilities
}

/// The `serverInfo` of either era.
fn server_info() -> Value {
    json!({ "name": SERVER_NAME, "version": SERVER_VERSION })
}
