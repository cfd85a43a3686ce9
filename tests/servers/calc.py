"""The seed transcripts' "calc" server, written with the Python MCP SDK (`mcp` 2.3.0) and served over stdio.

The real-server interop target of mcp-wirefuzz: one tool add(a: int, b: int) -> int, server name "calc", empty
version string. Set up the interpreter with `.ci/python-venv`, then

    target/debug/mcp-wirefuzz check -- .venv/bin/python tests/servers/calc.py

The SDK serves both protocol eras from this one definition (runner.py: serve_dual_era_loop): the first request of
a connection picks the handshake era (`initialize`) or the 2026-07-28 era (a `_meta` envelope), and locks it.
What it answers on the wire, including to malformed input, is recorded in tests/servers/README.md.
"""

# mcp 2.x renamed FastMCP to MCPServer (importing mcp.server.fastmcp raises, pointing at the migration guide).
from mcp.server.mcpserver import MCPServer

# `version` defaults to "" in 2.3.0; spelled out because the transcripts pin serverInfo {"name": "calc", "version": ""}.
mcp = MCPServer("calc", version="")


# The int annotations become the tool's inputSchema; the `-> int` return type makes the SDK wrap the value as
# structuredContent {"result": <sum>} next to the text content "<sum>", as the transcripts show.
#
# `async def` on purpose. At stdin EOF the SDK cancels every request still in flight, and one cancelled while its
# answer is being written gets no reply at all (not even -32000). A plain `def` tool runs in a worker thread, so a
# client that writes everything and closes stdin at once loses its tools/call replies (3 of the 6 seed cases did,
# before mcp-wirefuzz learned to wait for every owed reply before closing stdin). An async tool answers within a
# few event-loop turns, so this server behaves the same for clients that close early. See README.md beside this file.
@mcp.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    mcp.run()  # stdio is the default transport; returns at stdin EOF
