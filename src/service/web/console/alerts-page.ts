/**
 * Alerts (/app/alerts): the account's alert history (what each check's alert state went through)
 * and the outcome of every notification sent for them (channel, status, attempts, last error).
 */
import type { FastifyInstance } from 'fastify';
import type { AlertNotificationRecord } from '../../store/alert-notification-types.ts';
import type { CheckAlertRecord } from '../../store/check-status-types.ts';
import type { WebDeps } from '../deps.ts';
import { html } from '../html.ts';
import { resultPageUrl } from './check-page.ts';
import { countOf, timeOf } from './format.ts';
import { sendConsolePage } from './layout.ts';
import { LIVE_SECONDS, sendLiveContent } from './live.ts';

const SHOWN = 50;
const ALL_TIME = { from: new Date(0).toISOString(), to: '9999-12-31T23:59:59.999Z', limit: SHOWN, page: 1 };

const STATUS_CSS = { delivered: 'state-ok', pending: 'state-degraded', failed: 'state-down' } as const;

const checkLink = (checkId: string, name: string) =>
  html`<a href=${`/app/checks/${encodeURIComponent(checkId)}`}>${name}</a>`;

function alertsTable(alerts: CheckAlertRecord[]) {
  if (alerts.length === 0)
    return html`<p class="empty">No alerts yet: when a check starts failing, degrades or recovers, its alert appears here.</p>`;
  return html`<table>
    <caption>The latest ${countOf(alerts.length, 'alert')}, newest first</caption>
    <thead><tr><th scope="col">Time</th><th scope="col">Check</th><th scope="col">Alert</th><th scope="col">Location</th><th scope="col">Error</th><th scope="col">Result</th></tr></thead>
    <tbody>${alerts.map(
      (a) => html`<tr>
        <th scope="row">${timeOf(a.createdAt)}</th>
        <td>${checkLink(a.checkId, a.name)}</td>
        <td>${a.alertType}</td>
        <td>${a.runLocation}</td>
        <td>${a.error ?? ''}</td>
        <td><a href=${resultPageUrl(a.checkId, a.resultId)}>Result<span class="sr-only"> of ${a.name} at ${a.createdAt}</span></a></td>
      </tr>`,
    )}</tbody>
  </table>`;
}

function notificationsTable(notifications: AlertNotificationRecord[]) {
  if (notifications.length === 0)
    return html`<p class="empty">No notifications yet: alerts are sent to the alert channels a check subscribes to.</p>`;
  return html`<table>
    <caption>The latest ${countOf(notifications.length, 'notification')}, newest first</caption>
    <thead><tr><th scope="col">Time</th><th scope="col">Check</th><th scope="col">Alert</th><th scope="col">Channel</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last error</th></tr></thead>
    <tbody>${notifications.map(
      (n) => html`<tr>
        <th scope="row">${timeOf(n.createdAt)}</th>
        <td>${checkLink(n.checkId, n.message.checkName)}</td>
        <td>${n.message.alertType}</td>
        <td>${n.channelType} <span class="muted">#${n.alertChannelId}</span></td>
        <td><span class=${`state ${STATUS_CSS[n.state]}`}>${n.state}</span>${n.sentAt ? html` ${timeOf(n.sentAt)}` : null}</td>
        <td>${n.attempts}</td>
        <td>${n.lastError ?? ''}</td>
      </tr>`,
    )}</tbody>
  </table>`;
}

async function alertsContent(deps: WebDeps, accountId: string) {
  const [alerts, notifications] = await Promise.all([
    deps.store.checkAlerts.list(accountId, ALL_TIME),
    deps.store.alertNotifications.list(accountId, ALL_TIME),
  ]);
  return html`<h2>Alert history</h2>${alertsTable(alerts)}<h2>Notifications</h2>${notificationsTable(notifications)}`;
}

export async function alertsPage(app: FastifyInstance, deps: WebDeps): Promise<void> {
  app.get('/app/alerts', async (request, reply) =>
    sendConsolePage(request, reply, {
      title: 'Alerts',
      current: '/app/alerts',
      children: html`<div data-live-src="/app/alerts/live" data-live-seconds=${LIVE_SECONDS}>${await alertsContent(deps, request.consoleAccountId)}</div>`,
    }),
  );
  app.get('/app/alerts/live', { config: { consoleActivity: false } }, async (request, reply) =>
    sendLiveContent(reply, await alertsContent(deps, request.consoleAccountId)),
  );
}
