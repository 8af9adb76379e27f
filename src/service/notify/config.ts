/**
 * Settings of subscriber notifications (README "Service" table lists each variable). Without
 * SMTP_URL, email deliveries are recorded as undeliverable with that reason; webhooks still go out.
 */
import { type Env, readInteger, readOptionalString, readString } from '../../shared/env.ts';
import { ConfigError } from '../../shared/errors.ts';

export interface NotifyConfig {
  /** smtp://[user:pass@]host:port or smtps://…; null disables email delivery. */
  smtpUrl: string | null;
  /** The From header of notification emails. */
  smtpFrom: string;
  /** First retry delay; each further retry doubles it (with jitter) up to backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Attempts per delivery before it is given up as failed. */
  maxAttempts: number;
  /** Longest a webhook request or an SMTP connection step may take. */
  timeoutMs: number;
  /** How often the worker looks for due deliveries it was not told about (e.g. written by another process). */
  pollMs: number;
}

export function loadNotifyConfig(env: Env): NotifyConfig {
  const smtpUrl = readOptionalString(env, 'SMTP_URL') ?? null;
  if (smtpUrl !== null) {
    let protocol: string;
    try {
      protocol = new URL(smtpUrl).protocol;
    } catch {
      throw new ConfigError(
        'SMTP_URL',
        `SMTP_URL=${JSON.stringify(smtpUrl)} is not a URL; use smtp://host:port or smtps://host:port`,
      );
    }
    if (protocol !== 'smtp:' && protocol !== 'smtps:') {
      throw new ConfigError('SMTP_URL', `SMTP_URL must start with smtp:// or smtps:// (got ${protocol}//)`);
    }
  }
  const backoffBaseMs = readInteger(env, 'NOTIFY_BACKOFF_BASE_MS', 5_000, { min: 1, max: 3_600_000 });
  return {
    smtpUrl,
    smtpFrom: readString(env, 'SMTP_FROM', 'Outpost status <outpost@localhost>'),
    backoffBaseMs,
    backoffMaxMs: readInteger(env, 'NOTIFY_BACKOFF_MAX_MS', 3_600_000, { min: backoffBaseMs, max: 86_400_000 }),
    maxAttempts: readInteger(env, 'NOTIFY_MAX_ATTEMPTS', 12, { min: 1, max: 100 }),
    timeoutMs: readInteger(env, 'NOTIFY_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
    pollMs: readInteger(env, 'NOTIFY_POLL_MS', 5_000, { min: 50, max: 600_000 }),
  };
}
