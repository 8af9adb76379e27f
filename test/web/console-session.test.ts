/**
 * The console's sessions, CSRF protection, sign-in refusals and account separation, over plain HTTP
 * against the whole service on loopback.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { consoleClient, signedInClient } from '../helpers/console-client.ts';
import { consoleTenant, createApiCheck } from '../helpers/console-fixture.ts';
import { startWebService, webServicePerFile } from '../helpers/web-service.ts';

const cookieLine = (lines: string[], name: string) => lines.find((l) => l.startsWith(`${name}=`)) ?? '';

describe('console sessions', () => {
  const t = webServicePerFile({ PUBLIC_URL: 'http://127.0.0.1:8080' });

  it('signs in with an account id and API key: an HttpOnly, SameSite=Strict cookie for /app, stored only as a hash', async () => {
    const account = await t.web.newAccount('Cookies');
    const client = await signedInClient(t.web.url, account);
    const line = cookieLine(client.lastSetCookies, 'outpost_console');
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Strict/);
    expect(line).toMatch(/; Path=\/app(;|$)/);
    expect(line).not.toMatch(/; Secure/);
    const token = client.cookies.get('outpost_console') ?? '';
    const db = new DatabaseSync(path.join(t.web.dataDir, 'outpost.db'), { readOnly: true });
    const rows = db
      .prepare('SELECT token_hash, account_id FROM console_sessions WHERE account_id = ?')
      .all(account.accountId);
    db.close();
    expect(rows).toEqual([
      { token_hash: createHash('sha256').update(token).digest('hex'), account_id: account.accountId },
    ]);
    const page = await client.get('/app/checks');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`Account ${account.accountId}`);
  });

  it('sends a browser without a session to the sign-in page, and refuses a live update with 401', async () => {
    const client = consoleClient(t.web.url);
    for (const p of ['/app', '/app/checks', '/app/locations', '/app/alerts']) {
      const res = await client.get(p);
      expect(res.status, p).toBe(303);
      expect(res.headers.get('location')).toBe('/app/sign-in');
    }
    expect((await client.get('/app/checks/live')).status).toBe(401);
  });

  it('answers a wrong key, an unknown account and another account key with the same message', async () => {
    const a = await t.web.newAccount('A');
    const b = await t.web.newAccount('B');
    const tries = [
      { accountId: a.accountId, apiKey: 'op_wrong' },
      { accountId: crypto.randomUUID(), apiKey: a.apiKey },
      { accountId: a.accountId, apiKey: b.apiKey },
    ];
    const texts = [];
    for (const fields of tries) {
      const client = consoleClient(t.web.url);
      await client.get('/app/sign-in');
      const res = await client.post('/app/sign-in', fields);
      expect(res.status).toBe(401);
      expect(client.cookies.has('outpost_console')).toBe(false);
      texts.push(/<p class="form-error" role="alert">([^<]+)<\/p>/.exec(await res.text())?.[1]);
    }
    expect(texts[0]).toContain('do not match an account');
    expect(new Set(texts).size).toBe(1);
  });

  it('asks again for an empty field, and refuses an over-long one with a 400 page naming it', async () => {
    const client = consoleClient(t.web.url);
    await client.get('/app/sign-in');
    const empty = await client.post('/app/sign-in', { accountId: ' ', apiKey: 'op_x' });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('Enter both your account id and an API key');
    const long = await client.post('/app/sign-in', { accountId: 'a'.repeat(201), apiKey: 'op_x' });
    expect(long.status).toBe(400);
    expect(await long.text()).toMatch(/body\/accountId/);
  });

  it('refuses a form POST without its CSRF token: sign-in and sign-out alike', async () => {
    const account = await t.web.newAccount('Csrf');
    const anonymous = consoleClient(t.web.url);
    await anonymous.get('/app/sign-in');
    const signIn = await anonymous.post(
      '/app/sign-in',
      { accountId: account.accountId, apiKey: account.apiKey },
      { csrf: false },
    );
    expect(signIn.status).toBe(403);
    expect(await signIn.text()).toContain('This form was refused');
    expect(anonymous.cookies.has('outpost_console')).toBe(false);

    const client = await signedInClient(t.web.url, account);
    const forged = await client.post('/app/sign-out', {}, { csrf: false });
    expect(forged.status).toBe(403);
    const wrongToken = await client.post('/app/sign-out', { _csrf: 'forged' }, { csrf: false });
    expect(wrongToken.status).toBe(403);
    expect((await client.get('/app/checks')).status).toBe(200);
  });

  it('signs out with a POST carrying the token: the old cookie no longer opens anything', async () => {
    const account = await t.web.newAccount('Leaving');
    const client = await signedInClient(t.web.url, account);
    const token = client.cookies.get('outpost_console') ?? '';
    await client.get('/app/checks');
    const out = await client.post('/app/sign-out', {});
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/app/sign-in');
    expect(cookieLine(client.lastSetCookies, 'outpost_console')).toMatch(/Expires=Thu, 01 Jan 1970|Max-Age=0/);
    const replay = consoleClient(t.web.url);
    replay.cookies.set('outpost_console', token);
    const res = await replay.get('/app/checks');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/app/sign-in');
  });

  it('ends a session left idle, and one past its absolute expiry', async () => {
    const account = await t.web.newAccount('Idle');
    const store = t.web.service.store;
    const now = Date.now();
    const at = (ms: number) => new Date(now + ms).toISOString();
    await store.consoleSessions.create('idle-token', {
      accountId: account.accountId,
      createdAt: at(-3_600_000),
      lastSeenAt: at(-31 * 60_000),
      expiresAt: at(3_600_000),
    });
    await store.consoleSessions.create('old-token', {
      accountId: account.accountId,
      createdAt: at(-13 * 3_600_000),
      lastSeenAt: at(-1000),
      expiresAt: at(-1),
    });
    await store.consoleSessions.create('live-token', {
      accountId: account.accountId,
      createdAt: at(-3_600_000),
      lastSeenAt: at(-29 * 60_000),
      expiresAt: at(3_600_000),
    });
    const statusWith = async (token: string) => {
      const client = consoleClient(t.web.url);
      client.cookies.set('outpost_console', token);
      return (await client.get('/app/checks')).status;
    };
    expect(await statusWith('idle-token')).toBe(303);
    expect(await statusWith('old-token')).toBe(303);
    expect(await statusWith('live-token')).toBe(200);
  });

  it("shows an account nothing of another's: its checks are 404 pages and absent from every list", async () => {
    const owner = await consoleTenant(t.web, 'Owner', 'owner-dc');
    const check = await createApiCheck(t.web, owner, 'Owner secret homepage', { tags: ['owner-tag'] });
    const stranger = await signedInClient(t.web.url, await t.web.newAccount('Stranger'));
    const page = await stranger.get(`/app/checks/${check.id}`);
    expect(page.status).toBe(404);
    expect(await page.text()).not.toContain('Owner secret homepage');
    expect((await stranger.get(`/app/checks/${check.id}/live`)).status).toBe(404);
    for (const p of [
      '/app/checks',
      '/app/checks/live',
      '/app/locations',
      '/app/alerts',
      '/app/locations/live',
      '/app/alerts/live',
    ]) {
      const text = await (await stranger.get(p)).text();
      expect(text, p).not.toMatch(/Owner secret homepage|owner-tag|Owner office|owner-dc/);
    }
    const ownerClient = await signedInClient(t.web.url, owner.account);
    expect(await (await ownerClient.get(`/app/checks/${check.id}`)).text()).toContain('Owner secret homepage');
  });

  it('sends a signed-in browser from the sign-in page to its checks', async () => {
    const client = await signedInClient(t.web.url, await t.web.newAccount('Twice'));
    const res = await client.get('/app/sign-in');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/app/checks');
  });

  it("answers a result cursor the page did not give with a 400 page naming 'before'", async () => {
    const tenant = await consoleTenant(t.web, 'Cursor', 'cursor-dc');
    const check = await createApiCheck(t.web, tenant, 'Paged');
    const client = await signedInClient(t.web.url, tenant.account);
    const res = await client.get(`/app/checks/${check.id}?before=not-a-cursor`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('querystring/before is not a cursor');
  });

  it("shows a check in a group with the group's locations and activation, as it runs", async () => {
    const tenant = await consoleTenant(t.web, 'Grouped', 'grouped-dc');
    const group = await t.web.api<{ id: number }>(tenant.account, 'POST', '/v2/check-groups', {
      name: 'Paused group',
      activated: false,
      privateLocations: [tenant.location.slugName],
    });
    const check = await t.web.api<{ id: string }>(tenant.account, 'POST', '/v1/checks/api', {
      name: 'Grouped check',
      groupId: group.id,
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
    });
    const client = await signedInClient(t.web.url, tenant.account);
    const row =
      /<tr><th scope="row"><a href="\/app\/checks\/[^"]+">Grouped check<\/a>.*?<\/tr>/s.exec(
        await (await client.get('/app/checks')).text(),
      )?.[0] ?? '';
    expect(row).toContain('Deactivated');
    expect(row).toContain('<td>Grouped office</td>');
    const page = await (await client.get(`/app/checks/${check.id}`)).text();
    expect(page).toContain('<dt>Locations</dt><dd>Grouped office</dd>');
  });

  it("shows a check's definition with its secret values masked, as the API does", async () => {
    const tenant = await consoleTenant(t.web, 'Secrets', 'secrets-dc');
    const check = await createApiCheck(t.web, tenant, 'With a token', {
      body: {
        environmentVariables: [
          { key: 'TOKEN', value: 'sk-live-do-not-show', secret: true },
          { key: 'REGION', value: 'eu-plain', secret: false },
        ],
      },
    });
    const client = await signedInClient(t.web.url, tenant.account);
    const page = await (await client.get(`/app/checks/${check.id}`)).text();
    expect(page).not.toContain('sk-live-do-not-show');
    expect(page).toContain('eu-plain');
    const api = await t.web.api<{ environmentVariables: unknown[] }>(tenant.account, 'GET', `/v1/checks/${check.id}`);
    const pre = /<pre[^>]*>([^<]*)<\/pre>/.exec(page)?.[1] ?? '';
    const definition = JSON.parse(pre.replaceAll('&quot;', '"').replaceAll('&amp;', '&')) as {
      environmentVariables: unknown[];
    };
    expect(definition.environmentVariables).toEqual(api.environmentVariables);
  });

  it('answers a filter value the form does not offer with a 400 page naming the field', async () => {
    const client = await signedInClient(t.web.url, await t.web.newAccount('Filters'));
    const res = await client.get('/app/checks?type=NOPE');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(/querystring\/type/);
  });
});

describe('console sign-in limits', () => {
  const t = webServicePerFile();

  it('refuses sign-in to an account after 10 failures, even with the right key, while another account still signs in', async () => {
    const target = await t.web.newAccount('Target');
    const client = consoleClient(t.web.url);
    await client.get('/app/sign-in');
    for (let i = 0; i < 10; i++)
      expect((await client.post('/app/sign-in', { accountId: target.accountId, apiKey: `op_guess${i}` })).status).toBe(
        401,
      );
    const right = await client.post('/app/sign-in', { accountId: target.accountId, apiKey: target.apiKey });
    expect(right.status).toBe(429);
    expect(await right.text()).toContain('Too many failed sign-ins');
    await signedInClient(t.web.url, await t.web.newAccount('Bystander'));
  });

  it('refuses every sign-in from an address after 30 failures', async () => {
    const client = consoleClient(t.web.url);
    await client.get('/app/sign-in');
    // 10 failures were counted by the test before, from this same address.
    for (let i = 0; i < 20; i++)
      expect((await client.post('/app/sign-in', { accountId: `nobody-${i}`, apiKey: 'op_guess' })).status).toBe(401);
    const fresh = await t.web.newAccount('Fresh');
    expect((await client.post('/app/sign-in', { accountId: fresh.accountId, apiKey: fresh.apiKey })).status).toBe(429);
  });
});

describe('console cookies under an https PUBLIC_URL', () => {
  it('marks the session and CSRF cookies Secure', async () => {
    const web = await startWebService({ PUBLIC_URL: 'https://console.example.test' });
    try {
      const client = await signedInClient(web.url, await web.newAccount('Https'));
      expect(cookieLine(client.lastSetCookies, 'outpost_console')).toMatch(/; Secure/);
      const form = consoleClient(web.url);
      await form.get('/app/sign-in');
      expect(cookieLine(form.lastSetCookies, 'outpost_console_csrf')).toMatch(/; Secure/);
    } finally {
      await web.close();
    }
  });
});
