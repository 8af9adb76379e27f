/**
 * What the public status pages read, and the reader keys of private pages. Same conventions as
 * ./store.ts; the reads that take a page are bounded to the page's account and services.
 */
import type { IncidentRecord, IncidentSeverity, Page, StatusPage } from './status-pages-types.ts';

export interface StatusPageKeyRecord {
  id: string;
  statusPageId: string;
  /** `sp_…a1b2`: enough to tell keys apart, never to use one. */
  maskedKey: string;
  createdAt: string;
  updatedAt: string | null;
}

export interface StatusPageKeyRepo {
  /** A new key; the raw value is returned here once and never stored. Undefined: not the account's page. */
  create(accountId: string, statusPageId: string): Promise<{ record: StatusPageKeyRecord; key: string } | undefined>;
  /** Oldest first; undefined when the page is not the account's. */
  list(accountId: string, statusPageId: string): Promise<StatusPageKeyRecord[] | undefined>;
  revoke(accountId: string, statusPageId: string, keyId: string): Promise<boolean>;
  /** Whether `rawKey` is one of this page's keys (looked up by its hash). */
  opens(statusPageId: string, rawKey: string): Promise<boolean>;
}

/** An incident as a day of the history bar shows it: no updates, only the page's services it touches. */
export interface IncidentDay {
  id: string;
  name: string;
  severity: IncidentSeverity;
  startedAt: string;
  serviceId: string;
}

/** The incidents a public page shows: those of the page's account on the page's services. */
export interface PageScope {
  accountId: string;
  serviceIds: string[];
}

export interface StatusPageReadRepo {
  /** A number that moves whenever anything the account's status pages show changes (0 before any). */
  version(accountId: string): Promise<number>;
  /** The page at `/status/<url>` (url) or at `/` of a custom domain; any account, as addresses are unique. */
  findByAddress(kind: 'url' | 'customDomain', value: string): Promise<StatusPage | undefined>;
  /** Unresolved incidents, newest first, at most `limit`, with their updates. */
  openIncidents(scope: PageScope, limit: number): Promise<IncidentRecord[]>;
  /** For each service with an unresolved incident: the highest severity among them. */
  openSeverities(scope: PageScope): Promise<Map<string, IncidentSeverity>>;
  /** One row per (incident, service of the page) for incidents started at or after `since`, newest first. */
  startedSince(scope: PageScope, since: string): Promise<IncidentDay[]>;
  /** Newest started first; `nextId` is an opaque cursor. */
  history(scope: PageScope, page: { limit: number; nextId?: string }): Promise<Page<IncidentRecord>>;
  /** The incident when it is the account's and touches one of the page's services. */
  incident(scope: PageScope, incidentId: string): Promise<IncidentRecord | undefined>;
}
