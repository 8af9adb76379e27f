/** The heartbeat repository at store level, on SQLite and PostgreSQL: state, pings, the monitor's sweep and its races. */
import { describe, expect, it, vi } from 'vitest';
import { ConflictError } from '../../src/service/http/errors.ts';
import type { HeartbeatCheckInput } from '../../src/service/store/heartbeat-dashboard-types.ts';
import { freshAccountEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

const PERIOD = 60_000;
const GRACE = 10_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');

const input = (pingToken: string, overrides: Partial<HeartbeatCheckInput['check']> = {}): HeartbeatCheckInput => ({
  check: {
    name: `beat ${pingToken}`,
    activated: true,
    muted: false,
    frequency: 1,
    frequencyOffset: null,
    body: { name: `beat ${pingToken}` },
    ...overrides,
  },
  periodMs: PERIOD,
  graceMs: GRACE,
  pingToken,
});

const ping = (atMs: number) => ({ atMs, source: 'HTTP GET (curl)', userAgent: 'curl/8' });

describe.each(storeBackends())('heartbeats on $name', (backend) => {
  const t = freshAccountEachTest(backend);

  it('creates the check and its PENDING state with a deadline, and refuses a ping token in use', async () => {
    const { check, state } = await t.store.heartbeats.create(t.accountId, input('tok-1'), T0);
    expect(check).toMatchObject({
      accountId: t.accountId,
      checkType: 'HEARTBEAT',
      name: 'beat tok-1',
      activated: true,
      locationIds: [],
    });
    expect(state).toEqual({
      checkId: check.id,
      accountId: t.accountId,
      pingToken: 'tok-1',
      periodMs: PERIOD,
      graceMs: GRACE,
      status: 'PENDING',
      anchorMs: T0,
      lastPingAt: null,
      deadlineMs: T0 + PERIOD + GRACE,
    });
    await expect(t.store.heartbeats.create(t.accountId, input('tok-1'), T0)).rejects.toBeInstanceOf(ConflictError);
    expect(await t.fresh.query("SELECT count(*) AS n FROM checks WHERE check_type = 'HEARTBEAT'")).toEqual([{ n: 1 }]);
  });

  it('updates: a new period restarts the wait, deactivation clears the deadline, reactivation restarts it', async () => {
    const { check } = await t.store.heartbeats.create(t.accountId, input('tok-1'), T0);
    const longer = { ...input('tok-2'), periodMs: 2 * PERIOD };
    const updated = await t.store.heartbeats.update(t.accountId, check.id, longer, T0 + 1000);
    expect(updated?.state).toMatchObject({
      pingToken: 'tok-2',
      periodMs: 2 * PERIOD,
      anchorMs: T0 + 1000,
      deadlineMs: T0 + 1000 + 2 * PERIOD + GRACE,
    });
    expect(updated?.check.updatedAt).not.toBeNull();

    const off = await t.store.heartbeats.update(t.accountId, check.id, input('tok-2', { activated: false }), T0 + 2000);
    expect(off?.state.deadlineMs).toBeNull();
    expect(off?.check.activated).toBe(false);
    const on = await t.store.heartbeats.update(t.accountId, check.id, input('tok-2'), T0 + 3000);
    expect(on?.state).toMatchObject({ anchorMs: T0 + 3000, deadlineMs: T0 + 3000 + PERIOD + GRACE });

    expect(await t.store.heartbeats.update(t.accountId, 'no-such-check', input('tok-3'), T0)).toBeUndefined();
    const other = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.heartbeats.update(other, check.id, input('tok-3'), T0)).toBeUndefined();
  });

  it('refuses to update to a ping token another heartbeat has', async () => {
    await t.store.heartbeats.create(t.accountId, input('tok-1'), T0);
    const { check } = await t.store.heartbeats.create(t.accountId, input('tok-2'), T0);
    await expect(t.store.heartbeats.update(t.accountId, check.id, input('tok-1'), T0)).rejects.toBeInstanceOf(
      ConflictError,
    );
  });

  it('reads states one by one and several at once, only within the account', async () => {
    const a = await t.store.heartbeats.create(t.accountId, input('tok-a'), T0);
    const b = await t.store.heartbeats.create(t.accountId, input('tok-b'), T0);
    expect(await t.store.heartbeats.getState(t.accountId, a.check.id)).toEqual(a.state);
    const other = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.heartbeats.getState(other, a.check.id)).toBeUndefined();
    const states = await t.store.heartbeats.getStates(t.accountId, [a.check.id, b.check.id, 'unknown']);
    expect([...states.keys()].sort()).toEqual([a.check.id, b.check.id].sort());
    expect(states.get(b.check.id)).toEqual(b.state);
    expect((await t.store.heartbeats.getStates(t.accountId, [])).size).toBe(0);
    expect((await t.store.heartbeats.getStates(other, [a.check.id])).size).toBe(0);
  });

  it('records pings: RECEIVED on time, LATE after the period, and the next deadline from the ping', async () => {
    const { check } = await t.store.heartbeats.create(t.accountId, input('tok-1'), T0);
    const onTime = await t.store.heartbeats.recordPing('tok-1', ping(T0 + PERIOD));
    expect(onTime).toMatchObject({
      accountId: t.accountId,
      checkId: check.id,
      state: 'RECEIVED',
      atMs: T0 + PERIOD,
      source: 'HTTP GET (curl)',
      userAgent: 'curl/8',
    });
    const late = await t.store.heartbeats.recordPing('tok-1', ping(T0 + 2 * PERIOD + 1));
    expect(late?.state).toBe('LATE');
    expect(await t.store.heartbeats.getState(t.accountId, check.id)).toMatchObject({
      status: 'UP',
      anchorMs: T0 + 2 * PERIOD + 1,
      lastPingAt: new Date(T0 + 2 * PERIOD + 1).toISOString(),
      deadlineMs: T0 + 3 * PERIOD + 1 + GRACE,
    });
    expect(await t.store.heartbeats.recordPing('unknown', ping(T0))).toBeUndefined();
  });

  it('fails overdue heartbeats once, stamped at their deadline, and knows the next deadline', async () => {
    const early = await t.store.heartbeats.create(t.accountId, input('tok-early'), T0);
    const later = await t.store.heartbeats.create(t.accountId, input('tok-later'), T0 + 5000);
    await t.store.heartbeats.create(t.accountId, input('tok-off', { activated: false }), T0);
    expect(await t.store.heartbeats.nextDeadlineMs()).toBe(T0 + PERIOD + GRACE);

    const failed = await t.store.heartbeats.failOverdue(T0 + PERIOD + GRACE);
    expect(failed).toEqual([
      expect.objectContaining({
        checkId: early.check.id,
        state: 'FAILING',
        atMs: T0 + PERIOD + GRACE,
        source: null,
        userAgent: null,
      }),
    ]);
    expect(await t.store.heartbeats.getState(t.accountId, early.check.id)).toMatchObject({
      status: 'FAILING',
      deadlineMs: null,
    });
    expect(await t.store.heartbeats.failOverdue(T0 + PERIOD + GRACE)).toEqual([]);
    expect(await t.store.heartbeats.nextDeadlineMs()).toBe(T0 + 5000 + PERIOD + GRACE);

    // A ping ends the FAILING spell (LATE) and sets a new deadline.
    expect((await t.store.heartbeats.recordPing('tok-early', ping(T0 + PERIOD + GRACE + 1)))?.state).toBe('LATE');
    expect((await t.store.heartbeats.failOverdue(T0 + 10 * PERIOD)).map((e) => e.checkId).sort()).toEqual(
      [early.check.id, later.check.id].sort(),
    );
    expect(await t.store.heartbeats.nextDeadlineMs()).toBeNull();
  });

  it('lists, gets and counts events within a window, newest first', async () => {
    const { check } = await t.store.heartbeats.create(t.accountId, input('tok-1'), T0);
    const first = await t.store.heartbeats.recordPing('tok-1', ping(T0 + 1000));
    await t.store.heartbeats.recordPing('tok-1', ping(T0 + 2000));
    const [failing] = await t.store.heartbeats.failOverdue(T0 + 2000 + PERIOD + GRACE);
    const all = await t.store.heartbeats.listEvents(t.accountId, check.id, {
      fromMs: T0,
      toMs: T0 + 10 * PERIOD,
      limit: 10,
    });
    expect(all.map((e) => e.atMs)).toEqual([T0 + 2000 + PERIOD + GRACE, T0 + 2000, T0 + 1000]);
    expect(
      await t.store.heartbeats.listEvents(t.accountId, check.id, {
        fromMs: T0 + 1500,
        toMs: T0 + 10 * PERIOD,
        limit: 1,
      }),
    ).toEqual([failing]);
    expect(await t.store.heartbeats.getEvent(t.accountId, check.id, first?.id ?? '')).toEqual(first);
    const other = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.heartbeats.getEvent(other, check.id, first?.id ?? '')).toBeUndefined();
    expect(await t.store.heartbeats.countEvents(t.accountId, check.id, T0, T0 + 10 * PERIOD)).toEqual({
      total: 3,
      pings: 2,
    });
    // The window's end is exclusive.
    expect(await t.store.heartbeats.countEvents(t.accountId, check.id, T0, T0 + 2000)).toEqual({ total: 1, pings: 1 });
    expect(await t.store.heartbeats.countEvents(t.accountId, check.id, T0 + 5 * PERIOD, T0 + 6 * PERIOD)).toEqual({
      total: 0,
      pings: 0,
    });
  });

  it('two stores sweeping at once record each missed deadline once', async () => {
    const other = await t.fresh.open();
    const checks = [];
    for (let i = 0; i < 20; i++)
      checks.push((await t.store.heartbeats.create(t.accountId, input(`tok-${i}`), T0 + i)).check.id);
    const sweeps = await Promise.all(
      [t.store, other, t.store, other].map((s) => s.heartbeats.failOverdue(T0 + 10 * PERIOD)),
    );
    const failed = sweeps.flat().map((e) => e.checkId);
    expect(failed.sort()).toEqual([...checks].sort());
    expect(await t.fresh.query("SELECT count(*) AS n FROM heartbeat_events WHERE state = 'FAILING'")).toEqual([
      { n: 20 },
    ]);
  });
});

describe.each(storeBackends().filter((b) => b.name === 'postgres'))('heartbeat sweeps racing on $name', (backend) => {
  const t = freshAccountEachTest(backend);

  /** Sessions of this database waiting for a row lock. */
  const lockWaiters = async () =>
    (
      await t.fresh.query(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      )
    )[0]?.n;

  it('two replicas that both read the overdue heartbeat before either writes record one FAILING', async () => {
    const [a, b, holder] = [t.store, await t.fresh.open(), await t.fresh.open()];
    const { accountId } = t;
    const { check } = await a.heartbeats.create(accountId, input('tok-1'), T0);

    // A third connection holds the heartbeat's row lock (an uncommitted ping), so both sweeps read
    // the overdue row and then queue on the lock; the ping is rolled back, leaving the row as read.
    const released = Promise.withResolvers<void>();
    const locked = Promise.withResolvers<void>();
    const holding = holder.transaction(async () => {
      await holder.heartbeats.recordPing('tok-1', ping(T0 + 1));
      locked.resolve();
      await released.promise;
      throw new Error('roll the ping back');
    });
    await locked.promise;
    const sweeps = Promise.all([
      a.heartbeats.failOverdue(T0 + 10 * PERIOD),
      b.heartbeats.failOverdue(T0 + 10 * PERIOD),
    ]);
    await vi.waitFor(async () => expect(await lockWaiters()).toBe(2), { timeout: 5000, interval: 20 });
    released.resolve();
    await expect(holding).rejects.toThrow('roll the ping back');

    const [fromA, fromB] = await sweeps;
    expect([...fromA, ...fromB]).toEqual([
      expect.objectContaining({ checkId: check.id, state: 'FAILING', atMs: T0 + PERIOD + GRACE }),
    ]);
    expect(await t.fresh.query('SELECT state, at_ms FROM heartbeat_events')).toEqual([
      { state: 'FAILING', at_ms: T0 + PERIOD + GRACE },
    ]);
    expect(await a.heartbeats.getState(accountId, check.id)).toMatchObject({ status: 'FAILING', deadlineMs: null });
  });

  it('a sweep that read the heartbeat before a ping committed leaves the pinged heartbeat UP', async () => {
    const [sweeper, pinger] = [t.store, await t.fresh.open()];
    const { accountId } = t;
    const { check } = await sweeper.heartbeats.create(accountId, input('tok-1'), T0);

    const released = Promise.withResolvers<void>();
    const locked = Promise.withResolvers<void>();
    const pinging = pinger.transaction(async () => {
      const event = await pinger.heartbeats.recordPing('tok-1', ping(T0 + PERIOD + GRACE + 5));
      locked.resolve();
      await released.promise;
      return event;
    });
    await locked.promise;
    const sweep = sweeper.heartbeats.failOverdue(T0 + PERIOD + GRACE + 10);
    await vi.waitFor(async () => expect(await lockWaiters()).toBe(1), { timeout: 5000, interval: 20 });
    released.resolve();
    expect((await pinging)?.state).toBe('LATE');

    expect(await sweep).toEqual([]);
    expect(await t.fresh.query('SELECT state FROM heartbeat_events')).toEqual([{ state: 'LATE' }]);
    expect(await sweeper.heartbeats.getState(accountId, check.id)).toMatchObject({
      status: 'UP',
      deadlineMs: T0 + 2 * PERIOD + 2 * GRACE + 5,
    });
  });
});
