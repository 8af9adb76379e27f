/**
 * The check group body of the V2 endpoints (the reference's CheckGroupCreateOrUpdateV2) and the
 * group as responses return it (CheckGroup / CheckGroupRead), as TypeBox schemas. Create fills in
 * the reference's defaults; update has no top-level defaults, since PUT changes only what it carries
 * (nested defaults still fill an object it does carry, e.g. apiCheckDefaults without headers).
 */
import { type TSchema, Type } from 'typebox';
import { API_ASSERTION_SOURCES, ASSERTION_COMPARISONS } from '../../shared/checks/types.ts';
import {
  AlertChannelSubscriptionsIn,
  AlertChannelSubscriptionsOut,
} from '../alert-channels/subscriber-subscriptions.ts';
import { IntegerId, Nullable } from '../routes/schemas.ts';
import { AlertSettingsIn } from './alert-settings-schema.ts';
import { DATA_CENTER_LOCATIONS, RUNTIME_IDS } from './common-check-schema.ts';
import { EnvironmentVariableItemResponse, environmentVariableList } from './environment-variables-schema.ts';
import { GroupRetryStrategy } from './retry-strategy-schema.ts';

type Mode = 'create' | 'update';

/** The most runs a group trigger keeps open at once (the reference sets no maximum). */
export const GROUP_CONCURRENCY_MAX = 1000;

function prop<T extends TSchema>(mode: Mode, schema: (opts: { default?: unknown }) => T, fallback: unknown) {
  return mode === 'create' ? schema({ default: fallback }) : Type.Optional(schema({}));
}

const KeyValue = Type.Object(
  {
    key: Type.String({ minLength: 1 }),
    value: Type.String({ default: '' }),
    locked: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);

const Assertion = Type.Object(
  {
    source: Type.Enum([...API_ASSERTION_SOURCES]),
    comparison: Type.Enum([...ASSERTION_COMPARISONS]),
    property: Type.String({ default: '' }),
    target: Type.String({ default: '' }),
    regex: Nullable(Type.String(), { default: '' }),
  },
  { additionalProperties: false },
);

export const ApiCheckDefaultsSchema = Type.Object(
  {
    url: Nullable(Type.String({ maxLength: 2048 }), { default: '' }),
    headers: Type.Array(KeyValue, { default: [] }),
    queryParameters: Type.Array(KeyValue, { default: [] }),
    assertions: Type.Array(Assertion, { default: [] }),
    basicAuth: Nullable(
      Type.Object(
        { username: Type.String({ default: '' }), password: Type.String({ default: '' }) },
        { additionalProperties: false },
      ),
      { default: null },
    ),
  },
  { additionalProperties: false },
);

function groupProperties(mode: Mode) {
  return {
    // Required on both, as in the reference (CheckGroupCreateOrUpdateV2.required = [name]).
    name: Type.String({ minLength: 1, maxLength: 255 }),
    activated: prop(mode, (o) => Type.Boolean(o), true),
    muted: prop(mode, (o) => Type.Boolean(o), false),
    tags: prop(mode, (o) => Type.Array(Type.String({ minLength: 1 }), o), []),
    locations: prop(mode, (o) => Type.Array(Type.Enum([...DATA_CENTER_LOCATIONS]), o), []),
    concurrency: prop(mode, (o) => Type.Integer({ minimum: 1, maximum: GROUP_CONCURRENCY_MAX, ...o }), 3),
    apiCheckDefaults: prop(
      mode,
      (o) => Type.Object(ApiCheckDefaultsSchema.properties, { additionalProperties: false, ...o }),
      {},
    ),
    browserCheckDefaults: Type.Optional(Type.Unknown()),
    runtimeId: prop(mode, (o) => Nullable(Type.Enum([...RUNTIME_IDS]), o), null),
    // The same item as checks' (secret values: null keeps the stored one; see resolveVariableList).
    environmentVariables: prop(mode, (o) => Nullable(environmentVariableList(mode), o), []),
    // Stored in alert_channel_subscriptions, never in the body (alert-channels/subscriber-subscriptions.ts).
    alertChannelSubscriptions: AlertChannelSubscriptionsIn,
    setupSnippetId: prop(mode, (o) => Nullable(IntegerId(), o), null),
    tearDownSnippetId: prop(mode, (o) => Nullable(IntegerId(), o), null),
    localSetupScript: prop(mode, (o) => Nullable(Type.String({ maxLength: 100_000 }), o), null),
    localTearDownScript: prop(mode, (o) => Nullable(Type.String({ maxLength: 100_000 }), o), null),
    privateLocations: prop(mode, (o) => Nullable(Type.Array(Type.String({ minLength: 1 })), o), []),
    runParallel: prop(mode, (o) => Nullable(Type.Boolean(), o), null),
    alertSettings: prop(mode, (o) => Nullable(AlertSettingsIn, o), null),
    // No schema default: whether the body carried a retryStrategy decides the doubleCheck mapping.
    retryStrategy: Type.Optional(GroupRetryStrategy),
    useGlobalAlertSettings: prop(mode, (o) => Nullable(Type.Boolean(), o), null),
    doubleCheck: prop(mode, (o) => Type.Boolean(o), false),
  };
}

export const CheckGroupCreateBody = Type.Object(groupProperties('create'), { additionalProperties: false });
export const CheckGroupUpdateBody = Type.Object(groupProperties('update'), { additionalProperties: false });

const KeyValueOut = Type.Object({ key: Type.String(), value: Type.String(), locked: Type.Boolean() });

/** CheckGroup / CheckGroupRead. */
export const CheckGroupResponse = Type.Object({
  id: Type.Number(),
  name: Type.String(),
  activated: Type.Boolean(),
  muted: Type.Boolean(),
  tags: Type.Array(Type.String()),
  locations: Type.Array(Type.String()),
  concurrency: Type.Number(),
  apiCheckDefaults: Type.Object({
    url: Nullable(Type.String()),
    headers: Type.Array(KeyValueOut),
    queryParameters: Type.Array(KeyValueOut),
    assertions: Type.Array(
      Type.Object({
        source: Type.String(),
        comparison: Type.String(),
        property: Type.String(),
        target: Type.String(),
        regex: Nullable(Type.String()),
      }),
    ),
    basicAuth: Nullable(Type.Object({ username: Type.String(), password: Type.String() })),
  }),
  browserCheckDefaults: Type.Optional(Type.Unknown()),
  environmentVariables: Type.Array(EnvironmentVariableItemResponse),
  doubleCheck: Type.Boolean(),
  useGlobalAlertSettings: Nullable(Type.Boolean()),
  alertSettings: Type.Object({}, { additionalProperties: true }),
  alertChannelSubscriptions: AlertChannelSubscriptionsOut,
  setupSnippetId: Nullable(Type.Number()),
  tearDownSnippetId: Nullable(Type.Number()),
  localSetupScript: Nullable(Type.String()),
  localTearDownScript: Nullable(Type.String()),
  runtimeId: Nullable(Type.String()),
  privateLocations: Type.Array(Type.String()),
  retryStrategy: Type.Union([
    Type.Object({
      type: Type.String(),
      baseBackoffSeconds: Type.Optional(Type.Number()),
      maxRetries: Type.Optional(Type.Number()),
      maxDurationSeconds: Type.Optional(Type.Number()),
      sameRegion: Type.Optional(Type.Boolean()),
      onlyOn: Type.Optional(Type.Array(Type.String())),
    }),
    Type.Literal('FALLBACK'),
    Type.Null(),
  ]),
  runParallel: Nullable(Type.Boolean()),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});
