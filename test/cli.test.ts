/** The CLI as an operator meets it: real `bin/outpost` processes, exit codes and the one-line errors. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = path.resolve(import.meta.dirname, '../bin/outpost');
const VERSION = (
  JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../package.json'), 'utf8')) as { version: string }
).version;
const dataDir = mkdtempSync(path.join(tmpdir(), 'outpost-cli-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function outpost(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)(BIN, args, {
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('outpost CLI', () => {
  it('prints its version and help', async () => {
    expect(await outpost(['--version'])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    const help = await outpost(['--help']);
    expect(help.code).toBe(0);
    for (const word of ['serve', 'agent', 'account create', 'demo', 'backup FILE']) expect(help.stdout).toContain(word);
  });

  it('creates an account and prints one JSON line with its id and key', async () => {
    const { code, stdout } = await outpost(['account', 'create', '--name', 'Platform team']);
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0]!) as Record<string, string>;
    expect(Object.keys(created).sort()).toEqual(['accountId', 'apiKey']);
    expect(created.apiKey).toMatch(/^op_/);
  });

  // Each bad flag or value: exit 2 and exactly one line that names it and says what is allowed.
  const bad: Array<[string, string[], Record<string, string>, RegExp]> = [
    ['an unknown command', ['launch'], {}, /unknown command "launch".*serve/],
    ['an unknown flag', ['account', 'create', '--nmae', 'x'], {}, /--nmae/],
    ['a missing --name', ['account', 'create'], {}, /--name/],
    ['a bad demo duration', ['demo', '--duration', 'soon'], {}, /--duration.*whole number/],
    ['a bad PORT', ['serve'], { PORT: 'eighty' }, /PORT=.*integer from 0 to 65535/],
    ['a bad LOG_LEVEL', ['serve'], { LOG_LEVEL: 'loud' }, /LOG_LEVEL=.*DEBUG, LOG, INFO, WARN, ERROR/],
    [
      'a DATABASE_URL of another database',
      ['serve'],
      { DATABASE_URL: 'mysql://db/outpost' },
      /DATABASE_URL .*"mysql:".*postgres:\/\/ or postgresql:\/\//,
    ],
    [
      'a bad ALERT_PAGERDUTY_EVENTS_URL',
      ['serve'],
      { ALERT_PAGERDUTY_EVENTS_URL: 'events.local/v2' },
      /ALERT_PAGERDUTY_EVENTS_URL=/,
    ],
    ['a missing API_KEY', ['agent'], {}, /API_KEY is required/],
    ['a key of the wrong kind', ['agent'], { API_KEY: 'op_user_key' }, /API_KEY .*pl_/],
    ['a bad JOB_CONCURRENCY', ['agent'], { API_KEY: 'pl_x', JOB_CONCURRENCY: '50' }, /JOB_CONCURRENCY=50.*1 to 10/],
    [
      'a bad EXTERNAL_OBSERVABILITY',
      ['agent'],
      { API_KEY: 'pl_x', EXTERNAL_OBSERVABILITY: 'maybe' },
      /EXTERNAL_OBSERVABILITY=.*on or off/,
    ],
    ['a bad API_URL', ['agent'], { API_KEY: 'pl_x', API_URL: 'service:8080' }, /API_URL=.*http/],
  ];
  it.each(bad)('rejects %s with exit 2 and one clear line', async (_what, args, env, pattern) => {
    const { code, stderr, stdout } = await outpost(args, env);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^outpost: /);
    expect(lines[0]).toMatch(pattern);
  });

  it('ends the agent with exit 3 and a clear message when the service rejects its key', async () => {
    const { startService } = await import('./e2e/harness.ts');
    const service = await startService({ DATA_DIR: dataDir });
    try {
      const { code, stdout, stderr } = await outpost(['agent'], {
        API_KEY: 'pl_0000000000000000000000000000000000000000000000000000000000000000',
        API_URL: service.url,
        AGENT_HEALTH_PORT: '0',
        EXTERNAL_OBSERVABILITY: 'off',
      });
      expect(code).toBe(3);
      expect(`${stdout}${stderr}`).toMatch(/API_KEY was rejected by the service/);
      expect(`${stdout}${stderr}`).not.toContain('pl_0000000000');
    } finally {
      await service.proc.stop();
    }
  });

  it('runs the demo: service, agent and sample checks, and shows a result of each', async () => {
    const demoDir = path.join(dataDir, 'demo');
    const { code, stdout } = await outpost(['demo', '--duration', '20'], { PORT: '0', DATA_DIR: demoDir });
    expect(code, stdout).toBe(0);
    expect(stdout).toContain('curl -s -H');
    expect(stdout).toMatch(/^PASS +Demo: target is up/m);
    expect(stdout).toMatch(/^DEGRADED +Demo: slow endpoint/m);
    expect(stdout).toMatch(/^FAIL +Demo: broken endpoint/m);
    expect(stdout).toMatch(/3 of 3 sample checks have results/);
    // A generous run: on a busy CI machine the agent process alone can take several seconds to start.
  }, 120_000);
});
