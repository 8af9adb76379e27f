/**
 * The CPU the alert state machine adds to each stored result: CheckStatusService.resultStored (the
 * call the dispatcher makes after storing a result) on a real SQLite store, one check at two
 * locations, a failing result every seventh run so transitions and alert rows are included. The
 * results are stored first, as the dispatcher stores them; applying them (clearing their pending
 * mark included) is what is measured.
 * Target (issue 11): under 0.1 ms of CPU per result.
 *
 *   npm run bench -- alert-state [--results 20000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAccount } from '../../src/service/accounts.ts';
import { CheckStatusService, type StoredResultEvent } from '../../src/service/alerting/status-service.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import { storeRunResult } from '../../test/support/results-in-store.ts';
import { passingRunResult } from '../../test/support/results-run-result.ts';
import { numberFlags } from './_stats.ts';

const WARMUP = 1000;

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { results: 20_000 });
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-alert-state-'));
  const store = await openSqliteStore(dir);
  try {
    const { accountId } = await createAccount(store, 'Bench');
    const locations = await Promise.all(
      ['a', 'b'].map((slug) =>
        store.locations.create(accountId, { name: slug, slugName: slug, icon: 'location', proxyUrl: null }),
      ),
    );
    const check = await store.checks.create({
      accountId,
      checkType: 'API',
      name: 'bench',
      activated: true,
      muted: false,
      frequency: 1,
      frequencyOffset: null,
      locationIds: locations.map((l) => l.id),
      body: { name: 'bench' },
    });
    const service = new CheckStatusService({ store });
    const start = Date.parse('2026-01-01T00:00:00Z');
    const event = (i: number): StoredResultEvent => {
      const atMs = start + Math.floor(i / 2) * 60_000;
      const result = passingRunResult({
        runId: `run-${i}`,
        checkId: check.id,
        responseTime: 10 + (i % 13),
        hasFailures: Math.floor(i / 2) % 7 === 0,
      });
      const locationId = locations[i % 2]?.id ?? '';
      const run = {
        accountId,
        checkId: check.id,
        dueAt: new Date(atMs).toISOString(),
        locationId,
        checkType: 'API' as const,
      };
      return { run, check, resultId: `result-${i}`, resultType: 'FINAL', runLocation: 'a', result, atMs };
    };
    // Stored as the dispatcher stores them (pending their status update), outside the measured part.
    const events: StoredResultEvent[] = [];
    for (let i = 0; i < WARMUP + opts.results; i++) {
      const e = event(i);
      const stored = await storeRunResult(store, {
        accountId,
        checkId: check.id,
        runId: e.result.runId,
        checkName: check.name,
        locationId: e.run.locationId,
        runLocation: e.runLocation,
        atMs: e.atMs,
        pendingStatus: { dueAt: e.run.dueAt },
        outcome: e.result,
      });
      events.push({ ...e, resultId: stored.id });
    }
    for (let i = 0; i < WARMUP; i++) await service.resultStored(events[i] as StoredResultEvent);
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    for (let i = WARMUP; i < WARMUP + opts.results; i++) await service.resultStored(events[i] as StoredResultEvent);
    const wallMs = performance.now() - t0;
    const used = process.cpuUsage(cpu);
    const alerts = await store.checkAlerts.list(accountId, {
      from: new Date(0).toISOString(),
      to: new Date(start * 2).toISOString(),
      limit: 1,
      page: 1,
    });
    return {
      results: opts.results,
      cpuMsPerResult: Math.round(((used.user + used.system) / 1000 / opts.results) * 10_000) / 10_000,
      wallMsPerResult: Math.round((wallMs / opts.results) * 10_000) / 10_000,
      alertsRecorded: alerts.length > 0,
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
