/**
 * The Outpost extensions of TCP and DNS checks end to end: created through the public API of a real
 * service, run by a real agent process, results read back. A node:tls echo server with a self-signed
 * certificate (the agent process does not trust it) serves TCP over TLS: with skipSSL the exchange
 * passes and the certificate is in the result, without it the run fails on verification. A DNS check
 * with recursion off and DNSSEC OK against dnsmasq shows the switches reaching the agent.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { type DnsmasqServer, startDnsmasq } from '../agent/dns-server.ts';
import { makeSelfSignedLeaf } from '../agent/ssl-fixtures.ts';
import { stackTest } from '../support/e2e-test.ts';

const it = stackTest({ name: 'e2e-tcp-tls', location: 'e2e-tls' });

describe('service and agent run TCP checks over TLS and DNS checks with query switches', () => {
  let certDir: string;
  let echo: tls.Server;
  let echoPort: number;
  let dns: DnsmasqServer;

  beforeAll(async () => {
    certDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-tls-'));
    const files = makeSelfSignedLeaf(certDir, 'echo', 'echo.test');
    echo = tls.createServer({ cert: readFileSync(files.cert), key: readFileSync(files.key) }, (socket) => {
      socket.on('error', () => {});
      socket.pipe(socket);
    });
    echo.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoPort = (echo.address() as { port: number }).port;
    dns = await startDnsmasq([
      'local=/example.test/',
      'auth-zone=example.test',
      'auth-server=ns1.example.test,127.0.0.1',
      'host-record=www.example.test,192.0.2.10',
    ]);
  });

  afterAll(async () => {
    await new Promise((resolve) => (echo ? echo.close(resolve) : resolve(undefined)));
    await dns?.stop();
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  const common = { frequency: 0, frequencyOffset: 10, privateLocations: ['e2e-tls'] };

  it('runs a TCP check over TLS: skipSSL passes with the certificate reported, verification fails it', async ({
    api,
  }) => {
    const request = { hostname: '127.0.0.1', port: echoPort, data: 'hello tls', tls: true, tlsServerName: 'echo.test' };
    const skipped = await api.ok<{ id: string }>('POST', '/v1/checks/tcp', {
      ...common,
      name: 'tls echo, skipSSL',
      request: {
        ...request,
        skipSSL: true,
        assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: 'hello tls' }],
      },
    });
    const verified = await api.ok<{ id: string }>('POST', '/v1/checks/tcp', {
      ...common,
      name: 'tls echo, verified',
      request,
    });
    const ok = await api.firstResult(skipped.id);
    expect(ok).toMatchObject({ hasFailures: false, hasErrors: false, error: null });
    expect(ok?.tcpCheckResult).toMatchObject({
      response: { data: 'hello tls' },
      tls: { serverName: 'echo.test', chainTrusted: false, certificate: { subjectCN: 'echo.test', selfSigned: true } },
    });
    const failed = await api.firstResult(verified.id);
    expect(failed).toMatchObject({ hasFailures: true, hasErrors: false });
    expect(String(failed?.error)).toMatch(/^TLS error: self-signed certificate \(DEPTH_ZERO_SELF_SIGNED_CERT\)$/);
  });

  it('runs a DNS check with recursion off and DNSSEC OK, the switches reaching the server', async ({ api }) => {
    const check = await api.ok<{ id: string }>('POST', '/v1/checks/dns', {
      ...common,
      name: 'www A, switches',
      request: {
        query: 'www.example.test',
        recordType: 'A',
        nameServer: '127.0.0.1',
        port: dns.port,
        recursionDesired: false,
        dnssecOk: true,
      },
    });
    const result = await api.firstResult(check.id);
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false });
    expect(result?.dnsCheckResult).toMatchObject({
      request: { recursionDesired: false, edns: true, dnssecOk: true },
      response: { flags: { recursionDesired: false }, answers: [{ data: '192.0.2.10' }] },
    });
  });
});
