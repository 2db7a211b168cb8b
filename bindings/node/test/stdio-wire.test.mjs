// Stdio served from the JavaScript thread, on the raw wire (a child process, bytes written by
// hand): framing across chunk boundaries (STDIO-01: CRLF, blank lines, a last frame without a
// newline at EOF, the size cap), synchronous and async handlers side by side, progress before
// the answer, and a draining exit at EOF (STDIO-04).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../testing/stdio-wire-server.mjs', import.meta.url));

function start(options) {
  const env = { ...process.env };
  if (options) env.MCPCORE_TEST_OPTIONS = JSON.stringify(options);
  const child = spawn(process.execPath, [script], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b) => (out += b));
  child.stderr.on('data', (b) => (err += b));
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const messages = () => out.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
  return { child, exited, messages, stderr: () => err };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(cond, what) {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await sleep(10);
  }
  assert.fail(`timed out waiting for ${what}`);
}

const init = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const call = (id, name, args) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: { progressToken: `p${id}` } },
});

test('frames split across writes, CRLF, blank lines and a last frame without newline are all answered', async () => {
  const s = start();
  const line = JSON.stringify(init);
  // The initialize request in three pieces, each written separately.
  s.child.stdin.write(line.slice(0, 10));
  await sleep(20);
  s.child.stdin.write(line.slice(10, 40));
  await sleep(20);
  s.child.stdin.write(`${line.slice(40)}\r\n\n`);
  await until(() => s.messages().some((m) => m.id === 0), 'the initialize answer');
  s.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  // An async call that answers later, then synchronous ones in the same write.
  s.child.stdin.write(`${JSON.stringify(call(1, 'later', { ms: 150 }))}\n${JSON.stringify(call(2, 'add', { a: 1, b: 2 }))}\n`);
  await until(() => s.messages().some((m) => m.id === 2), 'the synchronous answer');
  // The synchronous call did not wait for the async one.
  assert.ok(!s.messages().some((m) => m.id === 1), 'the async call answered before its time');
  s.child.stdin.end(JSON.stringify(call(3, 'add', { a: 2, b: 3 })));
  assert.equal(await s.exited, 0, s.stderr());
  const msgs = s.messages();
  const answer = (id) => msgs.find((m) => m.id === id);
  assert.equal(answer(0).result.serverInfo.name, 'wire');
  assert.deepEqual(answer(2).result.structuredContent, { sum: 3 });
  assert.deepEqual(answer(3).result.structuredContent, { sum: 5 });
  // The async call in flight at EOF still got its answer (STDIO-04).
  assert.equal(answer(1).result.content[0].text, 'done');
  // Each call's progress notification came before its answer.
  for (const id of [1, 2, 3]) {
    const p = msgs.findIndex((m) => m.method === 'notifications/progress' && m.params.progressToken === `p${id}`);
    const a = msgs.findIndex((m) => m.id === id);
    assert.ok(p >= 0 && p < a, `progress of ${id} at ${p}, answer at ${a}`);
  }
});

test('a frame over maxMessageBytes is answered -32600 and ends serving with an error', async () => {
  const s = start({ limits: { maxMessageBytes: 1024 } });
  s.child.stdin.write(`${JSON.stringify(init)}\n`);
  await until(() => s.messages().some((m) => m.id === 0), 'the initialize answer');
  // Sent in pieces: the cap applies to the frame, not to one read.
  const big = JSON.stringify(call(1, 'add', { a: 1, b: 2, pad: 'x'.repeat(2000) }));
  s.child.stdin.write(big.slice(0, 600));
  await sleep(20);
  s.child.stdin.write(`${big.slice(600)}\n`);
  const code = await s.exited;
  assert.notEqual(code, 0, 'serveStdio rejects');
  const last = s.messages().at(-1);
  assert.equal(last.error.code, -32600);
  assert.equal(last.id, null);
  assert.match(last.error.message, /exceeds 1024 bytes/);
  assert.ok(!s.messages().some((m) => m.id === 1), 'the oversized request was not served');
});

test('with the idle spin off, turns are still answered (the event loop path alone)', async () => {
  const s = start({ limits: { stdioIdleSpinUs: 0 } });
  s.child.stdin.write(`${JSON.stringify(init)}\n`);
  await until(() => s.messages().some((m) => m.id === 0), 'the initialize answer');
  for (let id = 1; id <= 20; id++) {
    s.child.stdin.write(`${JSON.stringify(call(id, 'add', { a: id, b: 1 }))}\n`);
    await until(() => s.messages().some((m) => m.id === id), `answer ${id}`);
  }
  s.child.stdin.end();
  assert.equal(await s.exited, 0, s.stderr());
  for (let id = 1; id <= 20; id++) {
    assert.deepEqual(s.messages().find((m) => m.id === id).result.structuredContent, { sum: id + 1 });
  }
});
