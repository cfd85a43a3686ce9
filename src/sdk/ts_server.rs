//! The TypeScript server package `@modelcontextprotocol/server` 2.4.0 (`serveStdio`): the deviations it has itself
//! (`tests/servers/node/ts-v2.baseline` and `tests/servers/node/README.md` in the mcp-wirefuzz repository hold each
//! one's probe). Dual-era, pinned per process by the first message; its root cause R1: a claim-less notification
//! sent first (or after a `server/discover` probe) pins the legacy era.

use super::ts_sdk::SHARED;
use super::{Deviation, Sdk, Shape};

/// The reference of R1's deviations.
const R1: &str = "versioning.mdx: only initialize selects legacy semantics; a request carrying modern _meta is \
                  served under 2026-07-28";

/// `@modelcontextprotocol/server` 2.4.0 and its deviations.
pub const SDK: Sdk = Sdk {
    name: "ts-server",
    package: "@modelcontextprotocol/server",
    version: "2.4.0",
    aliases: &["@modelcontextprotocol/server@2.4.0"],
    deviations: &[
        SHARED[0],
        SHARED[1],
        SHARED[2],
        SHARED[3],
        SHARED[4],
        SHARED[5],
        SHARED[6],
        Deviation {
            rule: "MCP-DISCOVER-SHAPE",
            shape: Shape::NotificationFirst,
            what: "R1: after a notification sent first, an enveloped server/discover gets -32601",
            reference: "versioning.mdx: servers MUST implement server/discover",
        },
        Deviation {
            rule: "MCP-UNSUPPORTED-VERSION",
            shape: Shape::Any(&[Shape::NotificationFirst, Shape::AfterModernRequest]),
            what: "R1: after a notification sent first (R2: after any modern request but server/discover), a request \
                   at an unsupported version is served",
            reference: "versioning.mdx §Protocol Version Negotiation: an unsupported version MUST get -32022",
        },
        Deviation {
            rule: "MCP-MODERN-RESULT-TYPE",
            shape: Shape::NotificationFirst,
            what: "R1: discover, a notification, then an enveloped request is served as legacy (no resultType)",
            reference: R1,
        },
        Deviation {
            rule: "MCP-MODERN-SERVER-INFO",
            shape: Shape::NotificationFirst,
            what: "R1: the same legacy-shaped result has no _meta serverInfo",
            reference: "basic/index.mdx §Per-response protocol fields (SHOULD)",
        },
        Deviation {
            rule: "MCP-MODERN-REMOVED-METHOD",
            shape: Shape::NotificationFirst,
            what: "R1: after a notification sent first, an enveloped ping is served",
            reference: "2026-07-28 changelog: ping removed",
        },
        Deviation {
            rule: "MCP-CACHE-HINTS",
            shape: Shape::NotificationFirst,
            what: "R1: the same legacy-shaped result of a cacheable method has no ttlMs or cacheScope",
            reference: R1,
        },
        Deviation {
            rule: "MCP-VERSION-NOT-STRING",
            shape: Shape::NotificationFirst,
            what: "R1: after a notification sent first, a request whose envelope version is not a string gets -32601",
            reference: R1,
        },
        Deviation {
            rule: "MCP-ENVELOPE-MISSING-KEY",
            shape: Shape::NotificationFirst,
            what: "R1: after a notification sent first, a modern request lacking clientCapabilities gets -32601",
            reference: "basic/index.mdx: a request missing a required field MUST get -32602",
        },
    ],
};
