/**
 * The dispatcher's repositories (runs, agents, error reports, run retries, artifacts, location
 * metrics) on both backends, and the run queue's concurrency rules with two stores on one database:
 * two connections, as two service replicas would have.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { NewRun } from '../../src/service/store/dispatch-types.ts';
import { MAX_EXPIRED_LEASES, SHED_LATE_REASON } from '../../src/service/store/repos/runs.ts';
import type { Run, Store } from '../../src/service/store/store.ts';
import type { CheckDefinition, CheckType } from '../../src/shared/checks/types.ts';
import { checkClassOf } from '../../src/shared/checks/types.ts';
import { accountWithCheck, freshDatabaseEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

const at = (second: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const ALL_TYPES: CheckType[] = ['API', 'TCP', 'BROWSER'];

interface Fixture {
  accountId: string;
  locationId: string;
  checkId: string;
}

async function fixture(store: Store): Promise<Fixture> {
  const { accountId, location, check } = await accountWithCheck(store);
  return { accountId, locationId: location.id, checkId: check.id };
}

/** A run due at `dueSecond`; it may start up to five minutes later unless `startBySecond` says otherwise. */
function newRun(
  f: Fixture,
  dueSecond: number,
  overrides: { checkType?: CheckType; checkId?: string; runtimeId?: string; startBySecond?: number } = {},
): NewRun {
  const checkType = overrides.checkType ?? 'API';
  const checkId = overrides.checkId ?? f.checkId;
  const check = {
    id: checkId,
    accountId: f.accountId,
    name: 'Home',
    checkType,
    shouldFail: false,
    runtimeId: overrides.runtimeId ?? null,
  };
  return {
    runId: randomUUID(),
    accountId: f.accountId,
    checkId,
    locationId: f.locationId,
    checkType,
    checkClass: checkClassOf(checkType),
    dueAt: at(dueSecond),
    startBy: at(overrides.startBySecond ?? dueSecond + 300),
    timeoutMs: 30_000,
    check: check as CheckDefinition,
  };
}

const claimAll = (
  store: Store,
  f: Fixture,
  agentId: string,
  leaseExpiresAt = at(600),
  slots = { uptime: 100, heavy: 100 },
) =>
  store.runs.claim({
    locationId: f.locationId,
    agentId,
    checkTypes: ALL_TYPES,
    runtimes: ['2025.04'],
    slots,
    now: at(0),
    leaseExpiresAt,
  });

/** Agent a1 asking for API runs at the fixture's location (`now` is given per call). */
const apiLease = (f: Fixture, uptimeSlots = 1) => ({
  locationId: f.locationId,
  agentId: 'a1',
  checkTypes: ['API'] as CheckType[],
  runtimes: [],
  slots: { uptime: uptimeSlots, heavy: 0 },
  leaseExpiresAt: at(60),
});

describe.each(storeBackends())('on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);

  describe('runs', () => {
    /** Two runs leased to agent-1, the second with a cancel requested by its user. */
    async function leasedAndCancelRequested(): Promise<{ store: Store; leased: Run; cancelled: Run }> {
      const store = await fresh.open();
      const f = await fixture(store);
      await store.runs.enqueue(newRun(f, 1, { checkId: 'a' }), at(1));
      await store.runs.enqueue(newRun(f, 2, { checkId: 'b' }), at(1));
      const [leased, cancelled] = (await claimAll(store, f, 'agent-1')) as [Run, Run];
      await store.runs.cancel(f.accountId, cancelled.runId, 'user cancel', at(3));
      return { store, leased, cancelled };
    }

    it('enqueues a queued run, reads it back and supersedes older never-leased runs of the check', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const first = await store.runs.enqueue(newRun(f, 1), at(1));
      expect(first.superseded).toEqual([]);
      expect(first.run).toMatchObject({
        state: 'queued',
        leaseAttempt: 1,
        cancelRequested: false,
        leaseId: null,
        dueAt: at(1),
      });
      expect(await store.runs.get(first.run.runId)).toEqual(first.run);
      expect(await store.runs.getForAccount(f.accountId, first.run.runId)).toEqual(first.run);
      expect(await store.runs.getForAccount('another-account', first.run.runId)).toBeUndefined();

      const second = await store.runs.enqueue(newRun(f, 2), at(2));
      expect(second.superseded).toEqual([first.run.runId]);
      expect(await store.runs.get(first.run.runId)).toMatchObject({
        state: 'expired',
        endReason: 'superseded by a newer run',
      });
    });

    it('enqueues a batch in one transaction: each run supersedes as alone would, and a failing run leaves none of the batch', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const old = (await store.runs.enqueue(newRun(f, 1), at(1))).run;
      const batch = await store.runs.enqueueMany([newRun(f, 2), newRun(f, 2, { checkId: 'other' })], at(2));
      expect(batch.map((b) => b.superseded)).toEqual([[old.runId], []]);
      expect(batch.map((b) => b.run.state)).toEqual(['queued', 'queued']);
      expect(await store.runs.get(old.runId)).toMatchObject({ state: 'expired' });

      // The second run reuses the first's id: the primary key fails it, and the first is rolled back.
      const fine = newRun(f, 3, { checkId: 'third' });
      await expect(
        store.runs.enqueueMany([fine, { ...newRun(f, 3, { checkId: 'fourth' }), runId: fine.runId }], at(3)),
      ).rejects.toThrow();
      expect(await store.runs.get(fine.runId)).toBeUndefined();
      expect(await store.runs.get(batch[0]!.run.runId)).toMatchObject({ state: 'queued' });
      expect(await store.runs.enqueueMany([], at(4))).toEqual([]);
    });

    it('supersedes per pair in a batch: only older runs of the same check, and a check named twice in order', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const a = (await store.runs.enqueue(newRun(f, 1), at(1))).run;
      const b = (await store.runs.enqueue(newRun(f, 1, { checkId: 'b' }), at(1))).run;
      // Due later than the batch's run of its check: not older, so it stays.
      const c = (await store.runs.enqueue(newRun(f, 9, { checkId: 'c' }), at(1))).run;
      const batch = await store.runs.enqueueMany(
        [newRun(f, 5, { checkId: 'c' }), newRun(f, 5), newRun(f, 5, { checkId: 'b' }), newRun(f, 5, { checkId: 'd' })],
        at(5),
      );
      expect(batch.map((x) => x.superseded)).toEqual([[], [a.runId], [b.runId], []]);
      expect(await store.runs.get(c.runId)).toMatchObject({ state: 'queued' });

      // The same check twice: its later run supersedes the earlier one of the same batch.
      const twice = await store.runs.enqueueMany(
        [newRun(f, 6, { checkId: 'e' }), newRun(f, 7, { checkId: 'e' })],
        at(7),
      );
      expect(twice[1]?.superseded).toEqual([twice[0]?.run.runId]);
      expect(await store.runs.get(twice[0]!.run.runId)).toMatchObject({ state: 'expired' });
    });

    it('claims per class up to the free slots, oldest due first, with a new lease id per run', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const uptime = [];
      for (let i = 0; i < 4; i++)
        uptime.push((await store.runs.enqueue(newRun(f, 10 - i, { checkId: `c${i}` }), at(20))).run);
      const browser = (
        await store.runs.enqueue(newRun(f, 5, { checkType: 'BROWSER', checkId: 'b', runtimeId: '2025.04' }), at(20))
      ).run;

      const claimed = await claimAll(store, f, 'agent-1', at(600), { uptime: 2, heavy: 1 });
      expect(claimed.map((r) => r.runId)).toEqual([browser.runId, uptime[3]?.runId, uptime[2]?.runId]);
      expect(new Set(claimed.map((r) => r.leaseId)).size).toBe(3);
      for (const run of claimed) {
        expect(run).toMatchObject({ state: 'leased', agentId: 'agent-1', leaseExpiresAt: at(600) });
        expect(run.leaseId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      }
    });

    it('claims the earliest start deadline first, and never a first attempt whose deadline passed', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      // A 10 s check may start 5 s after it is due; a 60 s check due earlier may wait 30 s.
      const slow = (await store.runs.enqueue(newRun(f, 1, { checkId: 'slow', startBySecond: 31 }), at(1))).run;
      const fast = (await store.runs.enqueue(newRun(f, 2, { checkId: 'fast', startBySecond: 7 }), at(2))).run;
      const late = (await store.runs.enqueue(newRun(f, 0, { checkId: 'late', startBySecond: 5 }), at(2))).run;
      const claim = (now: string) =>
        store.runs.claim({
          locationId: f.locationId,
          agentId: 'a1',
          checkTypes: ALL_TYPES,
          runtimes: [],
          slots: { uptime: 1, heavy: 0 },
          now,
          leaseExpiresAt: at(60),
        });

      expect((await claim(at(6))).map((r) => r.runId)).toEqual([fast.runId]);
      expect((await claim(at(6))).map((r) => r.runId)).toEqual([slow.runId]);
      expect(await claim(at(6))).toEqual([]);
      expect(await store.runs.get(late.runId)).toMatchObject({ state: 'queued' });
    });

    it('sheds the first attempts the agent could run whose start deadline passed, with a reason', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const other = await fixture(store);
      const late = (await store.runs.enqueue(newRun(f, 1, { checkId: 'late', startBySecond: 6 }), at(1))).run;
      const onTime = (await store.runs.enqueue(newRun(f, 4, { checkId: 'on-time', startBySecond: 9 }), at(4))).run;
      const lateBrowser = (
        await store.runs.enqueue(newRun(f, 1, { checkType: 'BROWSER', checkId: 'b', startBySecond: 6 }), at(1))
      ).run;
      const elsewhere = (await store.runs.enqueue(newRun(other, 1, { checkId: 'x', startBySecond: 6 }), at(1))).run;
      const req = apiLease(f);

      expect(await store.runs.shedLate({ ...req, now: at(5) })).toBe(0);
      expect(await store.runs.shedLate({ ...req, now: at(6) })).toBe(1);
      expect(await store.runs.get(late.runId)).toMatchObject({
        state: 'expired',
        endReason: SHED_LATE_REASON,
        finishedAt: at(6),
      });
      // Not this agent's to judge: a type it does not run, another location.
      expect(await store.runs.get(lateBrowser.runId)).toMatchObject({ state: 'queued' });
      expect(await store.runs.get(elsewhere.runId)).toMatchObject({ state: 'queued' });
      expect(await store.runs.get(onTime.runId)).toMatchObject({ state: 'queued' });
      expect((await store.runs.claim({ ...req, now: at(6) })).map((r) => r.runId)).toEqual([onTime.runId]);
    });

    it('overloaded (order newest), claims hand-backs first, then the latest deadlines', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const req = apiLease(f);
      const back = (await store.runs.enqueue(newRun(f, 1, { checkId: 'back', startBySecond: 6 }), at(1))).run;
      const [leased] = (await store.runs.claim({ ...req, slots: { uptime: 1, heavy: 0 }, now: at(2) })) as [Run];
      await store.runs.release('a1', [{ runId: leased.runId, leaseId: leased.leaseId as string }], at(3));
      const runs = [];
      for (let i = 0; i < 4; i++)
        runs.push(
          (await store.runs.enqueue(newRun(f, 4 + i, { checkId: `c${i}`, startBySecond: 9 + i }), at(4 + i))).run,
        );

      const newest = await store.runs.claim({ ...req, slots: { uptime: 3, heavy: 0 }, now: at(8), order: 'newest' });
      expect(new Set(newest.map((r) => r.runId))).toEqual(new Set([back.runId, runs[3]?.runId, runs[2]?.runId]));
      // Without the order, the earliest deadline goes first.
      const rest = await store.runs.claim({ ...req, slots: { uptime: 1, heavy: 0 }, now: at(8) });
      expect(rest.map((r) => r.runId)).toEqual([runs[0]?.runId]);
    });

    it('sheds and claims in one call (one transaction), as a lease does', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const late = (await store.runs.enqueue(newRun(f, 1, { checkId: 'late', startBySecond: 6 }), at(1))).run;
      const onTime = (await store.runs.enqueue(newRun(f, 4, { checkId: 'on-time', startBySecond: 9 }), at(4))).run;
      const req = apiLease(f, 5);
      const { shed, runs } = await store.runs.shedLateAndClaim({ ...req, now: at(7) });
      expect(shed).toBe(1);
      expect(runs.map((r) => r.runId)).toEqual([onTime.runId]);
      expect(await store.runs.get(late.runId)).toMatchObject({ state: 'expired', endReason: SHED_LATE_REASON });
    });

    it('a run handed back after a lease is claimed before the waiting first attempts and is not shed', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const first = (await store.runs.enqueue(newRun(f, 1, { checkId: 'a', startBySecond: 6 }), at(1))).run;
      const req = apiLease(f);
      const [leased] = (await store.runs.claim({ ...req, now: at(2) })) as [Run];
      expect(
        await store.runs.release('a1', [{ runId: leased.runId, leaseId: leased.leaseId as string }], at(20)),
      ).toHaveLength(1);
      const waiting = (await store.runs.enqueue(newRun(f, 19, { checkId: 'b', startBySecond: 24 }), at(19))).run;

      expect(await store.runs.shedLate({ ...req, now: at(21) })).toBe(0);
      const [again] = (await store.runs.claim({ ...req, agentId: 'a2', now: at(21) })) as [Run];
      expect(again).toMatchObject({ runId: first.runId, state: 'leased', agentId: 'a2', leaseAttempt: 2 });
      expect(await store.runs.get(waiting.runId)).toMatchObject({ state: 'queued' });
    });

    it('hands out only the check types and runtimes the agent has', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const api = (await store.runs.enqueue(newRun(f, 1, { checkId: 'a' }), at(1))).run;
      await store.runs.enqueue(newRun(f, 1, { checkType: 'TCP', checkId: 't' }), at(1));
      const browser = (
        await store.runs.enqueue(newRun(f, 1, { checkType: 'BROWSER', checkId: 'b', runtimeId: '2024.09' }), at(1))
      ).run;
      const slots = { uptime: 10, heavy: 10 };
      const base = { locationId: f.locationId, slots, now: at(1), leaseExpiresAt: at(60) };

      const apiOnly = await store.runs.claim({
        ...base,
        agentId: 'a1',
        checkTypes: ['API', 'BROWSER'],
        runtimes: ['2025.04'],
      });
      expect(apiOnly.map((r) => r.runId)).toEqual([api.runId]);
      const withRuntime = await store.runs.claim({
        ...base,
        agentId: 'a2',
        checkTypes: ['BROWSER'],
        runtimes: ['2024.09'],
      });
      expect(withRuntime.map((r) => r.runId)).toEqual([browser.runId]);
      expect(await store.runs.claim({ ...base, agentId: 'a3', checkTypes: [], runtimes: [] })).toEqual([]);
    });

    it('heartbeats extend held leases, answer cancelled after a cancel request and lost for a lease not held', async () => {
      const { store, leased: held, cancelled } = await leasedAndCancelRequested();

      const leases = [held, cancelled].map((r) => ({ runId: r.runId, leaseId: r.leaseId as string }));
      const outcomes = await store.runs.heartbeat(
        'agent-1',
        [...leases, { runId: held.runId, leaseId: 'not-this-one' }],
        at(900),
      );
      expect(outcomes).toEqual([
        { ...leases[0], state: 'active', leaseExpiresAt: at(900) },
        { ...leases[1], state: 'cancelled', leaseExpiresAt: at(600) },
        { runId: held.runId, leaseId: 'not-this-one', state: 'lost', leaseExpiresAt: null },
      ]);
      expect(await store.runs.heartbeat('agent-2', [leases[0] as (typeof leases)[0]], at(900))).toMatchObject([
        { state: 'lost' },
      ]);
    });

    it("counts each location's and class's runs completed and shed since a time, for overload admission", async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const other = await fixture(store);
      const enqueue = async (fx: Fixture, checkId: string, checkType: CheckType = 'API') =>
        (await store.runs.enqueue(newRun(fx, 1, { checkId, checkType, startBySecond: 6 }), at(1))).run;
      const done = [await enqueue(f, 'a'), await enqueue(f, 'b'), await enqueue(f, 'br', 'BROWSER')];
      const late = [await enqueue(f, 'l1'), await enqueue(f, 'l2')];
      const elsewhere = await enqueue(other, 'o');
      await store.runs.claim({ ...apiLease(f, 2), slots: { uptime: 2, heavy: 1 }, checkTypes: ALL_TYPES, now: at(2) });
      await store.runs.claim({ ...apiLease(other), now: at(2) });
      // The browser run finishes before the window; the others within it.
      await store.runs.finish(done[2]!.runId, at(3));
      for (const run of [...done.slice(0, 2), elsewhere]) await store.runs.finish(run.runId, at(5));
      expect(await store.runs.shedLate({ ...apiLease(f), now: at(7) })).toBe(late.length);

      const byLocation = (await store.runs.outcomesSince(at(3))).sort((a, b) => a.delivered - b.delivered);
      expect(byLocation).toEqual([
        { locationId: other.locationId, checkClass: 'uptime', delivered: 1, shed: 0 },
        { locationId: f.locationId, checkClass: 'uptime', delivered: 2, shed: 2 },
      ]);
      expect(await store.runs.outcomesSince(at(7))).toEqual([]);
    });

    it('finishes a leased run once and completes a cancel-requested one as cancelled', async () => {
      const { store, leased: done, cancelled } = await leasedAndCancelRequested();

      expect(await store.runs.finish(done.runId, at(5))).toBe(true);
      expect(await store.runs.get(done.runId)).toMatchObject({
        state: 'completed',
        finishedAt: at(5),
        leaseExpiresAt: null,
      });
      expect(await store.runs.finish(done.runId, at(9))).toBe(false);
      expect(await store.runs.get(done.runId)).toMatchObject({ state: 'completed', finishedAt: at(5) });
      expect(await store.runs.finish(cancelled.runId, at(6))).toBe(true);
      expect(await store.runs.get(cancelled.runId)).toMatchObject({
        state: 'cancelled',
        endReason: 'cancelled while running; the agent reported it',
      });
      expect(await store.runs.finish('no-such-run', at(6))).toBe(false);
    });

    it('releases named leases or all of an agent’s leases back to the queue as the next attempt', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      for (const [i, id] of ['a', 'b', 'c'].entries()) await store.runs.enqueue(newRun(f, i, { checkId: id }), at(1));
      const [one, two, three] = (await claimAll(store, f, 'agent-1')) as [Run, Run, Run];

      const released = await store.runs.release(
        'agent-1',
        [{ runId: one.runId, leaseId: one.leaseId as string }],
        at(5),
      );
      expect(released).toMatchObject([
        { runId: one.runId, state: 'queued', leaseAttempt: 2, leaseId: null, agentId: 'agent-1' },
      ]);
      expect(await store.runs.release('agent-2', undefined, at(5))).toEqual([]);
      const rest = await store.runs.release('agent-1', undefined, at(5));
      expect(rest.map((r) => r.runId).sort()).toEqual([two.runId, three.runId].sort());
    });

    it('hands an expired lease back to the queue, and gives a run up after its last allowed lease', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const { run } = await store.runs.enqueue(newRun(f, 1), at(1));
      for (let attempt = 1; attempt <= MAX_EXPIRED_LEASES; attempt++) {
        const [leased] = await claimAll(store, f, `agent-${attempt}`, at(10 * attempt));
        expect(leased).toMatchObject({ runId: run.runId, leaseAttempt: attempt });
        expect(await store.runs.requeueExpiredLeases(at(10 * attempt - 1))).toEqual({ requeued: [], abandoned: [] });
        const swept = await store.runs.requeueExpiredLeases(at(10 * attempt));
        if (attempt < MAX_EXPIRED_LEASES)
          expect(swept.requeued).toMatchObject([{ runId: run.runId, state: 'queued', leaseAttempt: attempt + 1 }]);
        else
          expect(swept.abandoned).toMatchObject([{ runId: run.runId, state: 'expired', finishedAt: at(10 * attempt) }]);
      }
      expect(await claimAll(store, f, 'agent-last')).toEqual([]);
    });

    it('lists and expires stale queued runs, and cancels queued and leased runs', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const old = (await store.runs.enqueue(newRun(f, 1, { checkId: 'old' }), at(1))).run;
      const fresher = (await store.runs.enqueue(newRun(f, 50, { checkId: 'new' }), at(50))).run;
      expect((await store.runs.listStaleQueued(at(10), 10)).map((r) => r.runId)).toEqual([old.runId]);
      expect(await store.runs.expireQueued(old.runId, 'queue TTL', at(60))).toBe(true);
      expect(await store.runs.expireQueued(old.runId, 'queue TTL', at(61))).toBe(false);
      expect(await store.runs.get(old.runId)).toMatchObject({ state: 'expired', endReason: 'queue TTL' });

      expect(await store.runs.cancel(f.accountId, fresher.runId, 'by user', at(62))).toMatchObject({
        state: 'cancelled',
        endReason: 'by user',
      });
      const leased = (await store.runs.enqueue(newRun(f, 70, { checkId: 'leased' }), at(70))).run;
      await claimAll(store, f, 'agent-1');
      expect(await store.runs.cancel(f.accountId, leased.runId, 'by user', at(71))).toMatchObject({
        state: 'leased',
        cancelRequested: true,
      });
      expect(await store.runs.cancel('another-account', leased.runId, 'by user', at(71))).toBeUndefined();
    });

    it('cancels a check’s open runs except at the locations kept', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const other = await store.locations.create(f.accountId, {
        name: 'Lab',
        slugName: 'lab',
        icon: 'location',
        proxyUrl: null,
      });
      const g = { ...f, locationId: other.id };
      await store.runs.enqueue(newRun(f, 1), at(1));
      await claimAll(store, f, 'agent-1');
      await store.runs.enqueue(newRun(f, 2), at(2));
      const kept = (await store.runs.enqueue(newRun(g, 2), at(2))).run;

      expect(await store.runs.cancelForCheck(f.accountId, f.checkId, 'moved', at(3), [other.id])).toBe(2);
      expect(await store.runs.get(kept.runId)).toMatchObject({ state: 'queued' });
      expect(await store.runs.cancelForCheck(f.accountId, f.checkId, 'deleted', at(4))).toBe(1);
      expect(await store.runs.get(kept.runId)).toMatchObject({ state: 'cancelled', endReason: 'deleted' });
    });

    it('reports a location’s load and every location’s queue, and prunes finished runs', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      for (const [i, id] of ['a', 'b', 'c', 'd'].entries())
        await store.runs.enqueue(newRun(f, i, { checkId: id }), at(1));
      const [first] = (await claimAll(store, f, 'agent-1', at(600), { uptime: 2, heavy: 0 })) as [Run];
      await claimAll(store, f, 'agent-2', at(600), { uptime: 1, heavy: 0 });

      expect(await store.runs.locationLoad(f.locationId)).toEqual({
        queued: 1,
        leasedByAgent: { 'agent-1': 2, 'agent-2': 1 },
      });
      expect(await store.runs.queueStats()).toEqual([
        { locationId: f.locationId, queued: 1, leased: 3, oldestQueuedDueAt: at(3) },
      ]);

      await store.runs.finish(first.runId, at(10));
      expect(await store.runs.pruneFinished(at(10), 10)).toBe(0);
      expect(await store.runs.pruneFinished(at(11), 10)).toBe(1);
      expect(await store.runs.get(first.runId)).toBeUndefined();
    });

    it('two stores claiming one queue at once hand out every run exactly once', async () => {
      const [a, b] = [await fresh.open(), await fresh.open()];
      const f = await fixture(a);
      const total = 120;
      for (let i = 0; i < total; i++) await a.runs.enqueue(newRun(f, i, { checkId: `c${i}` }), at(0));

      // Four agents per replica, each claiming three at a time until the queue is empty.
      const agent = async (store: Store, agentId: string): Promise<Run[]> => {
        const mine: Run[] = [];
        for (;;) {
          const got = await claimAll(store, f, agentId, at(600), { uptime: 3, heavy: 0 });
          if (got.length === 0 && (await store.runs.locationLoad(f.locationId)).queued === 0) return mine;
          mine.push(...got);
        }
      };
      const agents = [a, b].flatMap((store, s) => Array.from({ length: 4 }, (_, i) => agent(store, `agent-${s}-${i}`)));
      const perAgent = await Promise.all(agents);

      const claimed = perAgent.flat();
      expect(claimed).toHaveLength(total);
      expect(new Set(claimed.map((r) => r.runId)).size).toBe(total);
      const rows = await fresh.query("SELECT run_id, agent_id FROM runs WHERE state = 'leased'");
      const holder = new Map(rows.map((r) => [r.run_id, r.agent_id]));
      expect(holder.size).toBe(total);
      for (const [i, runs] of perAgent.entries())
        for (const run of runs) expect(holder.get(run.runId), `agent ${i}`).toBe(run.agentId);
    });

    it('after a lease expires on one store, the other store hands the run to another agent and the first agent has lost it', async () => {
      const [a, b] = [await fresh.open(), await fresh.open()];
      const f = await fixture(a);
      const { run } = await a.runs.enqueue(newRun(f, 1), at(1));
      const [first] = (await claimAll(a, f, 'agent-a', at(30))) as [Run];
      expect(await claimAll(b, f, 'agent-b')).toEqual([]);

      expect((await b.runs.requeueExpiredLeases(at(30))).requeued).toMatchObject([
        { runId: run.runId, state: 'queued', leaseAttempt: 2 },
      ]);
      const [second] = (await claimAll(b, f, 'agent-b')) as [Run];
      expect(second).toMatchObject({ runId: run.runId, agentId: 'agent-b', leaseAttempt: 2 });
      expect(second.leaseId).not.toBe(first.leaseId);
      const lease = { runId: run.runId, leaseId: first.leaseId as string };
      expect(await a.runs.heartbeat('agent-a', [lease], at(900))).toEqual([
        { ...lease, state: 'lost', leaseExpiresAt: null },
      ]);
    });

    it.runIf(backend.name === 'postgres')(
      'a claim skips a run another connection holds locked instead of waiting for it',
      async () => {
        const [a, b] = [await fresh.open(), await fresh.open()];
        const f = await fixture(a);
        const oldest = (await a.runs.enqueue(newRun(f, 1, { checkId: 'x' }), at(1))).run;
        const next = (await a.runs.enqueue(newRun(f, 2, { checkId: 'y' }), at(1))).run;

        let claimed: Run[] = [];
        const rollBack = new Error('roll back');
        // b's open transaction holds the row lock of the oldest run (its update is never committed).
        const holding = b.transaction(async () => {
          expect(await b.runs.expireQueued(oldest.runId, 'held', at(3))).toBe(true);
          claimed = await claimAll(a, f, 'agent-a');
          throw rollBack;
        });
        await expect(holding).rejects.toBe(rollBack);
        expect(claimed.map((r) => r.runId)).toEqual([next.runId]);
        expect(await a.runs.get(oldest.runId)).toMatchObject({ state: 'queued' });
        expect((await claimAll(a, f, 'agent-a')).map((r) => r.runId)).toEqual([oldest.runId]);
      },
    );
  });

  describe('schedule cursors', () => {
    const newest = async (store: Store, finishedSince: string) =>
      Object.fromEntries(
        (await store.scheduleCursors.newestDueTimes(finishedSince)).map((c) => [
          `${c.checkId}/${c.locationId}`,
          c.dueAt,
        ]),
      );

    it('moves a cursor forward only, and skips (not fails on) a deleted check', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const pair = `${f.checkId}/${f.locationId}`;
      await store.scheduleCursors.save([{ checkId: f.checkId, locationId: f.locationId, dueAt: at(20) }]);
      // An old leader saving late: the newer cursor stays.
      await store.scheduleCursors.save([
        { checkId: f.checkId, locationId: f.locationId, dueAt: at(10) },
        { checkId: randomUUID(), locationId: f.locationId, dueAt: at(30) },
      ]);
      expect(await newest(store, at(0))).toEqual({ [pair]: at(20) });
      await store.scheduleCursors.save([{ checkId: f.checkId, locationId: f.locationId, dueAt: at(40) }]);
      expect(await newest(store, at(0))).toEqual({ [pair]: at(40) });
      // Deleting the check takes its cursors with it.
      await store.checks.delete(f.accountId, f.checkId);
      expect(await newest(store, at(0))).toEqual({});
    });

    it('reads the runs enqueued since the last save: open ones, and finished ones since the given time', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const others = await Promise.all([1, 2, 3].map(() => accountWithCheck(store)));
      const [queued, leased, finishedLate, finishedEarly] = [
        f,
        ...others.map((o) => ({ accountId: o.accountId, locationId: o.location.id, checkId: o.check.id })),
      ] as [Fixture, Fixture, Fixture, Fixture];
      await store.scheduleCursors.save([{ checkId: queued.checkId, locationId: queued.locationId, dueAt: at(10) }]);
      await store.runs.enqueue(newRun(queued, 20), at(19));
      await store.runs.enqueue(newRun(leased, 21), at(20));
      expect(await claimAll(store, leased, 'a1')).toHaveLength(1);
      for (const [g, due] of [
        [finishedLate, 22],
        [finishedEarly, 5],
      ] as const) {
        const { run } = await store.runs.enqueue(newRun(g, due), at(due));
        await store.runs.finish(run.runId, at(due + 1));
      }
      const key = (g: Fixture) => `${g.checkId}/${g.locationId}`;
      expect(await newest(store, at(15))).toEqual({
        [key(queued)]: at(20),
        [key(leased)]: at(21),
        [key(finishedLate)]: at(22),
      });
      // Once saved, a finished run no longer needs the tail.
      await store.scheduleCursors.save([
        { checkId: finishedEarly.checkId, locationId: finishedEarly.locationId, dueAt: at(5) },
      ]);
      expect((await newest(store, at(15)))[key(finishedEarly)]).toBe(at(5));
    });
  });

  describe('agents and error reports', () => {
    it('registers, re-registers, touches and marks agents gone', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const registration = {
        id: 'agent-1',
        locationId: f.locationId,
        version: '1.0.0',
        hostname: 'h1',
        checkTypes: ALL_TYPES,
        runtimes: ['2025.04'],
      };
      const first = await store.agents.upsert(registration, at(1));
      expect(first).toEqual({ ...registration, registeredAt: at(1), lastSeenAt: at(1), goneAt: null });
      await store.agents.markGone('agent-1', at(2));
      expect(await store.agents.get('agent-1')).toMatchObject({ goneAt: at(2), lastSeenAt: at(2) });
      const again = await store.agents.upsert({ ...registration, version: '1.1.0' }, at(3));
      expect(again).toMatchObject({ version: '1.1.0', registeredAt: at(1), lastSeenAt: at(3), goneAt: null });
      await store.agents.touch('agent-1', at(5));
      await store.agents.touch('agent-1', at(4));
      await store.agents.upsert({ ...registration, id: 'agent-2' }, at(4));
      expect((await store.agents.listByLocation(f.locationId)).map((a) => [a.id, a.lastSeenAt])).toEqual([
        ['agent-1', at(5)],
        ['agent-2', at(4)],
      ]);
      expect(await store.agents.get('nobody')).toBeUndefined();
    });

    it('keeps report tokens once and only the newest reports of a location, newest first', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      await store.errorReports.ensureToken(f.locationId, 'hash-1', at(1));
      await store.errorReports.ensureToken(f.locationId, 'hash-1', at(2));
      expect(await store.errorReports.findLocationByToken('hash-1')).toBe(f.locationId);
      expect(await store.errorReports.findLocationByToken('hash-2')).toBeUndefined();

      expect(await store.errorReports.insert(f.locationId, [], at(1), 3)).toEqual([]);
      await store.errorReports.insert(f.locationId, [{ n: 1 }, { n: 2 }], at(1), 3);
      const stored = await store.errorReports.insert(f.locationId, [{ n: 3 }, { n: 4 }], at(2), 3);
      expect(stored.map((r) => r.event)).toEqual([{ n: 3 }, { n: 4 }]);
      expect((await store.errorReports.list(f.locationId, 10)).map((r) => r.event)).toEqual([
        { n: 4 },
        { n: 3 },
        { n: 2 },
      ]);
      expect((await store.errorReports.list(f.locationId, 1)).map((r) => r.receivedAt)).toEqual([at(2)]);
    });
  });

  describe('reads for a batch of results', () => {
    it("reads several of an account's checks at once, never another account's", async () => {
      const store = await fresh.open();
      const mine = await fixture(store);
      const theirs = await fixture(store);
      const read = await store.checks.getMany(mine.accountId, [mine.checkId, theirs.checkId, 'no-such-check']);
      expect([...read.keys()]).toEqual([mine.checkId]);
      expect(read.get(mine.checkId)).toEqual(await store.checks.get(mine.accountId, mine.checkId));
      expect(await store.checks.getMany(mine.accountId, [])).toEqual(new Map());
    });
  });

  describe('run retries, artifacts and location metrics', () => {
    it('links retries to runs and hands each due retry to one of two stores taking at once', async () => {
      const [a, b] = [await fresh.open(), await fresh.open()];
      const f = await fixture(a);
      const { run } = await a.runs.enqueue(newRun(f, 1), at(1));
      expect(await a.runRetries.linkOf(run.runId)).toEqual({ retryOf: null, attempt: 1, chainStartedAt: null });
      await a.runRetries.setLink(run.runId, { retryOf: 'r0', attempt: 2, chainStartedAt: at(0) });
      expect(await b.runRetries.linkOf(run.runId)).toEqual({ retryOf: 'r0', attempt: 2, chainStartedAt: at(0) });
      // The result path reads the link with the run, in one statement.
      const other = (await a.runs.enqueue(newRun(f, 2), at(2))).run;
      const read = await b.runs.getManyWithRetryLink([run.runId, 'no-such-run', other.runId]);
      expect([...read.keys()].sort()).toEqual([run.runId, other.runId].sort());
      expect(read.get(run.runId)).toEqual({
        run: await b.runs.get(run.runId),
        retryLink: { retryOf: 'r0', attempt: 2, chainStartedAt: at(0) },
      });
      expect(read.get(other.runId)?.retryLink).toEqual({ retryOf: null, attempt: 1, chainStartedAt: null });
      expect(await b.runs.getManyWithRetryLink([])).toEqual(new Map());

      const retry = (i: number) => ({ ...f, retryOf: `run-${i}`, attempt: 2, chainStartedAt: at(0), dueAt: at(i) });
      for (let i = 1; i <= 40; i++) expect(await a.runRetries.plan(retry(i))).toBe(true);
      expect(await a.runRetries.plan(retry(1))).toBe(false);
      expect(await a.runRetries.takeDue(at(0), 10)).toEqual([]);
      const firstTwo = await a.runRetries.takeDue(at(2), 10);
      expect(firstTwo.map((r) => r.retryOf)).toEqual(['run-1', 'run-2']);

      const takers = [a, b, a, b].map(async (store) => {
        const taken = [];
        for (
          let got = await store.runRetries.takeDue(at(60), 3);
          got.length > 0;
          got = await store.runRetries.takeDue(at(60), 3)
        )
          taken.push(...got);
        return taken;
      });
      const taken = (await Promise.all(takers)).flat().map((r) => r.retryOf);
      expect(taken.sort()).toEqual(Array.from({ length: 38 }, (_, i) => `run-${i + 3}`).sort());
      expect(await b.runRetries.pending(f.accountId, f.checkId)).toEqual([]);
    });

    it('records artifacts, completes, lists, removes and finds expired ones', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const { run } = await store.runs.enqueue(newRun(f, 1), at(1));
      expect(await store.artifacts.runOwner(run.runId)).toEqual({
        accountId: f.accountId,
        locationId: f.locationId,
        checkId: f.checkId,
      });
      expect(await store.artifacts.runOwner('nope')).toBeUndefined();
      const record = {
        accountId: f.accountId,
        runId: run.runId,
        locationId: f.locationId,
        checkId: f.checkId,
        kind: 'log' as const,
        contentType: 'text/plain',
        size: 3,
        sha256: 'ab',
      };
      await store.artifacts.begin({ ...record, name: 'a.log' });
      await store.artifacts.begin({ ...record, name: 'b.log' });
      expect(await store.artifacts.get(f.accountId, run.runId, 'a.log')).toMatchObject({
        complete: false,
        completedAt: null,
        size: 3,
      });
      await store.artifacts.markComplete(f.accountId, run.runId, 'a.log');
      expect((await store.artifacts.listComplete(f.accountId, run.runId)).map((r) => [r.name, r.complete])).toEqual([
        ['a.log', true],
      ]);
      await store.artifacts.begin({ ...record, name: 'a.log', size: 9 });
      expect(await store.artifacts.get(f.accountId, run.runId, 'a.log')).toMatchObject({ complete: false, size: 9 });

      const farFuture = new Date(Date.now() + 3_600_000).toISOString();
      expect((await store.artifacts.listExpired(farFuture, 10)).map((r) => r.name).sort()).toEqual(['a.log', 'b.log']);
      await store.artifacts.remove(f.accountId, run.runId, 'b.log');
      expect(await store.artifacts.get(f.accountId, run.runId, 'b.log')).toBeUndefined();
      expect(await store.artifacts.resultRun(f.accountId, f.checkId, 'no-result')).toBeUndefined();
    });

    it('records one queue sample per location and minute, lists a range and prunes old ones', async () => {
      const store = await fresh.open();
      const f = await fixture(store);
      const sample = (minute: number, queueSize: number) => ({
        locationId: f.locationId,
        sampledAt: at(60 * minute),
        queueSize,
        oldestQueuedSeconds: queueSize * 2,
      });
      expect(
        await store.locationMetrics.record([sample(1, 5), sample(2, 6), { ...sample(2, 1), locationId: 'deleted' }]),
      ).toBe(2);
      expect(await store.locationMetrics.record([sample(2, 9)])).toBe(0);
      expect(await store.locationMetrics.list(f.locationId, at(60), at(120))).toEqual([sample(1, 5), sample(2, 6)]);
      expect(await store.locationMetrics.prune(at(120))).toBe(1);
      expect(await store.locationMetrics.list(f.locationId, at(0), at(600))).toEqual([sample(2, 6)]);
    });
  });
});
