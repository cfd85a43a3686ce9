//! The 2026-07-28 request envelope (`params._meta`) and the result stamps that go with it.

use super::era::Era;
use super::id::RequestId;
use serde_json::{Map, Value, json};

/// The member of `params` (and of a result) that holds protocol metadata.
pub const META: &str = "_meta";
/// Envelope key: the protocol version of this one request (required).
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// Envelope key: the client's capabilities for this one request (required, `{}` means none).
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of a request's progress token: the server may send `notifications/progress` carrying it while
/// the request is open (both eras).
pub const PROGRESS_TOKEN_KEY: &str = "progressToken";
/// Envelope key: the client's name and version (optional).
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// Envelope key: the lowest log level the client wants for this request (optional).
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// Result stamp: the server's name and version, on every modern result.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// Subscription streams: the listen request's id on every message of the stream.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// The two keys every modern request must carry, in the order error messages name them.
pub const REQUIRED_KEYS: [&str; 2] = [PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY];

/// The `_meta` object of a request's params, when params is an object holding an object there.
pub fn meta(params: Option<&Value>) -> Option<&Map<String, Value>> {
    params?.as_object()?.get(META)?.as_object()
}

/// True when a request opens (or belongs to) the modern era: it is not `initialize`, and its `params._meta` is an
/// object that holds the protocol-version key, whatever its value (the rule the Python SDK uses).
pub fn carries_modern_envelope(method: &str, params: Option<&Value>) -> bool {
    method != "initialize" && meta(params).is_some_and(|m| m.contains_key(PROTOCOL_VERSION_KEY))
}

/// The era a connection takes when this is its first request.
pub fn opening_era(method: &str, params: Option<&Value>) -> Era {
    if carries_modern_envelope(method, params) { Era::Modern } else { Era::Handshake }
}

/// The required keys an envelope lacks, in the order error messages name them.
pub fn missing_keys(meta: &Map<String, Value>) -> Vec<&'static str> {
    REQUIRED_KEYS.into_iter().filter(|k| !meta.contains_key(*k)).collect()
}

/// True when `meta` is a valid 2026-07-28 envelope: both required keys, a string version and an object of client
/// capabilities.
pub fn is_valid(meta: &Map<String, Value>) -> bool {
    meta.get(PROTOCOL_VERSION_KEY).is_some_and(Value::is_string)
        && meta.get(CLIENT_CAPABILITIES_KEY).is_some_and(Value::is_object)
}

/// A complete envelope for `version` with empty client capabilities.
pub fn envelope(version: &str) -> Value {
    json!({ PROTOCOL_VERSION_KEY: version, CLIENT_CAPABILITIES_KEY: {} })
}

/// The subscription a server line acknowledges: the `_meta` subscription id of a
/// `notifications/subscriptions/acknowledged` (a listen stream is open from then on), `None` for any other line.
/// The line is parsed whole (a server may escape any character of a name), so callers ask only while a listen
/// request is open.
pub fn acknowledged_subscription(line: &[u8]) -> Option<RequestId> {
    if !line.trim_ascii_start().starts_with(b"{") {
        return None;
    }
    let message: Value = serde_json::from_slice(line).ok()?;
    (message.get("method")?.as_str()? == crate::protocol::methods::ACKNOWLEDGED).then_some(())?;
    let id = message.get("params")?.get(META)?.get(SUBSCRIPTION_ID_KEY);
    crate::protocol::IdField::of(id).valid().cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn era_follows_the_version_key() {
        let enveloped = json!({ META: envelope("2026-07-28") });
        assert_eq!(opening_era("tools/list", Some(&enveloped)), Era::Modern);
        assert_eq!(opening_era("initialize", Some(&enveloped)), Era::Handshake);
        assert_eq!(opening_era("tools/list", None), Era::Handshake);
        let caps_only = json!({ META: { CLIENT_CAPABILITIES_KEY: {} } });
        assert_eq!(opening_era("tools/list", Some(&caps_only)), Era::Handshake);
        let null_version = json!({ META: { PROTOCOL_VERSION_KEY: null } });
        assert_eq!(opening_era("ping", Some(&null_version)), Era::Modern);
    }

    #[test]
    fn a_valid_envelope_has_a_string_version_and_object_capabilities() {
        let valid = |meta: Value| is_valid(meta.as_object().unwrap());
        assert!(valid(envelope("")));
        assert!(!valid(json!({ PROTOCOL_VERSION_KEY: 20260728, CLIENT_CAPABILITIES_KEY: {} })));
        assert!(!valid(json!({ PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: "x" })));
        assert!(!valid(json!({ PROTOCOL_VERSION_KEY: "2026-07-28" })));
    }

    #[test]
    fn missing_keys_are_named_in_order() {
        assert_eq!(missing_keys(&Map::new()), REQUIRED_KEYS.to_vec());
        let only_version = json!({ PROTOCOL_VERSION_KEY: "2026-07-28" });
        assert_eq!(missing_keys(only_version.as_object().unwrap()), vec![CLIENT_CAPABILITIES_KEY]);
    }
}
