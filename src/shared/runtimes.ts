/**
 * Which runtime a check's job needs, the same answer on both sides: the service stores it with the
 * run and leases the run only to agents that carry it; the agent picks the runtime by it.
 */
import { type CheckDefinition, DEFAULT_RUNTIME_ID } from './checks/types.ts';

/** Check types whose every run is user code (a browser script, a multistep script, a Playwright suite). */
const USER_CODE_TYPES = new Set(['BROWSER', 'MULTI_STEP', 'PLAYWRIGHT']);

const hasCode = (s: string | null | undefined): boolean => typeof s === 'string' && s.trim() !== '';

/** Whether the check runs user code on the agent (setup or teardown scripts, or a scripted type). */
export function runsUserCode(
  check: Pick<CheckDefinition, 'checkType' | 'localSetupScript' | 'localTearDownScript'>,
): boolean {
  return USER_CODE_TYPES.has(check.checkType) || hasCode(check.localSetupScript) || hasCode(check.localTearDownScript);
}

/**
 * The runtime id the run needs, or null when it runs no user code (any agent may take it). A check
 * with user code but no runtimeId (a job from an older service) gets the default runtime.
 */
export function runtimeNeededBy(
  check: Pick<CheckDefinition, 'checkType' | 'localSetupScript' | 'localTearDownScript' | 'runtimeId'>,
): string | null {
  if (!runsUserCode(check)) return null;
  return check.runtimeId ?? DEFAULT_RUNTIME_ID;
}
