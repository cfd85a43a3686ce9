//! The stable ids of the rules (one constant per rule): the vocabulary findings, baselines, profiles and the
//! built-in servers' planted bugs share. What each rule says, its level and its source are in the oracle's catalogue
//! (`oracle::rules::RULES`). Imports nothing of the crate.

/// Every line the server writes is one complete JSON object in valid UTF-8.
pub const FRAMING: &str = "JSONRPC-FRAMING";
/// `jsonrpc` is exactly `"2.0"`.
pub const VERSION: &str = "JSONRPC-VERSION";
/// A server line that is not a response is a well-formed request or notification.
pub const MESSAGE_SHAPE: &str = "JSONRPC-MESSAGE-SHAPE";
/// Exactly one of result/error; results are objects.
pub const RESPONSE_SHAPE: &str = "JSONRPC-RESPONSE-SHAPE";
/// Integer code, string message.
pub const ERROR_SHAPE: &str = "JSONRPC-ERROR-SHAPE";
/// A response id equals an open request's id, type and digits included.
pub const ID_ECHO: &str = "JSONRPC-ID-ECHO";
/// Integer ids beyond ±(2^53 − 1) are answered under their exact id or refused, not dropped or rounded.
pub const BIG_ID: &str = "JSONRPC-BIG-ID";
/// A request with members beyond the four JSON-RPC defines is answered.
pub const EXTRA_MEMBER: &str = "JSONRPC-EXTRA-MEMBER";
/// At most one response per request.
pub const DUPLICATE_RESPONSE: &str = "JSONRPC-DUPLICATE-RESPONSE";
/// Every valid request is answered.
pub const RESPONSE_MISSING: &str = "JSONRPC-RESPONSE-MISSING";
/// No reply to a notification.
pub const NOTIFICATION_REPLY: &str = "JSONRPC-NOTIFICATION-REPLY";
/// A null or absent response id only on an error for a line whose id could not be read.
pub const NULL_ID: &str = "JSONRPC-NULL-ID";
/// On a 2025-03-26 connection a batch of requests is accepted and each request answered.
pub const BATCH: &str = "MCP-BATCH";
/// Malformed input is never executed.
pub const MALFORMED_SERVED: &str = "JSONRPC-MALFORMED-SERVED";
/// Malformed input gets a -32700/-32600 reply (strict JSON-RPC).
pub const MALFORMED_REPLY: &str = "JSONRPC-MALFORMED-REPLY";
/// A request with `"params": null` is refused, not served as if params were absent.
pub const NULL_PARAMS: &str = "JSONRPC-NULL-PARAMS";
/// The server did not exit early.
pub const SERVER_CRASH: &str = "SERVER-CRASH";
/// The server did not stop answering.
pub const SERVER_HANG: &str = "SERVER-HANG";
/// A request is not left unanswered because its handler panicked or raised.
pub const HANDLER_PANIC: &str = "SERVER-HANDLER-PANIC";
/// A request's handler returns.
pub const HANDLER_HANG: &str = "SERVER-HANDLER-HANG";
/// A tool's handler does not crash: no isError result that is an SDK's answer to an unexpected exception.
pub const HANDLER_CRASH: &str = "SERVER-HANDLER-CRASH";
/// A server's memory and open descriptors do not keep growing with the calls of one session.
pub const RESOURCE_GROWTH: &str = "SERVER-RESOURCE-GROWTH";
/// A server that owes no reply exits when its input closes.
pub const SERVER_SHUTDOWN: &str = "SERVER-SHUTDOWN";
/// No server-to-client requests on a modern connection.
pub const UNSOLICITED_REQUEST: &str = "SERVER-UNSOLICITED-REQUEST";
/// The server's own sampling, elicitation and roots requests stay within what the client declared.
pub const UNDECLARED_CAPABILITY: &str = "SERVER-UNDECLARED-CAPABILITY";
/// An `input_required` result carries input requests or a request state, and asks only what the request declared.
pub const INPUT_REQUIRED: &str = "MCP-INPUT-REQUIRED";
/// The server's log messages, list changes and resource updates stay within what its initialize result declared.
pub const UNDECLARED_NOTIFICATION: &str = "SERVER-UNDECLARED-NOTIFICATION";
/// Progress notifications name an active request's token and go up.
pub const PROGRESS: &str = "MCP-PROGRESS";
/// A `subscriptions/listen` stream starts with its acknowledgement and carries only what its filter asked for.
pub const LISTEN: &str = "MCP-LISTEN";
/// In 2026-07-28, log messages only for an open request that asked for them.
pub const LOG_REQUESTED: &str = "MCP-LOG-REQUESTED";
/// Log messages are at or above the level the client asked for.
pub const LOG_LEVEL: &str = "MCP-LOG-LEVEL";
/// One era per connection.
pub const ERA_SINGLE: &str = "MCP-ERA-SINGLE";
/// Modern results carry a valid `resultType`.
pub const MODERN_RESULT_TYPE: &str = "MCP-MODERN-RESULT-TYPE";
/// Handshake results carry no `resultType`.
pub const HANDSHAKE_NO_RESULT_TYPE: &str = "MCP-HANDSHAKE-NO-RESULT-TYPE";
/// Modern results carry the serverInfo stamp.
pub const MODERN_SERVER_INFO: &str = "MCP-MODERN-SERVER-INFO";
/// A missing envelope key gets -32602.
pub const ENVELOPE_MISSING_KEY: &str = "MCP-ENVELOPE-MISSING-KEY";
/// The -32602 for missing envelope keys names them (profile mcp-python-2.3.0).
pub const ENVELOPE_KEY_NAMED: &str = "MCP-ENVELOPE-KEY-NAMED";
/// An unsupported version gets a well-formed -32022.
pub const UNSUPPORTED_VERSION: &str = "MCP-UNSUPPORTED-VERSION";
/// A protocol version that is not a string gets -32602.
pub const VERSION_NOT_STRING: &str = "MCP-VERSION-NOT-STRING";
/// Methods 2026-07-28 removed are refused.
pub const MODERN_REMOVED_METHOD: &str = "MCP-MODERN-REMOVED-METHOD";
/// Cacheable modern results carry `ttlMs` and `cacheScope`.
pub const CACHE_HINTS: &str = "MCP-CACHE-HINTS";
/// `server/discover` answers with a well-formed result.
pub const DISCOVER_SHAPE: &str = "MCP-DISCOVER-SHAPE";
/// `initialize` answers with a well-formed result and a negotiated version.
pub const INITIALIZE_SHAPE: &str = "MCP-INITIALIZE-SHAPE";
/// An invalid `initialize` gets -32602.
pub const INITIALIZE_PARAMS: &str = "MCP-INITIALIZE-INVALID-PARAMS";
/// `ping` gets `{}`.
pub const PING: &str = "MCP-PING";
/// Advertised list methods are not -32601.
pub const ADVERTISED_METHODS: &str = "MCP-ADVERTISED-METHODS";
/// Every HTTP request gets a well-formed HTTP/1.1 response.
pub const HTTP_RESPONSE: &str = "HTTP-RESPONSE";
/// A request from a foreign `Origin` is not served.
pub const HTTP_ORIGIN: &str = "HTTP-ORIGIN";
/// A notification POST that is accepted gets 202 and no body.
pub const HTTP_NOTIFICATION_202: &str = "HTTP-NOTIFICATION-202";
/// A request POST answered with success is `application/json` or `text/event-stream`.
pub const HTTP_CONTENT_TYPE: &str = "HTTP-CONTENT-TYPE";
/// Modern errors -32020/-32022 come with 400, -32601 with 404.
pub const HTTP_ERROR_STATUS: &str = "HTTP-STATUS-FOR-ERROR";
/// A modern request whose headers do not match its body gets 400 and -32020.
pub const HTTP_HEADER_MISMATCH: &str = "HTTP-HEADER-MISMATCH";
/// A GET to the endpoint gets an SSE stream or 405.
pub const HTTP_GET: &str = "HTTP-GET";
/// A session request refused for lacking its session gets 400.
pub const HTTP_SESSION_REQUIRED: &str = "HTTP-SESSION-REQUIRED";
/// A session ended by DELETE gets 404.
pub const HTTP_SESSION_DELETED: &str = "HTTP-SESSION-DELETED";
/// An invalid `MCP-Protocol-Version` on a legacy session gets 400.
pub const HTTP_PROTOCOL_VERSION_HEADER: &str = "HTTP-PROTOCOL-VERSION-HEADER";
/// A modern-only server answers GET and DELETE with 405.
pub const HTTP_MODERN_GET_DELETE_405: &str = "HTTP-MODERN-GET-DELETE-405";
/// A modern-only server neither mints nor echoes `Mcp-Session-Id`.
pub const HTTP_MODERN_NO_SESSION: &str = "HTTP-MODERN-NO-SESSION";
/// SSE event ids are unique across a session's streams.
pub const HTTP_SSE_EVENT_ID: &str = "HTTP-SSE-EVENT-ID";
/// A GET stream of the client's own carries no JSON-RPC response.
pub const HTTP_GET_STREAM_RESPONSE: &str = "HTTP-GET-STREAM-RESPONSE";
/// A message goes on one stream only, never broadcast to several.
pub const HTTP_SSE_BROADCAST: &str = "HTTP-SSE-BROADCAST";

/// A listed tool called with arguments its inputSchema accepts gets a result.
pub const TOOL_VALID_ARGS: &str = "MCP-TOOL-VALID-ARGS";
/// Arguments the inputSchema refuses get an isError result or -32602.
pub const TOOL_INVALID_ARGS: &str = "MCP-TOOL-INVALID-ARGS";
/// structuredContent conforms to the declared outputSchema.
pub const TOOL_OUTPUT_SCHEMA: &str = "MCP-TOOL-OUTPUT-SCHEMA";
/// Content items are well-formed.
pub const CONTENT_SHAPE: &str = "MCP-CONTENT-SHAPE";
/// An unknown tool gets an error, not a successful result.
pub const TOOL_UNKNOWN: &str = "MCP-TOOL-UNKNOWN";
/// An unknown prompt gets -32602.
pub const PROMPT_UNKNOWN: &str = "MCP-PROMPT-UNKNOWN";
/// A prompt missing a required argument gets -32602.
pub const PROMPT_ARGUMENTS: &str = "MCP-PROMPT-ARGUMENTS";
/// An unknown resource gets resource-not-found.
pub const RESOURCE_UNKNOWN: &str = "MCP-RESOURCE-UNKNOWN";
/// A listed resource can be read.
pub const RESOURCE_READABLE: &str = "MCP-RESOURCE-READABLE";
/// An invalid cursor gets -32602.
pub const CURSOR_INVALID: &str = "MCP-CURSOR-INVALID";
/// List results have the shapes schema.ts gives them.
pub const LIST_SHAPE: &str = "MCP-LIST-SHAPE";
/// Names in a list are unique.
pub const LIST_DUPLICATE_NAME: &str = "MCP-LIST-DUPLICATE-NAME";
/// A tool's `x-mcp-header` annotations meet their constraints (2026-07-28).
pub const TOOL_PARAM_HEADER: &str = "MCP-TOOL-PARAM-HEADER";
/// A -32021 error lists the capabilities the request lacked.
pub const MISSING_CAPABILITY: &str = "MCP-MISSING-CAPABILITY";
/// A completion result has the shape schema.ts gives it.
pub const COMPLETION_SHAPE: &str = "MCP-COMPLETION-SHAPE";
/// Modern servers emit no reserved error code.
pub const ERROR_CODE_RESERVED: &str = "MCP-ERROR-CODE-RESERVED";
