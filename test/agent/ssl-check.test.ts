/**
 * The SSL monitor runner against Debian's nginx on loopback, serving certificates this test makes
 * with openssl: one signed by a test CA (trusted here through tls.setDefaultCACertificates, as
 * NODE_EXTRA_CA_CERTS would on an agent), one that expires in 5 days, one that expired, one for
 * another host, one self-signed, and the valid one again behind TLS 1.2 only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sslCheckRunner } from '../../src/agent/checks/ssl.ts';
import type { SslAssertion, SslCheckResult } from '../../src/shared/checks/monitors.ts';
import { context } from './api-fixtures.ts';
import { freePort } from './dns-server.ts';
import { startNetServer } from './tcp-servers.ts';
import {
  CA_NAME,
  makeCa,
  makeLeaf,
  makeSelfSignedLeaf,
  sslCheck,
  startTlsNginx,
  type TlsNginx,
} from './ssl-fixtures.ts';

let dir: string;
let nginx: TlsNginx;
const defaultCas = tls.getCACertificates('default');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'outpost-ssl-certs-'));
  const ca = makeCa(dir);
  tls.setDefaultCACertificates([...defaultCas, ca.pem]);
  const valid = makeLeaf(dir, 'valid', 'valid.test', 90);
  nginx = await startTlsNginx({
    valid: { files: valid },
    soon: { files: makeLeaf(dir, 'soon', 'soon.test', 5) },
    expired: { files: makeLeaf(dir, 'expired', 'expired.test', -1) },
    wrongHost: { files: makeLeaf(dir, 'other', 'other.test', 90) },
    selfSigned: { files: makeSelfSignedLeaf(dir, 'self', 'valid.test') },
    tls12: { files: valid, protocols: 'TLSv1.2' },
  });
});

afterAll(async () => {
  tls.setDefaultCACertificates(defaultCas);
  await nginx?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const assertion = (
  source: SslAssertion['source'],
  property: string,
  comparison: SslAssertion['comparison'],
  target: string,
): SslAssertion => ({ source, property, comparison, target, regex: null });

/** The check's own `assertions`, for run's `over`. */
const asserting = (...assertions: SslAssertion[]) => ({ request: { assertions } }) as never;

async function run(
  name: string,
  serverName: string,
  over: Parameters<typeof sslCheck>[1] = {},
  config: Parameters<typeof sslCheck>[0] | object = {},
) {
  const outcome = await sslCheckRunner.run(
    sslCheck({ port: nginx.ports[name] as number, serverName, ...config }, over),
    context(),
  );
  return { outcome, result: outcome.details?.sslCheckResult as SslCheckResult };
}

describe('SSL monitors against nginx', () => {
  it('passes on a certificate the trusted CA signed, reporting the chain, expiry, protocol and cipher', async () => {
    const { outcome, result } = await run(
      'valid',
      'valid.test',
      asserting(
        assertion('CERTIFICATE', 'daysUntilExpiry', 'GREATER_THAN', '80'),
        assertion('CERTIFICATE', 'issuerCN', 'EQUALS', CA_NAME),
        assertion('CERTIFICATE', 'sans', 'CONTAINS', 'valid.test'),
        assertion('CONNECTION', 'tlsVersion', 'GREATER_THAN', 'TLS1.2'),
        assertion('JSON_RESPONSE', '$.chain[1].subjectCN', 'EQUALS', CA_NAME),
      ),
    );
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false, isDegraded: false, error: null });
    expect(result).toMatchObject({
      tlsVersion: 'TLS1.3',
      daysUntilExpiry: 89,
      chainTrusted: true,
      hostnameVerified: true,
      baselineVerdict: 'pass',
      baselineGrade: 'A-',
      failureCategory: null,
      requestError: null,
    });
    expect(result.cipherSuite).toMatch(/^TLS_/);
    expect(result.response?.certificate).toMatchObject({
      subjectCN: 'valid.test',
      issuerCN: CA_NAME,
      keyAlgorithm: 'ECDSA',
      selfSigned: false,
      isCA: false,
    });
    expect(result.response?.chain.map((c) => c.subjectCN)).toEqual(['valid.test', CA_NAME]);
    expect(result.response?.resolvedIp).toBe('127.0.0.1');
    expect(result.assertions.map((a) => a.passed)).toEqual([true, true, true, true, true]);
    expect(outcome.responseTime).toBe(result.handshakeTimeMs);
    expect(result.response?.securityBaseline?.rules.map((r) => [r.rule, r.passed])).toEqual([
      ['minTLSVersion', true],
      ['minKeySizeBits', true],
      ['weakSignatureAlgorithm', true],
      ['weakCipherSuite', true],
      ['recommendedTLSVersion', true],
      ['recommendedKeySizeBits', true],
    ]);
  });

  it('is degraded when the certificate expires within alertDaysBeforeExpiry, and passes with a smaller window', async () => {
    const daysLeft = assertion('CERTIFICATE', 'daysUntilExpiry', 'LESS_THAN', '7');
    const soon = await run('soon', 'soon.test', asserting(daysLeft));
    expect(soon.outcome).toMatchObject({ hasFailures: false, isDegraded: true });
    expect(soon.result).toMatchObject({
      daysUntilExpiry: 4,
      chainTrusted: true,
      hostnameVerified: true,
      failureCategory: null,
    });
    expect(soon.result.assertions[0]).toMatchObject({ passed: true, actual: 4 });
    const relaxed = await run('soon', 'soon.test', {}, { alertDaysBeforeExpiry: 3 });
    expect(relaxed.outcome).toMatchObject({ hasFailures: false, isDegraded: false });
  });

  it('fails on an expired certificate, with the negative days left', async () => {
    const { outcome, result } = await run('expired', 'expired.test');
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error).toMatch(/^Certificate expired at \d{4}-\d\d-\d\dT[\d:.]+Z \(daysUntilExpiry -\d+\)$/);
    expect(result.daysUntilExpiry).toBeLessThan(0);
    expect(result).toMatchObject({
      failureCategory: 'expired',
      chainTrusted: false,
      hostnameVerified: true,
      baselineVerdict: null,
    });
    expect(result.response?.chainTrustReason).toBe('CERT_HAS_EXPIRED');
  });

  it('fails on a certificate for another host, and reports the chain as trusted', async () => {
    const { outcome, result } = await run('wrongHost', 'valid.test');
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error).toMatch(/^Certificate does not match the host name "valid.test"/);
    expect(result).toMatchObject({
      failureCategory: 'hostname',
      hostnameVerified: false,
      chainTrusted: true,
      daysUntilExpiry: 89,
    });
    expect(result.response?.certificate?.subjectCN).toBe('other.test');
  });

  it('fails on a self-signed certificate unless skipChainValidation, and reports it either way', async () => {
    const strict = await run('selfSigned', 'valid.test');
    expect(strict.outcome.hasFailures).toBe(true);
    expect(strict.outcome.error).toBe(
      'Certificate chain is not trusted: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)',
    );
    expect(strict.result).toMatchObject({ failureCategory: 'chain', chainTrusted: false, hostnameVerified: true });
    expect(strict.result.response?.certificate).toMatchObject({ selfSigned: true });

    const lenient = await run('selfSigned', 'valid.test', {}, { skipChainValidation: true });
    expect(lenient.outcome).toMatchObject({ hasFailures: false, isDegraded: false });
    expect(lenient.result).toMatchObject({
      chainTrusted: false,
      hostnameVerified: true,
      failureCategory: null,
      baselineVerdict: 'pass',
    });
  });

  it('judges the negotiated version by the security baseline and by a tlsVersion assertion', async () => {
    const base = sslCheck({ port: 0 }).request.sslConfig.securityBaseline;
    const degrade = { securityBaseline: { ...base, minTLSVersion: { value: 'TLS1.3', severity: 'degrade' } } };
    const degraded = await run('tls12', 'valid.test', {}, degrade);
    expect(degraded.outcome).toMatchObject({ hasFailures: false, isDegraded: true });
    expect(degraded.result).toMatchObject({ tlsVersion: 'TLS1.2', baselineVerdict: 'warn', baselineGrade: 'B' });

    const fail = { securityBaseline: { ...base, minTLSVersion: { value: 'TLS1.3', severity: 'fail' } } };
    const failed = await run('tls12', 'valid.test', {}, fail);
    expect(failed.outcome.error).toMatch(
      /^Security baseline failed: minTLSVersion \(negotiated TLS1.2, minimum TLS1.3\)/,
    );
    expect(failed.result).toMatchObject({ baselineVerdict: 'fail', baselineGrade: 'F', failureCategory: 'baseline' });

    const version = assertion('CONNECTION', 'tlsVersion', 'LESS_THAN', 'TLS1.3');
    const asserted = await run('tls12', 'valid.test', asserting(version));
    expect(asserted.result.assertions[0]).toMatchObject({ passed: true, actual: 'TLS1.2', target: 'TLS1.3' });
  });

  it('fails a CERTIFICATE assertion with its words, and a refused connection as category connect', async () => {
    const pinned = assertion('CERTIFICATE', 'issuerCN', 'EQUALS', 'Some Other CA');
    const mismatch = await run('valid', 'valid.test', asserting(pinned));
    expect(mismatch.outcome.error).toBe(
      `Assertion failed: CERTIFICATE issuerCN EQUALS "Some Other CA" (actual: "${CA_NAME}")`,
    );
    expect(mismatch.result.failureCategory).toBe('assertion');

    const closed = await sslCheckRunner.run(sslCheck({ port: await freePort() }), context());
    expect(closed.hasFailures).toBe(true);
    expect(closed.error).toMatch(/^Connection refused/);
    expect(closed.details?.sslCheckResult).toMatchObject({ failureCategory: 'connect', response: null });
  });

  it('stops a handshake the server never answers at handshakeTimeoutMs, as category timeout', async () => {
    // Accepts the connection and never speaks TLS.
    const silent = await startNetServer(() => {});
    try {
      const outcome = await sslCheckRunner.run(sslCheck({ port: silent.port, handshakeTimeoutMs: 1000 }), context());
      expect(outcome.error).toBe('TLS handshake did not complete within 1000 ms (handshakeTimeoutMs)');
      expect(outcome.details?.sslCheckResult).toMatchObject({ failureCategory: 'timeout', response: null });
      expect(outcome.responseTime).toBeGreaterThanOrEqual(1000);
    } finally {
      await silent.close();
    }
  });
});
