"""A server an author might write with the Python MCP SDK (`mcp` 2.3.0, its `MCPServer`): a note store with three
tools. It is mcp-wirefuzz's test of an author's own bugs: set `NOTES_BUG` to plant one, leave it unset for the clean
server.

    target/debug/mcp-wirefuzz fuzz --sdk python --time 60 -- .venv/bin/python tests/servers/author/notes.py
    NOTES_BUG=raise target/debug/mcp-wirefuzz fuzz --time 60 -- .venv/bin/python tests/servers/author/notes.py

The planted bugs (one at a time), each in the author's code, not the SDK's:
- `raise`: `search_notes` raises an IndexError for a query with no words (`""`, whitespace).
- `hang`: `search_notes` never returns for a query with no words.
- `schema-after-write`: `get_note` of a note stored with an empty body reports `average_word_length` as NaN, which
  JSON writes as `null`, against its outputSchema's `"type": "number"`: reached only after an `add_note`.
- `error-valid-args`: `add_note` answers a JSON-RPC error for a title longer than 8 characters, though its
  inputSchema accepts any string.
- `stdout-print`: `search_notes` prints a debug line on stdout (the protocol's channel) for a query with no words.
  Harmless with this SDK: while it serves, `mcp` 2.3.0 points fd 1 at stderr (mcp/server/stdio.py `_claim_fd`), so
  the line never reaches the wire and a run stays green (tests/author_bugs.rs asserts that).
"""

import asyncio
import os
import sys

from pydantic import BaseModel

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

BUG = os.environ.get("NOTES_BUG", "")

mcp = MCPServer("notes", version="0.3.0")
NOTES: dict[int, tuple[str, str]] = {}


class NoteRef(BaseModel):
    id: int
    title: str


class Note(BaseModel):
    id: int
    title: str
    body: str
    words: int
    average_word_length: float


class Hits(BaseModel):
    ids: list[int]
    first_word: str


@mcp.tool()
async def add_note(title: str, body: str) -> NoteRef:
    """Store a note; returns its id."""
    if BUG == "error-valid-args" and len(title) > 8:
        raise MCPError(INVALID_PARAMS, "title too long")
    note_id = len(NOTES) + 1
    NOTES[note_id] = (title, body)
    return NoteRef(id=note_id, title=title)


@mcp.tool()
async def get_note(id: int) -> Note:
    """A stored note by id."""
    if id not in NOTES:
        raise ToolError(f"no note {id}")
    title, body = NOTES[id]
    words = body.split()
    if words:
        average = sum(len(w) for w in words) / len(words)
    else:
        average = float("nan") if BUG == "schema-after-write" else 0.0
    return Note(id=id, title=title, body=body, words=len(words), average_word_length=average)


@mcp.tool()
async def search_notes(query: str) -> Hits:
    """Ids of the notes whose title or body contains the query's first word."""
    words = query.split()
    if not words:
        if BUG == "raise":
            first = words[0]
        elif BUG == "hang":
            await asyncio.Event().wait()
        elif BUG == "stdout-print":
            print(f"debug: empty query {query!r}")
            sys.stdout.flush()
    first = words[0] if words else ""
    ids = [i for i, (t, b) in NOTES.items() if first and (first in t or first in b)]
    return Hits(ids=ids, first_word=first)


if __name__ == "__main__":
    mcp.run()
