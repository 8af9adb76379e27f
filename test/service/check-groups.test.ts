/**
 * The check group API (V2 create/update, v1 list/read/delete, member checks), groupId on checks,
 * and the group trigger token routes, through app.inject over a real SQLite store.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiErrorView, json, startTestApi, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { checkGroupBody } from '../support/accounts-check-bodies.ts';

let api: TestApi;
let acme: TestAccount;

type Group = Record<string, unknown> & { id: number };

function req(
  who: TestAccount,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return api.request(who, method, url, payload as object | undefined);
}

async function snippet(who: TestAccount, name: string): Promise<number> {
  const res = await req(who, 'POST', '/v1/snippets', { name, script: `// ${name}` });
  expect(res.statusCode, res.body).toBe(201);
  return json<{ id: number }>(res).id;
}

async function createGroup(body: Record<string, unknown>, who = acme): Promise<Group> {
  const res = await req(who, 'POST', '/v2/check-groups', body);
  expect(res.statusCode, res.body).toBe(201);
  return json<Group>(res);
}

async function createCheck(body: Record<string, unknown>, who = acme): Promise<LightMyRequestResponse> {
  return req(who, 'POST', '/v1/checks/api', {
    name: 'member',
    request: { method: 'GET', url: 'https://example.test/' },
    ...body,
  });
}

beforeEach(async () => {
  api = await startTestApi();
  acme = await api.newAccount('Acme');
  expect((await req(acme, 'POST', '/v1/private-locations', { name: 'Office', slugName: 'office' })).statusCode).toBe(
    201,
  );
  expect((await req(acme, 'POST', '/v1/private-locations', { name: 'Lab', slugName: 'lab' })).statusCode).toBe(201);
});

afterEach(async () => {
  await api.close();
});

describe('POST /v2/check-groups', () => {
  it('fills every reference default', async () => {
    const group = await createGroup({ name: 'Payments' });
    expect(typeof group.id).toBe('number');
    expect(group).toMatchObject({
      ...checkGroupBody('Payments', {
        alertSettings: {
          escalationType: 'RUN_BASED',
          runBasedEscalation: { failedRunThreshold: 1 },
          reminders: { amount: 0, interval: 5 },
          parallelRunFailureThreshold: { enabled: false, percentage: 10 },
        },
      }),
      alertChannelSubscriptions: [],
      updated_at: null,
    });
    expect(Date.parse(String(group.created_at))).not.toBeNaN();
  });

  it('stores and returns every property, secrets masked', async () => {
    const setupSnippetId = await snippet(acme, 'login');
    const tearDownSnippetId = await snippet(acme, 'cleanup');
    const channel = await req(acme, 'POST', '/v1/alert-channels', {
      type: 'EMAIL',
      config: { address: 'ops@example.test' },
    });
    const alertChannelId = json<{ id: number }>(channel).id;
    const body = {
      name: 'Everything',
      activated: false,
      muted: true,
      tags: ['prod', 'api'],
      locations: ['eu-west-1'],
      concurrency: 5,
      apiCheckDefaults: {
        url: 'https://api.example.com/v1',
        headers: [{ key: 'X-Team', value: 'ops', locked: true }],
        queryParameters: [{ key: 'page', value: '1', locked: false }],
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200', regex: null }],
        basicAuth: { username: 'admin', password: 'pw' },
      },
      runtimeId: '2025.04',
      environmentVariables: [
        { key: 'PLAIN', value: 'visible', locked: false, secret: false },
        { key: 'TOKEN', value: 's3cret', locked: true, secret: true },
      ],
      alertChannelSubscriptions: [{ alertChannelId, activated: false }],
      setupSnippetId,
      tearDownSnippetId,
      localSetupScript: 'setup()',
      localTearDownScript: 'teardown()',
      privateLocations: ['office', 'lab'],
      runParallel: true,
      alertSettings: { escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 10 } },
      retryStrategy: {
        type: 'LINEAR',
        baseBackoffSeconds: 5,
        maxRetries: 3,
        maxDurationSeconds: 120,
        sameRegion: false,
        onlyOn: ['NETWORK_ERROR'],
      },
      useGlobalAlertSettings: false,
      doubleCheck: false,
    };
    const created = await createGroup(body);
    const expected = {
      ...body,
      environmentVariables: [body.environmentVariables[0], { ...body.environmentVariables[1], value: null }],
      alertSettings: { escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 10 } },
    };
    expect(created).toMatchObject(expected);
    const read = json<Group>(await req(acme, 'GET', `/v1/check-groups/${created.id}`));
    expect(read).toEqual(created);
    // The stored value is the real one: the merge needs it.
    const stored = await api.store.checkGroups.get(acme.accountId, created.id);
    expect(stored?.body.environmentVariables[1]?.value).toBe('s3cret');
    expect(stored?.locationIds).toHaveLength(2);
  });

  it('accepts autoAssignAlerts and maps the deprecated doubleCheck to a retry strategy', async () => {
    const res = await req(acme, 'POST', '/v2/check-groups?autoAssignAlerts=false', {
      name: 'Legacy',
      doubleCheck: true,
    });
    expect(res.statusCode).toBe(201);
    // The reference's meaning of doubleCheck, written out: the test pins it, not the constant src uses.
    expect(json<Group>(res)).toMatchObject({
      doubleCheck: true,
      retryStrategy: {
        type: 'SINGLE_RETRY',
        baseBackoffSeconds: 0,
        maxRetries: 1,
        maxDurationSeconds: 600,
        sameRegion: false,
        onlyOn: [],
      },
    });
    const explicit = await createGroup({
      name: 'Both',
      doubleCheck: true,
      retryStrategy: { type: 'FIXED', baseBackoffSeconds: 5 },
    });
    expect(explicit.retryStrategy).toEqual({ type: 'FIXED', baseBackoffSeconds: 5 });
    expect((await createGroup({ name: 'None', retryStrategy: null })).retryStrategy).toBeNull();
  });

  it.each([
    [{}, 'body/name is required'],
    [{ name: 'x', concurrency: 0 }, 'body/concurrency must be >= 1'],
    [
      { name: 'x', runtimeId: '2019.01' },
      'body/runtimeId must be one of 2026.04, 2025.04, 2024.09, 2024.02, 2023.09, 2023.02, 2022.10, null',
    ],
    [{ name: 'x', locations: ['mars-1'] }, 'body/locations/0 must be one of'],
    [
      { name: 'x', privateLocations: ['office', 'attic'] },
      'body/privateLocations: no private location with slugName "attic" in this account',
    ],
    [{ name: 'x', retryStrategy: { type: 'FIXED', maxRetries: 11 } }, 'body/retryStrategy/maxRetries must be <= 10'],
    [
      { name: 'x', retryStrategy: { type: 'SOMETIMES' } },
      'body/retryStrategy/type must be one of FIXED, LINEAR, EXPONENTIAL, SINGLE_RETRY',
    ],
    [
      { name: 'x', retryStrategy: { type: 'FIXED', onlyOn: ['TIMEOUT'] } },
      'body/retryStrategy/onlyOn/0 must be one of NETWORK_ERROR',
    ],
    [
      { name: 'x', apiCheckDefaults: { assertions: [{ source: 'BODY', comparison: 'EQUALS' }] } },
      'body/apiCheckDefaults/assertions/0/source must be one of',
    ],
    [
      {
        name: 'x',
        environmentVariables: [
          { key: 'A', value: '1' },
          { key: 'A', value: '2' },
        ],
      },
      'body/environmentVariables/1/key: "A" is given more than once',
    ],
    [
      { name: 'x', alertSettings: { reminders: { amount: 7 } } },
      'body/alertSettings/reminders/amount must be one of 0, 1, 2, 3, 4, 5, 100000',
    ],
    [
      { name: 'x', alertChannelSubscriptions: [{ activated: true }] },
      'body/alertChannelSubscriptions/0/alertChannelId is required',
    ],
  ])('rejects %j with a 400 naming the field', async (body, message) => {
    const res = await req(acme, 'POST', '/v2/check-groups', body);
    expect(res.statusCode).toBe(400);
    const error = json<ApiErrorView>(res);
    expect(error).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(error.message).toContain(message);
  });
});

describe('PUT /v2/check-groups/{id}', () => {
  it('changes only what it carries, keeps a secret sent back as null, and tells the scheduler of each member', async () => {
    const group = await createGroup({
      name: 'G',
      tags: ['a'],
      environmentVariables: [{ key: 'TOKEN', value: 'keep-me', secret: true }],
    });
    const member = json<{ id: string }>(await createCheck({ groupId: group.id, groupOrder: 1 }));
    api.hookCalls.length = 0;
    const res = await req(acme, 'PUT', `/v2/check-groups/${group.id}`, {
      name: 'G2',
      activated: false,
      environmentVariables: [{ key: 'TOKEN', value: null, secret: true }],
    });
    expect(res.statusCode, res.body).toBe(200);
    const updated = json<Group>(res);
    expect(updated).toMatchObject({ name: 'G2', activated: false, tags: ['a'], concurrency: 3 });
    expect(updated.updated_at).not.toBeNull();
    expect((await api.store.checkGroups.get(acme.accountId, group.id))?.body.environmentVariables[0]?.value).toBe(
      'keep-me',
    );
    expect(api.hookCalls.map((c) => c.checkId)).toEqual([member.id]);
  });

  it('turns doubleCheck on and off again', async () => {
    const group = await createGroup({ name: 'G' });
    const on = json<Group>(await req(acme, 'PUT', `/v2/check-groups/${group.id}`, { name: 'G', doubleCheck: true }));
    expect(on.retryStrategy).toMatchObject({ type: 'SINGLE_RETRY' });
    const off = json<Group>(await req(acme, 'PUT', `/v2/check-groups/${group.id}`, { name: 'G', doubleCheck: false }));
    expect(off.retryStrategy).toBe('FALLBACK');
  });

  it('requires name as the reference does, and answers 404 for a missing group', async () => {
    const group = await createGroup({ name: 'G' });
    expect(json<ApiErrorView>(await req(acme, 'PUT', `/v2/check-groups/${group.id}`, { muted: true })).message).toBe(
      'body/name is required',
    );
    expect((await req(acme, 'PUT', '/v2/check-groups/999999', { name: 'x' })).statusCode).toBe(404);
    expect(json<ApiErrorView>(await req(acme, 'GET', '/v1/check-groups/abc')).message).toBe(
      'params/id must be integer',
    );
  });
});

describe('GET /v1/check-groups', () => {
  it('pages by limit and page, oldest first, and filters by tag and name', async () => {
    for (const [name, tags] of [
      ['one', ['x']],
      ['two', ['y']],
      ['three', ['x', 'z']],
    ] as const) {
      await createGroup({ name, tags: [...tags] });
    }
    const names = async (q: string) => json<Group[]>(await req(acme, 'GET', `/v1/check-groups${q}`)).map((g) => g.name);
    expect(await names('')).toEqual(['one', 'two', 'three']);
    expect(await names('?limit=2')).toEqual(['one', 'two']);
    expect(await names('?limit=2&page=2')).toEqual(['three']);
    expect(await names('?tag=x')).toEqual(['one', 'three']);
    expect(await names('?tag=y&tag=z')).toEqual(['two', 'three']);
    expect(await names('?name=two&name=three')).toEqual(['two', 'three']);
    expect((await req(acme, 'GET', '/v1/check-groups?limit=101')).statusCode).toBe(400);
  });
});

describe('another account', () => {
  it('sees none of the groups: 404 on every route, empty list', async () => {
    const group = await createGroup({ name: 'Mine' });
    const other = await api.newAccount('Other');
    expect(json<Group[]>(await req(other, 'GET', '/v1/check-groups'))).toEqual([]);
    for (const [method, url, body] of [
      ['GET', `/v1/check-groups/${group.id}`, undefined],
      ['PUT', `/v2/check-groups/${group.id}`, { name: 'stolen' }],
      ['DELETE', `/v1/check-groups/${group.id}`, undefined],
      ['GET', `/v1/check-groups/${group.id}/checks`, undefined],
      ['GET', `/v2/check-groups/${group.id}/checks`, undefined],
      ['POST', `/v1/triggers/check-groups/${group.id}`, undefined],
      ['GET', `/v1/triggers/check-groups/${group.id}`, undefined],
      ['DELETE', `/v1/triggers/check-groups/${group.id}`, undefined],
    ] as const) {
      const res = await req(other, method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(json<ApiErrorView>(res).message).toMatch(/not found/i);
    }
    expect((await req(acme, 'GET', `/v1/check-groups/${group.id}`)).statusCode).toBe(200);
  });

  it('cannot use its snippets: 400 naming the field, like a snippet that does not exist (create and update)', async () => {
    const mine = await snippet(acme, 'login');
    const other = await api.newAccount('Other');
    const group = await createGroup({ name: 'Theirs' }, other);
    for (const field of ['setupSnippetId', 'tearDownSnippetId']) {
      for (const id of [mine, 424242]) {
        for (const res of [
          await req(other, 'POST', '/v2/check-groups', { name: 'x', [field]: id }),
          await req(other, 'PUT', `/v2/check-groups/${group.id}`, { name: 'Theirs', [field]: id }),
        ]) {
          expect(res.statusCode, res.body).toBe(400);
          expect(json<ApiErrorView>(res).message).toBe(`body/${field}: no snippet with id ${id} in this account`);
        }
      }
    }
    // Its own snippet is accepted.
    const own = await snippet(other, 'theirs');
    expect(
      (await req(other, 'PUT', `/v2/check-groups/${group.id}`, { name: 'Theirs', setupSnippetId: own })).statusCode,
    ).toBe(200);
  });

  it('cannot put a check into it: 400 naming groupId, like a group that does not exist', async () => {
    const group = await createGroup({ name: 'Mine' });
    const other = await api.newAccount('Other');
    for (const groupId of [group.id, 424242]) {
      const res = await createCheck({ groupId }, other);
      expect(res.statusCode).toBe(400);
      expect(json<ApiErrorView>(res).message).toBe(`body/groupId: no check group with id ${groupId} in this account`);
    }
  });
});

describe('member checks', () => {
  it('join through groupId, leave with null, and block deleting the group meanwhile (409)', async () => {
    const group = await createGroup({ name: 'G' });
    const res = await createCheck({ groupId: group.id, groupOrder: 2 });
    expect(res.statusCode, res.body).toBe(201);
    const check = json<{ id: string; groupId: number; groupOrder: number; retryStrategy: unknown }>(res);
    expect(check).toMatchObject({ groupId: group.id, groupOrder: 2, retryStrategy: null });
    const blocked = await req(acme, 'DELETE', `/v1/check-groups/${group.id}`);
    expect(blocked.statusCode).toBe(409);
    expect(json<ApiErrorView>(blocked).message).toContain('still contains checks');
    const moved = await req(acme, 'PUT', `/v1/checks/api/${check.id}`, { groupId: null });
    expect(moved.statusCode, moved.body).toBe(200);
    expect((await req(acme, 'DELETE', `/v1/check-groups/${group.id}`)).statusCode).toBe(204);
    expect((await req(acme, 'GET', `/v1/check-groups/${group.id}`)).statusCode).toBe(404);
    expect((await req(acme, 'DELETE', `/v1/check-groups/${group.id}`)).statusCode).toBe(404);
  });

  it('a check has a retryStrategy of its own, validated like the group’s', async () => {
    const ok = await createCheck({ retryStrategy: { type: 'EXPONENTIAL', baseBackoffSeconds: 2, maxRetries: 3 } });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(json<{ retryStrategy: unknown }>(ok).retryStrategy).toEqual({
      type: 'EXPONENTIAL',
      baseBackoffSeconds: 2,
      maxRetries: 3,
    });
    const bad = await createCheck({ retryStrategy: { type: 'FIXED', maxDurationSeconds: 601 } });
    expect(json<ApiErrorView>(bad).message).toBe('body/retryStrategy/maxDurationSeconds must be <= 600');
  });

  it('are listed in group order with the group settings applied (v1 and v2)', async () => {
    const group = await createGroup({
      name: 'G',
      privateLocations: ['lab'],
      runtimeId: '2024.09',
      apiCheckDefaults: { url: 'https://api.example.com', headers: [{ key: 'X-G', value: 'g' }] },
      retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1 },
    });
    const second = json<{ id: string }>(
      await createCheck({ name: 'second', groupId: group.id, groupOrder: 5, privateLocations: ['office'] }),
    );
    const first = json<{ id: string }>(
      await createCheck({
        name: 'first',
        groupId: group.id,
        groupOrder: 1,
        request: { method: 'GET', url: '/health' },
      }),
    );
    await createCheck({ name: 'outside' });
    for (const version of ['v1', 'v2']) {
      const list = json<Array<Record<string, unknown>>>(
        await req(acme, 'GET', `/${version}/check-groups/${group.id}/checks`),
      );
      expect(list.map((c) => c.id)).toEqual([first.id, second.id]);
      expect(list[0]).toMatchObject({
        checkType: 'API',
        privateLocations: ['lab'],
        runtimeId: '2024.09',
        retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1 },
        request: { url: 'https://api.example.com/health', headers: [{ key: 'X-G', value: 'g' }] },
      });
      expect(list[1]).toMatchObject({ privateLocations: ['lab'] });
    }
    expect(json<unknown[]>(await req(acme, 'GET', `/v1/check-groups/${group.id}/checks?limit=1&page=2`))).toHaveLength(
      1,
    );
  });
});

describe('group trigger tokens', () => {
  it('are created once, read, and deleted', async () => {
    const group = await createGroup({ name: 'G' });
    const url = `/v1/triggers/check-groups/${group.id}`;
    expect((await req(acme, 'GET', url)).statusCode).toBe(404);
    const created = await req(acme, 'POST', url);
    expect(created.statusCode).toBe(201);
    const trigger = json<{ id: number; token: string; groupId: number; called_at: string | null; created_at: string }>(
      created,
    );
    expect(trigger).toMatchObject({ groupId: group.id, called_at: null, updated_at: null });
    expect(trigger.token.length).toBeGreaterThanOrEqual(40);
    const again = await req(acme, 'POST', url);
    expect(again.statusCode).toBe(200);
    expect(json<{ token: string }>(again).token).toBe(trigger.token);
    expect(json<{ token: string }>(await req(acme, 'GET', url)).token).toBe(trigger.token);
    expect((await req(acme, 'DELETE', url)).statusCode).toBe(204);
    expect((await req(acme, 'GET', url)).statusCode).toBe(404);
    expect((await req(acme, 'DELETE', url)).statusCode).toBe(404);
  });
});
