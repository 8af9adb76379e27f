/**
 * Which dashboard a request is for, and the paths its page and parts live at. A dashboard has two
 * public addresses: `/dashboards/<customUrl>` on the service, and `/` of its customDomain, where its
 * parts sit under `/-/dashboard/`. Addresses are unique across accounts, so the lookup needs none.
 */
import { customDomainKey, customUrlKey } from '../../routes/dashboards.ts';
import type { StoredDashboard } from '../../store/heartbeat-dashboard-types.ts';
import type { Store } from '../../store/store.ts';

export interface LocatedDashboard {
  dashboard: StoredDashboard;
  /** The page's path. */
  page: string;
  /** The prefix of its live region and stylesheet. */
  parts: string;
  /** The path its viewer-key cookie is scoped to. */
  cookiePath: string;
}

export const DOMAIN_PARTS = '/-/dashboard';

export async function dashboardAtUrl(store: Store, customUrl: string): Promise<LocatedDashboard | undefined> {
  const key = customUrlKey(customUrl);
  const dashboard = key ? await store.dashboards.findByAddress('customUrl', key) : undefined;
  if (!dashboard) return undefined;
  const page = `/dashboards/${encodeURIComponent(key ?? '')}`;
  return { dashboard, page, parts: page, cookiePath: page };
}

export async function dashboardAtHost(store: Store, host: string): Promise<LocatedDashboard | undefined> {
  let key: string | null;
  try {
    key = customDomainKey(host);
  } catch {
    return undefined; // not a domain name (an IP address, localhost): no dashboard can be there
  }
  const dashboard = key ? await store.dashboards.findByAddress('customDomain', key) : undefined;
  return dashboard && { dashboard, page: '/', parts: DOMAIN_PARTS, cookiePath: '/' };
}
