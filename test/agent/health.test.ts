import { afterEach, describe, expect, it } from 'vitest';
import {
  type HealthServer,
  type HealthSnapshot,
  type HealthSource,
  startHealthServer,
} from '../../src/agent/health.ts';

/** What the fake daemon reports besides its status. */
const FIGURES = {
  version: '1.2.3',
  agentId: 'agent-1',
  jobsRunning: 2,
  jobsQueued: 1,
  lastSuccessfulPollAt: '2026-01-01T00:00:00.000Z',
  spooled: 4,
  droppedResults: 5,
  uptimeSeconds: 6,
} satisfies Omit<HealthSnapshot, 'status'>;

class FakeSource implements HealthSource {
  ready = false;
  stopping = false;
  loop: { ok: true } | { ok: false; reason: string } = { ok: true };
  isReady() {
    return this.ready && !this.stopping;
  }
  jobLoopLiveness() {
    return this.loop;
  }
  snapshot(): HealthSnapshot {
    return {
      status: this.stopping ? 'stopping' : this.ready ? 'ready' : 'starting',
      ...FIGURES,
    };
  }
}

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function get(path: string) {
  const res = await fetch(`http://127.0.0.1:${server?.port}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('health server', () => {
  it('binds an ephemeral port and reports it', async () => {
    server = await startHealthServer({ host: '127.0.0.1', port: 0, source: new FakeSource() });
    expect(server.port).toBeGreaterThan(0);
  });

  it('readiness: 503 before registration, 200 when taking work, 503 while stopping', async () => {
    const source = new FakeSource();
    server = await startHealthServer({ host: '127.0.0.1', port: 0, source });
    expect(await get('/-/readiness')).toEqual({ status: 503, body: { status: 'starting' } });
    source.ready = true;
    expect(await get('/-/readiness')).toEqual({ status: 200, body: { status: 'ready' } });
    source.stopping = true;
    expect(await get('/-/readiness')).toEqual({ status: 503, body: { status: 'stopping' } });
  });

  it('liveness: 200 while the job loop is alive, 503 with the reason when it is not', async () => {
    const source = new FakeSource();
    server = await startHealthServer({ host: '127.0.0.1', port: 0, source });
    expect(await get('/-/liveness')).toEqual({ status: 200, body: { status: 'alive' } });
    source.loop = { ok: false, reason: 'the job loop made no progress for 99 s' };
    expect(await get('/-/liveness')).toEqual({
      status: 503,
      body: { status: 'unhealthy', reason: 'the job loop made no progress for 99 s' },
    });
  });

  it('liveness: 503 when the event loop was blocked beyond the threshold', async () => {
    server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      source: new FakeSource(),
      maxEventLoopLagMs: 50,
      lagWindowMs: 300,
    });
    // Block the loop (as a runaway synchronous task would) for 150 ms in every 200 ms until the answer
    // is in: every window the probe may read, even one that rolled over while the request was on its
    // way, saw the stalls.
    const stall = setInterval(() => {
      const until = Date.now() + 150;
      while (Date.now() < until) {
        /* busy */
      }
    }, 50);
    let res: Awaited<ReturnType<typeof get>>;
    try {
      while ((server?.eventLoopLagMs() ?? 0) <= 50) await new Promise((resolve) => setTimeout(resolve, 50));
      res = await get('/-/liveness');
    } finally {
      clearInterval(stall);
    }
    expect(res.status).toBe(503);
    expect(String(res.body.reason)).toMatch(/event loop lag/);
  });

  it('/health shows the figures', async () => {
    server = await startHealthServer({ host: '127.0.0.1', port: 0, source: new FakeSource() });
    const res = await get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'starting',
      ...FIGURES,
    });
  });

  it('/metrics serves the metrics text with its content type, and 404 on an agent without metrics', async () => {
    const metrics = {
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      text: async () => 'outpost_agent_spool_results 3\n',
    };
    server = await startHealthServer({ host: '127.0.0.1', port: 0, source: new FakeSource(), metrics });
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(metrics.contentType);
    expect(await res.text()).toBe('outpost_agent_spool_results 3\n');
    await server.close();
    server = await startHealthServer({ host: '127.0.0.1', port: 0, source: new FakeSource() });
    expect((await get('/metrics')).status).toBe(404);
  });

  it('/metrics answers 500 naming the cause when collecting fails', async () => {
    const metrics = {
      contentType: 'text/plain',
      text: () => Promise.reject(new Error('collect failed: spool unreadable')),
    };
    server = await startHealthServer({ host: '127.0.0.1', port: 0, source: new FakeSource(), metrics });
    expect(await get('/metrics')).toEqual({
      status: 500,
      body: { statusCode: 500, error: 'Internal Server Error', message: 'collect failed: spool unreadable' },
    });
  });

  it('other paths and methods are 404', async () => {
    server = await startHealthServer({ host: '127.0.0.1', port: 0, source: new FakeSource() });
    expect((await get('/nope')).status).toBe(404);
    expect((await get('/')).status).toBe(404);
    const post = await fetch(`http://127.0.0.1:${server.port}/health`, { method: 'POST' });
    expect(post.status).toBe(404);
  });
});
