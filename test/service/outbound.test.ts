/**
 * The outbound guard (src/service/outbound/): what the service's own calls to user-supplied URLs
 * may connect to. Real HTTP servers on loopback addresses; a refused call never connects, which
 * the servers' connection counts show.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../../src/service/config.ts';
import { loadOutboundConfig } from '../../src/service/outbound/config.ts';
import { createOutboundDispatcher, type Resolver } from '../../src/service/outbound/dispatcher.ts';
import { OutboundPolicy, OutboundRefusedError } from '../../src/service/outbound/policy.ts';
import { ConfigError } from '../../src/shared/errors.ts';

interface TestServer {
  port: number;
  connections: number;
  requests: number;
  close(): Promise<void>;
}

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** An HTTP server on `host` that answers 204, or redirects to `location` when given. */
async function serve(host: string, location?: () => string): Promise<TestServer> {
  const server: Server = createServer((_req, res) => {
    state.requests += 1;
    if (location) res.writeHead(307, { location: location() });
    else res.writeHead(204, { connection: 'close' });
    res.end();
  });
  const state: TestServer = {
    port: 0,
    connections: 0,
    requests: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('connection', () => {
    state.connections += 1;
  });
  server.listen(0, host);
  await once(server, 'listening');
  state.port = (server.address() as AddressInfo).port;
  servers.push(state);
  return state;
}

function dispatcher(allow: string | undefined, opts: { resolve?: Resolver; maxRedirections?: number } = {}) {
  const policy = new OutboundPolicy(loadOutboundConfig(allow === undefined ? {} : { OUTBOUND_ALLOW: allow }));
  return createOutboundDispatcher(policy, { connectTimeoutMs: 2_000, ...opts });
}

async function post(url: string, through: ReturnType<typeof dispatcher>): Promise<number> {
  const res = await request(url, { method: 'POST', body: '{}', dispatcher: through });
  await res.body.dump();
  return res.statusCode;
}

/** A resolver that answers from a table, in turn for a name with several answers (to play DNS rebinding). */
function resolverOf(table: Record<string, string[][]>): Resolver {
  return (hostname, _options, callback) => {
    const answers = table[hostname];
    const next = answers && answers.length > 1 ? answers.shift() : answers?.[0];
    if (!next) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      return;
    }
    callback(
      null,
      next.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };
}

describe('outbound guard', () => {
  it('refuses loopback addresses by default, in every notation, before connecting', async () => {
    const target = await serve('127.0.0.1');
    const guarded = dispatcher(undefined);
    const refused: Record<string, RegExp> = {
      [`http://127.0.0.1:${target.port}/`]:
        /^refused: 127\.0\.0\.1 is a loopback address; allow it with OUTBOUND_ALLOW$/,
      [`http://localhost:${target.port}/`]: /^refused: localhost resolved to (127\.0\.0\.1|::1), a loopback address/,
      [`http://0x7f000001:${target.port}/`]: /127\.0\.0\.1 is a loopback address/,
      [`http://2130706433:${target.port}/`]: /127\.0\.0\.1 is a loopback address/,
      [`http://0177.0.0.1:${target.port}/`]: /127\.0\.0\.1 is a loopback address/,
      [`http://[::1]:${target.port}/`]: /::1 is a loopback address/,
      [`http://[::ffff:127.0.0.1]:${target.port}/`]: /::ffff:7f00:1 is a loopback address/,
      // TLS connections take the same path (port 1: were the guard skipped, the error would be ECONNREFUSED).
      'https://localhost:1/': /^refused: localhost resolved to/,
      'https://127.0.0.1:1/': /^refused: 127\.0\.0\.1 is a loopback address/,
    };
    for (const [url, reason] of Object.entries(refused)) {
      const error = await post(url, guarded).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error, url).toBeInstanceOf(OutboundRefusedError);
      expect((error as Error).message, url).toMatch(reason);
    }
    expect(target.connections).toBe(0);
    await guarded.close();
  });

  // Judged by the policy alone: tests never send to an address off this machine, even if the guard broke.
  it('refuses link-local, private, unique-local, CGNAT, unspecified and multicast addresses by default', () => {
    const policy = new OutboundPolicy(loadOutboundConfig({}));
    const refused: Record<string, RegExp> = {
      '169.254.169.254': /169\.254\.169\.254 is a link-local address/,
      'fe80::1': /fe80::1 is a link-local address/,
      '10.0.0.1': /10\.0\.0\.1 is a private address/,
      '172.16.5.4': /is a private address/,
      '192.168.1.1': /is a private address/,
      '100.64.0.1': /carrier-grade NAT/,
      'fd00::1': /fd00::1 is a unique-local address/,
      '0.0.0.0': /unspecified/,
      '::': /unspecified/,
      '224.0.0.1': /multicast/,
      '64:ff9b::a9fe:a9fe': /64:ff9b::a9fe:a9fe is a link-local address/,
    };
    for (const [address, reason] of Object.entries(refused)) {
      const refusal = policy.refusal(address, address);
      expect(refusal, address).toBeInstanceOf(OutboundRefusedError);
      expect(refusal?.message, address).toMatch(reason);
    }
    expect(policy.refusal('93.184.216.34', '93.184.216.34')).toBeUndefined();
  });

  it('connects to what OUTBOUND_ALLOW allows (addresses, ranges, host names) and nothing else', async () => {
    const target = await serve('127.0.0.1');
    const byAddress = dispatcher('127.0.0.1');
    expect(await post(`http://127.0.0.1:${target.port}/`, byAddress)).toBe(204);
    expect(await post(`http://0x7f000001:${target.port}/`, byAddress)).toBe(204);
    await expect(post(`http://[::1]:${target.port}/`, byAddress)).rejects.toThrow(OutboundRefusedError);
    await expect(post(`http://127.0.0.2:${target.port}/`, byAddress)).rejects.toThrow(
      /127\.0\.0\.2 is a loopback address/,
    );
    const byRange = dispatcher('10.0.0.0/8, 127.0.0.0/30');
    expect(await post(`http://127.0.0.1:${target.port}/`, byRange)).toBe(204);
    const byName = dispatcher('*.hooks.test', {
      resolve: resolverOf({ 'a.hooks.test': [['127.0.0.1']], 'hooks.test': [['127.0.0.1']] }),
    });
    expect(await post(`http://a.hooks.test:${target.port}/`, byName)).toBe(204);
    await expect(post(`http://hooks.test:${target.port}/`, byName)).rejects.toThrow(
      /hooks\.test resolved to 127\.0\.0\.1/,
    );
    expect(target.requests).toBe(4);
    await Promise.all([byAddress.close(), byRange.close(), byName.close()]);
  });

  it('refuses a name that resolves to a blocked address, and checks again on every connection (DNS rebinding)', async () => {
    const target = await serve('127.0.0.1');
    const guarded = dispatcher('127.0.0.1', {
      resolve: resolverOf({ 'rebind.test': [['127.0.0.1'], ['127.0.0.2']], 'inside.test': [['127.0.0.3']] }),
    });
    await expect(post(`http://inside.test:${target.port}/`, guarded)).rejects.toThrow(
      'refused: inside.test resolved to 127.0.0.3, a loopback address; allow it with OUTBOUND_ALLOW',
    );
    // The server closes each connection, so the second request connects (and resolves) anew.
    expect(await post(`http://rebind.test:${target.port}/`, guarded)).toBe(204);
    await expect(post(`http://rebind.test:${target.port}/`, guarded)).rejects.toThrow(
      /rebind\.test resolved to 127\.0\.0\.2/,
    );
    expect(target.requests).toBe(1);
    await guarded.close();
  });

  it('connects only to the permitted addresses of a name that resolves to both kinds', async () => {
    const target = await serve('127.0.0.1');
    const guarded = dispatcher('127.0.0.1', {
      resolve: resolverOf({ 'mixed.test': [['127.0.0.2', '::1', '127.0.0.1']] }),
    });
    expect(await post(`http://mixed.test:${target.port}/`, guarded)).toBe(204);
    await guarded.close();
  });

  it('checks every redirect hop: an allowed receiver cannot redirect the call to a blocked address', async () => {
    const blocked = await serve('127.0.0.2');
    const allowed = await serve('127.0.0.1', () => `http://127.0.0.2:${blocked.port}/`);
    const guarded = dispatcher('127.0.0.1', { maxRedirections: 3 });
    await expect(post(`http://127.0.0.1:${allowed.port}/`, guarded)).rejects.toThrow(
      /refused: 127\.0\.0\.2 is a loopback address/,
    );
    expect(allowed.requests).toBe(1);
    expect(blocked.connections).toBe(0);
    await guarded.close();
  });
});

describe('OUTBOUND_ALLOW', () => {
  it('reads addresses, ranges and host names', () => {
    expect(
      loadOutboundConfig({
        OUTBOUND_ALLOW: ' 127.0.0.1, [::1], 10.1.0.0/16,fd00::/8, Hooks.Internal, *.corp.example,',
      }),
    ).toEqual({
      allowRanges: ['127.0.0.1/32', '::1/128', '10.1.0.0/16', 'fd00::/8'],
      allowHosts: ['hooks.internal', '*.corp.example'],
    });
    expect(loadOutboundConfig({})).toEqual({ allowRanges: [], allowHosts: [] });
  });

  it('rejects a bad entry at start with a ConfigError naming the variable and the entry', () => {
    const bad: Record<string, RegExp> = {
      '10.0.0.0/33':
        /OUTBOUND_ALLOW entry "10\.0\.0\.0\/33" is not valid: the prefix length of an IPv4 range is 0 to 32/,
      '::1/129': /"::1\/129".*IPv6 range is 0 to 128/,
      '10.0.0.0/x': /"10\.0\.0\.0\/x"/,
      'hooks.test/24': /"hooks\.test\/24".*use IP addresses, ranges such as 10\.1\.0\.0\/16, or host names/,
      'http://hooks.test': /"http:\/\/hooks\.test".*host names such as hooks\.internal/,
      'bad_name.test': /"bad_name\.test"/,
      '0x7f000001': /"0x7f000001".*dotted/,
    };
    for (const [entry, message] of Object.entries(bad)) {
      const load = () => loadServiceConfig({ OUTBOUND_ALLOW: `127.0.0.1,${entry}` });
      expect(load, entry).toThrow(ConfigError);
      expect(load, entry).toThrow(message);
    }
  });

  it('stops `outpost serve` with exit 2 and one line naming the entry', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'outpost-outbound-'));
    const bin = path.resolve(import.meta.dirname, '../../bin/outpost');
    const env = {
      PATH: process.env.PATH ?? '',
      DATA_DIR: dataDir,
      PORT: '0',
      OUTBOUND_ALLOW: '127.0.0.1, 10.0.0.0/33',
    };
    // Were the entry accepted, the service would run until the timeout kills it.
    const result = await promisify(execFile)(bin, ['serve'], { env, timeout: 20_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    rmSync(dataDir, { recursive: true, force: true });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^outpost: OUTBOUND_ALLOW entry "10\.0\.0\.0\/33" is not valid/),
    ]);
  });
});
