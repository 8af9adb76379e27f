/**
 * Error reports: the DSN handed out at registration, the Sentry envelope endpoint it leads to, and
 * the public read of a location's reports.
 */
import { gzipSync } from 'node:zlib';
import { dsnFromString, getEnvelopeEndpointWithUrlEncodedAuth, makeDsn } from '@sentry/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseEnvelope } from '../../src/service/dispatch/envelope.ts';
import { type Harness, startHarness, type TestTenant } from '../helpers/dispatch-harness.ts';

let h: Harness;

beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

function envelope(...events: Record<string, unknown>[]): string {
  const lines = [JSON.stringify({ event_id: 'a'.repeat(32), sent_at: new Date().toISOString() })];
  for (const event of events) {
    const payload = JSON.stringify(event);
    lines.push(JSON.stringify({ type: 'event', length: Buffer.byteLength(payload) }), payload);
  }
  // A non-event item, which is accepted and skipped.
  lines.push(JSON.stringify({ type: 'session' }), JSON.stringify({ sid: 'x', status: 'ok' }));
  return `${lines.join('\n')}\n`;
}

/** Where the Sentry SDK would post envelopes for this DSN, as a path + query for app.inject. */
function sdkEndpoint(dsn: string): string {
  const components = makeDsn(dsn);
  if (!components) throw new Error(`the Sentry SDK rejects the DSN ${dsn}`);
  const url = new URL(getEnvelopeEndpointWithUrlEncodedAuth(components));
  return url.pathname + url.search;
}

async function registeredDsn(t: TestTenant): Promise<string> {
  const agent = await h.agent(t);
  const dsn = agent.registration.errorReportingDsn;
  if (!dsn) throw new Error('no DSN');
  return dsn;
}

async function reports(t: TestTenant, locationId = t.location.id) {
  return h.app.inject({ method: 'GET', url: `/v1/private-locations/${locationId}/error-reports`, headers: t.headers });
}

describe('error reporting DSN', () => {
  it('is a DSN the Sentry SDK accepts, on the public URL, whose key is a report token and not the location key', async () => {
    const t = await h.tenant();
    const dsn = await registeredDsn(t);
    const parsed = dsnFromString(dsn);
    expect(parsed).toMatchObject({ protocol: 'http', host: 'outpost.test', port: '8080', projectId: '1' });
    expect(parsed?.publicKey).toMatch(/^ert_[0-9a-f]{40}$/);
    expect(dsn).not.toContain(t.key);
    expect(dsn).not.toContain(t.key.slice(3));
    expect(sdkEndpoint(dsn)).toBe(
      `/agent/v1/errors/${t.location.id}/api/1/envelope/?sentry_version=7&sentry_key=${parsed?.publicKey}`,
    );
  });

  it('stays the same for every agent of the location, and only its hash is stored', async () => {
    const t = await h.tenant();
    const first = await registeredDsn(t);
    expect(await registeredDsn(t)).toBe(first);
    const token = dsnFromString(first)?.publicKey ?? '';
    expect(await h.store.errorReports.findLocationByToken(token)).toBeUndefined();
  });
});

describe('envelope endpoint', () => {
  it('stores the events of an envelope posted with the report token', async () => {
    const t = await h.tenant();
    const endpoint = sdkEndpoint(await registeredDsn(t));
    const res = await h.app.inject({
      method: 'POST',
      url: endpoint,
      headers: { 'content-type': 'application/x-sentry-envelope' },
      payload: envelope({ message: 'agent crashed\nbadly', level: 'error', release: 'outpost-agent@1.0.0' }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});

    const list = await reports(t);
    expect(list.statusCode).toBe(200);
    const body = list.json();
    expect(body.length).toBe(1);
    expect(body.entries[0]).toMatchObject({
      event: { message: 'agent crashed\nbadly', release: 'outpost-agent@1.0.0' },
    });
    expect(typeof body.entries[0].id).toBe('string');
    expect(Number.isNaN(Date.parse(body.entries[0].receivedAt))).toBe(false);
  });

  it('takes the token from X-Sentry-Auth, a body with no content type, and a gzipped body', async () => {
    const t = await h.tenant();
    const dsn = await registeredDsn(t);
    const token = dsnFromString(dsn)?.publicKey;
    const path = `/agent/v1/errors/${t.location.id}/api/1/envelope/`;
    const viaHeader = await h.app.inject({
      method: 'POST',
      url: path,
      headers: {
        'x-sentry-auth': `Sentry sentry_version=7, sentry_client=sentry.javascript.node/10, sentry_key=${token}`,
      },
      payload: Buffer.from(envelope({ message: 'one' })),
    });
    expect(viaHeader.statusCode).toBe(200);
    const gzipped = await h.app.inject({
      method: 'POST',
      url: `${path}?sentry_key=${token}`,
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'content-encoding': 'gzip' },
      payload: gzipSync(envelope({ message: 'two' })),
    });
    expect(gzipped.statusCode).toBe(200);
    const messages = (await reports(t)).json().entries.map((e: { event: { message: string } }) => e.event.message);
    expect(messages).toEqual(['two', 'one']);
  });

  it('rejects the location API key, a wrong token and another location’s token', async () => {
    const a = await h.tenant('A');
    const b = await h.tenant('B');
    const endpointA = sdkEndpoint(await registeredDsn(a));
    const tokenB = dsnFromString(await registeredDsn(b))?.publicKey ?? '';
    const pathA = endpointA.split('?')[0];
    for (const key of [a.key, 'ert_0123456789abcdef0123456789abcdef01234567', tokenB, '']) {
      const res = await h.app.inject({
        method: 'POST',
        url: `${pathA}?sentry_version=7&sentry_key=${encodeURIComponent(key)}`,
        payload: envelope({ message: 'nope' }),
      });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    }
    // The location key as a Bearer header opens nothing here either.
    const bearer = await h.app.inject({
      method: 'POST',
      url: pathA,
      headers: { authorization: `Bearer ${a.key}` },
      payload: envelope({ message: 'nope' }),
    });
    expect(bearer.statusCode).toBe(401);
    expect((await reports(a)).json().length).toBe(0);
  });

  it('answers 400 for a body that is not an envelope', async () => {
    const t = await h.tenant();
    const res = await h.app.inject({
      method: 'POST',
      url: sdkEndpoint(await registeredDsn(t)),
      payload: 'not json at all',
    });
    expect(res.statusCode).toBe(400);
  });
});

describe('reading error reports', () => {
  it('is account-scoped: another account’s location is 404', async () => {
    const a = await h.tenant('A');
    const b = await h.tenant('B');
    expect((await reports(b, a.location.id)).statusCode).toBe(404);
    expect((await reports(a)).json()).toEqual({ length: 0, entries: [] });
    const noAuth = await h.app.inject({ method: 'GET', url: `/v1/private-locations/${a.location.id}/error-reports` });
    expect(noAuth.statusCode).toBe(401);
  });
});

describe('envelope parsing', () => {
  it('reads length-delimited payloads with newlines and newline-delimited ones', () => {
    const payload = '{"message":"a\\nb"}';
    const raw = Buffer.from(
      `{}\n{"type":"event","length":${Buffer.byteLength(payload)}}\n${payload}\n{"type":"event"}\n{"message":"c"}`,
    );
    const parsed = parseEnvelope(raw);
    expect(parsed.items.map((i) => JSON.parse(i.payload.toString()).message)).toEqual(['a\nb', 'c']);
  });
});
