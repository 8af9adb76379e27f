/**
 * The service's own probes, on its main port and at the agent's paths (src/agent/health.ts), so
 * operators learn one convention:
 *   GET /-/liveness   200 whenever the process answers: its event loop runs. It asks nothing of the
 *                     database, so an outage there never gets the service restarted.
 *   GET /-/readiness  200 only when the database answers a trivial query with every migration
 *                     applied and the service is not draining; else 503 with the reason.
 * No API key and nothing about the installation in them; left out of /openapi.json; not rate limited.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Store } from '../store/store.ts';

/** Whether the service is shutting down: readiness fails from the first moment so traffic moves elsewhere. */
export class Draining {
  #draining = false;
  get active(): boolean {
    return this.#draining;
  }
  start(): void {
    this.#draining = true;
  }
}

type Readiness = { status: 'ready' } | { status: 'draining' | 'unavailable'; reason: string };

function send(reply: FastifyReply, status: number, body: object) {
  return reply.status(status).header('cache-control', 'no-store').send(body);
}

export const probeRoutes: FastifyPluginAsync<{ store: Store; draining: Draining }> = async (
  app,
  { store, draining },
) => {
  const readiness = async (): Promise<Readiness> => {
    if (draining.active) return { status: 'draining', reason: 'the service is shutting down' };
    try {
      const ping = await store.ping();
      return ping.ready ? { status: 'ready' } : { status: 'unavailable', reason: ping.reason };
    } catch (err) {
      // The driver's message may name hosts and paths: it goes to the log, not to anonymous callers.
      app.log.warn({ err }, 'readiness: the database does not answer');
      return { status: 'unavailable', reason: 'the database does not answer' };
    }
  };

  app.get('/-/liveness', { schema: { hide: true } }, async (_request, reply) => send(reply, 200, { status: 'alive' }));
  app.get('/-/readiness', { schema: { hide: true } }, async (_request, reply) => {
    const state = await readiness();
    return send(reply, state.status === 'ready' ? 200 : 503, state);
  });
};
