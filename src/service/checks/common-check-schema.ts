/**
 * Schema pieces every check type's body shares (the reference's ChecksV1*Create properties that are
 * the same for API, TCP, DNS and ICMP checks), so each type's schema file only adds its request and
 * its thresholds. `mode` 'create' fills in the reference's defaults (Ajv's useDefaults applies them);
 * 'update' makes every property optional without defaults, since PUT changes only what it carries.
 */
import { type TSchema, Type } from 'typebox';
import { assertionOf } from '../../shared/checks/assertions.ts';
import { IP_FAMILIES } from '../../shared/checks/common.ts';
import { Nullable } from '../routes/schemas.ts';
import {
  AlertChannelSubscriptionsIn,
  AlertChannelSubscriptionsOut,
} from '../alert-channels/subscriber-subscriptions.ts';
import { AlertSettingsIn, DEFAULT_ALERT_SETTINGS } from './alert-settings-schema.ts';
import { environmentVariableList } from './environment-variables-schema.ts';
import { groupMembershipProperties } from './group-membership.ts';

export type Mode = 'create' | 'update';

export const FREQUENCIES = [0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;
/** frequencyOffset's bound: only 10, 20 or 30 mean anything (with frequency 0); others are dropped. */
export const FREQUENCY_OFFSET_MAX = 3600;
/** Seconds between runs of a sub-minute check (frequency 0). */
export const SUB_MINUTE_OFFSETS = [10, 20, 30] as const;
export const RUNTIME_IDS = ['2026.04', '2025.04', '2024.09', '2024.02', '2023.09', '2023.02', '2022.10'] as const;
/**
 * The reference's data-center locations. Accepted and stored so clients written for the reference
 * work unchanged, but never run: this service only runs checks on private locations.
 */
export const DATA_CENTER_LOCATIONS = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'ca-central-1',
  'sa-east-1',
  'eu-west-1',
  'eu-central-1',
  'eu-west-2',
  'eu-west-3',
  'eu-north-1',
  'eu-south-1',
  'me-south-1',
  'ap-southeast-1',
  'ap-northeast-1',
  'ap-east-1',
  'ap-southeast-2',
  'ap-southeast-3',
  'ap-northeast-2',
  'ap-northeast-3',
  'ap-south-1',
  'af-south-1',
] as const;

/** A property with its reference default on create; optional without default on update. */
export function prop<T extends TSchema>(mode: Mode, schema: (opts: { default?: unknown }) => T, fallback: unknown) {
  return mode === 'create' ? schema({ default: fallback }) : Type.Optional(schema({}));
}

/** A property the reference requires on create; optional on update. */
export function required<T extends TSchema>(mode: Mode, schema: T) {
  return mode === 'create' ? schema : Type.Optional(schema);
}

/**
 * One assertion of a check type as the job carries it (shared/checks/assertions.ts), with the API's
 * defaults for property, target and regex. Defaults on update too: a PUT replaces the whole list,
 * and each item is stored as GET returns it.
 */
export function assertionSchema(sources: readonly string[], comparisons: readonly string[]) {
  const job = assertionOf(sources, comparisons).properties;
  return Type.Object(
    {
      ...job,
      property: Type.String({ default: '' }),
      target: Type.String({ default: '' }),
      regex: Nullable(Type.String(), { default: '' }),
    },
    { additionalProperties: false },
  );
}

/** A check type's `request.assertions`: an empty list by default on create. */
export function assertionList(mode: Mode, sources: readonly string[], comparisons: readonly string[]) {
  return prop(mode, (o) => Type.Array(assertionSchema(sources, comparisons), o), []);
}

/** `request.ipFamily`: the address family tried first, IPv4 by default on create. */
export function ipFamily(mode: Mode) {
  return prop(mode, (o) => Type.Enum([...IP_FAMILIES], o), 'IPv4');
}

export interface ResponseTimeLimits {
  /** The reference's maximum for both thresholds of this type. */
  maximum: number;
  degraded: number;
  max: number;
}

/** The properties of every check type's body, with the type's own checkType and response-time limits. */
export function commonCheckProperties<K extends string>(mode: Mode, checkType: K, limits: ResponseTimeLimits) {
  const responseTime = (o: { default?: unknown }) => Nullable(Type.Number({ minimum: 0, maximum: limits.maximum }), o);
  return {
    name: required(mode, Type.String({ minLength: 1 })),
    checkType: prop(mode, (o) => Type.Enum([checkType], o), checkType),
    activated: prop(mode, (o) => Type.Boolean(o), true),
    muted: prop(mode, (o) => Type.Boolean(o), false),
    doubleCheck: prop(mode, (o) => Type.Boolean(o), true),
    shouldFail: prop(mode, (o) => Type.Boolean(o), false),
    runParallel: prop(mode, (o) => Type.Boolean(o), false),
    locations: prop(mode, (o) => Nullable(Type.Array(Type.Enum([...DATA_CENTER_LOCATIONS])), o), []),
    privateLocations: prop(mode, (o) => Nullable(Type.Array(Type.String({ minLength: 1 })), o), []),
    tags: prop(mode, (o) => Type.Array(Type.String({ minLength: 1 }), o), []),
    runtimeId: prop(mode, (o) => Nullable(Type.Enum([...RUNTIME_IDS]), o), null),
    frequency: prop(mode, (o) => Type.Enum([...FREQUENCIES], o), 10),
    frequencyOffset: Type.Optional(Type.Integer({ minimum: 1, maximum: FREQUENCY_OFFSET_MAX })),
    degradedResponseTime: prop(mode, responseTime, limits.degraded),
    maxResponseTime: prop(mode, responseTime, limits.max),
    // ChecksV1EnvironmentVariable items; secret values are sealed at rest and never returned.
    environmentVariables: prop(mode, (o) => Nullable(environmentVariableList(mode), o), []),
    // Applied by src/service/alerting/ only with useGlobalAlertSettings false, as in the reference.
    alertSettings: prop(mode, (o) => Nullable(AlertSettingsIn, o), DEFAULT_ALERT_SETTINGS),
    useGlobalAlertSettings: prop(mode, (o) => Type.Boolean(o), true),
    // Stored in alert_channel_subscriptions, never in the body (alert-channels/subscriber-subscriptions.ts).
    alertChannelSubscriptions: AlertChannelSubscriptionsIn,
    // groupId, groupOrder and the check's own retryStrategy (see group-membership.ts).
    ...groupMembershipProperties(mode),
  };
}

/** A check as GET returns it: the accepted body (defaults filled), its subscriptions, id and timestamps. */
export function checkResponseSchema<P extends Record<string, TSchema>>(createProperties: P) {
  return Type.Object({
    id: Type.String(),
    ...createProperties,
    alertChannelSubscriptions: AlertChannelSubscriptionsOut,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  });
}

/**
 * The create and update bodies of a check type and the check as GET returns it: the common
 * properties with the type's checkType and response-time limits, and the type's own (`forResponse`:
 * as GET shows them, where input-only aliases are left out).
 */
export function checkSchemas<K extends string, P extends Record<string, TSchema>>(
  checkType: K,
  limits: ResponseTimeLimits,
  own: (mode: Mode, forResponse: boolean) => P,
) {
  const properties = (mode: Mode, forResponse = false) => ({
    ...commonCheckProperties(mode, checkType, limits),
    ...own(mode, forResponse),
  });
  return {
    create: Type.Object(properties('create'), { additionalProperties: false }),
    update: Type.Object(properties('update'), { additionalProperties: false }),
    response: checkResponseSchema(properties('create', true)),
  };
}

/** The own properties of a check type that adds only its request (required on create). */
export function requestOnly<R extends TSchema>(request: (mode: Mode) => R) {
  return (mode: Mode) => ({ request: required(mode, request(mode)) });
}

/** A TCP/UDP port number, as an integer the socket API takes. */
export const PortSchema = Type.Integer({ minimum: 1, maximum: 65535 });
