import { afterEach, describe, expect, it, vi } from 'vitest';
import { runAgent } from '../../src/agent/main.ts';
import { ConfigError, EXIT } from '../../src/shared/errors.ts';
import { AGENT_PATHS } from '../../src/shared/protocol.ts';
import { tempDir } from './helpers.ts';
import { ProtocolStub } from './protocol-stub.ts';

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
