/**
 * The check runners this agent carries, by type. The agent advertises exactly the ones this machine can
 * run (selectRunners) when it registers, so the service never sends it a job it cannot do.
 */
import type { CheckType } from '../../shared/checks/types.ts';
import type { CheckRunner } from './runner.ts';

/**
 * A runner whose module is loaded on its first run. Why: the engines behind the check types cost an
 * agent memory the moment they are imported (the browser, multistep and suite runners bring the
 * sandbox, execa and Playwright's helpers), and most private locations run one or two types, so an
 * agent pays for the types it runs when it first runs them (BENCHMARKS.md, "Agent memory"). A module
 * that fails to load rejects that run (the daemon reports an agent error) and is tried again.
 */
export function lazyRunner(checkType: CheckType, load: () => Promise<CheckRunner>): CheckRunner {
  let loading: Promise<CheckRunner> | undefined;
  return {
    checkType,
    async run(check, ctx) {
      loading ??= load().catch((err: unknown) => {
        loading = undefined;
        throw err;
      });
      return (await loading).run(check, ctx);
    },
  };
}

export const RUNNERS: ReadonlyMap<CheckType, CheckRunner> = new Map<CheckType, CheckRunner>([
  ['API', lazyRunner('API', async () => (await import('./api.ts')).apiCheckRunner as CheckRunner)],
  ['TCP', lazyRunner('TCP', async () => (await import('./tcp.ts')).tcpCheckRunner as CheckRunner)],
  ['DNS', lazyRunner('DNS', async () => (await import('./dns.ts')).dnsCheckRunner as CheckRunner)],
  ['ICMP', lazyRunner('ICMP', async () => (await import('./icmp.ts')).icmpCheckRunner as CheckRunner)],
  [
    'PLAYWRIGHT',
    lazyRunner('PLAYWRIGHT', async () => (await import('./playwright.ts')).playwrightCheckRunner as CheckRunner),
  ],
  ['BROWSER', lazyRunner('BROWSER', async () => (await import('./browser.ts')).browserCheckRunner as CheckRunner)],
  [
    'MULTI_STEP',
    lazyRunner('MULTI_STEP', async () => (await import('./multistep.ts')).multiStepCheckRunner as CheckRunner),
  ],
  ['URL', lazyRunner('URL', async () => (await import('./url.ts')).urlCheckRunner as CheckRunner)],
  ['SSL', lazyRunner('SSL', async () => (await import('./ssl.ts')).sslCheckRunner as CheckRunner)],
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
 * lightweight uptime image has none of those, so it advertises API, TCP, DNS, ICMP, URL and SSL only, and a
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
