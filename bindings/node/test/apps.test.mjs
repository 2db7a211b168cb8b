// MCP Apps (io.modelcontextprotocol/ui) from Node, both eras over real Streamable HTTP on
// 127.0.0.1: a UI resource registered with appResource (static HTML and a handler), tools linked
// with `ui`, the extension advertised, the client readers (serverSupportsApps, uiResourceUri,
// readAppResource and its refusals), the `apps` client option, and invalid registrations refused
// (when the server is built, i.e. on listen).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APP_MIME_TYPE, Client, McpcoreError, Server, uiResourceUri } from '../lib/index.js';

const UI = 'io.modelcontextprotocol/ui';
const HTML = '<!DOCTYPE html><html><body>weather</body></html>';
const OBJ = { type: 'object' };

function makeServer() {
  return new Server({ name: 'node-apps', version: '1' })
    .appResource({
      uri: 'ui://weather/dashboard',
      name: 'dashboard',
      html: HTML,
      csp: { connectDomains: ['https://api.example'] },
      permissions: ['geolocation'],
      prefersBorder: true,
    })
    .appResource({ uri: 'ui://weather/live', description: 'Live view' }, () => '<p>live</p>')
    .resource({ uri: 'ui://raw/{kind}', name: 'raw', mimeType: 'text/html' }, () => '<p>not an app</p>')
    .tool({ name: 'weather', inputSchema: OBJ, ui: 'ui://weather/dashboard' }, () => 'sunny')
    .tool({ name: 'refresh', inputSchema: OBJ, ui: 'ui://weather/live', uiVisibility: ['app'] }, () => 'refreshed')
    .tool({ name: 'client_apps', inputSchema: OBJ }, (_args, ctx) => String(UI in (ctx.clientCapabilities.extensions ?? {})));
}

async function connect(t, mode, opts = {}) {
  const h = await makeServer().listenHttp({ port: 0 });
  const c = await Client.connectHttp(h.url, { mode, ...opts });
  t.after(async () => {
    await c.close();
    await h.close();
  });
  return c;
}

for (const mode of ['legacy', 'modern']) {
  test(`app resources, links and readers (${mode})`, async (t) => {
    const c = await connect(t, mode, { options: { apps: true } });
    assert.equal(c.era, mode);
    assert.equal(c.serverSupportsApps, true);
    assert.deepEqual(c.serverCapabilities.extensions[UI], { mimeTypes: [APP_MIME_TYPE] });

    const tools = Object.fromEntries((await c.listTools()).map((x) => [x.name, x]));
    assert.equal(uiResourceUri(tools.weather), 'ui://weather/dashboard');
    assert.deepEqual(tools.refresh._meta.ui, { resourceUri: 'ui://weather/live', visibility: ['app'] });
    assert.equal(uiResourceUri(tools.client_apps), null);

    const listed = Object.fromEntries((await c.listResources()).map((r) => [r.uri, r]));
    assert.equal(listed['ui://weather/dashboard'].mimeType, APP_MIME_TYPE);
    assert.equal(listed['ui://weather/live'].description, 'Live view');

    const app = await c.readAppResource(uiResourceUri(tools.weather));
    assert.equal(app.html, HTML);
    assert.equal(app.mimeType, APP_MIME_TYPE);
    assert.deepEqual(app.meta, {
      csp: { connectDomains: ['https://api.example'] },
      permissions: { geolocation: {} },
      prefersBorder: true,
    });
    const live = await c.readAppResource('ui://weather/live');
    assert.equal(live.uri, 'ui://weather/live');
    assert.equal(live.html, '<p>live</p>');
    assert.equal(live.meta, null);

    assert.equal((await c.callTool('client_apps')).content[0].text, 'true');
    await assert.rejects(c.readAppResource('https://example/x'), (e) => e instanceof McpcoreError && e.code === 'invalid_argument');
    await assert.rejects(c.readAppResource('ui://raw/page'), (e) => e instanceof McpcoreError && e.code === 'protocol' && e.message.includes(APP_MIME_TYPE));
  });
}

test('a client without the apps option does not advertise it', async (t) => {
  const c = await connect(t, 'modern');
  assert.equal((await c.callTool('client_apps')).content[0].text, 'false');
});

test('invalid registrations are refused', async () => {
  const dangling = new Server({ name: 'dangling', version: '1' }).tool({ name: 't', inputSchema: OBJ, ui: 'ui://missing' }, () => 'x');
  await assert.rejects(dangling.listenHttp({ port: 0 }), (e) => e instanceof McpcoreError && e.message.includes('ui://missing'));
  const wrong = new Server({ name: 'wrong', version: '1' }).appResource({ uri: 'https://example/page', html: HTML });
  await assert.rejects(wrong.listenHttp({ port: 0 }), (e) => e instanceof McpcoreError && e.code === 'invalid_argument' && e.message.includes('ui://'));
  assert.throws(() => new Server({ name: 'nohtml', version: '1' }).appResource({ uri: 'ui://x' }), TypeError);
});
