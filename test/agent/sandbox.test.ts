/**
 * The sandbox with real child processes on the real runtimes (npm run runtimes:install): hostile
 * scripts are contained with a clear outcome, nothing of the agent's environment or files reaches
 * them, and everything they start is gone afterwards.
 */

import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHealthServer } from '../../src/agent/health.ts';
import { defaultRuntimesDir, discoverRuntimes, type Runtime } from '../../src/agent/runtimes.ts';
import { SANDBOX_MARKER_VAR } from '../../src/agent/sandbox/env.ts';
import { RuntimeUnavailableError, SandboxStartError } from '../../src/agent/sandbox/errors.ts';
import { SandboxPool } from '../../src/agent/sandbox/pool.ts';
import { SandboxProcess } from '../../src/agent/sandbox/process.ts';
import { findSandboxProcesses } from '../../src/agent/sandbox/procfs.ts';
import { DEFAULT_SANDBOX_LIMITS, type StepOutcome } from '../../src/agent/sandbox/types.ts';
import { readyHealthSource } from '../support/health-source.ts';
import { tempDir } from './helpers.ts';

const AGENT_KEY = `pl_sandbox_canary_${randomUUID()}`;
const PROXY_SECRET = `proxypass${randomUUID().slice(0, 8)}`;

let runtimes: Runtime[];
let pool: SandboxPool;
const saved = { API_KEY: process.env.API_KEY, HTTPS_PROXY: process.env.HTTPS_PROXY };

beforeAll(async () => {
  // The agent's own environment holds its key and proxy credentials; none may reach a sandbox.
  process.env.API_KEY = AGENT_KEY;
  process.env.HTTPS_PROXY = `http://user:${PROXY_SECRET}@127.0.0.1:3128`;
  const found = await discoverRuntimes(defaultRuntimesDir());
  runtimes = found.runtimes;
  // Not a skip: CI installs the runtimes (npm run runtimes:install), so their absence is a failure.
  expect(
    runtimes.map((r) => r.id),
    'run npm run runtimes:install',
  ).toEqual(['2026.04', '2025.04']);
  pool = new SandboxPool({ runtimes, size: 2, limits: { rssMb: 256, heapMb: 128 } });
  await pool.fill();
});

afterAll(async () => {
  await pool?.close();
  process.env.API_KEY = saved.API_KEY;
  process.env.HTTPS_PROXY = saved.HTTPS_PROXY;
  if (saved.API_KEY === undefined) delete process.env.API_KEY;
  if (saved.HTTPS_PROXY === undefined) delete process.env.HTTPS_PROXY;
});

interface Ran {
  outcome: StepOutcome;
  log: string;
  sandbox: SandboxProcess;
}

async function runScript(
  code: string,
  opts: { runtime?: string; timeoutMs?: number; env?: Record<string, string>; sandbox?: SandboxProcess } = {},
): Promise<Ran> {
  const sandbox = opts.sandbox ?? (await pool.acquire(opts.runtime ?? '2026.04'));
  try {
    const outcome = await sandbox.run(
      {
        stage: 'setup',
        filename: 'setup.js',
        code,
        env: opts.env ?? {},
        context: { request: { method: 'GET', url: 'http://x/', headers: {}, queryParameters: {}, body: '' } },
      },
      { timeoutMs: opts.timeoutMs ?? 10_000 },
    );
    sandbox.finish();
    const log = sandbox
      .output()
      .lines.map((l) => `${l.stream}: ${l.msg}`)
      .join('\n');
    return { outcome, log, sandbox };
  } finally {
    await sandbox.dispose();
  }
}

/** Processes still alive that belong to the sandbox (by tree, job folder or marker). */
function leftovers(sandbox: SandboxProcess): number[] {
  return findSandboxProcesses({
    rootPid: undefined,
    jobDir: sandbox.jobDir,
    envMarker: `${SANDBOX_MARKER_VAR}=${sandbox.id}`,
  });
}

describe('sandbox: environment, folder and runtimes', () => {
  it('runs in a fresh 0700 job folder (cwd, HOME, TMPDIR) with only the allowlisted environment; the folder is removed after', async () => {
    const sandbox = await pool.acquire('2026.04');
    const mode = statSync(sandbox.jobDir).mode & 0o777;
    expect(mode).toBe(0o700);
    expect(sandbox.jobDir.startsWith(path.join(os.tmpdir(), 'outpost-jobs'))).toBe(true);
    const { outcome, log } = await runScript(
      `require('fs').writeFileSync('note.txt', 'ok');
       console.log(JSON.stringify({ cwd: process.cwd(), env: process.env }));`,
      { sandbox, env: { MY_VAR: 'from-the-check' } },
    );
    expect(outcome.kind).toBe('ok');
    const seen = JSON.parse(log.replace(/^stdout: /, '')) as { cwd: string; env: Record<string, string> };
    expect(seen.cwd).toBe(sandbox.jobDir);
    expect(seen.env.HOME).toBe(sandbox.jobDir);
    expect(seen.env.TMPDIR).toBe(sandbox.jobDir);
    expect(seen.env.MY_VAR).toBe('from-the-check');
    expect(Object.keys(seen.env).sort()).toEqual(
      ['HOME', 'LANG', 'MY_VAR', 'NODE_OPTIONS', SANDBOX_MARKER_VAR, 'PATH', 'TMPDIR', 'TZ'].sort(),
    );
    expect(seen.env.NODE_OPTIONS).toBe('');
    // Nothing of the agent's environment: not its key, not its proxy or the proxy's password.
    expect(log).not.toContain(AGENT_KEY);
    expect(log).not.toContain(PROXY_SECRET);
    expect(log).not.toContain('HTTPS_PROXY');
    expect(existsSync(sandbox.jobDir)).toBe(false);
  });

  it('selects the runtime: 2025.04 runs Node 22, 2026.04 runs Node 24, with the runtime libraries', async () => {
    const code = `const _ = require('lodash'); const { v4 } = require('uuid'); require('axios'); require('jsonwebtoken'); require('jose');
      require('@faker-js/faker'); require('expect'); require('form-data'); require('ws'); require('zod'); require('dotenv');
      require('otpauth'); require('crypto-js'); require('moment'); require('date-fns');
      console.log(process.version, _.isString(v4()));`;
    const old = await runScript(code, { runtime: '2025.04' });
    const current = await runScript(code, { runtime: '2026.04' });
    expect(old.outcome.kind).toBe('ok');
    expect(current.outcome.kind).toBe('ok');
    expect(old.log).toMatch(/^stdout: v22\.\d+\.\d+ true$/);
    expect(current.log).toMatch(/^stdout: v24\.\d+\.\d+ true$/);
  });

  it('an unknown runtime is refused with the runtimes the agent carries', async () => {
    const err = await pool.acquire('2024.09').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RuntimeUnavailableError);
    expect((err as Error).message).toBe('runtime 2024.09 is not available on this agent; it carries 2026.04, 2025.04');
  });

  it('a script error names the error and the line of the user script', async () => {
    const { outcome } = await runScript(`const a = 1;\nconst b = 2;\nnull.boom;`);
    expect(outcome).toMatchObject({ kind: 'script-error', error: { name: 'TypeError', line: 3 } });
    if (outcome.kind === 'script-error') expect(outcome.error.stack ?? '').not.toContain('bootstrap');
  });

  it('caps output and says how much was dropped', async () => {
    const { outcome, sandbox } = await runScript(`for (let i = 0; i < 20000; i++) console.log('x'.repeat(100));`);
    expect(outcome.kind).toBe('ok');
    const out = sandbox.output();
    expect(out.truncated).toBe(true);
    expect(out.lines.at(-1)?.msg).toMatch(
      /^\[output truncated: \d+ more bytes were dropped past the 262144-byte cap\]$/,
    );
    expect(out.lines.reduce((n, l) => n + l.msg.length + 1, 0)).toBeLessThan(DEFAULT_SANDBOX_LIMITS.outputBytes + 200);
  });
});

describe('sandbox: hostile scripts', () => {
  it('an endless loop is stopped at its time limit', async () => {
    const t0 = performance.now();
    const { outcome, sandbox } = await runScript('while (true) {}', { timeoutMs: 1_000 });
    expect(outcome).toEqual({ kind: 'timeout', limitMs: 1_000 });
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(leftovers(sandbox)).toEqual([]);
  });

  it('allocating 10 GB on the heap hits the V8 heap cap', async () => {
    const { outcome } = await runScript(
      'const keep = []; for (let i = 0; i < 10 * 1024; i++) keep.push(new Array(128 * 1024).fill(i + 0.5));',
    );
    expect(outcome.kind).toBe('memory');
    if (outcome.kind === 'memory') expect(outcome.detail).toContain('heap limit of 128 MB');
  });

  it('allocating 10 GB outside the heap is stopped by the RSS watchdog', async () => {
    const { outcome } = await runScript(
      'const keep = []; for (let i = 0; i < 10 * 1024; i++) keep.push(Buffer.alloc(1024 * 1024, 1));',
    );
    expect(outcome.kind).toBe('memory');
    if (outcome.kind === 'memory')
      expect(outcome.detail).toMatch(/resident memory reached \d+ MB, over the limit of 256 MB/);
  });

  it('a fork bomb cannot start: no child processes under the permission model', async () => {
    const { outcome } = await runScript(`const { fork } = require('child_process'); while (true) fork(__filename);`);
    expect(outcome).toMatchObject({ kind: 'script-error', error: { line: 1 } });
    if (outcome.kind === 'script-error') expect(outcome.error.message).toMatch(/--allow-child-process/);
  });

  it('spawning a process, a worker or loading an addon is denied', async () => {
    for (const code of [
      `require('child_process').execSync('id')`,
      `new (require('worker_threads').Worker)('1', { eval: true })`,
      `process.dlopen({ exports: {} }, '/usr/lib/x86_64-linux-gnu/libc.so.6')`,
    ]) {
      const { outcome } = await runScript(code);
      expect(outcome.kind, code).toBe('script-error');
      if (outcome.kind === 'script-error')
        expect(outcome.error.message, code).toMatch(
          /Access to this API has been restricted|loading addons is disabled/,
        );
    }
  });

  it('with the permission model off, a fork bomb that leaves the process group is still killed to the last process', async () => {
    const runtime = runtimes[0]!;
    const sandbox = await SandboxProcess.start({
      runtime,
      limits: { ...DEFAULT_SANDBOX_LIMITS, rssMb: 2048 },
      permissions: false,
    });
    await sandbox.ready();
    // Children in new sessions (detached: setsid), grandchildren of a shell loop, all sleeping.
    const code = `const { spawn } = require('child_process');
      for (let i = 0; i < 10; i++) spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' }).unref();
      spawn('sh', ['-c', 'while true; do sleep 1000 & sleep 0.05; done'], { detached: true, stdio: 'ignore' }).unref();
      await new Promise((r) => setTimeout(r, 400));
      console.log('spawned');
      while (true) {}`;
    const { outcome } = await runScript(code, { sandbox, timeoutMs: 1_500 });
    expect(outcome.kind).toBe('timeout');
    expect(leftovers(sandbox)).toEqual([]);
  });

  it('cannot read its own environ, the agent process, or the agent files; cannot write outside the job folder', async () => {
    const outside = path.join(tempDir('outpost-escape-'), 'escaped.txt');
    const code = `const fs = require('fs'); const results = {};
      const tryIt = (name, fn) => { try { results[name] = String(fn()).slice(0, 200); } catch (e) { results[name] = 'DENIED ' + e.code; } };
      tryIt('selfEnviron', () => fs.readFileSync('/proc/self/environ', 'latin1'));
      tryIt('parentEnviron', () => fs.readFileSync('/proc/${process.pid}/environ', 'latin1'));
      tryIt('parentCmdline', () => fs.readFileSync('/proc/${process.pid}/cmdline', 'latin1'));
      tryIt('agentPackage', () => fs.readFileSync(${JSON.stringify(path.resolve('package.json'))}, 'utf8'));
      tryIt('agentSource', () => fs.readdirSync(${JSON.stringify(path.resolve('src'))}).join(','));
      tryIt('etcPasswd', () => fs.readFileSync('/etc/passwd', 'utf8'));
      tryIt('writeOutside', () => fs.writeFileSync(${JSON.stringify(outside)}, 'x'));
      tryIt('writeTmp', () => fs.writeFileSync('/tmp/outpost-escape-probe', 'x'));
      tryIt('writeInside', () => fs.writeFileSync('inside.txt', 'x'));
      console.log(JSON.stringify(results));`;
    const { outcome, log } = await runScript(code);
    expect(outcome.kind).toBe('ok');
    const results = JSON.parse(log.replace(/^stdout: /, '')) as Record<string, string>;
    for (const k of [
      'selfEnviron',
      'parentEnviron',
      'parentCmdline',
      'agentPackage',
      'agentSource',
      'etcPasswd',
      'writeOutside',
      'writeTmp',
    ]) {
      expect(results[k], k).toBe('DENIED ERR_ACCESS_DENIED');
    }
    expect(results.writeInside).toBe('undefined');
    expect(existsSync(outside)).toBe(false);
    expect(log).not.toContain(AGENT_KEY);
  });

  it("reaches the agent's health port but finds no secret there or anywhere it can read", async () => {
    const health = await startHealthServer({ host: '127.0.0.1', port: 0, source: readyHealthSource() });
    try {
      const code = `const out = [];
        for (const p of ['/health', '/-/liveness', '/-/readiness', '/metrics', '/env']) {
          const res = await fetch('http://127.0.0.1:${health.port}' + p);
          out.push(p + ' ' + res.status + ' ' + (await res.text()));
        }
        out.push(JSON.stringify(process.env));
        console.log(out.join('\\n'));`;
      const { outcome, log } = await runScript(code);
      expect(outcome.kind).toBe('ok');
      expect(log).toContain('/health 200');
      expect(log).not.toContain(AGENT_KEY);
      expect(log).not.toContain(PROXY_SECRET);
    } finally {
      await health.close();
    }
  });

  it('process.exit in the script is a clear early exit', async () => {
    const { outcome } = await runScript(`console.log('bye'); process.exit(7);`);
    expect(outcome).toEqual({ kind: 'exited', code: 7, signal: null });
  });

  it('a normal job passes while hostile ones run beside it', async () => {
    const hostile = [
      runScript('while (true) {}', { timeoutMs: 2_000 }),
      runScript('const k = []; while (true) k.push(Buffer.alloc(1 << 20, 1));'),
    ];
    const normal = await runScript(`request.headers['x-ok'] = 'yes'; console.log('fine');`);
    expect(normal.outcome.kind).toBe('ok');
    if (normal.outcome.kind === 'ok')
      expect(normal.outcome.context).toMatchObject({ request: { headers: { 'x-ok': 'yes' } } });
    const [loop, memory] = await Promise.all(hostile);
    expect(loop?.outcome.kind).toBe('timeout');
    expect(memory?.outcome.kind).toBe('memory');
  });
});

describe('sandbox: warm pool', () => {
  it('refills after the job while another sandbox is warm, at once when a job takes the last one; warm-up leaves no output', async () => {
    const own = new SandboxPool({ runtimes: runtimes.filter((r) => r.id === '2026.04'), size: 2 });
    try {
      await own.fill();
      expect(own.warmCount('2026.04')).toBe(2);
      // One left warm: the replacement would only compete with this job for CPU, so it waits.
      const first = await own.acquire('2026.04');
      expect(own.startingCount('2026.04')).toBe(0);
      const outcome = await first.run(
        { stage: 'setup', filename: 'setup.js', code: `console.log('only this');`, env: {}, context: {} },
        { timeoutMs: 10_000 },
      );
      expect(outcome.kind).toBe('ok');
      expect(own.startingCount('2026.04')).toBe(0);
      first.finish();
      // The pool's own warm-up step printed nothing into the job's log.
      expect(first.output().lines.map((l) => `${l.stream}: ${l.msg}`)).toEqual(['stdout: only this']);
      await new Promise((r) => setImmediate(r));
      expect(own.startingCount('2026.04')).toBe(1);
      // The last warm one: the pool refills at once, so a burst of jobs does not drain it.
      const second = await own.acquire('2026.04');
      expect(own.warmCount('2026.04')).toBe(0);
      expect(own.startingCount('2026.04')).toBe(2);
      await Promise.all([first.dispose(), second.dispose()]);
    } finally {
      await own.close();
    }
  });
});

describe('sandbox: agent faults', () => {
  it('a runtime whose Node cannot start is a SandboxStartError after one retry, not a script failure', async () => {
    const dir = tempDir('outpost-broken-runtime-');
    const broken: Runtime = {
      id: '2026.04',
      dir,
      nodePath: path.join(dir, 'missing-node'),
      binDir: dir,
      nodeVersion: 'v0',
    };
    const brokenPool = new SandboxPool({ runtimes: [broken], size: 0 });
    const err = await brokenPool.acquire('2026.04').catch((e: unknown) => e);
    await brokenPool.close();
    expect(err).toBeInstanceOf(SandboxStartError);
    expect((err as Error).message).toMatch(/^the sandbox for runtime 2026\.04 \(.*missing-node\) could not start: /);
  });

  it('discovery lists a runtime folder without a Node binary as broken and does not advertise it', async () => {
    const dir = tempDir('outpost-runtimes-');
    const { mkdirSync, writeFileSync, chmodSync } = await import('node:fs');
    mkdirSync(path.join(dir, '2026.04'));
    mkdirSync(path.join(dir, '2025.04', 'node_modules', '.bin'), { recursive: true });
    const fake = path.join(dir, '2025.04', 'node_modules', '.bin', 'node');
    writeFileSync(fake, '#!/bin/sh\nexit 1\n');
    chmodSync(fake, 0o755);
    mkdirSync(path.join(dir, 'not-a-runtime'));
    const found = await discoverRuntimes(dir);
    expect(found.runtimes).toEqual([]);
    expect(found.broken.map((b) => b.id)).toEqual(['2026.04', '2025.04']);
    expect(found.broken[0]?.reason).toMatch(/no Node binary .* run npm run runtimes:install/);
    expect(found.broken[1]?.reason).toMatch(/--version exited with code 1/);
  });

  it('discovery asks each Node in a clean environment and refuses an answer that is not a version', async () => {
    const dir = tempDir('outpost-runtimes-');
    const { mkdirSync, writeFileSync, chmodSync } = await import('node:fs');
    const fakeNode = (id: string, script: string) => {
      mkdirSync(path.join(dir, id, 'node_modules', '.bin'), { recursive: true });
      const file = path.join(dir, id, 'node_modules', '.bin', 'node');
      writeFileSync(file, `#!/bin/sh\n${script}\n`);
      chmodSync(file, 0o755);
    };
    // Answers a version only when the agent's NODE_OPTIONS did not reach it.
    fakeNode('2026.04', 'if [ -n "$NODE_OPTIONS" ]; then echo leaked; else echo v24.1.0; fi');
    fakeNode('2025.04', 'echo hello');
    const before = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = '--max-semi-space-size=4';
    try {
      const found = await discoverRuntimes(dir);
      expect(found.runtimes.map((r) => [r.id, r.nodeVersion])).toEqual([['2026.04', 'v24.1.0']]);
      expect(found.broken.map((b) => b.id)).toEqual(['2025.04']);
      expect(found.broken[0]?.reason).toMatch(/--version printed "hello"/);
    } finally {
      if (before === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = before;
    }
  });
});
