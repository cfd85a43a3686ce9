"""calc written with FastMCP (`fastmcp` 4.1.6, installed into .venv-bench by `.ci/python-venv --bench`), served over
stdio: the `python-default` benchmark's FastMCP server (`.venv-bench/bin/python benches/python/fastmcp_calc.py`)."""

from fastmcp import FastMCP

mcp = FastMCP("calc")


@mcp.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    mcp.run(show_banner=False)  # stdio is the default transport
