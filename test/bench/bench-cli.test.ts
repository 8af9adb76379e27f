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

describe('npm run bench', () => {
  it('stops with exit 2, naming the missing Debian packages and how to install them, before building anything', {
    timeout: 300_000,
  }, async () => {
    const r = await bench(['api', '--concurrency', '1', '--duration', '1'], { PATH: emptyBin });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('prometheus-blackbox-exporter');
    expect(r.stderr).toContain('apt-get install -y');
    expect(r.stderr).toContain('wrk');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe('');
  });

  it("prometheus: stops with exit 2 naming Debian's prometheus when it is not installed", async () => {
    const r = await bench(['prometheus', '--steps', '200,400', '--window', '30'], { PATH: emptyBin });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('apt-get install -y prometheus');
    expect(r.stdout).toBe('');
  });

  it('prometheus: refuses steps that do not rise, and a window shorter than two intervals, with exit 2', async () => {
    const steps = await bench(['prometheus', '--steps', '400,200']);
    expect(steps.code).toBe(2);
    expect(steps.stderr).toContain('--steps "400,200"');
    const window = await bench(['prometheus', '--window', '5']);
    expect(window.code).toBe(2);
    expect(window.stderr).toContain('--window 5');
  });

  it('refuses a flag that is not a positive number with exit 2, naming the flag', async () => {
    const r = await bench(['scrub', '--mb', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--mb');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses an unknown flag with exit 2', async () => {
    const r = await bench(['scrub', '--megabytes', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--megabytes');
  });

  it('stops with exit 2 when the runtime a benchmark needs is not installed, saying how to install it', async () => {
    const r = await bench(['sandbox', '--runs', '1', '--runtime', '1999.01']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('runtime 1999.01 is not installed');
    expect(r.stderr).toContain('npm run runtimes:install');
  });

  it('refuses --runs that is not a positive whole number with exit 2', async () => {
    const r = await bench(['sandbox', '--runs', 'many']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--runs');
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
