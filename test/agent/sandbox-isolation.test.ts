/**
 * Signals and users (docs/sandbox.md): user code under a uid of its own per sandbox cannot signal
 * the agent, another process of the agent's user, or another sandbox, in API-script and browser
 * sandboxes alike; such a script is a failed check for its own run and the agent goes on. Runs as
 * root, as CI does (the agent's standard image runs as root too).
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPlaywrightCheck } from '../../src/agent/browser/engine.ts';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import { defaultRuntimesDir, discoverRuntimes, type Runtime } from '../../src/agent/runtimes.ts';
import { detectIsolation, type SandboxIsolation } from '../../src/agent/sandbox/isolation.ts';
import { SandboxPool } from '../../src/agent/sandbox/pool.ts';
import { SandboxProcess } from '../../src/agent/sandbox/process.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../../src/agent/sandbox/types.ts';
import type { ApiCheckDefinition } from '../../src/shared/checks/types.ts';
import { ConfigError } from '../../src/shared/errors.ts';
import { apiCheck, context } from './api-fixtures.ts';
import { browserCheck, CHROMIUM } from './browser-fixtures.ts';
import { processesOfUid, startVictim } from './isolation-helpers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STAND_IN = fileURLToPath(new URL('./isolation-fixtures/stand-in-agent.ts', import.meta.url));
/** Whether this machine lets root make a user namespace (for the rootless-container case). */
const USER_NAMESPACES = spawnSync('unshare', ['--user', '--map-root-user', 'true']).status === 0;
/** A range of its own: other test files run at the same time on the same machine. */
const UID_BASE = 62_000;

let runtimes: Runtime[];
let isolation: SandboxIsolation;
let pool: SandboxPool;
let jobsRoot: string;

beforeAll(async () => {
  expect(process.getuid?.(), 'these tests run as root, as CI does').toBe(0);
  runtimes = (await discoverRuntimes(defaultRuntimesDir())).runtimes;
  expect(
    runtimes.map((r) => r.id),
    'run npm run runtimes:install',
  ).toEqual(['2026.04', '2025.04']);
  isolation = await detectIsolation({ mode: 'uid', uidBase: UID_BASE });
  // Short: Chromium's singleton socket lives in the job folder and a socket path may not pass 107 bytes.
  jobsRoot = mkdtempSync('/tmp/oi-');
  pool = new SandboxPool({ runtimes, size: 0, isolation, jobsRoot });
});

afterAll(async () => {
  await pool?.close();
  if (jobsRoot) rmSync(jobsRoot, { recursive: true, force: true });
});

function scripted(localSetupScript: string, env: Record<string, string> = {}): ApiCheckDefinition {
  const environmentVariables = Object.entries(env).map(([key, value]) => ({ key, value, secret: false }));
  // The setup fails before any request is sent: nothing listens on the URL.
  return apiCheck({ url: 'http://127.0.0.1:9/' }, { runtimeId: '2026.04', localSetupScript, environmentVariables });
}

describe('sandbox isolation: signals', { timeout: 60_000 }, () => {
  it('a setup script that SIGKILLs its parent fails its own run with EPERM; the agent lives and runs the next checks', async () => {
    const agent = spawn(process.execPath, [STAND_IN], {
      cwd: ROOT,
      env: { ...process.env, SANDBOX_ISOLATION: 'uid', SANDBOX_UID_BASE: String(UID_BASE + 100) },
    });
    const lines = readline.createInterface({ input: agent.stdout })[Symbol.asyncIterator]();
    const exited = once(agent, 'exit').then(([code, signal]) => ({ code, signal }));
    const next = async (check?: ApiCheckDefinition): Promise<Record<string, unknown>> => {
      if (check) agent.stdin.write(`${JSON.stringify(check)}\n`);
      const line = await Promise.race([lines.next(), exited]);
      if (!('value' in line)) throw new Error(`the stand-in agent died: ${JSON.stringify(line)}`);
      return JSON.parse(line.value as string) as Record<string, unknown>;
    };
    try {
      expect(await next()).toEqual({ ready: true, isolation: 'uid' });
      const killer = await next(scripted("process.kill(process.ppid, 'SIGKILL');\nconsole.log('still here');"));
      expect(killer.hasFailures).toBe(true);
      expect(killer.hasErrors).toBe(false);
      expect(killer.error).toMatch(/^Setup script failed: Error: kill EPERM/);
      // A script that kills its own sandbox fails its own run only.
      const selfKill = await next(scripted("process.kill(process.pid, 'SIGKILL');"));
      expect(selfKill.hasFailures).toBe(true);
      expect(selfKill.error).toMatch(/ended the sandbox process early \(signal SIGKILL\)/);
      const fine = await next(scripted("console.log('fine')", {}));
      // The request itself fails (nothing listens), but the script ran: the agent is in order.
      expect(JSON.stringify(fine.apiCheckResult)).toContain('fine');
    } finally {
      agent.stdin.end();
      const end = await exited;
      expect(end.signal, 'the stand-in agent was not killed').toBeNull();
    }
  });

  it("a script cannot signal another process of the agent's user", async () => {
    const victim = startVictim();
    try {
      const outcome = await apiCheckRunner.run(
        scripted("process.kill(Number(process.env.VICTIM), 'SIGKILL')", { VICTIM: String(victim.pid) }),
        context({ sandboxes: pool }),
      );
      expect(outcome.hasFailures).toBe(true);
      expect(outcome.error).toMatch(/kill EPERM/);
      expect(await victim.alive()).toBe(true);
    } finally {
      victim.stop();
    }
  });

  it('two sandboxes at once have different uids and cannot signal each other', async () => {
    const a = await pool.acquire('2026.04');
    const b = await pool.acquire('2025.04');
    try {
      expect(a.uid).toBeGreaterThanOrEqual(UID_BASE);
      expect(b.uid).toBeGreaterThanOrEqual(UID_BASE);
      expect(a.uid).not.toBe(b.uid);
      const step = (code: string, env: Record<string, string> = {}) => ({
        stage: 'setup' as const,
        filename: 'setup.js',
        code,
        env,
        context: {},
      });
      const hit = await b.run(step("process.kill(Number(process.env.TARGET), 'SIGKILL')", { TARGET: String(a.pid) }), {
        timeoutMs: 10_000,
      });
      expect(hit.kind).toBe('script-error');
      expect(hit.kind === 'script-error' && hit.error.message).toMatch(/EPERM/);
      expect((await a.run(step('return 1'), { timeoutMs: 10_000 })).kind).toBe('ok');
    } finally {
      await Promise.all([a.dispose(), b.dispose()]);
    }
  });
});

describe('sandbox isolation: files and leftovers', { timeout: 60_000 }, () => {
  it('makes the folders up to a new jobs folder passable, and names a folder above it that a sandbox uid cannot pass', async () => {
    const base = mkdtempSync('/tmp/oi-pass-');
    try {
      chmodSync(base, 0o755);
      const made = await SandboxProcess.start({
        runtime: runtimes[0] as Runtime,
        limits: DEFAULT_SANDBOX_LIMITS,
        permissions: false,
        isolation,
        jobsRoot: `${base}/a/b/jobs`,
      });
      await made.ready();
      expect(statSync(`${base}/a`).mode & 0o777).toBe(0o711);
      await made.dispose();
      chmodSync(base, 0o700);
      const start = SandboxProcess.start({
        runtime: runtimes[0] as Runtime,
        limits: DEFAULT_SANDBOX_LIMITS,
        permissions: false,
        isolation,
        jobsRoot: `${base}/jobs`,
      });
      await expect(start).rejects.toThrow(`its uid cannot pass through ${base} (mode 700)`);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
  it('a sandbox without the permission model: its 0700 folder is its uid, and everything it left or started is gone after, however hidden', async () => {
    const sandbox = await SandboxProcess.start({
      runtime: runtimes[0] as Runtime,
      limits: DEFAULT_SANDBOX_LIMITS,
      permissions: false,
      isolation,
      jobsRoot,
    });
    await sandbox.ready();
    const uid = sandbox.uid as number;
    expect(statSync(sandbox.jobDir)).toMatchObject({ uid, gid: uid });
    expect(statSync(sandbox.jobDir).mode & 0o777).toBe(0o700);
    expect(statSync(jobsRoot).mode & 0o777).toBe(0o711);
    const status = readFileSync(`/proc/${sandbox.pid}/status`, 'utf8');
    expect(status).toMatch(new RegExp(`^Uid:\\s+${uid}\\s+${uid}\\s+${uid}\\s+${uid}$`, 'm'));
    expect(status).toMatch(new RegExp(`^Gid:\\s+${uid}\\s+${uid}\\s+${uid}\\s+${uid}$`, 'm'));
    expect(status).toMatch(/^Groups:\s*$/m);
    expect(status).toMatch(/^CapEff:\s+0+$/m);
    expect(status).toMatch(/^CapBnd:\s+0+$/m);
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    const code = [
      "const fs = require('node:fs'); const { spawn } = require('node:child_process');",
      "fs.mkdirSync('locked'); fs.writeFileSync('locked/f', 'x'); fs.chmodSync('locked/f', 0); fs.chmodSync('locked', 0);",
      // Outside its folder, where the next job under the same uid could find it.
      "for (const d of ['/tmp', '/dev/shm']) { const p = d + '/oi-left-' + process.getuid(); fs.mkdirSync(p); fs.writeFileSync(p + '/f', 'x'); }",
      // Leaves the group, the job folder and its environment: only its uid still tells whose it is.
      "spawn('/bin/sh', ['-c', 'cd / && exec env -i /bin/sleep 1000'], { detached: true, stdio: 'ignore' }).unref();",
    ].join('\n');
    const outcome = await sandbox.run(
      { stage: 'setup', filename: 'setup.js', code, env: {}, context: {} },
      { timeoutMs: 10_000 },
    );
    expect(outcome.kind).toBe('ok');
    expect(processesOfUid(uid).length).toBeGreaterThanOrEqual(2);
    await sandbox.dispose();
    expect(processesOfUid(uid)).toEqual([]);
    expect(existsSync(sandbox.jobDir)).toBe(false);
    expect([existsSync(`/tmp/oi-left-${uid}`), existsSync(`/dev/shm/oi-left-${uid}`)]).toEqual([false, false]);
  });
});

/**
 * `outpost agent` (the CLI) as `uid`, started through `wrap` (a command that runs the rest) if
 * given, its spool in a folder of its own.
 */
function startAgentCli(uid: number, env: Record<string, string>, wrap: string[] = []) {
  const spool = mkdtempSync('/tmp/oi-spool-');
  chownSync(spool, uid, uid);
  const argv = [...wrap, process.execPath, path.join(ROOT, 'src/cli/main.ts'), 'agent'];
  const child = spawn(argv[0] as string, argv.slice(1), {
    cwd: '/',
    uid,
    gid: uid,
    // Nothing listens on port 9: the agent keeps retrying its registration until it is stopped.
    env: {
      PATH: process.env.PATH,
      API_KEY: 'pl_test',
      API_URL: 'http://127.0.0.1:9',
      SPOOL_DIR: path.join(spool, 'spool'),
      AGENT_HEALTH_PORT: '0',
      ...env,
    },
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = once(child, 'exit').then(([code]) => {
    rmSync(spool, { recursive: true, force: true });
    return { code: code as number | null, stderr };
  });
  const lines: Array<Record<string, unknown>> = [];
  // Read to the end: a closed pipe would make the agent's next log line fail.
  const up = new Promise<void>((resolve) => {
    readline.createInterface({ input: child.stdout }).on('line', (text) => {
      lines.push(JSON.parse(text) as Record<string, unknown>);
      if (lines.at(-1)?.msg === 'probes listening') resolve();
    });
  });
  /** The log line `match` accepts, once the agent is up (its health server listens). */
  const waitForLine = async (
    match: (line: Record<string, unknown>) => boolean,
  ): Promise<Record<string, unknown> | undefined> => {
    await Promise.race([up, exited]);
    return lines.find(match);
  };
  return { child, exited, waitForLine };
}

describe('sandbox isolation: the agent at start', { timeout: 60_000 }, () => {
  it('SANDBOX_ISOLATION=uid in an agent without the capabilities to switch uid is exit 2 naming the variable', async () => {
    const agent = startAgentCli(10001, { SANDBOX_ISOLATION: 'uid' });
    const { code, stderr } = await agent.exited;
    expect(code).toBe(2);
    expect(stderr).toMatch(/SANDBOX_ISOLATION=uid cannot be met: the agent \(uid 10001\) lacks CAP_CHOWN/);
    // The image's default user is 10001, so the fix must say how to start it as root.
    expect(stderr).toMatch(/start it as root with those capabilities \(docker run --user 0; docs\/deploy\.md/);
  });

  // A container without CAP_SYS_ADMIN (Docker's default seccomp profile) cannot make one: nothing to test there.
  it.skipIf(!USER_NAMESPACES)(
    'SANDBOX_ISOLATION=uid where root cannot take the sandbox uids (a user namespace that maps only root, as rootless containers) is exit 2',
    async () => {
      const agent = startAgentCli(0, { SANDBOX_ISOLATION: 'uid' }, ['unshare', '--user', '--map-root-user']);
      const { code, stderr } = await agent.exited;
      expect(code).toBe(2);
      expect(stderr).toMatch(
        /SANDBOX_ISOLATION=uid cannot be met: a process under the sandbox uid 61000 \(\/usr\/bin\/setpriv\) failed the start-up check: setpriv: setresuid failed/,
      );
    },
  );

  it('a sandbox range that holds a user or group of the machine is a ConfigError naming SANDBOX_UID_BASE', async () => {
    const dir = mkdtempSync('/tmp/oi-accounts-');
    const passwd = path.join(dir, 'passwd');
    writeFileSync(
      passwd,
      `root:x:0:0:root:/root:/bin/sh\nbuilder:x:${UID_BASE + 5}:${UID_BASE + 5}::/home/builder:/bin/sh\n`,
    );
    try {
      const detecting = detectIsolation({ mode: 'auto', uidBase: UID_BASE }, undefined, [passwd]);
      await expect(detecting).rejects.toBeInstanceOf(ConfigError);
      await expect(detecting).rejects.toMatchObject({
        setting: 'SANDBOX_UID_BASE',
        message: expect.stringMatching(/builder \(62005, .*passwd\) use them/),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('auto: a root agent says it runs sandboxes under uids of their own; a non-root one warns, with the reason, that they run as its user', async () => {
    const root = startAgentCli(0, { SANDBOX_UID_BASE: String(UID_BASE + 200) });
    const rootLine = await root.waitForLine((l) => l.isolation !== undefined);
    root.child.kill('SIGKILL');
    expect(rootLine).toMatchObject({
      isolation: 'uid',
      uids: `${UID_BASE + 200}-${UID_BASE + 200 + 1023}`,
      msg: 'user code runs under a uid of its own per sandbox',
    });
    await root.exited;

    const plain = startAgentCli(10001, {});
    const plainLine = await plain.waitForLine((l) => l.isolation !== undefined);
    plain.child.kill('SIGKILL');
    expect(plainLine).toMatchObject({ isolation: 'none', level: 40 });
    expect(String(plainLine?.reason)).toMatch(
      /the agent \(uid 10001\) lacks CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_KILL, CAP_SETGID, CAP_SETUID/,
    );
    expect(String(plainLine?.msg)).toMatch(/user code runs as the agent's own user/);
    await plain.exited;
  });
});

describe('sandbox isolation: browser checks', { timeout: 90_000 }, () => {
  it("a browser check's script cannot signal the agent or another process of its user (a failed check naming EPERM); its Chromium runs under its uid", async () => {
    expect(existsSync(CHROMIUM), `Chromium at ${CHROMIUM}`).toBe(true);
    const victim = startVictim();
    try {
      const run = (script: string) =>
        runPlaywrightCheck(
          browserCheck(script, { environmentVariables: [{ key: 'VICTIM', value: String(victim.pid), secret: false }] }),
          {
            ...context({ sandboxes: pool, timeoutMs: 60_000 }),
            jobsRoot,
          },
        );
      const parent = await run("process.kill(process.ppid, 0);\nawait page.goto('about:blank');");
      expect(parent.hasFailures).toBe(true);
      expect(parent.hasErrors).toBe(false);
      expect(parent.error).toMatch(/kill EPERM/);
      const other = await run("process.kill(Number(process.env.VICTIM), 'SIGKILL');");
      expect(other.hasFailures).toBe(true);
      expect(other.error).toMatch(/kill EPERM/);
      expect(await victim.alive()).toBe(true);
      // Chromium, started by Playwright in the sandbox, runs under the sandbox's uid too.
      const chromium = await run(
        [
          "const fs = require('node:fs');",
          "await page.goto('about:blank');",
          "const stat = (pid) => fs.readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1].split(' ');",
          'const isMine = (pid) => { for (let p = pid; p > 1; p = Number(stat(p)[1])) if (p === process.pid) return true; return false; };',
          "const browsers = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).map(Number).filter((pid) => { try { return /chrom/.test(fs.readFileSync('/proc/' + pid + '/comm', 'utf8')) && isMine(pid); } catch { return false; } });",
          "const uids = browsers.map((pid) => fs.readFileSync('/proc/' + pid + '/status', 'utf8').match(/^Uid:\\s+(\\d+)/m)[1]);",
          "if (browsers.length === 0 || process.getuid() === 0 || uids.some((u) => Number(u) !== process.getuid())) throw new Error('Chromium uids ' + uids + ', the sandbox ' + process.getuid());",
        ].join('\n'),
      );
      expect(chromium.error).toBeNull();
      expect(chromium.hasFailures).toBe(false);
    } finally {
      victim.stop();
    }
  });
});
