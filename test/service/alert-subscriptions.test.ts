/**
 * alertChannelSubscriptions on checks of every type and on check groups, autoAssignAlerts, and how
 * both agree with the channel's own subscriptions (PUT /v1/alert-channels/{id}/subscriptions): one
 * table behind all of them.
 */
import { describe, expect } from 'vitest';
import { packSuite } from '../agent/suite-helpers.ts';
import { json, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { apiTest as it } from '../support/api-test.ts';

interface Sub {
  alertChannelId: number;
  activated: boolean;
}
interface ChannelSub {
  checkId: string | null;
  groupId: number | null;
  activated: boolean;
}

async function channel(api: TestApi, who: TestAccount, opts: { autoSubscribe?: boolean } = {}): Promise<number> {
  const res = await api.request(who, 'POST', '/v1/alert-channels', {
    type: 'EMAIL',
    config: { address: 'ops@example.test' },
    autoSubscribe: opts.autoSubscribe ?? false,
  });
  expect(res.statusCode, res.body).toBe(201);
  return json<{ id: number }>(res).id;
}

async function channelSubs(api: TestApi, account: TestAccount, id: number): Promise<ChannelSub[]> {
  const res = await api.request(account, 'GET', `/v1/alert-channels/${id}`);
  return json<{ subscriptions: ChannelSub[] }>(res).subscriptions.map(({ checkId, groupId, activated }) => ({
    checkId,
    groupId,
    activated,
  }));
}

async function subsOfCheck(api: TestApi, account: TestAccount, id: string): Promise<Sub[]> {
  return json<{ alertChannelSubscriptions: Sub[] }>(await api.request(account, 'GET', `/v1/checks/${id}`))
    .alertChannelSubscriptions;
}

async function subsOfGroup(api: TestApi, account: TestAccount, id: number): Promise<Sub[]> {
  return json<{ alertChannelSubscriptions: Sub[] }>(await api.request(account, 'GET', `/v1/check-groups/${id}`))
    .alertChannelSubscriptions;
}

const timing = { period: 1, periodUnit: 'minutes', grace: 30, graceUnit: 'seconds' };

/** A create body of each check type, by the path segment of its POST. */
async function bodies(): Promise<Array<[string, Record<string, unknown>]>> {
  const suite = await packSuite({
    files: { 'tests/a.spec.ts': "import { test } from '@playwright/test'; test('a', () => {});" },
  });
  return [
    ['api', { name: 'API', request: { method: 'GET', url: 'http://127.0.0.1:9/' } }],
    ['tcp', { name: 'TCP', request: { hostname: '127.0.0.1', port: 9 } }],
    ['dns', { name: 'DNS', request: { query: 'example.com', recordType: 'A' } }],
    ['icmp', { name: 'ICMP', request: { hostname: '127.0.0.1' } }],
    ['browser', { name: 'Browser', script: "await page.goto('http://127.0.0.1:9/')" }],
    [
      'multistep',
      { name: 'Multistep', script: "test('a', async ({ request }) => { await request.get('http://127.0.0.1:9/') })" },
    ],
    ['heartbeat', { name: 'Cron', heartbeat: timing }],
    ['playwright', { name: 'Suite', codeBundle: suite.toString('base64') }],
  ];
}

describe('alertChannelSubscriptions on checks', () => {
  it('every check type stores them in the channel subscriptions, and shows what the channel side changes', async ({
    api,
    acme,
  }) => {
    const a = await channel(api, acme);
    const b = await channel(api, acme);
    for (const [type, body] of await bodies()) {
      const res = await api.request(acme, 'POST', `/v1/checks/${type}`, {
        ...body,
        alertChannelSubscriptions: [{ alertChannelId: a, activated: true }],
      });
      expect(res.statusCode, `${type}: ${res.body}`).toBe(201);
      const id = json<{ id: string }>(res).id;
      expect(json<{ alertChannelSubscriptions: Sub[] }>(res).alertChannelSubscriptions, type).toEqual([
        { alertChannelId: a, activated: true },
      ]);
      expect(await channelSubs(api, acme, a), type).toContainEqual({ checkId: id, groupId: null, activated: true });

      // The channel side changes what the check shows.
      const put = await api.request(acme, 'PUT', `/v1/alert-channels/${a}/subscriptions`, {
        checkId: id,
        activated: false,
      });
      expect(put.statusCode, put.body).toBe(200);
      expect(await subsOfCheck(api, acme, id), type).toEqual([{ alertChannelId: a, activated: false }]);

      // PUT without the property keeps them; with it, replaces them.
      const keep = await api.request(acme, 'PUT', `/v1/checks/${type}/${id}`, { name: `${type} renamed` });
      expect(keep.statusCode, keep.body).toBe(200);
      expect(json<{ alertChannelSubscriptions: Sub[] }>(keep).alertChannelSubscriptions, type).toEqual([
        { alertChannelId: a, activated: false },
      ]);
      const replace = await api.request(acme, 'PUT', `/v1/checks/${type}/${id}`, {
        alertChannelSubscriptions: [{ alertChannelId: b, activated: true }],
      });
      expect(replace.statusCode, replace.body).toBe(200);
      expect(json<{ alertChannelSubscriptions: Sub[] }>(replace).alertChannelSubscriptions, type).toEqual([
        { alertChannelId: b, activated: true },
      ]);
      expect(
        (await channelSubs(api, acme, a)).some((s) => s.checkId === id),
        type,
      ).toBe(false);
      expect(await channelSubs(api, acme, b), type).toContainEqual({ checkId: id, groupId: null, activated: true });
      // The list shows them too.
      const listed = json<Array<{ id: string; alertChannelSubscriptions: Sub[] }>>(
        await api.request(acme, 'GET', '/v1/checks?limit=100'),
      );
      expect(listed.find((c) => c.id === id)?.alertChannelSubscriptions, type).toEqual([
        { alertChannelId: b, activated: true },
      ]);
    }
  });

  it('keeps the subscriptions out of the stored body: the table is the only copy', async ({ api, acme }) => {
    const a = await channel(api, acme);
    const res = await api.request(acme, 'POST', '/v1/checks/api', {
      name: 'API',
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
      alertChannelSubscriptions: [{ alertChannelId: a, activated: true }],
    });
    const stored = await api.store.checks.get(acme.accountId, json<{ id: string }>(res).id);
    expect(stored?.body).not.toHaveProperty('alertChannelSubscriptions');
  });

  it("refuses a channel that is not one of the account's with a 400 naming the field, the same for another account's and a missing one", async ({
    api,
    acme,
    other,
  }) => {
    const mine = await channel(api, acme);
    const theirs = await channel(api, other);
    const messages: string[] = [];
    for (const id of [theirs, theirs + 1000]) {
      const res = await api.request(acme, 'POST', '/v1/checks/api', {
        name: 'API',
        request: { method: 'GET', url: 'http://127.0.0.1:9/' },
        alertChannelSubscriptions: [{ alertChannelId: id, activated: true }],
      });
      expect(res.statusCode, res.body).toBe(400);
      messages.push(json(res).message.replace(String(id), 'ID'));
      expect(json(res).message).toMatch(/^body\/alertChannelSubscriptions\/0\/alertChannelId/);
    }
    // Another account's channel reads exactly like one that does not exist.
    expect(messages[0]).toBe(messages[1]);
    expect(await channelSubs(api, acme, mine)).toEqual([]);
    expect(json<unknown[]>(await api.request(acme, 'GET', '/v1/checks'))).toEqual([]);

    const hb = await api.request(acme, 'POST', '/v1/checks/heartbeat', {
      name: 'Cron',
      heartbeat: timing,
      alertChannelSubscriptions: [
        { alertChannelId: mine, activated: true },
        { alertChannelId: theirs, activated: true },
      ],
    });
    expect(hb.statusCode).toBe(400);
    expect(json(hb).message).toMatch(/^body\/alertChannelSubscriptions\/1\/alertChannelId/);
    const twice = await api.request(acme, 'POST', '/v1/checks/tcp', {
      name: 'TCP',
      request: { hostname: '127.0.0.1', port: 9 },
      alertChannelSubscriptions: [
        { alertChannelId: mine, activated: true },
        { alertChannelId: mine, activated: false },
      ],
    });
    expect(twice.statusCode).toBe(400);
    expect(json(twice).message).toMatch(/^body\/alertChannelSubscriptions\/1\/alertChannelId.*more than once/);
  });

  it("a PUT naming another account's channel changes nothing", async ({ api, acme, other }) => {
    const mine = await channel(api, acme);
    const theirs = await channel(api, other);
    const res = await api.request(acme, 'POST', '/v1/checks/dns', {
      name: 'DNS',
      request: { query: 'example.com', recordType: 'A' },
      alertChannelSubscriptions: [{ alertChannelId: mine, activated: true }],
    });
    const id = json<{ id: string }>(res).id;
    const put = await api.request(acme, 'PUT', `/v1/checks/dns/${id}`, {
      name: 'changed',
      alertChannelSubscriptions: [{ alertChannelId: theirs, activated: true }],
    });
    expect(put.statusCode).toBe(400);
    expect(json(put).message).toMatch(/^body\/alertChannelSubscriptions\/0\/alertChannelId/);
    expect(await subsOfCheck(api, acme, id)).toEqual([{ alertChannelId: mine, activated: true }]);
    expect(json<{ name: string }>(await api.request(acme, 'GET', `/v1/checks/${id}`)).name).toBe('DNS');
  });

  it('deleting a channel removes it from check and group bodies', async ({ api, acme }) => {
    const a = await channel(api, acme);
    const b = await channel(api, acme);
    const subs = [
      { alertChannelId: a, activated: true },
      { alertChannelId: b, activated: true },
    ];
    const check = json<{ id: string }>(
      await api.request(acme, 'POST', '/v1/checks/icmp', {
        name: 'ICMP',
        request: { hostname: '127.0.0.1' },
        alertChannelSubscriptions: subs,
      }),
    );
    const group = json<{ id: number }>(
      await api.request(acme, 'POST', '/v2/check-groups', { name: 'g', alertChannelSubscriptions: subs }),
    );
    expect(await subsOfGroup(api, acme, group.id)).toEqual(subs);
    expect((await api.request(acme, 'DELETE', `/v1/alert-channels/${a}`)).statusCode).toBe(204);
    expect(await subsOfCheck(api, acme, check.id)).toEqual([{ alertChannelId: b, activated: true }]);
    expect(await subsOfGroup(api, acme, group.id)).toEqual([{ alertChannelId: b, activated: true }]);
  });
});

describe('alertChannelSubscriptions on check groups', () => {
  it('are stored in the channel subscriptions, replaced by a PUT that carries them and kept by one that does not', async ({
    api,
    acme,
    other,
  }) => {
    const a = await channel(api, acme);
    const b = await channel(api, acme);
    const res = await api.request(acme, 'POST', '/v2/check-groups', {
      name: 'g',
      alertChannelSubscriptions: [{ alertChannelId: a, activated: false }],
    });
    expect(res.statusCode, res.body).toBe(201);
    const group = json<{ id: number; alertChannelSubscriptions: Sub[] }>(res);
    expect(group.alertChannelSubscriptions).toEqual([{ alertChannelId: a, activated: false }]);
    expect(await channelSubs(api, acme, a)).toEqual([{ checkId: null, groupId: group.id, activated: false }]);
    expect((await api.store.checkGroups.get(acme.accountId, group.id))?.body).not.toHaveProperty(
      'alertChannelSubscriptions',
    );

    await api.request(acme, 'PUT', `/v1/alert-channels/${a}/subscriptions`, { groupId: group.id, activated: true });
    expect(await subsOfGroup(api, acme, group.id)).toEqual([{ alertChannelId: a, activated: true }]);

    const keep = await api.request(acme, 'PUT', `/v2/check-groups/${group.id}`, { name: 'g2' });
    expect(json<{ alertChannelSubscriptions: Sub[] }>(keep).alertChannelSubscriptions).toEqual([
      { alertChannelId: a, activated: true },
    ]);
    const replace = await api.request(acme, 'PUT', `/v2/check-groups/${group.id}`, {
      name: 'g2',
      alertChannelSubscriptions: [{ alertChannelId: b, activated: true }],
    });
    expect(json<{ alertChannelSubscriptions: Sub[] }>(replace).alertChannelSubscriptions).toEqual([
      { alertChannelId: b, activated: true },
    ]);
    expect(await channelSubs(api, acme, a)).toEqual([]);
    const listed = json<Array<{ id: number; alertChannelSubscriptions: Sub[] }>>(
      await api.request(acme, 'GET', '/v1/check-groups'),
    );
    expect(listed.find((g) => g.id === group.id)?.alertChannelSubscriptions).toEqual([
      { alertChannelId: b, activated: true },
    ]);

    // A member check shows its own subscriptions in the group's checks list, as on GET /v1/checks/{id}.
    const member = await api.request(acme, 'POST', '/v1/checks/api', {
      name: 'member',
      groupId: group.id,
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
      alertChannelSubscriptions: [{ alertChannelId: a, activated: true }],
    });
    expect(member.statusCode, member.body).toBe(201);
    const members = json<Array<{ alertChannelSubscriptions: Sub[] }>>(
      await api.request(acme, 'GET', `/v1/check-groups/${group.id}/checks`),
    );
    expect(members.map((m) => m.alertChannelSubscriptions)).toEqual([[{ alertChannelId: a, activated: true }]]);

    const theirs = await channel(api, other);
    const refused = await api.request(acme, 'PUT', `/v2/check-groups/${group.id}`, {
      name: 'g3',
      alertChannelSubscriptions: [{ alertChannelId: theirs, activated: true }],
    });
    expect(refused.statusCode).toBe(400);
    expect(json(refused).message).toMatch(/^body\/alertChannelSubscriptions\/0\/alertChannelId/);
    expect(await subsOfGroup(api, acme, group.id)).toEqual([{ alertChannelId: b, activated: true }]);
  });
});

describe('autoAssignAlerts', () => {
  it('true (the default) subscribes a new check or group to the autoSubscribe channels; false to none', async ({
    api,
    acme,
  }) => {
    const auto = await channel(api, acme, { autoSubscribe: true });
    await channel(api, acme);
    const api1 = { name: 'API', request: { method: 'GET', url: 'http://127.0.0.1:9/' } };
    const byDefault = json<{ id: string; alertChannelSubscriptions: Sub[] }>(
      await api.request(acme, 'POST', '/v1/checks/api', api1),
    );
    expect(byDefault.alertChannelSubscriptions).toEqual([{ alertChannelId: auto, activated: true }]);
    const off = await api.request(acme, 'POST', '/v1/checks/api?autoAssignAlerts=false', api1);
    expect(off.statusCode, off.body).toBe(201);
    expect(json<{ alertChannelSubscriptions: Sub[] }>(off).alertChannelSubscriptions).toEqual([]);
    const hbOff = await api.request(acme, 'POST', '/v1/checks/heartbeat?autoAssignAlerts=false', {
      name: 'Cron',
      heartbeat: timing,
    });
    expect(json<{ alertChannelSubscriptions: Sub[] }>(hbOff).alertChannelSubscriptions).toEqual([]);

    const group = json<{ id: number; alertChannelSubscriptions: Sub[] }>(
      await api.request(acme, 'POST', '/v2/check-groups', { name: 'g' }),
    );
    expect(group.alertChannelSubscriptions).toEqual([{ alertChannelId: auto, activated: true }]);
    const groupOff = await api.request(acme, 'POST', '/v2/check-groups?autoAssignAlerts=false', { name: 'h' });
    expect(json<{ alertChannelSubscriptions: Sub[] }>(groupOff).alertChannelSubscriptions).toEqual([]);
  });

  it('an explicit subscription wins over the autoSubscribe one for the same channel, and a PUT never auto-assigns', async ({
    api,
    acme,
  }) => {
    const auto = await channel(api, acme, { autoSubscribe: true });
    const res = await api.request(acme, 'POST', '/v1/checks/tcp', {
      name: 'TCP',
      request: { hostname: '127.0.0.1', port: 9 },
      alertChannelSubscriptions: [{ alertChannelId: auto, activated: false }],
    });
    const check = json<{ id: string; alertChannelSubscriptions: Sub[] }>(res);
    expect(check.alertChannelSubscriptions).toEqual([{ alertChannelId: auto, activated: false }]);
    const put = await api.request(acme, 'PUT', `/v1/checks/tcp/${check.id}?autoAssignAlerts=true`, {
      alertChannelSubscriptions: [],
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(json<{ alertChannelSubscriptions: Sub[] }>(put).alertChannelSubscriptions).toEqual([]);
  });
});
