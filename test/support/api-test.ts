/**
 * `apiTest`: vitest's `test` with the public-API fixtures most service tests start from. A test names
 * what it needs in its context (`async ({ api, acme }) => …`) and gets a fresh TestApi and accounts on
 * it, made for that test only and closed after it. `checksTest` adds what the check CRUD tests share.
 */
import { expect, test } from 'vitest';
import { json, type LocationView, startTestApi } from '../helpers/public-api.ts';

/** A check as the public API answers it; the tests themselves check the shape. */
export type CheckView = Record<string, unknown> & { id: string; checkType: string; request: Record<string, unknown> };

export const apiTest = test
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; api has none.
  .extend('api', async ({}, { onCleanup }) => {
    const api = await startTestApi();
    onCleanup(() => api.close());
    return api;
  })
  .extend('acme', ({ api }) => api.newAccount('Acme'))
  // Depends on acme so that Acme is always the first account made, whichever a test names first.
  .extend('other', ({ api, acme: _ }) => api.newAccount('Other'));

/**
 * apiTest where Acme has the private location "office" before every test (the checks run there), and
 * `createCheck(path, body)` creates a check as Acme, failing the test unless the answer is 201.
 */
export const checksTest = apiTest
  .extend('office', { auto: true }, async ({ api, acme }) => {
    const res = await api.request(acme, 'POST', '/v1/private-locations', { name: 'Office', slugName: 'office' });
    expect(res.statusCode).toBe(201);
    return json<LocationView>(res);
  })
  .extend('createCheck', ({ api, acme }) => async (path: string, body: object): Promise<CheckView> => {
    const res = await api.request(acme, 'POST', path, body);
    expect(res.statusCode, res.body).toBe(201);
    return json<CheckView>(res);
  });

/** What a check of every type answers with when created with only its required properties at "office". */
export const checkDefaults = {
  id: expect.any(String),
  activated: true,
  muted: false,
  doubleCheck: true,
  shouldFail: false,
  runParallel: false,
  locations: [],
  privateLocations: ['office'],
  tags: [],
  runtimeId: null,
  // Check groups (src/service/checks/group-membership.ts).
  groupId: null,
  groupOrder: null,
  retryStrategy: null,
  // Alert settings (docs/api.md "Check statuses and alerts").
  alertSettings: {
    escalationType: 'RUN_BASED',
    runBasedEscalation: { failedRunThreshold: 1 },
    reminders: { amount: 0, interval: 5 },
    parallelRunFailureThreshold: { enabled: false, percentage: 10 },
  },
  useGlobalAlertSettings: true,
  // From alert_channel_subscriptions: none without channels.
  alertChannelSubscriptions: [],
  // Variables of the check (docs/secrets.md).
  environmentVariables: [],
  frequency: 10,
  created_at: expect.any(String),
  updated_at: null,
};
