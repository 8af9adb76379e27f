/** What the console reads from the store beyond the API's needs: recent results per check, a location's load, sessions. */
import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import type { Store, StoredCheck } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { tempDataDir } from '../helpers/public-api.ts';
import { addCheck, addOffice } from '../support/fresh-account.ts';

let dataDir: string;
let store: Store;

beforeEach(async () => {
  dataDir = tempDataDir();
  store = await openSqliteStore(dataDir);
});
afterEach(async () => {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function tenant() {
  const { account } = await store.accounts.create('Acme');
  const location = await addOffice(store, account.id, `office-${account.id.slice(0, 6)}`);
  const check = (name: string) =>
    addCheck(store, account.id, location.id, name, { request: { method: 'GET', url: 'http://127.0.0.1:9/' } });
  return { accountId: account.id, location, check };
}

let runs = 0;
async function storeResult(check: StoredCheck, responseTime: number, resultType: 'FINAL' | 'ATTEMPT' = 'FINAL') {
  runs += 1;
  const payload = {
    responseTime,
    hasFailures: resultType === 'ATTEMPT',
    hasErrors: false,
    isDegraded: false,
  } as RunResult;
  await store.results.insertOnce({
    accountId: check.accountId,
    checkId: check.id,
    runId: `run-${runs}`,
    checkName: check.name,
    locationId: check.locationIds[0] ?? '',
    runLocation: 'office',
    attempts: 1,
    resultType,
    payload,
  });
}

describe('console reads', () => {
  it("gives each check's newest final results, at most perCheck, newest first, and only the account's", async () => {
    const acme = await tenant();
    const other = await tenant();
    const a = await acme.check('A');
    const b = await acme.check('B');
    await acme.check('never run');
    for (const ms of [10, 20, 30, 40]) await storeResult(a, ms);
    await storeResult(a, 999, 'ATTEMPT');
    await storeResult(b, 5);
    await storeResult(await other.check('theirs'), 7);
    const recent = await store.results.recentByCheck(acme.accountId, 3);
    const byCheck = Map.groupBy(recent, (r) => r.checkId);
    expect(byCheck.get(a.id)?.map((r) => r.responseTime)).toEqual([40, 30, 20]);
    expect(byCheck.get(b.id)?.map((r) => r.responseTime)).toEqual([5]);
    expect([...byCheck.keys()].sort()).toEqual([a.id, b.id].sort());
    expect(byCheck.get(a.id)?.[0]).toMatchObject({ hasFailures: false, hasErrors: false, isDegraded: false });
  });

  it("counts a location's queued runs and the leased runs of each agent", async () => {
    const acme = await tenant();
    const checks = [await acme.check('one'), await acme.check('two'), await acme.check('three')];
    const now = new Date().toISOString();
    for (const check of checks) {
      await store.runs.enqueue(
        {
          runId: `load-${check.id}`,
          accountId: acme.accountId,
          checkId: check.id,
          locationId: acme.location.id,
          checkType: 'API',
          checkClass: 'uptime',
          dueAt: now,
          startBy: new Date(Date.now() + 60_000).toISOString(),
          timeoutMs: 30_000,
          check: { id: check.id } as never,
        },
        now,
      );
    }
    expect(await store.runs.locationLoad(acme.location.id)).toEqual({ queued: 3, leasedByAgent: {} });
    const lease = {
      locationId: acme.location.id,
      checkTypes: ['API'] as const,
      now,
      leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    };
    await store.runs.claim({ ...lease, agentId: 'agent-1', slots: { uptime: 2, heavy: 0 } });
    expect(await store.runs.locationLoad(acme.location.id)).toEqual({ queued: 1, leasedByAgent: { 'agent-1': 2 } });
  });

  it('finds a session by its token until it idles or expires, and prunes the ended ones', async () => {
    const { accountId } = await tenant();
    const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
    await store.consoleSessions.create('tok-live', {
      accountId,
      createdAt: at(0),
      lastSeenAt: at(0),
      expiresAt: at(3_600_000),
    });
    await store.consoleSessions.create('tok-idle', {
      accountId,
      createdAt: at(0),
      lastSeenAt: at(-600_000),
      expiresAt: at(3_600_000),
    });
    const find = (token: string, now: number) => store.consoleSessions.findActive(token, at(now), at(now - 300_000));
    expect(await find('tok-live', 1000)).toMatchObject({ accountId });
    expect(await find('tok-idle', 1000)).toBeUndefined();
    expect(await find('tok-unknown', 1000)).toBeUndefined();
    await store.consoleSessions.touch('tok-live', at(3_000_000));
    expect(await find('tok-live', 3_200_000)).toMatchObject({ lastSeenAt: at(3_000_000) });
    expect(await find('tok-live', 3_600_000)).toBeUndefined();
    expect(await store.consoleSessions.deleteExpired(at(1000), at(1000 - 300_000))).toBe(1);
    await store.consoleSessions.delete('tok-live');
    expect(await find('tok-live', 1000)).toBeUndefined();
  });
});
