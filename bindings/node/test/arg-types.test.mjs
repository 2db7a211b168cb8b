// Wrong argument types from JavaScript: a TypeError with a clear message (rejected Promise for
// Promise-returning calls), never a conversion error from the addon or a round trip to the server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, Client } from '../lib/index.js';

test('client and server calls refuse wrong argument types with TypeError', async (t) => {
  const s = new Server({ name: 'types', version: '1' });
  let calls = 0;
  s.tool({ name: 'echo', inputSchema: { type: 'object' } }, () => { calls += 1; return 'ok'; });
  const h = await s.listenHttp({ port: 0 });
  t.after(() => h.close());
  const c = await Client.connectHttp(h.url, { mode: 'modern' });
  t.after(() => c.close());
  const cases = [
    [() => c.callTool(123), /callTool\(name\): name must be a string, not number/],
    [() => c.callTool('echo', 'str'), /args must be an object, not string/],
    [() => c.request(5), /method must be a string/],
    [() => c.request('tools/list', 5), /params must be an object/],
    [() => c.getPrompt(1), /getPrompt\(name\)/],
    [() => c.getPrompt('p', { a: 1 }), /object of strings/],
    [() => c.readResource({}), /readResource\(uri\): uri must be a string/],
    [() => c.callTool('echo', {}, { timeout: 'x' }), /timeout must be a number/],
    [() => c.callTool('echo', {}, { signal: 5 }), /signal must be an AbortSignal/],
    [() => c.callTool('echo', {}, { onProgress: 'x' }), /onProgress must be a function/],
    [() => c.listTools({ timeout: -1 }), /timeout must be a number/],
    [() => c.listToolsPage(5), /cursor must be a string/],
    [() => s.listenHttp({ port: 'x' }), /port must be an integer/],
    [() => s.listenHttp({ port: 70000 }), /port must be an integer/],
    [() => s.listenHttp({ host: 1 }), /host must be a string/],
  ];
  for (const [call, message] of cases) {
    let p;
    assert.doesNotThrow(() => { p = call(); }, 'a Promise API rejects rather than throws');
    await assert.rejects(p, (e) => e instanceof TypeError && message.test(e.message), String(call));
  }
  assert.equal(calls, 0, 'nothing reached the handler');
  assert.equal((await c.callTool('echo', {})).content[0].text, 'ok');
});
