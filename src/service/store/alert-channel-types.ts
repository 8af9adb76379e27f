/**
 * Repository of alert channels (/v1/alert-channels) and their subscriptions. Channels have numeric
 * ids, as in the reference; reads are account-scoped like every Store read. A subscription names a
 * check or a group, never both.
 */
import type { AlertChannelDefinition, AlertChannelSettings } from '../alert-channels/channel-config.ts';

export type { AlertChannelSettings } from '../alert-channels/channel-config.ts';

export interface AlertChannelSubscription {
  id: number;
  checkId: string | null;
  groupId: number | null;
  activated: boolean;
}

/** A channel as sending needs it: everything but its subscriptions. */
export type AlertChannelTarget = Omit<StoredAlertChannel, 'subscriptions'>;

export type AlertChannelSubscriptionInput = Omit<AlertChannelSubscription, 'id'>;

/** A subscription as a check or group body shows it (the reference's ChecksV1AlertChannelSubscription). */
export interface ChannelRef {
  alertChannelId: number;
  activated: boolean;
}

/** What subscribes: one check or one group. */
export type Subscriber = { checkId: string } | { groupId: number };

export interface StoredAlertChannel extends AlertChannelSettings {
  id: number;
  accountId: string;
  /** Type and config; secret config fields are plain in memory and sealed in the database. */
  definition: AlertChannelDefinition;
  subscriptions: AlertChannelSubscription[];
  createdAt: string;
  updatedAt: string | null;
}

export interface AlertChannelInput extends AlertChannelSettings {
  definition: AlertChannelDefinition;
  /** Given: the channel's subscriptions become exactly these. Absent: they stay as they are. */
  subscriptions?: AlertChannelSubscriptionInput[];
}

export interface AlertChannelRepo {
  /** Oldest first, as pages of `limit`. */
  list(accountId: string, opts: { limit: number; page: number }): Promise<StoredAlertChannel[]>;
  get(accountId: string, id: number): Promise<StoredAlertChannel | undefined>;
  create(accountId: string, input: AlertChannelInput): Promise<StoredAlertChannel>;
  update(accountId: string, id: number, input: AlertChannelInput): Promise<StoredAlertChannel | undefined>;
  delete(accountId: string, id: number): Promise<boolean>;
  /** Adds or updates the channel's subscription of that check or group; undefined when the channel is not the account's. */
  putSubscription(
    accountId: string,
    channelId: number,
    input: AlertChannelSubscriptionInput,
  ): Promise<AlertChannelSubscription | undefined>;
  /**
   * The channels told about the check's alerts: those with an activated subscription of the check
   * or of its group (`groupId`), each once, oldest first.
   */
  listSubscribedTo(accountId: string, checkId: string, groupId: number | null): Promise<AlertChannelTarget[]>;
  /** The channel without its subscriptions (get() reads them all), for sending. */
  getTarget(accountId: string, id: number): Promise<AlertChannelTarget | undefined>;
  /**
   * A new check's or group's subscriptions: `given`, plus (with `autoAssign`) every autoSubscribe
   * channel of the account that `given` does not name. Channels not of the account are skipped.
   */
  subscribeNew(accountId: string, subscriber: Subscriber, given: ChannelRef[], autoAssign: boolean): Promise<void>;
  /** The subscriber's subscriptions become exactly `refs` (channels not of the account are skipped). */
  replaceSubscriptionsOf(accountId: string, subscriber: Subscriber, refs: ChannelRef[]): Promise<void>;
  /** Each check's subscriptions, by channel id; a check without any has an empty list. */
  checkSubscriptions(accountId: string, checkIds: string[]): Promise<Map<string, ChannelRef[]>>;
  /** Each group's subscriptions, by channel id; a group without any has an empty list. */
  groupSubscriptions(accountId: string, groupIds: number[]): Promise<Map<number, ChannelRef[]>>;
  /** Which of `ids` are channels of the account. */
  ownedIds(accountId: string, ids: number[]): Promise<Set<number>>;
}
