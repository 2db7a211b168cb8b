// conformance-tasks.mjs: the conformance fixture's task tools (the suite's `tasks-*` scenarios,
// SEP-2663) on the Node binding, mirroring examples/conformance/tasks.rs tool by tool: `greet`
// (never a task), `slow_compute`, `failing_job` (task required), `protocol_error_job`,
// `confirm_delete` and `multi_input` (input while running as a task), `test_tool_with_task`
// (MRTR rounds on the request through its gate, then a task).
import { McpError, ToolError, inputRequired, rawResult } from '../../bindings/node/lib/index.js';

const schema = (properties) => ({ type: 'object', properties });
const text = (t) => rawResult({ content: [{ type: 'text', text: t }] });
/** Sleep `ms`, or stop when the task is cancelled (`tasks/cancel` aborts `ctx.signal`). */
const work = (ms, signal) =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
const elicit = (message, properties) => ({
  method: 'elicitation/create',
  params: { mode: 'form', message, requestedSchema: schema(properties) },
});

/** The `content` of an accepted elicitation answered under `key`. */
function answer(ctx, key) {
  const r = ctx.inputResponses?.[key];
  if (r?.action !== 'accept') return undefined;
  const c = r.content;
  return c !== null && typeof c === 'object' && !Array.isArray(c) ? c : undefined;
}

const str = (v, fallback) => (typeof v === 'string' ? v : fallback);

export function taskTools(s) {
  s.tool(
    { name: 'greet', description: 'Greets by name (never a task).', inputSchema: schema({ name: { type: 'string' } }) },
    (a) => text(`Hello, ${str(a.name, 'World')}!`),
  );
  s.tool(
    {
      name: 'slow_compute',
      description: 'Sleeps `seconds`, then answers; runs as a task when asked.',
      inputSchema: schema({ seconds: { type: 'number' }, label: { type: 'string' } }),
      taskSupport: 'optional',
    },
    async (a, ctx) => {
      const secs = typeof a.seconds === 'number' ? Math.min(Math.max(a.seconds, 0), 600) : 0;
      await work(secs * 1000, ctx.signal);
      // JS prints 2 for 2.0, as Rust's `{}` does in the Rust fixture's text.
      return text(`Computed ${str(a.label, 'job')} in ${secs}s`);
    },
  );
  s.tool(
    { name: 'failing_job', description: 'A task that ends in a tool error.', inputSchema: schema({}), taskSupport: 'required' },
    async (_a, ctx) => {
      await work(1000, ctx.signal);
      throw new ToolError('failing_job failed on purpose');
    },
  );
  s.tool(
    { name: 'protocol_error_job', description: 'A task that ends in a protocol error.', inputSchema: schema({}), taskSupport: 'optional' },
    () => {
      throw new McpError(-32603, 'protocol_error_job failed on purpose');
    },
  );
  inputTools(s);
}

function inputTools(s) {
  s.tool(
    {
      name: 'confirm_delete',
      description: 'Asks the client to confirm, then deletes (pretend).',
      inputSchema: schema({ filename: { type: 'string' } }),
      taskSupport: 'optional',
    },
    (a, ctx) => {
      const file = str(a.filename, 'file');
      const c = answer(ctx, 'confirm');
      if (c === undefined) return inputRequired({ confirm: elicit(`Delete ${file}?`, { confirm: { type: 'boolean' } }) });
      return text(`${c.confirm === true ? 'Deleted' : 'Kept'} ${file}`);
    },
  );
  s.tool(
    { name: 'multi_input', description: 'Asks two questions at once.', inputSchema: schema({}), taskSupport: 'optional' },
    (_a, ctx) => {
      const name = (k) => str(answer(ctx, k)?.name, undefined);
      const [a, b] = [name('first'), name('second')];
      if (a === undefined || b === undefined) {
        const props = { name: { type: 'string' } };
        return inputRequired({ first: elicit('First name?', props), second: elicit('Second name?', props) });
      }
      return text(`Got ${a} and ${b}`);
    },
  );
  s.tool(
    {
      name: 'test_tool_with_task',
      description: 'Asks for a name (MRTR), then greets as a task.',
      inputSchema: schema({}),
      taskSupport: 'required',
      // MRTR rounds on the request, before the task exists (SEP-2663).
      gate: (_a, ctx) =>
        answer(ctx, 'user_name') !== undefined
          ? {}
          : inputRequired({ user_name: elicit('What is your name?', { name: { type: 'string' } }) }),
    },
    async (_a, ctx) => {
      await work(200, ctx.signal);
      return text(`Hello, ${str(answer(ctx, 'user_name')?.name, 'stranger')}!`);
    },
  );
}
