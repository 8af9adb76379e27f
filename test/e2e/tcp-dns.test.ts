/**
 * TCP and DNS checks end to end: created through the public API of a real service, run by a real
 * agent process against a node:net echo server and a dnsmasq on loopback, results read back.
 * Each pair has a check that must pass and one that must fail, so a result that merely arrives is
 * not mistaken for the runner doing its work.
 */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { type DnsmasqServer, freePort, startDnsmasq } from '../agent/dns-server.ts';
import { type NetServer, startNetServer } from '../agent/tcp-servers.ts';
import { stackTest } from '../support/e2e-test.ts';

const it = stackTest({ name: 'e2e-tcp-dns', location: 'e2e-net' });

describe('service and agent run TCP and DNS checks end to end', () => {
  let echo: NetServer;
  let dns: DnsmasqServer;

  beforeAll(async () => {
    echo = await startNetServer((socket) => socket.pipe(socket));
    dns = await startDnsmasq(['local=/example.test/', 'host-record=www.example.test,192.0.2.10']);
  });

  afterAll(async () => {
    await echo?.close();
    await dns?.stop();
  });

  const common = { frequency: 0, frequencyOffset: 10, privateLocations: ['e2e-net'] };

  it('runs TCP checks: an echo that answers as asserted passes, a closed port fails', async ({ api }) => {
    const closedPort = await freePort();
    const up = await api.ok<{ id: string }>('POST', '/v1/checks/tcp', {
      ...common,
      name: 'echo',
      request: {
        hostname: '127.0.0.1',
        port: echo.port,
        data: 'hello e2e',
        assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: 'hello e2e' }],
      },
    });
    const down = await api.ok<{ id: string }>('POST', '/v1/checks/tcp', {
      ...common,
      name: 'closed',
      request: { hostname: '127.0.0.1', port: closedPort },
    });
    const upResult = await api.firstResult(up.id);
    expect(upResult).toMatchObject({
      checkId: up.id,
      name: 'echo',
      hasFailures: false,
      hasErrors: false,
      runLocation: 'e2e-net',
      error: null,
    });
    // What the agent measured reaches the user through the public API.
    expect(upResult?.tcpCheckResult).toBeTypeOf('object');
    expect(JSON.stringify(upResult?.tcpCheckResult)).toContain('hello e2e');
    const downResult = await api.firstResult(down.id);
    expect(downResult).toMatchObject({ checkId: down.id, hasFailures: true, hasErrors: false });
    expect(String(downResult?.error)).toMatch(/refused/i);
  });

  it('runs DNS checks against dnsmasq: the right answer passes, a wrong expectation fails', async ({ api }) => {
    const request = { query: 'www.example.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port };
    const ok = await api.ok<{ id: string }>('POST', '/v1/checks/dns', {
      ...common,
      name: 'www A',
      request: {
        ...request,
        assertions: [
          { source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' },
          { source: 'JSON_ANSWER', comparison: 'EQUALS', property: '$.answers[0].data', target: '192.0.2.10' },
        ],
      },
    });
    const wrong = await api.ok<{ id: string }>('POST', '/v1/checks/dns', {
      ...common,
      name: 'www A wrong',
      request: { ...request, assertions: [{ source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: '198.51.100.1' }] },
    });
    const okResult = await api.firstResult(ok.id);
    expect(okResult).toMatchObject({ checkId: ok.id, hasFailures: false, hasErrors: false });
    expect(JSON.stringify(okResult?.dnsCheckResult)).toContain('192.0.2.10');
    expect(await api.firstResult(wrong.id)).toMatchObject({ checkId: wrong.id, hasFailures: true, hasErrors: false });
  });
});
