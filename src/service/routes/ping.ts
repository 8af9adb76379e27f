/**
 * GET, POST and HEAD /ping/{pingToken}: what a monitored job calls when it has run. No API key: the
 * unguessable token is the credential, so the job needs nothing else. The answer is 200 `OK`
 * (text/plain) as soon as the ping is stored; an unknown token is a 404 ApiError.
 *
 * Request bodies are never read: a ping's meaning is its arrival. Whatever a client sends is
 * discarded as it streams in (nothing is buffered), so a large body cannot cost memory.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { NotFoundError } from '../http/errors.ts';
import type { Store } from '../store/store.ts';
import { ApiErrorSchema } from './schemas.ts';

/** Longest user agent stored; longer ones are cut (they are free text from the internet). */
export const USER_AGENT_MAX = 512;

/** The client kind a user agent names, for the event's source; `other` when none matches. */
export function clientKind(userAgent: string | undefined): string {
  if (!userAgent) return 'unknown';
  const ua = userAgent.toLowerCase();
  const kinds: Array<[RegExp, string]> = [
    [/^curl\//, 'curl'],
    [/^wget\//, 'wget'],
    [/powershell/, 'powershell'],
    [/^python-|python-requests|urllib|aiohttp|httpx/, 'python'],
    [/^node|undici|node-fetch|axios|got\b/, 'node'],
    [/^go-http-client/, 'go'],
    [/^java|okhttp|apache-httpclient/, 'java'],
    [/^ruby|faraday/, 'ruby'],
    [/^mozilla\//, 'browser'],
  ];
  return kinds.find(([pattern]) => pattern.test(ua))?.[1] ?? 'other';
}

/** e.g. `HTTP GET (curl)`: how the ping arrived, as the spec's event source describes. */
export function pingSource(method: string, userAgent: string | undefined): string {
  return `HTTP ${method} (${clientKind(userAgent)})`;
}

const PingParams = Type.Object({ pingToken: Type.String({ minLength: 1, maxLength: 256 }) });

export const pingRoutes: FastifyPluginAsync<{ store: Store; now?: () => number }> = async (
  app,
  { store, now = Date.now },
) => {
  // Encapsulated in this plugin: every content type is accepted and its body discarded unread.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => {
    payload.resume();
    done(null, undefined);
  });

  app.route({
    method: ['GET', 'POST', 'HEAD'],
    url: '/ping/:pingToken',
    // HEAD is declared above, so it records "HTTP HEAD" rather than running as GET.
    exposeHeadRoute: false,
    schema: {
      params: PingParams,
      response: { 200: Type.String({ description: 'OK' }), 404: ApiErrorSchema },
    },
    async handler(request, reply) {
      const { pingToken } = request.params as { pingToken: string };
      const userAgent = request.headers['user-agent'];
      const event = await store.heartbeats.recordPing(pingToken, {
        atMs: now(),
        source: pingSource(request.method, userAgent),
        userAgent: userAgent ? userAgent.slice(0, USER_AGENT_MAX) : null,
      });
      if (!event) throw new NotFoundError('No heartbeat has this ping token');
      return reply.type('text/plain; charset=utf-8').send('OK');
    },
  });
};
