/** Wall-clock limits the agent enforces per run, by check type (the reference's limits). */
import type { CheckType } from '../../shared/checks/types.ts';

export const RUN_TIMEOUT_MS: Readonly<Record<CheckType, number>> = {
  API: 30_000,
  TCP: 30_000,
  DNS: 30_000,
  ICMP: 30_000,
  BROWSER: 240_000,
  MULTI_STEP: 240_000,
  PLAYWRIGHT: 3_600_000,
};
