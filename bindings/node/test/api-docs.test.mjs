// The API reference of the Node package is its type declarations: every export of
// lib/index.d.ts carries a doc comment (`/** … */` right above it), which editors show on hover.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

/** The exports of a .d.ts text that have no doc comment right above them. */
export function undocumented(text) {
  const lines = text.split('\n');
  const missing = [];
  lines.forEach((line, i) => {
    if (!line.startsWith('export ')) return;
    let j = i - 1;
    while (j >= 0 && lines[j].trim() === '') j--;
    if (j < 0 || !lines[j].trim().endsWith('*/')) missing.push(line.slice(0, 80));
  });
  return missing;
}

test('every export of lib/index.d.ts has a doc comment', () => {
  const text = readFileSync(new URL('../lib/index.d.ts', import.meta.url), 'utf8');
  assert.deepEqual(undocumented(text), []);
});

test('the check sees a missing doc comment', () => {
  const text = '/** Documented. */\nexport type A = 1;\n\nexport type B = 2;\n';
  assert.deepEqual(undocumented(text), ['export type B = 2;']);
});
