// An OAuth-protected endpoint (core's resource server, AUTH-06) served from Node: core verifies
// the bearer token, and a handler sees the principal through `ctx.principal`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, Client, McpcoreError } from '../lib/index.js';

const ISSUER = 'http://127.0.0.1/as';
const AUDIENCE = 'urn:mcpcore:node-test';
const b64url = (b) => Buffer.from(b).toString('base64url');

function mint(privateKey, claims = {}) {
  const header = { alg: 'ES256', kid: 'k1', typ: 'JWT' };
  const body = { iss: ISSUER, aud: AUDIENCE, sub: 'bob', scope: 'mcp tools', exp: Math.floor(Date.now() / 1000) + 600, ...claims };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(body))}`;
  const sig = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${b64url(sig)}`;
}

async function protectedServer(t) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256', use: 'sig' };
  const dir = mkdtempSync(join(tmpdir(), 'mcpcore-auth-'));
  const jwksPath = join(dir, 'jwks.json');
  writeFileSync(jwksPath, JSON.stringify({ keys: [jwk] }));
  const s = new Server({ name: 'protected', version: '1' });
  s.tool({ name: 'whoami', inputSchema: { type: 'object' } }, (_a, ctx) => ({ principal: ctx.principal }));
  const options = { auth: { resource: 'http://127.0.0.1/mcp', authorizationServers: [ISSUER], issuer: ISSUER, audience: AUDIENCE, jwksPath } };
  const h = await s.listenHttp({ port: 0, options });
  t.after(() => h.close());
  return { url: h.url, privateKey };
}

for (const mode of ['legacy', 'modern']) {
  test(`the principal reaches the handler (${mode})`, async (t) => {
    const { url, privateKey } = await protectedServer(t);
    const c = await Client.connectHttp(url, { mode, headers: { Authorization: `Bearer ${mint(privateKey)}` } });
    t.after(() => c.close());
    const p = (await c.callTool('whoami', {})).structuredContent.principal;
    assert.equal(p.subject, 'bob');
    assert.equal(p.issuer, ISSUER);
    assert.deepEqual(p.scopes, ['mcp', 'tools']);
  });
}

test('missing and foreign-audience tokens are refused', async (t) => {
  const { url, privateKey } = await protectedServer(t);
  await assert.rejects(Client.connectHttp(url, { mode: 'modern' }), (e) => e instanceof McpcoreError);
  const foreign = mint(privateKey, { aud: 'urn:someone-else' });
  await assert.rejects(Client.connectHttp(url, { mode: 'modern', headers: { Authorization: `Bearer ${foreign}` } }), (e) => e instanceof McpcoreError);
});
