// A server an author might write with the TypeScript SDK v1 (@modelcontextprotocol/sdk 1.32.2, its McpServer): the
// note store of tests/servers/author, with the same three tools and its planted bugs that stay bugs on the wire, one
// at a time, chosen by the environment variable NOTES_BUG (unset: the clean server). (Its `error-valid-args` is none
// here: McpServer answers an error a tool handler throws with an isError result, which is legal.)
// - `hang`: search_notes never returns for a query with no words.
// - `stdout-print`: search_notes writes a debug line on stdout (the protocol's channel) for a query with no words.
// - `crash`: get_note reads a property of the note it did not find (a TypeError the SDK answers with isError).
// - `schema-after-write`: get_note of a note stored with an empty body reports its words as a string, against its
//   outputSchema (the SDK answers an "Output validation error" isError); reached only after an add_note.
// - `after-fifty`: add_note fills a pool of 50 note records made at start, and the 51st write reaches past it (a
//   TypeError the SDK answers with isError); reached only by a client that stores 51 notes on one connection.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const BUG = process.env.NOTES_BUG ?? '';
const notes = new Map();
const pool = Array.from({ length: 50 }, () => ({ title: '', body: '' }));
const server = new McpServer({ name: 'notes', version: '0.3.0' });

server.registerTool(
  'add_note',
  {
    description: 'Store a note; returns its id.',
    inputSchema: { title: z.string(), body: z.string() },
    outputSchema: { id: z.number().int(), title: z.string() },
  },
  async ({ title, body }) => {
    const id = notes.size + 1;
    if (BUG === 'after-fifty') {
      const record = pool[id - 1];
      record.title = title;
      record.body = body;
    }
    notes.set(id, { title, body });
    return { content: [{ type: 'text', text: `stored note ${id}` }], structuredContent: { id, title } };
  },
);

server.registerTool(
  'get_note',
  {
    description: 'A stored note by id.',
    inputSchema: { id: z.number().int() },
    outputSchema: { title: z.string(), words: z.number().int() },
  },
  async ({ id }) => {
    const note = notes.get(id);
    if (!note && BUG !== 'crash') {
      return { content: [{ type: 'text', text: `no note ${id}` }], isError: true };
    }
    const words = note.body.split(/\s+/).filter((word) => word.length > 0).length;
    const counted = BUG === 'schema-after-write' && words === 0 ? 'none' : words;
    return {
      content: [{ type: 'text', text: `${note.title}: ${note.body}` }],
      structuredContent: { title: note.title, words: counted },
    };
  },
);

server.registerTool(
  'search_notes',
  {
    description: "Ids of the notes whose title or body contains the query's first word.",
    inputSchema: { query: z.string() },
  },
  async ({ query }) => {
    const words = query.split(/\s+/).filter((word) => word.length > 0);
    if (words.length === 0) {
      if (BUG === 'hang') {
        await new Promise(() => {});
      } else if (BUG === 'stdout-print') {
        console.log(`debug: empty query ${JSON.stringify(query)}`);
      }
    }
    const first = words[0] ?? '';
    const ids = [...notes].filter(([, n]) => first && (n.title.includes(first) || n.body.includes(first)));
    return { content: [{ type: 'text', text: JSON.stringify(ids.map(([id]) => id)) }] };
  },
);

await server.connect(new StdioServerTransport());
