/**
 * What an alert channel is: its type and the configuration that type needs, as one TypeBox union
 * keyed by `type`. The API validates a channel's config against its type's schema here, the store
 * keeps it (secret fields sealed: ./channel-secrets.ts), and a notifier reads it back typed by
 * `AlertChannelDefinition`, so every layer agrees on one shape.
 */
import { type Static, type TLiteral, type TObject, type TUnion, Type } from 'typebox';

/** The channel types this service accepts (the reference's `type` enum without SLACK_APP, which needs an installed app). */
export const ALERT_CHANNEL_TYPES = ['EMAIL', 'SLACK', 'WEBHOOK', 'SMS', 'PAGERDUTY', 'OPSGENIE', 'CALL'] as const;
export type AlertChannelType = (typeof ALERT_CHANNEL_TYPES)[number];

const Text = (maxLength = 1024) => Type.String({ maxLength });
const Required = (maxLength = 1024) => Type.String({ minLength: 1, maxLength });
const KeyValue = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 256 }), value: Text(4096) },
  { additionalProperties: false },
);
/** E.164, as the vendor documents phone numbers: "+", country code, up to 15 digits. */
const PhoneNumber = Type.String({ pattern: '^\\+[1-9][0-9]{1,14}$', maxLength: 16 });
const closed = { additionalProperties: false } as const;

/**
 * A union of string literals from a list. Type.Union over `values.map(...)` would infer an array,
 * whose Static is `never`; the mapped tuple type keeps each literal.
 */
function literals<const T extends readonly string[]>(values: T, options: { default?: T[number] } = {}) {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }>;
}

export const WEBHOOK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'DELETE'] as const;

export const EmailConfig = Type.Object({ address: Type.String({ format: 'email', maxLength: 320 }) }, closed);
export const SlackConfig = Type.Object({ url: Required(2048), channel: Type.Optional(Text(256)) }, closed);
export const WebhookConfig = Type.Object(
  {
    name: Type.Optional(Text(256)),
    url: Required(2048),
    method: literals(WEBHOOK_METHODS, { default: 'POST' }),
    headers: Type.Array(KeyValue, { maxItems: 50, default: [] }),
    queryParameters: Type.Array(KeyValue, { maxItems: 50, default: [] }),
    template: Type.Optional(Text(65_536)),
    webhookSecret: Type.Optional(Text(1024)),
  },
  closed,
);
export const PagerDutyConfig = Type.Object(
  { serviceKey: Required(), account: Required(256), serviceName: Required(256) },
  closed,
);
export const OpsgenieConfig = Type.Object(
  {
    name: Type.Optional(Text(256)),
    apiKey: Required(),
    region: Type.Union([Type.Literal('EU'), Type.Literal('US')]),
    priority: literals(['P1', 'P2', 'P3', 'P4', 'P5']),
  },
  closed,
);
export const PhoneConfig = Type.Object({ number: PhoneNumber, name: Type.Optional(Text(256)) }, closed);

/** Each type's config schema: what POST/PUT validate `config` against once `type` is known. */
export const CONFIG_SCHEMAS = {
  EMAIL: EmailConfig,
  SLACK: SlackConfig,
  WEBHOOK: WebhookConfig,
  SMS: PhoneConfig,
  PAGERDUTY: PagerDutyConfig,
  OPSGENIE: OpsgenieConfig,
  CALL: PhoneConfig,
} as const satisfies Record<AlertChannelType, TObject>;

const variant = <K extends AlertChannelType>(type: K) =>
  Type.Object({ type: Type.Literal(type), config: CONFIG_SCHEMAS[type] });

/** A channel's type and config, as stored and as a notifier reads it (config fields plain in memory). */
export const AlertChannelDefinition = Type.Union([
  variant('EMAIL'),
  variant('SLACK'),
  variant('WEBHOOK'),
  variant('SMS'),
  variant('PAGERDUTY'),
  variant('OPSGENIE'),
  variant('CALL'),
]);
export type AlertChannelDefinition = Static<typeof AlertChannelDefinition>;

/**
 * When a channel alerts, the reference's AlertChannel flags. The send* defaults are the vendor's
 * documented ones (recovery and failure on, degraded off); the reference schema gives none.
 */
export const AlertChannelSettings = Type.Object({
  sendRecovery: Type.Boolean({ default: true }),
  sendFailure: Type.Boolean({ default: true }),
  sendDegraded: Type.Boolean({ default: false }),
  sslExpiry: Type.Boolean({ default: false }),
  /** Days before a certificate expires to start alerting. */
  sslExpiryThreshold: Type.Integer({ minimum: 1, maximum: 30, default: 30 }),
  /** Subscribe each check created afterwards to this channel. */
  autoSubscribe: Type.Boolean({ default: false }),
});
export type AlertChannelSettings = Static<typeof AlertChannelSettings>;

/**
 * The config fields that are credentials: sealed at rest and masked in responses. A Slack URL is
 * one, as its path is the token that posts to the workspace.
 */
export const SECRET_CONFIG_FIELDS: Record<AlertChannelType, readonly string[]> = {
  EMAIL: [],
  SLACK: ['url'],
  WEBHOOK: ['webhookSecret'],
  SMS: [],
  PAGERDUTY: ['serviceKey'],
  OPSGENIE: ['apiKey'],
  CALL: [],
};

/**
 * Lists of `{key, value}` whose values are secret as a whole: a webhook's headers and query parameters
 * carry its receiver's tokens (Authorization, ?key=), and which ones do is the receiver's business.
 */
export const SECRET_LIST_FIELDS: Record<AlertChannelType, readonly string[]> = {
  EMAIL: [],
  SLACK: [],
  WEBHOOK: ['headers', 'queryParameters'],
  SMS: [],
  PAGERDUTY: [],
  OPSGENIE: [],
  CALL: [],
};

/** The config fields that are http(s) URLs the service will call. */
export const URL_CONFIG_FIELDS: Record<AlertChannelType, readonly string[]> = {
  EMAIL: [],
  SLACK: ['url'],
  WEBHOOK: ['url'],
  SMS: [],
  PAGERDUTY: [],
  OPSGENIE: [],
  CALL: [],
};
