/**
 * Coordination without a database: the order of leadership transitions, leader tasks, the in-process
 * backend (SQLite: always leader), waking every held request after missed announcements, and
 * DATABASE_URL choosing the backend. The PostgreSQL backend: coordination-postgres.test.ts.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../../src/service/config.ts';
import { createCoordination } from '../../src/service/coordination/index.ts';
import { InProcessLeadership, InProcessRunSignals } from '../../src/service/coordination/in-process.ts';
import { runWhileLeading } from '../../src/service/coordination/leader-tasks.ts';
import { LeadershipState } from '../../src/service/coordination/leadership-state.ts';
import { PostgresLeadership } from '../../src/service/coordination/postgres-leadership.ts';
import { PostgresRunSignals } from '../../src/service/coordination/postgres-signals.ts';
import { WaitList } from '../../src/service/dispatch/waiters.ts';
import { PollLoop } from '../../src/service/notify/poll-loop.ts';
import { ConfigError } from '../../src/shared/errors.ts';

const quiet = { info() {}, warn() {}, error() {} };

describe('leadership transitions', () => {
  it('a loss that arrives while the work is starting waits for it to have started, then stops it', async () => {
    const state = new LeadershipState('test', quiet);
    const order: string[] = [];
    let finishStarting!: () => void;
    state.onAcquire(async () => {
      order.push('starting');
      await new Promise<void>((resolve) => {
        finishStarting = resolve;
      });
      order.push('started');
    });
    state.onLose(() => {
      order.push('stopped');
    });
    const acquiring = state.acquire();
    const losing = state.lose();
    // The loss is queued behind the start still in progress.
    await Promise.resolve();
    expect(order).toEqual(['starting']);
    finishStarting();
    await Promise.all([acquiring, losing]);
    expect(order).toEqual(['starting', 'started', 'stopped']);
    expect(state.isLeader).toBe(false);
  });

  it('starts leader tasks in order and stops them in the same order, one failing task not keeping the others from it', async () => {
    const leadership = new InProcessLeadership('test', quiet);
    const order: string[] = [];
    const errors: string[] = [];
    const task = (name: string, failStart = false) => ({
      name,
      start() {
        if (failStart) throw new Error(`${name} cannot start`);
        order.push(`${name} start`);
      },
      async stop() {
        order.push(`${name} stop`);
      },
    });
    runWhileLeading(leadership, [task('scheduler'), task('sweeps', true), task('outbox')], {
      ...quiet,
      error: (o: { task?: string }) => errors.push(o.task ?? ''),
    });
    // The in-process service does not start with leader work that cannot.
    await expect(leadership.start()).rejects.toThrow('leader work could not start: sweeps');
    // It leads all the same, so close() stops what did start.
    expect(leadership.isLeader).toBe(true);
    await leadership.close();
    expect(leadership.isLeader).toBe(false);
    expect(order).toEqual(['scheduler start', 'outbox start', 'scheduler stop', 'sweeps stop', 'outbox stop']);
    expect(errors).toEqual(['sweeps']);
  });
});

describe('leader work that is started again', () => {
  it('a notification loop stopped (leadership lost) works again when started (leadership regained)', async () => {
    const due = ['first'];
    const handled: string[] = [];
    let onHandled: () => void = () => {};
    const loop = new PollLoop<string>({
      name: 'test',
      claim: async (limit) => due.splice(0, limit),
      handle: async (item) => {
        handled.push(item);
        onHandled();
      },
      pollMs: 60_000,
      maxInFlight: 1,
      log: quiet,
    });
    const handledNext = () => new Promise<void>((resolve) => (onHandled = resolve));
    let next = handledNext();
    loop.start();
    await next;
    await loop.stop();
    due.push('second');
    next = handledNext();
    loop.start();
    await next;
    await loop.stop();
    expect(handled).toEqual(['first', 'second']);
  });
});

describe('in-process run signals', () => {
  it('deliver an announcement to every subscriber until it unsubscribes', () => {
    const signals = new InProcessRunSignals();
    const heard: string[] = [];
    const off = signals.subscribe({ announced: (locationId) => heard.push(locationId) });
    signals.announce('loc-1', [{ checkType: 'API', checkClass: 'uptime' }]);
    off();
    signals.announce('loc-2', [{ checkType: 'API', checkClass: 'uptime' }]);
    expect(heard).toEqual(['loc-1']);
  });
});

describe('waking every held request', () => {
  it('wakes waiters whatever they could take, and moves every location on so a request between claim and wait tries again', async () => {
    const list = new WaitList();
    const heavyOnly = { checkTypes: new Set(['BROWSER'] as const), slots: { uptime: 0, heavy: 1 } };
    const seenBefore = list.version('never-announced');
    const waiting = list.wait('loc-1', heavyOnly, 20_000);
    // An announcement this waiter could not take leaves it waiting ...
    list.notify('loc-1', [{ checkType: 'API', checkClass: 'uptime' }]);
    expect(list.size).toBe(1);
    // ... wakeAll does not ask.
    list.wakeAll();
    expect(await waiting).toBe('woken');
    expect(list.version('never-announced')).not.toBe(seenBefore);
  });
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a database that cannot be reached', () => {
  it('leadership keeps trying and says why, without leading', async () => {
    const url = `postgres://postgres@127.0.0.1:${await closedPort()}/postgres`;
    const warnings: string[] = [];
    let secondWarning!: () => void;
    const twoWarnings = new Promise<void>((resolve) => (secondWarning = resolve));
    const log = {
      ...quiet,
      warn(_obj: unknown, msg?: string) {
        warnings.push(String(msg));
        if (warnings.length === 2) secondWarning();
      },
    };
    const leadership = new PostgresLeadership({ url, name: 'test', log, retryMs: 10 });
    await leadership.start();
    await twoWarnings;
    await leadership.close();
    expect(warnings.slice(0, 2)).toEqual([
      'the database cannot be reached for the leadership; trying again',
      'the database cannot be reached for the leadership; trying again',
    ]);
    expect(leadership.isLeader).toBe(false);
  });

  it('run signals refuse to start, so the service does not run deaf to other replicas', async () => {
    const signals = new PostgresRunSignals({
      url: `postgres://postgres@127.0.0.1:${await closedPort()}/postgres`,
      log: quiet,
    });
    await expect(signals.start()).rejects.toThrow(/ECONNREFUSED/);
    await signals.close();
  });
});

describe('DATABASE_URL', () => {
  it('unset keeps SQLite in DATA_DIR and in-process coordination', () => {
    const config = loadServiceConfig({});
    expect(config.database).toEqual({ kind: 'sqlite' });
    expect(createCoordination(config.database, quiet).leadership).toBeInstanceOf(InProcessLeadership);
  });

  it.each(['postgres://outpost:secret@db.internal:5432/outpost', 'postgresql://db.internal/outpost?sslmode=require'])(
    '%s chooses PostgreSQL',
    (url) => {
      const config = loadServiceConfig({ DATABASE_URL: url });
      expect(config.database).toEqual({ kind: 'postgres', url });
      expect(createCoordination(config.database, quiet).leadership).toBeInstanceOf(PostgresLeadership);
    },
  );

  it.each([
    [
      'mysql://db.internal/outpost',
      'DATABASE_URL has the scheme "mysql:", which is not supported; use a postgres:// or postgresql:// URL',
    ],
    ['db.internal:5432', 'DATABASE_URL has the scheme "db.internal:"'],
    [
      'not a url',
      'DATABASE_URL is not a URL; use a postgres:// or postgresql:// URL (PostgreSQL), or unset (SQLite in DATA_DIR)',
    ],
  ])('refuses %s with a ConfigError naming DATABASE_URL and what is allowed', (value, message) => {
    expect(() => loadServiceConfig({ DATABASE_URL: value })).toThrow(ConfigError);
    expect(() => loadServiceConfig({ DATABASE_URL: value })).toThrow(message);
  });

  it('does not repeat the URL in its error, which may carry a password', () => {
    expect(() => loadServiceConfig({ DATABASE_URL: 'mysql://outpost:hunter2@db/outpost' })).toThrow(/^(?!.*hunter2)/);
  });
});
