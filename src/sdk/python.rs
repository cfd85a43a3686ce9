//! The Python SDK `mcp` 2.3.0: the deviations it has itself (`tests/servers/calc-python.baseline`,
//! `tests/servers/typed-python.baseline` and the case files under `tests/servers/python/` in the mcp-wirefuzz
//! repository show each one), and two of `mcp` 1.x that published servers still pinning it show (1.30.0: an
//! unknown resource's error code 0, the log message its exception handler sends for an unreadable line).

use super::{Deviation, Sdk, Shape};

/// `mcp` 2.3.0 and its deviations.
pub const SDK: Sdk = Sdk {
    name: "python",
    package: "mcp",
    version: "2.3.0",
    aliases: &["mcp@2.3.0", "fastmcp"],
    deviations: &[
        Deviation {
            rule: "JSONRPC-NULL-PARAMS",
            shape: Shape::ParamsNull,
            what: "a request with \"params\": null is served as if params were absent",
            reference: "JSON-RPC 2.0 §4.2: params, if present, MUST be structured",
        },
        Deviation {
            rule: "MCP-BATCH",
            shape: Shape::Tag("batch"),
            what: "a batch on a 2025-03-26 connection is dropped",
            reference: "2025-03-26 basic/index.mdx §Batching: implementations MUST support receiving batches",
        },
        Deviation {
            rule: "MCP-CURSOR-INVALID",
            shape: Shape::Method(&["tools/list", "prompts/list", "resources/list", "resources/templates/list"]),
            what: "a cursor never issued gets the first page",
            reference: "pagination.mdx §Error Handling: an invalid cursor SHOULD be -32602",
        },
        Deviation {
            rule: "MCP-PROMPT-UNKNOWN",
            shape: Shape::All(&[Shape::Method(&["prompts/get"]), Shape::ErrorCode(&[0, -32603])]),
            what: "an unknown prompt gets error code 0, the SDK's catch-all (-32603 on a modern request)",
            reference: "prompts.mdx §Error Handling: an unknown prompt SHOULD be -32602",
        },
        Deviation {
            rule: "SERVER-UNDECLARED-NOTIFICATION",
            shape: Shape::All(&[Shape::Tag("server-notification"), Shape::Tag("message")]),
            what: "a tool's Context.info/log, or (mcp 1.x) the SDK's own handler of a line it cannot read, sends \
                   notifications/message, but the server declares no logging capability",
            reference: "server/utilities/logging.mdx §Capabilities: servers that emit log messages MUST declare logging",
        },
        Deviation {
            rule: "MCP-RESOURCE-UNKNOWN",
            shape: Shape::All(&[Shape::Method(&["resources/read"]), Shape::ErrorCode(&[0])]),
            what: "an unknown resource gets error code 0, the SDK's catch-all (mcp 1.x FastMCP raises ResourceError)",
            reference: "server/resources.mdx §Error Handling: resource not found SHOULD be -32002 (-32602 in 2026-07-28)",
        },
        Deviation {
            rule: "MCP-PROMPT-ARGUMENTS",
            shape: Shape::All(&[Shape::Method(&["prompts/get"]), Shape::ErrorCode(&[0, -32603])]),
            what: "a missing required prompt argument gets error code 0",
            reference: "prompts.mdx §Error Handling: missing required arguments SHOULD be -32602",
        },
    ],
};
