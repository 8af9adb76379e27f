/**
 * Migration 026 on both backends: runs queued before it had no start deadline but the queue TTL, so
 * they get that one and are neither shed at once nor claimed before runs enqueued with a deadline.
 */
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, runMigrations } from '../../src/service/store/migrations/index.ts';
import { freshDatabaseEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

const at = (second: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();

describe.each(storeBackends())('migration 026 (run start deadline) on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);

  /** A database as versions before 026 left it: one run queued (due at second 0), one leased. */
  async function databaseBefore026(): Promise<void> {
    const db = fresh.connect();
    try {
      await runMigrations(
        db,
        MIGRATIONS.filter((m) => m.version < 26),
      );
      await db.run("INSERT INTO accounts (id, name, created_at) VALUES ('acc-1', 'Acme', $at)", { at: at(0) });
      await db.run(
        "INSERT INTO private_locations (id, account_id, name, slug_name, icon, created_at) VALUES ('loc-1', 'acc-1', 'Office', 'office', 'location', $at)",
        { at: at(0) },
      );
      const insert = `INSERT INTO runs (run_id, account_id, check_id, location_id, check_type, check_class, due_at, state, lease_id, agent_id,
                        lease_expires_at, timeout_ms, check_json, created_at)
                      VALUES ($runId, 'acc-1', $checkId, 'loc-1', 'API', 'uptime', $at, $state, $leaseId, $agentId, $expires, 30000, '{}', $at)`;
      await db.run(insert, {
        runId: 'queued-1',
        checkId: 'c1',
        at: at(0),
        state: 'queued',
        leaseId: null,
        agentId: null,
        expires: null,
      });
      await db.run(insert, {
        runId: 'leased-1',
        checkId: 'c2',
        at: at(0),
        state: 'leased',
        leaseId: 'lease-1',
        agentId: 'a1',
        expires: at(30),
      });
    } finally {
      await db.close();
    }
  }

  it('gives queued runs the queue TTL as their start deadline, and a run handed back a deadline when it comes back', async () => {
    await databaseBefore026();
    const store = await fresh.open();
    const req = {
      locationId: 'loc-1',
      agentId: 'a2',
      checkTypes: ['API' as const],
      runtimes: [],
      slots: { uptime: 1, heavy: 0 },
      leaseExpiresAt: at(999),
    };

    expect(await store.runs.shedLate({ ...req, now: at(359) })).toBe(0);
    // The lease of the other run ran out: it comes back, goes first and is not shed.
    expect((await store.runs.requeueExpiredLeases(at(359))).requeued.map((r) => r.runId)).toEqual(['leased-1']);
    expect(await store.runs.shedLate({ ...req, now: at(360) })).toBe(1);
    expect(await store.runs.get('queued-1')).toMatchObject({ state: 'expired' });
    expect((await store.runs.claim({ ...req, now: at(360) })).map((r) => r.runId)).toEqual(['leased-1']);
  });
});
