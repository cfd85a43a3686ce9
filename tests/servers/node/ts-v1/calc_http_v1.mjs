// The calc server of calc_server_v1.mjs over Streamable HTTP, on @modelcontextprotocol/sdk 1.32.2, written the way
// the SDK's README shows a stateful server: createMcpExpressApp (Host-header DNS-rebinding protection for a
// localhost bind), one StreamableHTTPServerTransport per session kept in a map, POST for messages, GET and DELETE
// for the session's stream and its end. Usage: node calc_http_v1.mjs PORT (listens on 127.0.0.1:PORT, path /mcp).
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

function calc() {
  const server = new McpServer({ name: 'calc', version: '0.1.0' });
  server.registerTool(
    'add',
    {
      description: 'Add two integers.',
      inputSchema: { a: z.number().int(), b: z.number().int() },
      outputSchema: { result: z.number().int() },
    },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
      structuredContent: { result: a + b },
    }),
  );
  return server;
}

const transports = {};
const app = createMcpExpressApp({ host: '127.0.0.1' });

app.post('/mcp', async (req, res) => {
  const sessionId = req.headers['mcp-session-id'];
  let transport = sessionId ? transports[sessionId] : undefined;
  if (!transport && !sessionId && isInitializeRequest(req.body)) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports[id] = transport;
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) delete transports[transport.sessionId];
    };
    await calc().connect(transport);
  }
  if (!transport) {
    res.status(400).json({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
      id: null,
    });
    return;
  }
  await transport.handleRequest(req, res, req.body);
});

const session = async (req, res) => {
  const transport = transports[req.headers['mcp-session-id']];
  if (!transport) {
    res.status(400).send('Invalid or missing session ID');
    return;
  }
  await transport.handleRequest(req, res);
};
app.get('/mcp', session);
app.delete('/mcp', session);

app.listen(Number(process.argv[2] ?? 3000), '127.0.0.1');
