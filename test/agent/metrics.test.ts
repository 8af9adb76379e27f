/**
 * GET /metrics on the agent's health port, scraped over HTTP from a real `outpost agent` process.
 * The agent leases real API checks from the protocol stub (a stand-in for the service on loopback,
 * so the test decides exactly which jobs exist) and runs them against a loopback HTTP target; the
 * counters and histogram counts must move by exactly what was run, and the exposition must hold no
 * key, URL, check id or name.
 */
import { readdir, stat } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AGENT_PATHS, type Job } from '../../src/shared/protocol.ts';
import { type Proc, startAgent } from '../e2e/harness.ts';
import { apiCheck } from './api-fixtures.ts';
import { startServer, tempDir } from './helpers.ts';
import { expectBoundedMetrics } from './metrics-rules.ts';
import { type Exposition, parseExposition, sampleValue } from '../helpers/prometheus-text.ts';
import { makeJob, ProtocolStub } from './protocol-stub.ts';

const API_KEY = 'pl_metrics_test_0123456789abcdef';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** A loopback target: /ok answers 200, /broken 503, /slow 200 after 50 ms, /held 200 when the test says. */
async function startTarget() {
  const held: Array<() => void> = [];
  let heldArrived: (() => void) | undefined;
  const server = await startServer((req: http.IncomingMessage, _body: string, res: http.ServerResponse) => {
    if (req.url === '/broken') return void res.writeHead(503).end('down');
    if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end('ok'), 50);
    if (req.url === '/held') {
      held.push(() => res.writeHead(200).end('ok'));
      heldArrived?.();
      return;
    }
    res.writeHead(200).end('ok');
  });
  cleanups.push(() => server.close());
  return {
    url: server.url,
    /** Resolves when a request to /held is waiting; release() answers it. */
    heldRequest: () =>
      new Promise<void>((resolve) => {
        if (held.length > 0) resolve();
        else heldArrived = resolve;
      }),
    release: () => {
      for (const answer of held.splice(0)) answer();
    },
  };
}

async function startAgainstStub(extraEnv: Record<string, string> = {}) {
  const stub = await ProtocolStub.start({ maxWaitSeconds: 5 });
  cleanups.push(() => stub.close());
  const spoolDir = tempDir();
  const agent = startAgent({
    API_KEY,
    API_URL: stub.url,
    SPOOL_DIR: spoolDir,
    UPTIME_CONCURRENCY: '3',
    JOB_CONCURRENCY: '1',
    // No runtimes and no Chromium: the agent runs API checks and reports a BROWSER job as an agent error.
    RUNTIMES_DIR: path.join(spoolDir, 'no-runtimes'),
    CHROMIUM_PATH: path.join(spoolDir, 'no-chromium'),
    ...extraEnv,
  });
  cleanups.push(() => agent.stop());
  const probes = await agent.waitForLog((l) => l.msg === 'probes listening');
  await agent.waitForLog((l) => l.msg === 'registered; taking work');
  const scrape = async (): Promise<{ text: string; contentType: string | null; metrics: Exposition }> => {
    const res = await fetch(`http://127.0.0.1:${probes.port}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    return { text, contentType: res.headers.get('content-type'), metrics: parseExposition(text) };
  };
  return { stub, agent, spoolDir, scrape };
}

function apiJob(url: string, name: string, extra: Parameters<typeof apiCheck>[1] = {}): Job {
  const job = makeJob({
    check: apiCheck(
      { url, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }] },
      extra,
    ),
  });
  return { ...job, check: { ...job.check, id: `chk-${name}-${job.runId}`, name: `secret check name ${name}` } };
}

/** Resolves once the agent has logged the delivery of every run in `runIds`. */
async function delivered(agent: Proc, runIds: string[]): Promise<void> {
  for (const runId of runIds) await agent.waitForLog((l) => l.msg === 'result delivered' && l.runId === runId);
}

async function spoolBytesOnDisk(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir))
    if (/^\d{16}\.json$/.test(name)) total += (await stat(path.join(dir, name))).size;
  return total;
}

const duration = 'outpost_agent_check_duration_seconds';

describe('GET /metrics on the agent health port', () => {
  it('counts the checks a real agent ran by type and verdict, and the results it sent', async () => {
    const target = await startTarget();
    const { stub, agent, scrape } = await startAgainstStub();
    const startedAt = Date.now() / 1000;
    const before = await scrape();
    expect(before.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');

    const browser = makeJob({ checkType: 'BROWSER' });
    const browserJob = { ...browser, check: { ...browser.check, name: 'secret check name browser' } };
    const jobs = [
      apiJob(`${target.url}/ok`, 'pass-1'),
      apiJob(`${target.url}/ok`, 'pass-2'),
      apiJob(`${target.url}/broken`, 'fail'),
      apiJob(`${target.url}/slow`, 'slow', { degradedResponseTime: 10, maxResponseTime: 20_000 }),
      browserJob,
    ];
    for (const job of jobs) stub.addJob(job);
    await delivered(
      agent,
      jobs.map((j) => j.runId),
    );
    const after = await scrape();
    const m = after.metrics;

    const moved = (name: string, labels: Record<string, string>) =>
      sampleValue(m, name, labels) - sampleValue(before.metrics, name, labels);
    expect(moved('outpost_agent_results_sent_total', { status: 'stored' })).toBe(5);
    expect(moved('outpost_agent_results_sent_total', { status: 'duplicate' })).toBe(0);
    expect(moved(`${duration}_count`, { check_type: 'API', verdict: 'passed' })).toBe(2);
    expect(moved(`${duration}_count`, { check_type: 'API', verdict: 'failed' })).toBe(1);
    expect(moved(`${duration}_count`, { check_type: 'API', verdict: 'degraded' })).toBe(1);
    expect(moved(`${duration}_count`, { check_type: 'BROWSER', verdict: 'error' })).toBe(1);
    const allCounts = m.samples.filter((s) => s.name === `${duration}_count`).reduce((n, s) => n + s.value, 0);
    expect(allCounts).toBe(5);
    // Seconds, not milliseconds: the slow target answered after 50 ms, well within a second.
    const slowSum = sampleValue(m, `${duration}_sum`, { check_type: 'API', verdict: 'degraded' });
    expect(slowSum).toBeGreaterThanOrEqual(0.05);
    expect(slowSum).toBeLessThan(5);
    expect(sampleValue(m, `${duration}_bucket`, { check_type: 'API', verdict: 'degraded', le: '+Inf' })).toBe(1);
    expect(sampleValue(m, `${duration}_bucket`, { check_type: 'API', verdict: 'degraded', le: '0.025' })).toBe(0);

    for (const name of [
      'outpost_agent_results_spooled_total',
      'outpost_agent_results_rejected_total',
      'outpost_agent_results_dropped_total',
    ]) {
      expect(sampleValue(m, name), name).toBe(0);
    }
    expect(sampleValue(m, 'outpost_agent_spool_results')).toBe(0);
    expect(sampleValue(m, 'outpost_agent_spool_bytes')).toBe(0);
    expect(sampleValue(m, 'outpost_agent_slots', { check_class: 'uptime' })).toBe(3);
    expect(sampleValue(m, 'outpost_agent_slots', { check_class: 'heavy' })).toBe(1);
    for (const check_class of ['uptime', 'heavy']) {
      expect(sampleValue(m, 'outpost_agent_jobs_running', { check_class })).toBe(0);
      expect(sampleValue(m, 'outpost_agent_jobs_queued', { check_class })).toBe(0);
    }
    expect(sampleValue(m, 'outpost_agent_free_slots', { check_class: 'uptime' })).toBe(3);
    expect(sampleValue(m, 'outpost_agent_artifact_upload_failures_total')).toBe(0);
    expect(sampleValue(m, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    // The leases that brought the jobs were answered after the test started.
    const lastPoll = sampleValue(m, 'outpost_agent_last_successful_poll_timestamp_seconds');
    expect(lastPoll).toBeGreaterThanOrEqual(startedAt);
    expect(lastPoll).toBeLessThanOrEqual(Date.now() / 1000);
    expectBoundedMetrics(m, { runtimes: [] });

    // Served unauthenticated, like the probes: so nothing in it may be a secret or name a target.
    const forbidden = [API_KEY, stub.url, target.url];
    for (const job of jobs) forbidden.push(job.runId, job.leaseId, job.check.id, job.check.name);
    for (const text of forbidden) expect(after.text, `the exposition holds ${text}`).not.toContain(text);
    // A port is a number of its own: as a substring it also matched inside a value such as the heap
    // size (port 34925 in 21349256), which failed CI without naming anything.
    for (const port of [new URL(stub.url).port, new URL(target.url).port])
      expect(after.text, `the exposition names port ${port}`).not.toMatch(new RegExp(`(?<!\\d)${port}(?!\\d)`));
  });

  it('shows a running check as a running job and one free slot fewer', async () => {
    const target = await startTarget();
    const { stub, agent, scrape } = await startAgainstStub();
    const job = apiJob(`${target.url}/held`, 'held');
    stub.addJob(job);
    await target.heldRequest();
    const during = (await scrape()).metrics;
    expect(sampleValue(during, 'outpost_agent_jobs_running', { check_class: 'uptime' })).toBe(1);
    expect(sampleValue(during, 'outpost_agent_free_slots', { check_class: 'uptime' })).toBe(2);
    expect(sampleValue(during, 'outpost_agent_free_slots', { check_class: 'heavy' })).toBe(1);
    target.release();
    await delivered(agent, [job.runId]);
    const after = (await scrape()).metrics;
    expect(sampleValue(after, 'outpost_agent_jobs_running', { check_class: 'uptime' })).toBe(0);
    expect(sampleValue(after, 'outpost_agent_free_slots', { check_class: 'uptime' })).toBe(3);
  });

  it('counts a result spooled while the service refuses it, shows the bytes on disk, then counts it sent', async () => {
    const target = await startTarget();
    const { stub, agent, spoolDir, scrape } = await startAgainstStub();
    stub.failWith.set(AGENT_PATHS.results, 503);
    const job = apiJob(`${target.url}/ok`, 'spooled');
    stub.addJob(job);
    // The live upload failed and the result went to disk; the spool's first retry failed too.
    await agent.waitForLog((l) => l.msg === 'result upload failed; will retry');
    const during = (await scrape()).metrics;
    expect(sampleValue(during, 'outpost_agent_results_spooled_total')).toBe(1);
    expect(sampleValue(during, 'outpost_agent_results_sent_total', { status: 'stored' })).toBe(0);
    expect(sampleValue(during, 'outpost_agent_spool_results')).toBe(1);
    const onDisk = await spoolBytesOnDisk(spoolDir);
    expect(onDisk).toBeGreaterThan(0);
    expect(sampleValue(during, 'outpost_agent_spool_bytes')).toBe(onDisk);

    stub.failWith.delete(AGENT_PATHS.results);
    await delivered(agent, [job.runId]);
    const after = (await scrape()).metrics;
    expect(sampleValue(after, 'outpost_agent_results_spooled_total')).toBe(1);
    expect(sampleValue(after, 'outpost_agent_results_sent_total', { status: 'stored' })).toBe(1);
    expect(sampleValue(after, 'outpost_agent_spool_results')).toBe(0);
    expect(sampleValue(after, 'outpost_agent_spool_bytes')).toBe(0);
  });

  it('counts a result the service refused for good as rejected', async () => {
    const target = await startTarget();
    const { stub, agent, scrape } = await startAgainstStub();
    stub.failWith.set(AGENT_PATHS.results, 422);
    const refused = apiJob(`${target.url}/ok`, 'refused');
    stub.addJob(refused);
    await agent.waitForLog((l) => l.runId === refused.runId && /refused the result for good/.test(String(l.msg)));
    const m = (await scrape()).metrics;
    expect(sampleValue(m, 'outpost_agent_results_rejected_total')).toBe(1);
    expect(sampleValue(m, 'outpost_agent_results_sent_total', { status: 'stored' })).toBe(0);
    expect(sampleValue(m, 'outpost_agent_results_spooled_total')).toBe(0);
  });
});
