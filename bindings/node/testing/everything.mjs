// (Outside test/: a helper, not a test file.) The official `@modelcontextprotocol/server-everything`,
// pinned as the Rust tests pin it (cli/tests/everything.rs), installed from npm once into the cache
// they share (~/.cache/mcpcore/npm). A failed install throws: the test fails, never skips.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const NAME = '@modelcontextprotocol/server-everything';
const VERSION = '2026.8.31';

/** The server's entry script (`node <entry> stdio`). */
export function everythingEntry() {
  const root = join(homedir(), '.cache', 'mcpcore', 'npm');
  const dir = join(root, `${NAME.replace('/', '+')}@${VERSION}`);
  const entry = join(dir, 'node_modules', NAME, 'dist', 'index.js');
  if (existsSync(entry)) return entry;
  mkdirSync(root, { recursive: true });
  const staging = mkdtempSync(join(root, '.staging-node-'));
  try {
    writeFileSync(join(staging, 'package.json'), '{"private":true}');
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', `${NAME}@${VERSION}`], {
      cwd: staging,
      encoding: 'utf8',
      timeout: 300_000,
    });
    if (r.status !== 0) throw new Error(`npm install of ${NAME} failed: ${r.stderr}`);
    try {
      renameSync(staging, dir);
    } catch (e) {
      if (!existsSync(entry)) throw e; // another process finished first
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return entry;
}
