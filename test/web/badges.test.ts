/**
 * Status badges over real HTTP on loopback: what each status shows, the group's worst-wins rule,
 * response time, styles and themes, caching (ETag, 304), escaping, the account setting that turns
 * badges on, and the 400s and 404s.
 */
import { describe, expect, it } from 'vitest';
import { webServicePerFile } from '../helpers/web-service.ts';
import { createCheck, createGroup, enableBadges, recordResult } from './badge-fixtures.ts';

const t = webServicePerFile();

async function badge(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.web.url}${path}`, { headers });
  return { res, body: await res.text() };
}

/** The visible texts of a badge: every <text> that is not a shadow copy (badge-maker groups those as aria-hidden). */
function texts(svg: string): string[] {
  const withoutShadows = svg.replace(/<g aria-hidden="true"[^>]*>(?:<text[^>]*>[^<]*<\/text>)+<\/g>/g, '');
  return [...withoutShadows.matchAll(/<text([^>]*)>([^<]*)<\/text>/g)]
    .filter((m) => !m[1]?.includes('aria-hidden'))
    .map((m) => m[2] ?? '');
}

/** The fill of the message box (the second rect in the boxes' group). */
function messageFill(svg: string): string | undefined {
  return [...svg.matchAll(/<rect x="[\d.]+" width="[\d.]+" height="\d+" fill="([^"]+)"/g)][0]?.[1];
}

describe('check badges', () => {
  it('show no data, passing, degraded and failing from the check status, in the status colour', async () => {
    const acme = await t.web.newAccount('Acme');
    await enableBadges(t.web, acme);
    const id = await createCheck(t.web, acme, 'Checkout API');
    const expectations: Array<[Parameters<typeof recordResult>[3] | null, string, string]> = [
      [null, 'no data', '#9f9f9f'],
      [{}, 'passing', '#4c1'],
      [{ isDegraded: true }, 'degraded', '#dfb317'],
      [{ hasFailures: true }, 'failing', '#e05d44'],
    ];
    for (const [outcome, status, colour] of expectations) {
      if (outcome) await recordResult(t.web, acme, id, outcome);
      const { res, body } = await badge(`/v1/badges/checks/${id}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
      expect(texts(body)).toEqual(['Checkout API', status]);
      expect(messageFill(body)).toBe(colour);
      expect(body).toContain(`<title>Checkout API: ${status}</title>`);
    }
  });

  it('shows a deactivated check as deactivated, whatever its last result', async () => {
    const acme = await t.web.newAccount('Acme');
    await enableBadges(t.web, acme);
    const id = await createCheck(t.web, acme, 'Paused', { activated: false });
    await recordResult(t.web, acme, id, { hasFailures: true });
    expect(texts((await badge(`/v1/badges/checks/${id}`)).body)).toEqual(['Paused', 'deactivated']);
  });

  it('adds the latest response time with responseTime=true, n/a before the first result', async () => {
    const acme = await t.web.newAccount('Acme');
    await enableBadges(t.web, acme);
    const id = await createCheck(t.web, acme, 'Timed');
    expect(texts((await badge(`/v1/badges/checks/${id}?responseTime=true`)).body)).toEqual(['Timed', 'no data · n/a']);
    await recordResult(t.web, acme, id, { responseTime: 321.4 });
    expect(texts((await badge(`/v1/badges/checks/${id}?responseTime=true`)).body)).toEqual([
      'Timed',
      'passing · 321 ms',
    ]);
    expect(texts((await badge(`/v1/badges/checks/${id}?responseTime=false`)).body)).toEqual(['Timed', 'passing']);
  });

  it('draws each style and theme in its own shape and colours', async () => {
    const acme = await t.web.newAccount('Acme');
    await enableBadges(t.web, acme);
    const id = await createCheck(t.web, acme, 'Shapes');
    await recordResult(t.web, acme, id, {});
    const get = async (query: string) => (await badge(`/v1/badges/checks/${id}?${query}`)).body;
    const flat = await get('style=flat');
    expect(flat).toMatch(/<svg [^>]*height="20"/);
    expect(flat).toContain('rx="3"');
    expect(flat).toContain('fill="url(#s)"');
    const plastic = await get('style=plastic');
    expect(plastic).toMatch(/<svg [^>]*height="18"/);
    expect(plastic).toContain('rx="4"');
    expect(plastic).toContain('stop-opacity=".7"');
    const square = await get('style=flat-square');
    expect(square).toContain('shape-rendering="crispEdges"');
    expect(square).not.toContain('linearGradient');
    const forTheBadge = await get('style=for-the-badge');
    expect(forTheBadge).toMatch(/<svg [^>]*height="28"/);
    expect(texts(forTheBadge)).toEqual(['SHAPES', 'PASSING']);
    const social = await get('style=social');
    expect(social).toMatch(/<path d="M[\d.]+ 6.5 l-3 3v1 l3 3"/);
    expect(social).toContain('aria-label="Shapes: passing"');
    const light = await get('theme=light');
    expect(light).toContain('fill="#eaeef2"');
    expect(messageFill(light)).toBe('#1a7f37');
    // A light name box gets dark text; white stays on the status colour.
    expect(light).toContain('fill="#333"');
    const dark = await get('theme=dark');
    expect(dark).toContain('fill="#30363d"');
    expect(messageFill(dark)).toBe('#1a7f37');
    const plain = await get('theme=default');
    expect(plain).toContain('fill="#555"');
    expect(messageFill(plain)).toBe('#4c1');
  });

  it('escapes names so they cannot add markup, and drops characters XML forbids', async () => {
    const acme = await t.web.newAccount('Acme');
    await enableBadges(t.web, acme);
    const id = await createCheck(t.web, acme, '</text><script>alert(1)</script> & "q"\u0001');
    const { body } = await badge(`/v1/badges/checks/${id}`);
    expect(body).not.toContain('<script');
    expect(body).not.toContain('\u0001');
    expect(texts(body)[0]).toBe('&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;');
    expect(body).toContain(
      'aria-label="&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;: no data"',
    );
  });

  it('shortens a long name with an ellipsis', async () => {
    const acme = await t.web.newAccount('Acme');
    await enableBadges(t.web, acme);
    const id = await createCheck(t.web, acme, 'x'.repeat(200));
    expect(texts((await badge(`/v1/badges/checks/${id}`)).body)[0]).toBe(`${'x'.repeat(47)}…`);
  });
});

describe('group badges', () => {
  it('show the worst status of the running checks of the group', async () => {
    const acme = await t.web.newAccount('Acme');
    await enableBadges(t.web, acme);
    const groupId = await createGroup(t.web, acme, 'Storefront');
    const url = `/v1/badges/groups/${groupId}?responseTime=true`;
    expect(texts((await badge(url)).body)).toEqual(['Storefront', 'no data · n/a']);
    const a = await createCheck(t.web, acme, 'A', { groupId });
    const b = await createCheck(t.web, acme, 'B', { groupId });
    const paused = await createCheck(t.web, acme, 'Paused', { groupId, activated: false });
    await recordResult(t.web, acme, paused, { hasFailures: true, responseTime: 5000 });
    await recordResult(t.web, acme, a, { responseTime: 100 });
    // B has no result yet: the group shows what A shows.
    expect(texts((await badge(url)).body)).toEqual(['Storefront', 'passing · 100 ms']);
    await recordResult(t.web, acme, b, { isDegraded: true, responseTime: 300 });
    expect(texts((await badge(url)).body)).toEqual(['Storefront', 'degraded · 200 ms']);
    await recordResult(t.web, acme, a, { hasFailures: true, responseTime: 500 });
    expect(texts((await badge(url)).body)).toEqual(['Storefront', 'failing · 400 ms']);
  });

  it('shows a deactivated group as deactivated', async () => {
    const acme = await t.web.newAccount('Acme');
    await enableBadges(t.web, acme);
    const groupId = await createGroup(t.web, acme, 'Off', { activated: false });
    const id = await createCheck(t.web, acme, 'Member', { groupId });
    await recordResult(t.web, acme, id, {});
    expect(texts((await badge(`/v1/badges/groups/${groupId}`)).body)).toEqual(['Off', 'deactivated']);
    expect(texts((await badge(`/v1/badges/checks/${id}`)).body)).toEqual(['Member', 'deactivated']);
  });
});

describe('caching', () => {
  it('is public for a minute with an ETag, answers 304 to a matching If-None-Match, and a new one after a change', async () => {
    const acme = await t.web.newAccount('Acme');
    await enableBadges(t.web, acme);
    const id = await createCheck(t.web, acme, 'Cached');
    const first = await badge(`/v1/badges/checks/${id}`);
    const etag = first.res.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    expect(first.res.headers.get('cache-control')).toBe('public, max-age=60');
    expect(first.res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(first.res.headers.get('x-content-type-options')).toBe('nosniff');
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await badge(`/v1/badges/checks/${id}`, { 'if-none-match': ifNoneMatch });
      expect(again.res.status).toBe(304);
      expect(again.body).toBe('');
      expect(again.res.headers.get('etag')).toBe(etag);
    }
    expect((await badge(`/v1/badges/checks/${id}?style=flat-square`, { 'if-none-match': etag })).res.status).toBe(200);
    await recordResult(t.web, acme, id, { hasFailures: true });
    const changed = await badge(`/v1/badges/checks/${id}`, { 'if-none-match': etag });
    expect(changed.res.status).toBe(200);
    expect(changed.res.headers.get('etag')).not.toBe(etag);
  });
});

describe('who sees a badge', () => {
  it('answers 404 until the account enables badges, and again after it disables them, alike for unknown ids', async () => {
    const acme = await t.web.newAccount('Acme');
    const id = await createCheck(t.web, acme, 'Private');
    const groupId = await createGroup(t.web, acme, 'Private group');
    expect(await t.web.api(acme, 'GET', '/v1/account/settings')).toEqual({ badgesEnabled: false });
    const unknown = await badge('/v1/badges/checks/00000000-0000-4000-8000-000000000000');
    const unknownGroup = await badge('/v1/badges/groups/999999');
    for (const path of [`/v1/badges/checks/${id}`, `/v1/badges/groups/${groupId}`]) {
      const off = await badge(path);
      expect(off.res.status).toBe(404);
      expect(off.res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(JSON.parse(off.body)).toEqual(JSON.parse(unknown.body));
    }
    expect(unknown.res.status).toBe(404);
    expect(unknownGroup.body).toBe(unknown.body);
    await enableBadges(t.web, acme);
    expect(await t.web.api(acme, 'GET', '/v1/account/settings')).toEqual({ badgesEnabled: true });
    expect((await badge(`/v1/badges/checks/${id}`)).res.status).toBe(200);
    expect((await badge(`/v1/badges/groups/${groupId}`)).res.status).toBe(200);
    await enableBadges(t.web, acme, false);
    expect((await badge(`/v1/badges/checks/${id}`)).res.status).toBe(404);
  });

  it('one account enabling badges shows nothing of another account', async () => {
    const acme = await t.web.newAccount('Acme');
    const other = await t.web.newAccount('Other');
    await enableBadges(t.web, other);
    const id = await createCheck(t.web, acme, 'Acme only');
    const groupId = await createGroup(t.web, acme, 'Acme group');
    expect((await badge(`/v1/badges/checks/${id}`)).res.status).toBe(404);
    expect((await badge(`/v1/badges/groups/${groupId}`)).res.status).toBe(404);
  });

  it('needs an API key to change the setting, and refuses a setting that is not a boolean', async () => {
    const res = await fetch(`${t.web.url}/v1/account/settings`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"badgesEnabled":true}',
    });
    expect(res.status).toBe(401);
    const acme = await t.web.newAccount('Acme');
    await expect(t.web.api(acme, 'PUT', '/v1/account/settings', { badgesEnabled: 'yes' })).rejects.toThrow(
      /400 .*body\/badgesEnabled must be boolean/,
    );
    await expect(t.web.api(acme, 'PUT', '/v1/account/settings', {})).rejects.toThrow(/400 .*badgesEnabled is required/);
  });
});

describe('the API document', () => {
  it('lists both badges without credentials, their options optional, answering image/svg+xml', async () => {
    const doc = (await (await fetch(`${t.web.url}/openapi.json`)).json()) as {
      paths: Record<
        string,
        {
          get: {
            security: unknown[];
            parameters: Array<{ name: string; in: string; required: boolean }>;
            responses: Record<string, { content: object }>;
          };
        }
      >;
    };
    for (const path of ['/v1/badges/checks/{checkId}', '/v1/badges/groups/{groupId}']) {
      const op = doc.paths[path]?.get;
      expect(op?.security).toEqual([]);
      expect(op?.parameters.filter((p) => p.in === 'query').map((p) => [p.name, p.required])).toEqual([
        ['style', false],
        ['theme', false],
        ['responseTime', false],
      ]);
      expect(Object.keys(op?.responses['200']?.content ?? {})).toEqual(['image/svg+xml']);
    }
  });
});

describe('bad parameters', () => {
  it('answer 400 naming the parameter and what it allows', async () => {
    const acme = await t.web.newAccount('Acme');
    await enableBadges(t.web, acme);
    const id = await createCheck(t.web, acme, 'Params');
    const cases: Array<[string, RegExp]> = [
      [
        `/v1/badges/checks/${id}?style=round`,
        /querystring\/style must be one of flat, plastic, flat-square, for-the-badge, social/,
      ],
      [`/v1/badges/checks/${id}?theme=blue`, /querystring\/theme must be one of light, dark, default/],
      [`/v1/badges/checks/${id}?responseTime=maybe`, /querystring\/responseTime must be boolean/],
      ['/v1/badges/checks/not-a-uuid', /params\/checkId must match format "uuid"/],
      ['/v1/badges/groups/0', /params\/groupId must be >= 1/],
      ['/v1/badges/groups/abc', /params\/groupId must be integer/],
    ];
    expect((await badge(`/v1/badges/checks/${id}?v=2&style=flat`)).res.status).toBe(200);
    for (const [path, message] of cases) {
      const { res, body } = await badge(path);
      expect(res.status, path).toBe(400);
      const error = JSON.parse(body) as { statusCode: number; error: string; message: string };
      expect(error.statusCode).toBe(400);
      expect(error.message).toMatch(message);
    }
  });
});
