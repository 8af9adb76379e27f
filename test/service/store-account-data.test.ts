/**
 * Account-owned repositories at store level, on SQLite and PostgreSQL: environment variables,
 * snippets, console sessions, account settings and the badge reads.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/service/store/repos/keys.ts';
import type { StoredCheck } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { freshAccountEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

describe.each(storeBackends())('account data on $name', (backend) => {
  const t = freshAccountEachTest(backend);
  let otherId: string;
  beforeEach(async () => {
    otherId = (await t.store.accounts.create('Other')).account.id;
  });

  describe('variables', () => {
    it('creates once per key, stores values sealed, lists in creation order and pages', async () => {
      const created = await t.store.variables.create(t.accountId, {
        key: 'A',
        value: 'plain-a',
        locked: false,
        secret: false,
      });
      expect(created).toMatchObject({ key: 'A', value: 'plain-a', locked: false, secret: false, updatedAt: null });
      expect(
        await t.store.variables.create(t.accountId, { key: 'A', value: 'again', locked: false, secret: false }),
      ).toBeUndefined();
      await t.store.variables.create(t.accountId, { key: 'B', value: 'secret-b', locked: true, secret: true });
      expect(
        await t.store.variables.create(otherId, { key: 'A', value: 'theirs', locked: false, secret: false }),
      ).toBeDefined();

      const stored = await t.fresh.query('SELECT sealed_value FROM environment_variables');
      expect(stored.map((r) => r.sealed_value).join()).not.toMatch(/plain-a|secret-b|theirs/);
      expect((await t.store.variables.list(t.accountId)).map((v) => [v.key, v.value, v.secret])).toEqual([
        ['A', 'plain-a', false],
        ['B', 'secret-b', true],
      ]);
      expect((await t.store.variables.list(t.accountId, { limit: 1, page: 2 })).map((v) => v.key)).toEqual(['B']);
      expect(await t.store.variables.get(t.accountId, 'B')).toMatchObject({ value: 'secret-b', locked: true });
      expect(await t.store.variables.get(otherId, 'B')).toBeUndefined();
    });

    it('updates and deletes within the account', async () => {
      await t.store.variables.create(t.accountId, { key: 'A', value: 'one', locked: false, secret: false });
      const updated = await t.store.variables.update(t.accountId, 'A', { value: 'two', locked: true, secret: true });
      expect(updated).toMatchObject({ key: 'A', value: 'two', locked: true, secret: true });
      expect(updated?.updatedAt).not.toBeNull();
      expect(
        await t.store.variables.update(otherId, 'A', { value: 'x', locked: false, secret: false }),
      ).toBeUndefined();
      expect(await t.store.variables.delete(otherId, 'A')).toBe(false);
      expect(await t.store.variables.delete(t.accountId, 'A')).toBe(true);
      expect(await t.store.variables.get(t.accountId, 'A')).toBeUndefined();
    });
  });

  describe('snippets', () => {
    it('creates with numeric ids, gets one or many, lists in pages, updates and deletes within the account', async () => {
      const one = await t.store.snippets.create(t.accountId, { name: 'one', script: 'a()' });
      const two = await t.store.snippets.create(t.accountId, { name: 'two', script: 'b()' });
      const theirs = await t.store.snippets.create(otherId, { name: 'theirs', script: 'c()' });
      expect(one).toMatchObject({ accountId: t.accountId, name: 'one', script: 'a()', updatedAt: null });
      expect(two.id).toBeGreaterThan(one.id);
      expect(await t.store.snippets.get(t.accountId, one.id)).toEqual(one);
      expect(await t.store.snippets.get(t.accountId, theirs.id)).toBeUndefined();
      expect(
        (await t.store.snippets.getMany(t.accountId, [two.id, one.id, two.id, theirs.id, 9999]))
          .map((s) => s.id)
          .sort(),
      ).toEqual([one.id, two.id]);
      expect(await t.store.snippets.getMany(t.accountId, [])).toEqual([]);
      expect((await t.store.snippets.list(t.accountId, { limit: 1, page: 2 })).map((s) => s.id)).toEqual([two.id]);

      const updated = await t.store.snippets.update(t.accountId, one.id, { name: 'one, new', script: 'z()' });
      expect(updated).toMatchObject({ id: one.id, name: 'one, new', script: 'z()' });
      expect(updated?.updatedAt).not.toBeNull();
      expect(await t.store.snippets.update(t.accountId, theirs.id, { name: 'x', script: 'x' })).toBeUndefined();
      expect(await t.store.snippets.delete(t.accountId, theirs.id)).toBe(false);
      expect(await t.store.snippets.delete(t.accountId, one.id)).toBe(true);
      expect(await t.store.snippets.get(t.accountId, one.id)).toBeUndefined();
    });
  });

  describe('console sessions', () => {
    const session = (createdAt: string, expiresAt: string, lastSeenAt: string) => ({
      accountId: t.accountId,
      createdAt,
      expiresAt,
      lastSeenAt,
    });

    it('keeps only the token hash and finds a session until either expiry', async () => {
      const s = session('2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
      await t.store.consoleSessions.create('token-1', s);
      expect(await t.fresh.query('SELECT token_hash FROM console_sessions')).toEqual([
        { token_hash: hashKey('token-1') },
      ]);
      expect(
        await t.store.consoleSessions.findActive('token-1', '2026-01-01T01:00:00.000Z', '2026-01-01T00:00:00.000Z'),
      ).toEqual(s);
      expect(
        await t.store.consoleSessions.findActive('token-2', '2026-01-01T01:00:00.000Z', '2026-01-01T00:00:00.000Z'),
      ).toBeUndefined();
      // Idle since before idleSince, or past the absolute expiry.
      expect(
        await t.store.consoleSessions.findActive('token-1', '2026-01-01T01:00:00.000Z', '2026-01-01T00:00:00.001Z'),
      ).toBeUndefined();
      expect(
        await t.store.consoleSessions.findActive('token-1', '2026-01-02T00:00:00.000Z', '2026-01-01T00:00:00.000Z'),
      ).toBeUndefined();
    });

    it('touches (never backwards), deletes, and deletes what has expired', async () => {
      await t.store.consoleSessions.create(
        'token-1',
        session('2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-01T00:00:00.000Z'),
      );
      await t.store.consoleSessions.create(
        'token-2',
        session('2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-01T00:00:00.000Z'),
      );
      await t.store.consoleSessions.create(
        'token-3',
        session('2026-01-01T00:00:00.000Z', '2026-01-01T06:00:00.000Z', '2026-01-01T00:00:00.000Z'),
      );
      await t.store.consoleSessions.touch('token-1', '2026-01-01T05:00:00.000Z');
      await t.store.consoleSessions.touch('token-1', '2026-01-01T04:00:00.000Z');
      expect(
        (await t.store.consoleSessions.findActive('token-1', '2026-01-01T05:00:00.000Z', '2026-01-01T00:00:00.000Z'))
          ?.lastSeenAt,
      ).toBe('2026-01-01T05:00:00.000Z');
      // At 06:00 token-3 is past its absolute expiry and token-2 idle since before 04:00; token-1 stays.
      expect(await t.store.consoleSessions.deleteExpired('2026-01-01T06:00:00.000Z', '2026-01-01T04:00:00.000Z')).toBe(
        2,
      );
      expect(await t.fresh.query('SELECT token_hash FROM console_sessions')).toEqual([
        { token_hash: hashKey('token-1') },
      ]);
      await t.store.consoleSessions.delete('token-1');
      expect(await t.fresh.query('SELECT token_hash FROM console_sessions')).toEqual([]);
    });
  });

  describe('account settings and badges', () => {
    const newCheck = (name: string, body: Record<string, unknown> = {}, activated = true) =>
      t.store.checks.create({
        accountId: t.accountId,
        checkType: 'API',
        name,
        activated,
        muted: false,
        frequency: 1,
        frequencyOffset: null,
        locationIds: [],
        body: { name, ...body },
      });

    async function status(check: StoredCheck, flags: { failing?: boolean; responseTime?: number }) {
      let resultId: string | null = null;
      if (flags.responseTime !== undefined) {
        const payload = {
          responseTime: flags.responseTime,
          hasFailures: !!flags.failing,
          hasErrors: false,
          isDegraded: false,
        } as RunResult;
        const stored = await t.store.results.insertOnce({
          accountId: t.accountId,
          checkId: check.id,
          runId: `run-${check.id}`,
          checkName: check.name,
          locationId: '',
          runLocation: 'office',
          attempts: 1,
          payload,
        });
        resultId = stored.id;
      }
      await t.fresh.query(
        `INSERT INTO check_statuses (check_id, account_id, has_failures, has_errors, is_degraded, last_check_run_id, alert_state, created_at)
         VALUES (?, ?, ?, 0, 0, ?, 'NO_ALERT', '2026-01-01T00:00:00.000Z')`,
        [check.id, t.accountId, flags.failing ? 1 : 0, resultId],
      );
    }

    const newGroup = async (name: string, activated: boolean) =>
      Number(
        (
          await t.fresh.query(
            `INSERT INTO check_groups (account_id, name, activated, muted, concurrency, body, created_at)
             VALUES (?, ?, ?, 0, 1, '{}', '2026-01-01T00:00:00.000Z') RETURNING id`,
            [t.accountId, name, activated ? 1 : 0],
          )
        )[0]?.id,
      );

    it('settings default to badges off, and a put is read back', async () => {
      expect(await t.store.accountSettings.get(t.accountId)).toEqual({ badgesEnabled: false });
      expect(await t.store.accountSettings.put(t.accountId, { badgesEnabled: true })).toEqual({ badgesEnabled: true });
      expect(await t.store.accountSettings.put(t.accountId, { badgesEnabled: false })).toEqual({
        badgesEnabled: false,
      });
      expect(await t.store.accountSettings.put(t.accountId, { badgesEnabled: true })).toEqual({ badgesEnabled: true });
      expect(await t.store.accountSettings.get(otherId)).toEqual({ badgesEnabled: false });
    });

    it("a check's badge: nothing while badges are off, then its status and latest response time", async () => {
      const group = await newGroup('Paused', false);
      const check = await newCheck('Home');
      const grouped = await newCheck('In a paused group', { groupId: group });
      const fresh_ = await newCheck('Never ran');
      await status(check, { failing: true, responseTime: 42 });
      await status(grouped, { responseTime: 7 });
      expect(await t.store.badges.check(check.id)).toBeUndefined();

      await t.store.accountSettings.put(t.accountId, { badgesEnabled: true });
      expect(await t.store.badges.check(check.id)).toEqual({
        name: 'Home',
        checks: [
          {
            activated: true,
            hasResult: true,
            hasFailures: true,
            hasErrors: false,
            isDegraded: false,
            responseTime: 42,
          },
        ],
      });
      expect((await t.store.badges.check(grouped.id))?.checks).toEqual([
        expect.objectContaining({ activated: false, hasResult: true, responseTime: 7 }),
      ]);
      expect(await t.store.badges.check(fresh_.id)).toEqual({
        name: 'Never ran',
        checks: [
          {
            activated: true,
            hasResult: false,
            hasFailures: false,
            hasErrors: false,
            isDegraded: false,
            responseTime: null,
          },
        ],
      });
      expect(await t.store.badges.check('no-such-check')).toBeUndefined();
    });

    it("a group's badge sums up its member checks", async () => {
      const group = await newGroup('API', true);
      const up = await newCheck('up', { groupId: group });
      await newCheck('off', { groupId: group }, false);
      await newCheck('elsewhere');
      await status(up, { responseTime: 12 });
      expect(await t.store.badges.group(group)).toBeUndefined();

      await t.store.accountSettings.put(t.accountId, { badgesEnabled: true });
      const subject = await t.store.badges.group(group);
      expect(subject?.name).toBe('API');
      expect(subject?.checks).toEqual(
        expect.arrayContaining([
          {
            activated: true,
            hasResult: true,
            hasFailures: false,
            hasErrors: false,
            isDegraded: false,
            responseTime: 12,
          },
          {
            activated: false,
            hasResult: false,
            hasFailures: false,
            hasErrors: false,
            isDegraded: false,
            responseTime: null,
          },
        ]),
      );
      expect(subject?.checks).toHaveLength(2);
      expect(await t.store.badges.group(group + 1000)).toBeUndefined();
    });
  });
});
