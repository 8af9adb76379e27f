/**
 * Rate limits of the routes anyone can reach: the public API, heartbeat pings, group and check
 * trigger URLs and the agent API (limits and defaults in rate-limit-config.ts, docs/api.md "Rate limits").
 * A request over a limit is refused with 429, Retry-After and the reference's error body before
 * its credential is looked up or its body read, so a flood costs a counter, not a query.
 *
 * Counters live in this process (@fastify/rate-limit's in-memory LRU): with several replicas, each
 * counts the requests it receives. Pages, probes and /openapi.json are not limited here.
 */
import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AGENT_API_PREFIX } from '../../shared/protocol.ts';
import { sentryKeyOf } from '../dispatch/envelope.ts';
import { bearerToken } from './auth.ts';
import { TooManyRequestsError } from './errors.ts';
import type { RateLimitConfig } from './rate-limit-config.ts';

/** One "at most `max` requests per window" counted per key; no key (e.g. no credential sent) skips it. */
interface Limit {
  /** Whose requests these are, for the 429's message: "with this API key", "from your address". */
  what: string;
  max: number;
  /** Absent: the client address (Fastify's request.ip, so TRUST_PROXY decides; IPv6 per /64). */
  keyOf?: (request: FastifyRequest) => string | undefined;
}

/** The limits of one group of routes, checked in order. */
interface Policy {
  covers(url: string): boolean;
  limits: Limit[];
}

type Check = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

// Group and check trigger URLs: one policy, their per-address counter shared.
const TRIGGER_URL = /^\/(check-groups|checks)\/[^/]+\/trigger\//;
// /next/: the reference's own paths its tools read (/next/accounts), part of the public API.
const PUBLIC_API_URL = /^\/(v\d+|next)\//;

/** The routes each policy covers, by the URL a route is registered with (`/ping/:pingToken`). */
const LIMITED_ROUTES = {
  ping: (url: string) => url.startsWith('/ping/'),
  trigger: (url: string) => TRIGGER_URL.test(url),
  agent: (url: string) => url.startsWith(`${AGENT_API_PREFIX}/`),
  publicApi: (url: string) => PUBLIC_API_URL.test(url),
};

/** Whether a route may answer 429 (for /openapi.json, which lists that answer). */
export function isRateLimitedRoute(url: string): boolean {
  return Object.values(LIMITED_ROUTES).some((covers) => covers(url));
}

function policies(config: RateLimitConfig): Policy[] {
  const perAddress = (max: number): Limit => ({ what: 'from your address', max });
  return [
    {
      covers: LIMITED_ROUTES.ping,
      limits: [
        perAddress(config.ping.perAddress),
        { what: 'for this ping token', max: config.ping.perToken, keyOf: (r) => param(r, 'pingToken') },
      ],
    },
    {
      covers: LIMITED_ROUTES.trigger,
      limits: [
        perAddress(config.trigger.perAddress),
        { what: 'for this trigger token', max: config.trigger.perToken, keyOf: (r) => param(r, 'token') },
      ],
    },
    {
      // Error reports carry the location's report token instead of its key.
      covers: LIMITED_ROUTES.agent,
      limits: [
        { what: 'with this private location key', max: config.agent.perKey, keyOf: (r) => bearer(r) ?? reportToken(r) },
      ],
    },
    {
      covers: LIMITED_ROUTES.publicApi,
      limits: [perAddress(config.api.perAddress), { what: 'with this API key', max: config.api.perKey, keyOf: bearer }],
    },
  ];
}

/**
 * Registers @fastify/rate-limit (no global limit) and one onRequest hook that applies the policy of
 * the route a request matched. Call it before any route is registered: routes are sorted into
 * policies as they are added.
 */
export async function installRateLimits(app: FastifyInstance, config: RateLimitConfig): Promise<void> {
  await app.register(rateLimit, { global: false });
  const compiled = policies(config).map((policy) => ({
    covers: policy.covers,
    check: compile(app, policy, config.windowSeconds),
  }));
  const checkOfRoute = new Map<string, Check>();
  app.addHook('onRoute', (route) => {
    const match = compiled.find((policy) => policy.covers(route.url));
    if (match) checkOfRoute.set(route.url, match.check);
  });
  app.addHook('onRequest', async (request, reply) => {
    const check = checkOfRoute.get(request.routeOptions.url ?? '');
    if (check) await check(request, reply);
  });
}

function compile(app: FastifyInstance, policy: Policy, windowSeconds: number): Check {
  const limiters = policy.limits
    .filter((limit) => limit.max > 0)
    .map((limit) => {
      const { keyOf } = limit;
      const counter = app.createRateLimit({
        max: limit.max,
        timeWindow: windowSeconds * 1000,
        // An empty key (no credential) is let through here; the route's own auth answers it.
        ...(keyOf
          ? {
              keyGenerator: (r: FastifyRequest) => keyOf(r) ?? '',
              allowList: (_r: FastifyRequest, key: string) => key === '',
            }
          : {}),
      });
      return { limit, counter };
    });
  return async (request, reply) => {
    for (const { limit, counter } of limiters) {
      const outcome = await counter(request);
      if (outcome.isAllowed || !outcome.isExceeded) continue;
      const retryAfter = Math.max(1, outcome.ttlInSeconds);
      reply
        .header('x-ratelimit-limit', outcome.max)
        .header('x-ratelimit-remaining', 0)
        .header('x-ratelimit-reset', retryAfter);
      throw new TooManyRequestsError(
        `Too many requests ${limit.what}: at most ${limit.max} requests per ${windowSeconds} s. Retry in ${retryAfter} s.`,
        retryAfter,
      );
    }
  };
}

function param(request: FastifyRequest, name: string): string | undefined {
  const value = (request.params as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && value !== '' ? hashed(value) : undefined;
}

function bearer(request: FastifyRequest): string | undefined {
  const token = bearerToken(request);
  return token ? hashed(token) : undefined;
}

function reportToken(request: FastifyRequest): string | undefined {
  const token = sentryKeyOf(request.query, request.headers['x-sentry-auth']);
  return token ? hashed(token) : undefined;
}

/** Counters are keyed by a digest, so the raw credentials are not kept in the counters' map. */
function hashed(credential: string): string {
  return createHash('sha256').update(credential).digest('base64url');
}
