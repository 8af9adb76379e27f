/**
 * The service's own probes, GET /-/liveness and GET /-/readiness, on a real service on loopback:
 * ready only while the database answers with every migration applied and the service is not
 * draining; alive whenever the process answers. `outpost serve` drains on SIGTERM.
 */
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Service } from '../../src/service/app.ts';
import { DB_FILE } from '../../src/service/store/sqlite/db.ts';
import { startService, tempDir } from '../e2e/harness.ts';
import { type RunningService, startRunningService } from '../helpers/running-service.ts';

async function probe(
  baseUrl: string,
  name: 'readiness' | 'liveness',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${baseUrl}/-/${name}`);
  expect(res.headers.get('cache-control')).toBe('no-store');
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('probes of a running service', () => {
  let running: RunningService;
  let service: Service;
  let baseUrl: string;

  beforeEach(async () => {
    running = await startRunningService();
    ({ service, baseUrl } = running);
  });
  afterEach(() => running.stop());

  it('is ready and alive while the database answers, without an API key', async () => {
    expect(await probe(baseUrl, 'readiness')).toEqual({ status: 200, body: { status: 'ready' } });
    expect(await probe(baseUrl, 'liveness')).toEqual({ status: 200, body: { status: 'alive' } });
    const head = await fetch(`${baseUrl}/-/readiness`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('is not ready once the database is closed, but still alive', async () => {
    await service.store.close();
    const readiness = await probe(baseUrl, 'readiness');
    expect(readiness.status).toBe(503);
    expect(readiness.body).toEqual({ status: 'unavailable', reason: 'the database does not answer' });
    expect(await probe(baseUrl, 'liveness')).toEqual({ status: 200, body: { status: 'alive' } });
  });

  it('is not ready while a migration this code knows is not applied', async () => {
    const db = new DatabaseSync(path.join(running.dataDir, DB_FILE));
    try {
      db.exec('DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)');
    } finally {
      db.close();
    }
    const readiness = await probe(baseUrl, 'readiness');
    expect(readiness.status).toBe(503);
    expect(readiness.body).toEqual({ status: 'unavailable', reason: '1 database migration is not applied yet' });
  });

  it('is not ready while draining, and keeps serving the API meanwhile', async () => {
    service.drain();
    expect(await probe(baseUrl, 'readiness')).toEqual({
      status: 503,
      body: { status: 'draining', reason: 'the service is shutting down' },
    });
    expect((await probe(baseUrl, 'liveness')).status).toBe(200);
    const ping = await fetch(`${baseUrl}/ping/no-such-token`);
    expect(ping.status).toBe(404);
  });

  it('leaves the probes out of /openapi.json', async () => {
    const doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/-/'))).toEqual([]);
    expect(Object.keys(doc.paths)).toContain('/v1/checks');
  });
});

describe('outpost serve on SIGTERM', () => {
  it('drains for SHUTDOWN_DRAIN_SECONDS (not ready, still serving), and a second signal ends the drain', async () => {
    const data = await tempDir('drain');
    const { proc, url } = await startService({ DATA_DIR: data.dir, SHUTDOWN_DRAIN_SECONDS: '120' });
    try {
      expect((await probe(url, 'readiness')).status).toBe(200);
      proc.child.kill('SIGTERM');
      await proc.waitForLog((l) => l.msg === 'draining: readiness fails, requests are still served');
      expect(await probe(url, 'readiness')).toEqual({
        status: 503,
        body: { status: 'draining', reason: 'the service is shutting down' },
      });
      expect((await probe(url, 'liveness')).status).toBe(200);
      expect(await proc.stop('SIGTERM')).toBe(0);
    } finally {
      await proc.stop('SIGKILL');
      await data.remove();
    }
  });
});
