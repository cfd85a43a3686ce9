//! Method names, and which era defines which.

use super::era::Era;

/// `initialize` (handshake era only).
pub const INITIALIZE: &str = "initialize";
/// `notifications/initialized` (handshake era only).
pub const INITIALIZED: &str = "notifications/initialized";
/// `notifications/cancelled` (both eras).
pub const CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress` (both eras).
pub const PROGRESS: &str = "notifications/progress";
/// `ping` (handshake era only).
pub const PING: &str = "ping";
/// `server/discover` (modern era only).
pub const DISCOVER: &str = "server/discover";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `resources/templates/list`.
pub const TEMPLATES_LIST: &str = "resources/templates/list";

/// `sampling/createMessage`: a server asks the client for an LLM completion (handshake era; an input request of
/// `input_required` in 2026-07-28).
pub const SAMPLING_CREATE: &str = "sampling/createMessage";
/// `elicitation/create`: a server asks the client's user for input.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `roots/list`: a server asks for the client's roots.
pub const ROOTS_LIST: &str = "roots/list";

/// The server-to-client requests each gated by a client capability of the same name, with that capability.
pub const GATED_SERVER_REQUESTS: [(&str, &str); 3] =
    [(SAMPLING_CREATE, "sampling"), (ELICITATION_CREATE, "elicitation"), (ROOTS_LIST, "roots")];

/// Client requests defined in the handshake era (2025-11-25).
pub const HANDSHAKE_REQUESTS: &[&str] = &[
    INITIALIZE,
    PING,
    TOOLS_LIST,
    TOOLS_CALL,
    PROMPTS_LIST,
    PROMPTS_GET,
    RESOURCES_LIST,
    RESOURCES_READ,
    TEMPLATES_LIST,
    SUBSCRIBE,
    UNSUBSCRIBE,
    SET_LEVEL,
    COMPLETE,
];

/// `subscriptions/listen` (modern era only): opens a stream of the notifications the client subscribes to.
pub const LISTEN: &str = "subscriptions/listen";
/// `notifications/subscriptions/acknowledged`: the first message of a listen stream.
pub const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// `completion/complete`.
pub const COMPLETE: &str = "completion/complete";
/// `logging/setLevel` (handshake era only).
pub const SET_LEVEL: &str = "logging/setLevel";
/// `resources/subscribe` (handshake era only).
pub const SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe` (handshake era only).
pub const UNSUBSCRIBE: &str = "resources/unsubscribe";

/// Client requests defined in the modern era (2026-07-28).
pub const MODERN_REQUESTS: &[&str] = &[
    DISCOVER,
    TOOLS_LIST,
    TOOLS_CALL,
    PROMPTS_LIST,
    PROMPTS_GET,
    RESOURCES_LIST,
    RESOURCES_READ,
    TEMPLATES_LIST,
    COMPLETE,
    LISTEN,
];

/// Handshake-era requests that 2026-07-28 removed.
pub const REMOVED_IN_MODERN: &[&str] = &[INITIALIZE, PING, SET_LEVEL, SUBSCRIBE, UNSUBSCRIBE];

/// Modern results that must carry the caching hints `ttlMs` and `cacheScope`.
pub const CACHEABLE: &[&str] = &[DISCOVER, TOOLS_LIST, PROMPTS_LIST, RESOURCES_LIST, TEMPLATES_LIST, RESOURCES_READ];

/// True when `era` defines `method` as a client request.
pub fn is_request_of(method: &str, era: Era) -> bool {
    match era {
        Era::Handshake => HANDSHAKE_REQUESTS.contains(&method),
        Era::Modern => MODERN_REQUESTS.contains(&method),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_methods_are_handshake_only() {
        for m in REMOVED_IN_MODERN {
            assert!(is_request_of(m, Era::Handshake), "{m}");
            assert!(!is_request_of(m, Era::Modern), "{m}");
        }
        assert!(is_request_of(DISCOVER, Era::Modern) && !is_request_of(DISCOVER, Era::Handshake));
        assert!(CACHEABLE.iter().all(|m| is_request_of(m, Era::Modern)));
    }
}
