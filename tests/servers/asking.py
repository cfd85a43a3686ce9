"""A Python MCP SDK (`mcp` 2.3.0) server whose one tool asks its client: `confirm` elicits a yes/no from the
user and waits for the answer before it returns. Served over stdio; tests/client_answers.rs holds the harness's
answers to it (`elicitation/create` answered as the conversation declared, the tool's result after it).

    target/debug/mcp-wirefuzz fuzz --cases 50 -- .venv/bin/python tests/servers/asking.py
"""

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

mcp = MCPServer("asking", version="1")


class Answer(BaseModel):
    ok: bool


@mcp.tool()
async def confirm(ctx: Context) -> str:
    """Ask the user to confirm; says what they did."""
    result = await ctx.elicit(message="Go ahead?", schema=Answer)
    return result.action


if __name__ == "__main__":
    mcp.run()
