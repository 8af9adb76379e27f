import type { Static } from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../../src/service/config.ts';
import type { ChannelResponse } from '../../src/service/routes/alert-channel-schemas.ts';
import { ConfigError } from '../../src/shared/errors.ts';
import { json, startTestApi, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { CHANNEL_DEFAULTS } from '../support/alerting-fixtures.ts';

/** A channel as the API answers it; its config read field by field. */
type ChannelView = Omit<Static<typeof ChannelResponse>, 'config'> & { config: Record<string, unknown> };

const SMS_GATEWAY = 'http://127.0.0.1:9/sms';
const VOICE_GATEWAY = 'http://127.0.0.1:9/voice';
const SLACK_URL = 'https://hooks.slack.test/services/T000/B000/XXXXsecrettoken1234';

let api: TestApi;
let acme: TestAccount;
let other: TestAccount;
async function start(env: Record<string, string> = {}) {
  api = await startTestApi(env);
  acme = await api.newAccount('Acme');
  other = await api.newAccount('Other');
}
afterEach(async () => {
  await api.close();
});

async function createChannel(body: object, who = acme): Promise<ChannelView> {
  const res = await api.request(who, 'POST', '/v1/alert-channels', body);
  expect(res.statusCode, res.body).toBe(201);
  return json<ChannelView>(res);
}

async function createCheck(who = acme): Promise<string> {
  const res = await api.request(who, 'POST', '/v1/checks/api', {
    name: 'home',
    request: { method: 'GET', url: 'https://example.test/' },
  });
  expect(res.statusCode, res.body).toBe(201);
  return json<{ id: string }>(res).id;
}

describe('/v1/alert-channels CRUD', () => {
  beforeEach(() => start({ ALERT_SMS_GATEWAY_URL: SMS_GATEWAY, ALERT_VOICE_GATEWAY_URL: VOICE_GATEWAY }));

  it('creates with the documented defaults, lists, reads, updates and deletes', async () => {
    const created = await createChannel({ type: 'EMAIL', config: { address: 'ops@example.test' } });
    expect(created).toMatchObject({
      type: 'EMAIL',
      config: { address: 'ops@example.test' },
      subscriptions: [],
      ...CHANNEL_DEFAULTS,
      updated_at: null,
    });
    expect(json(await api.request(acme, 'GET', '/v1/alert-channels'))).toEqual([created]);
    expect(json(await api.request(acme, 'GET', `/v1/alert-channels/${created.id}`))).toEqual(created);

    const put = await api.request(acme, 'PUT', `/v1/alert-channels/${created.id}`, {
      type: 'EMAIL',
      config: { address: 'oncall@example.test' },
      sendDegraded: true,
      sslExpiry: true,
      sslExpiryThreshold: 7,
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(json<ChannelView>(put)).toMatchObject({
      config: { address: 'oncall@example.test' },
      sendDegraded: true,
      sslExpiry: true,
      sslExpiryThreshold: 7,
    });
    expect(json<ChannelView>(put).updated_at).not.toBeNull();

    expect((await api.request(acme, 'DELETE', `/v1/alert-channels/${created.id}`)).statusCode).toBe(204);
    expect((await api.request(acme, 'GET', `/v1/alert-channels/${created.id}`)).statusCode).toBe(404);
    expect((await api.request(acme, 'DELETE', `/v1/alert-channels/${created.id}`)).statusCode).toBe(404);
  });

  it('pages the list with limit and page', async () => {
    for (const n of [1, 2, 3]) await createChannel({ type: 'EMAIL', config: { address: `a${n}@example.test` } });
    const page2 = json<ChannelView[]>(await api.request(acme, 'GET', '/v1/alert-channels?limit=2&page=2'));
    expect(page2.map((c) => c.config.address)).toEqual(['a3@example.test']);
  });

  it('accepts each channel type with its config, filling the webhook defaults', async () => {
    const bodies = [
      { type: 'SLACK', config: { url: SLACK_URL, channel: '#ops' } },
      { type: 'WEBHOOK', config: { name: 'hook', url: 'https://hooks.example.test/in' } },
      { type: 'PAGERDUTY', config: { serviceKey: 'pd-service-key-0123456789', account: 'acme', serviceName: 'web' } },
      { type: 'OPSGENIE', config: { apiKey: 'og-api-key-0123456789abcd', region: 'EU', priority: 'P1' } },
      { type: 'SMS', config: { number: '+4915112345678', name: 'on call' } },
      { type: 'CALL', config: { number: '+14155550100' } },
    ];
    for (const body of bodies) expect((await createChannel(body)).type).toBe(body.type);
    const webhook = json<ChannelView[]>(await api.request(acme, 'GET', '/v1/alert-channels')).find(
      (c) => c.type === 'WEBHOOK',
    );
    expect(webhook?.config).toEqual({
      name: 'hook',
      url: 'https://hooks.example.test/in',
      method: 'POST',
      headers: [],
      queryParameters: [],
    });
  });

  it('refuses bad configs with a 400 naming the field', async () => {
    const cases: Array<[object, RegExp]> = [
      [{ type: 'EMAIL', config: { address: 'not-an-address' } }, /body\/config\/address/],
      [{ type: 'EMAIL', config: {} }, /body\/config\/address is required for EMAIL/],
      [
        { type: 'EMAIL', config: { address: 'a@b.test', url: 'x' } },
        /body\/config\/url is not a EMAIL channel setting/,
      ],
      [
        { type: 'WEBHOOK', config: { url: 'ftp://hooks.example.test/' } },
        /body\/config\/url must be an http:\/\/ or https:\/\/ URL/,
      ],
      [{ type: 'WEBHOOK', config: { url: 'javascript:alert(1)' } }, /body\/config\/url/],
      [{ type: 'WEBHOOK', config: { url: 'https://a.test/', method: 'FETCH' } }, /body\/config\/method/],
      [{ type: 'SLACK', config: { url: 'file:///etc/passwd' } }, /body\/config\/url must be an http/],
      [{ type: 'OPSGENIE', config: { apiKey: 'k', region: 'APAC', priority: 'P1' } }, /body\/config\/region/],
      [{ type: 'PAGERDUTY', config: { serviceKey: 'k', account: 'a' } }, /body\/config\/serviceName is required/],
      [{ type: 'SMS', config: { number: '0151 123' } }, /body\/config\/number/],
      [{ type: 'SLACK_APP', config: {} }, /body\/type/],
      [{ type: 'EMAIL', config: { address: 'a@b.test' }, sslExpiryThreshold: 31 }, /body\/sslExpiryThreshold/],
    ];
    for (const [body, message] of cases) {
      const res = await api.request(acme, 'POST', '/v1/alert-channels', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(json(res).message).toMatch(message);
    }
  });

  it('masks secret config fields on every read, and keeps them when a masked value is sent back', async () => {
    const created = await createChannel({ type: 'SLACK', config: { url: SLACK_URL, channel: '#ops' } });
    expect(created.config).toEqual({ url: '********1234', channel: '#ops' });
    const og = await createChannel({ type: 'OPSGENIE', config: { apiKey: 'short', region: 'US', priority: 'P3' } });
    expect(og.config.apiKey).toBe('********');
    const hook = await createChannel({
      type: 'WEBHOOK',
      config: { url: 'https://h.test/', webhookSecret: 'whsec-0123456789abcdef' },
    });
    expect(hook.config.webhookSecret).toBe('********cdef');
    const list = await api.request(acme, 'GET', '/v1/alert-channels');
    for (const secret of [SLACK_URL, 'short', 'whsec-0123456789abcdef']) expect(list.body).not.toContain(secret);

    // GET then PUT the same body back: the stored URL stays, not its mask.
    await api.request(acme, 'PUT', `/v1/alert-channels/${created.id}`, {
      type: 'SLACK',
      config: created.config,
      sendDegraded: true,
    });
    expect((await api.store.alertChannels.get(acme.accountId, created.id))?.definition.config).toEqual({
      url: SLACK_URL,
      channel: '#ops',
    });
  });

  it('masks the header and query parameter values of a webhook (they carry tokens), and keeps them when sent back masked', async () => {
    const token = 'Bearer tok-0123456789abcdef';
    const config = {
      url: 'https://h.test/',
      headers: [
        { key: 'Authorization', value: token },
        { key: 'X-Team', value: 'ops' },
      ],
      queryParameters: [{ key: 'key', value: 'k-0123456789abcdef' }],
    };
    const hook = await createChannel({ type: 'WEBHOOK', config });
    expect(hook.config.headers).toEqual([
      { key: 'Authorization', value: '********cdef' },
      { key: 'X-Team', value: '********' },
    ]);
    expect(hook.config.queryParameters).toEqual([{ key: 'key', value: '********cdef' }]);
    const edited = {
      ...hook.config,
      headers: [...(hook.config.headers as object[]), { key: 'X-New', value: 'fresh' }],
    };
    await api.request(acme, 'PUT', `/v1/alert-channels/${hook.id}`, { type: 'WEBHOOK', config: edited });
    const stored = (await api.store.alertChannels.get(acme.accountId, hook.id))?.definition.config as typeof config;
    expect(stored.headers).toEqual([...config.headers, { key: 'X-New', value: 'fresh' }]);
    expect(stored.queryParameters).toEqual(config.queryParameters);
  });

  it("treats another account's channel as absent", async () => {
    const created = await createChannel({ type: 'EMAIL', config: { address: 'ops@example.test' } });
    const path = `/v1/alert-channels/${created.id}`;
    expect((await api.request(other, 'GET', path)).statusCode).toBe(404);
    expect((await api.request(other, 'PUT', path, { type: 'EMAIL', config: { address: 'x@y.test' } })).statusCode).toBe(
      404,
    );
    expect((await api.request(other, 'PUT', `${path}/subscriptions`, { groupId: 1, activated: true })).statusCode).toBe(
      404,
    );
    expect((await api.request(other, 'DELETE', path)).statusCode).toBe(404);
    expect(json(await api.request(other, 'GET', '/v1/alert-channels'))).toEqual([]);
    expect((await api.request(acme, 'GET', path)).statusCode).toBe(200);
  });
});

describe('SMS and CALL channels without a gateway', () => {
  beforeEach(() => start());

  it('are refused with a 400 naming the missing setting', async () => {
    const sms = await api.request(acme, 'POST', '/v1/alert-channels', {
      type: 'SMS',
      config: { number: '+4915112345678' },
    });
    expect(sms.statusCode).toBe(400);
    expect(json(sms).message).toMatch(/body\/type: SMS channels need an SMS gateway.*ALERT_SMS_GATEWAY_URL/);
    const call = await api.request(acme, 'POST', '/v1/alert-channels', {
      type: 'CALL',
      config: { number: '+4915112345678' },
    });
    expect(call.statusCode).toBe(400);
    expect(json(call).message).toMatch(/ALERT_VOICE_GATEWAY_URL/);
  });

  it('a malformed gateway URL stops the start with a ConfigError naming the variable', () => {
    expect(() => loadServiceConfig({ ALERT_SMS_GATEWAY_URL: 'not a url' })).toThrow(ConfigError);
    expect(() => loadServiceConfig({ ALERT_VOICE_GATEWAY_URL: 'ftp://gw.test/' })).toThrow(/ALERT_VOICE_GATEWAY_URL/);
  });
});

describe('alert channel subscriptions', () => {
  beforeEach(() => start());

  it('subscribes a check and a group, updates activation in place, and refuses bad targets', async () => {
    const channel = await createChannel({ type: 'EMAIL', config: { address: 'ops@example.test' } });
    const checkId = await createCheck();
    const groupRes = await api.request(acme, 'POST', '/v2/check-groups', { name: 'g' });
    expect(groupRes.statusCode, groupRes.body).toBe(201);
    const group = json<{ id: number }>(groupRes);
    const path = `/v1/alert-channels/${channel.id}/subscriptions`;

    const first = await api.request(acme, 'PUT', path, { checkId, activated: true });
    expect(first.statusCode, first.body).toBe(200);
    expect(json(first)).toMatchObject({ checkId, groupId: null, activated: true });
    const again = json<{ id: number }>(await api.request(acme, 'PUT', path, { checkId, activated: false }));
    expect(again.id).toBe(json<{ id: number }>(first).id);
    expect(json(await api.request(acme, 'PUT', path, { groupId: group.id, activated: true }))).toMatchObject({
      checkId: null,
      groupId: group.id,
    });

    const read = json<ChannelView>(await api.request(acme, 'GET', `/v1/alert-channels/${channel.id}`));
    expect(read.subscriptions.map(({ checkId: c, groupId: g, activated }) => ({ c, g, activated }))).toEqual([
      { c: checkId, g: null, activated: false },
      { c: null, g: group.id, activated: true },
    ]);

    const otherCheck = await createCheck(other);
    const refusals: Array<[object, RegExp]> = [
      [{ checkId, groupId: group.id, activated: true }, /either a checkId or a groupId/],
      [{ activated: true }, /either a checkId or a groupId/],
      [{ checkId: otherCheck, activated: true }, /body\/checkId: no check/],
      [{ groupId: 999999, activated: true }, /body\/groupId: no check group/],
    ];
    for (const [body, message] of refusals) {
      const res = await api.request(acme, 'PUT', path, body);
      expect(res.statusCode).toBe(400);
      expect(json(res).message).toMatch(message);
    }

    // Deleting the check removes its subscription.
    expect((await api.request(acme, 'DELETE', `/v1/checks/${checkId}`)).statusCode).toBe(204);
    expect(
      json<ChannelView>(await api.request(acme, 'GET', `/v1/alert-channels/${channel.id}`)).subscriptions,
    ).toHaveLength(1);
  });

  it('takes subscriptions on the channel body, replacing them on update', async () => {
    const a = await createCheck();
    const b = await createCheck();
    const channel = await createChannel({
      type: 'EMAIL',
      config: { address: 'o@e.test' },
      subscriptions: [{ checkId: a, activated: true }],
    });
    expect(channel.subscriptions).toMatchObject([{ checkId: a, activated: true }]);
    const put = await api.request(acme, 'PUT', `/v1/alert-channels/${channel.id}`, {
      type: 'EMAIL',
      config: { address: 'o@e.test' },
      subscriptions: [{ checkId: b, activated: false }],
    });
    expect(json<ChannelView>(put).subscriptions).toMatchObject([{ checkId: b, activated: false }]);
  });

  it('autoSubscribe subscribes checks created afterwards, in its account only', async () => {
    const auto = await createChannel({ type: 'EMAIL', config: { address: 'o@e.test' }, autoSubscribe: true });
    const manual = await createChannel({ type: 'EMAIL', config: { address: 'p@e.test' } });
    await createChannel({ type: 'EMAIL', config: { address: 'q@e.test' }, autoSubscribe: true }, other);
    const checkId = await createCheck();
    await createCheck(other);
    const timing = { period: 1, periodUnit: 'minutes', grace: 30, graceUnit: 'seconds' };
    const heartbeat = await api.request(acme, 'POST', '/v1/checks/heartbeat', { name: 'cron', heartbeat: timing });
    expect(heartbeat.statusCode, heartbeat.body).toBe(201);
    const read = async (id: number) =>
      json<ChannelView>(await api.request(acme, 'GET', `/v1/alert-channels/${id}`)).subscriptions;
    expect(await read(auto.id)).toMatchObject([
      { checkId, groupId: null, activated: true },
      { checkId: json<{ id: string }>(heartbeat).id, groupId: null, activated: true },
    ]);
    expect(await read(manual.id)).toEqual([]);
  });
});
