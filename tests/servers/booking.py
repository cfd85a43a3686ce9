"""A Python MCP SDK (`mcp` 2.3.0) server written the way an author would, whose one tool asks its client for input
the 2026-07-28 way: `book(city)` answers `input_required` with an elicitation ("which day?") and a
`requestState`, and books on the retry that brings the answer. It asks only a client that declared elicitation;
on a handshake connection it answers without asking.

`--bug error-on-decline` plants an author's bug that only a retry reaches: when the user declines, the tool
raises an `MCPError`, a JSON-RPC error, where a tool's failure belongs in its result (`isError`, tools.mdx §Error
Handling). tests/client_answers.rs holds the harness to finding it (MCP-TOOL-VALID-ARGS), and the clean server to
nothing. (A debug print is no bug here: mcp 2.3.0 diverts file descriptor 1 to stderr while it serves stdio.)

    target/debug/mcp-wirefuzz fuzz --cases 300 -- .venv/bin/python tests/servers/booking.py --bug error-on-decline
"""

import sys

from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

BUG = sys.argv[sys.argv.index("--bug") + 1] if "--bug" in sys.argv else None

mcp = MCPServer("booking", version="1")


@mcp.tool()
async def book(ctx: Context, city: str) -> InputRequiredResult | str:
    """Book a table in `city`; asks the user which day."""
    answers = ctx.input_responses or {}
    day = answers.get("day")
    if day is None:
        if ctx.protocol_version is None or ctx.protocol_version < "2026-07-28":
            return f"booked in {city}"
        capabilities = ctx.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            # A server must not ask for what the client did not declare (patterns/mrtr.mdx).
            return f"booked in {city} on the first free day"
        ask = ElicitRequest(
            params=ElicitRequestFormParams(
                message=f"Which day in {city}?",
                requested_schema={"type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]},
            )
        )
        return InputRequiredResult(input_requests={"day": ask}, request_state=f"city={city}")
    if day.action != "accept":
        if BUG == "error-on-decline":
            raise MCPError(code=-32603, message="no day chosen")
        return f"not booked in {city}: no day chosen"
    content = day.content or {}
    return f"booked in {city} on {content.get('day', 'some day')}"


if __name__ == "__main__":
    mcp.run()
