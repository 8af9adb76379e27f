/**
 * Certificate expiry alerts: one ALERT_SSL per certificate per UTC day while the certificate an API
 * check (or an SSL monitor, see sslMonitorCertificate) saw has SSL_ALERT_DAYS days or fewer left. Which channels are told is each channel's own
 * choice (sslExpiry on, and the days left at most its sslExpiryThreshold); the alert is raised at
 * the largest threshold a channel may set, so every channel's can be served from it.
 */
import type { ApiTlsDetails } from '../../shared/checks/types.ts';
import type { SslCheckResult } from '../../shared/checks/monitors.ts';

/** The largest sslExpiryThreshold a channel may set (the reference: 1 to 30 days). */
export const SSL_ALERT_DAYS = 30;

/** The certificates already alerted on `day` (a UTC date, YYYY-MM-DD). */
export interface SslAlerted {
  day: string;
  fingerprints: string[];
}

export interface SslStep {
  /** The days left to alert about, or null when no alert is due. */
  alertDays: number | null;
  next: SslAlerted | null;
}

/** Whether the certificate `tls` seen at `atMs` is due an alert, and what to remember of it. */
export function sslStep(
  prev: SslAlerted | null | undefined,
  tls: Pick<ApiTlsDetails, 'daysRemaining' | 'fingerprint256'> | undefined,
  atMs: number,
): SslStep {
  const kept = prev ?? null;
  const days = tls?.daysRemaining;
  if (days === null || days === undefined || days > SSL_ALERT_DAYS) return { alertDays: null, next: kept };
  const day = new Date(atMs).toISOString().slice(0, 10);
  // Without a fingerprint the agent could not read one: all such certificates count as one.
  const fingerprint = tls?.fingerprint256 ?? '';
  const today = kept?.day === day ? kept.fingerprints : [];
  if (today.includes(fingerprint)) return { alertDays: null, next: kept };
  return { alertDays: days, next: { day, fingerprints: [...today, fingerprint] } };
}

/** An SSL monitor's leaf certificate in the shape sslStep reads (days left, fingerprint); undefined without one. */
export function sslMonitorCertificate(
  result: SslCheckResult | undefined,
): Pick<ApiTlsDetails, 'daysRemaining' | 'fingerprint256'> | undefined {
  const leaf = result?.response?.certificate;
  return leaf ? { daysRemaining: leaf.daysUntilExpiry, fingerprint256: leaf.fingerprintSha256 } : undefined;
}
