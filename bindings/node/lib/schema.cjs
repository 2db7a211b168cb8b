'use strict';
// Tool schemas given as schema-library objects: any Standard Schema (https://standardschema.dev)
// that can export JSON Schema (the Standard JSON Schema interface, `~standard.jsonSchema`), or a
// zod 4 schema (through the optional peer `zod`'s `toJSONSchema`). The exported JSON Schema is
// what core registers, checks against the 2020-12 metaschema and validates arguments with
// (JSS-01…03); the library's own `~standard.validate` then runs too, and what it refuses gets
// core's invalid-arguments result (TOOL-07). A plain object is a JSON Schema as is.

const TARGET = 'draft-2020-12';

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

/** True for a Standard Schema (`~standard.validate`). */
function isStandard(s) {
  const std = s?.['~standard'];
  return std != null && typeof std === 'object' && typeof std.validate === 'function';
}

/** zod 4's own converter, when the optional peer is installed (null otherwise). */
function zodToJSONSchema() {
  try {
    const z = require('zod');
    return typeof z.toJSONSchema === 'function' ? z.toJSONSchema : null;
  } catch {
    return null;
  }
}

/**
 * The JSON Schema of `schema` for `io` ("input" for `inputSchema`, "output" for
 * `outputSchema`). `where` names the field in errors.
 */
function exportSchema(schema, io, where) {
  const std = schema['~standard'];
  const js = std?.jsonSchema;
  if (js && typeof js[io] === 'function') return js[io]({ target: TARGET });
  if (schema._zod !== undefined) {
    // zod 4 before its Standard JSON Schema support: its converter.
    const convert = zodToJSONSchema();
    if (!convert) {
      throw new TypeError(`${where}: a zod 4 schema needs the \`zod\` package to export JSON Schema (npm install zod)`);
    }
    return convert(schema, { target: TARGET, io });
  }
  if (std?.vendor === 'zod' || schema._def !== undefined) {
    throw new TypeError(
      `${where}: this zod 3 schema cannot export JSON Schema; use zod 4 (\`import { z } from 'zod'\` with zod >= 4, or 'zod/v4' from zod 3.25) or pass a JSON Schema object`,
    );
  }
  throw new TypeError(
    `${where}: this Standard Schema (vendor ${JSON.stringify(std?.vendor)}) has no JSON Schema export (\`~standard.jsonSchema\`); pass a JSON Schema object instead`,
  );
}

/**
 * `def` with its `inputSchema`/`outputSchema` as JSON Schema, and the Standard Schema that
 * validates arguments (null when the input schema is plain JSON Schema).
 */
function resolveToolSchemas(def) {
  let validator = null;
  const out = { ...def };
  for (const [key, io] of [['inputSchema', 'input'], ['outputSchema', 'output']]) {
    const s = def[key];
    if (s === undefined) continue;
    if (isStandard(s)) {
      const json = exportSchema(s, io, `tool ${def.name} ${key}`);
      if (!isPlainObject(json)) throw new TypeError(`tool ${def.name} ${key}: the schema exported ${typeof json}, not an object`);
      out[key] = json;
      if (key === 'inputSchema') validator = s;
    } else if (!isPlainObject(s)) {
      throw new TypeError(`tool ${def.name} ${key} must be a JSON Schema object or a Standard Schema, not ${s === null ? 'null' : typeof s}`);
    }
  }
  return { def: out, validator };
}

/** A Standard Schema issue list as one line (`path: message; …`). */
function describeIssues(issues) {
  return issues
    .map((i) => {
      const path = (i.path ?? []).map((p) => (typeof p === 'object' && p !== null ? p.key : p));
      return path.length ? `${path.join('.')}: ${i.message}` : i.message;
    })
    .join('; ');
}

/** Run `~standard.validate`: `{value}` (the library's parsed value) or `{invalid: reason}`. */
async function validate(schema, value) {
  const r = await schema['~standard'].validate(value);
  if (r.issues) return { invalid: describeIssues(r.issues) || 'invalid arguments' };
  return { value: r.value };
}

module.exports = { resolveToolSchemas, validate, isPlainObject };
