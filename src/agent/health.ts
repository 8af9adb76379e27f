import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';

// Not `import { createServer } from 'node:http'`: an ES import of node:http reads all its exports,
// and its WebSocket/MessageEvent/CloseEvent getters load Node's bundled undici, a second undici in an
// idle agent's memory. getBuiltinModule returns the module without touching them.
const { createServer } = process.getBuiltinModule('node:http');

/** The figures GET /health shows. */
export interface HealthSnapshot {
  status: 'starting' | 'ready' | 'stopping';
  version: string;
  agentId: string;
  jobsRunning: number;
  jobsQueued: number;
  lastSuccessfulPollAt: string | null;
  spooled: number;
  droppedResults: number;
  uptimeSeconds: number;
}

/** What the probes ask of the daemon. */
export interface HealthSource {
  /** Registered and taking work; false before registration and from the first moment of shutdown. */
  isReady(): boolean;
  /** Whether the job loop is alive; the reason is shown on 503. */
  jobLoopLiveness(): { ok: true } | { ok: false; reason: string };
  snapshot(): HealthSnapshot;
}

/** What GET /metrics serves (./metrics.ts). */
export interface MetricsSource {
  contentType: string;
  text(): Promise<string>;
}

export interface HealthServerOptions {
  host: string;
  /** 0 binds an ephemeral port; the bound one is returned. */
  port: number;
  source: HealthSource;
  /** Served as GET /metrics; without it /metrics is 404. */
  metrics?: MetricsSource;
  /** Event-loop delay (p99 over the last window) above which liveness fails. */
  maxEventLoopLagMs?: number;
  /** How often the lag window rolls over. */
  lagWindowMs?: number;
}

export interface HealthServer {
  port: number;
  server: Server;
  /** The p99 event-loop delay of the last finished window, in ms. */
  eventLoopLagMs(): number;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

/**
 * GET /metrics in the Prometheus text format. Unauthenticated like the probes: the health port is
 * for the cluster, and the metrics hold no key, URL or check name (README, "The agent's health port
 * and metrics").
 */
async function sendMetrics(res: ServerResponse, metrics: MetricsSource): Promise<void> {
  try {
    const text = await metrics.text();
    res.writeHead(200, {
      'content-type': metrics.contentType,
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
    });
    res.end(text);
  } catch (err) {
    send(res, 500, { statusCode: 500, error: 'Internal Server Error', message: (err as Error).message });
  }
}

/**
 * The agent's probes (spec: "Private location agent probes") and its metrics, on plain node:http: no
 * framework is worth pulling into the agent for four GET routes, and a probe must not depend on much.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const maxLag = options.maxEventLoopLagMs ?? 2_000;
  const windowMs = options.lagWindowMs ?? 5_000;
  // The histogram is read and reset each window, so a past stall does not fail liveness forever; a
  // loop blocked right now cannot answer the probe at all, which the orchestrator also sees as dead.
  const histogram = monitorEventLoopDelay({ resolution: 20 });
  histogram.enable();
  let lastLagMs = 0;
  const roll = setInterval(() => {
    lastLagMs = histogram.count > 0 ? histogram.percentile(99) / 1e6 : 0;
    histogram.reset();
  }, windowMs);
  roll.unref();

  const { source } = options;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 404, { statusCode: 404, error: 'Not Found', message: `${req.method} ${path} is not a probe` });
      return;
    }
    try {
      switch (path) {
        case '/-/readiness': {
          const ready = source.isReady();
          send(res, ready ? 200 : 503, { status: ready ? 'ready' : source.snapshot().status });
          return;
        }
        case '/-/liveness': {
          if (lastLagMs > maxLag) {
            send(res, 503, {
              status: 'unhealthy',
              reason: `event loop lag ${Math.round(lastLagMs)} ms is above ${maxLag} ms`,
            });
            return;
          }
          const loop = source.jobLoopLiveness();
          send(res, loop.ok ? 200 : 503, loop.ok ? { status: 'alive' } : { status: 'unhealthy', reason: loop.reason });
          return;
        }
        case '/health':
          send(res, 200, source.snapshot());
          return;
        case '/metrics':
          if (options.metrics) {
            void sendMetrics(res, options.metrics);
            return;
          }
          send(res, 404, { statusCode: 404, error: 'Not Found', message: 'this agent serves no metrics' });
          return;
        default:
          send(res, 404, { statusCode: 404, error: 'Not Found', message: `no such path: ${path}` });
      }
    } catch (err) {
      send(res, 500, { statusCode: 500, error: 'Internal Server Error', message: (err as Error).message });
    }
  });
  // Probes are tiny; do not let a stuck client hold sockets open during shutdown.
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    port: (server.address() as AddressInfo).port,
    server,
    eventLoopLagMs: () => lastLagMs,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(roll);
        histogram.disable();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
