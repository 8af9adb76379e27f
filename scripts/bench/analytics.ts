/**
 * Analytics and reporting at scale: stores `--results` results (default 1,000,000: 100 API checks,
 * one a minute for a week, from two locations, 2 % failed) through the result repository's insert,
 * the path the dispatcher takes, so the hourly rollups are what the service itself writes; then
 * starts the real service on loopback and measures, one request at a time over a keep-alive
 * connection, p50/p99 of:
 *   - GET /v1/analytics/api-checks/{id}, last 7 days, availability, avg, p95, p99 and a phase's p95
 *     (target p99 under 50 ms), and the same hourly and grouped by location;
 *   - GET /v1/reporting?quickRange=last7Days over every check (target p99 under 500 ms);
 * and the store's size on disk per million results (SQLite file and write-ahead log, checkpointed).
 * Results are inserted in transactions of 1,000 (the store's transaction joins the repository's),
 * so seeding measures the rollup writes, not a commit per result.
 *
 *   npm run bench -- analytics [--results 1000000] [--checks 100] [--requests 200]
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { createAccount } from '../../src/service/accounts.ts';
import { buildService } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import type { Store } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { createCheckForResults } from '../../test/support/results-in-store.ts';
import { measureGets, numberFlags } from './_stats.ts';

const MINUTE = 60_000;
const BATCH = 1_000;

function payloadOf(checkType: 'API', i: number): RunResult {
  const ms = 80 + ((i * 37) % 400);
  const failed = i % 50 === 0;
  return {
    runId: '',
    checkId: '',
    checkType,
    startedAt: '',
    stoppedAt: '',
    responseTime: ms,
    hasFailures: failed,
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    isCancelled: false,
    error: failed ? 'Expected status 200, got 503' : null,
    apiCheckResult: {
      request: { method: 'GET', url: 'https://example.com/health', data: '', headers: {}, params: {} },
      response: {
        status: failed ? 503 : 200,
        statusText: failed ? 'Service Unavailable' : 'OK',
        body: '{"status":"ok"}',
        headers: { 'content-type': 'application/json' },
        timings: null,
        timingPhases: {
          wait: 1,
          dns: 2 + (i % 7),
          tcp: 5 + (i % 11),
          tls: 12,
          firstByte: ms - 30,
          download: 3,
          total: ms,
        },
      },
      assertions: [],
      requestError: null,
      jobLog: null,
      jobAssets: null,
    },
    agent: { id: 'bench', version: '0' },
    scheduleLagMs: 3,
  } as RunResult;
}

/** Every check's results one a minute up to now, oldest first across checks, as they would arrive. */
async function seed(
  store: Store,
  accountId: string,
  checkIds: readonly string[],
  perCheck: number,
): Promise<{ seconds: number; cpuMsPerResult: number }> {
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const t0 = Date.now() - perCheck * MINUTE;
  let stored = 0;
  for (let minute = 0; minute < perCheck; minute += BATCH / checkIds.length) {
    await store.transaction(async () => {
      for (let m = minute; m < Math.min(perCheck, minute + BATCH / checkIds.length); m++) {
        for (const [c, checkId] of checkIds.entries()) {
          const i = m * checkIds.length + c;
          await store.results.insertOnce({
            accountId,
            checkId,
            runId: `run-${i}`,
            checkName: `Check ${c}`,
            locationId: 'loc',
            runLocation: m % 2 === 0 ? 'office' : 'dc-2',
            attempts: 1,
            resultType: 'FINAL',
            createdAt: new Date(t0 + m * MINUTE + c * 100).toISOString(),
            payload: payloadOf('API', i),
          });
          stored++;
        }
      }
    });
  }
  const cpu = process.cpuUsage(cpu0);
  return {
    seconds: Math.round((performance.now() - started) / 100) / 10,
    cpuMsPerResult: Math.round(((cpu.user + cpu.system) / 1000 / stored) * 1000) / 1000,
  };
}

const dirBytes = (dir: string): number =>
  readdirSync(dir).reduce(
    (n, f) => n + (statSync(path.join(dir, f)).isFile() ? statSync(path.join(dir, f)).size : 0),
    0,
  );

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { results: 1_000_000, checks: 100, requests: 200 });
  const perCheck = Math.max(1, Math.round(opts.results / opts.checks));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-analytics-'));
  try {
    const config = loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'ERROR' });
    const store = await openSqliteStore(dataDir);
    const { accountId, apiKey } = await createAccount(store, 'Bench');
    const checkIds: string[] = [];
    for (let c = 0; c < opts.checks; c++)
      checkIds.push((await createCheckForResults(store, { accountId, name: `Check ${c}`, tags: ['bench'] })).id);
    const seeded = await seed(store, accountId, checkIds, perCheck);
    const results = perCheck * opts.checks;
    const rollupRows = (await store.analytics.rollupsOfAccount(accountId, 0, Number.MAX_SAFE_INTEGER)).length;
    await store.close();
    const bytes = dirBytes(dataDir);

    const service = await buildService(config, { logger: false });
    const base = await service.start();
    const pool = new Pool(base, { connections: 1, pipelining: 1 });
    const headers = { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId };
    try {
      const randomCheck = () => checkIds[Math.floor(Math.random() * checkIds.length)] as string;
      const metrics = 'metrics=availability,responseTime_avg,responseTime_p95,responseTime_p99,dns_p95';
      const analytics = () => `/v1/analytics/api-checks/${randomCheck()}?${metrics}&quickRange=last7Days`;
      const hourly = () =>
        `/v1/analytics/api-checks/${randomCheck()}?${metrics}&quickRange=last7Days&aggregationInterval=60&groupBy=runLocation`;
      const reporting = () => '/v1/reporting?quickRange=last7Days';
      // Warm-up: JIT, prepared statements, SQLite page cache.
      await measureGets(pool, headers, analytics, 20);
      await measureGets(pool, headers, reporting, 3);
      return {
        results,
        checks: opts.checks,
        seedSeconds: seeded.seconds,
        seedCpuMsPerResult: seeded.cpuMsPerResult,
        rollupRows,
        storeBytes: bytes,
        storeMbPerMillionResults: Math.round((((bytes / results) * 1e6) / 1e6) * 10) / 10,
        unit: 'ms',
        loadAverage1m: Math.round((os.loadavg()[0] ?? 0) * 100) / 100,
        analytics7Days: await measureGets(pool, headers, analytics, opts.requests),
        analytics7DaysHourlyByLocation: await measureGets(pool, headers, hourly, opts.requests),
        reportingAllChecks7Days: await measureGets(
          pool,
          headers,
          reporting,
          Math.max(10, Math.ceil(opts.requests / 4)),
        ),
        targets: { analytics7DaysP99: 50, reportingP99: 500 },
      };
    } finally {
      await pool.close();
      await service.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
