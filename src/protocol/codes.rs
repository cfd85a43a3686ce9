//! JSON-RPC 2.0 and MCP error codes.

/// Invalid JSON was received (JSON-RPC 2.0 §5.1); the reply's id is null.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid Request object (JSON-RPC 2.0 §5.1).
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available (JSON-RPC 2.0 §5.1).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters; in MCP also a missing envelope key (JSON-RPC 2.0 §5.1, MCP 2026-07-28).
pub const INVALID_PARAMS: i64 = -32602;
/// Internal JSON-RPC error (JSON-RPC 2.0 §5.1).
pub const INTERNAL_ERROR: i64 = -32603;
/// The SDK's "Connection closed", written for open requests at stdin EOF (legacy band).
pub const CONNECTION_CLOSED: i64 = -32000;
/// Resource not found, 2025-11-25 and earlier only.
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// An HTTP header does not match the request body (2026-07-28, HTTP only).
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a client capability it did not declare (2026-07-28).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// The envelope's protocol version is not one the server supports (2026-07-28).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The conventional name of a code, or `None` for a code this vocabulary does not know.
pub fn name(code: i64) -> Option<&'static str> {
    Some(match code {
        PARSE_ERROR => "Parse error",
        INVALID_REQUEST => "Invalid Request",
        METHOD_NOT_FOUND => "Method not found",
        INVALID_PARAMS => "Invalid params",
        INTERNAL_ERROR => "Internal error",
        CONNECTION_CLOSED => "Connection closed",
        RESOURCE_NOT_FOUND => "Resource not found",
        HEADER_MISMATCH => "Header mismatch",
        MISSING_REQUIRED_CLIENT_CAPABILITY => "Missing required client capability",
        UNSUPPORTED_PROTOCOL_VERSION => "Unsupported protocol version",
        _ => return None,
    })
}
