/**
 * The agent's malloc settings (bin/agent-env): bin/outpost gives them to the agent as defaults that an
 * operator's own values override, and the Dockerfile sets the same pairs as ENV.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readAgentEnvFile } from '../../scripts/bench/_dist.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'outpost-agent-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `bin/outpost <args>` with a preload that prints the malloc variables the Node process got. */
function envSeenBy(args: string[], env: Record<string, string>): Promise<Record<string, string | null>> {
  const preload = path.join(dir, 'print-env.cjs');
  writeFileSync(
    preload,
    `process.stderr.write('ENV ' + JSON.stringify({ MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? null, MALLOC_TRIM_THRESHOLD_: process.env.MALLOC_TRIM_THRESHOLD_ ?? null }) + '\\n');`,
  );
  return new Promise((resolve, reject) => {
    // No API_KEY: the agent stops at its configuration check (exit 2) right after the preload printed.
    execFile(
      path.join(ROOT, 'bin/outpost'),
      args,
      { env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: `--require ${preload}`, ...env } },
      (_err, _stdout, stderr) => {
        // The last one: bin/outpost first runs node once to read its version.
        const line = stderr
          .split('\n')
          .filter((l) => l.startsWith('ENV '))
          .at(-1);
        if (!line) reject(new Error(`no ENV line in:\n${stderr}`));
        else resolve(JSON.parse(line.slice(4)) as Record<string, string | null>);
      },
    );
  });
}

describe('agent malloc settings (bin/agent-env)', () => {
  const pairs = readAgentEnvFile();

  it('names glibc malloc variables only', () => {
    expect(pairs.map(([key]) => key)).toEqual(['MALLOC_ARENA_MAX', 'MALLOC_TRIM_THRESHOLD_']);
    for (const [, value] of pairs) expect(value).toMatch(/^\d+$/);
  });

  it('bin/outpost gives them to the agent', async () => {
    expect(await envSeenBy(['agent'], {})).toEqual(Object.fromEntries(pairs));
  });

  it("keeps an operator's own value", async () => {
    expect(await envSeenBy(['agent'], { MALLOC_ARENA_MAX: '8' })).toEqual({
      ...Object.fromEntries(pairs),
      MALLOC_ARENA_MAX: '8',
    });
  });

  it('leaves the other commands alone', async () => {
    expect(await envSeenBy(['serve'], { PORT: 'not-a-port' })).toEqual({
      MALLOC_ARENA_MAX: null,
      MALLOC_TRIM_THRESHOLD_: null,
    });
  });

  it('the Dockerfile sets the same pairs as ENV', () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    for (const [key, value] of pairs)
      expect(dockerfile).toMatch(new RegExp(`ENV[^\\n]*\\n?\\s*${key}=${value}\\b|ENV ${key}=${value}\\b`));
  });
});
