/**
 * RATE_LIMIT_*: how many requests the routes anyone can reach take per window (http/rate-limits.ts).
 * The defaults stop floods, not customers: a fleet of agents posting thousands of results a second
 * to one location stays far below the agent limit, and the public API's per-key limit is five
 * times the reference's 600 per 60 seconds, so deploy scripts that create hundreds of checks pass.
 */
import { type Env, readInteger } from '../../shared/env.ts';

export interface RateLimitConfig {
  /** One window for every limit: each limit is "at most N requests per window". */
  windowSeconds: number;
  /** The public API (/v1/…, /v2/…): per API key, and per client address whatever the key. */
  api: { perKey: number; perAddress: number };
  /** Heartbeat pings (/ping/{token}): per token, and per address (which throttles guessing tokens). */
  ping: { perToken: number; perAddress: number };
  /** Check group trigger URLs: per token, and per address. */
  trigger: { perToken: number; perAddress: number };
  /** The agent API (/agent/v1/…): per location key only, as a fleet of a location may share one address. */
  agent: { perKey: number };
}

/** 0 turns a limit off; the top is far above anything one process serves in a window. */
const LIMIT_RANGE = { min: 0, max: 100_000_000 };

export function loadRateLimitConfig(env: Env): RateLimitConfig {
  const limit = (name: string, fallback: number) => readInteger(env, name, fallback, LIMIT_RANGE);
  return {
    windowSeconds: readInteger(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, { min: 1, max: 3600 }),
    api: { perKey: limit('RATE_LIMIT_API_PER_KEY', 3000), perAddress: limit('RATE_LIMIT_API_PER_ADDRESS', 6000) },
    ping: { perToken: limit('RATE_LIMIT_PING_PER_TOKEN', 120), perAddress: limit('RATE_LIMIT_PING_PER_ADDRESS', 6000) },
    trigger: {
      perToken: limit('RATE_LIMIT_TRIGGER_PER_TOKEN', 60),
      perAddress: limit('RATE_LIMIT_TRIGGER_PER_ADDRESS', 600),
    },
    agent: { perKey: limit('RATE_LIMIT_AGENT_PER_KEY', 1_200_000) },
  };
}
