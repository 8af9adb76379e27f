/**
 * Repositories of status pages, their services and cards, status page incidents and their updates,
 * subscriptions and the notification outbox. Same conventions as ./store.ts: every account-owned
 * read takes the accountId; ids are UUIDs; times are ISO 8601 strings in UTC.
 *
 * Cursors (`nextId`) are opaque strings; an unusable one is a 400 (BadRequestError) naming nextId.
 */

export const INCIDENT_SEVERITIES = ['CRITICAL', 'MAJOR', 'MEDIUM', 'MINOR'] as const;
export type IncidentSeverity = (typeof INCIDENT_SEVERITIES)[number];

export const INCIDENT_STATUSES = ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED'] as const;
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];

export const DEFAULT_THEMES = ['LIGHT', 'DARK', 'AUTO'] as const;
export type DefaultTheme = (typeof DEFAULT_THEMES)[number];

export const SUBSCRIPTION_TYPES = ['EMAIL', 'WEBHOOK'] as const;
export type SubscriptionType = (typeof SUBSCRIPTION_TYPES)[number];

export const SUBSCRIPTION_STATUSES = ['PENDING', 'VERIFIED'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export interface Page<T> {
  entries: T[];
  /** Null on the last page. */
  nextId: string | null;
}

export interface PageRequest {
  limit: number;
  nextId?: string;
}

/** A component shown on status pages ("status page service"). */
export interface SpService {
  id: string;
  accountId: string;
  name: string;
  createdAt: string;
  updatedAt: string | null;
}

export interface ThemePalette {
  bodyBackgroundColor: string;
  headerBackgroundColor: string;
  headerFontColor: string;
  titleFontColor: string;
  bodyFontColor: string;
  bodyFontColorMuted: string;
  navigationFontColor: string;
  linkFontColor: string;
  cardBackgroundColor: string;
  borderColor: string;
  primaryButtonBackgroundColor: string;
  primaryButtonFontColor: string;
}

export interface ThemeColors {
  light: ThemePalette;
  dark: ThemePalette;
}

export interface StatusPageCard {
  id: string;
  name: string;
  services: SpService[];
  createdAt: string;
  updatedAt: string | null;
}

/** Everything of a status page a client sets (POST and PUT carry all of it). */
export interface StatusPageFields {
  name: string;
  /** Lower-cased; unique across all accounts. */
  url: string;
  /** Lower-cased; unique across all accounts when set. */
  customDomain: string | null;
  themeColors: ThemeColors | null;
  logo: string | null;
  logoDark: string | null;
  redirectTo: string | null;
  favicon: string | null;
  defaultTheme: DefaultTheme;
  version: number | null;
  description: string | null;
  /** Readable only with one of the page's keys (StatusPageKeyRepo). */
  isPrivate: boolean;
  /** No "Powered by Outpost" on the page. */
  whiteLabel: boolean;
}

export interface StatusPage extends StatusPageFields {
  id: string;
  accountId: string;
  cards: StatusPageCard[];
  createdAt: string;
  updatedAt: string | null;
}

/** A card in a POST/PUT body: `id` keeps an existing card of the same page (else a new one is made). */
export interface StatusPageCardInput {
  id?: string;
  name: string;
  serviceIds: string[];
}

export interface StatusPageInput extends StatusPageFields {
  cards: StatusPageCardInput[];
}

export interface StatusPageRepo {
  /** Fails with BadRequestError naming an unknown service id, ConflictError for a taken url/customDomain. */
  create(accountId: string, input: StatusPageInput): Promise<StatusPage>;
  update(accountId: string, id: string, input: StatusPageInput): Promise<StatusPage | undefined>;
  get(accountId: string, id: string): Promise<StatusPage | undefined>;
  /** Oldest first (creation order), so a cursor stays valid while pages are added. */
  list(accountId: string, page: PageRequest): Promise<Page<StatusPage>>;
  delete(accountId: string, id: string): Promise<boolean>;
}

export interface SpServiceRepo {
  create(accountId: string, name: string): Promise<SpService>;
  update(accountId: string, id: string, name: string): Promise<SpService | undefined>;
  get(accountId: string, id: string): Promise<SpService | undefined>;
  /** Oldest first; `limit` undefined lists all (the reference's paginated=false). */
  list(accountId: string, page: { limit?: number; nextId?: string }): Promise<Page<SpService>>;
  /** Also removes it from cards and incidents. */
  delete(accountId: string, id: string): Promise<boolean>;
}

export interface IncidentUpdateRecord {
  id: string;
  incidentId: string;
  description: string;
  status: IncidentStatus | null;
  publicIncidentUpdateDate: string;
  notifySubscribers: boolean;
  createdAt: string;
  updatedAt: string | null;
}

export interface IncidentUpdateInput {
  description: string;
  status: IncidentStatus | null;
  publicIncidentUpdateDate: string;
  notifySubscribers: boolean;
}

export interface IncidentRecord {
  id: string;
  accountId: string;
  name: string;
  severity: IncidentSeverity;
  services: SpService[];
  /** Newest first: by publicIncidentUpdateDate, then by creation. */
  updates: IncidentUpdateRecord[];
  lastUpdateStatus: IncidentStatus;
  /** Whole minutes; null while the incident is not resolved (see docs/api.md). */
  duration: number | null;
  createdAt: string;
  updatedAt: string | null;
}

export interface IncidentInput {
  name: string;
  severity: IncidentSeverity;
  serviceIds: string[];
}

/** What a write that may notify subscribers returns: the record and how many deliveries it queued. */
export interface Notifying<T> {
  value: T;
  queued: number;
}

export interface IncidentRepo {
  /**
   * Creates the incident with its first update; when that update has notifySubscribers, the
   * deliveries are written to the outbox in the same transaction. BadRequestError names an
   * unknown service id.
   */
  create(accountId: string, input: IncidentInput & { update: IncidentUpdateInput }): Promise<Notifying<IncidentRecord>>;
  update(accountId: string, id: string, input: IncidentInput): Promise<IncidentRecord | undefined>;
  get(accountId: string, id: string): Promise<IncidentRecord | undefined>;
  /** Newest first (by creation). */
  list(accountId: string, page: PageRequest): Promise<Page<IncidentRecord>>;
  delete(accountId: string, id: string): Promise<boolean>;
  /** The `limit` newest updates; undefined when the incident is not the account's. */
  listUpdates(accountId: string, incidentId: string, limit: number): Promise<IncidentUpdateRecord[] | undefined>;
  addUpdate(
    accountId: string,
    incidentId: string,
    input: IncidentUpdateInput,
  ): Promise<Notifying<IncidentUpdateRecord> | undefined>;
  getUpdate(accountId: string, incidentId: string, updateId: string): Promise<IncidentUpdateRecord | undefined>;
  /** With notifySubscribers, queues deliveries only for recipients not yet notified of this update. */
  replaceUpdate(
    accountId: string,
    incidentId: string,
    updateId: string,
    input: IncidentUpdateInput,
  ): Promise<Notifying<IncidentUpdateRecord> | undefined>;
  deleteUpdate(accountId: string, incidentId: string, updateId: string): Promise<boolean>;
  /** Per status page id: its unresolved incidents (on any service its cards show), newest first. */
  listUnresolvedByStatusPage(accountId: string, statusPageIds: string[]): Promise<Map<string, IncidentRecord[]>>;
}

export interface SubscriptionRecord {
  id: string;
  statusPageId: string;
  type: SubscriptionType;
  /** The email address, or the webhook URL. */
  address: string;
  status: SubscriptionStatus;
  createdAt: string;
  updatedAt: string;
}

export interface SubscriptionInput {
  type: SubscriptionType;
  address: string;
  /** The webhook signing secret; null for email. */
  secret: string | null;
}

/** The times a subscription is judged by (subscriptions/config.ts confirmationPolicy). */
export interface ConfirmationPolicy {
  now: Date;
  /** When a PENDING subscription made or re-sent now expires. */
  expiresAt: Date;
  /** A confirmation sent after this is too recent to send again. */
  resendAfter: Date;
}

/**
 * What subscribing an address did: `created` (new; PENDING ones had a confirmation queued),
 * `resent` (already PENDING: another confirmation queued), `throttled` (already PENDING, and a
 * confirmation went out too recently), `exists` (already subscribed, nothing sent).
 */
export type SubscribeOutcome = 'created' | 'resent' | 'throttled' | 'exists';

/** The page a subscriber is told about, in messages and on the confirm and unsubscribe pages. */
export interface SubscribedPage {
  id: string;
  accountId: string;
  name: string;
  url: string;
}

/** A page as its public subscribe form needs it, found by its url or custom domain. */
export interface SubscribablePage extends SubscribedPage {
  customDomain: string | null;
  defaultTheme: DefaultTheme;
  isPrivate: boolean;
}

/** A subscription found by one of its link tokens. */
export interface SubscriptionByToken {
  subscription: SubscriptionRecord;
  page: SubscribedPage;
}

export type LinkTokenPurpose = 'confirm' | 'unsubscribe';

export interface SubscriptionRepo {
  /** Undefined when the status page is not the account's. */
  list(accountId: string, statusPageId: string): Promise<SubscriptionRecord[] | undefined>;
  /**
   * Skips addresses the page already has (same type, same address in any letter case); a PENDING one
   * among them gets its confirmation again unless one was sent after policy.resendAfter. Each new
   * PENDING subscription has a confirmation queued in the same transaction.
   */
  bulkCreate(
    accountId: string,
    statusPageId: string,
    items: SubscriptionInput[],
    status: SubscriptionStatus,
    policy: ConfirmationPolicy,
  ): Promise<{ created: number; skipped: number; confirmationsQueued: number } | undefined>;
  /** A PENDING subscription of `page` (already resolved, e.g. from its public address), as bulkCreate. */
  subscribe(page: SubscribedPage, item: SubscriptionInput, policy: ConfirmationPolicy): Promise<SubscribeOutcome>;
  /** The subscription a live token belongs to: a confirm token only while its subscription is PENDING and unexpired. */
  findByToken(token: string, purpose: LinkTokenPurpose, now: Date): Promise<SubscriptionByToken | undefined>;
  /** Turns the PENDING subscription of a live confirm token VERIFIED; its confirm tokens stop working. */
  confirm(token: string, now: Date): Promise<SubscriptionByToken | undefined>;
  /** Removes the subscription of an unsubscribe token (and with it all its tokens). */
  unsubscribe(token: string): Promise<SubscriptionByToken | undefined>;
  /** Removes PENDING subscriptions that expired before `now`; resolves to how many. */
  deleteExpired(now: Date): Promise<number>;
  delete(accountId: string, statusPageId: string, subscriptionId: string): Promise<boolean>;
}

/**
 * What a subscriber is told, frozen when the update is written: later edits of the incident do
 * not change a notification already queued.
 */
export interface IncidentNotification {
  incident: {
    id: string;
    name: string;
    severity: IncidentSeverity;
    lastUpdateStatus: IncidentStatus;
    services: { id: string; name: string }[];
  };
  incidentUpdate: {
    id: string;
    description: string;
    status: IncidentStatus | null;
    publicIncidentUpdateDate: string;
  };
  statusPages: { id: string; name: string; url: string }[];
}

export type OutboxChannel = SubscriptionType;
export type OutboxState = 'pending' | 'delivered' | 'failed' | 'undeliverable';

/** What a confirmation message asks: to confirm a subscription of this page before expiresAt. */
export interface ConfirmationRequest {
  statusPage: { id: string; name: string; url: string };
  expiresAt: string;
}

/** The kinds of subscriber message, each with what it says. */
export type OutboxMessage =
  | { kind: 'incident'; payload: IncidentNotification }
  | { kind: 'confirmation'; payload: ConfirmationRequest };

export type OutboxKind = OutboxMessage['kind'];

interface OutboxEntryFields {
  /** Also the idempotency key receivers dedupe by. */
  id: string;
  accountId: string;
  subscriptionId: string | null;
  channel: OutboxChannel;
  address: string;
  /** The webhook signing secret, opened only in memory. */
  secret: string | null;
  /** The token of the message's unsubscribe link (null in rows queued before migration 017 for a subscription since removed). */
  unsubscribeToken: string | null;
  /** The token of a confirmation's confirm link; null for other kinds. */
  confirmToken: string | null;
  state: OutboxState;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

export type OutboxEntry = OutboxEntryFields & OutboxMessage;

export interface OutboxRepo {
  /**
   * Leases up to `limit` pending entries that are due, for `leaseMs`: another worker (or this one
   * after a restart) sees them again only when the lease has run out without a result.
   * Each claim counts as an attempt.
   */
  claimDue(now: Date, limit: number, leaseMs: number): Promise<OutboxEntry[]>;
  markDelivered(id: string, at: Date): Promise<void>;
  /** Back to pending, due at `nextAttemptAt`, with the error of the failed attempt. */
  reschedule(id: string, nextAttemptAt: Date, error: string): Promise<void>;
  /** A final state without delivery; `reason` is kept for operators. */
  markFinal(id: string, state: 'failed' | 'undeliverable', reason: string): Promise<void>;
  /** When the earliest pending entry becomes due (or its lease runs out); null when none is pending. */
  nextDueAt(): Promise<string | null>;
  /** How many entries are pending (due or not): the outbox depth. */
  pendingCount(): Promise<number>;
  get(id: string): Promise<OutboxEntry | undefined>;
  listForUpdate(incidentUpdateId: string): Promise<OutboxEntry[]>;
}
