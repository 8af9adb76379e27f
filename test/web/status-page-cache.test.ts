/**
 * Rendered status pages are cached under the account's status page version, which the store's
 * triggers move on every write to what a page shows: each change must appear on the next visit.
 */
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { webServicePerFile } from '../helpers/web-service.ts';
import { addUpdate, makeIncident, makePage, makeService } from './status-page-fixture.ts';

describe('status page cache', () => {
  const t = webServicePerFile();
  const visit = async () => {
    const res = await fetch(`${t.web.url}/status/cached`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    return res.text();
  };

  it('shows every change on the next visit: a new incident, its update, a renamed service, a deleted incident', async () => {
    const acme = await t.web.newAccount('Acme');
    const api = await makeService(t.web, acme, 'API');
    await makePage(t.web, acme, { name: 'Cached', url: 'cached', cards: [{ name: 'Core', services: [api] }] });
    const versions = [await t.web.service.store.statusPageReads.version(acme.accountId)];
    expect(await visit()).toContain('All systems operational');
    expect(await visit()).toContain('All systems operational');

    const incident = await makeIncident(t.web, acme, { name: 'Queue backlog', severity: 'MAJOR', services: [api] });
    expect(await visit()).toContain('Queue backlog');
    await addUpdate(t.web, acme, incident, { description: 'Draining the queue now.', status: 'MONITORING' });
    expect(await visit()).toContain('Draining the queue now.');
    await t.web.api(acme, 'PUT', `/v1/status-pages/services/${api.id}`, { name: 'Public API' });
    expect(await visit()).toContain('Public API');
    await t.web.api(acme, 'DELETE', `/v1/status-pages/incidents/${incident.id}`);
    const after = await visit();
    expect(after).not.toContain('Queue backlog');
    expect(after).toContain('All systems operational');

    versions.push(await t.web.service.store.statusPageReads.version(acme.accountId));
    expect(versions[1]).toBeGreaterThan(versions[0] ?? 0);
    // Another account's writes leave this account's version alone.
    const beta = await t.web.newAccount('Beta');
    await makeService(t.web, beta, 'Beta API');
    expect(await t.web.service.store.statusPageReads.version(acme.accountId)).toBe(versions[1]);
  });

  it('answers gzip from the cache to a client that takes it, and the same page uncompressed to one that does not', async () => {
    const acme = await t.web.newAccount('Acme');
    const api = await makeService(t.web, acme, 'API');
    await makePage(t.web, acme, { name: 'Zipped', url: 'zipped', cards: [{ name: 'Core', services: [api] }] });
    const get = async (encoding: string) => {
      const res = await request(`${t.web.url}/status/zipped`, {
        headers: { accept: 'text/html', 'accept-encoding': encoding },
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      return {
        status: res.statusCode,
        encoding: res.headers['content-encoding'],
        vary: String(res.headers.vary),
        body,
      };
    };
    const plain = await get('identity');
    expect(plain.encoding).toBeUndefined();
    for (const _ of [1, 2]) {
      const zipped = await get('gzip, deflate');
      expect(zipped.encoding).toBe('gzip');
      expect(zipped.vary).toContain('accept-encoding');
      expect(gunzipSync(zipped.body).toString('utf8')).toBe(plain.body.toString('utf8'));
    }
    expect((await get('gzip;q=0, identity')).encoding).toBeUndefined();
  });
});
