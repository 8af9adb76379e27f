/**
 * Nothing lost between storing a result and applying it to its check's status: a result stored
 * but not applied (the service died in between) is applied by the next dispatcher to start, once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CheckStatusService } from '../../src/service/alerting/status-service.ts';
import { Dispatcher } from '../../src/service/dispatch/dispatcher.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import type { Store, StoredCheck } from '../../src/service/store/store.ts';
import { alertHistory, answerRun } from '../helpers/alert-history.ts';
import {
  type Harness,
  resultFor,
  silentLog,
  startHarness,
  type TestAgent,
  type TestTenant,
} from '../helpers/dispatch-harness.ts';
import { passingRunResult } from '../support/results-run-result.ts';

let h: Harness;
let tenant: TestTenant;
let agent: TestAgent;

beforeEach(async () => {
  h = await startHarness();
  tenant = await h.tenant();
  agent = await h.agent(tenant);
});

afterEach(async () => {
  await h.close();
});

const alerts = (store: Store, checkId: string) => alertHistory(store, tenant.accountId, checkId);

/** What the dispatcher's submitResult does up to the crash: the result is stored, its status not yet applied. */
async function storeWithoutApplying(check: StoredCheck, atMs: number): Promise<string> {
  const dueAt = new Date(atMs).toISOString();
  const stored = await h.store.results.insertOnce({
    accountId: tenant.accountId,
    checkId: check.id,
    runId: crypto.randomUUID(),
    checkName: check.name,
    locationId: tenant.location.id,
    runLocation: tenant.location.slugName,
    attempts: 1,
    resultType: 'FINAL',
    createdAt: dueAt,
    pendingStatus: { dueAt },
    payload: passingRunResult({
      runId: '',
      checkId: check.id,
      startedAt: dueAt,
      stoppedAt: dueAt,
      responseTime: 30,
      hasFailures: true,
      error: 'status 503',
      agent: { id: agent.agentId, version: '0' },
    }),
  });
  return stored.id;
}

describe('results stored but not applied to their status', () => {
  it('a new dispatcher on the same database applies them on start, in storage order, once', async () => {
    const check = await h.check(tenant);
    const t0 = Date.parse('2026-11-23T09:00:00Z');
    const firstId = await storeWithoutApplying(check, t0);
    await storeWithoutApplying(check, t0 + 60_000);
    expect(await alerts(h.store, check.id)).toEqual([]);

    const store = await openSqliteStore(h.config.dataDir);
    try {
      const restarted = new Dispatcher({ store, config: h.config, log: silentLog, sweepIntervalMs: 3_600_000 });
      await restarted.start();
      await restarted.stop();
      const raised = await alerts(store, check.id);
      expect(raised.map((a) => a.alertType)).toEqual(['ALERT_FAILURE']);
      // The first stored result is the one that raised it, at the time it was stored.
      expect(raised[0]).toMatchObject({
        resultId: firstId,
        createdAt: new Date(t0).toISOString(),
        error: 'status 503',
      });
      expect(await store.checkStatuses.get(tenant.accountId, check.id)).toMatchObject({
        hasFailures: true,
        alert: { consecutiveFailedRuns: 2 },
      });

      // Replayed again (another restart): nothing new.
      const again = new Dispatcher({ store, config: h.config, log: silentLog, sweepIntervalMs: 3_600_000 });
      await again.start();
      await again.stop();
      expect(await alerts(store, check.id)).toHaveLength(1);
      expect(await store.checkStatuses.get(tenant.accountId, check.id)).toMatchObject({
        alert: { consecutiveFailedRuns: 2 },
      });
    } finally {
      await store.close();
    }
  });

  it('a result applied as it is submitted leaves nothing to replay', async () => {
    const check = await h.check(tenant);
    await answerRun(h, agent, check, { hasFailures: true, error: 'status 500' });
    expect(await h.store.results.listStatusPending({ limit: 10 })).toEqual([]);
    await h.dispatcher.stop();
    await h.dispatcher.start();
    expect((await alerts(h.store, check.id)).map((a) => a.alertType)).toEqual(['ALERT_FAILURE']);
  });

  it('a result whose status update failed is replayed by a later sweep once it is a minute old', async () => {
    let notifierUp = false;
    // An in-transaction listener that throws rolls the status update back, as any failure inside it would.
    const statuses = new CheckStatusService({
      store: h.store,
      onAlert: () => {
        if (!notifierUp) throw new Error('the notifier is down');
      },
    });
    const dispatcher = new Dispatcher({
      store: h.store,
      config: h.config,
      log: silentLog,
      now: () => h.clock.now,
      sweepIntervalMs: 3_600_000,
      statuses,
    });
    await dispatcher.start();
    try {
      const check = await h.check(tenant);
      await dispatcher.enqueue(check, tenant.location.id, h.clock.now);
      const [job] = await agent.lease();
      if (!job) throw new Error('no job to answer');
      const result = resultFor(job, agent.agentId, { hasFailures: true, error: 'status 500' });
      expect(
        (await dispatcher.submitResult(tenant.location, { agentId: agent.agentId, leaseId: job.leaseId, result }))
          .status,
      ).toBe('stored');
      expect(await alerts(h.store, check.id)).toEqual([]);
      notifierUp = true;
      // Half a minute on, the result might still be on its way through a live submit: left alone.
      h.clock.now += 30_000;
      await dispatcher.sweep();
      expect(await alerts(h.store, check.id)).toEqual([]);
      h.clock.now += 61_000;
      await dispatcher.sweep();
      expect((await alerts(h.store, check.id)).map((a) => a.alertType)).toEqual(['ALERT_FAILURE']);
    } finally {
      await dispatcher.stop();
    }
  });
});
