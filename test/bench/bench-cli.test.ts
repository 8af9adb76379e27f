import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const BENCH = new URL('../../scripts/bench.ts', import.meta.url).pathname;
// A PATH with nothing on it: every tool the benchmarks look up there is missing (sbin is still searched).
const emptyBin = mkdtempSync(join(tmpdir(), 'bench-empty-path-'));
afterAll(() => rmSync(emptyBin, { recursive: true, force: true }));

async function bench(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BENCH, ...args], {
      env: { ...process.env, ...env },
      timeout: 280_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Runs the benchmark CLI and expects it to refuse with exit 2, its stderr naming each of `named`. */
async function refused(args: string[], named: string[], env: Record<string, string> = {}) {
  const r = await bench(args, env);
  expect(r.code).toBe(2);
  for (const text of named) expect(r.stderr).toContain(text);
  return r;
}

describe('npm run bench', () => {
  it('stops with exit 2, naming the missing Debian packages and how to install them, before building anything', {
    timeout: 300_000,
  }, async () => {
    const r = await refused(
      ['api', '--concurrency', '1', '--duration', '1'],
      ['prometheus-blackbox-exporter', 'apt-get install -y', 'wrk'],
      { PATH: emptyBin },
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe('');
  });

  it("prometheus: stops with exit 2 naming Debian's prometheus when it is not installed", async () => {
    const r = await refused(['prometheus', '--steps', '200,400', '--window', '30'], ['apt-get install -y prometheus'], {
      PATH: emptyBin,
    });
    expect(r.stdout).toBe('');
  });

  it('prometheus: refuses steps that do not rise, and a window shorter than two intervals, with exit 2', async () => {
    await refused(['prometheus', '--steps', '400,200'], ['--steps "400,200"']);
    await refused(['prometheus', '--window', '5'], ['--window 5']);
  });

  it('refuses a flag that is not a positive number with exit 2, naming the flag', async () => {
    const r = await refused(['scrub', '--mb', '0'], ['--mb']);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses an unknown flag with exit 2', async () => {
    await refused(['scrub', '--megabytes', '1'], ['--megabytes']);
  });

  it('stops with exit 2 when the runtime a benchmark needs is not installed, saying how to install it', async () => {
    await refused(
      ['sandbox', '--runs', '1', '--runtime', '1999.01'],
      ['runtime 1999.01 is not installed', 'npm run runtimes:install'],
    );
  });

  it('refuses --runs that is not a positive whole number with exit 2', async () => {
    await refused(['sandbox', '--runs', 'many'], ['--runs']);
  });

  it('records the machine and its load average, at start and at end, in every JSON line', async () => {
    const r = await bench(['scrub', '--mb', '1', '--secrets', '2', '--rounds', '1']);
    expect(r.code).toBe(0);
    const line = JSON.parse(r.stdout) as {
      bench: string;
      machine: { cpus: number; node: string; loadAverage: { start: number[]; end: number[] } };
    };
    expect(line.bench).toBe('scrub');
    expect(line.machine.cpus).toBeGreaterThan(0);
    expect(line.machine.node).toBe(process.version);
    expect(line.machine.loadAverage.start).toHaveLength(3);
    expect(line.machine.loadAverage.end).toHaveLength(3);
  });
});
