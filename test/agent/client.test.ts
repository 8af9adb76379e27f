import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  PermanentError,
  parseRetryAfter,
  retryHintOf,
  ServiceClient,
  TransientError,
  UnauthorizedError,
} from '../../src/agent/client.ts';
import { loadAgentConfig } from '../../src/agent/config.ts';
import { AGENT_PATHS } from '../../src/shared/protocol.ts';
import { type JsonServer, json, startServer } from './helpers.ts';

const KEY = 'pl_client_test_key_123';
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function stub(handle: Parameters<typeof startServer>[0]): Promise<JsonServer> {
  const s = await startServer(handle);
  closers.push(() => s.close());
  return s;
}

function client(url: string, extra: Partial<ConstructorParameters<typeof ServiceClient>[0]> = {}): ServiceClient {
  const c = new ServiceClient({ apiUrl: new URL(url), apiKey: KEY, ...extra });
  closers.push(() => c.close());
  return c;
}

const deregister = { agentId: 'a1' };

describe('ServiceClient', () => {
  it('posts JSON with the bearer key to the protocol path and parses the answer', async () => {
    const s = await stub((_req, _body, res) => json(res, 200, { jobs: [] }));
    const res = await client(s.url).lease({ agentId: 'a1', slots: { uptime: 3, heavy: 1 }, waitSeconds: 1 });
    expect(res).toEqual({ jobs: [] });
    const [req] = s.requests;
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe(AGENT_PATHS.lease);
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req?.body ?? '')).toEqual({ agentId: 'a1', slots: { uptime: 3, heavy: 1 }, waitSeconds: 1 });
  });

  it('accepts an empty 204 answer', async () => {
    const s = await stub((_req, _body, res) => {
      res.writeHead(204);
      res.end();
    });
    await expect(client(s.url).deregister(deregister)).resolves.toBeUndefined();
  });

  it('401 → UnauthorizedError', async () => {
    const s = await stub((_req, _body, res) =>
      json(res, 401, { statusCode: 401, error: 'Unauthorized', message: 'unknown or revoked key' }),
    );
    const err = await client(s.url)
      .deregister(deregister)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect(String((err as Error).message)).not.toContain(KEY);
  });

  for (const status of [500, 502, 503, 429, 408]) {
    it(`${status} → TransientError`, async () => {
      const s = await stub((_req, _body, res) =>
        json(res, status, { statusCode: status, error: 'x', message: 'busy' }),
      );
      const err = await client(s.url)
        .deregister(deregister)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransientError);
      expect((err as TransientError).statusCode).toBe(status);
    });
  }

  for (const [status, header, ms] of [
    [503, '7', 7_000],
    [429, new Date(Date.now() + 30_000).toUTCString(), 30_000],
  ] as const) {
    it(`${status} with Retry-After: ${header} → a TransientError that asks for that wait`, async () => {
      const s = await stub((_req, _body, res) => {
        res.setHeader('retry-after', header);
        json(res, status, { statusCode: status, error: 'x', message: 'slow down' });
      });
      const err = await client(s.url)
        .deregister(deregister)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransientError);
      // An HTTP date has one-second resolution and the clock moved on: allow that much.
      expect((err as TransientError).retryAfterMs).toBeGreaterThan(ms - 2_000);
      expect((err as TransientError).retryAfterMs).toBeLessThanOrEqual(ms);
      expect(retryHintOf(err)).toEqual({ unreachable: false, retryAfterMs: (err as TransientError).retryAfterMs });
    });
  }

  it('Retry-After that is neither seconds nor a date is ignored', () => {
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT')).toBe(0);
  });

  it('a non-JSON 200 (a proxy page) → TransientError', async () => {
    const s = await stub((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>captive portal</html>');
    });
    await expect(client(s.url).heartbeat({ agentId: 'a', leases: [] })).rejects.toBeInstanceOf(TransientError);
  });

  it('connection refused → TransientError', async () => {
    // Find a port nobody listens on: bind, note it, close.
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((r) => probe.close(() => r()));
    const err = await client(`http://127.0.0.1:${port}`)
      .deregister(deregister)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransientError);
    expect((err as TransientError).statusCode).toBeUndefined();
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
    // No answer at all: the service is away, and the short reconnect cap applies.
    expect(retryHintOf(err)).toEqual({ unreachable: true });
  });

  it('404 → PermanentError with the service message (not retried)', async () => {
    const s = await stub((_req, _body, res) =>
      json(res, 404, { statusCode: 404, error: 'Not Found', message: 'unknown run r-1' }),
    );
    const err = await client(s.url)
      .submitResult({ agentId: 'a', leaseId: 'l', result: {} as never })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermanentError);
    expect((err as PermanentError).statusCode).toBe(404);
    expect((err as Error).message).toContain('unknown run r-1');
    expect(s.requests).toHaveLength(1);
  });

  it('a response slower than the timeout → TransientError', async () => {
    const s = await stub(() => {
      /* never answers */
    });
    const c = client(s.url, { requestTimeoutMs: 200 });
    await expect(c.deregister(deregister)).rejects.toBeInstanceOf(TransientError);
  });

  it('the lease long-poll is cut by its AbortSignal (and that is not a TransientError)', async () => {
    const s = await stub(() => {
      /* holds the long-poll open */
    });
    const ac = new AbortController();
    const p = client(s.url).lease({ agentId: 'a', slots: { uptime: 1, heavy: 1 }, waitSeconds: 30 }, ac.signal);
    // Wait until the request has reached the server, then abort.
    while (s.requests.length === 0) await new Promise((r) => setImmediate(r));
    ac.abort();
    const err = await p.catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(TransientError);
    expect((err as Error).name).toMatch(/Abort/);
  });

  it('the lease waits longer than the default request timeout (its timeout follows waitSeconds)', async () => {
    const s = await stub((_req, _body, res) => {
      setTimeout(() => json(res, 200, { jobs: [] }), 400);
    });
    const c = client(s.url, { requestTimeoutMs: 100 });
    await expect(c.lease({ agentId: 'a', slots: { uptime: 1, heavy: 1 }, waitSeconds: 1 })).resolves.toEqual({
      jobs: [],
    });
  });
});

/** A minimal HTTP proxy: CONNECT tunnels and absolute-URI forwarding, recording what it saw. */
async function startProxy(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const target = new URL(req.url ?? '');
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: req.method,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req, socket, head) => {
    seen.push(`CONNECT ${req.url}`);
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

describe('ServiceClient through a proxy', () => {
  for (const variable of ['HTTP_PROXY', 'http_proxy']) {
    it(`goes through the proxy set in ${variable}`, async () => {
      const s = await stub((_req, _body, res) => json(res, 200, { jobs: [] }));
      const proxy = await startProxy();
      closers.push(() => proxy.close());
      const config = loadAgentConfig({ API_KEY: KEY, API_URL: s.url, [variable]: proxy.url });
      const c = client(s.url, { proxy: config.proxy });
      await expect(c.lease({ agentId: 'a', slots: { uptime: 1, heavy: 0 }, waitSeconds: 1 })).resolves.toEqual({
        jobs: [],
      });
      expect(proxy.seen.length).toBeGreaterThan(0);
      expect(proxy.seen[0]).toContain(`127.0.0.1:${s.port}`);
      // The service still saw the request with our key (end to end through the tunnel).
      expect(s.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    });
  }

  it('HTTPS_PROXY applies to https:// service URLs only (as in curl and undici), not to http://', async () => {
    const s = await stub((_req, _body, res) => json(res, 200, { jobs: [] }));
    const proxy = await startProxy();
    closers.push(() => proxy.close());
    const config = loadAgentConfig({ API_KEY: KEY, API_URL: s.url, HTTPS_PROXY: proxy.url });
    expect(config.proxy.httpsProxy).toBe(`${proxy.url}/`);
    await client(s.url, { proxy: config.proxy }).lease({
      agentId: 'a',
      slots: { uptime: 1, heavy: 0 },
      waitSeconds: 1,
    });
    expect(proxy.seen).toEqual([]);
  });

  it('NO_PROXY bypasses the proxy', async () => {
    const s = await stub((_req, _body, res) => json(res, 200, { jobs: [] }));
    const proxy = await startProxy();
    closers.push(() => proxy.close());
    const config = loadAgentConfig({ API_KEY: KEY, API_URL: s.url, HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' });
    await client(s.url, { proxy: config.proxy }).lease({
      agentId: 'a',
      slots: { uptime: 1, heavy: 0 },
      waitSeconds: 1,
    });
    expect(proxy.seen).toEqual([]);
    expect(s.requests).toHaveLength(1);
  });

  it('a dead proxy → TransientError', async () => {
    const s = await stub((_req, _body, res) => json(res, 200, { jobs: [] }));
    const proxy = await startProxy();
    await proxy.close();
    const config = loadAgentConfig({ API_KEY: KEY, API_URL: s.url, HTTP_PROXY: proxy.url });
    await expect(client(s.url, { proxy: config.proxy }).deregister(deregister)).rejects.toBeInstanceOf(TransientError);
  });
});
