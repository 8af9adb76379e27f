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

export type AlertChannelSubscriptionInput = Omit<AlertChannelSubscription, 'id'>;

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
  putSubscription(accountId: string, channelId: number, input: AlertChannelSubscriptionInput): Promise<AlertChannelSubscription | undefined>;
  /**
   * The channels told about the check's alerts: those with an activated subscription of the check
   * or of its group (`groupId`), each once, oldest first.
   */
  listSubscribedTo(accountId: string, checkId: string, groupId: number | null): Promise<StoredAlertChannel[]>;
  /** Subscribes a new check to every autoSubscribe channel of its account; returns the channel ids. */
  autoSubscribe(accountId: string, checkId: string): Promise<number[]>;
}
