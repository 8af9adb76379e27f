/**
 * GET /metrics (Prometheus text format) and the hook that times every HTTP request for it.
 *
 * The endpoint is meant to be scraped from inside the cluster. Without METRICS_TOKEN it is open, so
 * keep the port off the internet or route /metrics away at the ingress; with METRICS_TOKEN it asks
 * for `Authorization: Bearer <METRICS_TOKEN>`. It is not part of the public API (hidden from
 * /openapi.json).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { bearerToken } from '../http/auth.ts';
import { UnauthorizedError } from '../http/errors.ts';
import type { ServiceMetrics } from './service-metrics.ts';

export const METRICS_PATH = '/metrics';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Compares digests, so neither the token's length nor its prefix leaks through timing. */
function tokenMatches(given: string | undefined, token: string): boolean {
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

export const metricsRoute: FastifyPluginAsync<{ metrics: ServiceMetrics; token: string | undefined }> = async (
  app,
  { metrics, token },
) => {
  app.get(METRICS_PATH, { schema: { hide: true } }, async (request, reply) => {
    if (token !== undefined && !tokenMatches(bearerToken(request), token)) {
      throw new UnauthorizedError('GET /metrics needs the header "Authorization: Bearer <METRICS_TOKEN>"');
    }
    const body = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(body);
  });
};

/**
 * Times every request on the root instance, labelled by the route's URL pattern (never the raw URL,
 * whose ids would make a series per resource). Call it before the route plugins are registered.
 */
export function trackHttpDurations(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeHttp({
      route: request.routeOptions.url,
      method: request.method,
      statusCode: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  });
}
