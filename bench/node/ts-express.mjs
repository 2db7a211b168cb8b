// Benchmark peer (scripts/bench-node.sh): the same `echo {text}` tool on the official TypeScript
// SDK v2 in Express, as the SDK documents it: `express.json()` parses the body, and the SDK's
// per-request handler (`createMcpHandler`, stateless, JSON responses) behind its Node adapter
// (`@modelcontextprotocol/node` `toNodeHandler`) takes the parsed body as its third argument.
// (The SDK's `NodeStreamableHTTPServerTransport` refuses the benchmark's 2026-07-28 request:
// "Unsupported protocol version".) Run from the peers install the script prepares (copied there
// so it resolves the SDK and express); listens on 127.0.0.1 port 0 and prints
// `URL http://…/mcp` on stderr.
import express from 'express';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { factory } from './ts-server.mjs';

const handle = toNodeHandler(createMcpHandler(factory, { responseMode: 'json' }));
const app = express();
app.use(express.json());
app.post('/mcp', (req, res) => handle(req, res, req.body));
const srv = app.listen(0, '127.0.0.1', () => process.stderr.write(`URL http://127.0.0.1:${srv.address().port}/mcp\n`));
srv.keepAliveTimeout = 60_000;
process.on('SIGTERM', () => process.exit(0));
