import { execFile, spawnSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runAgent } from '../../src/agent/main.ts';
import { ConfigError, EXIT } from '../../src/shared/errors.ts';
import { AGENT_PATHS } from '../../src/shared/protocol.ts';
import { tempDir } from './helpers.ts';
import { ProtocolStub } from './protocol-stub.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/outpost');

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function stubAndEnv() {
  const stub = await ProtocolStub.start({ maxWaitSeconds: 60 });
  cleanups.push(() => stub.close());
  const env = {
    API_KEY: 'pl_main_test_key',
    API_URL: stub.url,
    AGENT_HEALTH_PORT: '0',
    AGENT_HEALTH_HOST: '127.0.0.1',
    SPOOL_DIR: tempDir(),
    EXTERNAL_OBSERVABILITY: 'off',
    LOG_LEVEL: 'ERROR',
  };
  return { stub, env };
}

async function untilPath(stub: ProtocolStub, path: string): Promise<void> {
  await stub.until(() => stub.server.requests.some((r) => r.path === path));
}

describe('runAgent', () => {
  it('throws ConfigError for a bad environment (the CLI prints it and exits 2)', async () => {
    await expect(runAgent({ API_KEY: 'nope' })).rejects.toBeInstanceOf(ConfigError);
  });

  it('SIGTERM: graceful stop, deregisters, resolves 0', async () => {
    const { stub, env } = await stubAndEnv();
    const exit = vi.fn();
    const done = runAgent(env, { exit });
    await untilPath(stub, AGENT_PATHS.lease);
    process.emit('SIGTERM');
    expect(await done).toBe(EXIT.ok);
    expect(stub.deregistered).toBe(1);
    expect(exit).not.toHaveBeenCalled();
    expect(process.listenerCount('SIGTERM')).toBe(0);
  });

  it('a second signal exits at once with 1', async () => {
    const { stub, env } = await stubAndEnv();
    // Deregister never answers, so the graceful stop hangs there until the second signal.
    stub.failWith.set(AGENT_PATHS.deregister, 503);
    const exited = new Promise<number>((resolve) => {
      void runAgent({ ...env, SHUTDOWN_GRACE_SECONDS: '0' }, { exit: resolve });
    });
    await untilPath(stub, AGENT_PATHS.lease);
    process.emit('SIGINT');
    process.emit('SIGINT');
    expect(await exited).toBe(EXIT.failure);
  });

  it('401 from the service: resolves EXIT.unauthorized', async () => {
    const { stub, env } = await stubAndEnv();
    stub.failWith.set(AGENT_PATHS.register, 401);
    expect(await runAgent(env, { exit: vi.fn() })).toBe(EXIT.unauthorized);
  });
});

/** `outpost agent` as a process, killed after 20 s so a hang fails the test (no exit code) instead of stalling it. */
async function agentProcess(env: Record<string, string>, wrap: string[] = []) {
  const [file, ...args] = [...wrap, BIN, 'agent'];
  try {
    await promisify(execFile)(file as string, args, {
      env: { PATH: process.env.PATH ?? '', ...env },
      timeout: 20_000,
      killSignal: 'SIGKILL',
    });
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code: number | null; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

describe('an unusable SPOOL_DIR', () => {
  const base = {
    API_KEY: 'pl_spool_dir_test',
    API_URL: 'http://127.0.0.1:9',
    AGENT_HEALTH_PORT: '0',
    EXTERNAL_OBSERVABILITY: 'off',
  };
  const dir = tempDir();
  writeFileSync(path.join(dir, 'a-file'), 'not a directory');
  symlinkSync('/proc', path.join(dir, 'to-proc'));

  // Each case: exit 2 by itself (before agentProcess's kill: a spool under /proc used to hang for
  // good), with one line that names SPOOL_DIR and says what is wrong. No bound in seconds: a start
  // takes over 5 s on a busy CI machine, and the kill already fails a hang.
  const cases: Array<[string, string, RegExp]> = [
    ['a file in its path', path.join(dir, 'a-file', 'spool'), /a-file is a file, not a directory/],
    ['a file itself', path.join(dir, 'a-file'), /a-file is a file, not a directory/],
    ['under /proc', '/proc/outpost-spool', /under \/proc, a kernel file system/],
    ['under /sys', '/sys/outpost-spool', /under \/sys, a kernel file system/],
    ['under /dev', '/dev/shm/../outpost-spool', /under \/dev, a kernel file system/],
    ['a symbolic link into /proc', path.join(dir, 'to-proc', 'spool'), /under \/proc, a kernel file system/],
  ];
  it.each(cases)('%s: exit 2 within seconds, one line naming SPOOL_DIR', async (_what, spoolDir, reason) => {
    const { code, stderr } = await agentProcess({ ...base, SPOOL_DIR: spoolDir });
    expect(code, stderr).toBe(2);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^outpost: SPOOL_DIR=/);
    expect(lines[0]).toMatch(reason);
  });

  // Root ignores permission bits, so a read-only directory needs a read-only mount: a private mount
  // namespace (unshare) binds the directory over itself read-only for the agent process alone.
  const canUnshare = spawnSync('unshare', ['--mount', 'true']).status === 0;
  it.skipIf(!canUnshare)('on a read-only file system: exit 2 naming SPOOL_DIR (needs unshare --mount)', async () => {
    const ro = tempDir();
    const script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"';
    const { code, stderr } = await agentProcess({ ...base, SPOOL_DIR: path.join(ro, 'spool') }, [
      'unshare',
      '--mount',
      'sh',
      '-c',
      script,
      'sh',
      ro,
    ]);
    expect(code, stderr).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^outpost: SPOOL_DIR=.*read-only file system/);
  });
});
