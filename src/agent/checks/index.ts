/**
 * The check runners this agent carries, by type. The agent advertises exactly the ones this machine can
 * run (selectRunners) when it registers, so the service never sends it a job it cannot do.
 */
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

/** What the machine offers heavy checks; read once at start. */
export interface RunnerEnvironment {
  /** The system Chromium (CHROMIUM_PATH) exists and is executable. */
  chromium: boolean;
  /** At least one runtime for user code was found (RUNTIMES_DIR). */
  runtimes: boolean;
  /** The suite engines are installed (SUITE_ENGINES_DIR). */
  suiteEngines: boolean;
}

/**
 * The runners this agent can really run. Uptime checks need nothing beyond the agent; browser and
 * multistep checks need Chromium and a runtime; suites need Chromium and the suite engines. The
 * lightweight uptime image has none of those, so it advertises API, TCP, DNS and ICMP only, and a
 * standard agent missing Chromium says so at start instead of failing every browser run.
 */
export function selectRunners(
  all: ReadonlyMap<CheckType, CheckRunner>,
  env: RunnerEnvironment,
): { runners: Map<CheckType, CheckRunner>; omitted: Array<{ checkType: CheckType; reason: string }> } {
  const missing = (type: CheckType): string | undefined => {
    if (type === 'BROWSER' || type === 'MULTI_STEP') {
      if (!env.chromium) return 'Chromium is not installed (CHROMIUM_PATH)';
      if (!env.runtimes) return 'no runtime for user code is installed (RUNTIMES_DIR)';
    }
    if (type === 'PLAYWRIGHT') {
      if (!env.chromium) return 'Chromium is not installed (CHROMIUM_PATH)';
      if (!env.suiteEngines) return 'the suite engines are not installed (SUITE_ENGINES_DIR)';
    }
    return undefined;
  };
  const runners = new Map<CheckType, CheckRunner>();
  const omitted: Array<{ checkType: CheckType; reason: string }> = [];
  for (const [type, runner] of all) {
    const reason = missing(type);
    if (reason) omitted.push({ checkType: type, reason });
    else runners.set(type, runner);
  }
  return { runners, omitted };
}
