/**
 * scripts/postgres-test-cluster.sh, as .ci/run and developers use it: `start` prints exports for a
 * running throwaway cluster on 127.0.0.1 only, with durability off; `stop` stops it and removes its
 * folder. Needs Debian's PostgreSQL server binaries; under CI (which installs them) it always runs.
 */
import { execFile } from 'node:child_process';
import { existsSync, globSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const SCRIPT = path.join(import.meta.dirname, '..', '..', 'scripts', 'postgres-test-cluster.sh');
const haveServer = globSync('/usr/lib/postgresql/*/bin/initdb').length > 0;

/** The variables `start` exports, read from its `export NAME=value` lines. */
function exportsOf(stdout: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const m of stdout.matchAll(/^export (\w+)=(.*)$/gm)) vars[m[1]!] = m[2]!.replace(/^'(.*)'$/, '$1');
  return vars;
}

it.skipIf(!haveServer && !process.env.CI)(
  'starts a throwaway cluster on loopback with durability off, and stop removes it',
  { timeout: 120_000 },
  async () => {
    const { stdout } = await run('bash', [SCRIPT, 'start']);
    const vars = exportsOf(stdout);
    const dir = vars.OUTPOST_TEST_POSTGRES_DIR!;
    try {
      expect(vars.OUTPOST_TEST_DATABASE_URL).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
      const client = new pg.Client({ connectionString: vars.OUTPOST_TEST_DATABASE_URL });
      await client.connect();
      const { rows } = await client.query<{ name: string; setting: string }>(
        "SELECT name, setting FROM pg_settings WHERE name IN ('listen_addresses', 'fsync', 'synchronous_commit', 'full_page_writes', 'max_connections', 'unix_socket_directories') ORDER BY name",
      );
      await client.end();
      expect(Object.fromEntries(rows.map((r) => [r.name, r.setting]))).toEqual({
        fsync: 'off',
        full_page_writes: 'off',
        listen_addresses: '127.0.0.1',
        max_connections: '300',
        synchronous_commit: 'off',
        unix_socket_directories: dir,
      });
    } finally {
      await run('bash', [SCRIPT, 'stop', dir]);
    }
    expect(existsSync(dir)).toBe(false);
  },
);
