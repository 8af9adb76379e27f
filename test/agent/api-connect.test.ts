/** The agent's own DNS + connect step (api/connect.ts): family order and fallback between addresses. */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConnectorOptions, connectOnce, orderByFamily, resolveHost } from '../../src/agent/checks/api/connect.ts';
import { newHop } from '../../src/agent/checks/api/timings.ts';
import { startServer, type TestServer } from './api-fixtures.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.close();
});

function options(over: Partial<ConnectorOptions> = {}): ConnectorOptions & { seen: string[] } {
  const seen: string[] = [];
  return {
    ipFamily: 'IPv4',
    useOsDnsResolver: false,
    skipSSL: false,
    signal: new AbortController().signal,
    hop: newHop(),
    onPhase: () => {},
    onAddress: (a) => seen.push(a.address),
    onTls: () => {},
    seen,
    ...over,
  };
}

/** The error code of a TCP connect to `host`, or 'connected'. */
function connectCode(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

describe('address order', () => {
  const list = [
    { address: '192.0.2.1', family: 4 as const },
    { address: '2001:db8::1', family: 6 as const },
    { address: '192.0.2.2', family: 4 as const },
  ];
  it('puts the preferred family first and keeps the order inside a family', () => {
    expect(orderByFamily(list, 6).map((a) => a.address)).toEqual(['2001:db8::1', '192.0.2.1', '192.0.2.2']);
    expect(orderByFamily(list, 4).map((a) => a.address)).toEqual(['192.0.2.1', '192.0.2.2', '2001:db8::1']);
  });

  it('IP literals are not resolved', async () => {
    const signal = new AbortController().signal;
    expect(await resolveHost('::1', 4, false, signal)).toEqual({
      addresses: [{ address: '::1', family: 6 }],
      via: 'literal',
    });
    expect(await resolveHost('127.0.0.1', 6, true, signal)).toEqual({
      addresses: [{ address: '127.0.0.1', family: 4 }],
      via: 'literal',
    });
  });
});

describe('fallback between addresses', async () => {
  // 255.255.255.255 cannot be connected to; Linux says ENETUNREACH (some systems EACCES).
  const code = await connectCode('255.255.255.255', 9);
  const reachableFails = code === 'ENETUNREACH' || code === 'EHOSTUNREACH';
  const title = reachableFails
    ? 'an unreachable address is skipped for the next one (of the other family, after the preferred)'
    : `skipped: connecting to 255.255.255.255 gives ${code} here, not an unreachable error`;
  it.skipIf(!reachableFails)(title, async () => {
    const o = options({
      ipFamily: 'IPv6',
      resolve: async () => ({
        addresses: [
          { address: '255.255.255.255', family: 6 }, // stands in for an unreachable IPv6 address
          { address: '127.0.0.1', family: 4 },
        ],
        via: 'resolver',
      }),
    });
    const socket = await connectOnce('dual.example', server.port, false, o);
    expect(socket.remoteAddress).toBe('127.0.0.1');
    socket.destroy();
    expect(o.seen).toEqual(['255.255.255.255', '127.0.0.1']);
  });

  it('a refused connection is an answer: no fallback to the other family', async () => {
    const o = options({
      resolve: async () => ({
        addresses: [
          { address: '127.0.0.1', family: 4 },
          { address: '::1', family: 6 },
        ],
        via: 'resolver',
      }),
    });
    await expect(connectOnce('dual.example', 1, false, o)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(o.seen).toEqual(['127.0.0.1']);
  });

  it('no address at all is a DNS failure', async () => {
    const o = options({ resolve: async () => ({ addresses: [], via: 'resolver' }) });
    await expect(connectOnce('empty.example', 80, false, o)).rejects.toMatchObject({ code: 'NO_ADDRESS' });
  });
});
