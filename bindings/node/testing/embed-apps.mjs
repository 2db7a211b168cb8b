// (Outside test/: a helper, not a test file.) The MCP endpoint mounted in real host apps on
// 127.0.0.1: `node:http`, Express (with and without `express.json()`), Fastify and Hono (through
// @hono/node-server), each beside a route of its own (`/health`), plus raw HTTP probes to
// compare answers byte for byte.
import http from 'node:http';
import { once } from 'node:events';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';

/** The `/mcp` URL, base URL and closer of a listening node:http `server`. */
function served(server) {
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    base: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** Listen `server` (a node:http server) on 127.0.0.1. */
async function listening(server) {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return served(server);
}

/** `node:http` with the handler at `/mcp`. Every app maker takes `{handler}`: the options of
 * its `nodeHandler`/`fetchHandler`. */
export async function nodeApp(mcp, { handler: options } = {}) {
  const handler = mcp.nodeHandler(options);
  return listening(
    http.createServer((req, res) => {
      if (req.url === '/health') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      else if (req.url.startsWith('/mcp')) handler(req, res);
      else res.writeHead(404).end();
    }),
  );
}

/** Express with `/health` and `/mcp`; `json`: `express.json()` runs first (the mount then
 * re-serializes the parsed body). */
export async function expressApp(mcp, { json = false, handler: options } = {}) {
  const app = express();
  app.get('/health', (_req, res) => res.json({ ok: true }));
  const handler = mcp.nodeHandler(options);
  // How many bodies express.json() had parsed (consumed) before the mount saw the request.
  const stats = { parsed: 0 };
  if (json) app.use(express.json());
  app.all('/mcp', (req, res) => {
    if (req.readableEnded && req.body !== undefined) stats.parsed++;
    handler(req, res);
  });
  return { ...(await listening(http.createServer(app))), stats };
}

/** Fastify with `/health` and `/mcp`: the route hands the raw stream to the mount (no content
 * parser reads it first) after `reply.hijack()`. */
export async function fastifyApp(mcp, { handler: options } = {}) {
  // close() ends open streams too (a client's legacy GET stream), as the other apps' closers do.
  const app = Fastify({ forceCloseConnections: true });
  app.get('/health', async () => ({ ok: true }));
  const handler = mcp.nodeHandler(options);
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null));
    scope.all('/mcp', (request, reply) => {
      reply.hijack();
      return handler(request.raw, reply.raw);
    });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address();
  return { url: `http://127.0.0.1:${port}/mcp`, base: `http://127.0.0.1:${port}`, close: () => app.close() };
}

/** Fastify with its own content parsers: the route hands the mount Fastify's parsed
 * `request.body` (re-serialized for core). */
export async function fastifyParsedApp(mcp, { handler: options } = {}) {
  // close() ends open streams too (a client's legacy GET stream), as the other apps' closers do.
  const app = Fastify({ forceCloseConnections: true });
  app.get('/health', async () => ({ ok: true }));
  const handler = mcp.nodeHandler(options);
  app.all('/mcp', (request, reply) => {
    reply.hijack();
    return handler(request.raw, reply.raw, request.body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address();
  return { url: `http://127.0.0.1:${port}/mcp`, base: `http://127.0.0.1:${port}`, close: () => app.close() };
}

/** Hono with `/health` and `/mcp` (the fetch handler), served by @hono/node-server. */
export async function honoApp(mcp, { handler: options } = {}) {
  const app = new Hono();
  app.get('/health', (c) => c.json({ ok: true }));
  const handler = mcp.fetchHandler(options);
  app.all('/mcp', (c) => handler(c.req.raw));
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await once(server, 'listening');
  return served(server);
}

export const APPS = { node: nodeApp, express: expressApp, 'express+json': (m, o) => expressApp(m, { ...o, json: true }), fastify: fastifyApp, 'fastify+parsed': fastifyParsedApp, hono: honoApp };

export const MODERN = '2026-07-28';

/** The headers and `_meta` a 2026-07-28 request carries. */
export function modernCall(method, params = {}, name) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
  };
  if (name !== undefined) headers['mcp-name'] = name;
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'embed-test', version: '1' },
  };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } });
  return { headers, body };
}

/** One raw request: `{status, contentType, body}` (the body as text). */
export function probe(url, { method = 'POST', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode, contentType: res.headers['content-type'], body: Buffer.concat(chunks).toString() }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
