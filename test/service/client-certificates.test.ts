/**
 * Client certificates (/v1/client-certificates) and the check properties that use them
 * (request.sslClientCertificateId, request.sslCaBundle): CRUD, 400s naming the field, the key never
 * returned and sealed at rest, tenant isolation, and what a run's job carries.
 */
import { DatabaseSync } from 'node:sqlite';
import path from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import {
  certificatesOncePerBatch,
  clientTlsOf,
  hostMatches,
  openTlsIn,
  pickCertificate,
} from '../../src/service/checks/client-tls.ts';
import { toCheckDefinition } from '../../src/service/checks/definition.ts';
import { isSealed } from '../../src/service/secrets/box.ts';
import { startHarness } from '../helpers/dispatch-harness.ts';
import { json, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { apiTest as it } from '../support/api-test.ts';
import { freshAccountEachTest } from '../support/fresh-account.ts';
import { makePki, type Pki } from '../support/mtls-pki.ts';
import { storeBackends } from '../support/store-backends.ts';

let pki: Pki;
beforeAll(() => {
  pki = makePki();
});

interface CertView {
  id: string;
  host: string;
  cert: string;
  ca: string | null;
  created_at: string;
}

async function addCert(api: TestApi, account: TestAccount, body: Record<string, unknown> = {}): Promise<CertView> {
  const res = await api.request(account, 'POST', '/v1/client-certificates', {
    host: 'localhost',
    cert: pki.clientCert,
    key: pki.clientKey,
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return json<CertView>(res);
}

async function rejected(api: TestApi, account: TestAccount, url: string, body: object): Promise<string> {
  const res = await api.request(account, 'POST', url, body);
  expect(res.statusCode, res.body).toBe(400);
  return json<{ message: string }>(res).message;
}

/** What the store takes for the client certificate of localhost whose key is encrypted with a passphrase. */
const storedCertificateWithPassphrase = () => ({
  host: 'localhost',
  cert: pki.clientCert,
  ca: null,
  key: pki.clientKeyEncrypted,
  passphrase: pki.passphrase,
});

const apiCheck = (request: Record<string, unknown> = {}) => ({
  name: 'mtls',
  request: { method: 'GET', url: 'https://api.acme.test/x', ...request },
});

describe('/v1/client-certificates', () => {
  it('creates, lists, reads and deletes, never showing the key or passphrase', async ({ api, acme }) => {
    const created = await addCert(api, acme, {
      host: '*.acme.test',
      ca: pki.caCert,
      key: pki.clientKeyEncrypted,
      passphrase: pki.passphrase,
    });
    expect(created).toEqual({
      id: expect.any(String),
      host: '*.acme.test',
      cert: pki.clientCert,
      ca: pki.caCert,
      created_at: expect.any(String),
    });
    const list = await api.request(acme, 'GET', '/v1/client-certificates');
    expect(json(list)).toEqual([created]);
    const one = await api.request(acme, 'GET', `/v1/client-certificates/${created.id}`);
    expect(json(one)).toEqual(created);
    for (const res of [list, one]) {
      expect(res.body).not.toContain('PRIVATE KEY');
      expect(res.body).not.toContain(pki.passphrase);
    }
    expect((await api.request(acme, 'DELETE', `/v1/client-certificates/${created.id}`)).statusCode).toBe(204);
    expect((await api.request(acme, 'GET', `/v1/client-certificates/${created.id}`)).statusCode).toBe(404);
    expect(json(await api.request(acme, 'GET', '/v1/client-certificates'))).toEqual([]);
  });

  it('rejects what does not parse or does not pair, naming the field', async ({ api, acme }) => {
    const url = '/v1/client-certificates';
    const base = { host: 'localhost', cert: pki.clientCert, key: pki.clientKey };
    expect(await rejected(api, acme, url, { host: 'localhost', cert: pki.clientCert })).toMatch(/key/);
    expect(await rejected(api, acme, url, { ...base, host: 'https://localhost/' })).toMatch(/^body\/host/);
    expect(await rejected(api, acme, url, { ...base, cert: 'not a pem' })).toMatch(/^body\/cert/);
    expect(
      await rejected(api, acme, url, { ...base, cert: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' }),
    ).toMatch(/^body\/cert/);
    expect(await rejected(api, acme, url, { ...base, key: 'nope' })).toMatch(/^body\/key/);
    expect(await rejected(api, acme, url, { ...base, key: pki.strayKey })).toMatch(
      /^body\/key does not match body\/cert/,
    );
    expect(await rejected(api, acme, url, { ...base, ca: 'garbage' })).toMatch(/^body\/ca/);
    expect(await rejected(api, acme, url, { ...base, key: pki.clientKeyEncrypted })).toMatch(
      /^body\/passphrase is required/,
    );
    expect(await rejected(api, acme, url, { ...base, key: pki.clientKeyEncrypted, passphrase: 'wrong one' })).toMatch(
      /^body\/passphrase/,
    );
    expect(json(await api.request(acme, 'GET', url))).toEqual([]);
  });

  it("never shows, deletes or lets a check use another account's certificate", async ({ api, acme, other }) => {
    const mine = await addCert(api, acme);
    expect(json(await api.request(other, 'GET', '/v1/client-certificates'))).toEqual([]);
    expect((await api.request(other, 'GET', `/v1/client-certificates/${mine.id}`)).statusCode).toBe(404);
    expect((await api.request(other, 'DELETE', `/v1/client-certificates/${mine.id}`)).statusCode).toBe(404);
    const message = await rejected(api, other, '/v1/checks/api', apiCheck({ sslClientCertificateId: mine.id }));
    expect(message).toBe(
      `body/request/sslClientCertificateId: no client certificate with id "${mine.id}" in this account`,
    );
    expect((await api.request(acme, 'GET', `/v1/client-certificates/${mine.id}`)).statusCode).toBe(200);
  });

  it('stores the key and passphrase sealed: neither is in the row or the database file in clear', async ({
    api,
    acme,
  }) => {
    const created = await addCert(api, acme, { key: pki.clientKeyEncrypted, passphrase: pki.passphrase });
    const db = new DatabaseSync(path.join(api.dataDir, 'outpost.db'), { readOnly: true });
    try {
      const row = db.prepare('SELECT * FROM client_certificates WHERE id = ?').get(created.id) as Record<
        string,
        unknown
      >;
      expect(isSealed(row.sealed_key)).toBe(true);
      expect(isSealed(row.sealed_passphrase)).toBe(true);
      const text = JSON.stringify(row);
      expect(text).not.toContain('PRIVATE KEY');
      expect(text).not.toContain(pki.passphrase);
      expect(row.cert).toBe(pki.clientCert);
    } finally {
      db.close();
    }
  });
});

describe('checks with client certificates and CA bundles', () => {
  it('takes an id of the account and a CA bundle on API checks, URL and SSL monitors, and shows them back', async ({
    api,
    acme,
  }) => {
    await api.request(acme, 'POST', '/v1/private-locations', { name: 'Office', slugName: 'office' });
    const cert = await addCert(api, acme);
    const tls = { sslClientCertificateId: cert.id, sslCaBundle: pki.caCert };
    const bodies: Array<[string, object]> = [
      ['/v1/checks/api', apiCheck(tls)],
      ['/v1/checks/url', { name: 'u', request: { url: 'https://localhost/', ...tls } }],
      [
        '/v1/checks/ssl',
        { name: 's', request: { sslConfig: { hostname: 'localhost', clientCertificateMode: 'explicit' }, ...tls } },
      ],
    ];
    for (const [url, body] of bodies) {
      const res = await api.request(acme, 'POST', url, body);
      expect(res.statusCode, res.body).toBe(201);
      expect(json<{ request: Record<string, unknown> }>(res).request).toMatchObject(tls);
    }
    const auto = await api.request(acme, 'POST', '/v1/checks/ssl', {
      name: 'a',
      request: { sslConfig: { hostname: 'localhost', clientCertificateMode: 'auto' } },
    });
    expect(auto.statusCode, auto.body).toBe(201);
  });

  it('rejects an unknown id, an explicit SSL mode without one, and a CA bundle that does not parse, naming the field', async ({
    api,
    acme,
  }) => {
    expect(await rejected(api, acme, '/v1/checks/api', apiCheck({ sslClientCertificateId: 'no-such-id' }))).toMatch(
      /^body\/request\/sslClientCertificateId: no client certificate/,
    );
    expect(
      await rejected(api, acme, '/v1/checks/url', {
        name: 'u',
        request: { url: 'https://x.test/', sslClientCertificateId: 'nope' },
      }),
    ).toMatch(/^body\/request\/sslClientCertificateId/);
    expect(
      await rejected(api, acme, '/v1/checks/ssl', {
        name: 's',
        request: { sslConfig: { hostname: 'x.test', clientCertificateMode: 'explicit' } },
      }),
    ).toMatch(/^body\/request\/sslClientCertificateId is required/);
    expect(await rejected(api, acme, '/v1/checks/api', apiCheck({ sslCaBundle: 'not a certificate' }))).toMatch(
      /^body\/request\/sslCaBundle/,
    );
  });

  it("puts the certificate into the run's definition sealed, opened only for the job; a deleted one is left out", async ({
    api,
    acme,
  }) => {
    const cert = await addCert(api, acme, { ca: pki.caCert, key: pki.clientKeyEncrypted, passphrase: pki.passphrase });
    const res = await api.request(
      acme,
      'POST',
      '/v1/checks/api',
      apiCheck({ url: 'https://localhost/', sslClientCertificateId: cert.id, sslCaBundle: pki.serverCert }),
    );
    const stored = await api.store.checks.get(acme.accountId, json<{ id: string }>(res).id);
    if (!stored) throw new Error('not stored');
    const tls = await clientTlsOf(api.store.clientCertificates, stored, toCheckDefinition(stored));
    expect(tls).toMatchObject({
      cert: pki.clientCert,
      clientCertificateId: cert.id,
      ca: [pki.serverCert.trim(), pki.caCert.trim()],
    });
    expect(isSealed(tls?.key)).toBe(true);
    expect(isSealed(tls?.passphrase)).toBe(true);
    expect(openTlsIn(api.store.secrets, { tls }).tls).toMatchObject({
      key: pki.clientKeyEncrypted,
      passphrase: pki.passphrase,
    });

    // Deleting a certificate in use is allowed (as in the reference); the check then runs without it.
    expect((await api.request(acme, 'DELETE', `/v1/client-certificates/${cert.id}`)).statusCode).toBe(204);
    expect(await clientTlsOf(api.store.clientCertificates, stored, toCheckDefinition(stored))).toEqual({
      ca: [pki.serverCert.trim()],
    });
  });

  it("matches by host when no id is given: an exact host beats a wildcard, the newest wins, never another account's", async ({
    api,
    acme,
    other,
  }) => {
    const wildcard = await addCert(api, acme, { host: '*.acme.test' });
    const res = await api.request(acme, 'POST', '/v1/checks/api', apiCheck());
    const stored = await api.store.checks.get(acme.accountId, json<{ id: string }>(res).id);
    if (!stored) throw new Error('not stored');
    const chosen = async () =>
      (await clientTlsOf(api.store.clientCertificates, stored, toCheckDefinition(stored)))?.clientCertificateId;
    expect(await chosen()).toBe(wildcard.id);
    await addCert(api, other, { host: 'api.acme.test' });
    expect(await chosen()).toBe(wildcard.id);
    const exact = await addCert(api, acme, { host: 'api.acme.test' });
    const newerWildcard = await addCert(api, acme, { host: '*.test' });
    expect(newerWildcard.id).not.toBe(exact.id);
    expect(await chosen()).toBe(exact.id);
    const newerExact = await addCert(api, acme, { host: 'API.acme.test' });
    expect(await chosen()).toBe(newerExact.id);
  });
});

describe('a run of a check with a client certificate', () => {
  it('is queued with the key sealed and leased to the agent with it opened', async () => {
    const h = await startHarness();
    try {
      const tenant = await h.tenant();
      const cert = await h.store.clientCertificates.create(tenant.accountId, storedCertificateWithPassphrase());
      const check = await h.check(tenant, {
        body: {
          name: 'mtls',
          request: { method: 'GET', url: 'https://localhost:9/', sslClientCertificateId: cert.id },
        },
      });
      const run = await h.dispatcher.enqueue(check, tenant.location.id, h.clock.now);
      const db = new DatabaseSync(path.join(h.config.dataDir, 'outpost.db'), { readOnly: true });
      try {
        const row = db.prepare('SELECT check_json FROM runs WHERE run_id = ?').get(run.runId) as { check_json: string };
        expect(row.check_json).toContain(pki.clientCert.trim().split('\n')[1]);
        expect(row.check_json).not.toContain('PRIVATE KEY');
        expect(row.check_json).not.toContain(pki.passphrase);
      } finally {
        db.close();
      }
      const agent = await h.agent(tenant);
      const [job] = await agent.lease();
      expect(job?.check.tls).toEqual({
        cert: pki.clientCert,
        key: pki.clientKeyEncrypted,
        passphrase: pki.passphrase,
        clientCertificateId: cert.id,
      });
    } finally {
      await h.close();
    }
  });
});

describe('certificate reads of a scheduler batch', () => {
  it('read each account once, and a failed read again', async () => {
    const calls: string[] = [];
    let fail = true;
    const batch = certificatesOncePerBatch({
      async listSealed(accountId) {
        calls.push(accountId);
        if (fail) {
          fail = false;
          throw new Error('down');
        }
        return [];
      },
    });
    await expect(batch.listSealed('a')).rejects.toThrow('down');
    await batch.listSealed('a');
    await batch.listSealed('a');
    await batch.listSealed('b');
    expect(calls).toEqual(['a', 'a', 'b']);
  });
});

describe('host patterns', () => {
  it('match names case-insensitively, * standing for any run of characters', () => {
    expect(hostMatches('*.acme.com', 'www.acme.com')).toBe(true);
    expect(hostMatches('*.acme.com', 'a.b.acme.com')).toBe(true);
    expect(hostMatches('*.acme.com', 'acme.com')).toBe(false);
    expect(hostMatches('*.acme.com', 'www.acme.com.evil.test')).toBe(false);
    expect(hostMatches('www.acme.com', 'WWW.ACME.COM')).toBe(true);
    expect(hostMatches('www.acme.com', 'wwwxacme.com')).toBe(false);
    expect(pickCertificate([{ host: '*.acme.com' }, { host: 'www.acme.com' }], 'www.acme.com')).toEqual({
      host: 'www.acme.com',
    });
  });
});

describe.each(storeBackends())('client certificate repository on $name', (backend) => {
  const t = freshAccountEachTest(backend);

  it('seals the key and passphrase in the row and keeps accounts apart', async () => {
    const created = await t.store.clientCertificates.create(t.accountId, storedCertificateWithPassphrase());
    const [row] = await t.fresh.query('SELECT * FROM client_certificates WHERE id = ?', [created.id]);
    expect(row).toMatchObject({ account_id: t.accountId, host: 'localhost', cert: pki.clientCert, ca: null });
    expect(JSON.stringify(row)).not.toContain('PRIVATE KEY');
    expect(JSON.stringify(row)).not.toContain(pki.passphrase);
    expect(t.store.secrets.open(String(row?.sealed_key))).toBe(pki.clientKeyEncrypted);
    const [sealed] = await t.store.clientCertificates.listSealed(t.accountId);
    expect(sealed).toMatchObject({
      id: created.id,
      sealedKey: row?.sealed_key,
      sealedPassphrase: row?.sealed_passphrase,
    });

    const otherId = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.clientCertificates.list(otherId)).toEqual([]);
    expect(await t.store.clientCertificates.get(otherId, created.id)).toBeUndefined();
    expect(await t.store.clientCertificates.delete(otherId, created.id)).toBe(false);
    expect(await t.store.clientCertificates.get(t.accountId, created.id)).toEqual(created);
  });
});
