/**
 * WEBHOOK templates: the vendor's variables (integrations/alerts/webhooks.mdx) filled from an
 * AlertMessage, rendered with Handlebars in an environment of its own (./template-helpers.ts), so
 * a channel's template cannot see or change helpers registered elsewhere in the process.
 */
import { STATUS_CODES } from 'node:http';
import Handlebars from 'handlebars';
import { alertTitle, isReminder } from './alert-text.ts';
import { registerTemplateHelpers } from './template-helpers.ts';
import type { AlertMessage } from './types.ts';

const env = Handlebars.create();
registerTemplateHelpers(env);

/** Compiled templates by escaping and source: a channel's URL, headers and body are rendered for every alert. */
const cache = new Map<string, HandlebarsTemplateDelegate>();
/** Bounds the cache: one entry per distinct template text in use, which few installations exceed. */
const CACHE_SIZE = 1000;

function remember(key: string, template: HandlebarsTemplateDelegate): void {
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  cache.set(key, template);
}

/** A template that does not compile, or fails while rendering (e.g. a helper given a bad date). */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

/**
 * Every variable the vendor documents. Those Outpost has no value for render empty: AI_ANALYSIS_*
 * (no AI analysis), CHECK_DESCRIPTION and SSL_CHECK_DOMAIN (not part of the alert), and
 * REMINDER_SEQUENCE for a reminder (the alert does not count its reminders).
 */
export function templateVariables(m: AlertMessage): Record<string, unknown> {
  const statusCode = m.statusCode === null ? '' : m.statusCode;
  return {
    ALERT_TITLE: alertTitle(m),
    ALERT_TYPE: m.alertType,
    API_CHECK_RESPONSE_STATUS_CODE: statusCode,
    API_CHECK_RESPONSE_STATUS_TEXT: STATUS_CODES[statusCode] ?? '',
    CHECK_ERROR_MESSAGE: m.error ?? '',
    CHECK_ID: m.checkId,
    CHECK_DESCRIPTION: '',
    CHECK_NAME: m.checkName,
    CHECK_RESULT_ID: m.resultId,
    CHECK_TYPE: m.checkType,
    GROUP_NAME: m.groupName ?? '',
    IS_REMINDER: isReminder(m.alertType),
    REGION: m.runLocation,
    REMINDER_SEQUENCE: isReminder(m.alertType) ? '' : 0,
    RESPONSE_TIME: m.responseTime,
    RESULT_LINK: m.resultUrl,
    RUN_LOCATION: m.runLocation,
    SSL_CHECK_DOMAIN: '',
    SSL_DAYS_REMAINING: m.sslDaysRemaining ?? '',
    STARTED_AT: m.startedAt,
    TAGS: m.tags,
    // Outpost's own additions: when the alert was raised, and the alert and notification ids.
    TIMESTAMP: m.createdAt,
    ALERT_ID: m.alertId,
    NOTIFICATION_ID: m.notificationId,
    AI_ANALYSIS_CLASSIFICATION: '',
    AI_ANALYSIS_CODE_FIX: '',
    AI_ANALYSIS_LINK: '',
    AI_ANALYSIS_ROOT_CAUSE: '',
    AI_ANALYSIS_USER_IMPACT: '',
  };
}

/**
 * Renders `source` with the message's variables. `html`: `{{X}}` HTML-escapes as the vendor's
 * bodies do (a quote in a check name cannot break a JSON body; `{{{X}}}` inserts as is); URLs,
 * headers and query values are rendered without escaping, as they are not HTML.
 */
export function renderTemplate(source: string, m: AlertMessage, opts: { now: number; escape: boolean }): string {
  const key = `${opts.escape ? 'e' : 'r'}${source}`;
  try {
    const template = cache.get(key) ?? env.compile(source, { noEscape: !opts.escape, strict: false });
    const rendered = template(templateVariables(m), { data: { now: opts.now } });
    // Kept once it rendered: Handlebars compiles on first use, so a broken template is never cached.
    if (!cache.has(key)) remember(key, template);
    return rendered;
  } catch (err) {
    throw new TemplateError((err as Error).message);
  }
}
