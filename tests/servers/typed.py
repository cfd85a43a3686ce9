"""A Python MCP SDK (`mcp` 2.3.0) server with typed tools, a prompt, resources and a resource template, for
mcp-wirefuzz's schema-driven arguments and surface rules. Set up the interpreter with `.ci/python-venv`, then

    target/debug/mcp-wirefuzz fuzz --time 60 -- .venv/bin/python tests/servers/typed.py

Every tool's inputSchema comes from its annotations (pydantic): nested models, Literal enums, lists, bounds,
optional (nullable) members; `-> Summary` gives an outputSchema and structuredContent.
"""

from typing import Annotated, Literal, Optional

from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("typed", version="1.0.0")


class Address(BaseModel):
    street: str
    city: str = Field(min_length=1, max_length=40)


class Person(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=64)]
    age: Annotated[int, Field(ge=0, le=150)]
    address: Optional[Address] = None


class Summary(BaseModel):
    text: str
    count: int


@mcp.tool()
async def describe(person: Person, style: Literal["short", "long"] = "short") -> Summary:
    """Describe a person."""
    text = f"{person.name} ({person.age})"
    if style == "long" and person.address is not None:
        text += f", {person.address.street}, {person.address.city}"
    return Summary(text=text, count=len(text))


@mcp.tool()
async def total(values: Annotated[list[float], Field(min_length=1, max_length=20)], scale: float = 1.0) -> float:
    """The sum of numbers, scaled."""
    return sum(values) * scale


@mcp.tool()
async def repeat(word: str, times: Annotated[int, Field(ge=1, le=5)] = 2, separator: Optional[str] = None) -> str:
    """A word repeated."""
    return (separator if separator is not None else " ").join([word] * times)


@mcp.tool()
async def flags(enabled: bool, tags: list[str] = []) -> dict[str, int]:
    """Counts of tags, when enabled."""
    return {tag: len(tag) for tag in tags} if enabled else {}


@mcp.prompt()
def review(code: str, language: str = "python") -> str:
    """Ask for a code review."""
    return f"Please review this {language} code:\n{code}"


@mcp.resource("typed://readme")
def readme() -> str:
    """What this server is."""
    return "A typed server for mcp-wirefuzz."


@mcp.resource("typed://numbers/{n}")
def number(n: str) -> str:
    """A number."""
    return f"the number {n}"


if __name__ == "__main__":
    mcp.run()
