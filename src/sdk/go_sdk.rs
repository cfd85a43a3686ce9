//! The official Go SDK `github.com/modelcontextprotocol/go-sdk` 1.8.0: the deviations it has itself
//! (`tests/servers/node/k8s.baseline` and the case files under `tests/servers/node/k8s/cases/` in the mcp-wirefuzz
//! repository show them, on kubernetes-mcp-server 0.0.67, whose Go binary ships in an npm package). It serves both
//! eras.

use super::{Deviation, Sdk, Shape};

/// go-sdk 1.8.0 and its deviations.
pub const SDK: Sdk = Sdk {
    name: "go-sdk",
    package: "github.com/modelcontextprotocol/go-sdk",
    version: "1.8.0",
    aliases: &["go", "golang", "go-sdk@1.8.0"],
    deviations: &[
        Deviation {
            rule: "JSONRPC-ID-ECHO",
            shape: Shape::Tag("float-id"),
            what: "a request whose id is a number with a fraction (8.5) is answered under the id's integer part (8): \
                   ids are decoded into an int64",
            reference: "JSON-RPC 2.0 §5: the response id MUST be the same as the request's (MCP forbids such ids to \
                        the client: basic/index.mdx §Requests)",
        },
        Deviation {
            rule: "JSONRPC-BIG-ID",
            shape: Shape::Tag("big-id"),
            what: "an integer id beyond 2^53 is answered under the id rounded through a double, or, beyond 2^63, \
                   under -9223372036854775808",
            reference: "RFC 8259 §6 (interoperable integers); JSON-RPC 2.0 §5",
        },
        Deviation {
            rule: "SERVER-CRASH",
            shape: Shape::Any(&[
                Shape::Tag("not-json"),
                Shape::Tag("batch"),
                Shape::Tag("empty-batch"),
                Shape::Tag("trailing-data"),
                Shape::Tag("bare-null"),
                Shape::Tag("bare-number"),
                Shape::Tag("bare-string"),
            ]),
            what: "a line it cannot read (no JSON, a batch, trailing data, a bare value) ends the session, and a \
                   server that serves one session ends with it",
            reference: "JSON-RPC 2.0 §5.1 (-32700/-32600 answer such a line); basic/lifecycle.mdx §Shutdown (the \
                        client ends a stdio connection)",
        },
        Deviation {
            rule: "MCP-TOOL-INVALID-ARGS",
            shape: Shape::All(&[Shape::Method(&["tools/call"]), Shape::ErrorCode(&[0])]),
            what: "a tools/call whose arguments the tool's inputSchema refuses gets error code 0",
            reference: "tools.mdx §Error Handling: invalid arguments are -32602 or an isError result (SHOULD)",
        },
    ],
};
