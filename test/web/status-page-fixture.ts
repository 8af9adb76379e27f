/** Status pages, services and incidents made through the public API, for the status page tests. */
import type { TestAccount } from '../helpers/public-api.ts';
import type { WebService } from '../helpers/web-service.ts';

export interface Made {
  id: string;
  name: string;
}

/** A service as the API returns it: incidents name their services with the whole object. */
export type MadeService = Made & Record<string, unknown>;

export async function makeService(web: WebService, account: TestAccount, name: string): Promise<MadeService> {
  return web.api<MadeService>(account, 'POST', '/v1/status-pages/services', { name });
}

export async function makePage(
  web: WebService,
  account: TestAccount,
  body: { name: string; url: string; cards: { name: string; services: Made[] }[]; [field: string]: unknown },
): Promise<{ id: string; url: string }> {
  return web.api(account, 'POST', '/v1/status-pages', {
    ...body,
    cards: body.cards.map((c) => ({ name: c.name, services: c.services.map((s) => ({ id: s.id })) })),
  });
}

export interface IncidentSpec {
  name: string;
  severity: 'CRITICAL' | 'MAJOR' | 'MEDIUM' | 'MINOR';
  services: MadeService[];
  /** The first update: its text, status and public date (default now). */
  description?: string;
  status?: 'INVESTIGATING' | 'IDENTIFIED' | 'MONITORING' | 'RESOLVED';
  at?: Date;
}

export async function makeIncident(web: WebService, account: TestAccount, spec: IncidentSpec): Promise<Made> {
  return web.api<Made>(account, 'POST', '/v1/status-pages/incidents', {
    name: spec.name,
    severity: spec.severity,
    services: spec.services,
    incidentUpdates: [
      {
        description: spec.description ?? `${spec.name}: we are looking into it.`,
        status: spec.status ?? 'INVESTIGATING',
        publicIncidentUpdateDate: (spec.at ?? new Date()).toISOString(),
        notifySubscribers: false,
      },
    ],
  });
}

export async function addUpdate(
  web: WebService,
  account: TestAccount,
  incident: Made,
  update: { description: string; status?: string; at?: Date },
): Promise<void> {
  await web.api(account, 'POST', `/v1/status-pages/incidents/${incident.id}/incident-updates`, {
    description: update.description,
    ...(update.status ? { status: update.status } : {}),
    publicIncidentUpdateDate: (update.at ?? new Date()).toISOString(),
    notifySubscribers: false,
  });
}

export const daysAgo = (days: number, hour = 12): Date => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - days, hour));
};
