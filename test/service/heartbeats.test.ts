/**
 * Heartbeat checks, pings, events and the monitor. Timing runs on an injected clock: the routes and
 * the monitor read `clock.now`, and tests move it; the monitor's own timer runs on fake timers.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { buildService } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { HeartbeatMonitor } from '../../src/service/heartbeats/monitor.ts';
import { useAccountAuth } from '../../src/service/http/auth.ts';
import { errorHandler, notFoundHandler } from '../../src/service/http/errors.ts';
import { checkRoutes } from '../../src/service/routes/checks.ts';
import { heartbeatCheckRoutes } from '../../src/service/routes/checks-heartbeat.ts';
import { heartbeatEventRoutes } from '../../src/service/routes/heartbeat-events.ts';
import { clientKind, pingRoutes } from '../../src/service/routes/ping.ts';
import type { HeartbeatEvent } from '../../src/service/store/heartbeat-dashboard-types.ts';
import { DB_FILE } from '../../src/service/store/sqlite/db.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import type { Store } from '../../src/service/store/store.ts';
import { tempDataDir } from '../helpers/public-api.ts';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const S = 1000;
const PUBLIC_URL = 'https://monitor.example.com/outpost';

interface HeartbeatView {
  id: string;
  name: string;
  checkType: string;
  activated: boolean;
  heartbeat: {
    period: number;
    periodUnit: string;
    grace: number;
    graceUnit: string;
    pingToken: string;
    pingUrl: string;
  };
}
interface EventView {
  id: string;
  state: string;
  timestamp: string;
  source: string | null;
  userAgent: string | null;
}
interface Availability {
  successRatio: { previousPeriod: number; currentPeriod: number };
  totalEntitiesCurrentPeriod: number;
}
type EventsResponse = Array<{
  events: EventView[];
  stats: { last24Hours: Availability | null; last7Days: Availability | null };
}>;

interface Harness {
  app: FastifyInstance;
  store: Store;
  clock: { now: number };
  monitor: HeartbeatMonitor;
  failing: HeartbeatEvent[];
  headers: Record<string, string>;
  otherHeaders: Record<string, string>;
  dataDir: string;
}

/** The heartbeat routes, the ping route, checks' GET/DELETE and a monitor, all on one clock. */
async function startHarness(): Promise<Harness> {
  const dataDir = tempDataDir();
  const config = loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', PUBLIC_URL });
  const store = await openSqliteStore(dataDir);
  const clock = { now: T0 };
  const now = () => clock.now;
  const app = Fastify({ logger: false });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  await app.register(async (api) => {
    useAccountAuth(api, store);
    await api.register(heartbeatCheckRoutes, { store, config, now });
    await api.register(heartbeatEventRoutes, { store, now });
    await api.register(checkRoutes, { store, config, hooks: { checkChanged: async () => {} } });
  });
  await app.register(pingRoutes, { store, now });
  await app.ready();
  const failing: HeartbeatEvent[] = [];
  const monitor = new HeartbeatMonitor({
    heartbeats: store.heartbeats,
    log: { info: () => {}, error: () => {} },
    now,
    onFailing: (e) => failing.push(e),
  });
  const header = async (name: string) => {
    const { accountId, apiKey } = await createAccount(store, name);
    return { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId };
  };
  return {
    app,
    store,
    clock,
    monitor,
    failing,
    headers: await header('Acme'),
    otherHeaders: await header('Other'),
    dataDir,
  };
}

const timing = { period: 60, periodUnit: 'seconds', grace: 30, graceUnit: 'seconds' };

describe('heartbeat checks', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.monitor.stop();
    await h.app.close();
    await h.store.close();
    rmSync(h.dataDir, { recursive: true, force: true });
  });

  async function createHeartbeat(body: Record<string, unknown> = {}): Promise<HeartbeatView> {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/checks/heartbeat',
      headers: h.headers,
      payload: { name: 'nightly backup', heartbeat: timing, ...body },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as HeartbeatView;
  }

  const ping = (
    token: string,
    method: 'GET' | 'POST' | 'HEAD' = 'GET',
    headers: Record<string, string> = {},
    payload?: string,
  ) => h.app.inject({ method, url: `/ping/${token}`, headers, ...(payload === undefined ? {} : { payload }) });

  async function events(id: string, query = ''): Promise<EventsResponse> {
    const res = await h.app.inject({
      method: 'GET',
      url: `/v1/checks/heartbeats/${id}/events${query}`,
      headers: h.headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as EventsResponse;
  }

  it('creates a heartbeat with reference defaults and a ping URL under PUBLIC_URL', async () => {
    const hb = await createHeartbeat();
    expect(hb).toMatchObject({
      name: 'nightly backup',
      checkType: 'HEARTBEAT',
      activated: true,
      muted: false,
      tags: [],
    });
    expect(hb.heartbeat).toMatchObject(timing);
    expect(hb.heartbeat.pingToken).toMatch(/^[0-9a-f]{32}$/);
    expect(hb.heartbeat.pingUrl).toBe(`${PUBLIC_URL}/ping/${hb.heartbeat.pingToken}`);

    const get = await h.app.inject({ method: 'GET', url: `/v1/checks/${hb.id}`, headers: h.headers });
    expect(get.statusCode, get.body).toBe(200);
    expect(get.json()).toMatchObject({ id: hb.id, checkType: 'HEARTBEAT', heartbeat: hb.heartbeat });
    const list = await h.app.inject({ method: 'GET', url: '/v1/checks?checkType=HEARTBEAT', headers: h.headers });
    expect((list.json() as HeartbeatView[]).map((c) => c.id)).toEqual([hb.id]);
  });

  it('refuses a period or grace outside the reference bounds, naming the field', async () => {
    const bad = async (heartbeat: Record<string, unknown>, field: RegExp) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/checks/heartbeat',
        headers: h.headers,
        payload: { name: 'x', heartbeat },
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().message).toMatch(field);
    };
    await bad({ ...timing, period: 29 }, /heartbeat\/period must be between 30 seconds and 365 days/);
    await bad({ ...timing, period: 366, periodUnit: 'days' }, /heartbeat\/period/);
    await bad({ ...timing, grace: 400, graceUnit: 'days' }, /heartbeat\/grace/);
    await bad({ ...timing, periodUnit: 'weeks' }, /heartbeat\/periodUnit must be one of seconds, minutes, hours, days/);
    const missing = await h.app.inject({
      method: 'POST',
      url: '/v1/checks/heartbeat',
      headers: h.headers,
      payload: { name: 'x' },
    });
    expect(missing.json().message).toMatch(/heartbeat is required/);
  });

  it('takes a chosen ping token once; a second heartbeat with it gets 409', async () => {
    const token = 'my-backup-job-token-1';
    const hb = await createHeartbeat({ heartbeat: { ...timing, pingToken: token } });
    expect(hb.heartbeat.pingToken).toBe(token);
    const again = await h.app.inject({
      method: 'POST',
      url: '/v1/checks/heartbeat',
      headers: h.otherHeaders,
      payload: { name: 'y', heartbeat: { ...timing, pingToken: token } },
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toMatch(/pingToken is already in use/);
  });

  it('PUT changes what it carries, keeps the token, and is 404 for another account or another type', async () => {
    const hb = await createHeartbeat();
    const res = await h.app.inject({
      method: 'PUT',
      url: `/v1/checks/heartbeat/${hb.id}`,
      headers: h.headers,
      payload: { name: 'renamed', heartbeat: { ...timing, period: 5, periodUnit: 'minutes' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'renamed',
      heartbeat: { period: 5, periodUnit: 'minutes', pingToken: hb.heartbeat.pingToken },
    });
    const other = await h.app.inject({
      method: 'PUT',
      url: `/v1/checks/heartbeat/${hb.id}`,
      headers: h.otherHeaders,
      payload: { name: 'x' },
    });
    expect(other.statusCode).toBe(404);
  });

  it('answers pings with 200 OK for GET, POST and HEAD and records method, client kind and user agent', async () => {
    const hb = await createHeartbeat();
    const token = hb.heartbeat.pingToken;
    const get = await ping(token, 'GET', { 'user-agent': 'curl/8.5.0' });
    expect(get.statusCode).toBe(200);
    expect(get.body).toBe('OK');
    expect(get.headers['content-type']).toMatch(/^text\/plain/);
    h.clock.now += S;
    // A body of any type and size is discarded unread.
    const post = await ping(
      token,
      'POST',
      { 'content-type': 'application/json', 'user-agent': 'python-requests/2.32' },
      '{"not": json'.repeat(100_000),
    );
    expect(post.statusCode).toBe(200);
    h.clock.now += S;
    const head = await ping(token, 'HEAD', { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');

    const [page] = await events(hb.id);
    expect(page?.events.map((e) => [e.state, e.source, e.userAgent])).toEqual([
      ['RECEIVED', 'HTTP HEAD (browser)', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0'],
      ['RECEIVED', 'HTTP POST (python)', 'python-requests/2.32'],
      ['RECEIVED', 'HTTP GET (curl)', 'curl/8.5.0'],
    ]);
  });

  it('answers 404 for an unknown token and records nothing', async () => {
    const res = await ping('0123456789abcdef0123456789abcdef');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'No heartbeat has this ping token' });
  });

  it('tells client kinds apart by user agent', () => {
    expect(clientKind('Wget/1.21')).toBe('wget');
    expect(clientKind('node')).toBe('node');
    expect(clientKind('Go-http-client/1.1')).toBe('go');
    expect(clientKind('SomethingElse/1')).toBe('other');
    expect(clientKind(undefined)).toBe('unknown');
  });

  it('goes FAILING once when period plus grace pass without a ping, and the next ping recovers it as LATE', async () => {
    const hb = await createHeartbeat();
    const token = hb.heartbeat.pingToken;
    h.clock.now = T0 + 50 * S;
    await ping(token);
    // Deadline: last ping + 60 s period + 30 s grace.
    expect(await h.monitor.sweep(T0 + 50 * S + 90 * S - 1)).toEqual([]);
    const failed = await h.monitor.sweep(T0 + 140 * S);
    expect(failed.map((e) => [e.checkId, e.state, e.atMs])).toEqual([[hb.id, 'FAILING', T0 + 140 * S]]);
    // Recorded once per missed deadline, not on every sweep.
    expect(await h.monitor.sweep(T0 + 1000 * S)).toEqual([]);

    h.clock.now = T0 + 1000 * S;
    await ping(token);
    // Back on the period: on time again, then late inside the grace window.
    h.clock.now += 60 * S;
    await ping(token);
    h.clock.now += 75 * S;
    await ping(token);
    const [page] = await events(hb.id);
    expect(page?.events.map((e) => [e.state, e.timestamp])).toEqual([
      ['LATE', new Date(T0 + 1135 * S).toISOString()],
      ['RECEIVED', new Date(T0 + 1060 * S).toISOString()],
      ['LATE', new Date(T0 + 1000 * S).toISOString()],
      ['FAILING', new Date(T0 + 140 * S).toISOString()],
      ['RECEIVED', new Date(T0 + 50 * S).toISOString()],
    ]);
    expect(page?.events.find((e) => e.state === 'FAILING')).toMatchObject({ source: null, userAgent: null });
  });

  it('counts the first deadline from creation when no ping ever arrives', async () => {
    const hb = await createHeartbeat();
    expect(await h.monitor.sweep(T0 + 90 * S - 1)).toEqual([]);
    expect((await h.monitor.sweep(T0 + 90 * S)).map((e) => e.checkId)).toEqual([hb.id]);
  });

  it('does not fail a deactivated heartbeat, and starts a fresh wait when it is activated again', async () => {
    const hb = await createHeartbeat();
    const put = (body: object) =>
      h.app.inject({ method: 'PUT', url: `/v1/checks/heartbeat/${hb.id}`, headers: h.headers, payload: body });
    h.clock.now = T0 + 10 * S;
    expect((await put({ activated: false })).statusCode).toBe(200);
    expect(await h.monitor.sweep(T0 + 3600 * S)).toEqual([]);
    h.clock.now = T0 + 3600 * S;
    expect((await put({ activated: true })).statusCode).toBe(200);
    expect(await h.monitor.sweep(T0 + 3689 * S)).toEqual([]);
    expect(await h.monitor.sweep(T0 + 3690 * S)).toHaveLength(1);
  });

  it('restarts the wait when the period changes, so the change itself never fails the check', async () => {
    const hb = await createHeartbeat();
    h.clock.now = T0 + 80 * S;
    await h.app.inject({
      method: 'PUT',
      url: `/v1/checks/heartbeat/${hb.id}`,
      headers: h.headers,
      payload: { heartbeat: { ...timing, period: 2, periodUnit: 'minutes' } },
    });
    expect(await h.monitor.sweep(T0 + 80 * S + 150 * S - 1)).toEqual([]);
    expect(await h.monitor.sweep(T0 + 80 * S + 150 * S)).toHaveLength(1);
  });

  it('fires FAILING from its own timer at the deadline', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const hb = await createHeartbeat();
      await h.monitor.start();
      // The monitor sleeps at most a second between sweeps: advance the clock and the timers together.
      for (let i = 0; i < 95 && h.failing.length === 0; i++) {
        h.clock.now += S;
        await vi.advanceTimersByTimeAsync(S);
      }
      expect(h.failing.map((e) => [e.checkId, e.atMs])).toEqual([[hb.id, T0 + 90 * S]]);
      expect(h.clock.now - T0).toBeLessThanOrEqual(91 * S);
    } finally {
      await h.monitor.stop();
      vi.useRealTimers();
    }
  });

  it('lists events newest first within startTime/endTime, at most `limit` (≤ 10, default 10)', async () => {
    const hb = await createHeartbeat();
    for (let i = 0; i < 12; i++) {
      h.clock.now = T0 + i * 10 * S;
      await ping(hb.heartbeat.pingToken);
    }
    h.clock.now = T0 + 200 * S;
    expect((await events(hb.id))[0]?.events).toHaveLength(10);
    const two = (await events(hb.id, '?limit=2'))[0]?.events ?? [];
    expect(two.map((e) => e.timestamp)).toEqual([
      new Date(T0 + 110 * S).toISOString(),
      new Date(T0 + 100 * S).toISOString(),
    ]);
    const window = await events(
      hb.id,
      `?startTime=${new Date(T0 + 20 * S).toISOString()}&endTime=${new Date(T0 + 40 * S).toISOString()}`,
    );
    expect(window[0]?.events).toHaveLength(3);
    // A date-only endTime covers that whole day.
    expect((await events(hb.id, '?startTime=2026-03-01&endTime=2026-03-01'))[0]?.events).toHaveLength(10);
    expect((await events(hb.id, '?startTime=2026-03-02&endTime=2026-03-03'))[0]?.events).toHaveLength(0);

    for (const [query, message] of [
      ['?limit=11', /limit must be <= 10/],
      ['?limit=0', /limit must be >= 1/],
      ['?startTime=yesterday', /startTime must be a date/],
      ['?startTime=2026-03-02&endTime=2026-03-01', /startTime must not be after endTime/],
    ] as const) {
      const res = await h.app.inject({
        method: 'GET',
        url: `/v1/checks/heartbeats/${hb.id}/events${query}`,
        headers: h.headers,
      });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().message).toMatch(message);
    }
  });

  it('reports success ratios for the last 24 hours and 7 days against the period before, and availability', async () => {
    const DAY = 86_400 * S;
    const now = T0 + 30 * DAY;
    h.clock.now = now - 2 * DAY;
    // Created two days ago with a one-day period and no grace.
    const hb2 = await createHeartbeat({
      name: 'daily',
      heartbeat: { ...timing, period: 1, periodUnit: 'days', grace: 0, graceUnit: 'hours' },
    });
    const pingAt = async (ms: number) => {
      h.clock.now = ms;
      expect((await ping(hb2.heartbeat.pingToken)).statusCode).toBe(200);
    };
    await pingAt(now - DAY - 2 * 3600 * S); // previous 24 h: a ping (RECEIVED)...
    await h.store.heartbeats.failOverdue(now - 2 * 3600 * S); // ...and its missed deadline a day later
    await pingAt(now - 3600 * S); // current 24 h: LATE (recovery)
    await pingAt(now - 1800 * S); // RECEIVED
    h.clock.now = now;
    const [p2] = await events(hb2.id);
    // last24Hours: current [now-24h, now] holds FAILING, LATE, RECEIVED → 2 of 3 pings; previous holds 1 ping of 1.
    expect(p2?.stats.last24Hours).toEqual({
      successRatio: { previousPeriod: 100, currentPeriod: 66.67 },
      totalEntitiesCurrentPeriod: 3,
    });
    expect(p2?.stats.last7Days).toEqual({
      successRatio: { previousPeriod: 0, currentPeriod: 75 },
      totalEntitiesCurrentPeriod: 4,
    });

    const availability = async (query: string) => {
      const res = await h.app.inject({
        method: 'GET',
        url: `/v1/checks/heartbeats/${hb2.id}/availability${query}`,
        headers: h.headers,
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as Availability | null;
    };
    expect(await availability('')).toEqual(p2?.stats.last24Hours);
    // A window with no events in it or before it: null.
    expect(await availability('?startTime=2026-01-01&endTime=2026-01-02')).toBeNull();
  });

  it('reads one event with stats; another account, an unknown id or a non-heartbeat check is 404', async () => {
    const hb = await createHeartbeat();
    await ping(hb.heartbeat.pingToken);
    const [page] = await events(hb.id);
    const eventId = page?.events[0]?.id ?? '';
    const one = await h.app.inject({
      method: 'GET',
      url: `/v1/checks/heartbeats/${hb.id}/events/${eventId}`,
      headers: h.headers,
    });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({
      event: { id: eventId, state: 'RECEIVED' },
      stats: { last24Hours: { totalEntitiesCurrentPeriod: 1 } },
    });

    for (const [url, headers] of [
      [`/v1/checks/heartbeats/${hb.id}/events/${eventId}`, h.otherHeaders],
      [`/v1/checks/heartbeats/${hb.id}/events`, h.otherHeaders],
      [`/v1/checks/heartbeats/${hb.id}/availability`, h.otherHeaders],
      [`/v1/checks/heartbeats/${hb.id}/events/00000000-0000-4000-8000-000000000000`, h.headers],
      ['/v1/checks/heartbeats/00000000-0000-4000-8000-000000000000/events', h.headers],
    ] as const) {
      const res = await h.app.inject({ method: 'GET', url, headers });
      expect(res.statusCode, url).toBe(404);
    }
    const noKey = await h.app.inject({ method: 'GET', url: `/v1/checks/heartbeats/${hb.id}/events` });
    expect(noKey.statusCode).toBe(401);
  });

  it('is never schedulable, even with a location row, and deleting the check deletes its events', async () => {
    const hb = await createHeartbeat();
    await ping(hb.heartbeat.pingToken);
    // Give it a location behind the API's back: the scheduler's query must still leave it out.
    const accountId = h.headers['x-service-account'] ?? '';
    const location = await h.store.locations.create(accountId, {
      name: 'L',
      slugName: 'l',
      icon: 'location',
      proxyUrl: null,
    });
    const db = new DatabaseSync(path.join(h.dataDir, DB_FILE));
    db.prepare('INSERT INTO check_locations (check_id, location_id, position) VALUES (?, ?, 0)').run(
      hb.id,
      location.id,
    );
    db.close();
    expect((await h.store.checks.get(accountId, hb.id))?.locationIds).toEqual([location.id]);
    expect((await h.store.checks.listSchedulable()).map((c) => c.id)).not.toContain(hb.id);

    const del = await h.app.inject({ method: 'DELETE', url: `/v1/checks/${hb.id}`, headers: h.headers });
    expect(del.statusCode).toBe(204);
    expect(await ping(hb.heartbeat.pingToken).then((r) => r.statusCode)).toBe(404);
  });
});

describe('heartbeats in the composed service', () => {
  it('serves pings over real HTTP on loopback and runs the monitor with the service', async () => {
    const dataDir = tempDataDir();
    const service = await buildService(
      loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PUBLIC_URL }),
      { logger: false },
    );
    try {
      const base = await service.start();
      const { accountId, apiKey } = await createAccount(service.store, 'Acme');
      const headers = {
        authorization: `Bearer ${apiKey}`,
        'x-service-account': accountId,
        'content-type': 'application/json',
      };
      const created = await fetch(`${base}/v1/checks/heartbeat`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'cron', heartbeat: timing }),
      });
      expect(created.status).toBe(201);
      const hb = (await created.json()) as HeartbeatView;
      // The ping URL is rooted at PUBLIC_URL; the job reaches the same path on this server.
      const pinged = await fetch(`${base}${new URL(hb.heartbeat.pingUrl).pathname.replace('/outpost', '')}`);
      expect(pinged.status).toBe(200);
      expect(await pinged.text()).toBe('OK');
      const list = await fetch(`${base}/v1/checks/heartbeats/${hb.id}/events`, { headers });
      const [page] = (await list.json()) as EventsResponse;
      expect(page?.events[0]).toMatchObject({ state: 'RECEIVED', source: 'HTTP GET (node)', userAgent: 'node' });
      expect(service.heartbeats).toBeInstanceOf(HeartbeatMonitor);
    } finally {
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
