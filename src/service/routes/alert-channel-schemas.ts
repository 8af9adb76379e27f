/**
 * Request and response schemas of /v1/alert-channels, after the reference's AlertChannelCreate,
 * AlertChannel(Read) and AlertChannelSubscriptionCreate. `config` is an object here; its fields are
 * checked against the type's schema (src/service/alert-channels/channel-config.ts) once `type` is known.
 */
import { Type } from 'typebox';
import { ALERT_CHANNEL_TYPES, AlertChannelSettings } from '../alert-channels/channel-config.ts';
import { IntegerId, Nullable } from './schemas.ts';

/** A subscription as given: a check or a group (exactly one), and whether it is active. */
export const SubscriptionInput = Type.Object(
  {
    checkId: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
    groupId: Type.Optional(Nullable(IntegerId())),
    activated: Type.Boolean(),
  },
  { additionalProperties: false },
);

/** The list form on a channel's body may carry the ids a GET returned; they are ignored. */
const SubscriptionListItem = Type.Object({
  id: Type.Optional(IntegerId()),
  checkId: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
  groupId: Type.Optional(Nullable(IntegerId())),
  activated: Type.Boolean(),
});

export const SubscriptionResponse = Type.Object({
  id: Type.Number(),
  checkId: Nullable(Type.String()),
  groupId: Nullable(Type.Number()),
  activated: Type.Boolean(),
});

/** AlertChannelCreate, for POST and PUT alike; the settings with their defaults (AlertChannelSettings). */
export const ChannelBody = Type.Object(
  {
    type: Type.Union(ALERT_CHANNEL_TYPES.map((t) => Type.Literal(t))),
    config: Type.Object({}, { additionalProperties: true }),
    subscriptions: Type.Optional(Type.Array(SubscriptionListItem, { maxItems: 1000 })),
    ...AlertChannelSettings.properties,
  },
  { additionalProperties: false },
);

export const ChannelResponse = Type.Object({
  id: Type.Number(),
  type: Type.String(),
  config: Type.Object({}, { additionalProperties: true }),
  subscriptions: Type.Array(SubscriptionResponse),
  ...AlertChannelSettings.properties,
  created_at: Type.String(),
  updated_at: Nullable(Type.String()),
});

export const ChannelIdParams = Type.Object({ id: IntegerId() });
