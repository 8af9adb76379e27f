/**
 * Server time and transferred size of a public dashboard of 500 checks, for `npm run bench -- pages`
 * (scripts/bench/pages.ts calls benchDashboardPage). The dashboard shows all its checks on one page
 * (paginate off: the worst case; paginated by 15, a page reads the figures of 15), each with a day of
 * results every 5 minutes in its statistics, a status, and an open incident. Requests go one at a time
 * over a keep-alive connection on loopback; the client runs in this process, so its own parsing counts
 * against the figures. gzipBytes: the page and every stylesheet and script it loads, gzip-compressed
 * as the service sends them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Pool } from 'undici';
import { createAccount } from '../../src/service/accounts.ts';
import { INITIAL_STATE } from '../../src/service/alerting/state-machine.ts';
import { buildService } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { inTransaction, openDatabase } from '../../src/service/store/sqlite/db.ts';
import { addRollup } from '../../src/service/store/sqlite/check-stats.ts';
import type { Store } from '../../src/service/store/store.ts';
import { summarize } from './_stats.ts';

const DAY_MS = 86_400_000;
const EVERY_MS = 5 * 60_000;

async function seedChecks(store: Store, accountId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const check = await store.checks.create({
      accountId,
      checkType: 'API',
      name: `Service endpoint ${i}`,
      activated: true,
      muted: false,
      frequency: 5,
      frequencyOffset: null,
      locationIds: [],
      body: { tags: ['prod', i % 2 ? 'api' : 'web'] },
    });
    ids.push(check.id);
  }
  return ids;
}

/** The latest result and status of each check, through the repositories the dispatcher uses. */
async function seedStatuses(store: Store, accountId: string, ids: readonly string[]): Promise<void> {
  const at = new Date().toISOString();
  for (const [i, checkId] of ids.entries()) {
    const failing = i % 50 === 0;
    const runId = `bench-${checkId}`;
    const payload = { runId, checkId, checkType: 'API' as const, startedAt: at, stoppedAt: at, responseTime: 120, hasFailures: failing, hasErrors: false, isDegraded: false, overMaxResponseTime: false, isCancelled: false, error: null, apiCheckResult: null, agent: { id: 'bench', version: '0' }, scheduleLagMs: 0 };
    const stored = await store.results.insertOnce({ accountId, checkId, runId, checkName: `Service endpoint ${i}`, locationId: 'bench', runLocation: 'office', attempts: 1, createdAt: at, pendingStatus: { dueAt: at }, payload });
    const status = { hasFailures: failing, hasErrors: false, isDegraded: false, longestRun: 120, shortestRun: 120, lastRunLocation: 'office', lastCheckRunId: stored.id, sslDaysRemaining: null, alert: INITIAL_STATE };
    await store.checkStatuses.applyResult(accountId, checkId, stored.id, at, () => ({ status, alerts: [], nextReminderAt: null }));
  }
}

/** A day of statistics per check, written as stored results write them, in one transaction. */
function seedRollups(dataDir: string, accountId: string, ids: readonly string[], nowMs: number): void {
  const db = openDatabase(dataDir);
  inTransaction(db, () => {
    for (const [i, checkId] of ids.entries()) {
      for (let t = nowMs - DAY_MS + EVERY_MS; t <= nowMs; t += EVERY_MS) {
        const responseTimeMs = 80 + ((t / EVERY_MS + i) % 17) * 9;
        addRollup(db, { accountId, checkId, atMs: t, failed: (t / EVERY_MS + i) % 97 === 0, responseTimeMs });
      }
    }
  });
  db.close();
}

async function gzipSize(pool: Pool, path: string): Promise<{ bytes: number; body: string }> {
  const res = await pool.request({ method: 'GET', path, headers: { 'accept-encoding': 'gzip' } });
  const raw = Buffer.from(await res.body.arrayBuffer());
  if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode}`);
  const body = res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
  return { bytes: raw.length, body };
}

/** The page plus every stylesheet and script it links, compressed. */
async function transferred(pool: Pool, page: string): Promise<number> {
  const { bytes, body } = await gzipSize(pool, page);
  const linked = [...body.matchAll(/<(?:link rel="stylesheet" href|script src)="([^"]+)"/g)].map((m) => (m[1] ?? '').replaceAll('&amp;', '&'));
  let total = bytes;
  for (const url of linked) total += (await gzipSize(pool, url)).bytes;
  return total;
}

export async function benchDashboardPage(opts: { checks?: number; requests?: number } = {}): Promise<{ p50Ms: number; p99Ms: number; gzipBytes: number }> {
  const checks = opts.checks ?? 500;
  const requests = opts.requests ?? 1000;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'outpost-bench-dashboard-'));
  const service = await buildService(loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'ERROR' }), { logger: false });
  const url = await service.start();
  const pool = new Pool(url, { connections: 1 });
  try {
    const { accountId } = await createAccount(service.store, 'Bench');
    const ids = await seedChecks(service.store, accountId, checks);
    await seedStatuses(service.store, accountId, ids);
    seedRollups(dataDir, accountId, ids, Date.now());
    const dashboard = await service.store.dashboards.create(accountId, {
      body: { header: 'Bench', tags: ['prod'], useTagsAndOperator: false, paginate: false, checksPerPage: 20, paginationRate: 60, refreshRate: 60, width: 'FULL', sortByStatus: true, expandChecks: false, hideTags: false, enableIncidents: true, showHeader: true, showCheckRunLinks: true, showGroupNames: true, showP95: true, showP99: true, customCSS: '.check__name { font-weight: 700; }', isPrivate: false, customUrl: 'bench', customDomain: null },
      customUrlKey: 'bench',
      customDomainKey: null,
      isPrivate: false,
    });
    await service.store.dashboardIncidents.create(accountId, dashboard.id, { name: 'Elevated latency', impact: 'MINOR', startedAt: new Date().toISOString(), stoppedAt: null }, { status: 'INVESTIGATING', description: 'Looking into it' });
    const times: number[] = [];
    for (let i = 0; i < requests + 20; i++) {
      const started = performance.now();
      const res = await pool.request({ method: 'GET', path: '/dashboards/bench' });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`GET /dashboards/bench: ${res.statusCode}`);
      if (i >= 20) times.push(performance.now() - started);
    }
    const { p50, p99 } = summarize(times);
    return { p50Ms: p50, p99Ms: p99, gzipBytes: await transferred(pool, '/dashboards/bench') };
  } finally {
    await pool.close();
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
