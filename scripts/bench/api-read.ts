/**
 * Read latency of the incident API at scale: seeds 100,000 status page incidents (each with two
 * updates and one or two services) into the embedded store, starts the real service on loopback
 * and measures, one request at a time over a keep-alive connection, p50/p99 of:
 *   - GET /v1/status-pages/incidents            (the first page, 20 newest)
 *   - GET /v1/status-pages/incidents?nextId=... (a page 90,000 incidents deep)
 *   - GET /v1/status-pages/incidents/{id}       (random incidents)
 * The client runs in the same process as the service, so its own parsing counts against the figures.
 *
 *   npm run bench -- api-read [--incidents 100000] [--requests 2000]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { createAccount } from '../../src/service/accounts.ts';
import { buildService } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { runMigrations } from '../../src/service/store/migrations/index.ts';
import { SqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import { openDatabase } from '../../src/service/store/sqlite/db.ts';
import { encodeSeqCursor } from '../../src/service/store/repos/seq-cursor.ts';
import { measureGets, numberFlags, summarize } from './_stats.ts';

const SEVERITIES = ['CRITICAL', 'MAJOR', 'MEDIUM', 'MINOR'] as const;

/**
 * Direct inserts in one transaction: the API would take minutes for 100,000 incidents and measure
 * nothing of interest. Rows are what the repositories write (see store/sqlite/incidents.ts).
 */
async function seed(
  dataDir: string,
  accountId: string,
  incidents: number,
): Promise<{ ids: string[]; seconds: number }> {
  const started = performance.now();
  const db = openDatabase(dataDir);
  await runMigrations(new SqliteDatabase(db));
  const serviceIds = Array.from({ length: 10 }, () => randomUUID());
  const t0 = Date.parse('2024-01-01T00:00:00Z');
  const ids: string[] = [];
  db.exec('BEGIN');
  const insertService = db.prepare('INSERT INTO sp_services (id, account_id, name, created_at) VALUES (?, ?, ?, ?)');
  serviceIds.forEach((id, i) => {
    insertService.run(id, accountId, `Service ${i}`, new Date(t0).toISOString());
  });
  const insertIncident = db.prepare(
    `INSERT INTO incidents (id, account_id, name, severity, last_update_status, duration, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const link = db.prepare('INSERT INTO incident_services (incident_id, service_id, position) VALUES (?, ?, ?)');
  const insertUpdate = db.prepare(
    `INSERT INTO incident_updates (id, incident_id, description, status, public_date, notify_subscribers, created_at)
     VALUES (?, ?, ?, ?, ?, 0, ?)`,
  );
  for (let i = 0; i < incidents; i++) {
    const id = randomUUID();
    ids.push(id);
    const created = new Date(t0 + i * 60_000).toISOString();
    const resolved = new Date(t0 + i * 60_000 + 45 * 60_000).toISOString();
    insertIncident.run(id, accountId, `Incident ${i}`, SEVERITIES[i % 4]!, 'RESOLVED', 45, created, resolved);
    link.run(id, serviceIds[i % 10]!, 0);
    if (i % 2 === 0) link.run(id, serviceIds[(i + 1) % 10]!, 1);
    insertUpdate.run(randomUUID(), id, 'We are investigating elevated error rates.', 'INVESTIGATING', created, created);
    insertUpdate.run(
      randomUUID(),
      id,
      'The fix is deployed; error rates are back to normal.',
      'RESOLVED',
      resolved,
      resolved,
    );
  }
  db.exec('COMMIT');
  db.close();
  return { ids, seconds: Math.round((performance.now() - started) / 100) / 10 };
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { incidents: 100_000, requests: 2_000 });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-api-read-'));
  try {
    const config = loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'ERROR' });
    // The account comes first (through the store, as `outpost account create` does).
    const setup = await buildService(config, { logger: false });
    const { accountId, apiKey } = await createAccount(setup.store, 'Bench');
    await setup.stop();
    const seeded = await seed(dataDir, accountId, opts.incidents);

    const service = await buildService(config, { logger: false });
    // The service's own handling time of each request (routing, auth, SQLite, serialization), so
    // CPU contention from other processes on the client side can be told apart from the service.
    let serverTimes: number[] = [];
    service.app.addHook('onResponse', async (_request, reply) => {
      serverTimes.push(reply.elapsedTime);
    });
    const base = await service.start();
    const pool = new Pool(base, { connections: 1, pipelining: 1 });
    const headers = { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId };
    try {
      // A cursor 90% of the way down the list: what a client gets after paging that far.
      const deepCursor = encodeSeqCursor('inc', Math.max(1, Math.floor(opts.incidents * 0.1)));
      let k = 0;
      const randomId = () => seeded.ids[Math.floor(Math.random() * seeded.ids.length)]!;
      // Warm-up: JIT, prepared statements, SQLite page cache.
      await measureGets(
        pool,
        headers,
        () => (k++ % 2 ? '/v1/status-pages/incidents' : `/v1/status-pages/incidents/${randomId()}`),
        300,
      );
      const scenario = async (paths: () => string, n: number) => {
        serverTimes = [];
        const cpu0 = process.cpuUsage();
        const roundTrip = await measureGets(pool, headers, paths, n);
        const cpu = process.cpuUsage(cpu0);
        // CPU time per request (client and service, this process): unaffected by other processes.
        const cpuMsPerRequest = Math.round(((cpu.user + cpu.system) / 1000 / n) * 100) / 100;
        return { roundTrip, server: summarize(serverTimes), cpuMsPerRequest };
      };
      const listFirstPage = await scenario(() => '/v1/status-pages/incidents', opts.requests);
      const listDeepPage = await scenario(() => `/v1/status-pages/incidents?nextId=${deepCursor}`, opts.requests);
      const listLimit100 = await scenario(() => '/v1/status-pages/incidents?limit=100', Math.ceil(opts.requests / 4));
      const readOne = await scenario(() => `/v1/status-pages/incidents/${randomId()}`, opts.requests);
      return {
        incidents: opts.incidents,
        seedSeconds: seeded.seconds,
        unit: 'ms',
        // Other processes competing for the CPU show up in the tail; record how busy the machine was.
        loadAverage1m: Math.round(os.loadavg()[0]! * 100) / 100,
        listFirstPage,
        listDeepPage,
        listLimit100,
        readOne,
      };
    } finally {
      await pool.close();
      await service.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
