// Tool schemas from schema libraries: any Standard Schema with a JSON Schema export, zod 4 (also
// zod 3.25's `zod/v4`, through zod's converter), and zod 3's clear refusal. Served over real
// Streamable HTTP on 127.0.0.1 in both eras.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z as z3 } from 'zod3';
import { z as z4of3 } from 'zod3/v4';
import { Client, Server } from '../lib/index.js';

/** A hand-written Standard Schema (v1) with the Standard JSON Schema export: an object whose
 * `n` is an even integer; validation is async and reports a path. */
const evenSchema = {
  '~standard': {
    version: 1,
    vendor: 'handmade',
    validate: async (v) =>
      Number.isInteger(v?.n) && v.n % 2 === 0
        ? { value: { n: v.n, half: v.n / 2 } }
        : { issues: [{ message: 'must be even', path: [{ key: 'n' }] }] },
    jsonSchema: {
      input: ({ target }) => {
        assert.equal(target, 'draft-2020-12');
        return { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
      },
      output: () => ({ type: 'object', properties: { half: { type: 'integer' } }, required: ['half'] }),
    },
  },
};

function makeServer() {
  const s = new Server({ name: 'schemas', version: '1' });
  s.tool({ name: 'even', inputSchema: evenSchema, outputSchema: evenSchema }, ({ half }) => ({ half }));
  s.tool({ name: 'v4of3', inputSchema: z4of3.object({ word: z4of3.string().min(3) }) }, ({ word }) => word.toUpperCase());
  return s;
}

for (const mode of ['legacy', 'modern']) {
  test(`Standard Schema tools: exported JSON Schema, validate() issues as the invalid-arguments result (${mode})`, async (t) => {
    const h = await makeServer().listenHttp({ port: 0 });
    const c = await Client.connectHttp(h.url, { mode });
    t.after(async () => {
      await c.close();
      await h.close();
    });
    const tools = Object.fromEntries((await c.listTools()).map((x) => [x.name, x]));
    assert.deepEqual(tools.even.inputSchema.required, ['n']);
    assert.deepEqual(tools.even.outputSchema.required, ['half']);
    assert.equal(tools.v4of3.inputSchema.properties.word.minLength, 3);
    // The handler gets the library's parsed value (`half` added by validate()).
    assert.deepEqual((await c.callTool('even', { n: 8 })).structuredContent, { half: 4 });
    const odd = await c.callTool('even', { n: 7 });
    assert.equal(odd.isError, true);
    assert.equal(odd.content[0].text, 'Invalid arguments for tool even: n: must be even');
    assert.equal((await c.callTool('v4of3', { word: 'abc' })).content[0].text, 'ABC');
    assert.equal((await c.callTool('v4of3', { word: 'ab' })).isError, true);
  });
}

test('a zod 3 schema, or a Standard Schema without a JSON Schema export, is refused with a TypeError', () => {
  const s = new Server({ name: 'x', version: '1' });
  assert.throws(
    () => s.tool({ name: 'old', inputSchema: z3.object({ a: z3.string() }) }, () => 'x'),
    (e) => e instanceof TypeError && /zod 3 schema cannot export JSON Schema; use zod 4/.test(e.message),
  );
  const noExport = { '~standard': { version: 1, vendor: 'valibot', validate: (v) => ({ value: v }) } };
  assert.throws(
    () => s.tool({ name: 'nox', inputSchema: noExport }, () => 'x'),
    (e) => e instanceof TypeError && /vendor "valibot"\) has no JSON Schema export/.test(e.message),
  );
  const notObject = { '~standard': { version: 1, vendor: 'v', validate: (v) => ({ value: v }), jsonSchema: { input: () => 'string' } } };
  assert.throws(() => s.tool({ name: 'str', inputSchema: notObject }, () => 'x'), /exported string, not an object/);
});
