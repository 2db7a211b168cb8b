// The OAuth 2.1 authorization code flow from Node (REQUIREMENTS §15, AUTH-01…07): core's client
// discovers, registers, builds the PKCE authorization URL and redeems the code; the binding only
// runs `onAuthorize`, the browser step. Over real HTTP on 127.0.0.1: a small authorization server
// (below, node:http) and a protected endpoint served by this binding with core's resource server,
// which verifies the ES256 tokens the authorization server mints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, Client, McpcoreError } from '../lib/index.js';

const AUDIENCE = 'urn:mcpcore:node-oauth-test';
const b64url = (b) => Buffer.from(b).toString('base64url');

function mint(privateKey, claims) {
  const header = { alg: 'ES256', kid: 'k1', typ: 'JWT' };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const sig = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${b64url(sig)}`;
}

function send(res, status, body) {
  if (status === 302) {
    res.writeHead(302, { Location: body, 'Content-Length': '0' }).end();
    return;
  }
  const data = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) }).end(data);
}

/** RFC 8414 metadata, RFC 7591 registration, an authorization endpoint that approves at once
 * and a token endpoint that checks the PKCE verifier (RFC 7636 S256) and the resource. */
async function authorizationServer(t, privateKey) {
  const as = { clients: new Map(), codes: new Map(), tokenRequests: [] };
  const srv = createServer(async (req, res) => {
    const u = new URL(req.url, as.issuer);
    let raw = '';
    for await (const chunk of req) raw += chunk;
    if (req.method === 'GET' && u.pathname === '/.well-known/oauth-authorization-server') {
      return send(res, 200, {
        issuer: as.issuer,
        authorization_endpoint: `${as.issuer}/authorize`,
        token_endpoint: `${as.issuer}/token`,
        registration_endpoint: `${as.issuer}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    }
    if (req.method === 'POST' && u.pathname === '/register') {
      const body = JSON.parse(raw);
      const clientId = `client-${as.clients.size + 1}`;
      as.clients.set(clientId, body.redirect_uris ?? []);
      return send(res, 201, { ...body, client_id: clientId, token_endpoint_auth_method: 'none' });
    }
    if (req.method === 'GET' && u.pathname === '/authorize') {
      const q = Object.fromEntries(u.searchParams);
      if (!(as.clients.get(q.client_id) ?? []).includes(q.redirect_uri)) return send(res, 400, { error: 'invalid_client' });
      if (q.response_type !== 'code' || q.code_challenge_method !== 'S256') return send(res, 400, { error: 'invalid_request' });
      const code = b64url(randomBytes(16));
      as.codes.set(code, q);
      const target = new URL(q.redirect_uri);
      target.searchParams.set('code', code);
      target.searchParams.set('state', q.state ?? '');
      return send(res, 302, target.href);
    }
    if (req.method === 'POST' && u.pathname === '/token') {
      const form = Object.fromEntries(new URLSearchParams(raw));
      as.tokenRequests.push(form);
      const issued = as.codes.get(form.code);
      as.codes.delete(form.code);
      if (form.grant_type !== 'authorization_code' || !issued) return send(res, 400, { error: 'invalid_grant' });
      const challenge = b64url(createHash('sha256').update(form.code_verifier ?? '').digest());
      const same = ['client_id', 'redirect_uri', 'resource'].every((k) => form[k] === issued[k]);
      if (challenge !== issued.code_challenge || !same) return send(res, 400, { error: 'invalid_grant' });
      const claims = { iss: as.issuer, aud: AUDIENCE, sub: 'bob', scope: 'mcp', exp: Math.floor(Date.now() / 1000) + 600 };
      return send(res, 200, { access_token: mint(privateKey, claims), token_type: 'Bearer', expires_in: 600 });
    }
    return send(res, 404, { error: 'not_found' });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  as.issuer = `http://127.0.0.1:${srv.address().port}`;
  t.after(() => new Promise((r) => srv.close(r)));
  return as;
}

async function freePort() {
  const s = createNetServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

async function setup(t) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256', use: 'sig' };
  const dir = mkdtempSync(join(tmpdir(), 'mcpcore-oauth-'));
  const jwksPath = join(dir, 'jwks.json');
  writeFileSync(jwksPath, JSON.stringify({ keys: [jwk] }));
  const as = await authorizationServer(t, privateKey);
  // AUTH-05: the PRM `resource` names the endpoint itself, so the port is chosen first.
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const s = new Server({ name: 'protected', version: '1' });
  s.tool({ name: 'whoami', inputSchema: { type: 'object' } }, (_a, ctx) => ({ principal: ctx.principal }));
  const auth = { resource, authorizationServers: [as.issuer], issuer: as.issuer, audience: AUDIENCE, jwksPath };
  const h = await s.listenHttp({ port, options: { auth } });
  t.after(() => h.close());
  assert.equal(h.url, resource);
  return { resource, as };
}

/** The browser: GET the authorization URL, return where it redirects (not followed). */
async function follow(url) {
  const r = await fetch(url, { redirect: 'manual' });
  assert.equal(r.status, 302);
  return r.headers.get('location');
}

function checkAuthorizationUrl(url, as, resource) {
  const u = new URL(url);
  assert.equal(`${u.origin}${u.pathname}`, `${as.issuer}/authorize`);
  assert.equal(u.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(u.searchParams.get('resource'), resource);
  assert.ok(as.clients.has(u.searchParams.get('client_id')));
  assert.ok(u.searchParams.get('state') && u.searchParams.get('code_challenge'));
}

for (const mode of ['legacy', 'modern']) {
  test(`the authorization code flow through onAuthorize (${mode})`, async (t) => {
    const { resource, as } = await setup(t);
    const seen = [];
    const onAuthorize = async (url) => {
      seen.push(url);
      return follow(url);
    };
    const c = await Client.connectHttp(resource, { mode, http: { auth: { clientName: 'node-test' } }, onAuthorize });
    t.after(() => c.close());
    const p = (await c.callTool('whoami', {})).structuredContent.principal;
    assert.equal(p.subject, 'bob');
    assert.equal(p.issuer, as.issuer);
    assert.deepEqual(p.scopes, ['mcp']);
    assert.equal(seen.length, 1);
    checkAuthorizationUrl(seen[0], as, resource);
    // The code was redeemed with its verifier for this resource (the endpoint checked both).
    assert.deepEqual(as.tokenRequests.map((f) => f.resource), [resource]);
  });
}

test('a throwing, rejecting or non-string onAuthorize makes the connect reject', async (t) => {
  const { resource, as } = await setup(t);
  const cases = [
    [() => { throw new Error('the user closed the browser'); }, 'the user closed the browser'],
    [async () => { throw new Error('denied'); }, 'denied'],
    [() => Promise.reject(new Error('rejected')), 'rejected'],
    [async () => 42, 'must resolve to the redirect URL string'],
  ];
  for (const [onAuthorize, detail] of cases) {
    await assert.rejects(Client.connectHttp(resource, { http: { auth: {} }, onAuthorize }), (e) => {
      assert.ok(e instanceof McpcoreError, String(e));
      assert.match(e.message, /authorization failed/);
      assert.ok(e.message.includes(detail), e.message);
      return true;
    });
  }
  assert.deepEqual(as.tokenRequests, []);
  await assert.rejects(Client.connectHttp(resource, { http: { auth: {} }, onAuthorize: 'nope' }), TypeError);
});

test('a forged redirect state is refused by core (AUTH-07)', async (t) => {
  const { resource, as } = await setup(t);
  const onAuthorize = async (url) => (await follow(url)).replace('state=', 'state=x');
  await assert.rejects(Client.connectHttp(resource, { http: { auth: {} }, onAuthorize }), (e) => {
    assert.ok(e instanceof McpcoreError);
    assert.match(e.message, /state/);
    return true;
  });
  assert.deepEqual(as.tokenRequests, []);
});
