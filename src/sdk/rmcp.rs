//! rmcp 3.11.0: the deviations it has itself (`tests/servers/rmcp-calc.baseline` and
//! `tests/servers/rmcp-calc/README.md` in the mcp-wirefuzz repository hold each one's probe), and the policy for a
//! server written with it.

use super::{Deviation, Sdk, Shape};
use crate::model::{Eras, ServerModel};
use crate::oracle::Policy;
use crate::protocol::Era;

/// The list methods, whose cursor rmcp's default handlers ignore.
const LISTS: &[&str] = &["tools/list", "prompts/list", "resources/list", "resources/templates/list"];

/// rmcp 3.11.0 and its deviations.
pub const SDK: Sdk = Sdk {
    name: "rmcp",
    package: "rmcp",
    version: "3.11.0",
    aliases: &["rust", "rmcp@3.11.0"],
    deviations: &[
        Deviation {
            rule: "SERVER-CRASH",
            shape: Shape::ExitBeforeLifecycle("ExpectedInitialize"),
            what: "a notification, a response or any line but a request before initialize ends the service \
                   (ExpectedInitializeRequest, exit 1)",
            reference: "JSON-RPC 2.0 §4.1 (a notification needs no answer); cancellation.mdx (a cancel for an \
                        unknown request SHOULD be ignored); rmcp service/server.rs serve_server_with_ct_inner",
        },
        Deviation {
            rule: "MCP-PING",
            shape: Shape::All(&[Shape::Method(&["ping"]), Shape::Reinitialized]),
            what: "after a second initialize (or an initialize after a modern request) ping gets -32601 or -32602",
            reference: "2025-11-25 basic/utilities/ping.mdx: the receiver MUST respond promptly with an empty response",
        },
        Deviation {
            rule: "JSONRPC-NOTIFICATION-REPLY",
            shape: Shape::IdlessError(-32600),
            what: "a notification with invalid params (a _meta that is not an object) gets an id-less -32600",
            reference: "JSON-RPC 2.0 §4.1: the server MUST NOT reply to a notification",
        },
        Deviation {
            rule: "MCP-BATCH",
            shape: Shape::Tag("batch"),
            what: "a batch on a 2025-03-26 connection is refused with an id-less -32600",
            reference: "2025-03-26 basic/index.mdx §Batching: implementations MUST support receiving batches",
        },
        Deviation {
            rule: "MCP-UNSUPPORTED-VERSION",
            shape: Shape::All(&[Shape::Method(&["ping"]), Shape::Enveloped]),
            what: "an enveloped ping as the first request is served at any version, \"\" included",
            reference: "versioning.mdx §Protocol Version Negotiation: an unsupported version MUST get -32022",
        },
        Deviation {
            rule: "MCP-MODERN-SERVER-INFO",
            shape: Shape::NoServerInfo,
            what: "modern results other than server/discover carry no _meta serverInfo",
            reference: "basic/index.mdx §Per-response protocol fields (SHOULD)",
        },
        Deviation {
            rule: "MCP-MODERN-REMOVED-METHOD",
            shape: Shape::All(&[Shape::Method(&["ping"]), Shape::Enveloped]),
            what: "an enveloped ping is served when it comes first (-32601 later)",
            reference: "2026-07-28 changelog: ping removed",
        },
        Deviation {
            rule: "MCP-HANDSHAKE-NO-RESULT-TYPE",
            shape: Shape::Reinitialized,
            what: "after a second initialize, handshake-era results carry resultType and ttlMs",
            reference: "lifecycle.mdx: both parties MUST respect the negotiated protocol version",
        },
        Deviation {
            rule: "JSONRPC-NULL-ID",
            shape: Shape::IdlessError(-32600),
            what: "a request whose params are invalid (a _meta that is not an object) gets an id-less -32600",
            reference: "JSON-RPC 2.0 §5: the response id MUST be the request's, null only when it cannot be read",
        },
        Deviation {
            rule: "JSONRPC-NULL-PARAMS",
            shape: Shape::ParamsNull,
            what: "a request with \"params\": null is served as if params were absent",
            reference: "JSON-RPC 2.0 §4.2: params, if present, MUST be structured",
        },
        Deviation {
            rule: "JSONRPC-RESPONSE-MISSING",
            shape: Shape::Any(&[Shape::MetaNotObject, Shape::ParamsNotObject]),
            what: "a request whose params._meta is not an object (or whose params are an array) gets only an \
                   id-less -32600, no response the client can match",
            reference: "JSON-RPC 2.0 §5: a call MUST get a response with its id",
        },
        Deviation {
            rule: "MCP-CURSOR-INVALID",
            shape: Shape::Method(LISTS),
            what: "a cursor never issued gets the first page",
            reference: "pagination.mdx §Error Handling: an invalid cursor SHOULD be -32602",
        },
        Deviation {
            rule: "MCP-TOOL-INVALID-ARGS",
            shape: Shape::All(&[
                Shape::Method(&["tools/call"]),
                Shape::ArgumentsNotObject,
                Shape::ErrorCode(&[-32601]),
            ]),
            what: "tools/call whose arguments are not an object gets -32601 \"tools/call\"",
            reference: "tools.mdx §Error Handling (-32602 or an isError result); JSON-RPC 2.0 §5.1 (SHOULD)",
        },
        Deviation {
            rule: "MCP-TOOL-VALID-ARGS",
            shape: Shape::All(&[
                Shape::Method(&["tools/call"]),
                Shape::ErrorCode(&[-32602]),
                Shape::ErrorMessage("request _meta is missing"),
            ]),
            what: "after an enveloped request (even one answered -32601) a later initialize is answered but the \
                   connection stays modern: a plain tools/call is refused for its _meta before any handler runs",
            reference: "lifecycle.mdx: both parties MUST respect the negotiated protocol version (the root of \
                        MCP-HANDSHAKE-NO-RESULT-TYPE after a second initialize)",
        },
    ],
};

/// The policy for an rmcp server: the default rules, the server model of an rmcp server (both eras, the
/// [`VERSIONS`] it names, the handshake ones each echoed by its `initialize`), and rmcp as its SDK. The
/// [`crate::harness`] entry points take a finding that matches one of rmcp's own deviations ([`SDK`]) for rmcp's, not
/// yours, and do not fail on it; the same rule broken another way still fails (a tool that never answers is not
/// rmcp's `_meta` refusal), and so does any panic of your handler.
///
/// ```
/// let policy = mcp_wirefuzz::sdk::rmcp::policy();
/// assert!(policy.enabled("MCP-BATCH") && policy.sdk() == Some("rmcp"));
/// ```
pub fn policy() -> Policy {
    let named = || VERSIONS.iter().map(|v| v.to_string());
    let accepted = named().filter(|v| Era::of_version(v) == Some(Era::Handshake)).collect();
    let model = ServerModel { versions: named().collect(), accepted, ..ServerModel::stated(Eras::Dual) };
    Policy::default().with_model(model).with_sdk(SDK.name)
}

/// The protocol versions rmcp 3.11.0 supports (`ProtocolVersion::KNOWN_VERSIONS`: what its `server/discover` and
/// -32022 name), each served statelessly when a request's `_meta` names it.
pub const VERSIONS: [&str; 5] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];
