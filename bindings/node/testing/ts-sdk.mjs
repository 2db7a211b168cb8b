// (Outside test/: a helper, not a test file.) Pinned releases of the official TypeScript MCP SDK,
// installed from npm into a cache under $HOME (never inside the repository) on first use:
// `@modelcontextprotocol/client` 2.x (both eras) and `@modelcontextprotocol/sdk` 1.x (legacy era
// only). A finished install is renamed into place whole, so concurrent test processes never see
// half of one. Installation failures throw: an interop test without its SDK fails, never skips.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The pins (exact versions; the Rust interop test, tests/src/interop.rs, pins the same 1.x). */
export const PINS = {
  '@modelcontextprotocol/client': '2.4.0',
  '@modelcontextprotocol/sdk': '1.32.2',
  zod: '4.6.7',
};

/** Bound of one `npm install`. */
const NPM_TIMEOUT_MS = 300_000;

function key() {
  return `client-${PINS['@modelcontextprotocol/client']}-sdk-${PINS['@modelcontextprotocol/sdk']}-zod-${PINS.zod}`;
}

function ready(dir) {
  return Object.keys(PINS).every((p) => existsSync(join(dir, 'node_modules', p, 'package.json')));
}

/** The install directory (installing it first if needed). */
export function sdkDir() {
  const root = process.env.MCPCORE_TS_SDK_DIR ?? join(homedir(), '.cache', 'mcpcore', 'ts-sdk-node');
  const dir = join(root, key());
  if (ready(dir)) return dir;
  mkdirSync(root, { recursive: true });
  const staging = mkdtempSync(join(root, '.staging-'));
  try {
    const pkg = { name: 'mcpcore-ts-sdk-node', private: true, version: '0.0.0', type: 'module', dependencies: PINS };
    writeFileSync(join(staging, 'package.json'), JSON.stringify(pkg));
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const r = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], {
      cwd: staging,
      encoding: 'utf8',
      timeout: NPM_TIMEOUT_MS,
    });
    if (r.status !== 0) {
      throw new Error(`npm install of the TypeScript SDK failed (${r.error ?? `status ${r.status}`}):\n${r.stderr}`);
    }
    if (!ready(staging)) throw new Error('npm install finished but the SDK packages are missing');
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(staging, dir);
    } catch (e) {
      // Another process finished first: use its install.
      if (!ready(dir)) throw e;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}

/** `import()` of a module resolved from the SDK install (`@modelcontextprotocol/client`, …):
 * through a one-line module inside the install, so Node resolves the packages' ESM exports. */
export async function importSdk(specifier) {
  const dir = sdkDir();
  const loader = join(dir, 'load.mjs');
  if (!existsSync(loader)) writeFileSync(loader, 'export const load = (s) => import(s);\n');
  const { load } = await import(pathToFileURL(loader).href);
  return load(specifier);
}

/** The SDK line's client classes (`v2`: `@modelcontextprotocol/client`; `v1`:
 * `@modelcontextprotocol/sdk`, whose request handlers take a schema: `ElicitRequestSchema`). */
export async function sdkLine(line) {
  if (line === 'v2') {
    const m = await importSdk('@modelcontextprotocol/client');
    const { StdioClientTransport } = await importSdk('@modelcontextprotocol/client/stdio');
    return { Client: m.Client, Http: m.StreamableHTTPClientTransport, Stdio: StdioClientTransport };
  }
  const { Client } = await importSdk('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await importSdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { StdioClientTransport } = await importSdk('@modelcontextprotocol/sdk/client/stdio.js');
  const { ElicitRequestSchema } = await importSdk('@modelcontextprotocol/sdk/types.js');
  return { Client, Http: StreamableHTTPClientTransport, Stdio: StdioClientTransport, ElicitRequestSchema };
}
