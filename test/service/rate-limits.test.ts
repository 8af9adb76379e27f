/**
 * Rate limits of the routes anyone can reach, on a real service on loopback: each limit, once
 * exceeded, answers 429 with Retry-After and the reference's error body, while another key (or
 * another address, 127.0.0.2) keeps its own budget. Small limits come from the environment, as an
 * operator would set them.
 */
import { once } from 'node:events';
import http from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { ERRORS_PREFIX } from '../../src/service/dispatch/report-token.ts';
import { AGENT_PATHS, PROTOCOL_VERSION } from '../../src/shared/protocol.ts';
import { ConfigError } from '../../src/shared/errors.ts';
import { ReferenceValidator } from '../contract/reference.ts';
import { type RunningService, startRunningService } from '../helpers/running-service.ts';

const WINDOW_SECONDS = 60;

interface Answer {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** Connections from 127.0.0.1, and from a second loopback address to tell per-address limits apart. */
const agents = {
  first: new http.Agent({ keepAlive: true, localAddress: '127.0.0.1' }),
  second: new http.Agent({ keepAlive: true, localAddress: '127.0.0.2' }),
};

let running: RunningService | undefined;

async function startWith(env: Record<string, string>): Promise<string> {
  running = await startRunningService({ RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS), ...env });
  return running.baseUrl;
}

afterAll(() => {
  agents.first.destroy();
  agents.second.destroy();
});

afterEach(async () => {
  await running?.stop();
  running = undefined;
});

async function call(
  url: string,
  opts: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: unknown; fromSecond?: boolean } = {},
): Promise<Answer> {
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const req = http.request(url, {
    method: opts.method ?? 'GET',
    agent: opts.fromSecond ? agents.second : agents.first,
    headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
  });
  req.end(payload);
  const [res] = (await once(req, 'response')) as [http.IncomingMessage];
  const text = (await readText(res)).trim();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: res.statusCode ?? 0, text, headers: res.headers, body };
}

async function readText(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Sends `times` requests one after another; returns the statuses. */
async function statuses(times: number, send: () => Promise<Answer>): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < times; i++) seen.push((await send()).status);
  return seen;
}

/** The reference's TooManyRequestsError: statusCode 429, error "Too Many Requests", a message; and Retry-After. */
function expectTooMany(answer: Answer, message: RegExp): void {
  expect(answer.status).toBe(429);
  expect(answer.body).toEqual({ statusCode: 429, error: 'Too Many Requests', message: expect.stringMatching(message) });
  const retryAfter = Number(answer.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
  expect(answer.headers['x-ratelimit-remaining']).toBe('0');
  expect(answer.headers['x-ratelimit-reset']).toBe(String(retryAfter));
}

async function accountHeaders(name: string): Promise<Record<string, string>> {
  const { accountId, apiKey } = await createAccount(running!.service.store, name);
  return { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId };
}

describe('the public API', () => {
  it('limits requests per API key; another key is not affected', async () => {
    const base = await startWith({ RATE_LIMIT_API_PER_KEY: '3' });
    const acme = await accountHeaders('Acme');
    const other = await accountHeaders('Other');
    expect(await statuses(3, () => call(`${base}/v1/checks`, { headers: acme }))).toEqual([200, 200, 200]);
    const refused = await call(`${base}/v1/checks`, { headers: acme });
    expectTooMany(refused, /API key.*at most 3 requests per 60 s/);
    expect(new ReferenceValidator().check('get', '/v1/checks', 429, refused.text)).toBeNull();
    expect((await call(`${base}/v1/checks`, { headers: other })).status).toBe(200);
  });

  it('limits requests per address, whatever the key; another address is not affected', async () => {
    const base = await startWith({ RATE_LIMIT_API_PER_ADDRESS: '3' });
    const acme = await accountHeaders('Acme');
    expect(
      await statuses(3, () =>
        call(`${base}/v1/checks`, { headers: { authorization: `Bearer op_guess${Math.random()}` } }),
      ),
    ).toEqual([401, 401, 401]);
    expectTooMany(await call(`${base}/v1/checks`, { headers: acme }), /your address.*at most 3 requests per 60 s/);
    expect((await call(`${base}/v1/checks`, { headers: acme, fromSecond: true })).status).toBe(200);
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY names the proxy', async () => {
    const base = await startWith({ RATE_LIMIT_API_PER_ADDRESS: '2' });
    const forwarded = (i: number) => call(`${base}/v1/checks`, { headers: { 'x-forwarded-for': `203.0.113.${i}` } });
    expect(await statuses(3, () => forwarded(Math.floor(Math.random() * 250)))).toEqual([401, 401, 429]);
  });

  it('keys by the forwarded client address behind a trusted proxy', async () => {
    const base = await startWith({ RATE_LIMIT_API_PER_ADDRESS: '2', TRUST_PROXY: '127.0.0.1' });
    const forwarded = (client: string) => call(`${base}/v1/checks`, { headers: { 'x-forwarded-for': client } });
    expect(await statuses(3, () => forwarded('203.0.113.7'))).toEqual([401, 401, 429]);
    expect((await forwarded('203.0.113.8')).status).toBe(401);
  });
});

describe('heartbeat pings', () => {
  async function heartbeatToken(base: string): Promise<string> {
    const created = await call(`${base}/v1/checks/heartbeat`, {
      method: 'POST',
      headers: await accountHeaders(`Acme ${Math.random()}`),
      body: {
        name: 'nightly backup',
        heartbeat: { period: 60, periodUnit: 'seconds', grace: 30, graceUnit: 'seconds' },
      },
    });
    expect(created.status).toBe(201);
    return (created.body.heartbeat as { pingToken: string }).pingToken;
  }

  it('limits pings per token; another token is not affected', async () => {
    const base = await startWith({ RATE_LIMIT_PING_PER_TOKEN: '2' });
    const token = await heartbeatToken(base);
    const other = await heartbeatToken(base);
    expect(await statuses(2, () => call(`${base}/ping/${token}`, { method: 'POST' }))).toEqual([200, 200]);
    expectTooMany(await call(`${base}/ping/${token}`), /ping token.*at most 2 requests per 60 s/);
    expect((await call(`${base}/ping/${other}`)).status).toBe(200);
  });

  it('limits pings per address, so guessing tokens is throttled; another address is not affected', async () => {
    const base = await startWith({ RATE_LIMIT_PING_PER_ADDRESS: '3' });
    const token = await heartbeatToken(base);
    expect(await statuses(3, () => call(`${base}/ping/guess-${Math.random()}`))).toEqual([404, 404, 404]);
    expectTooMany(await call(`${base}/ping/${token}`), /your address.*at most 3 requests per 60 s/);
    expect((await call(`${base}/ping/${token}`, { fromSecond: true })).status).toBe(200);
  });
});

describe('check group trigger URLs', () => {
  it('limit calls per token; another token is not affected', async () => {
    const base = await startWith({ RATE_LIMIT_TRIGGER_PER_TOKEN: '2' });
    expect(await statuses(2, () => call(`${base}/check-groups/1/trigger/token-a`))).toEqual([404, 404]);
    expectTooMany(
      await call(`${base}/check-groups/1/trigger/token-a`, { method: 'POST' }),
      /trigger token.*at most 2 requests per 60 s/,
    );
    expect((await call(`${base}/check-groups/1/trigger/token-b`)).status).toBe(404);
  });

  it('limit calls per address; another address is not affected', async () => {
    const base = await startWith({ RATE_LIMIT_TRIGGER_PER_ADDRESS: '2' });
    expect(await statuses(2, () => call(`${base}/check-groups/1/trigger/guess-${Math.random()}`))).toEqual([404, 404]);
    expectTooMany(await call(`${base}/check-groups/1/trigger/token-a`), /your address.*at most 2 requests per 60 s/);
    expect((await call(`${base}/check-groups/1/trigger/token-a`, { fromSecond: true })).status).toBe(404);
  });
});

describe('the agent API', () => {
  async function locationKey(base: string, headers: Record<string, string>, slug: string): Promise<string> {
    const created = await call(`${base}/v1/private-locations`, {
      method: 'POST',
      headers,
      body: { name: slug, slugName: slug },
    });
    expect(created.status).toBe(201);
    return (created.body.keys as Array<{ rawKey: string }>)[0]!.rawKey;
  }
  const register = (base: string, key: string) =>
    call(`${base}${AGENT_PATHS.register}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: {
        agentId: `agent-${key.slice(-8)}`,
        version: '1.0.0',
        protocolVersion: PROTOCOL_VERSION,
        hostname: 'h',
        capabilities: { checkTypes: ['API'] },
      },
    });

  it('limits requests per location key, not per address: two keys from one address each get their budget', async () => {
    const base = await startWith({ RATE_LIMIT_AGENT_PER_KEY: '3' });
    const headers = await accountHeaders('Acme');
    const office = await locationKey(base, headers, 'office');
    const lab = await locationKey(base, headers, 'lab');
    expect(await statuses(3, () => register(base, office))).toEqual([200, 200, 200]);
    expectTooMany(await register(base, office), /private location key.*at most 3 requests per 60 s/);
    expect(await statuses(3, () => register(base, lab))).toEqual([200, 200, 200]);
  });

  it('limits error reports per report token (their credential), another token is not affected', async () => {
    const base = await startWith({ RATE_LIMIT_AGENT_PER_KEY: '2' });
    const report = (token: string) =>
      call(`${base}${ERRORS_PREFIX}/api/some-location/envelope/?sentry_key=${token}`, { method: 'POST', body: {} });
    expect(await statuses(2, () => report('token-a'))).toEqual([401, 401]);
    expectTooMany(await report('token-a'), /private location key.*at most 2 requests per 60 s/);
    expect((await report('token-b')).status).toBe(401);
  });

  it('does not count agent requests against the per-address limits of the other routes', async () => {
    const base = await startWith({
      RATE_LIMIT_API_PER_ADDRESS: '3',
      RATE_LIMIT_PING_PER_ADDRESS: '1',
      RATE_LIMIT_TRIGGER_PER_ADDRESS: '1',
    });
    const key = await locationKey(base, await accountHeaders('Acme'), 'office');
    // Ten agents of one location behind one address, twenty requests each.
    const seen = await Promise.all(Array.from({ length: 10 }, () => statuses(20, () => register(base, key))));
    expect(seen.flat().filter((s) => s !== 200)).toEqual([]);
  });
});

describe('/openapi.json', () => {
  it('lists the 429 answer, in the reference error shape, for the operations that are rate limited', async () => {
    const base = await startWith({});
    const doc = (await call(`${base}/openapi.json`)).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const limited: Array<[string, string]> = [
      ['get', '/v1/checks'],
      ['post', '/v1/checks/api'],
      ['get', '/v2/check-results/{checkId}'],
      ['post', '/ping/{pingToken}'],
      ['post', '/check-groups/{groupId}/trigger/{token}'],
      ['get', '/v1/badges/checks/{checkId}'],
    ];
    for (const [method, path] of limited) {
      expect(doc.paths[path]?.[method]?.responses['429'], `${method} ${path}`).toMatchObject({
        description: expect.stringMatching(/^Too Many Requests/),
        content: { 'application/json': { schema: { required: ['statusCode', 'error', 'message'] } } },
      });
    }
    expect(doc.paths['/openapi.json']).toBeUndefined();
  });
});

describe('rate limit settings', () => {
  it('defaults: the window, and limits that a fleet never reaches', () => {
    expect(loadServiceConfig({}).rateLimits).toEqual({
      windowSeconds: 60,
      api: { perKey: 3000, perAddress: 6000 },
      ping: { perToken: 120, perAddress: 6000 },
      trigger: { perToken: 60, perAddress: 600 },
      agent: { perKey: 1_200_000 },
    });
    expect(loadServiceConfig({}).trustProxy).toBe(false);
  });

  it('reads each limit; 0 turns a limit off', () => {
    const config = loadServiceConfig({
      RATE_LIMIT_API_PER_KEY: '0',
      RATE_LIMIT_PING_PER_ADDRESS: '10',
      RATE_LIMIT_AGENT_PER_KEY: '99',
    });
    expect(config.rateLimits?.api.perKey).toBe(0);
    expect(config.rateLimits?.ping.perAddress).toBe(10);
    expect(config.rateLimits?.agent.perKey).toBe(99);
  });

  it.each([
    ['TRUST_PROXY', 'true', true],
    ['TRUST_PROXY', 'false', false],
    ['TRUST_PROXY', '2', 2],
    ['TRUST_PROXY', '10.0.0.0/8, loopback,::1', '10.0.0.0/8,loopback,::1'],
  ])('reads %s=%s', (name, value, expected) => {
    expect(loadServiceConfig({ [name]: value }).trustProxy).toEqual(expected);
  });

  it.each([
    ['RATE_LIMIT_API_PER_KEY', 'lots', /RATE_LIMIT_API_PER_KEY="lots" is not a whole number; use an integer from 0 to/],
    ['RATE_LIMIT_PING_PER_TOKEN', '-1', /RATE_LIMIT_PING_PER_TOKEN=-1 is out of range; use an integer from 0 to/],
    ['RATE_LIMIT_WINDOW_SECONDS', '0', /RATE_LIMIT_WINDOW_SECONDS=0 is out of range; use an integer from 1 to 3600/],
    ['TRUST_PROXY', 'my-proxy', /TRUST_PROXY="my-proxy" is not allowed: "my-proxy" is not an IP address/],
    ['TRUST_PROXY', '10.0.0.0/40', /TRUST_PROXY="10.0.0.0\/40" is not allowed: "10.0.0.0\/40"/],
    ['SHUTDOWN_DRAIN_SECONDS', '1h', /SHUTDOWN_DRAIN_SECONDS="1h" is not a whole number; use an integer from 0 to 300/],
  ])('refuses %s=%s with a ConfigError naming it', (name, value, message) => {
    expect(() => loadServiceConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadServiceConfig({ [name]: value })).toThrow(message);
  });
});
