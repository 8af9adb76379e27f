/**
 * WEBHOOK channels: the channel's method, URL, headers and query parameters, with a body rendered
 * from its template (./webhook-template.ts) or, without one, the alert's facts as JSON. Signed like
 * subscriber webhooks when the channel has a secret; `x-outpost-delivery` always carries the
 * notification id, the same on every attempt.
 */
import { signedDeliveryHeaders } from '../webhook.ts';
import { sendHttp } from './http.ts';
import { alertTitle } from './alert-text.ts';
import type { AlertMessage, ChannelSender, SendContext } from './types.ts';
import { renderTemplate, TemplateError } from './webhook-template.ts';

type WebhookChannel = Parameters<ChannelSender<'WEBHOOK'>>[1];

/** Methods whose requests carry no body. */
const BODILESS = new Set(['GET', 'HEAD', 'DELETE']);

/** The body without a template: every fact of the alert, as JSON. */
export function defaultWebhookBody(m: AlertMessage): string {
  return JSON.stringify({
    title: alertTitle(m),
    alertType: m.alertType,
    notificationId: m.notificationId,
    alertId: m.alertId,
    checkId: m.checkId,
    checkName: m.checkName,
    checkType: m.checkType,
    groupName: m.groupName,
    tags: m.tags,
    runLocation: m.runLocation,
    responseTime: m.responseTime,
    error: m.error,
    statusCode: m.statusCode,
    resultId: m.resultId,
    resultUrl: m.resultUrl,
    startedAt: m.startedAt,
    createdAt: m.createdAt,
    sslDaysRemaining: m.sslDaysRemaining,
  });
}

interface WebhookRequest {
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Renders the URL, header and query values, and the body; throws TemplateError or a TypeError for a bad URL. */
function renderRequest(m: AlertMessage, config: WebhookChannel['config'], now: number): WebhookRequest {
  const raw = (text: string) => renderTemplate(text, m, { now, escape: false });
  const url = new URL(raw(config.url));
  for (const { key, value } of config.queryParameters ?? []) url.searchParams.append(key, raw(value));
  const headers: Record<string, string> = {};
  for (const { key, value } of config.headers ?? []) headers[key.toLowerCase()] = raw(value);
  if (BODILESS.has(config.method)) return { url, headers, body: undefined };
  const body = config.template ? renderTemplate(config.template, m, { now, escape: true }) : defaultWebhookBody(m);
  headers['content-type'] ??= 'application/json';
  return { url, headers, body };
}

export const sendWebhookAlert: ChannelSender<'WEBHOOK'> = async (m, channel, ctx: SendContext) => {
  const now = ctx.now();
  let req: WebhookRequest;
  try {
    req = renderRequest(m, channel.config, now);
  } catch (err) {
    const what =
      err instanceof TemplateError
        ? 'the webhook template does not render'
        : 'the webhook URL is not a URL once rendered';
    return { ok: false, permanent: true, error: `${what}: ${(err as Error).message}` };
  }
  // The signature covers the exact bytes sent (an empty body for GET/HEAD/DELETE).
  const signed = signedDeliveryHeaders(m.notificationId, channel.config.webhookSecret, req.body ?? '', now);
  return sendHttp(
    { method: channel.config.method, url: req.url, headers: { ...req.headers, ...signed }, body: req.body },
    { dispatcher: ctx.dispatcher, timeoutMs: ctx.timeoutMs, receiver: 'the webhook' },
  );
};
