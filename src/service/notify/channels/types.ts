/**
 * The contract between the alert pipeline (which decides who is told what, and stores each
 * notification before it is sent) and the channel senders (one file per channel type beside this
 * one, which only turn a message into the provider's request).
 */
import type { Dispatcher } from 'undici';
import type { AlertChannelDefinition, AlertChannelType } from '../../alert-channels/channel-config.ts';
import type { AlertType } from '../../store/check-status-types.ts';

/** What every channel renders: frozen when the notification is queued, so a retry sends the same facts. */
export interface AlertMessage {
  /** The notification's id: the idempotency key, the same on every attempt (webhook header, Message-ID). */
  notificationId: string;
  alertId: number;
  alertType: AlertType;
  accountId: string;
  checkId: string;
  checkName: string;
  checkType: string;
  groupName: string | null;
  tags: string[];
  runLocation: string;
  responseTime: number;
  error: string | null;
  statusCode: string | null;
  resultId: string;
  /** Where a person reads the result: PUBLIC_URL/v1/check-results/{checkId}/{resultId}. */
  resultUrl: string;
  /** When the failing (or degraded) episode began; the alert's own time for a recovery. */
  startedAt: string;
  /** When the alert was raised. */
  createdAt: string;
  /** Days left on the certificate, for ALERT_SSL (null otherwise, or when unknown). */
  sslDaysRemaining: number | null;
  /**
   * Stable for one check's alerts (`outpost-check-<checkId>`): PagerDuty's dedup_key and Opsgenie's
   * alias, so a recovery resolves the incident its failure opened and a re-send opens no second one.
   */
  incidentKey: string;
}

/** What one attempt came to. `detail`: what the receiver answered (trimmed), shown as notificationResult. */
export type SendOutcome =
  | { ok: true; detail?: string }
  /** `permanent`: retrying cannot help (a 4xx answer, a rejected mailbox, a refused address). */
  | { ok: false; permanent: boolean; error: string; detail?: string };

/** Where the providers are: each configurable, so tests and air-gapped installations use local receivers. */
export interface ProviderEndpoints {
  pagerDutyEventsUrl: string;
  opsgenieApiUrl: { US: string; EU: string };
  smsGatewayUrl?: URL;
  voiceGatewayUrl?: URL;
}

export interface SendContext {
  /** Every HTTP call goes through the outbound guard (src/service/outbound/). */
  dispatcher: Dispatcher;
  timeoutMs: number;
  providers: ProviderEndpoints;
  /** Sends one email; null when SMTP_URL is not set (EMAIL notifications then fail, permanently, saying so). */
  mail: MailTransport | null;
  now(): number;
}

export interface MailTransport {
  send(mail: {
    to: string;
    subject: string;
    text: string;
    html: string;
    messageId: string;
    headers: Record<string, string>;
  }): Promise<SendOutcome>;
}

export type ChannelSender<T extends AlertChannelType = AlertChannelType> = (
  message: AlertMessage,
  channel: Extract<AlertChannelDefinition, { type: T }>,
  ctx: SendContext,
) => Promise<SendOutcome>;

/** One sender per channel type (./index.ts builds it). */
export type ChannelSenders = { [T in AlertChannelType]: ChannelSender<T> };
