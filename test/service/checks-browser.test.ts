/**
 * Browser and multistep check CRUD (/v1/checks/browser, /v1/checks/multistep) with the reference
 * bodies and defaults, validation, another account's check, and the job definition they become.
 */
import { describe, expect } from 'vitest';
import { toCheckDefinition } from '../../src/service/checks/definition.ts';
import { json } from '../helpers/public-api.ts';
import { checkDefaults, type CheckView, checksTest as it } from '../support/api-test.ts';

const SCRIPT =
  "const { test, expect } = require('@playwright/test');\ntest('home', async ({ page }) => {\n  await page.goto('https://example.test');\n});\n";

const scriptedDefaults = {
  ...checkDefaults,
  scriptPath: null,
  dependencies: [],
};

describe.each([
  ['/v1/checks/browser', 'BROWSER', { sslCheckDomain: null }],
  ['/v1/checks/multistep', 'MULTI_STEP', {}],
] as const)('%s', (path, checkType, extraDefaults) => {
  it('fills in the reference defaults, reads back and becomes a job definition with the runtime resolved', async ({
    api,
    acme,
  }) => {
    const res = await api.request(acme, 'POST', path, {
      name: 'Home',
      script: SCRIPT,
      privateLocations: ['office'],
      dependencies: [{ path: 'lib/util.js', content: 'exports.x = 1;' }],
      environmentVariables: [{ key: 'TOKEN', value: 'tok-secret-1', secret: true }],
    });
    expect(res.statusCode, res.body).toBe(201);
    const created = json<CheckView>(res);
    expect(created).toEqual({
      ...scriptedDefaults,
      ...extraDefaults,
      name: 'Home',
      checkType,
      script: SCRIPT,
      dependencies: [{ path: 'lib/util.js', content: 'exports.x = 1;' }],
      // A secret's value is never returned.
      environmentVariables: [{ key: 'TOKEN', value: null, locked: false, secret: true }],
    });
    expect(created).not.toHaveProperty('degradedResponseTime');
    expect(json(await api.request(acme, 'GET', `/v1/checks/${created.id}`))).toEqual(created);

    const stored = await api.store.checks.get(acme.accountId, created.id);
    expect(stored && toCheckDefinition(stored)).toMatchObject({
      checkType,
      script: SCRIPT,
      dependencies: [{ path: 'lib/util.js', content: 'exports.x = 1;' }],
      // Scripted checks always run user code: the default runtime when none is named.
      runtimeId: '2026.04',
      environmentVariables: [{ key: 'TOKEN', value: 'tok-secret-1', secret: true }],
    });
  });

  it('updates with PUT, keeping what the body leaves out', async ({ api, acme }) => {
    const created = json<CheckView>(
      await api.request(acme, 'POST', path, { name: 'Home', script: SCRIPT, runtimeId: '2025.04' }),
    );
    const res = await api.request(acme, 'PUT', `${path}/${created.id}`, {
      frequency: 5,
      script: 'await page.goto("https://example.test")',
    });
    expect(res.statusCode, res.body).toBe(200);
    const updated = json<CheckView>(res);
    expect(updated).toMatchObject({
      name: 'Home',
      frequency: 5,
      runtimeId: '2025.04',
      script: 'await page.goto("https://example.test")',
    });
    expect(updated).not.toHaveProperty('request');
    const stored = await api.store.checks.get(acme.accountId, created.id);
    expect(stored && toCheckDefinition(stored)).toMatchObject({
      runtimeId: '2025.04',
      script: 'await page.goto("https://example.test")',
    });
  });

  it.for<[object, string]>([
    [{ name: 'x' }, 'script'],
    [{ name: 'x', script: null }, 'body/script is required'],
    [{ name: 'x', script: '   ' }, 'body/script is required'],
    [{ name: 'x', script: SCRIPT, frequency: 0 }, 'frequency'],
    [{ name: 'x', script: SCRIPT, runtimeId: '2021.01' }, 'runtimeId'],
    [{ name: 'x', script: SCRIPT, dependencies: [{ path: '../escape.js', content: 'x' }] }, 'dependencies/0/path'],
    [{ name: 'x', script: SCRIPT, dependencies: [{ path: '/abs.js', content: 'x' }] }, 'dependencies/0/path'],
    [
      {
        name: 'x',
        script: SCRIPT,
        dependencies: [
          { path: 'a.js', content: 'x' },
          { path: 'a.js', content: 'y' },
        ],
      },
      'body/dependencies/1/path: "a.js" is given more than once',
    ],
    [{ name: 'x', script: SCRIPT, privateLocations: ['nowhere'] }, 'no private location with slugName "nowhere"'],
  ])('refuses %j with a 400 naming the field', async ([body, message], { api, acme }) => {
    const res = await api.request(acme, 'POST', path, body);
    expect(res.statusCode, res.body).toBe(400);
    expect(json(res)).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(json(res).message).toContain(message);
  });

  it("answers 404 for another account's check and for another type's", async ({ api, acme, other }) => {
    const created = json<CheckView>(await api.request(acme, 'POST', path, { name: 'Home', script: SCRIPT }));
    expect((await api.request(other, 'PUT', `${path}/${created.id}`, { name: 'mine' })).statusCode).toBe(404);
    const otherPath = path.endsWith('browser') ? '/v1/checks/multistep' : '/v1/checks/browser';
    expect((await api.request(acme, 'PUT', `${otherPath}/${created.id}`, { name: 'x' })).statusCode).toBe(404);
  });
});
