/**
 * The service side of runtimes: a run with user code records the runtime it needs (migration 006)
 * and is leased only to an agent that carries that runtime; runs without user code go to any agent.
 */
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import type { Store } from '../../src/service/store/store.ts';
import type { CheckDefinition } from '../../src/shared/checks/types.ts';
import { runtimeNeededBy } from '../../src/shared/runtimes.ts';
import { tempDataDir } from '../helpers/public-api.ts';
import { accountWithLocation } from '../support/fresh-account.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

function definition(id: string, extra: Partial<CheckDefinition> = {}): CheckDefinition {
  return {
    id,
    accountId: 'acc',
    name: id,
    checkType: 'API',
    shouldFail: false,
    runtimeId: '2026.04',
    ...extra,
  } as CheckDefinition;
}

describe('runtimeNeededBy', () => {
  it('is null without user code and the check runtime (or the default) with it', () => {
    expect(runtimeNeededBy(definition('a'))).toBeNull();
    expect(runtimeNeededBy(definition('a', { localSetupScript: '  ' }))).toBeNull();
    expect(runtimeNeededBy(definition('a', { localSetupScript: 'x()', runtimeId: '2025.04' }))).toBe('2025.04');
    expect(runtimeNeededBy(definition('a', { localTearDownScript: 'x()', runtimeId: null }))).toBe('2026.04');
    expect(
      runtimeNeededBy(definition('a', { checkType: 'BROWSER', runtimeId: '2025.04' } as Partial<CheckDefinition>)),
    ).toBe('2025.04');
  });
});

describe('claiming runs by runtime', () => {
  it('leases a run with user code only to an agent that carries its runtime', async () => {
    const dataDir = tempDataDir();
    const store: Store = await openSqliteStore(dataDir);
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    cleanups.push(() => store.close());
    const { accountId, location } = await accountWithLocation(store);
    const now = new Date().toISOString();
    const enqueue = (id: string, extra: Partial<CheckDefinition>) =>
      store.runs.enqueue(
        {
          runId: `run-${id}`,
          accountId,
          checkId: id,
          locationId: location.id,
          checkType: 'API',
          checkClass: 'uptime',
          dueAt: now,
          startBy: new Date(Date.now() + 60_000).toISOString(),
          timeoutMs: 30_000,
          check: definition(id, extra),
        },
        now,
      );
    await enqueue('plain', {});
    await enqueue('old-runtime', { localSetupScript: 'console.log(1)', runtimeId: '2025.04' });
    await enqueue('new-runtime', { localTearDownScript: 'console.log(1)', runtimeId: '2026.04' });
    const claim = (agentId: string, runtimes: string[] | undefined) =>
      store.runs.claim({
        locationId: location.id,
        agentId,
        checkTypes: ['API'],
        ...(runtimes ? { runtimes } : {}),
        slots: { uptime: 10, heavy: 0 },
        now,
        leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(),
      });

    // No runtimes: only the run without user code.
    expect((await claim('agent-none', undefined)).map((r) => r.checkId)).toEqual(['plain']);
    // Carries 2026.04 only: the 2025.04 run stays queued for another agent.
    expect((await claim('agent-new', ['2026.04'])).map((r) => r.checkId)).toEqual(['new-runtime']);
    expect(await claim('agent-new-again', ['2026.04'])).toEqual([]);
    expect((await claim('agent-old', ['2025.04', '2026.04'])).map((r) => r.checkId)).toEqual(['old-runtime']);
  });
});
