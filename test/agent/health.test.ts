import { afterEach, describe, expect, it } from 'vitest';
import { type HealthServer, type HealthSnapshot, type HealthSource, startHealthServer } from '../../src/agent/health.ts';

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
      version: '1.2.3',
      agentId: 'agent-1',
      jobsRunning: 2,
      jobsQueued: 1,
      lastSuccessfulPollAt: '2026-01-01T00:00:00.000Z',
      spooled: 4,
      droppedResults: 5,
      uptimeSeconds: 6,
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
    // Block the loop (as a runaway synchronous task would) until a finished window has seen it.
    while ((server?.eventLoopLagMs() ?? 0) <= 50) {
      const until = Date.now() + 200;
      while (Date.now() < until) {
        /* busy */
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const res = await get('/-/liveness');
    expect(res.status).toBe(503);
    expect(String(res.body.reason)).toMatch(/event loop lag/);
  });

  it('/health shows the figures', async () => {
    server = await startHealthServer({ host: '127.0.0.1', port: 0, source: new FakeSource() });
    const res = await get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'starting',
      version: '1.2.3',
      agentId: 'agent-1',
      jobsRunning: 2,
      jobsQueued: 1,
      lastSuccessfulPollAt: '2026-01-01T00:00:00.000Z',
      spooled: 4,
      droppedResults: 5,
      uptimeSeconds: 6,
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
