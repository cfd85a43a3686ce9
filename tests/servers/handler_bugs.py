"""A server with author bugs in one tool, for tests/handler_failures.rs: the Python SDK (`mcp` 2.3.0) over stdio.

`fetch(id)` returns one of three items. For id 9 it never returns (it waits on an event nobody sets), for id 5 it
takes 1.5 s (slow, but it answers), and past the three items it raises IndexError (the SDK turns that into an
isError result and logs the traceback on stderr).
"""

import asyncio

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("handler-bugs", version="1")

ITEMS = ["a", "b", "c"]


@mcp.tool()
async def fetch(id: int) -> str:
    """Fetch an item by its index."""
    if id == 9:
        await asyncio.Event().wait()
    if id == 5:
        await asyncio.sleep(1.5)
        return "slow"
    return ITEMS[id]


if __name__ == "__main__":
    mcp.run()
