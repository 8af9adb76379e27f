/** The check runners this agent carries, by type. The agent advertises exactly these when it registers. */
import type { CheckType } from '../../shared/checks/types.ts';
import { apiCheckRunner } from './api.ts';
import { browserCheckRunner } from './browser.ts';
import { dnsCheckRunner } from './dns.ts';
import { icmpCheckRunner } from './icmp.ts';
import { multiStepCheckRunner } from './multistep.ts';
import { playwrightCheckRunner } from './playwright.ts';
import type { CheckRunner } from './runner.ts';
import { tcpCheckRunner } from './tcp.ts';

export const RUNNERS: ReadonlyMap<CheckType, CheckRunner> = new Map<CheckType, CheckRunner>([
  ['API', apiCheckRunner as CheckRunner],
  ['TCP', tcpCheckRunner as CheckRunner],
  ['DNS', dnsCheckRunner as CheckRunner],
  ['ICMP', icmpCheckRunner as CheckRunner],
  ['PLAYWRIGHT', playwrightCheckRunner as CheckRunner],
  ['BROWSER', browserCheckRunner as CheckRunner],
  ['MULTI_STEP', multiStepCheckRunner as CheckRunner],
]);
