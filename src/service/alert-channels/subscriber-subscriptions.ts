/**
 * `alertChannelSubscriptions` on check and group bodies, and the `autoAssignAlerts` query. Both are
 * views of alert_channel_subscriptions, the one table the channel's own subscriptions (PUT
 * /v1/alert-channels/{id}/subscriptions) and the alert fan-out read too, so a body never keeps a
 * copy that could disagree: the routes take the list out of the body before storing it, and add it
 * back from the table on every read. docs/alerting.md "Subscriptions on checks and groups".
 */
import { type Static, Type } from 'typebox';
import { BadRequestError } from '../http/errors.ts';
import { IntegerId } from '../routes/schemas.ts';
import type { ChannelRef, Subscriber } from '../store/alert-channel-types.ts';
import type { Store } from '../store/store.ts';

const FIELD = 'body/alertChannelSubscriptions';

/** The reference's ChecksV1AlertChannelSubscription; `activated` defaults to true as in its heartbeat response. */
export const AlertChannelSubscriptionIn = Type.Object(
  { alertChannelId: IntegerId(), activated: Type.Boolean({ default: true }) },
  { additionalProperties: false },
);

/** The body property: absent on create means none given; absent on update keeps the stored ones. */
export const AlertChannelSubscriptionsIn = Type.Optional(Type.Array(AlertChannelSubscriptionIn, { maxItems: 1000 }));

export const AlertChannelSubscriptionsOut = Type.Array(
  Type.Object({ alertChannelId: Type.Number(), activated: Type.Boolean() }),
);

/**
 * The reference's autoAssignAlerts (default true): whether a new check or group is subscribed to the
 * account's autoSubscribe channels. Accepted on updates too, where nothing is created, so it does nothing.
 */
export const AutoAssignQuery = Type.Object({ autoAssignAlerts: Type.Boolean({ default: true }) });

type GivenList = Static<typeof AlertChannelSubscriptionIn>[] | undefined;

/** A body's list, checked, and what a route does with it around its own write. */
export interface BodySubscriptions<B> {
  /** The body without the list: what gets stored. */
  rest: Omit<B, 'alertChannelSubscriptions'>;
  /** After a create: the given list, plus the autoSubscribe channels when autoAssignAlerts is true. */
  created(subscriber: Subscriber, autoAssign: boolean): Promise<void>;
  /** After an update: a list given replaces the subscriber's subscriptions; none given keeps them. */
  updated(subscriber: Subscriber): Promise<void>;
}

/** Splits the list off a body and checks it (a 400 before anything is written). */
export async function takeSubscriptions<B extends object>(
  store: Store,
  accountId: string,
  body: B,
): Promise<BodySubscriptions<B>> {
  const { alertChannelSubscriptions: given, ...rest } = body as B & { alertChannelSubscriptions?: GivenList };
  await assertOwnChannels(store, accountId, given);
  return {
    rest,
    created: (subscriber, autoAssign) =>
      store.alertChannels.subscribeNew(accountId, subscriber, given ?? [], autoAssign),
    updated: async (subscriber) => {
      if (given) await store.alertChannels.replaceSubscriptionsOf(accountId, subscriber, given);
    },
  };
}

/**
 * 400 naming the item unless every alertChannelId is one of the account's channels, each named once.
 * Another account's channel reads exactly like a missing one.
 */
async function assertOwnChannels(store: Store, accountId: string, given: ChannelRef[] | undefined): Promise<void> {
  if (!given || given.length === 0) return;
  const owned = await store.alertChannels.ownedIds(
    accountId,
    given.map((s) => s.alertChannelId),
  );
  const seen = new Set<number>();
  given.forEach(({ alertChannelId: id }, i) => {
    const field = `${FIELD}/${i}/alertChannelId`;
    if (!owned.has(id)) throw new BadRequestError(`${field}: no alert channel with id ${id} in this account`);
    if (seen.has(id)) throw new BadRequestError(`${field}: alert channel ${id} is listed more than once`);
    seen.add(id);
  });
}

/** One check's subscriptions, for a single-check response. */
export async function subscriptionsOfCheck(store: Store, accountId: string, checkId: string): Promise<ChannelRef[]> {
  return (await store.alertChannels.checkSubscriptions(accountId, [checkId])).get(checkId) ?? [];
}

/** One group's subscriptions, for a single-group response. */
export async function subscriptionsOfGroup(store: Store, accountId: string, groupId: number): Promise<ChannelRef[]> {
  return (await store.alertChannels.groupSubscriptions(accountId, [groupId])).get(groupId) ?? [];
}
