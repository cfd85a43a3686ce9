"""The Python SDK's calc (as tests/servers/calc.py) as an installed package's console script, `wirefuzz-bench-calc`:
the benchmark's stand-in for a server a user installs and runs by name."""

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("calc", version="")


@mcp.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def main():
    """Serves calc over stdio until stdin closes."""
    mcp.run()
