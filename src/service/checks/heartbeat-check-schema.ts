/**
 * The body of a heartbeat check (the reference's ChecksV1HeartbeatCheckCreate / Update) and its
 * response (ChecksV1HeartbeatCheckMutationResponse, which GET's ChecksV1HeartbeatCheck extends).
 *
 * A heartbeat is not run by an agent: the monitored job pings its URL. So only the properties that
 * mean something for it are accepted (name, activation, muting, tags, description, the heartbeat
 * timing and its token, alertChannelSubscriptions); `locations` is kept so reference clients round-trip. Everything else the
 * reference lists (request, script, frequency, thresholds, ...) is dropped on input, as for the other
 * check types.
 */
import { randomBytes } from 'node:crypto';
import { type Static, Type } from 'typebox';
import {
  AlertChannelSubscriptionsIn,
  AlertChannelSubscriptionsOut,
} from '../alert-channels/subscriber-subscriptions.ts';
import { BadRequestError } from '../http/errors.ts';
import type { ChannelRef } from '../store/alert-channel-types.ts';
import { Nullable } from '../routes/schemas.ts';
import { DATA_CENTER_LOCATIONS, type Mode, prop, required } from './common-check-schema.ts';

export const HEARTBEAT_UNITS = ['seconds', 'minutes', 'hours', 'days'] as const;
export type HeartbeatUnit = (typeof HEARTBEAT_UNITS)[number];
const UNIT_MS: Record<HeartbeatUnit, number> = { seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 };

/** The reference's bounds: a period of 30 seconds to 365 days, a grace of 0 to 365 days. */
export const MIN_PERIOD_MS = 30_000;
export const MAX_PERIOD_MS = 365 * UNIT_MS.days;
export const MAX_GRACE_MS = 365 * UNIT_MS.days;

/** A ping token a client chooses: URL-safe, long enough not to be guessed by accident. */
export const PING_TOKEN_PATTERN = '^[A-Za-z0-9_-]{16,128}$';

const HeartbeatRequest = Type.Object(
  {
    // Coarse bounds (365 days in seconds, the smallest unit); the route checks the exact ones per unit.
    period: Type.Number({ exclusiveMinimum: 0, maximum: MAX_PERIOD_MS / 1000 }),
    periodUnit: Type.Enum([...HEARTBEAT_UNITS]),
    grace: Type.Number({ minimum: 0, maximum: MAX_GRACE_MS / 1000 }),
    graceUnit: Type.Enum([...HEARTBEAT_UNITS]),
    /** Absent or null: a random token on create, the current one on update. */
    pingToken: Type.Optional(Nullable(Type.String({ pattern: PING_TOKEN_PATTERN }))),
  },
  { additionalProperties: false },
);

function heartbeatCheckProperties(mode: Mode) {
  return {
    name: required(mode, Type.String({ minLength: 1 })),
    checkType: prop(mode, (o) => Type.Enum(['HEARTBEAT'], o), 'HEARTBEAT'),
    activated: prop(mode, (o) => Type.Boolean(o), true),
    muted: prop(mode, (o) => Type.Boolean(o), false),
    tags: prop(mode, (o) => Type.Array(Type.String({ minLength: 1 }), o), []),
    locations: prop(mode, (o) => Nullable(Type.Array(Type.Enum([...DATA_CENTER_LOCATIONS])), o), []),
    description: prop(mode, (o) => Nullable(Type.String({ maxLength: 500 }), o), null),
    heartbeat: required(mode, HeartbeatRequest),
    alertChannelSubscriptions: AlertChannelSubscriptionsIn,
  };
}

export const HeartbeatCheckCreateBody = Type.Object(heartbeatCheckProperties('create'), {
  additionalProperties: false,
});
export const HeartbeatCheckUpdateBody = Type.Object(heartbeatCheckProperties('update'), {
  additionalProperties: false,
});
export type HeartbeatCheckBody = Static<typeof HeartbeatCheckCreateBody>;
export type HeartbeatTiming = Static<typeof HeartbeatRequest>;

/** ChecksV1Heartbeat: the timing plus the token and the URL to ping. */
export const HeartbeatView = Type.Object({
  period: Type.Number(),
  periodUnit: Type.Enum([...HEARTBEAT_UNITS]),
  grace: Type.Number(),
  graceUnit: Type.Enum([...HEARTBEAT_UNITS]),
  pingToken: Nullable(Type.String()),
  pingUrl: Type.String(),
});

export const HeartbeatCheckResponse = Type.Object({
  id: Type.String(),
  name: Type.String(),
  checkType: Type.Enum(['HEARTBEAT']),
  activated: Type.Boolean(),
  muted: Type.Boolean(),
  tags: Type.Array(Type.String()),
  locations: Nullable(Type.Array(Type.String())),
  description: Nullable(Type.String()),
  heartbeat: HeartbeatView,
  alertChannelSubscriptions: AlertChannelSubscriptionsOut,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});
export type HeartbeatCheckView = Static<typeof HeartbeatCheckResponse>;

/** Period and grace in ms, within the reference's bounds; a 400 names the field otherwise. */
export function heartbeatTimingMs(timing: HeartbeatTiming): { periodMs: number; graceMs: number } {
  const periodMs = Math.round(timing.period * UNIT_MS[timing.periodUnit]);
  const graceMs = Math.round(timing.grace * UNIT_MS[timing.graceUnit]);
  if (periodMs < MIN_PERIOD_MS || periodMs > MAX_PERIOD_MS) {
    throw new BadRequestError('body/heartbeat/period must be between 30 seconds and 365 days (with periodUnit)');
  }
  if (graceMs > MAX_GRACE_MS) {
    throw new BadRequestError('body/heartbeat/grace must be between 0 and 365 days (with graceUnit)');
  }
  return { periodMs, graceMs };
}

/** A new ping token: 16 random bytes as hex, unguessable (it is the only credential a ping carries). */
export function newPingToken(): string {
  return randomBytes(16).toString('hex');
}

/** The URL a job pings: PUBLIC_URL + /ping/<token>, keeping any path prefix PUBLIC_URL has. */
export function pingUrlOf(publicUrl: URL, pingToken: string): string {
  const base = publicUrl.href.endsWith('/') ? publicUrl.href : `${publicUrl.href}/`;
  return new URL(`ping/${encodeURIComponent(pingToken)}`, base).href;
}

/**
 * GET's view of a stored heartbeat check. The stored body keeps the timing and the token (so a view
 * built from the body alone, as GET /v1/checks does, is complete); the URL is derived from the
 * service's current PUBLIC_URL on every read, so it follows a change of PUBLIC_URL.
 */
export function heartbeatCheckView(
  check: { id: string; body: Record<string, unknown>; createdAt: string; updatedAt: string | null },
  publicUrl: URL,
  /** From alert_channel_subscriptions; the body keeps none. */
  subscriptions: ChannelRef[],
): HeartbeatCheckView {
  const body = check.body as unknown as HeartbeatCheckBody & { heartbeat: { pingToken: string } };
  const { pingToken } = body.heartbeat;
  return {
    id: check.id,
    name: body.name,
    checkType: 'HEARTBEAT',
    activated: body.activated,
    muted: body.muted,
    tags: body.tags,
    locations: body.locations,
    description: body.description,
    heartbeat: { ...body.heartbeat, pingToken, pingUrl: pingUrlOf(publicUrl, pingToken) },
    alertChannelSubscriptions: subscriptions,
    created_at: check.createdAt,
    updated_at: check.updatedAt,
  };
}
