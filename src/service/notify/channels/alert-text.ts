/**
 * The words every channel uses for an alert: its title, what kind of news it is, and its facts as
 * label/value pairs, so an email, a Slack message and a PagerDuty incident say the same thing.
 */
import type { AlertType } from '../../store/check-status-types.ts';
import type { AlertMessage } from './types.ts';

/** What an alert means for whoever receives it: opens or keeps an incident, closes one, or warns. */
export type AlertKind = 'failure' | 'degraded' | 'recovery' | 'ssl';

const KINDS: Record<AlertType, AlertKind> = {
  ALERT_FAILURE: 'failure',
  ALERT_FAILURE_REMAIN: 'failure',
  ALERT_DEGRADED_FAILURE: 'failure',
  ALERT_DEGRADED: 'degraded',
  ALERT_DEGRADED_REMAIN: 'degraded',
  ALERT_FAILURE_DEGRADED: 'degraded',
  ALERT_RECOVERY: 'recovery',
  ALERT_DEGRADED_RECOVERY: 'recovery',
  ALERT_SSL: 'ssl',
};

export function alertKind(type: AlertType): AlertKind {
  return KINDS[type];
}

/** A reminder repeats an alert that was already sent for the same episode. */
export function isReminder(type: AlertType): boolean {
  return type === 'ALERT_FAILURE_REMAIN' || type === 'ALERT_DEGRADED_REMAIN';
}

const TITLES: Record<Exclude<AlertType, 'ALERT_SSL'>, string> = {
  ALERT_FAILURE: 'has failed',
  ALERT_FAILURE_REMAIN: 'is still failing',
  ALERT_DEGRADED_FAILURE: 'has failed',
  ALERT_DEGRADED: 'is degraded',
  ALERT_DEGRADED_REMAIN: 'is still degraded',
  ALERT_FAILURE_DEGRADED: 'is degraded',
  ALERT_RECOVERY: 'has recovered',
  ALERT_DEGRADED_RECOVERY: 'is no longer degraded',
};

/** The vendor's ALERT_TITLE wording, e.g. `Check "Home page" has failed`. */
export function alertTitle(m: AlertMessage): string {
  if (m.alertType === 'ALERT_SSL') {
    const days =
      m.sslDaysRemaining === null ? 'soon' : `in ${m.sslDaysRemaining} day${m.sslDaysRemaining === 1 ? '' : 's'}`;
    return `The SSL certificate of check "${m.checkName}" will expire ${days}`;
  }
  return `Check "${m.checkName}" ${TITLES[m.alertType]}`;
}

export interface AlertFact {
  label: string;
  value: string;
}

/** The facts a person needs to act, in reading order; empty ones are left out. */
export function alertFacts(m: AlertMessage): AlertFact[] {
  const facts: [string, string | null][] = [
    ['Check', `${m.checkName} (${m.checkType})`],
    ['Alert', m.alertType],
    ['Group', m.groupName],
    ['Location', m.runLocation],
    ['Error', m.error],
    ['Status code', m.statusCode],
    ['Response time', `${m.responseTime} ms`],
    ['SSL days remaining', m.sslDaysRemaining === null ? null : String(m.sslDaysRemaining)],
    ['Started at', m.startedAt],
    ['Alert raised at', m.createdAt],
    ['Tags', m.tags.length > 0 ? m.tags.join(', ') : null],
    ['Result', m.resultUrl],
  ];
  return facts
    .filter((f): f is [string, string] => f[1] !== null && f[1] !== '')
    .map(([label, value]) => ({ label, value }));
}

/** The facts as plain text lines, `Label: value`. */
export function alertFactsText(m: AlertMessage): string {
  return alertFacts(m)
    .map((f) => `${f.label}: ${f.value}`)
    .join('\n');
}

/**
 * The incident an alert belongs to at PagerDuty and Opsgenie. An SSL warning gets an incident of
 * its own: a check's recovery must not resolve it, nor may it merge into a failure incident.
 */
export function incidentKeyOf(m: AlertMessage): string {
  return m.alertType === 'ALERT_SSL' ? `${m.incidentKey}:ssl` : m.incidentKey;
}

/** The facts as a flat string map (PagerDuty custom_details, Opsgenie details). */
export function alertDetails(m: AlertMessage): Record<string, string> {
  return Object.fromEntries(alertFacts(m).map((f) => [f.label, f.value]));
}
