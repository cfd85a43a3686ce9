"""The calc server of calc.py, served over Streamable HTTP by the Python MCP SDK (`mcp` 2.3.0).

    .venv/bin/python tests/servers/calc_http.py PORT

listens on http://127.0.0.1:PORT/mcp with the SDK's defaults (its DNS-rebinding protection included, which the SDK
turns on for a localhost bind). The SDK routes each POST by its MCP-Protocol-Version header: none or a handshake
version goes to the legacy session transport, anything else to the 2026-07-28 single-exchange entry. Use it as

    target/debug/mcp-wirefuzz fuzz --url http://127.0.0.1:PORT/mcp -- .venv/bin/python tests/servers/calc_http.py PORT
"""

import sys

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("calc", version="")


@mcp.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    mcp.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
