//! Planted bugs: variants of the reference server, each breaking one invariant the way real servers do. They
//! prove the oracle and the generators can find what they claim to find: every mutant names the rule that must
//! catch it.

use crate::protocol::client::{ANSWERS_KEY, Answers};
use crate::protocol::envelope::{
    self, CLIENT_CAPABILITIES_KEY, LOG_LEVEL_KEY, META, PROGRESS_TOKEN_KEY, PROTOCOL_VERSION_KEY,
};
use crate::protocol::era::{LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION};
use crate::protocol::methods::{CANCELLED, COMPLETE, LISTEN};
use serde_json::{Value, json};
use std::fmt;

/// One planted bug in the reference server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary)]
pub enum Mutant {
    /// Integer ids are echoed as strings (`1` becomes `"1"`).
    IdAsString,
    /// Integer ids pass through a double, as in a JavaScript server: beyond 2^53 they come back rounded.
    BigIdRounded,
    /// Error replies carry `"id": null` instead of the request's id.
    NullIdOnError,
    /// Notifications are answered with an empty result and a null id.
    NotificationReply,
    /// `tools/call` is answered twice.
    DuplicateReply,
    /// Results carry `"jsonrpc": 2.0` (a number) instead of the string `"2.0"`.
    JsonrpcNumber,
    /// Error replies also carry `"result": null`.
    ResultAndError,
    /// Error codes are written as floats (`-32601.0`).
    FloatErrorCode,
    /// A log line is written to stdout before every `tools/call` reply.
    LogOnStdout,
    /// The process exits when it receives a batch array.
    CrashOnBatch,
    /// The server stops answering after a line nested more than 100 levels deep.
    HangOnDeepNesting,
    /// After a line that is not JSON, the server stays up but never answers a request again.
    WedgedAfterParseError,
    /// A request whose `jsonrpc` is missing or not "2.0" is executed instead of refused.
    ServesInvalidRequest,
    /// A handshake connection serves requests that carry the modern envelope.
    HandshakeAcceptsModern,
    /// A modern connection accepts `initialize` and answers it as a handshake would.
    ModernAcceptsInitialize,
    /// The -32602 for a missing envelope key always names the protocol-version key, whichever key is missing.
    WrongMissingKey,
    /// Any protocol-version string is served; -32022 is never sent.
    AcceptsAnyVersion,
    /// -32022 is sent without its `data` (`supported`, `requested`).
    UnsupportedVersionNoData,
    /// Modern results lack `resultType`.
    NoResultType,
    /// Handshake results carry `resultType: "complete"`.
    HandshakeResultType,
    /// Modern results lack the serverInfo `_meta` stamp.
    NoServerInfo,
    /// Cacheable modern results lack `ttlMs` and `cacheScope`.
    NoCacheHints,
    /// A `tools/call` first asks the client (for a sampling in the handshake era, for a confirmation through
    /// `input_required` in 2026-07-28, when the client declared the capability) and crashes the process on an
    /// answer that breaks its schema.
    CrashesOnMalformedAnswer,
    /// As [`Mutant::CrashesOnMalformedAnswer`], but the call that got an answer of the wrong shape is never answered.
    HangsOnMalformedAnswer,
    /// A modern `tools/list` annotates `add`'s `a` with an `x-mcp-header` that is no HTTP token.
    BadParamHeader,
    /// An enveloped `ping` is answered on a modern connection although 2026-07-28 removed it.
    ModernServesPing,
    /// `initialize` and `server/discover` advertise prompts, but `prompts/list` answers -32601 (no handler).
    AdvertisedButMissing,
    /// A notification sent before any request pins the handshake era (the R1 bug of `@modelcontextprotocol/server`
    /// 2.4.0), whose dispatcher has no `server/discover`: an enveloped `server/discover` then gets -32601.
    NotificationSelectsEra,
    /// `format_user` answers -32603 to valid arguments that give `user.age`.
    ValidArgsInternalError,
    /// `format_user` answers -32603, not an `isError` result, to arguments its schema refuses.
    InvalidArgsInternalError,
    /// `format_user`'s `structuredContent.length` is a string, against its `outputSchema`.
    OutputSchemaMismatch,
    /// `logo`'s image content carries data that is not base64.
    BadImageData,
    /// A `tools/call` of an unknown tool gets a successful result.
    UnknownToolSucceeds,
    /// `prompts/get` of an unknown prompt gets -32603.
    UnknownPromptInternalError,
    /// `prompts/get greeting` without its required argument is served.
    MissingPromptArgumentServed,
    /// `resources/read` of an unknown URI gets a result with no contents.
    UnknownResourceServed,
    /// The listed `calc://logo` cannot be read (resource not found).
    ListedResourceUnreadable,
    /// A list with a cursor the server never issued is answered with the first page.
    CursorIgnored,
    /// `stats`'s `inputSchema` is the string "object", not a schema object.
    InputSchemaNotObject,
    /// `tools/list` lists `add` twice.
    DuplicateToolName,
    /// An unknown resource gets -32002 in the modern era too, where 2026-07-28 reserves it.
    ReservedErrorCode,
    /// On a handshake connection a `tools/call` first sends `elicitation/create`, whatever the client declared.
    ElicitsUndeclared,
    /// On a modern connection a `tools/call` answers `input_required` with an elicitation request, whatever the
    /// request's clientCapabilities declared.
    InputRequiredUndeclared,
    /// A `tools/call` that asked for progress gets its progress notification after its result.
    ProgressAfterResult,
    /// On a handshake connection a `tools/call` logs a `notifications/message`, though `initialize` declared no
    /// `logging`.
    LogsUndeclared,
    /// On a modern connection a `tools/call` logs a `notifications/message` though the request asked for no log
    /// level.
    LogsUnrequested,
    /// A `subscriptions/listen` stream gets `notifications/tools/list_changed` right after its acknowledgement,
    /// whatever its filter asked for.
    ListenUnfiltered,
    /// `completion/complete` is served, with 101 values.
    CompletionOverflow,
    /// On a modern connection a `tools/call` that asked for log messages gets a `debug` one, whatever level it asked
    /// for.
    LogsBelowLevel,
    /// On a modern connection `logo` is refused with -32021 that names no required capability.
    MissingCapabilityNoData,
}

impl Mutant {
    /// Every mutant, in declaration order.
    pub const ALL: [Mutant; 50] = [
        Mutant::IdAsString,
        Mutant::BigIdRounded,
        Mutant::NullIdOnError,
        Mutant::NotificationReply,
        Mutant::DuplicateReply,
        Mutant::JsonrpcNumber,
        Mutant::ResultAndError,
        Mutant::FloatErrorCode,
        Mutant::LogOnStdout,
        Mutant::CrashOnBatch,
        Mutant::HangOnDeepNesting,
        Mutant::WedgedAfterParseError,
        Mutant::ServesInvalidRequest,
        Mutant::HandshakeAcceptsModern,
        Mutant::ModernAcceptsInitialize,
        Mutant::WrongMissingKey,
        Mutant::AcceptsAnyVersion,
        Mutant::UnsupportedVersionNoData,
        Mutant::NoResultType,
        Mutant::HandshakeResultType,
        Mutant::NoServerInfo,
        Mutant::NoCacheHints,
        Mutant::ModernServesPing,
        Mutant::AdvertisedButMissing,
        Mutant::NotificationSelectsEra,
        Mutant::ValidArgsInternalError,
        Mutant::InvalidArgsInternalError,
        Mutant::OutputSchemaMismatch,
        Mutant::BadImageData,
        Mutant::UnknownToolSucceeds,
        Mutant::UnknownPromptInternalError,
        Mutant::MissingPromptArgumentServed,
        Mutant::UnknownResourceServed,
        Mutant::ListedResourceUnreadable,
        Mutant::CursorIgnored,
        Mutant::InputSchemaNotObject,
        Mutant::DuplicateToolName,
        Mutant::ReservedErrorCode,
        Mutant::ElicitsUndeclared,
        Mutant::InputRequiredUndeclared,
        Mutant::ProgressAfterResult,
        Mutant::LogsUndeclared,
        Mutant::LogsUnrequested,
        Mutant::ListenUnfiltered,
        Mutant::CompletionOverflow,
        Mutant::LogsBelowLevel,
        Mutant::MissingCapabilityNoData,
        Mutant::CrashesOnMalformedAnswer,
        Mutant::HangsOnMalformedAnswer,
        Mutant::BadParamHeader,
    ];

    /// The mutant's kebab-case name, as `--mutant` takes it.
    pub fn name(self) -> &'static str {
        self.facts().0
    }

    /// The rule id of the invariant this mutant breaks (the oracle must report it).
    pub fn expected_rule(self) -> &'static str {
        self.facts().1
    }

    /// The rule profile the bug's rule needs (`fuzz --profile`), if its rule is off by default.
    pub fn profile(self) -> Option<&'static str> {
        match self {
            Mutant::HandshakeAcceptsModern | Mutant::ModernAcceptsInitialize | Mutant::WrongMissingKey => {
                Some("mcp-python-2.3.0")
            }
            _ => None,
        }
    }

    /// A one-line description of the bug.
    pub fn description(self) -> &'static str {
        self.facts().2
    }

    /// Looks a mutant up by [`Mutant::name`].
    pub fn from_name(name: &str) -> Option<Mutant> {
        Mutant::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The shortest conversation that exposes the bug: one line per frame, each a fresh connection's input.
    pub fn trigger(self) -> Vec<Vec<u8>> {
        let modern =
            |id: Value, method: &str| request(id, method, json!({ META: envelope::envelope(LATEST_MODERN_VERSION) }));
        let list = || modern(json!(1), "tools/list");
        let only_version =
            || request(json!(1), "tools/list", json!({ META: { PROTOCOL_VERSION_KEY: LATEST_MODERN_VERSION } }));
        let future = || {
            let meta = json!({ PROTOCOL_VERSION_KEY: "2030-01-01", CLIENT_CAPABILITIES_KEY: {} });
            request(json!(1), "tools/list", json!({ META: meta }))
        };
        let with = |method: &str, mut params: Value| {
            params[META] = envelope::envelope(LATEST_MODERN_VERSION);
            request(json!(1), method, params)
        };
        let tool = |name: &str, arguments: Value| with("tools/call", json!({ "name": name, "arguments": arguments }));
        let call = || tool("add", json!({ "a": 2, "b": 3 }));
        let lines: Vec<Value> = match self {
            Mutant::IdAsString
            | Mutant::JsonrpcNumber
            | Mutant::NoResultType
            | Mutant::NoServerInfo
            | Mutant::NoCacheHints => {
                vec![list()]
            }
            // 2^53 + 1: within i64, so the id is a plain one (an id beyond i64 is one parsers may refuse), but a
            // double cannot hold it.
            Mutant::BigIdRounded => vec![modern(json!(9_007_199_254_740_993_u64), "tools/list")],
            Mutant::NullIdOnError | Mutant::ResultAndError | Mutant::FloatErrorCode | Mutant::WrongMissingKey => {
                vec![only_version()]
            }
            Mutant::NotificationReply => vec![json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })],
            Mutant::DuplicateReply | Mutant::LogOnStdout | Mutant::InputRequiredUndeclared => vec![call()],
            Mutant::CrashOnBatch => vec![json!([])],
            Mutant::HangOnDeepNesting => {
                // A request after it is owed a reply the hung server never gives.
                return vec![format!("{}{}", "[".repeat(150), "]".repeat(150)).into_bytes(), json_line(&list())];
            }
            Mutant::WedgedAfterParseError => return vec![b"{not json".to_vec(), json_line(&list())],
            Mutant::ServesInvalidRequest => vec![json!({ "jsonrpc": "1.0", "id": 1, "method": "ping" })],
            Mutant::HandshakeAcceptsModern => {
                vec![
                    initialize(json!(1)),
                    json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
                    modern(json!(2), "tools/list"),
                ]
            }
            Mutant::ModernAcceptsInitialize => vec![list(), initialize(json!(2))],
            Mutant::AcceptsAnyVersion | Mutant::UnsupportedVersionNoData => vec![future()],
            Mutant::HandshakeResultType => vec![initialize(json!(1))],
            Mutant::ModernServesPing => vec![modern(json!(1), "ping")],
            Mutant::AdvertisedButMissing => vec![modern(json!(1), "server/discover"), modern(json!(2), "prompts/list")],
            Mutant::ValidArgsInternalError => {
                vec![tool("format_user", json!({ "user": { "name": "Ada", "age": 36 } }))]
            }
            Mutant::InvalidArgsInternalError => vec![tool("format_user", json!({ "user": { "name": "" } }))],
            Mutant::OutputSchemaMismatch => vec![tool("format_user", json!({ "user": { "name": "Ada" } }))],
            Mutant::BadImageData | Mutant::MissingCapabilityNoData => vec![tool("logo", json!({}))],
            Mutant::UnknownToolSucceeds => vec![tool("wirefuzz-no-such-tool", json!({}))],
            Mutant::UnknownPromptInternalError => {
                vec![with("prompts/get", json!({ "name": crate::script::UNKNOWN_PROMPT, "arguments": {} }))]
            }
            Mutant::MissingPromptArgumentServed => {
                vec![with("prompts/get", json!({ "name": "greeting", "arguments": {} }))]
            }
            Mutant::UnknownResourceServed | Mutant::ReservedErrorCode => {
                vec![with("resources/read", json!({ "uri": crate::script::UNKNOWN_URI }))]
            }
            Mutant::ListedResourceUnreadable => vec![with("resources/read", json!({ "uri": "calc://logo" }))],
            Mutant::CursorIgnored => vec![with("tools/list", json!({ "cursor": crate::script::BAD_CURSOR }))],
            Mutant::InputSchemaNotObject | Mutant::DuplicateToolName | Mutant::BadParamHeader => vec![list()],
            Mutant::LogsUnrequested => {
                let mut params = json!({ "name": "add", "arguments": { "a": 2, "b": 3 } });
                params[META] = envelope::envelope(LATEST_MODERN_VERSION);
                vec![request(json!(1), "tools/call", params)]
            }
            Mutant::LogsBelowLevel => {
                let mut params = json!({ "name": "add", "arguments": { "a": 2, "b": 3 } });
                params[META] = envelope::envelope(LATEST_MODERN_VERSION);
                params[META][LOG_LEVEL_KEY] = json!("warning");
                vec![request(json!(1), "tools/call", params)]
            }
            Mutant::ListenUnfiltered => vec![with(LISTEN, json!({ "notifications": {} }))],
            Mutant::CompletionOverflow => {
                let reference = json!({ "type": "ref/prompt", "name": "greeting" });
                vec![with(COMPLETE, json!({ "ref": reference, "argument": { "name": "name", "value": "A" } }))]
            }
            Mutant::CrashesOnMalformedAnswer | Mutant::HangsOnMalformedAnswer => {
                let mut params = json!({ "name": "add", "arguments": { "a": 2, "b": 3 } });
                params[META] = envelope::envelope(LATEST_MODERN_VERSION);
                params[META][CLIENT_CAPABILITIES_KEY] = json!({ "elicitation": {} });
                params[META][ANSWERS_KEY] = json!(Answers::MistypedInput.name());
                vec![request(json!(1), "tools/call", params)]
            }
            Mutant::ProgressAfterResult => {
                let mut params = json!({ "name": "add", "arguments": { "a": 2, "b": 3 } });
                params[META] = envelope::envelope(LATEST_MODERN_VERSION);
                params[META][PROGRESS_TOKEN_KEY] = json!("p1");
                vec![request(json!(1), "tools/call", params)]
            }
            Mutant::ElicitsUndeclared | Mutant::LogsUndeclared => vec![
                initialize(json!(1)),
                json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
                request(json!(2), "tools/call", json!({ "name": "add", "arguments": { "a": 2, "b": 3 } })),
            ],
            Mutant::NotificationSelectsEra => {
                let cancel = json!({ "requestId": 99 });
                vec![
                    json!({ "jsonrpc": "2.0", "method": CANCELLED, "params": cancel }),
                    modern(json!(1), "server/discover"),
                ]
            }
        };
        lines.iter().map(json_line).collect()
    }

    fn facts(self) -> (&'static str, &'static str, &'static str) {
        use crate::rule_ids as id;
        match self {
            Mutant::IdAsString => ("id-as-string", id::ID_ECHO, "integer ids are echoed as strings"),
            Mutant::BigIdRounded => {
                ("big-id-rounded", id::BIG_ID, "integer ids beyond 2^53 come back rounded through a double")
            }
            Mutant::NullIdOnError => ("null-id-on-error", id::NULL_ID, "error replies carry a null id"),
            Mutant::NotificationReply => {
                ("notification-reply", id::NOTIFICATION_REPLY, "notifications get an empty result")
            }
            Mutant::DuplicateReply => ("duplicate-reply", id::DUPLICATE_RESPONSE, "tools/call is answered twice"),
            Mutant::JsonrpcNumber => ("jsonrpc-number", id::VERSION, "results carry jsonrpc 2.0 as a number"),
            Mutant::ResultAndError => ("result-and-error", id::RESPONSE_SHAPE, "error replies also carry result: null"),
            Mutant::FloatErrorCode => ("float-error-code", id::ERROR_SHAPE, "error codes are written as floats"),
            Mutant::LogOnStdout => {
                ("log-on-stdout", id::FRAMING, "a log line goes to stdout before every tools/call reply")
            }
            Mutant::CrashOnBatch => ("crash-on-batch", id::SERVER_CRASH, "the process exits on a batch array"),
            Mutant::HangOnDeepNesting => {
                ("hang-on-deep-nesting", id::SERVER_HANG, "the server stops answering after deeply nested input")
            }
            Mutant::WedgedAfterParseError => (
                "wedged-after-parse-error",
                id::RESPONSE_MISSING,
                "after a line that is not JSON, requests are never answered again",
            ),
            Mutant::ServesInvalidRequest => (
                "serves-invalid-request",
                id::MALFORMED_SERVED,
                "requests whose jsonrpc is missing or not \"2.0\" are executed",
            ),
            Mutant::HandshakeAcceptsModern => {
                ("handshake-accepts-modern", id::ERA_SINGLE, "a handshake connection serves enveloped requests")
            }
            Mutant::ModernAcceptsInitialize => {
                ("modern-accepts-initialize", id::ERA_SINGLE, "a modern connection accepts initialize")
            }
            Mutant::WrongMissingKey => (
                "wrong-missing-key",
                id::ENVELOPE_KEY_NAMED,
                "the -32602 for a missing envelope key always names protocolVersion",
            ),
            Mutant::AcceptsAnyVersion => {
                ("accepts-any-version", id::UNSUPPORTED_VERSION, "any protocol-version string is served")
            }
            Mutant::UnsupportedVersionNoData => {
                ("unsupported-version-no-data", id::UNSUPPORTED_VERSION, "-32022 is sent without data")
            }
            Mutant::NoResultType => ("no-result-type", id::MODERN_RESULT_TYPE, "modern results lack resultType"),
            Mutant::HandshakeResultType => {
                ("handshake-result-type", id::HANDSHAKE_NO_RESULT_TYPE, "handshake results carry resultType")
            }
            Mutant::NoServerInfo => {
                ("no-server-info", id::MODERN_SERVER_INFO, "modern results lack the serverInfo stamp")
            }
            Mutant::NoCacheHints => {
                ("no-cache-hints", id::CACHE_HINTS, "cacheable modern results lack ttlMs and cacheScope")
            }
            Mutant::ModernServesPing => {
                ("modern-serves-ping", id::MODERN_REMOVED_METHOD, "an enveloped ping is answered in the modern era")
            }
            Mutant::AdvertisedButMissing => (
                "advertised-but-missing",
                id::ADVERTISED_METHODS,
                "initialize and server/discover advertise prompts but prompts/list answers -32601",
            ),
            Mutant::NotificationSelectsEra => (
                "notification-selects-era",
                id::DISCOVER_SHAPE,
                "a notification sent first pins the handshake era, so an enveloped server/discover gets -32601",
            ),
            Mutant::ValidArgsInternalError => (
                "valid-args-internal-error",
                id::TOOL_VALID_ARGS,
                "format_user answers -32603 to valid arguments with an age",
            ),
            Mutant::InvalidArgsInternalError => (
                "invalid-args-internal-error",
                id::TOOL_INVALID_ARGS,
                "format_user answers -32603 to invalid arguments",
            ),
            Mutant::OutputSchemaMismatch => (
                "output-schema-mismatch",
                id::TOOL_OUTPUT_SCHEMA,
                "format_user's structuredContent breaks its outputSchema",
            ),
            Mutant::BadImageData => ("bad-image-data", id::CONTENT_SHAPE, "logo's image data is not base64"),
            Mutant::UnknownToolSucceeds => {
                ("unknown-tool-succeeds", id::TOOL_UNKNOWN, "an unknown tool gets a successful result")
            }
            Mutant::UnknownPromptInternalError => {
                ("unknown-prompt-internal-error", id::PROMPT_UNKNOWN, "an unknown prompt gets -32603")
            }
            Mutant::MissingPromptArgumentServed => (
                "missing-prompt-argument-served",
                id::PROMPT_ARGUMENTS,
                "a prompt missing a required argument is served",
            ),
            Mutant::UnknownResourceServed => {
                ("unknown-resource-served", id::RESOURCE_UNKNOWN, "an unknown resource URI gets an empty result")
            }
            Mutant::ListedResourceUnreadable => {
                ("listed-resource-unreadable", id::RESOURCE_READABLE, "a listed resource cannot be read")
            }
            Mutant::CursorIgnored => ("cursor-ignored", id::CURSOR_INVALID, "an invalid cursor gets the first page"),
            Mutant::InputSchemaNotObject => {
                ("input-schema-not-object", id::LIST_SHAPE, "a tool's inputSchema is not a JSON Schema object")
            }
            Mutant::DuplicateToolName => ("duplicate-tool-name", id::LIST_DUPLICATE_NAME, "tools/list lists add twice"),
            Mutant::ReservedErrorCode => (
                "reserved-error-code",
                id::ERROR_CODE_RESERVED,
                "-32002 for an unknown resource on a modern connection",
            ),
            Mutant::CrashesOnMalformedAnswer => (
                "crashes-on-malformed-answer",
                id::SERVER_CRASH,
                "a tools/call that asked the client crashes the process on an answer that breaks its schema",
            ),
            Mutant::BadParamHeader => (
                "bad-param-header",
                id::TOOL_PARAM_HEADER,
                "a modern tools/list annotates add's a with an x-mcp-header that is no HTTP token",
            ),
            Mutant::HangsOnMalformedAnswer => (
                "hangs-on-malformed-answer",
                id::HANDLER_HANG,
                "a tools/call that asked the client never answers when the client's answer breaks its schema",
            ),
            Mutant::ElicitsUndeclared => (
                "elicits-undeclared",
                id::UNDECLARED_CAPABILITY,
                "a handshake tools/call sends elicitation/create to a client that did not declare elicitation",
            ),
            Mutant::InputRequiredUndeclared => (
                "input-required-undeclared",
                id::INPUT_REQUIRED,
                "a modern tools/call answers input_required with an elicitation the request did not declare",
            ),
            Mutant::ProgressAfterResult => (
                "progress-after-result",
                id::PROGRESS,
                "a tools/call that asked for progress gets its progress notification after its result",
            ),
            Mutant::LogsUndeclared => (
                "logs-undeclared",
                id::UNDECLARED_NOTIFICATION,
                "a handshake tools/call logs a notifications/message though initialize declared no logging",
            ),
            Mutant::LogsUnrequested => (
                "logs-unrequested",
                id::LOG_REQUESTED,
                "a modern tools/call logs a notifications/message though the request asked for no log level",
            ),
            Mutant::ListenUnfiltered => (
                "listen-unfiltered",
                id::LISTEN,
                "a listen stream gets notifications/tools/list_changed whatever its filter asked for",
            ),
            Mutant::CompletionOverflow => (
                "completion-overflow",
                id::COMPLETION_SHAPE,
                "completion/complete is answered with 101 values, more than the 100 a result may hold",
            ),
            Mutant::LogsBelowLevel => (
                "logs-below-level",
                id::LOG_LEVEL,
                "a modern tools/call that asked for log messages gets a debug one, whatever level it asked for",
            ),
            Mutant::MissingCapabilityNoData => (
                "missing-capability-no-data",
                id::MISSING_CAPABILITY,
                "a modern call of logo is refused with -32021 that names no required capability",
            ),
        }
    }
}

impl fmt::Display for Mutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn initialize(id: Value) -> Value {
    let params = json!({
        "protocolVersion": LATEST_HANDSHAKE_VERSION,
        "capabilities": {},
        "clientInfo": { "name": "mcp-wirefuzz", "version": env!("CARGO_PKG_VERSION") },
    });
    request(id, "initialize", params)
}

fn json_line(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_round_trip() {
        let names: HashSet<_> = Mutant::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(names.len(), Mutant::ALL.len());
        for mutant in Mutant::ALL {
            assert_eq!(Mutant::from_name(mutant.name()), Some(mutant));
        }
        assert_eq!(Mutant::from_name("nope"), None);
    }

    #[test]
    fn every_trigger_makes_its_mutant_differ_from_the_clean_server() {
        use crate::server::builtin::reference::{Calc, Planted};
        use crate::server::run_in_process;
        use crate::transcript::Input;
        for mutant in Mutant::ALL {
            let inputs: Vec<Input> = mutant.trigger().into_iter().map(Input::Line).collect();
            assert!(inputs.len() <= 3, "{mutant}: a trigger is at most 3 frames");
            let clean = run_in_process(&Calc, &inputs);
            let planted = run_in_process(&Planted(mutant), &inputs);
            assert_ne!(clean, planted, "{mutant}: the trigger does not expose the bug");
        }
    }
}
