/**
 * Contract tests: every response of every public operation the reference also has is validated
 * against the reference's schema for that operation and status (test/contract/reference.ts), on
 * the composed service (buildService, requests through app.inject).
 *
 * Each flow below drives one resource through its operations; `expectContract` validates and
 * records what was covered. The last test checks that every operation our own /openapi.json
 * serves and the reference has was covered with a success response, so a new route without a
 * contract case fails here. Routes other engineers are still building are listed in
 * PENDING_OPERATIONS: their flows skip (named as such) until the route is registered.
 */
import { rmSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { CheckStatusService } from '../../src/service/alerting/status-service.ts';
import { ANALYTICS_KINDS } from '../../src/service/analytics/catalog.ts';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { tempDataDir } from '../helpers/public-api.ts';
import { nightlyWindow } from '../support/maintenance-window-fixtures.ts';
import { makePki } from '../support/mtls-pki.ts';
import { createCheckForResults, type ResultToStore, storeRunResult } from '../support/results-in-store.ts';
import { passingRunResult } from '../support/results-run-result.ts';
import { ReferenceValidator } from './reference.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * The hook list for operations whose routes are being built alongside this test: their flow runs
 * as soon as the route is registered, and is skipped (with this reason in its name) until then.
 */
const PENDING_OPERATIONS: ReadonlyArray<readonly [Method, string]> = [
  ['POST', '/v2/check-groups'],
  ['PUT', '/v2/check-groups/{id}'],
  ['GET', '/v1/check-groups'],
  ['GET', '/v1/check-groups/{id}'],
  ['DELETE', '/v1/check-groups/{id}'],
  ['GET', '/v1/check-groups/{id}/checks'],
  ['GET', '/v2/check-groups/{id}/checks'],
  ['GET', '/v1/triggers/check-groups/{groupId}'],
  ['POST', '/v1/triggers/check-groups/{groupId}'],
  ['DELETE', '/v1/triggers/check-groups/{groupId}'],
  ['GET', '/v1/variables'],
  ['POST', '/v1/variables'],
  ['GET', '/v1/variables/{key}'],
  ['PUT', '/v1/variables/{key}'],
  ['DELETE', '/v1/variables/{key}'],
  ['GET', '/v1/snippets'],
  ['POST', '/v1/snippets'],
  ['GET', '/v1/snippets/{id}'],
  ['PUT', '/v1/snippets/{id}'],
  ['DELETE', '/v1/snippets/{id}'],
];

/**
 * Operations served without a contract case here, and why. Each needs state only an agent run
 * creates (a stored check result with assets); their own test files cover them.
 */
const NOT_COVERED_HERE: ReadonlySet<string> = new Set(['GET /v1/check-results/{checkId}/{checkResultId}/assets']);

/** Whether every operation of a pending group (operations whose path starts with `prefix`) is registered. */
function pendingLanded(prefix: string): boolean {
  return PENDING_OPERATIONS.filter(([, t]) => t.startsWith(prefix)).every(([m, t]) => registered(m, t));
}

const reference = new ReferenceValidator();
let service: Service;
let dataDir: string;
let headers: Record<string, string>;
const covered = new Set<string>();

beforeAll(async () => {
  dataDir = tempDataDir();
  service = await buildService(
    loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', PUBLIC_URL: 'https://outpost.example.com' }),
    {
      logger: false,
    },
  );
  await service.app.ready();
  const { accountId, apiKey } = await createAccount(service.store, 'Contract');
  headers = { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId };
});
afterAll(async () => {
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** `/v1/dashboards/{dashboardId}` with values → the URL. */
function fill(template: string, params: Record<string, string | number> = {}, query = ''): string {
  return (
    template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = params[name];
      if (value === undefined) throw new Error(`no value for {${name}} in ${template}`);
      return encodeURIComponent(String(value));
    }) + query
  );
}

interface Call {
  params?: Record<string, string | number>;
  query?: string;
  body?: unknown;
  auth?: boolean;
}

async function call(method: Method, template: string, c: Call = {}): Promise<LightMyRequestResponse> {
  return service.app.inject({
    method,
    url: fill(template, c.params, c.query),
    headers: c.auth === false ? {} : headers,
    ...(c.body === undefined ? {} : { payload: c.body as object }),
  });
}

/** Calls, asserts the status, validates the body against the reference, and returns the parsed body. */
async function expectContract<T = Record<string, unknown>>(
  method: Method,
  template: string,
  status: number,
  c: Call = {},
): Promise<T> {
  const res = await call(method, template, c);
  expect(res.statusCode, `${method} ${template}: ${res.body.slice(0, 500)}`).toBe(status);
  const problems = reference.check(method, template, status, res.body);
  expect(
    problems,
    `${method} ${template} ${status} does not match the reference:\n${problems}\nbody: ${res.body.slice(0, 800)}`,
  ).toBeNull();
  covered.add(`${method} ${template} ${status}`);
  if (res.body === '') return undefined as T;
  // A badge is an SVG: its body is the value.
  return (String(res.headers['content-type']).includes('json') ? res.json() : res.body) as T;
}

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

function registered(method: Method, template: string): boolean {
  return service.app.hasRoute({ method, url: template.replace(/\{(\w+)\}/g, ':$1') });
}

const CONTRACT_AGENT = { id: 'contract-agent', version: '0.0.0' };

/**
 * Stores a result of a check of the contract account as the dispatcher stores an agent's: a passing
 * one unless `outcome` says otherwise.
 */
function storeAgentResult(r: Omit<ResultToStore, 'accountId'>) {
  const accountId = headers['x-service-account'] ?? '';
  return storeRunResult(service.store, { accountId, ...r, outcome: { agent: CONTRACT_AGENT, ...r.outcome } });
}

/** A private location, and an API check (`check` over a GET of a closed port) that runs there. */
async function apiCheckAt(location: { name: string; slugName: string }, check: Record<string, unknown>) {
  await expectContract('POST', '/v1/private-locations', 201, { body: location });
  const request = { method: 'GET', url: 'http://127.0.0.1:9/' };
  const body = { privateLocations: [location.slugName], request, ...check };
  return expectContract<{ id: string }>('POST', '/v1/checks/api', 201, { body });
}

/**
 * The reads and the update each resource of the reference answers alike: its list, one of it, a PUT
 * of `update` to that one, and an unknown one (404). `item` is the one's template, `known` and
 * `unknown` its params.
 */
async function expectListReadUpdate(
  list: string,
  item: string,
  known: Record<string, string | number>,
  update: unknown,
  unknown: Record<string, string | number>,
): Promise<void> {
  await expectContract('GET', list, 200);
  await expectContract('GET', item, 200, { params: known });
  await expectContract('PUT', item, 200, { params: known, body: update });
  await expectContract('GET', item, 404, { params: unknown });
}

describe('contract: responses match the reference schemas', () => {
  it('private locations and their keys', async () => {
    const loc = await expectContract<{ id: string }>('POST', '/v1/private-locations', 201, {
      body: { name: 'Contract DC', slugName: 'contract-dc' },
    });
    await expectListReadUpdate(
      '/v1/private-locations',
      '/v1/private-locations/{id}',
      { id: loc.id },
      { name: 'Renamed DC' },
      { id: UNKNOWN_UUID },
    );
    const key = await expectContract<{ id: string }>('POST', '/v1/private-locations/{id}/keys', 201, {
      params: { id: loc.id },
    });
    await expectContract('DELETE', '/v1/private-locations/{id}/keys/{keyId}', 204, {
      params: { id: loc.id, keyId: key.id },
    });
    const window = `?from=${Math.floor(Date.now() / 1000) - 3600}&to=${Math.floor(Date.now() / 1000)}`;
    await expectContract('GET', '/v1/private-locations/{id}/metrics', 200, { params: { id: loc.id }, query: window });
    await expectContract('GET', '/v1/private-locations/{id}/metrics', 400, {
      params: { id: loc.id },
      query: '?from=1',
    });
    await expectContract('DELETE', '/v1/private-locations/{id}', 204, { params: { id: loc.id } });
  });

  it('checks of every type, listing, reading, deleting and results', async () => {
    await expectContract('POST', '/v1/private-locations', 201, { body: { name: 'Checks DC', slugName: 'checks-dc' } });
    const bodies: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
      [
        'api',
        { name: 'API', privateLocations: ['checks-dc'], request: { method: 'GET', url: 'http://127.0.0.1:9/' } },
        { name: 'API 2' },
      ],
      [
        'tcp',
        { name: 'TCP', privateLocations: ['checks-dc'], request: { hostname: '127.0.0.1', port: 9 } },
        { name: 'TCP 2' },
      ],
      [
        'dns',
        { name: 'DNS', privateLocations: ['checks-dc'], request: { query: 'example.com', recordType: 'A' } },
        { name: 'DNS 2' },
      ],
      [
        'icmp',
        { name: 'ICMP', privateLocations: ['checks-dc'], request: { hostname: '127.0.0.1' } },
        { name: 'ICMP 2' },
      ],
      [
        'url',
        { name: 'URL', privateLocations: ['checks-dc'], request: { url: 'http://127.0.0.1:9/' } },
        { name: 'URL 2' },
      ],
      [
        'ssl',
        { name: 'SSL', privateLocations: ['checks-dc'], request: { sslConfig: { hostname: '127.0.0.1', port: 9 } } },
        { name: 'SSL 2' },
      ],
      [
        'browser',
        { name: 'Browser', privateLocations: ['checks-dc'], script: "await page.goto('http://127.0.0.1:9/')" },
        { name: 'Browser 2' },
      ],
      [
        'multistep',
        {
          name: 'Multistep',
          privateLocations: ['checks-dc'],
          script: "test('a', async ({ request }) => { await request.get('http://127.0.0.1:9/') })",
        },
        { name: 'Multistep 2' },
      ],
    ];
    const ids: string[] = [];
    for (const [type, create, update] of bodies) {
      const check = await expectContract<{ id: string }>('POST', `/v1/checks/${type}`, 201, { body: create });
      await expectContract('PUT', `/v1/checks/${type}/{id}`, 200, { params: { id: check.id }, body: update });
      ids.push(check.id);
    }
    await expectContract('GET', '/v1/checks', 200);
    for (const id of ids) await expectContract('GET', '/v1/checks/{id}', 200, { params: { id } });
    await expectContract('GET', '/v1/checks/{id}', 404, { params: { id: UNKNOWN_UUID } });
    await expectContract('POST', '/v1/checks/api', 400, { body: { name: 'no request' } });
    await expectContract('GET', '/v2/check-results/{checkId}', 200, { params: { checkId: ids[0] ?? '' } });
    // One result, as alert messages link to it: stored as the dispatcher stores an agent's.
    const checkId = ids[0] ?? '';
    const check = await service.store.checks.get(headers['x-service-account'] ?? '', checkId);
    if (!check) throw new Error('the check was not stored');
    const stored = await storeAgentResult({
      checkId,
      checkName: check.name,
      locationId: check.locationIds[0] ?? '',
      runLocation: 'checks-dc',
    });
    await expectContract('GET', '/v1/check-results/{checkId}/{checkResultId}', 200, {
      params: { checkId, checkResultId: stored.id },
    });
    await expectContract('GET', '/v1/check-results/{checkId}/{checkResultId}', 404, {
      params: { checkId, checkResultId: UNKNOWN_UUID },
    });
    await expectContract('DELETE', '/v1/checks/{id}', 204, { params: { id: ids[0] ?? '' } });
  });

  it('heartbeat checks, events, one event and availability', async () => {
    const timing = { period: 1, periodUnit: 'minutes', grace: 30, graceUnit: 'seconds' };
    const hb = await expectContract<{ id: string; heartbeat: { pingToken: string } }>(
      'POST',
      '/v1/checks/heartbeat',
      201,
      {
        body: { name: 'Cron', heartbeat: timing },
      },
    );
    await expectContract('PUT', '/v1/checks/heartbeat/{id}', 200, { params: { id: hb.id }, body: { name: 'Cron 2' } });
    await expectContract('GET', '/v1/checks/{id}', 200, { params: { id: hb.id } });
    await expectContract('POST', '/v1/checks/heartbeat', 400, {
      body: { name: 'x', heartbeat: { ...timing, period: 1, periodUnit: 'seconds' } },
    });
    await expectContract('GET', '/v1/checks/heartbeats/{checkId}/availability', 200, { params: { checkId: hb.id } });
    expect((await service.app.inject({ method: 'GET', url: `/ping/${hb.heartbeat.pingToken}` })).statusCode).toBe(200);
    await service.store.heartbeats.failOverdue(Date.now() + 3600_000);
    // The FAILING event is stamped at the (future) deadline, so the window reaches past it.
    const [page] = await expectContract<Array<{ events: Array<{ id: string }> }>>(
      'GET',
      '/v1/checks/heartbeats/{checkId}/events',
      200,
      {
        params: { checkId: hb.id },
        query: `?endTime=${new Date(Date.now() + 7200_000).toISOString()}`,
      },
    );
    expect(page?.events.length).toBe(2);
    await expectContract('GET', '/v1/checks/heartbeats/{checkId}/events/{id}', 200, {
      params: { checkId: hb.id, id: page?.events[0]?.id ?? '' },
    });
    await expectContract('GET', '/v1/checks/heartbeats/{checkId}/availability', 200, { params: { checkId: hb.id } });
    await expectContract('GET', '/v1/checks/heartbeats/{checkId}/events', 400, {
      params: { checkId: hb.id },
      query: '?limit=11',
    });
    await expectContract('GET', '/v1/checks/heartbeats/{checkId}/events', 404, { params: { checkId: UNKNOWN_UUID } });
    await expectContract('GET', '/v1/checks/heartbeats/{checkId}/events/{id}', 404, {
      params: { checkId: hb.id, id: UNKNOWN_UUID },
    });
    await expectContract('GET', '/v1/checks/heartbeats/{checkId}/availability', 404, {
      params: { checkId: UNKNOWN_UUID },
    });
  });

  it('dashboards and dashboard incidents with their updates', async () => {
    const d = await expectContract<{ id: number; dashboardId: string }>('POST', '/v1/dashboards', 201, {
      body: { header: 'Contract', customUrl: 'contract', isPrivate: true, logo: 'https://example.com/logo.png' },
    });
    await expectContract('POST', '/v1/dashboards', 409, { body: { header: 'Again', customUrl: 'CONTRACT' } });
    await expectContract('POST', '/v1/dashboards', 400, { body: { header: 'x', refreshRate: 61 } });
    await expectListReadUpdate(
      '/v1/dashboards',
      '/v1/dashboards/{dashboardId}',
      { dashboardId: d.dashboardId },
      { width: '960PX' },
      { dashboardId: '999999' },
    );

    const incident = await expectContract<{ id: string; incidentUpdates: Array<{ id: string }> }>(
      'POST',
      '/v1/incidents',
      200,
      {
        body: {
          name: 'Outage',
          impact: 'MAJOR',
          dashboardId: d.id,
          incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking' }],
        },
      },
    );
    await expectContract('POST', '/v1/incidents', 400, {
      body: { name: 'x', impact: 'MINOR', dashboardId: d.id, incidentUpdates: [] },
    });
    await expectContract('GET', '/v1/incidents/{id}', 200, {
      params: { id: incident.id },
      query: '?includeAllIncidentUpdates=true',
    });
    await expectContract('PUT', '/v1/incidents/{id}', 200, {
      params: { id: incident.id },
      body: { name: 'Outage (EU)', impact: 'MINOR' },
    });
    const update = await expectContract<{ id: string }>('POST', '/v1/incidents/{incidentId}/updates', 201, {
      params: { incidentId: incident.id },
      body: { status: 'RESOLVED', description: 'Fixed' },
    });
    await expectContract('PUT', '/v1/incidents/{incidentId}/updates/{id}', 200, {
      params: { incidentId: incident.id, id: update.id },
      body: { description: 'Fixed for good' },
    });
    await expectContract('DELETE', '/v1/incidents/{incidentId}/updates/{id}', 204, {
      params: { incidentId: incident.id, id: update.id },
    });
    await expectContract('DELETE', '/v1/incidents/{incidentId}/updates/{id}', 400, {
      params: { incidentId: incident.id, id: incident.incidentUpdates[0]?.id ?? '' },
    });
    await expectContract('GET', '/v1/incidents/{id}', 404, { params: { id: UNKNOWN_UUID } });
    await expectContract('DELETE', '/v1/incidents/{id}', 204, { params: { id: incident.id } });
    await expectContract('DELETE', '/v1/dashboards/{dashboardId}', 204, { params: { dashboardId: d.dashboardId } });
  });

  it('status pages, services, incidents and incident updates, subscriptions', async () => {
    const svc = await expectContract<{ id: string; name: string }>('POST', '/v1/status-pages/services', 200, {
      body: { name: 'API' },
    });
    await expectContract('GET', '/v1/status-pages/services', 200);
    await expectContract('GET', '/v1/status-pages/services/{serviceId}', 200, { params: { serviceId: svc.id } });
    const put = await expectContract<{ id: string; name: string }>(
      'PUT',
      '/v1/status-pages/services/{serviceId}',
      200,
      {
        params: { serviceId: svc.id },
        body: { name: 'API v2' },
      },
    );
    Object.assign(svc, put);
    const page = await expectContract<{ id: string }>('POST', '/v1/status-pages', 201, {
      body: { name: 'Status', url: 'contract-status', cards: [{ name: 'Core', services: [{ id: svc.id }] }] },
    });
    await expectContract('GET', '/v1/status-pages', 200);
    await expectContract('GET', '/v1/status-pages/{statusPageId}', 200, { params: { statusPageId: page.id } });
    await expectContract('PUT', '/v1/status-pages/{statusPageId}', 200, {
      params: { statusPageId: page.id },
      body: { name: 'Status 2', url: 'contract-status', cards: [{ name: 'Core', services: [{ id: svc.id }] }] },
    });
    const incident = await expectContract<{ id: string }>('POST', '/v1/status-pages/incidents', 201, {
      body: {
        name: 'Slow',
        severity: 'MAJOR',
        services: [svc],
        incidentUpdates: [{ description: 'Looking', status: 'INVESTIGATING' }],
      },
    });
    await expectContract('POST', '/v1/status-pages/incidents', 400, {
      body: { name: 'x', severity: 'MINOR', services: [] },
    });
    await expectContract('GET', '/v1/status-pages/incidents', 200);
    await expectContract('GET', '/v1/status-pages/incidents/{incidentId}', 200, {
      params: { incidentId: incident.id },
    });
    await expectContract('PUT', '/v1/status-pages/incidents/{incidentId}', 200, {
      params: { incidentId: incident.id },
      body: { name: 'Slower', severity: 'MINOR', services: [svc] },
    });
    const iu = await expectContract<{ id: string }>(
      'POST',
      '/v1/status-pages/incidents/{incidentId}/incident-updates',
      200,
      {
        params: { incidentId: incident.id },
        body: { description: 'Fixed', status: 'RESOLVED' },
      },
    );
    await expectContract('GET', '/v1/status-pages/incidents/{incidentId}/incident-updates', 200, {
      params: { incidentId: incident.id },
    });
    await expectContract('GET', '/v1/status-pages/incidents/{incidentId}/incident-updates/{incidentUpdateId}', 200, {
      params: { incidentId: incident.id, incidentUpdateId: iu.id },
    });
    await expectContract('PUT', '/v1/status-pages/incidents/{incidentId}/incident-updates/{incidentUpdateId}', 200, {
      params: { incidentId: incident.id, incidentUpdateId: iu.id },
      body: { description: 'Fixed (edited)' },
    });
    await expectContract('GET', '/v1/status-pages/incidents/{incidentId}', 404, {
      params: { incidentId: UNKNOWN_UUID },
    });
    await expectContract('POST', '/v1/status-pages/{statusPageId}/subscriptions/bulk', 201, {
      params: { statusPageId: page.id },
      body: { subscriptions: [{ type: 'EMAIL', config: 'ops@contract.test' }], autoVerify: true },
    });
    const subs = await expectContract<unknown>('GET', '/v1/status-pages/{statusPageId}/subscriptions', 200, {
      params: { statusPageId: page.id },
    });
    const subscriptionId = JSON.stringify(subs).match(/"id":"([^"]+)"/)?.[1] ?? '';
    await expectContract('DELETE', '/v1/status-pages/{statusPageId}/subscriptions/{subscriptionId}', 204, {
      params: { statusPageId: page.id, subscriptionId },
    });
    await expectContract('DELETE', '/v1/status-pages/incidents/{incidentId}/incident-updates/{incidentUpdateId}', 204, {
      params: { incidentId: incident.id, incidentUpdateId: iu.id },
    });
    await expectContract('DELETE', '/v1/status-pages/incidents/{incidentId}', 204, {
      params: { incidentId: incident.id },
    });
    await expectContract('DELETE', '/v1/status-pages/{statusPageId}', 204, { params: { statusPageId: page.id } });
    await expectContract('DELETE', '/v1/status-pages/services/{serviceId}', 204, { params: { serviceId: svc.id } });
  });

  it('check groups (pending: skipped until the routes are registered)', async (ctx) => {
    if (
      !pendingLanded('/v2/check-groups') ||
      !pendingLanded('/v1/check-groups') ||
      !pendingLanded('/v1/triggers/check-groups')
    )
      ctx.skip();
    const group = await expectContract<{ id: number }>('POST', '/v2/check-groups', 201, {
      body: { name: 'Group', concurrency: 2 },
    });
    await expectContract('PUT', '/v2/check-groups/{id}', 200, { params: { id: group.id }, body: { name: 'Group 2' } });
    await expectContract('GET', '/v1/check-groups', 200);
    await expectContract('GET', '/v1/check-groups/{id}', 200, { params: { id: group.id } });
    await expectContract('GET', '/v1/check-groups/{id}', 404, { params: { id: 999999 } });
    await expectContract('GET', '/v1/check-groups/{id}/checks', 200, { params: { id: group.id } });
    await expectContract('GET', '/v2/check-groups/{id}/checks', 200, { params: { id: group.id } });
    await expectContract('POST', '/v1/triggers/check-groups/{groupId}', 201, { params: { groupId: group.id } });
    await expectContract('GET', '/v1/triggers/check-groups/{groupId}', 200, { params: { groupId: group.id } });
    await expectContract('DELETE', '/v1/triggers/check-groups/{groupId}', 204, { params: { groupId: group.id } });
    await expectContract('DELETE', '/v1/check-groups/{id}', 204, { params: { id: group.id } });
  });

  it('environment variables (pending: skipped until the routes are registered)', async (ctx) => {
    if (!pendingLanded('/v1/variables')) ctx.skip();
    await expectContract('POST', '/v1/variables', 201, { body: { key: 'CONTRACT_VAR', value: 'one' } });
    await expectContract('POST', '/v1/variables', 409, { body: { key: 'CONTRACT_VAR', value: 'two' } });
    await expectListReadUpdate(
      '/v1/variables',
      '/v1/variables/{key}',
      { key: 'CONTRACT_VAR' },
      { value: 'three' },
      { key: 'NO_SUCH_VAR' },
    );
    await expectContract('DELETE', '/v1/variables/{key}', 204, { params: { key: 'CONTRACT_VAR' } });
  });

  it('snippets (pending: skipped until the routes are registered)', async (ctx) => {
    if (!pendingLanded('/v1/snippets')) ctx.skip();
    const snippet = await expectContract<{ id: number }>('POST', '/v1/snippets', 201, {
      body: { name: 'Setup', script: 'console.log(1)' },
    });
    await expectListReadUpdate(
      '/v1/snippets',
      '/v1/snippets/{id}',
      { id: snippet.id },
      { name: 'Setup 2', script: 'console.log(2)' },
      { id: 999999 },
    );
    await expectContract('DELETE', '/v1/snippets/{id}', 204, { params: { id: snippet.id } });
  });

  /** Stores a failed FINAL result of the check and applies it as the dispatcher does: returns the alert it raised. */
  async function raiseFailureAlert(checkId: string, runLocation: string) {
    const check = await service.store.checks.get(headers['x-service-account'] ?? '', checkId);
    if (!check) throw new Error('the check was not stored');
    const nowMs = Date.now();
    const result = passingRunResult({
      runId: crypto.randomUUID(),
      checkId,
      startedAt: new Date(nowMs).toISOString(),
      stoppedAt: new Date(nowMs).toISOString(),
      responseTime: 25,
      hasFailures: true,
      error: 'status 500',
      agent: CONTRACT_AGENT,
    });
    const run = {
      accountId: check.accountId,
      checkId,
      dueAt: new Date(nowMs).toISOString(),
      locationId: check.locationIds[0] ?? '',
      checkType: 'API' as const,
    };
    const stored = await storeAgentResult({
      checkId,
      runId: result.runId,
      checkName: check.name,
      locationId: run.locationId,
      runLocation,
      pendingStatus: { dueAt: run.dueAt },
      outcome: result,
    });
    const [alert] = await new CheckStatusService({ store: service.store }).resultStored({
      run,
      check,
      resultId: stored.id,
      resultType: 'FINAL',
      runLocation,
      result,
      atMs: nowMs,
    });
    return alert;
  }

  it('check statuses and the alert history', async () => {
    const created = await apiCheckAt({ name: 'Alerts DC', slugName: 'alerts-dc' }, { name: 'Alerting' });
    const checkId = created.id;
    await expectContract('GET', '/v1/check-statuses/{checkId}', 200, { params: { checkId } });
    // A failed FINAL result, applied as the dispatcher applies each stored one: a status and an alert.
    const alert = await raiseFailureAlert(checkId, 'alerts-dc');
    expect(alert?.alertType).toBe('ALERT_FAILURE');
    const statuses = await expectContract<Array<{ checkId: string; hasFailures: boolean }>>(
      'GET',
      '/v1/check-statuses',
      200,
    );
    expect(statuses.find((s) => s.checkId === checkId)?.hasFailures).toBe(true);
    await expectContract('GET', '/v1/check-statuses/{checkId}', 200, { params: { checkId } });
    await expectContract('GET', '/v1/check-statuses/{checkId}', 404, { params: { checkId: UNKNOWN_UUID } });
    expect(await expectContract('GET', '/v1/check-alerts', 200)).toHaveLength(1);
    expect(
      await expectContract('GET', '/v1/check-alerts/{checkId}', 200, { params: { checkId }, query: '?limit=5&page=1' }),
    ).toHaveLength(1);
    await expectContract('GET', '/v1/check-alerts/{checkId}', 404, { params: { checkId: UNKNOWN_UUID } });
    await expectContract('GET', '/v1/check-alerts', 400, { query: '?from=0&to=86400' });
  });

  it('alert channels and their subscriptions', async () => {
    const check = await expectContract<{ id: string }>('POST', '/v1/checks/api', 201, {
      body: { name: 'Alerted', request: { method: 'GET', url: 'http://127.0.0.1:9/' } },
    });
    const channel = await expectContract<{ id: number }>('POST', '/v1/alert-channels', 201, {
      body: {
        type: 'SLACK',
        config: { url: 'https://hooks.slack.test/services/T0/B0/token0123456789' },
        subscriptions: [{ checkId: check.id, activated: true }],
      },
    });
    await expectContract('GET', '/v1/alert-channels', 200);
    await expectContract('GET', '/v1/alert-channels/{id}', 200, { params: { id: channel.id } });
    await expectContract('PUT', '/v1/alert-channels/{id}', 200, {
      params: { id: channel.id },
      body: {
        type: 'WEBHOOK',
        config: { url: 'https://hooks.example.test/in', webhookSecret: 'whsec-0123456789abcdef' },
        sendDegraded: true,
      },
    });
    await expectContract('PUT', '/v1/alert-channels/{id}/subscriptions', 200, {
      params: { id: channel.id },
      body: { checkId: check.id, activated: false },
    });
    // The same subscriptions, from the check's and a group's side.
    const subs = [{ alertChannelId: channel.id, activated: true }];
    const tcp = await expectContract<{ id: string }>('POST', '/v1/checks/tcp', 201, {
      query: '?autoAssignAlerts=false',
      body: { name: 'Subscribed', request: { hostname: '127.0.0.1', port: 9 }, alertChannelSubscriptions: subs },
    });
    await expectContract('PUT', '/v1/checks/tcp/{id}', 200, {
      params: { id: tcp.id },
      body: { alertChannelSubscriptions: [] },
    });
    await expectContract('POST', '/v1/checks/tcp', 400, {
      body: {
        name: 'x',
        request: { hostname: '127.0.0.1', port: 9 },
        alertChannelSubscriptions: [{ alertChannelId: 999999, activated: true }],
      },
    });
    if (pendingLanded('/v2/check-groups')) {
      const group = await expectContract<{ id: number }>('POST', '/v2/check-groups', 201, {
        body: { name: 'Subscribed group', alertChannelSubscriptions: subs },
      });
      await expectContract('PUT', '/v2/check-groups/{id}', 200, {
        params: { id: group.id },
        body: { name: 'Subscribed group', alertChannelSubscriptions: [] },
      });
      await expectContract('DELETE', '/v1/check-groups/{id}', 204, { params: { id: group.id } });
    }
    await expectContract('GET', '/v1/alert-channels/{id}', 404, { params: { id: 999999 } });
    await expectContract('PUT', '/v1/alert-channels/{id}/subscriptions', 404, {
      params: { id: 999999 },
      body: { checkId: check.id, activated: true },
    });
    await expectContract('DELETE', '/v1/alert-channels/{id}', 204, { params: { id: channel.id } });
  });

  it('alert notifications', async () => {
    const check = await expectContract<{ id: string }>('POST', '/v1/checks/api', 201, {
      body: { name: 'Notified', request: { method: 'GET', url: 'http://127.0.0.1:9/' } },
    });
    const channel = await expectContract<{ id: number }>('POST', '/v1/alert-channels', 201, {
      body: {
        type: 'WEBHOOK',
        config: { url: 'https://hooks.example.test/in', webhookSecret: 'whsec-0123456789abcdef' },
        subscriptions: [{ checkId: check.id, activated: true }],
      },
    });
    const alert = await raiseFailureAlert(check.id, '');
    if (!alert) throw new Error('no alert raised');
    // The service is not started here: fan the alert out as the started service would.
    expect(await service.alertFanOut.fanOut(alert)).toBe(1);
    expect(await expectContract('GET', '/v1/alert-notifications', 200)).toHaveLength(1);
    const query = `?limit=5&page=1&alertChannelId=${channel.id}&hasFailures=false`;
    expect(await expectContract('GET', '/v1/alert-notifications', 200, { query })).toHaveLength(1);
    expect(await expectContract('GET', '/v1/alert-notifications', 200, { query: '?hasFailures=true' })).toHaveLength(0);
    await expectContract('GET', '/v1/alert-notifications', 400, { query: '?from=0&to=172800' });
  });

  it('maintenance windows', async () => {
    const window = await expectContract<{ id: number }>('POST', '/v1/maintenance-windows', 201, {
      body: nightlyWindow,
    });
    await expectListReadUpdate(
      '/v1/maintenance-windows',
      '/v1/maintenance-windows/{id}',
      { id: window.id },
      { name: 'Renamed', repeatUnit: null, repeatInterval: null },
      { id: 999999 },
    );
    await expectContract('DELETE', '/v1/maintenance-windows/{id}', 204, { params: { id: window.id } });
  });

  it('check triggers', async () => {
    const check = await apiCheckAt({ name: 'Trigger DC', slugName: 'trigger-dc' }, { name: 'Triggered' });
    await expectContract('POST', '/v1/triggers/checks/{checkId}', 201, { params: { checkId: check.id } });
    await expectContract('GET', '/v1/triggers/checks/{checkId}', 200, { params: { checkId: check.id } });
    await expectContract('DELETE', '/v1/triggers/checks/{checkId}', 204, { params: { checkId: check.id } });
  });

  it('client certificates', async () => {
    const pki = makePki();
    const body = { host: '*.acme.test', cert: pki.clientCert, key: pki.clientKey, ca: pki.caCert };
    const cert = await expectContract<{ id: string }>('POST', '/v1/client-certificates', 201, { body });
    await expectContract('GET', '/v1/client-certificates', 200);
    await expectContract('GET', '/v1/client-certificates/{id}', 200, { params: { id: cert.id } });
    await expectContract('GET', '/v1/client-certificates/{id}', 404, {
      params: { id: '00000000-0000-4000-8000-000000000000' },
    });
    await expectContract('DELETE', '/v1/client-certificates/{id}', 204, { params: { id: cert.id } });
  });

  it('check sessions: trigger, read, await (done and timed out) and cancel, v1 and v2', async () => {
    const check = await apiCheckAt({ name: 'Session DC', slugName: 'session-dc' }, { name: 'On demand' });
    const target = { target: { checkId: [check.id] } };
    type Started = { sessions: Array<{ checkSessionId: string }> };
    const v2 =
      (await expectContract<Started>('POST', '/v2/check-sessions/trigger', 201, { body: target })).sessions[0]
        ?.checkSessionId ?? '';
    const v1 =
      (await expectContract<Started>('POST', '/v1/check-sessions/trigger', 201, { body: target })).sessions[0]
        ?.checkSessionId ?? '';
    await expectContract('POST', '/v2/check-sessions/trigger', 404, { body: { target: { checkId: [UNKNOWN_UUID] } } });
    await expectContract('POST', '/v1/check-sessions/trigger', 404, { body: { target: { checkId: [UNKNOWN_UUID] } } });
    await expectContract('POST', '/v2/check-sessions/trigger', 400, { body: { target: { checkId: ['nope'] } } });
    for (const version of ['v1', 'v2']) {
      await expectContract('GET', `/${version}/check-sessions/{checkSessionId}`, 200, {
        params: { checkSessionId: v2 },
      });
      await expectContract('GET', `/${version}/check-sessions/{checkSessionId}`, 404, {
        params: { checkSessionId: UNKNOWN_UUID },
      });
      await expectContract('GET', `/${version}/check-sessions/{checkSessionId}/completion`, 408, {
        params: { checkSessionId: v2 },
        query: '?maxWaitSeconds=1',
      });
    }
    // The v2 session's run gets its result as the dispatcher stores an agent's.
    const [run] = await service.store.checkSessions.runsOf(v2);
    if (!run) throw new Error('the session has no run');
    const now = new Date().toISOString();
    await storeAgentResult({
      checkId: check.id,
      runId: run.runId,
      checkName: 'On demand',
      locationId: run.locationId,
      runLocation: run.runLocation,
      outcome: { startedAt: now, stoppedAt: now },
    });
    await service.store.runs.finish(run.runId, now);
    await expectContract('GET', '/v2/check-sessions/{checkSessionId}/completion', 200, {
      params: { checkSessionId: v2 },
    });
    await expectContract('POST', '/v1/check-sessions/{checkSessionId}/cancel', 204, {
      params: { checkSessionId: v1 },
      body: {},
    });
    await expectContract('POST', '/v1/check-sessions/{checkSessionId}/cancel', 404, {
      params: { checkSessionId: UNKNOWN_UUID },
      body: {},
    });
    await expectContract('GET', '/v1/check-sessions/{checkSessionId}/completion', 200, {
      params: { checkSessionId: v1 },
    });
  });

  it('badges of a check and a group, without a key, once the account enables them', async () => {
    expect((await call('PUT', '/v1/account/settings', { body: { badgesEnabled: true } })).statusCode).toBe(200);
    const check = await expectContract<{ id: string }>('POST', '/v1/checks/api', 201, {
      body: { name: 'Badged', request: { method: 'GET', url: 'http://127.0.0.1:9/' } },
    });
    const group = await expectContract<{ id: number }>('POST', '/v2/check-groups', 201, {
      body: { name: 'Badged group' },
    });
    const query = '?style=for-the-badge&theme=dark&responseTime=true';
    const badges: Array<{ path: string; params: Call['params']; badQuery: string; unknown: Call['params'] }> = [
      {
        path: '/v1/badges/checks/{checkId}',
        params: { checkId: check.id },
        badQuery: '?style=round',
        unknown: { checkId: UNKNOWN_UUID },
      },
      {
        path: '/v1/badges/groups/{groupId}',
        params: { groupId: group.id },
        badQuery: '?theme=blue',
        unknown: { groupId: 999999 },
      },
    ];
    for (const badge of badges) {
      await expectContract('GET', badge.path, 200, { params: badge.params, query, auth: false });
      await expectContract('GET', badge.path, 400, { params: badge.params, query: badge.badQuery, auth: false });
      await expectContract('GET', badge.path, 404, { params: badge.unknown, auth: false });
    }
  });

  it('reads for tools written for the reference: locations, runtimes and v2 checks', async () => {
    const check = await apiCheckAt({ name: 'Reads DC', slugName: 'reads-dc' }, { name: 'Read back', tags: ['reads'] });
    await expectContract('GET', '/v1/locations', 200);
    await expectContract('GET', '/v1/runtimes', 200);
    await expectContract('GET', '/v1/runtimes/{id}', 200, { params: { id: '2026.04' } });
    await expectContract('GET', '/v1/runtimes/{id}', 404, { params: { id: '2022.10' } });
    await expectContract('GET', '/v2/checks', 200);
    await expectContract('GET', '/v2/checks', 200, {
      query: '?tag=reads&search=read&checkType=API&applyGroupSettings=true',
    });
    await expectContract('GET', '/v2/checks', 400, { query: '?status=green' });
    await expectContract('GET', '/v2/checks/{id}', 200, {
      params: { id: check.id },
      query: '?applyGroupSettings=true',
    });
    await expectContract('GET', '/v2/checks/{id}', 404, { params: { id: UNKNOWN_UUID } });
  });

  it('analytics of every check type, the metrics list, the batch and reporting', async () => {
    const accountId = headers['x-service-account'] ?? '';
    for (const kind of ANALYTICS_KINDS) {
      // Made in the store: a Playwright check needs an uploaded suite, and only the type matters here.
      const check = await createCheckForResults(service.store, {
        accountId,
        checkType: kind.checkType,
        name: `${kind.path} analytics`,
        tags: ['analytics'],
      });
      const metric = kind.metrics[0]?.name;
      const metrics = metric ? `${metric}_avg,availability` : 'availability';
      await expectContract('GET', `/v1/analytics/${kind.path}/{id}`, 200, {
        params: { id: check.id },
        query: `?metrics=${metrics}&quickRange=last7Days`,
      });
      await expectContract('GET', `/v1/analytics/${kind.path}/{id}`, 404, {
        params: { id: UNKNOWN_UUID },
        query: '?metrics=availability',
      });
    }
    await expectContract('GET', '/v1/analytics/metrics', 200, { query: '?checkType=API' });
    await expectContract('POST', '/v1/analytics/checks', 200, {
      query: '?quickRange=last7Days',
      body: { checkIds: [UNKNOWN_UUID] },
    });
    await expectContract('GET', '/v1/reporting', 200, { query: '?quickRange=last7Days&filterByTags=analytics' });
  });

  it('every operation answers 401 without a key, in the reference’s error shape', async () => {
    const ours = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    let checked = 0;
    for (const [template, ops] of Object.entries(ours.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!reference.hasOperation(method, template) || (op.security && op.security.length === 0)) continue;
        const params = Object.fromEntries([...template.matchAll(/\{(\w+)\}/g)].map((m) => [m[1] ?? '', '1']));
        const res = await call(method.toUpperCase() as Method, template, {
          params,
          auth: false,
          ...(method === 'get' || method === 'delete' ? {} : { body: {} }),
        });
        expect(res.statusCode, `${method} ${template}`).toBe(401);
        const problems = reference.check(method, template, 401, res.body);
        expect(problems, `${method} ${template} 401: ${problems}`).toBeNull();
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(30);
  });

  it('covered a success response of every operation we serve that the reference has', async () => {
    const ours = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const pending = new Set(PENDING_OPERATIONS.map(([m, t]) => `${m} ${t}`));
    const missing: string[] = [];
    for (const [template, ops] of Object.entries(ours.paths)) {
      for (const method of Object.keys(ops)) {
        const op = `${method.toUpperCase()} ${template}`;
        // A pending operation is excluded only while its flow cannot run (its routes not all registered).
        if (!reference.hasOperation(method, template) || NOT_COVERED_HERE.has(op)) continue;
        if (pending.has(op) && !pendingLanded(template.split('/{')[0] ?? template)) continue;
        const ok = [...covered].some((c) => c.startsWith(`${op} `) && Number(c.split(' ').at(-1)) < 300);
        if (!ok) missing.push(op);
      }
    }
    expect(missing, 'operations without a contract case').toEqual([]);
  });
});
