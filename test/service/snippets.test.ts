import { describe, expect } from 'vitest';
import { toCheckDefinition } from '../../src/service/checks/definition.ts';
import { groupOf } from '../../src/service/checks/group-of.ts';
import { userCodeContextOf } from '../../src/service/checks/user-code.ts';
import { DEFAULT_RUNTIME_ID } from '../../src/shared/checks/types.ts';
import { json, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { apiTest as it } from '../support/api-test.ts';

async function snippet(api: TestApi, account: TestAccount, name: string, script: string): Promise<number> {
  const res = await api.request(account, 'POST', '/v1/snippets', { name, script });
  expect(res.statusCode, res.body).toBe(201);
  return json<{ id: number }>(res).id;
}

async function definitionOf(api: TestApi, account: TestAccount, checkId: string) {
  const stored = await api.store.checks.get(account.accountId, checkId);
  if (!stored) throw new Error('not stored');
  const group = await groupOf(api.store, stored);
  return toCheckDefinition(stored, group, await userCodeContextOf(api.store, stored, group));
}

const apiCheck = { name: 'c', request: { method: 'GET', url: 'https://x.test/' } };

describe('/v1/snippets', () => {
  it('creates, lists, reads, updates and deletes', async ({ api, acme }) => {
    const created = await api.request(acme, 'POST', '/v1/snippets', { name: 'login', script: 'console.log(1)' });
    expect(created.statusCode).toBe(201);
    const s = json<{ id: number }>(created);
    expect(s).toEqual({
      id: expect.any(Number),
      name: 'login',
      script: 'console.log(1)',
      created_at: expect.any(String),
      updated_at: null,
    });
    expect(json(await api.request(acme, 'GET', '/v1/snippets'))).toEqual([s]);
    const updated = await api.request(acme, 'PUT', `/v1/snippets/${s.id}`, {
      name: 'login2',
      script: 'console.log(2)',
    });
    expect(json(updated)).toMatchObject({
      id: s.id,
      name: 'login2',
      script: 'console.log(2)',
      updated_at: expect.any(String),
    });
    expect(json(await api.request(acme, 'GET', `/v1/snippets/${s.id}`))).toMatchObject({ name: 'login2' });
    expect((await api.request(acme, 'DELETE', `/v1/snippets/${s.id}`)).statusCode).toBe(204);
    expect((await api.request(acme, 'GET', `/v1/snippets/${s.id}`)).statusCode).toBe(404);
  });

  it('requires name and script, naming the field', async ({ api, acme }) => {
    const noScript = await api.request(acme, 'POST', '/v1/snippets', { name: 'x' });
    expect(noScript.statusCode).toBe(400);
    expect(json<{ message: string }>(noScript).message).toMatch(/script/);
    const emptyName = await api.request(acme, 'POST', '/v1/snippets', { name: '', script: 'x' });
    expect(json<{ message: string }>(emptyName).message).toMatch(/name/);
  });

  it("never shows or changes another account's snippet", async ({ api, acme, other }) => {
    const id = await snippet(api, acme, 'mine', 'x');
    expect((await api.request(other, 'GET', `/v1/snippets/${id}`)).statusCode).toBe(404);
    expect((await api.request(other, 'PUT', `/v1/snippets/${id}`, { name: 'n', script: 's' })).statusCode).toBe(404);
    expect((await api.request(other, 'DELETE', `/v1/snippets/${id}`)).statusCode).toBe(404);
    expect(json(await api.request(other, 'GET', '/v1/snippets'))).toEqual([]);
  });
});

describe('snippets and scripts of API checks', () => {
  it("accepts the account's own snippet ids; another account's or an unknown one is a 400 naming the field", async ({
    api,
    acme,
    other,
  }) => {
    const mine = await snippet(api, acme, 'mine', 'x');
    const theirs = await snippet(api, other, 'theirs', 'y');
    const ok = await api.request(acme, 'POST', '/v1/checks/api', {
      ...apiCheck,
      setupSnippetId: mine,
      tearDownSnippetId: mine,
    });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(json(ok)).toMatchObject({
      setupSnippetId: mine,
      tearDownSnippetId: mine,
      localSetupScript: null,
      localTearDownScript: null,
    });
    const bad = await api.request(acme, 'POST', '/v1/checks/api', { ...apiCheck, setupSnippetId: theirs });
    expect(bad.statusCode).toBe(400);
    expect(json<{ message: string }>(bad).message).toMatch(/^body\/setupSnippetId/);
    const unknown = await api.request(acme, 'PUT', `/v1/checks/api/${json<{ id: string }>(ok).id}`, {
      tearDownSnippetId: 999999,
    });
    expect(unknown.statusCode).toBe(400);
    expect(json<{ message: string }>(unknown).message).toMatch(/^body\/tearDownSnippetId/);
  });

  it('puts the resolved code in the job: group setup then check setup, check teardown then group teardown', async ({
    api,
    acme,
  }) => {
    const groupSetup = await snippet(api, acme, 'gs', 'GROUP_SETUP_SNIPPET()');
    const checkSetup = await snippet(api, acme, 'cs', 'CHECK_SETUP_SNIPPET()');
    const group = json<{ id: number }>(
      await api.request(acme, 'POST', '/v2/check-groups', {
        name: 'g',
        setupSnippetId: groupSetup,
        localTearDownScript: 'GROUP_TEARDOWN()',
        runtimeId: '2025.04',
      }),
    );
    const created = json<{ id: string }>(
      await api.request(acme, 'POST', '/v1/checks/api', {
        ...apiCheck,
        groupId: group.id,
        setupSnippetId: checkSetup,
        localSetupScript: 'CHECK_SETUP()',
        localTearDownScript: 'CHECK_TEARDOWN()',
      }),
    );
    const def = await definitionOf(api, acme, created.id);
    expect(def.localSetupScript).toBe('{\nGROUP_SETUP_SNIPPET()\n}\n{\nCHECK_SETUP_SNIPPET()\n}\n{\nCHECK_SETUP()\n}');
    expect(def.localTearDownScript).toBe('{\nCHECK_TEARDOWN()\n}\n{\nGROUP_TEARDOWN()\n}');
    // The group's runtime, since the check names none.
    expect(def.runtimeId).toBe('2025.04');

    // A snippet edit applies from the next job on; a deleted one becomes a step that fails naming it.
    await api.request(acme, 'PUT', `/v1/snippets/${checkSetup}`, { name: 'cs', script: 'EDITED()' });
    expect((await definitionOf(api, acme, created.id)).localSetupScript).toContain('EDITED()');
    await api.request(acme, 'DELETE', `/v1/snippets/${checkSetup}`);
    expect((await definitionOf(api, acme, created.id)).localSetupScript).toContain(
      `throw new Error("the check's setup snippet ${checkSetup} no longer exists`,
    );
  });

  it('a single step is its code as written, and a scripted check without a runtime gets the default', async ({
    api,
    acme,
  }) => {
    const created = json<{ id: string }>(
      await api.request(acme, 'POST', '/v1/checks/api', { ...apiCheck, localSetupScript: 'only()' }),
    );
    const def = await definitionOf(api, acme, created.id);
    expect(def.localSetupScript).toBe('only()');
    expect(def.localTearDownScript).toBeUndefined();
    expect(def.runtimeId).toBe(DEFAULT_RUNTIME_ID);
  });
});
