//! The catalogue itself: each rule's statement, eras, level and source, in the order reports list them.

use super::*;

/// The catalogue, JSON-RPC layer first, then the MCP era model.
pub static RULES: &[Rule] = &[
    must(
        FRAMING,
        BOTH,
        "Every line the server writes is one JSON object in valid UTF-8: not a log line, not an array, not blank, \
         not truncated. On a connection that negotiated 2025-03-26 an array of responses (a batch reply) is a \
         line too, and its items are judged as lines.",
        "MCP basic/transports.mdx §stdio; shared/PROTOCOL-REFERENCE.md §7 I1",
    ),
    must(VERSION, BOTH, "`jsonrpc` is exactly \"2.0\" on every message the server writes.", "JSON-RPC 2.0 §4, §5"),
    must(
        MESSAGE_SHAPE,
        BOTH,
        "A server line with a `method` is a well-formed request or notification: string method, params an object \
         or array when present, id (when present) a string or integer.",
        "JSON-RPC 2.0 §4, §4.1",
    ),
    must(
        RESPONSE_SHAPE,
        BOTH,
        "A response has exactly one of `result` and `error`, and an MCP result is an object.",
        "JSON-RPC 2.0 §5; MCP basic/index.mdx §Responses",
    ),
    must(
        ERROR_SHAPE,
        BOTH,
        "`error` is an object whose `code` is an integer literal (no fraction, no exponent) and whose `message` is a \
         string.",
        "JSON-RPC 2.0 §5.1",
    ),
    must(
        ID_ECHO,
        BOTH,
        "A response id equals, as the same JSON type and value (big integers digit for digit), the id of a request \
         that was sent and is still open. Replies are matched by id whenever they come (a late reply is its \
         request's, never a later line's); an id-less -32700/-32600 never takes a valid request's place; integer \
         ids beyond ±(2^53 − 1) that come back rounded are JSONRPC-BIG-ID's; and a line that reuses an open id \
         (`1` and `1.0` included: the client's own fault) makes no finding.",
        "JSON-RPC 2.0 §5; MCP basic/index.mdx §Responses; shared/PROTOCOL-REFERENCE.md §7 I5, I6, I37",
    ),
    should(
        BIG_ID,
        BOTH,
        "A request whose integer id is beyond ±(2^53 − 1) is answered under its exact id, or refused with an \
         id-less -32700/-32600; not dropped, and not answered under the id rounded through a double.",
        "RFC 8259 §6 (interoperable integers are ±(2^53 − 1)); shared/PROTOCOL-REFERENCE.md §7 I5",
    ),
    should(
        EXTRA_MEMBER,
        BOTH,
        "A request with a member beyond jsonrpc, id, method and params is answered under its id (any result or \
         error), or refused with an id-less -32700/-32600; not dropped. JSON-RPC 2.0 defines the four members but \
         forbids no others, and a strict schema that drops such a request leaves the client waiting.",
        "JSON-RPC 2.0 §4, §5; shared/REAL-SERVERS.md (strict TS SDK schemas drop it: TRUE-SHOULD)",
    ),
    must(
        DUPLICATE_RESPONSE,
        BOTH,
        "A request gets at most one response. When the client reused an id that was still open (`1` and `1.0`, \
         `1000` and `1e+3` are the same id) each of \
         the lines may get one reply, in any order, and which reply went to which line is not judged (undefined \
         behaviour).",
        "JSON-RPC 2.0 §5; shared/PROTOCOL-REFERENCE.md §7 I7",
    ),
    must(
        RESPONSE_MISSING,
        BOTH,
        "Every valid request that was due (a sync point passed, or the harness closed the connection) gets its \
         response before the transcript ends. A reply that comes late (after its sync point) is its answer, not a \
         missing one; a request the client cancelled with notifications/cancelled while it \
         was open may go unanswered; integer ids beyond ±(2^53 − 1) fall under JSONRPC-BIG-ID. Lines parsers \
         legitimately differ on (whole-valued float ids, numbers beyond 300 digits or 1e309, duplicate keys, a \
         byte-order mark, lone surrogate escapes, bytes that are not UTF-8 inside a string) may go unanswered or \
         get any error. A server that hung without writing a single line is SERVER-HANG alone.",
        "JSON-RPC 2.0 §4; MCP basic/index.mdx §Requests; basic/utilities/cancellation.mdx; \
         shared/PROTOCOL-REFERENCE.md §7 I8, I29",
    ),
    must(
        NOTIFICATION_REPLY,
        BOTH,
        "The server never replies to a notification.",
        "JSON-RPC 2.0 §4.1; MCP basic/index.mdx §Notifications",
    ),
    must(
        NULL_ID,
        BOTH,
        "A response with a null or absent id is an error that answers a client line whose id could not be read: a \
         -32700 or -32600 may answer any pending malformed or ambiguous line (or one whose id is beyond 2^53), in any \
         order and however late; another code only a line with no readable id (its code is \
         JSONRPC-MALFORMED-REPLY's). It fires when no such line is left for it, and for a result.",
        "JSON-RPC 2.0 §5; MCP schema.ts JSONRPCErrorResponse",
    ),
    must(
        MALFORMED_SERVED,
        BOTH,
        "A malformed client line never gets a result: an invalid request is not executed (null params: see \
         JSONRPC-NULL-PARAMS). A line only a lenient reader parses (a byte-order mark, a lone \
         surrogate escape, bytes that are not UTF-8 inside a string; RFC 8259 §8.1, §8.2, §9) is ambiguous, not \
         malformed, and may be served.",
        "JSON-RPC 2.0 §5.1; shared/PROTOCOL-REFERENCE.md §7 I12",
    ),
    Rule {
        policy: true,
        enabled_by_default: false,
        ..should(
            MALFORMED_REPLY,
            BOTH,
            "Malformed input (not JSON, a batch, not an object, an invalid request object) gets a -32700 or -32600 \
             reply; blank lines need none. A non-empty batch on a connection that negotiated 2025-03-26 is not \
             malformed (see MCP-BATCH). Off by default: most SDKs stay silent.",
            "JSON-RPC 2.0 §5.1; shared/PROTOCOL-REFERENCE.md §8 A",
        )
    },
    Rule {
        policy: true,
        ..should(
            NULL_PARAMS,
            BOTH,
            "A request whose params is null is refused with an error, not executed as if params were absent. A \
             policy: the Python SDK and rmcp serve it.",
            "JSON-RPC 2.0 §4.2; MCP schema.ts (params is an object); shared/PROTOCOL-REFERENCE.md §8 S",
        )
    },
    should(
        SERVER_CRASH,
        BOTH,
        "The server does not exit before the client is done. A SHOULD: no spec line forbids a stdio server to end \
         the connection, and a client that broke the lifecycle (a notification \
         before initialize) may be dropped; the requests it leaves open are lost all the same, so a crash still \
         fails the run.",
        "shared/PROTOCOL.md invariant 6; MCP basic/transports.mdx §stdio (the server may close its output); \
         shared/REAL-SERVERS.md (graded SHOULD)",
    ),
    must(
        SERVER_HANG,
        BOTH,
        "The server does not stop answering: it fires when the server went silent while a request was still owed its \
         reply; a server that answered every request and only did not exit after its \
         input closed is SERVER-SHUTDOWN.",
        "shared/PROTOCOL.md invariants 2 and 6",
    ),
    must(
        HANDLER_PANIC,
        BOTH,
        "A request is not left unanswered because its handler panicked or raised: it fires on a tools/call, \
         prompts/get or resources/read that never got its reply (the harness may have cancelled it as slow) when \
         the server reported a failure after it (in-process: a panic in the task that ran the handler, caught with \
         its location and message; over stdio and HTTP: `panicked at` or `Traceback (most recent call last)` on its \
         stderr) that names it: its tool, prompt or URI, outside the frames of the SDK, its libraries and Python's \
         standard library, and no other unanswered request's; a Rust panic that names no request is the one such \
         request left unanswered, when there is exactly one. A report that names no request (the SDK's stdin reader \
         failing), names one only by its method (the SDK refusing a method it does not know: \
         JSONRPC-RESPONSE-MISSING's) or names several unanswered ones is not judged, nor a panic that left every \
         request answered. The finding names the method, the tool and its arguments, and the report.",
        "JSON-RPC 2.0 §4 (When a rpc call is made, the Server MUST reply with a Response, except for in the case of \
         Notifications); MCP basic/index.mdx §Responses; server/tools.mdx §Error Handling (a failing tool \
         reports isError: true)",
    ),
    must(
        HANDLER_HANG,
        BOTH,
        "The handler of a tools/call, prompts/get or resources/read returns: it fires on such a request (params \
         an object, `_meta` and `arguments` objects when present: one an SDK does not drop) that the client did \
         not cancel and that got no reply after the harness's long wait, and names the tool and its arguments. \
         In-process the wait is 10 minutes of the paused virtual clock at the end (milliseconds of real time). \
         Over stdio a tool call given up on as slow while the server answered later requests, once it outlasted \
         its tool's slowest answer 3 times, is asked again (same arguments, a harness id) and waited for as long \
         as a client waits (--hang-wait, 60 s: the TypeScript SDK client's default request timeout; each progress \
         notification for it restarts the wait, up to 3 times it); a fuzzing run waits once per hung call, on a \
         fresh server, and judges later conversations that reach the same call (tool and arguments) by that wait. \
         A slow handler that answers within the wait is not judged; a server that stopped answering altogether is \
         SERVER-HANG.",
        "JSON-RPC 2.0 §4 (the Server MUST reply with a Response); MCP basic/lifecycle.mdx §Timeouts (clients \
         SHOULD time requests out, MAY reset the clock on progress notifications and SHOULD always enforce a \
         maximum timeout: a safeguard against a handler that never returns, not a licence for one)",
    ),
    should(
        HANDLER_CRASH,
        BOTH,
        "A tool's handler does not crash: it fires on a tools/call result with isError true whose content is one \
         text item that is exactly the Python SDK's (`mcp` 2.x MCPServer) answer to an unexpected exception in the \
         tool, `Error executing tool NAME` for the tool called (followed by `: Error executing tool INNER` or `: Error \
         reading resource URI` when a tool or resource it called crashed), and names the tool, its arguments and, \
         when the server's stderr showed it, the traceback. It also fires on the TypeScript SDK's (`McpServer`) \
         isError text for a result that breaks the tool's own outputSchema (`MCP error -32602: Output validation \
         error: ...`) and on a JavaScript engine's message for a programming error the SDK turned into one (`Cannot \
         read properties of undefined (reading 'x')`, `a.b is not a function`, ...). A deliberate ToolError \
         (`Error executing tool NAME: message`) or thrown error, the SDK's refusal of arguments its schema rejects \
         and an unknown tool are not judged. A SHOULD: \
         the request is answered as the spec asks, so no protocol rule is broken; the author's code raised where it \
         should have returned a result or a ToolError.",
        "MCP 2025-11-25 and 2026-07-28 server/tools.mdx §Error Handling (tool execution errors are reported in the \
         result with isError: true: the SDK kept the protocol; an exception the tool did not mean is the author's \
         bug, not a protocol violation, hence no MUST); mcp 2.3.0 server/mcpserver/exceptions.py \
         UnexpectedToolError, tools/base.py Tool.run (the exact text of a crash); @modelcontextprotocol/sdk 1.32.2 \
         server/mcp.ts createToolError, validateToolOutput",
    ),
    should(
        RESOURCE_GROWTH,
        BOTH,
        "A server's memory and open file descriptors do not keep growing with the calls of one session: over \
         stdio, in a long session (128 lines or more), the harness reads the resident memory and the open \
         descriptors of the processes that read the server's stdin from /proc at every 16th sync point; it fires \
         when, over the session after its first quarter, the descriptors grew by 64 or more or the memory by 64 MiB \
         or more, and each half of that span grew by a quarter of the bound (what a server takes once, a cache or a \
         pool, and a late jump are not judged). The finding names both counts and the growth per 100 lines. A \
         SHOULD: no protocol line speaks of resources; a leak that grows with every call ends a session a client \
         holds for hours.",
        "MCP 2025-11-25 and 2026-07-28 basic/lifecycle.mdx §Operation (a session lasts until the client ends it; \
         over stdio the client holds one process for the whole session: a server that leaks per call fails there \
         later, not at once); the server's own /proc/PID/status VmRSS and /proc/PID/fd",
    ),
    should(
        SERVER_SHUTDOWN,
        BOTH,
        "A server that owes no reply (every request answered, or cancelled by the client) closes its output and exits within the shutdown \
         budget once its input closes (timers or background tasks that keep it alive make the client wait, then \
         signal it).",
        "MCP 2025-11-25 basic/lifecycle.mdx §Shutdown (stdio: the client closes the input stream and waits for the \
         server to exit, then sends SIGTERM); shared/PROTOCOL-REFERENCE.md §7 I38 (SHOULD)",
    ),
    must(
        UNSOLICITED_REQUEST,
        MODERN,
        "On a modern connection the server never sends a request (a line with both `method` and `id`). A modern \
         connection is one a server that serves 2026-07-28 got a modern request on, before any \
         `initialize` or un-enveloped request.",
        "MCP 2026-07-28 basic/transports/stdio.mdx; shared/PROTOCOL-REFERENCE.md §7 I26",
    ),
    must(
        UNDECLARED_CAPABILITY,
        HANDSHAKE,
        "On a connection opened with `initialize`, the server sends `sampling/createMessage`, \
         `elicitation/create` and `roots/list` only if that `initialize` declared `sampling`, `elicitation` or \
         `roots`; a sampling request with `tools` or `toolChoice` only if it declared `sampling.tools`, and an \
         elicitation only in a mode it declared (an empty `elicitation` object declares the form mode).",
        "MCP 2025-11-25 basic/lifecycle.mdx §Operation (both parties MUST only use capabilities that were \
         successfully negotiated); client/sampling.mdx §Tools in Sampling (servers MUST NOT send tool-enabled \
         sampling requests to clients that have not declared sampling.tools); client/elicitation.mdx \
         §Capabilities (servers MUST NOT send elicitation requests with modes that are not supported by the \
         client); shared/PROTOCOL-REFERENCE.md §7 I26",
    ),
    must(
        INPUT_REQUIRED,
        MODERN,
        "A result with `resultType` \"input_required\" carries `inputRequests` (an object), `requestState` (a \
         string) or both; each input request is an object whose `method` is `elicitation/create`, \
         `sampling/createMessage` or `roots/list`, and only of a capability the request's \
         `_meta[\"io.modelcontextprotocol/clientCapabilities\"]` declared (`sampling.tools` for tool use in \
         sampling, the mode for an elicitation).",
        "MCP 2026-07-28 basic/patterns/mrtr.mdx §Server Requirements (servers MUST include at least one of \
         inputRequests or requestState; inputRequests values MUST be one of ElicitRequest, CreateMessageRequest, \
         ListRootsRequest; servers MUST NOT send an inputRequests that the client has not declared support for in \
         its capabilities); schema.ts InputRequiredResult; shared/PROTOCOL-REFERENCE.md §7 I17",
    ),
    must(
        UNDECLARED_NOTIFICATION,
        HANDSHAKE,
        "On a connection opened with `initialize`, after its result the server sends `notifications/message` only \
         if that result declared `logging`, `notifications/{tools,prompts,resources}/list_changed` only if it \
         declared that capability's `listChanged: true`, and `notifications/resources/updated` only with \
         `resources.subscribe: true`.",
        "MCP 2025-11-25 server/utilities/logging.mdx §Capabilities (servers that emit log message notifications \
         MUST declare the logging capability); basic/lifecycle.mdx §Operation (both parties MUST only use \
         capabilities that were successfully negotiated; listChanged and subscribe are the capabilities of those \
         notifications, §Capability Negotiation)",
    ),
    must(
        LISTEN,
        MODERN,
        "On a `subscriptions/listen` stream, the first message carrying the subscription's id (the listen \
         request's id) in `_meta[\"io.modelcontextprotocol/subscriptionId\"]` is \
         `notifications/subscriptions/acknowledged`; the types it honours are ones the filter asked for; every \
         later notification on it is of a type the filter asked for (`notifications/resources/updated` only for a \
         URI in `resourceSubscriptions`).",
        "MCP 2026-07-28 basic/patterns/subscriptions.mdx §Opening a Stream (the server MUST NOT send notification \
         types the client has not explicitly requested) and §Acknowledgment (the server MUST send \
         notifications/subscriptions/acknowledged as the first message carrying the subscription's ID, and MUST \
         NOT send any notification on the subscription before it; the acknowledgment reflects the subset the \
         server agreed to honor)",
    ),
    must(
        LOG_REQUESTED,
        MODERN,
        "In 2026-07-28 (a conversation that sent no `initialize`), a `notifications/message` is written while a \
         request that carried `io.modelcontextprotocol/logLevel` in its `_meta` is open: sent before it, its \
         response not yet written (or cancelled by the client).",
        "MCP 2026-07-28 server/utilities/logging.mdx §Per-request log level (the server MUST NOT emit \
         notifications/message for a request that does not include this field; when it is present the server MAY \
         send them on the response stream of that request, before the final response)",
    ),
    should(
        LOG_LEVEL,
        BOTH,
        "A `notifications/message` is at or above the level the client asked for: on a handshake connection, the \
         level of the last `logging/setLevel` that got a result, for a message written while only requests sent \
         after that result are open; in 2026-07-28, the lowest `io.modelcontextprotocol/logLevel` among the \
         requests open when it is written. A message with no open request to tie it to is not judged.",
        "MCP 2025-11-25 server/utilities/logging.mdx §Setting Log Level and schema.ts SetLevelRequestParams (the \
         server should send all logs at this level and higher); 2026-07-28 server/utilities/logging.mdx \
         §Per-request log level (the server MAY send notifications/message at or above the requested level)",
    ),
    must(
        PROGRESS,
        BOTH,
        "A `notifications/progress` carries the `_meta.progressToken` of a request sent before it and not yet \
         answered (a request the client cancelled, and a task-augmented one, whose token lives as long as its task, \
         aside), and its `progress` is above the last one for that token.",
        "MCP 2025-11-25 basic/utilities/progress.mdx §Progress Flow (the progress value MUST increase with each \
         notification) and §Behavior Requirements (progress notifications MUST only reference tokens that were \
         provided in an active request and are associated with an in-progress operation); \
         shared/PROTOCOL-REFERENCE.md §7 I28",
    ),
    Rule {
        policy: true,
        enabled_by_default: false,
        ..must(
            ERA_SINGLE,
            BOTH,
            "Profile mcp-python-2.3.0 (off by default): one era per connection, fixed by the first request that gets \
             a result: on a handshake connection an enveloped \
             request gets -32600; on a modern connection a valid `initialize` gets -32022 with a non-empty string \
             array data.supported (an invalid one may get -32602). Before the era is fixed, each request is judged \
             by its own era and may get the other era's refusal. Applies only to a server that serves both eras.",
            "mcp 2.3.0 runner.py; shared/PROTOCOL-REFERENCE.md §8 D (versioning.mdx lets a dual-era server serve \
             both eras on one process)",
        )
    },
    must(
        MODERN_RESULT_TYPE,
        MODERN,
        "Every modern result has a string `resultType`, \"complete\" or \"input_required\", and \"input_required\" \
         only for tools/call, prompts/get and resources/read.",
        "MCP 2026-07-28 basic/index.mdx §ResultType; patterns/mrtr.mdx",
    ),
    should(
        HANDSHAKE_NO_RESULT_TYPE,
        HANDSHAKE,
        "Results on a handshake connection carry no `resultType`.",
        "shared/PROTOCOL.md invariant 8; shared/PROTOCOL-REFERENCE.md §7 I16",
    ),
    should(
        MODERN_SERVER_INFO,
        MODERN,
        "Every modern result has `_meta[\"io.modelcontextprotocol/serverInfo\"]`, an object with string `name` and \
         `version`.",
        "MCP 2026-07-28 basic/index.mdx §Per-response protocol fields",
    ),
    must(
        ENVELOPE_MISSING_KEY,
        MODERN,
        "A modern request whose params._meta is missing, not an object, or lacks a required envelope key gets \
         -32602 (naming the missing keys in the message is MCP-ENVELOPE-KEY-NAMED). The rule applies only to a \
         server that serves 2026-07-28, on a connection no `initialize` or \
         un-enveloped request opened. A method 2026-07-28 removed (`ping`, `logging/setLevel`, \
         ...) in an incomplete envelope is not judged (a dual-era server may serve it as the handshake-era method). \
         When the envelope also names a version the server does not serve, -32022 is as right (MCP-UNSUPPORTED-VERSION \
         judges its data).",
        "MCP 2026-07-28 basic/index.mdx; versioning.mdx (an unsupported version MUST get -32022; the spec orders \
         the two checks nowhere); shared/PROTOCOL-REFERENCE.md §7 I19",
    ),
    Rule {
        policy: true,
        enabled_by_default: false,
        ..should(
            ENVELOPE_KEY_NAMED,
            MODERN,
            "Profile mcp-python-2.3.0 (off by default): the -32602 for a modern request lacking a required envelope \
             key names every missing key by its full name in its message (the spec mandates only the code).",
            "mcp 2.3.0 runner.py; shared/PROTOCOL-REFERENCE.md §7 I19",
        )
    },
    must(
        UNSUPPORTED_VERSION,
        MODERN,
        "An unsupported string protocolVersion gets -32022 with data.supported (non-empty strings, without it) and \
         data.requested equal to it. Supported: the policy's versions and any the server names in server/discover \
         supportedVersions or -32022 data.supported anywhere in the run (the model's probe included, \
         not only this conversation). A version that is not a string is MCP-VERSION-NOT-STRING's.",
        "MCP 2026-07-28 versioning.mdx; schema.ts UnsupportedProtocolVersionError",
    ),
    should(
        VERSION_NOT_STRING,
        MODERN,
        "A modern request whose protocolVersion is not a string (a number, null, an object) gets -32602 (schema.ts \
         types it as a string), neither -32022, whose data.requested must be a string, nor a result. A SHOULD: the \
         spec's MUST -32022 names versions the server does not implement, \
         and says nothing of values that are no version at all.",
        "MCP 2026-07-28 schema.ts RequestMetaObject, UnsupportedProtocolVersionError; JSON-RPC 2.0 §5.1; \
         shared/PROTOCOL-REFERENCE.md §7 I20",
    ),
    should(
        MODERN_REMOVED_METHOD,
        MODERN,
        "A fully enveloped request for a method 2026-07-28 removed (ping, logging/setLevel, resources/subscribe, \
         resources/unsubscribe) gets an error. A SHOULD: the changelog removes these \
         methods, but no MUST forbids answering one.",
        "MCP 2026-07-28 changelog.mdx; JSON-RPC 2.0 §5.1 (-32601)",
    ),
    must(
        CACHE_HINTS,
        MODERN,
        "Complete modern results of cacheable methods carry `ttlMs` (an integer >= 0) and `cacheScope` (\"public\" \
         or \"private\").",
        "MCP 2026-07-28 server/utilities/caching.mdx; schema.ts CacheableResult",
    ),
    must(
        DISCOVER_SHAPE,
        MODERN,
        "A fully enveloped server/discover is not -32601, and its result has `supportedVersions` (a non-empty \
         string array) and `capabilities` (an object). Judged only on a server that serves 2026-07-28 (a \
         -32601 is how a handshake-only server is recognised), before any `initialize` or un-enveloped request; \
         notifications never select an era.",
        "MCP 2026-07-28 server/discover.mdx",
    ),
    must(
        INITIALIZE_SHAPE,
        HANDSHAKE,
        "An initialize result has protocolVersion (string), capabilities (object) and serverInfo {name, version} \
         (strings). protocolVersion is a handshake version: the requested one when the server accepts it, \
         otherwise one the server accepts. Which versions it accepts is the server model's (probed: each handshake \
         version whose own initialize was echoed); when the model does not say, any handshake version may answer.",
        "MCP 2025-11-25 basic/lifecycle.mdx §Initialization, §Version Negotiation",
    ),
    should(
        INITIALIZE_PARAMS,
        HANDSHAKE,
        "An `initialize` whose params are missing, or whose protocolVersion (string), capabilities (object) or \
         clientInfo (object) is missing or mistyped, gets -32602 when it is refused, not -32603 or another code \
         (-32022 is accepted always; after a modern request, or when the initialize carries the modern envelope \
         itself, -32600 and -32601 too, since 2026-07-28 removed initialize; after a successful initialize any \
         error).",
        "JSON-RPC 2.0 §5.1; MCP 2025-11-25 basic/lifecycle.mdx; shared/PROTOCOL-REFERENCE.md §7 I30",
    ),
    must(
        PING,
        HANDSHAKE,
        "On a handshake connection a valid `ping` gets the result {} (an empty object), before or after initialize; \
         one whose `_meta` is no object may be refused with any error.",
        "MCP 2025-11-25 basic/utilities/ping.mdx",
    ),
    should(
        ADVERTISED_METHODS,
        BOTH,
        "When the server advertised tools, prompts or resources (initialize or server/discover capabilities), a \
         servable tools/list, prompts/list or resources/list never gets -32601.",
        "MCP schema.ts MethodNotFoundError; shared/PROTOCOL-REFERENCE.md §7 I34",
    ),
    must(
        BATCH,
        HANDSHAKE,
        "On a connection whose initialize asked for and got protocolVersion 2025-03-26, a JSON-RPC batch (an array \
         of messages) is accepted: each request in it gets its response, in an array reply or in separate lines; \
         silence, or one id-less -32600 refusing the batch, breaks it. A batch of notifications gets no reply; an \
         empty array may get -32600 or nothing; a batch carrying initialize (which 2025-03-26 forbids there) may be \
         refused. On every other version a batch is malformed input.",
        "MCP 2025-03-26 basic/index.mdx §Batching (MUST support receiving JSON-RPC batches); JSON-RPC 2.0 §6; \
         2025-06-18 changelog.mdx (batching removed)",
    ),
    must(
        HTTP_RESPONSE,
        BOTH,
        "HTTP transport: every request gets a well-formed HTTP/1.1 response: a status line and \
         headers httparse reads, a body framed by Content-Length, chunked coding or the connection's close, and \
         not cut short; a connection closed without a response breaks it too (a crash or a hang is reported as \
         such instead).",
        "RFC 9112 §2, §6; MCP 2025-11-25 basic/transports.mdx §Streamable HTTP",
    ),
    must(
        HTTP_SSE_EVENT_ID,
        HANDSHAKE,
        "HTTP transport, legacy era: the `id` of an SSE event appears once across all the streams of a session \
         (all the conversation's legacy streams, without sessions): a resumed stream carries only events after \
         its `Last-Event-ID`, never one already delivered, and no two streams share an id. (2026-07-28 streams \
         are not resumable, and their ids are not judged.)",
        "MCP 2025-11-25 basic/transports.mdx §Resumability and Redelivery (if present, the ID MUST be globally \
         unique across all streams within that session; the server MAY replay messages that would have been sent \
         after the last event ID and MUST NOT replay messages that would have been delivered on a different \
         stream)",
    ),
    must(
        HTTP_GET_STREAM_RESPONSE,
        HANDSHAKE,
        "HTTP transport, legacy era: the SSE stream a client opens with a GET of its own (not one it resumes \
         with Last-Event-ID) carries no JSON-RPC response: only the server's requests and notifications. The \
         harness reads such a stream beside the conversation's POSTs until the session ends.",
        "MCP 2025-11-25 basic/transports.mdx §Listening for Messages from the Server 4 (the server MUST NOT send \
         a JSON-RPC response on the stream unless resuming a stream associated with a previous client request)",
    ),
    must(
        HTTP_SSE_BROADCAST,
        HANDSHAKE,
        "HTTP transport, legacy era: a request of the server's that a GET stream of the client's carried is not \
         also carried, the same message, by another stream of the conversation (a POST's stream, or another GET \
         stream). Notifications are not judged: two equal ones may be two messages.",
        "MCP 2025-11-25 basic/transports.mdx §Multiple Connections 2 (the server MUST send each of its JSON-RPC \
         messages on only one of the connected streams; it MUST NOT broadcast the same message across multiple \
         streams); basic/index.mdx (a request id MUST NOT have been used before by the requestor in the session)",
    ),
    must(
        HTTP_ORIGIN,
        BOTH,
        "HTTP transport: a request whose Origin header names a foreign site (not localhost, \
         127.0.0.1, [::1] or the Host it was sent to) is not served: the server answers 403 (or another refusal), \
         never 2xx. A security finding: without this check a web page the user visits can reach a local MCP server \
         through DNS rebinding (a hostile name first resolving to the attacker, then to 127.0.0.1) and call its \
         tools with the user's privileges. Allow it (--allow HTTP-ORIGIN) only for a server deliberately \
         configured to accept that origin.",
        "MCP 2025-11-25 basic/transports.mdx §Security Warning (MUST validate Origin; MUST respond 403 when it is \
         present and invalid); 2026-07-28 basic/transports/streamable-http.mdx §Security & Endpoint",
    ),
    must(
        HTTP_NOTIFICATION_202,
        BOTH,
        "HTTP transport: a POST whose body is a notification (or, in the legacy era, a \
         response) that the server accepts (a 2xx) gets 202 Accepted and no body; a refusal is any error status.",
        "MCP 2026-07-28 basic/transports/streamable-http.mdx §Sending Messages 5; 2025-11-25 \
         basic/transports.mdx §Sending Messages to the Server 4",
    ),
    must(
        HTTP_CONTENT_TYPE,
        BOTH,
        "HTTP transport: a POST whose body is a request, answered with a 2xx, has Content-Type \
         application/json (one JSON object) or text/event-stream (an SSE stream); an HTML page is neither.",
        "MCP 2026-07-28 basic/transports/streamable-http.mdx §Sending Messages 6; 2025-11-25 \
         basic/transports.mdx §Sending Messages to the Server 5",
    ),
    must(
        HTTP_ERROR_STATUS,
        MODERN,
        "HTTP transport, 2026-07-28: a modern request refused with -32022 (unsupported version), -32020 (header \
         mismatch) or -32021 (a client capability missing) comes with status 400 Bad Request, one refused with \
         -32601 (method not found) with 404 Not Found. The other codes the SDKs map to 400 (-32700, -32600, \
         -32602) are not judged: -32602 is owed 400 only for a missing envelope key, which the status alone does \
         not show.",
        "MCP 2026-07-28 basic/transports/streamable-http.mdx §Protocol Version Header, §Server Validation; \
         basic/index.mdx §Per-request metadata (-32021: on HTTP, the response status MUST be 400 Bad Request)",
    ),
    must(
        HTTP_HEADER_MISMATCH,
        MODERN,
        "HTTP transport, 2026-07-28: a fully enveloped request whose Mcp-Method or Mcp-Name \
         (after Base64-sentinel decoding) is missing or differs from the body, or whose MCP-Protocol-Version \
         differs from the envelope's version, or a tools/call whose Mcp-Param-{name} headers differ from the \
         arguments the tool's valid x-mcp-header annotations mirror (a value missing, changed, or present without \
         one in the body; judged with a learned surface), is rejected with 400 and -32020 (-32022 also accepted when the \
         header names an unsupported version, -32700 when the server's parser refuses the body, and any 4xx when \
         the header names no version at all: the legacy transport's rules may judge it). A missing \
         MCP-Protocol-Version, or one naming a handshake version \
         on a server that serves the handshake era, may route the request to the legacy transport and is not \
         judged.",
        "MCP 2026-07-28 basic/transports/streamable-http.mdx §Protocol Version Header, §Standard Request Headers, \
         §Server Validation, §Server Behavior for Custom Headers (servers MUST validate that decoded header values \
         match the body and reject with 400 and -32020)",
    ),
    must(
        HTTP_GET,
        HANDSHAKE,
        "HTTP transport, legacy era: a GET to the MCP endpoint gets an SSE stream \
         (text/event-stream) or 405 Method Not Allowed; a 2xx with any other body (JSON, an HTML page) breaks it.",
        "MCP 2025-11-25 basic/transports.mdx §Listening for Messages from the Server 2",
    ),
    should(
        HTTP_SESSION_REQUIRED,
        HANDSHAKE,
        "HTTP transport, legacy era: when a server that assigned a session refuses a later \
         request for lacking its Mcp-Session-Id, it answers 400 Bad Request (serving it is legal: the server may \
         not require the session).",
        "MCP 2025-11-25 basic/transports.mdx §Session Management 2",
    ),
    must(
        HTTP_SESSION_DELETED,
        HANDSHAKE,
        "HTTP transport, legacy era: once a DELETE of the session got a 2xx, a request carrying \
         that Mcp-Session-Id gets 404 Not Found (403, 406, 413, 415 and 431 refusals for other reasons are \
         accepted, so are 405 to a GET on a server without a GET stream and 400 to a request whose \
         MCP-Protocol-Version names no version).",
        "MCP 2025-11-25 basic/transports.mdx §Session Management 3, 5",
    ),
    must(
        HTTP_PROTOCOL_VERSION_HEADER,
        HANDSHAKE,
        "HTTP transport, legacy era: on a session that negotiated 2025-06-18 or later, a request \
         whose MCP-Protocol-Version names no protocol version gets 400 Bad Request.",
        "MCP 2025-11-25 basic/transports.mdx §Protocol Version Header",
    ),
    should(
        TOOL_VALID_ARGS,
        BOTH,
        "On a connection of 2025-11-25 or later, a tools/call of a listed tool whose arguments validate against its \
         inputSchema (JSON Schema 2020-12 unless it names another draft) gets a result; an isError result is the \
         tool's own \
         business. A JSON-RPC error (-32602: the server refuses arguments its own schema accepts; -32603: a failure \
         that belongs in an isError result) breaks it. Crashes and hangs are SERVER-CRASH and SERVER-HANG. A \
         SHOULD: the spec lists server errors among protocol errors.",
        "MCP 2025-11-25 and 2026-07-28 server/tools.mdx §Error Handling (API failures and input validation errors \
         are tool execution errors, reported with isError: true; SEP-1303)",
    ),
    should(
        TOOL_INVALID_ARGS,
        BOTH,
        "A tools/call of a listed tool whose arguments break its inputSchema gets an isError result \
         or -32602, not another error code (-32603, -32600, 0). A successful result is not judged: servers may \
         coerce (\"1\" to 1) or ignore what they do not read.",
        "MCP 2025-11-25 server/tools.mdx §Error Handling (input validation errors are tool execution errors, \
         SEP-1303); 2026-07-28 server/tools.mdx §Error Handling (malformed requests are protocol errors, -32602)",
    ),
    must(
        TOOL_OUTPUT_SCHEMA,
        BOTH,
        "When a listed tool declares outputSchema, each of its results that is not an isError \
         result carries structuredContent that validates against the outputSchema.",
        "MCP 2025-11-25 and 2026-07-28 server/tools.mdx §Output Schema (Servers MUST provide structured results \
         that conform to this schema)",
    ),
    must(
        CONTENT_SHAPE,
        BOTH,
        "A tools/call result has a content array and a boolean isError when present; its content \
         items, prompts/get message contents and resources/read contents are well-formed: text has a string text; \
         image and audio a string mimeType and data in valid base64; resource_link a string uri and name; an \
         embedded resource a uri and a string text or base64 blob. Unknown content types are not judged.",
        "MCP schema.ts CallToolResult, ContentBlock, TextResourceContents, BlobResourceContents; server/resources.mdx \
         §Security Considerations (Binary data MUST be properly encoded)",
    ),
    should(
        TOOL_UNKNOWN,
        BOTH,
        "A tools/call of a tool the server does not list gets a JSON-RPC error (-32602 in the \
         spec's example) or an isError result (the Python SDK's MCPServer), never a successful result.",
        "MCP 2025-11-25 and 2026-07-28 server/tools.mdx §Error Handling (unknown tools are protocol errors; the \
         code is an example)",
    ),
    should(
        PROMPT_UNKNOWN,
        BOTH,
        "A prompts/get of a prompt the server does not list gets -32602 (a server that does not \
         serve prompts/get at all, -32601, is not judged).",
        "MCP 2025-11-25 server/prompts.mdx §Error Handling (Servers SHOULD return -32602 for an invalid prompt name)",
    ),
    should(
        PROMPT_ARGUMENTS,
        BOTH,
        "A prompts/get of a listed prompt without one of its required arguments gets -32602.",
        "MCP 2025-11-25 server/prompts.mdx §Error Handling (Servers SHOULD return -32602 for missing required \
         arguments)",
    ),
    should(
        RESOURCE_UNKNOWN,
        BOTH,
        "A resources/read of a URI under a scheme no server uses (and no template matches) gets an \
         error: -32002 or -32602 on a handshake connection, -32602 on a modern one (-32002 there is \
         MCP-ERROR-CODE-RESERVED); not a result.",
        "MCP 2025-11-25 server/resources.mdx §Error Handling (SHOULD: -32002); 2026-07-28 (SEP-2164: -32602); \
         shared/PROTOCOL-REFERENCE.md §8 G",
    ),
    should(
        RESOURCE_READABLE,
        BOTH,
        "A resources/read of a URI the server listed in resources/list gets a result with a \
         contents array, not an error.",
        "MCP server/resources.mdx §Listing Resources, §Reading Resources (a listed resource is one the client can \
         read; no MUST says so)",
    ),
    should(
        CURSOR_INVALID,
        BOTH,
        "A list request with a cursor the server never issued gets -32602 (a server that does not \
         serve the list at all, -32601, is not judged).",
        "MCP 2025-11-25 server/utilities/pagination.mdx §Error Handling (Invalid cursors SHOULD result in -32602)",
    ),
    must(
        LIST_SHAPE,
        BOTH,
        "A tools/list, prompts/list, resources/list or resources/templates/list result holds its \
         items array; every tool has a string name and an inputSchema that is a JSON Schema object (an \
         outputSchema too, when given); every prompt a string name (and arguments with string names); every \
         resource a string uri and name; every template a string uriTemplate and name; nextCursor, when present, \
         is a string.",
        "MCP schema.ts ListToolsResult, Tool, Prompt, Resource, ResourceTemplate, PaginatedResult; server/tools.mdx \
         §Tool (inputSchema MUST be a valid JSON Schema object, not null)",
    ),
    should(
        LIST_DUPLICATE_NAME,
        BOTH,
        "A list page names each tool, prompt, resource URI and template once.",
        "MCP 2025-11-25 and 2026-07-28 server/tools.mdx §Tool Names (Tool names SHOULD be unique within a server)",
    ),
    must(
        TOOL_PARAM_HEADER,
        MODERN,
        "In a 2026-07-28 tools/list result, each tool's `x-mcp-header` annotations name a non-empty HTTP \
         token, unique case-insensitively within its inputSchema, on a property whose type is string, integer or \
         boolean, reached from the schema's root through `properties` keys only (never under `items`, \
         composition, conditionals or `$ref`). A client on Streamable HTTP drops a tool that breaks one; an \
         untyped property is not judged.",
        "MCP 2026-07-28 server/tools.mdx §x-mcp-header (constraints on x-mcp-header values; clients MUST exclude \
         the invalid tool from the result of tools/list); basic/transports/streamable-http.mdx §Custom Headers from \
         Tool Parameters",
    ),
    must(
        MISSING_CAPABILITY,
        MODERN,
        "In 2026-07-28, a -32021 error carries `data.requiredCapabilities`, an object naming at least one \
         capability, and none that the request's `io.modelcontextprotocol/clientCapabilities` declared in full.",
        "MCP 2026-07-28 basic/index.mdx §Per-request metadata (if processing a request requires a capability the \
         client did not include, the server MUST return a MissingRequiredClientCapabilityError (-32021) whose \
         data.requiredCapabilities lists the missing capabilities); schema.ts MissingRequiredClientCapabilityError",
    ),
    must(
        COMPLETION_SHAPE,
        BOTH,
        "A `completion/complete` result holds `completion`, an object whose `values` is an array of at most 100 \
         strings, with `total` an integer and `hasMore` a boolean when present.",
        "MCP 2025-11-25 and 2026-07-28 server/utilities/completion.mdx §Completion Results (maximum 100 items per \
         response); schema.ts CompleteResult (values: string[], must not exceed 100 items; total?: number; \
         hasMore?: boolean)",
    ),
    must(
        ERROR_CODE_RESERVED,
        MODERN,
        "On a modern connection the server emits none of the codes 2026-07-28 reserves: -32002, \
         -32042, or any in -32020..-32099 but -32020, -32021 and -32022.",
        "MCP 2026-07-28 basic/index.mdx §Error Codes; shared/PROTOCOL-REFERENCE.md §6",
    ),
    should(
        HTTP_MODERN_GET_DELETE_405,
        MODERN,
        "HTTP transport, 2026-07-28: a server that serves only the modern era (the server model says modern-only) \
         answers a GET or a DELETE to the MCP endpoint with 405 Method Not Allowed (a 403, 406, 413, 415 or 431 \
         refusal for another reason is accepted). A dual-era server may serve a GET stream and DELETE sessions for \
         its legacy clients and is not judged.",
        "MCP 2026-07-28 basic/transports/streamable-http.mdx §Backward Compatibility, Earlier Streamable HTTP \
         Revisions",
    ),
    should(
        HTTP_MODERN_NO_SESSION,
        MODERN,
        "HTTP transport, 2026-07-28: a server that serves only the modern era (the server model says modern-only) \
         ignores an Mcp-Session-Id header on a request and neither mints nor echoes session IDs: no response of it \
         carries an Mcp-Session-Id header. A dual-era server assigns sessions to its legacy clients and is not \
         judged.",
        "MCP 2026-07-28 basic/transports/streamable-http.mdx §Backward Compatibility, Earlier Streamable HTTP \
         Revisions",
    ),
];
