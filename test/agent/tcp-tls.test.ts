/**
 * TCP checks over TLS (`request.tls`): Debian's nginx on loopback serving certificates this file makes
 * with openssl (ssl-fixtures.ts: a test CA trusted here through tls.setDefaultCACertificates, a leaf it
 * signs, one for another host, a self-signed one), spoken to as raw TCP over TLS; and a node:tls echo
 * server that records what reached it, to show that nothing is sent over a connection that failed
 * verification.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tcpCheckRunner } from '../../src/agent/checks/tcp.ts';
import type { TcpAssertion, TcpCheckDefinition, TcpCheckResult, TcpRequest } from '../../src/shared/checks/types.ts';
import { context } from './api-fixtures.ts';
import { CA_NAME, makeCa, makeLeaf, makeSelfSignedLeaf, startTlsNginx, type TlsNginx } from './ssl-fixtures.ts';
import { type NetServer, startNetServer, tcpCheck } from './tcp-servers.ts';

let dir: string;
let nginx: TlsNginx;
let echo: { port: number; received: string[]; close(): Promise<void> };
let silent: NetServer;
let plain: NetServer;
const defaultCas = tls.getCACertificates('default');

/** A node:tls server with a self-signed certificate that echoes, keeping what each connection sent. */
async function startTlsEcho(cert: string, key: string) {
  const received: string[] = [];
  const server = tls.createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (socket) => {
    const i = received.push('') - 1;
    socket.on('data', (chunk: Buffer) => {
      received[i] += chunk.toString('utf8');
      socket.write(chunk);
    });
    socket.on('error', () => {});
  });
  // A client that gives up on the certificate aborts the handshake: not this server's concern.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'outpost-tcp-tls-'));
  const ca = makeCa(dir);
  tls.setDefaultCACertificates([...defaultCas, ca.pem]);
  const self = makeSelfSignedLeaf(dir, 'self', 'echo.test');
  nginx = await startTlsNginx({
    valid: { files: makeLeaf(dir, 'valid', 'tcp.test', 90) },
    wrongHost: { files: makeLeaf(dir, 'other', 'other.test', 90) },
    expired: { files: makeLeaf(dir, 'expired', 'tcp.test', -1) },
    selfSigned: { files: makeSelfSignedLeaf(dir, 'nginx-self', 'tcp.test') },
  });
  echo = await startTlsEcho(self.cert, self.key);
  silent = await startNetServer(() => {});
  plain = await startNetServer((socket) => socket.end('220 plain text banner\r\n'));
});

afterAll(async () => {
  tls.setDefaultCACertificates(defaultCas);
  await Promise.all([nginx?.stop(), echo?.close(), silent?.close(), plain?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const contains = (target: string): TcpAssertion => ({
  source: 'RESPONSE_DATA',
  comparison: 'CONTAINS',
  property: '',
  target,
  regex: null,
});
const HTTP_GET = 'GET / HTTP/1.0\r\nHost: tcp.test\r\n\r\n';

async function run(
  request: Partial<TcpRequest> & Pick<TcpRequest, 'port'>,
  extra: Partial<TcpCheckDefinition> = {},
  timeoutMs = 10_000,
) {
  const outcome = await tcpCheckRunner.run(tcpCheck({ tls: true, ...request }, extra), context({ timeoutMs }));
  return { outcome, result: outcome.details?.tcpCheckResult as TcpCheckResult };
}

describe('TCP checks over TLS against nginx', () => {
  it('shakes hands, sends and reads over TLS, and reports version, cipher and certificate', async () => {
    const { outcome, result } = await run({
      port: nginx.ports.valid as number,
      tlsServerName: 'tcp.test',
      data: HTTP_GET,
      assertions: [contains('HTTP/1.1 200'), contains('valid')],
    });
    expect(result.requestError).toBeNull();
    expect(outcome.hasFailures).toBe(false);
    expect(result.assertions.every((a) => a.passed)).toBe(true);
    expect(result.request).toMatchObject({ tls: true, tlsServerName: 'tcp.test', skipSSL: false });
    expect(result.tls).toMatchObject({
      protocol: 'TLSv1.3',
      cipher: expect.stringMatching(/^TLS_/),
      serverName: 'tcp.test',
      chainTrusted: true,
      chainTrustReason: null,
      hostnameVerified: true,
      certificate: { subjectCN: 'tcp.test', issuerCN: CA_NAME, sans: ['tcp.test'], selfSigned: false },
    });
    expect(result.tls?.certificate?.daysUntilExpiry).toBeGreaterThanOrEqual(88);
    expect(result.tls?.handshakeTimeMs).toBeGreaterThan(0);
    // The TLS phase is timed apart from connect and data (the total also holds the agent's set-up).
    const t = result.response?.timingPhases;
    expect(t?.tls).toBeGreaterThan(0);
    expect((t?.dns ?? 0) + (t?.connect ?? 0) + (t?.tls ?? 0) + (t?.data ?? 0)).toBeLessThanOrEqual(
      (t?.total ?? 0) + 0.01,
    );
  });

  it('fails on a self-signed certificate, with the certificate in the result and no answer read', async () => {
    const { outcome, result } = await run({
      port: nginx.ports.selfSigned as number,
      tlsServerName: 'tcp.test',
      data: HTTP_GET,
      assertions: [contains('200')],
    });
    expect(outcome.hasFailures).toBe(true);
    expect(result.requestError).toMatch(/^TLS error: .*self[- ]signed.*\(DEPTH_ZERO_SELF_SIGNED_CERT\)$/i);
    expect(result.response).toBeNull();
    expect(result.tls).toMatchObject({
      chainTrusted: false,
      chainTrustReason: 'DEPTH_ZERO_SELF_SIGNED_CERT',
      certificate: { subjectCN: 'tcp.test', selfSigned: true },
    });
  });

  it('passes a self-signed certificate when skipSSL turns verification off, still reporting it', async () => {
    const { outcome, result } = await run({
      port: nginx.ports.selfSigned as number,
      tlsServerName: 'tcp.test',
      skipSSL: true,
      data: HTTP_GET,
      assertions: [contains('selfSigned')],
    });
    expect(result.requestError).toBeNull();
    expect(outcome.hasFailures).toBe(false);
    expect(result.tls).toMatchObject({ chainTrusted: false, chainTrustReason: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
  });

  it('fails on a certificate for another host, naming the host; skipSSL lets it pass', async () => {
    const port = nginx.ports.wrongHost as number;
    const failed = await run({ port, tlsServerName: 'tcp.test', data: HTTP_GET });
    expect(failed.outcome.hasFailures).toBe(true);
    expect(failed.result.requestError).toMatch(/^TLS error: certificate does not match the host name "tcp.test": /);
    expect(failed.result.tls).toMatchObject({
      chainTrusted: true,
      hostnameVerified: false,
      certificate: { subjectCN: 'other.test' },
    });
    const skipped = await run({
      port,
      tlsServerName: 'tcp.test',
      skipSSL: true,
      data: HTTP_GET,
      assertions: [contains('wrongHost')],
    });
    expect(skipped.outcome.hasFailures).toBe(false);
  });

  it('fails on an expired certificate, showing the days since it expired', async () => {
    const { outcome, result } = await run({
      port: nginx.ports.expired as number,
      tlsServerName: 'tcp.test',
      data: HTTP_GET,
    });
    expect(outcome.hasFailures).toBe(true);
    expect(result.requestError).toBe('TLS error: certificate has expired (CERT_HAS_EXPIRED)');
    expect(result.tls?.certificate?.daysUntilExpiry).toBeLessThan(0);
  });

  it('checks the certificate against the hostname when no tlsServerName is given', async () => {
    const { result } = await run({ port: nginx.ports.valid as number, data: HTTP_GET });
    // 127.0.0.1 is not in the certificate (no SNI is sent for an address).
    expect(result.tls).toMatchObject({ serverName: '127.0.0.1', hostnameVerified: false });
    expect(result.requestError).toMatch(/does not match the host name "127.0.0.1"/);
  });
});

describe('TCP checks over TLS against other servers', () => {
  it('echoes over TLS with a self-signed certificate when verification is off', async () => {
    const { outcome, result } = await run({
      port: echo.port,
      tlsServerName: 'echo.test',
      skipSSL: true,
      data: 'ping over tls\n',
      assertions: [contains('ping over tls')],
    });
    expect(outcome.hasFailures).toBe(false);
    expect(result.response?.data).toBe('ping over tls\n');
    expect(result.tls?.certificate).toMatchObject({ subjectCN: 'echo.test', selfSigned: true });
    expect(echo.received.at(-1)).toBe('ping over tls\n');
  });

  it('sends nothing over a connection whose certificate failed verification', async () => {
    const before = echo.received.length;
    const { outcome } = await run({ port: echo.port, tlsServerName: 'echo.test', data: 'secret\n' });
    expect(outcome.hasFailures).toBe(true);
    expect(echo.received.slice(before).join('')).toBe('');
  });

  it('fails with a TLS error on a server that does not speak TLS', async () => {
    const { outcome, result } = await run({ port: plain.port, data: 'x' });
    expect(outcome.hasFailures).toBe(true);
    expect(result.requestError).toMatch(/^TLS error: .*the server does not seem to speak TLS on this port/);
    expect(result.tls).toBeNull();
    expect(result.response).toBeNull();
  });

  it('times out in the TLS phase on a server that never answers the handshake', async () => {
    const { outcome, result } = await run({ port: silent.port }, { maxResponseTime: 0 }, 400);
    expect(outcome.hasFailures).toBe(true);
    expect(result.requestError).toMatch(/^Timed out after 400 ms while .*TLS/i);
    expect(outcome.details?.timingPhases).toMatchObject({ tls: expect.any(Number) });
  });

  it('leaves a plain TCP check as it was: no tls in the request or the result', async () => {
    const outcome = await tcpCheckRunner.run(tcpCheck({ port: plain.port, assertions: [contains('220')] }), context());
    const result = outcome.details?.tcpCheckResult as TcpCheckResult;
    expect(outcome.hasFailures).toBe(false);
    expect(result).not.toHaveProperty('tls');
    expect(result.request).not.toHaveProperty('tls');
    expect(result.response?.timingPhases).not.toHaveProperty('tls');
  });
});
