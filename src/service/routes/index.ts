/**
 * The public API: every route here requires an account (API key + x-service-account). Each
 * resource has its own file; this plugin only wires them and the authentication hook.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ServiceHooks } from '../app.ts';
import type { ServiceConfig } from '../config.ts';
import { useAccountAuth } from '../http/auth.ts';
import type { Store } from '../store/store.ts';
import { accountSettingsRoutes } from './account-settings.ts';
import { analyticsRoutes } from './analytics.ts';
import { accountRoutes } from './accounts.ts';
import { checkAlertRoutes } from './check-alerts.ts';
import { alertChannelRoutes } from './alert-channels.ts';
import { alertNotificationRoutes } from './alert-notifications.ts';
import { checkGroupTriggerRoutes } from './check-group-triggers.ts';
import { checkGroupRoutes } from './check-groups.ts';
import { checkResultRoutes } from './check-results.ts';
import { checkSessionRoutes } from './check-sessions.ts';
import { checkStatusRoutes } from './check-statuses.ts';
import { checkTriggerRoutes } from './check-triggers.ts';
import { checkRoutes } from './checks.ts';
import { checkV2Routes } from './check-reads.ts';
import { browserCheckRoutes } from './checks-browser.ts';
import { dnsCheckRoutes } from './checks-dns.ts';
import { heartbeatCheckRoutes } from './checks-heartbeat.ts';
import { icmpCheckRoutes } from './checks-icmp.ts';
import { multiStepCheckRoutes } from './checks-multistep.ts';
import { playwrightCheckRoutes } from './checks-playwright.ts';
import { tcpCheckRoutes } from './checks-tcp.ts';
import { sslCheckRoutes } from './checks-ssl.ts';
import { urlCheckRoutes } from './checks-url.ts';
import { dashboardIncidentRoutes } from './dashboard-incidents.ts';
import { dashboardRoutes } from './dashboards.ts';
import { heartbeatEventRoutes } from './heartbeat-events.ts';
import { incidentUpdateRoutes } from './incident-updates.ts';
import { maintenanceWindowRoutes } from './maintenance-windows.ts';
import { privateLocationMetricsRoutes } from './private-location-metrics.ts';
import { locationRoutes } from './locations.ts';
import { privateLocationRoutes } from './private-locations.ts';
import { reportingRoutes } from './reporting.ts';
import { runtimeRoutes } from './runtimes.ts';
import { snippetRoutes } from './snippets.ts';
import { clientCertificateRoutes } from './client-certificates.ts';
import { statusPageIncidentRoutes } from './status-page-incidents.ts';
import { statusPageServiceRoutes } from './status-page-services.ts';
import { statusPageKeyRoutes } from './status-page-keys.ts';
import { statusPageSubscriptionRoutes } from './status-page-subscriptions.ts';
import { statusPageRoutes } from './status-pages.ts';
import { variableRoutes } from './variables.ts';

export const publicApi: FastifyPluginAsync<{ store: Store; config: ServiceConfig; hooks: ServiceHooks }> = async (
  app,
  { store, config, hooks },
) => {
  // Registered without fastify-plugin, so the auth hook stays inside this plugin and does not
  // reach the agent API, which authenticates with location keys instead.
  useAccountAuth(app, store);
  await app.register(privateLocationRoutes, { store });
  await app.register(privateLocationMetricsRoutes, { store });
  await app.register(checkRoutes, { store, hooks, config });
  await app.register(tcpCheckRoutes, { store, hooks });
  await app.register(dnsCheckRoutes, { store, hooks });
  await app.register(icmpCheckRoutes, { store, hooks });
  await app.register(urlCheckRoutes, { store, hooks });
  await app.register(sslCheckRoutes, { store, hooks });
  await app.register(playwrightCheckRoutes, { store, hooks, config });
  await app.register(browserCheckRoutes, { store, hooks });
  await app.register(multiStepCheckRoutes, { store, hooks });
  await app.register(checkResultRoutes, { store });
  await app.register(checkStatusRoutes, { store });
  await app.register(checkAlertRoutes, { store });
  await app.register(checkGroupRoutes, { store, hooks });
  await app.register(checkGroupTriggerRoutes, { store });
  if (hooks.checkSessions) await app.register(checkSessionRoutes, { sessions: hooks.checkSessions, config });
  await app.register(checkTriggerRoutes, { store });
  await app.register(heartbeatCheckRoutes, { store, config });
  await app.register(heartbeatEventRoutes, { store });
  await app.register(dashboardRoutes, { store });
  await app.register(dashboardIncidentRoutes, { store });
  await app.register(statusPageRoutes, { store });
  await app.register(statusPageKeyRoutes, { store });
  await app.register(statusPageServiceRoutes, { store });
  await app.register(statusPageIncidentRoutes, { store, hooks });
  await app.register(incidentUpdateRoutes, { store, hooks });
  await app.register(statusPageSubscriptionRoutes, { store, config, hooks });
  await app.register(variableRoutes, { store });
  await app.register(snippetRoutes, { store });
  await app.register(clientCertificateRoutes, { store });
  await app.register(alertChannelRoutes, { store, config });
  await app.register(alertNotificationRoutes, { store });
  await app.register(maintenanceWindowRoutes, { store });
  await app.register(accountSettingsRoutes, { store });
  await app.register(analyticsRoutes, { store });
  await app.register(reportingRoutes, { store });
  // Reads that tools written for the reference API need (its CLI checks its credentials on /next/accounts).
  await app.register(accountRoutes);
  await app.register(locationRoutes, { store });
  await app.register(runtimeRoutes);
  await app.register(checkV2Routes, { store, config });
};
