/**
 * A check's own TLS material on the agent (docs/api.md "Client certificates"): real HTTPS servers on
 * loopback whose certificates a private test CA signs, one asking for a client certificate
 * (requestCert, rejectUnauthorized). The API engine (and the URL and SSL monitors built on it)
 * reaches it only with the right client certificate, and trusts the private CA only for a check that
 * carries it in its bundle.
 */
import { once } from 'node:events';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import { sslCheckRunner } from '../../src/agent/checks/ssl.ts';
import { urlCheckRunner } from '../../src/agent/checks/url.ts';
import { scrubberForCheck } from '../../src/agent/scrub/index.ts';
import type { CheckTlsMaterial } from '../../src/shared/checks/types.ts';
import { urlCheck } from '../support/url-check.ts';
import { makePki, type Pki } from '../support/mtls-pki.ts';
import { apiCheck, context } from './api-fixtures.ts';
import { sslCheck } from './ssl-fixtures.ts';

let pki: Pki;
const servers: https.Server[] = [];

/** An HTTPS server on loopback answering with the CN of the client certificate it got (or "none"). */
async function serve(options: https.ServerOptions): Promise<number> {
  const server = https.createServer({ key: pki.serverKey, cert: pki.serverCert, ...options }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    res.end(`client=${peer?.subject?.CN ?? 'none'}`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

let mtlsPort: number;
let mtls12Port: number;
let privateCaPort: number;
beforeAll(async () => {
  pki = makePki();
  const mutual = { ca: pki.caCert, requestCert: true, rejectUnauthorized: true };
  mtlsPort = await serve(mutual);
  // TLS 1.2: the client certificate is part of the handshake itself, which an SSL monitor judges.
  mtls12Port = await serve({ ...mutual, maxVersion: 'TLSv1.2' });
  privateCaPort = await serve({});
});
afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

const withCa = (): CheckTlsMaterial => ({ ca: [pki.caCert] });
const withClient = (): CheckTlsMaterial => ({
  ca: [pki.caCert],
  cert: pki.clientCert,
  key: pki.clientKeyEncrypted,
  passphrase: pki.passphrase,
});

describe('API checks with a client certificate (mTLS)', () => {
  it('fail without the certificate and pass with it', async () => {
    const url = `https://localhost:${mtlsPort}/`;
    const without = await apiCheckRunner.run(apiCheck({ url }, { tls: withCa() }), context());
    expect(without.hasFailures).toBe(true);
    expect(without.apiCheckResult?.requestError).toBeTruthy();
    // TLS 1.3 completes the handshake before the server judges the certificate: it then hangs up.
    expect(without.error).toMatch(/Connection closed by the server|certificate required/i);

    const withCert = await apiCheckRunner.run(apiCheck({ url }, { tls: withClient() }), context());
    expect(withCert.error).toBeNull();
    expect(withCert.hasFailures).toBe(false);
    expect(withCert.apiCheckResult?.response?.status).toBe(200);
    expect(withCert.apiCheckResult?.response?.body).toBe('client=outpost-client');
  });

  it('a key that does not belong to the certificate fails the run (its socket closed), not the agent', async () => {
    const url = `https://localhost:${mtlsPort}/`;
    const r = await apiCheckRunner.run(
      apiCheck({ url }, { tls: { ...withClient(), key: pki.strayKey, passphrase: null } }),
      context(),
    );
    expect(r.hasFailures).toBe(true);
    expect(r.apiCheckResult?.requestError).toBeTruthy();
    expect(r.error).toBe('TLS error: key values mismatch (ERR_OSSL_X509_KEY_VALUES_MISMATCH)');
  });

  it('the key and passphrase are among the secrets scrubbed from what the agent sends', () => {
    const scrubber = scrubberForCheck({ tls: withClient() });
    const text = scrubber.scrubText(`key ${pki.clientKeyEncrypted} pass ${pki.passphrase}`);
    expect(text).not.toContain(pki.passphrase);
    expect(text).not.toContain('ENCRYPTED PRIVATE KEY');
  });
});

describe('URL monitors with a client certificate', () => {
  it('carry it to the API engine they run on', async () => {
    const url = `https://localhost:${mtlsPort}/`;
    const monitor = (tls: CheckTlsMaterial) =>
      urlCheckRunner.run(urlCheck({ url }, { degradedResponseTime: 5000, maxResponseTime: 10000, tls }), context());
    expect((await monitor(withCa())).hasFailures).toBe(true);
    const withCert = await monitor(withClient());
    expect(withCert.error).toBeNull();
    expect(withCert.apiCheckResult?.response?.status).toBe(200);
  });
});

describe("a check's own CA bundle", () => {
  it('trusts a private CA for that check only', async () => {
    const url = `https://localhost:${privateCaPort}/`;
    const without = await apiCheckRunner.run(apiCheck({ url }), context());
    expect(without.hasFailures).toBe(true);
    expect(without.error).toMatch(/^TLS error: /);

    const withBundle = await apiCheckRunner.run(apiCheck({ url }, { tls: withCa() }), context());
    expect(withBundle.error).toBeNull();
    expect(withBundle.hasFailures).toBe(false);
    expect(withBundle.apiCheckResult?.response?.tls).toMatchObject({
      authorized: true,
      issuerCN: 'Outpost mTLS Test CA',
    });

    // The bundle adds to the default roots and stays with its check: the next check without it fails again.
    const again = await apiCheckRunner.run(apiCheck({ url }), context());
    expect(again.hasFailures).toBe(true);
  });
});

describe('SSL monitors with a client certificate and a CA bundle', () => {
  const monitor = (port: number, tls?: CheckTlsMaterial) =>
    sslCheckRunner.run(sslCheck({ port, hostname: 'localhost' }, tls ? { tls } : {}), context());

  it('trust the private CA only with the bundle', async () => {
    const without = await monitor(privateCaPort);
    expect(without.hasFailures).toBe(true);
    const withBundle = await monitor(privateCaPort, withCa());
    expect(withBundle.error).toBeNull();
    expect(withBundle.details?.['sslCheckResult']).toMatchObject({ chainTrusted: true });
  });

  it('complete a handshake that requires a client certificate only with it', async () => {
    const without = await monitor(mtls12Port, withCa());
    expect(without.hasFailures).toBe(true);
    const withCert = await monitor(mtls12Port, withClient());
    expect(withCert.error).toBeNull();
    expect(withCert.hasFailures).toBe(false);
  });
});
