// Tasks through the binding (SEP-2663; TASK-L01, TASK-M01…M04): a Node server's task-capable
// tools and the Node client, over stdio and Streamable HTTP, in both eras, against the Node
// server (in process, and the conformance fixture as a child) and the Rust `tasks-server`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { Client, McpError, Server, Task, rawResult } from '../lib/index.js';
import { taskTools } from '../../../examples/node/conformance-tasks.mjs';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const fixture = join(repo, 'examples', 'node', 'conformance-server.mjs');
const text = (r) => r.content[0].text;
const onElicitation = async () => ({ action: 'accept', content: { name: 'Lin', confirm: true } });

function rustTasksServer() {
  const exe = join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'debug', 'tasks-server');
  if (!existsSync(exe)) execFileSync('cargo', ['build', '-q', '-p', 'mcpcore-tests', '--bin', 'tasks-server'], { cwd: repo, stdio: 'inherit' });
  assert.ok(existsSync(exe), `tasks-server not found at ${exe}`);
  return exe;
}

function makeServer() {
  const s = new Server({ name: 'tasks-app', version: '1.0.0', tasks: { pollIntervalMs: 20, defaultTtlMs: 60000 } });
  taskTools(s);
  s.tool(
    { name: 'task_info', description: 'The task id the handler sees.', inputSchema: { type: 'object' }, taskSupport: 'optional' },
    (_a, ctx) => rawResult({ content: [{ type: 'text', text: ctx.taskId ?? 'no task' }] }),
  );
  return s;
}

/** What every server (ours or the Rust fixture) must do with the same task tools. */
async function exercise(c, ours) {
  // Without the opt-in an optional task tool is a plain call; a required one is refused.
  assert.equal(text(await c.callTool('slow_compute', { seconds: 0, label: 'x' })), 'Computed x in 0s');
  await assert.rejects(c.callTool('failing_job', {}), (e) => e instanceof McpError && e.code === (c.era === 'modern' ? -32021 : -32601));

  // With it: a task, followed to its end.
  let t = await c.callToolAsTask('slow_compute', { seconds: 0.1, label: 'y' }, { ttl: 60000 });
  assert.ok(t instanceof Task);
  assert.ok(['working', 'completed'].includes(t.status));
  assert.equal((await c.getTask(t.taskId)).taskId, t.taskId);
  const done = await c.waitTask(t.taskId, { timeout: 20000, minPollIntervalMs: 10 });
  assert.equal(done.status, 'completed');
  assert.ok(done.terminal);
  if (c.era === 'modern') assert.equal(text(done.result), 'Computed y in 0.1s');

  assert.equal(text(await c.callToolToCompletion('slow_compute', { seconds: 0, label: 'z' }, { timeout: 20000 })), 'Computed z in 0s');
  const failed = await c.callToolToCompletion('failing_job', {}, { timeout: 20000 });
  assert.equal(failed.isError, true);
  assert.equal(text(failed), 'failing_job failed on purpose');
  await assert.rejects(c.callToolToCompletion('protocol_error_job', {}, { timeout: 20000 }), (e) => e instanceof McpError && e.code === -32603);

  // Cancelling a running task ends it cancelled.
  t = await c.callToolAsTask('slow_compute', { seconds: 30 });
  assert.ok(t instanceof Task);
  await c.cancelTask(t.taskId);
  assert.equal((await c.getTask(t.taskId)).status, 'cancelled');

  // Input while running as a task, answered by the registered elicitation callback.
  assert.equal(text(await c.callToolToCompletion('confirm_delete', { filename: 'a.txt' }, { timeout: 20000 })), 'Deleted a.txt');
  if (c.era === 'modern') {
    // The gate's MRTR round completes on the request before the task exists.
    assert.equal(text(await c.callToolToCompletion('test_tool_with_task', {}, { timeout: 20000 })), 'Hello, Lin!');
  }
  if (ours) {
    // The handler sees the task it runs as, and none on a plain call.
    assert.ok((await c.callToolAsTask('task_info', {})) instanceof Task);
    assert.match(text(await c.callToolToCompletion('task_info', {}, { timeout: 20000 })), /^[0-9a-f]{32}$/);
    assert.equal(text(await c.callTool('task_info', {})), 'no task');
  }
}

for (const mode of ['legacy', 'modern']) {
  test(`Node server over HTTP with tasks, ${mode} era`, async (t) => {
    const h = await makeServer().listenHttp({ host: '127.0.0.1', port: 0 });
    t.after(() => h.close());
    const c = await Client.connectHttp(h.url, { mode, onElicitation });
    t.after(() => c.close());
    assert.equal(c.era, mode);
    // The raw list: core's typed list (listTools) keeps no `execution` member.
    const tools = Object.fromEntries((await c.request('tools/list', {})).tools.map((x) => [x.name, x]));
    assert.deepEqual(tools.slow_compute.execution, { taskSupport: 'optional' });
    assert.deepEqual(tools.failing_job.execution, { taskSupport: 'required' });
    assert.equal(tools.greet.execution, undefined);
    await exercise(c, true);
  });

  test(`Node fixture over stdio with tasks, ${mode} era`, async (t) => {
    const c = await Client.connectStdio(process.execPath, [fixture, '--stdio'], { mode, onElicitation });
    t.after(() => c.close());
    await exercise(c, false);
  });

  test(`Rust tasks-server over stdio, ${mode} era`, async (t) => {
    const c = await Client.connectStdio(rustTasksServer(), [], { mode, onElicitation });
    t.after(() => c.close());
    await exercise(c, false);
  });
}

test('tasks options are core JSON: a bad one is refused when serving starts', async () => {
  const s = new Server({ name: 'bad', version: '1', tasks: { pollIntervalMs: 0 } });
  await assert.rejects(s.listenHttp({ host: '127.0.0.1', port: 0 }), /pollIntervalMs/);
});

// The raw outcome lib/ reads is core's `TaskCallOutcome::to_json`: the same JSON the C ABI returns
// and the Python binding reads.
test('the native task outcome is core\'s one shape', async (t) => {
  const { createRequire } = await import('node:module');
  const native = createRequire(import.meta.url)('../lib/native.cjs');
  const h = await makeServer().listenHttp({ host: '127.0.0.1', port: 0 });
  t.after(() => h.close());
  const n = await native.NativeClient.connectHttp(h.url, 'legacy', null, {}, null, null, null);
  assert.equal(n.error, undefined);
  t.after(() => n.close());
  const out = await n.callToolAsTask('slow_compute', { seconds: 0, label: 'k' }, 60000, null, null);
  assert.deepEqual(Object.keys(out.ok).sort(), ['kind', 'task']);
  assert.equal(out.ok.kind, 'task');
  assert.equal(typeof out.ok.task.taskId, 'string');
});
