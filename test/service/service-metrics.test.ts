/**
 * GET /metrics of a real service on loopback: the values after real actions (runs enqueued, leased
 * by an agent over the agent API, a result stored, a lease left to expire), the route patterns of
 * the HTTP histogram, and METRICS_TOKEN.
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { AGENT_PATHS, type Job } from '../../src/shared/protocol.ts';
import { ConfigError } from '../../src/shared/errors.ts';
import { type Harness, registrationBody, resultFor, startHarness } from '../helpers/dispatch-harness.ts';
import { parsePromText, valueWithLabels } from '../helpers/prometheus-text.ts';
import { tempDataDir } from '../helpers/public-api.ts';
import { httpApiAccount } from '../support/web-api-account.ts';

const TOKEN = 'scrape-token-0123456789abcdef';

let service: Service | undefined;
let dataDir: string;

async function start(env: Record<string, string> = {}): Promise<{ service: Service; url: string }> {
  dataDir = tempDataDir();
  // Leases of 2 s (the least allowed): the test leaves one to expire.
  service = await buildService(
    loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', JOB_LEASE_SECONDS: '2', ...env }),
    { logger: false },
  );
  return { service, url: await service.start() };
}

afterEach(async () => {
  if (!service) return;
  await service.stop();
  service = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

async function scrape(url: string) {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return parsePromText(await res.text());
}

/** An account with a location (and its agent key) and two deactivated API checks, all made through the API. */
async function tenant(url: string, svc: Service) {
  const { accountId, post } = await httpApiAccount(svc.store, url, 'Acme');
  const location = await post<{ id: string; keys?: Array<{ rawKey: string }> }>('/v1/private-locations', {
    name: 'Office',
    slugName: 'office',
  });
  // Deactivated: the scheduler leaves them alone, so the test decides when runs are due.
  const checkBody = (name: string) => ({
    name,
    activated: false,
    privateLocations: ['office'],
    request: { method: 'GET', url: 'http://127.0.0.1:9/' },
  });
  const checks = [
    await post<{ id: string }>('/v1/checks/api', checkBody('One')),
    await post<{ id: string }>('/v1/checks/api', checkBody('Two')),
  ];
  return {
    accountId,
    locationId: location.id,
    key: location.keys?.[0]?.rawKey as string,
    checkIds: checks.map((c) => c.id),
  };
}

/** A status page with a PENDING webhook subscriber, made through the API: its confirmation is queued. */
async function subscribeWebhook(url: string, svc: Service, hookUrl: string) {
  const { post } = await httpApiAccount(svc.store, url, 'Pages');
  const service = await post<{ id: string }>('/v1/status-pages/services', { name: 'API' }, 200);
  const page = await post<{ id: string }>('/v1/status-pages', {
    name: 'Acme',
    url: 'acme',
    cards: [{ name: 'Core', services: [{ id: service.id }] }],
  });
  await post(`/v1/status-pages/${page.id}/subscriptions/bulk`, {
    subscriptions: [
      { type: 'WEBHOOK', config: JSON.stringify({ url: hookUrl, secret: 'a-webhook-secret-of-some-length' }) },
    ],
  });
}

function agentClient(url: string, key: string) {
  const agentId = crypto.randomUUID();
  const post = async (path: string, body: object) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return res.json() as Promise<Record<string, unknown>>;
  };
  return {
    register: () => post(AGENT_PATHS.register, registrationBody(agentId)),
    lease: async () =>
      ((await post(AGENT_PATHS.lease, { agentId, slots: { uptime: 10, heavy: 0 }, waitSeconds: 0 })) as { jobs: Job[] })
        .jobs,
    submit: (job: Job) => post(AGENT_PATHS.results, { agentId, leaseId: job.leaseId, result: resultFor(job, agentId) }),
  };
}

describe('GET /metrics', () => {
  it('reports the queue, leases, stored results and lease expiries per location as they happen', async () => {
    const { service: svc, url } = await start();
    const t = await tenant(url, svc);
    const location = { location: t.locationId };

    let samples = await scrape(url);
    expect(valueWithLabels(samples, 'outpost_service_queue_depth', location)).toBe(0);
    expect(valueWithLabels(samples, 'outpost_service_queue_oldest_age_seconds', location)).toBe(0);

    // Two runs, due 30 s ago.
    const dueAt = Date.now() - 30_000;
    for (const id of t.checkIds) {
      const check = await svc.store.checks.get(t.accountId, id);
      if (!check) throw new Error('check missing');
      await svc.dispatcher.enqueue(check, t.locationId, dueAt);
    }
    samples = await scrape(url);
    expect(valueWithLabels(samples, 'outpost_service_queue_depth', location)).toBe(2);
    expect(valueWithLabels(samples, 'outpost_service_runs', { ...location, state: 'queued' })).toBe(2);
    expect(valueWithLabels(samples, 'outpost_service_runs', { ...location, state: 'leased' })).toBe(0);
    expect(valueWithLabels(samples, 'outpost_service_queue_oldest_age_seconds', location)).toBeGreaterThanOrEqual(30);

    const agent = agentClient(url, t.key);
    await agent.register();
    const jobs = await agent.lease();
    expect(jobs).toHaveLength(2);
    samples = await scrape(url);
    expect(valueWithLabels(samples, 'outpost_service_runs', { ...location, state: 'leased' })).toBe(2);
    expect(valueWithLabels(samples, 'outpost_service_queue_depth', location)).toBe(0);

    await agent.submit(jobs[0] as Job);
    await agent.submit(jobs[0] as Job); // a duplicate is not a second stored result
    samples = await scrape(url);
    expect(valueWithLabels(samples, 'outpost_service_results_stored_total', location)).toBe(1);
    expect(valueWithLabels(samples, 'outpost_service_runs', { ...location, state: 'leased' })).toBe(1);

    // The other lease is never heartbeated: the sweeper (every second) hands its run back after 2 s.
    await vi.waitFor(
      async () => expect(valueWithLabels(await scrape(url), 'outpost_service_lease_expiries_total', location)).toBe(1),
      {
        timeout: 8_000,
        interval: 250,
      },
    );
    samples = await scrape(url);
    expect(valueWithLabels(samples, 'outpost_service_runs', { ...location, state: 'queued' })).toBe(1);
    expect(valueWithLabels(samples, 'outpost_service_runs', { ...location, state: 'leased' })).toBe(0);
  });

  it('counts runs that expired without running, by reason', async () => {
    const { service: svc, url } = await start({ JOB_QUEUE_TTL_SECONDS: '5' });
    const t = await tenant(url, svc);
    const check = await svc.store.checks.get(t.accountId, t.checkIds[0] as string);
    if (!check) throw new Error('check missing');
    // The second run supersedes the first, which no agent took; it is itself older than the 5 s
    // queue TTL, so the sweeper (every second) expires it.
    await svc.dispatcher.enqueue(check, t.locationId, Date.now() - 60_000);
    await svc.dispatcher.enqueue(check, t.locationId, Date.now() - 59_000);
    const expired = async (reason: string) =>
      valueWithLabels(await scrape(url), 'outpost_service_runs_expired_total', { location: t.locationId, reason });
    expect(await expired('superseded')).toBe(1);
    await vi.waitFor(async () => expect(await expired('queue_ttl')).toBe(1), { timeout: 8_000, interval: 250 });
    expect(valueWithLabels(await scrape(url), 'outpost_service_queue_depth', { location: t.locationId })).toBe(0);
  });

  it('times requests by route pattern, method and status class, never by raw URL', async () => {
    const { service: svc, url } = await start();
    const t = await tenant(url, svc);
    await fetch(`${url}/v1/checks/${t.checkIds[0]}`);
    await fetch(`${url}/no/such/${t.checkIds[1]}`);
    const text = await (await fetch(`${url}/metrics`)).text();
    const samples = parsePromText(text);
    const count = (labels: Record<string, string>) =>
      valueWithLabels(samples, 'outpost_service_http_request_duration_seconds_count', labels);
    expect(count({ route: '/v1/checks/:id', method: 'GET', status_class: '4xx' })).toBe(1);
    expect(count({ route: '/v1/private-locations', method: 'POST', status_class: '2xx' })).toBe(1);
    expect(count({ route: '/v1/checks/api', method: 'POST', status_class: '2xx' })).toBe(2);
    expect(count({ route: 'unmatched', method: 'GET', status_class: '4xx' })).toBe(1);
    for (const id of t.checkIds) expect(text).not.toContain(id);
  });

  it('reports the depth of both notification outboxes and the process metrics', async () => {
    // A subscriber webhook that refuses: its confirmation stays in the outbox, due again in 10 minutes.
    const receiver = createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { service: svc, url } = await start({ OUTBOUND_ALLOW: '127.0.0.1', NOTIFY_BACKOFF_BASE_MS: '600000' });
      let samples = await scrape(url);
      expect(valueWithLabels(samples, 'outpost_service_outbox_depth', { outbox: 'subscriber' })).toBe(0);
      expect(valueWithLabels(samples, 'outpost_service_outbox_depth', { outbox: 'alert' })).toBe(0);
      expect(valueWithLabels(samples, 'outpost_service_process_resident_memory_bytes')).toBeGreaterThan(0);

      const retried = new Promise((resolve) => svc.notifier.once('retry', resolve));
      await subscribeWebhook(url, svc, `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`);
      await retried;
      samples = await scrape(url);
      expect(valueWithLabels(samples, 'outpost_service_outbox_depth', { outbox: 'subscriber' })).toBe(1);
    } finally {
      receiver.close();
    }
  });

  it('is served but left out of /openapi.json, which lists the location metrics of the public API', async () => {
    const { url } = await start();
    expect((await fetch(`${url}/metrics`)).status).toBe(200);
    const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
    expect(Object.keys(doc.paths)).toContain('/v1/private-locations/{id}/metrics');
  });

  it('asks for Authorization: Bearer <METRICS_TOKEN> when METRICS_TOKEN is set', async () => {
    const { url } = await start({ METRICS_TOKEN: TOKEN });
    const anonymous = await fetch(`${url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({
      statusCode: 401,
      message: expect.stringContaining('METRICS_TOKEN'),
    });
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    const scraped = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('outpost_service_queue_depth');
  });
});

describe('service metrics over the dispatcher (clock moved by the test)', () => {
  let harness: Harness;
  afterEach(() => harness.close());

  it('counts each expired lease and a run given up after its last allowed lease; lists every location, and no deleted one', async () => {
    harness = await startHarness({ metrics: true });
    const metrics = harness.metrics;
    if (!metrics) throw new Error('harness without metrics');
    const scrapeRegistry = async () => parsePromText(await metrics.registry.metrics());
    const a = await harness.tenant('A');
    const b = await harness.tenant('B');
    const check = await harness.check(a);
    await harness.dispatcher.enqueue(check, a.location.id, harness.clock.now);
    const agent = await harness.agent(a);
    // MAX_EXPIRED_LEASES (3) leases, each left to run out: the third gives the run up.
    for (let lease = 1; lease <= 3; lease += 1) {
      expect(await agent.lease()).toHaveLength(1);
      harness.clock.now += (harness.config.leaseSeconds + 1) * 1000;
      await harness.dispatcher.sweep();
    }
    let samples = await scrapeRegistry();
    expect(valueWithLabels(samples, 'outpost_service_lease_expiries_total', { location: a.location.id })).toBe(3);
    expect(
      valueWithLabels(samples, 'outpost_service_runs_expired_total', {
        location: a.location.id,
        reason: 'lease_attempts',
      }),
    ).toBe(1);
    expect(valueWithLabels(samples, 'outpost_service_queue_depth', { location: a.location.id })).toBe(0);
    expect(valueWithLabels(samples, 'outpost_service_queue_depth', { location: b.location.id })).toBe(0);

    expect(await harness.store.locations.delete(b.accountId, b.location.id)).toBe(true);
    samples = await scrapeRegistry();
    expect(samples.filter((s) => s.labels.location === b.location.id)).toEqual([]);
    expect(valueWithLabels(samples, 'outpost_service_queue_depth', { location: a.location.id })).toBe(0);
  });
});

describe('METRICS_TOKEN', () => {
  it('refuses a short token, naming the variable', () => {
    expect(() => loadServiceConfig({ METRICS_TOKEN: 'short' })).toThrow(ConfigError);
    expect(() => loadServiceConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 16 characters/);
  });
});
