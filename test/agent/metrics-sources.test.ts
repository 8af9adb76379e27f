/**
 * The parts of the agent's metrics a check against the protocol stub does not reach, each from the
 * real component, scraped over HTTP from the real health server: the sandbox pool with real
 * runtimes, artifact uploads to a real service, spool drops, and two agents in one process.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { register as globalRegistry } from 'prom-client';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ArtifactHttp } from '../../src/agent/artifacts/http.ts';
import { ArtifactUploader } from '../../src/agent/artifacts/uploader.ts';
import { type HealthSource, startHealthServer } from '../../src/agent/health.ts';
import { type AgentMetricsSources, createAgentMetrics } from '../../src/agent/metrics.ts';
import { defaultRuntimesDir, discoverRuntimes } from '../../src/agent/runtimes.ts';
import { SandboxPool } from '../../src/agent/sandbox/pool.ts';
import { ResultSpool } from '../../src/agent/spool.ts';
import { startArtifactService } from '../helpers/artifact-service.ts';
import { submitRequest as result, tempDir } from './helpers.ts';
import { expectBoundedMetrics } from './metrics-rules.ts';
import { type Exposition, parseExposition, sampleValue } from '../helpers/prometheus-text.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

const quiet = pino({ level: 'silent' });

/** The probes' source is not what these tests look at; the server needs one. */
const idleSource: HealthSource = {
  isReady: () => true,
  jobLoopLiveness: () => ({ ok: true }),
  snapshot: () => {
    throw new Error('not used');
  },
};

/** A health server serving metrics of `sources`; resolves to a scrape function. */
async function serve(sources: AgentMetricsSources): Promise<() => Promise<Exposition>> {
  const server = await startHealthServer({
    host: '127.0.0.1',
    port: 0,
    source: idleSource,
    metrics: createAgentMetrics(sources),
  });
  cleanups.push(() => server.close());
  return async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    return parseExposition(await res.text());
  };
}

describe('agent metrics from each component', () => {
  it('shows the sandbox pool per runtime: idle, busy and starting', { timeout: 60_000 }, async () => {
    const { runtimes } = await discoverRuntimes(defaultRuntimesDir());
    const ids = runtimes.map((r) => r.id);
    expect(ids, 'run npm run runtimes:install').toEqual(['2026.04', '2025.04']);
    const pool = new SandboxPool({ runtimes, size: 1, limits: { rssMb: 256, heapMb: 128 } });
    cleanups.push(() => pool.close());
    const scrape = await serve({ sandboxes: pool });

    const empty = await scrape();
    for (const runtime of ids) {
      for (const state of ['idle', 'busy', 'starting'])
        expect(sampleValue(empty, 'outpost_agent_sandboxes', { runtime, state })).toBe(0);
    }
    await pool.fill();
    const warm = await scrape();
    for (const runtime of ids) expect(sampleValue(warm, 'outpost_agent_sandboxes', { runtime, state: 'idle' })).toBe(1);

    const sandbox = await pool.acquire('2026.04');
    const busy = await scrape();
    expect(sampleValue(busy, 'outpost_agent_sandboxes', { runtime: '2026.04', state: 'busy' })).toBe(1);
    // The pool refills behind the job: its replacement is starting or already idle.
    const replacing = ['idle', 'starting'].map((state) =>
      sampleValue(busy, 'outpost_agent_sandboxes', { runtime: '2026.04', state }),
    );
    expect(replacing[0]! + replacing[1]!).toBe(1);
    expect(sampleValue(busy, 'outpost_agent_sandboxes', { runtime: '2025.04', state: 'busy' })).toBe(0);
    expectBoundedMetrics(busy, { runtimes: ids });

    await sandbox.dispose();
    expect(sampleValue(await scrape(), 'outpost_agent_sandboxes', { runtime: '2026.04', state: 'busy' })).toBe(0);
  });

  it('counts a failed artifact upload, the artifact the service refused, and one uploaded', async () => {
    const h = await startArtifactService();
    cleanups.push(() => h.close());
    const t = await h.tenant();
    const runId = await h.run(t);
    const dispatcher = new Agent();
    const work = tempDir();
    const uploader = await ArtifactUploader.open({
      config: { maxBytes: 1024 * 1024, queueDir: path.join(work, 'artifacts'), queueMaxBytes: 10 * 1024 * 1024 },
      http: new ArtifactHttp({ apiUrl: new URL(h.url), apiKey: t.key, dispatcher }),
      log: quiet,
    });
    cleanups.push(async () => {
      await uploader.close();
      await dispatcher.close();
    });
    const scrape = await serve({ artifacts: uploader });
    const file = path.join(work, 'log.txt');
    await writeFile(file, 'hello\n');

    // A run the service does not know: one failed attempt (404), then the artifact is dropped.
    const dropped = new Promise((resolve) => uploader.once('dropped', resolve));
    await uploader.add(randomUUID(), { name: 'log.txt', kind: 'log', path: file, contentType: 'text/plain' });
    await dropped;
    const uploaded = new Promise((resolve) => uploader.once('uploaded', resolve));
    await uploader.add(runId, { name: 'log.txt', kind: 'log', path: file, contentType: 'text/plain' });
    await uploaded;

    const m = await scrape();
    expect(sampleValue(m, 'outpost_agent_artifact_upload_failures_total')).toBe(1);
    expect(sampleValue(m, 'outpost_agent_artifacts_dropped_total')).toBe(1);
    expect(sampleValue(m, 'outpost_agent_artifacts_uploaded_total')).toBe(1);
    expect(sampleValue(m, 'outpost_agent_artifacts_queued')).toBe(0);
    expect(sampleValue(m, 'outpost_agent_artifact_queue_bytes')).toBe(0);
  });

  it('counts results dropped for the spool bound once each, however often it is scraped', async () => {
    const size = Buffer.byteLength(JSON.stringify(result('r1')));
    // Room for one result: each further one drops the oldest.
    const spool = await ResultSpool.open({ dir: tempDir(), maxBytes: Math.floor(size * 1.5), log: quiet });
    const scrape = await serve({ spool });
    for (const runId of ['r1', 'r2', 'r3']) await spool.append(result(runId));
    for (let i = 0; i < 2; i++) {
      const m = await scrape();
      expect(sampleValue(m, 'outpost_agent_results_dropped_total')).toBe(2);
      expect(sampleValue(m, 'outpost_agent_spool_results')).toBe(1);
      expect(sampleValue(m, 'outpost_agent_spool_bytes')).toBe(size);
    }
    await spool.append(result('r4'));
    expect(sampleValue(await scrape(), 'outpost_agent_results_dropped_total')).toBe(3);
  });

  it("keeps two agents' figures apart, and out of prom-client's global registry", async () => {
    const [one, two] = await Promise.all(
      [1, 2].map(() => ResultSpool.open({ dir: tempDir(), maxBytes: 1024 * 1024, log: quiet })),
    );
    const scrapeOne = await serve({ spool: one! });
    const scrapeTwo = await serve({ spool: two! });
    await one!.append(result('only-in-one'));
    expect(sampleValue(await scrapeOne(), 'outpost_agent_spool_results')).toBe(1);
    expect(sampleValue(await scrapeTwo(), 'outpost_agent_spool_results')).toBe(0);
    expect(sampleValue(await scrapeTwo(), 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(globalRegistry.getMetricsAsArray().map((m) => m.name)).toEqual([]);
  });
});
