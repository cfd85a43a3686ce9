//! The TypeScript SDK `@modelcontextprotocol/sdk` 1.32.2: the deviations it has itself
//! (`tests/servers/node/ts-v1.baseline` and `tests/servers/node/README.md` in the mcp-wirefuzz repository hold each
//! one's probe). It serves the handshake era only.

use super::{Deviation, Sdk, Shape};

/// The deviations the two TypeScript packages share (the same zod schemas and stdio `ReadBuffer`).
pub const SHARED: [Deviation; 7] = [
    Deviation {
        rule: "JSONRPC-RESPONSE-MISSING",
        shape: Shape::MetaNotObject,
        what: "a request whose params._meta is a string or null is dropped, never answered",
        reference: "https://github.com/modelcontextprotocol/typescript-sdk/issues/2247; JSON-RPC 2.0 §5 (a call MUST \
                    get a response)",
    },
    Deviation {
        rule: "JSONRPC-BIG-ID",
        shape: Shape::Any(&[Shape::Tag("big-id"), Shape::BigReplyId]),
        what: "an integer id beyond 2^53 is dropped unanswered (zod 4 safe integers), or, on zod 3 (the versions \
               before 1.23), answered under the id rounded through a double",
        reference: "RFC 8259 §6 (interoperable integers); JSON-RPC 2.0 §5",
    },
    Deviation {
        rule: "MCP-BATCH",
        shape: Shape::Tag("batch"),
        what: "a batch on a 2025-03-26 connection is dropped",
        reference: "2025-03-26 basic/index.mdx §Batching: implementations MUST support receiving batches",
    },
    Deviation {
        rule: "SERVER-CRASH",
        shape: Shape::ExitAfterLongLine(10 << 20),
        what: "a line over 10 MiB closes the transport and the process exits 0 mid-conversation (ReadBuffer \
               maxBufferSize)",
        reference: "basic/lifecycle.mdx §Shutdown (the client ends a stdio connection); JSON-RPC 2.0 §5",
    },
    Deviation {
        rule: "MCP-INITIALIZE-INVALID-PARAMS",
        shape: Shape::All(&[Shape::Method(&["initialize"]), Shape::ErrorCode(&[-32603])]),
        what: "initialize without valid params gets -32603 with a zod dump, not -32602",
        reference: "JSON-RPC 2.0 §5.1: invalid params are -32602 (SHOULD)",
    },
    Deviation {
        rule: "JSONRPC-EXTRA-MEMBER",
        shape: Shape::Tag("extra-field"),
        what: "a request with an extra top-level member is dropped silently (strict zod schema)",
        reference: "JSON-RPC 2.0 §5 (SHOULD answer); https://github.com/modelcontextprotocol/typescript-sdk/issues/2247",
    },
    Deviation {
        rule: "MCP-CURSOR-INVALID",
        shape: Shape::Method(&["tools/list", "prompts/list", "resources/list", "resources/templates/list"]),
        what: "a cursor never issued gets the first page",
        reference: "pagination.mdx §Error Handling: an invalid cursor SHOULD be -32602",
    },
];

/// `@modelcontextprotocol/sdk` 1.32.2 and its deviations.
pub const SDK: Sdk = Sdk {
    name: "ts-sdk",
    package: "@modelcontextprotocol/sdk",
    version: "1.32.2",
    aliases: &["typescript", "@modelcontextprotocol/sdk@1.32.2"],
    deviations: &[
        SHARED[0],
        SHARED[1],
        SHARED[2],
        SHARED[3],
        SHARED[4],
        SHARED[5],
        SHARED[6],
        Deviation {
            rule: "MCP-TOOL-INVALID-ARGS",
            shape: Shape::All(&[
                Shape::Method(&["tools/call"]),
                Shape::ArgumentsNotObject,
                Shape::ErrorCode(&[-32603]),
            ]),
            what: "tools/call whose arguments are not an object gets -32603 from the request schema's zod error",
            reference: "tools.mdx §Error Handling (malformed requests are protocol errors); JSON-RPC 2.0 §5.1 (SHOULD)",
        },
    ],
};
