/**
 * Check definitions as the agent receives them inside a job, and the result shapes it sends back:
 * the index of ./*.ts, where each check type declares them as TypeBox schemas (the types are their
 * `Static`). Property names follow the published API (../shared/reference/openapi-subset.json) so
 * that a stored check and a job payload read the same way.
 */
import type { ApiCheckDefinition } from './api.ts';
import type { BrowserCheckDefinition, MultiStepCheckDefinition } from './browser.ts';
import type { CheckBase, CheckType } from './common.ts';
import type { DnsCheckDefinition } from './dns.ts';
import type { IcmpCheckDefinition } from './icmp.ts';
import type { SslCheckDefinition, UrlCheckDefinition } from './monitors.ts';
import type { PlaywrightCheckDefinition } from './playwright.ts';
import type { TcpCheckDefinition } from './tcp.ts';

export * from './api.ts';
export * from './assertions.ts';
export * from './browser.ts';
export * from './common.ts';
export * from './dns.ts';
export * from './icmp.ts';
export * from './playwright.ts';
export * from './tcp.ts';

/** A check definition whose type has no runner in this version; the agent reports it plainly. */
export interface OtherCheckDefinition extends CheckBase {
  checkType: Exclude<
    CheckType,
    'API' | 'TCP' | 'DNS' | 'ICMP' | 'BROWSER' | 'MULTI_STEP' | 'PLAYWRIGHT' | 'URL' | 'SSL'
  >;
  [key: string]: unknown;
}

export type CheckDefinition =
  | ApiCheckDefinition
  | TcpCheckDefinition
  | DnsCheckDefinition
  | IcmpCheckDefinition
  | BrowserCheckDefinition
  | MultiStepCheckDefinition
  | PlaywrightCheckDefinition
  | UrlCheckDefinition
  | SslCheckDefinition
  | OtherCheckDefinition;
