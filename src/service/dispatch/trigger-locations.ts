/** Where a trigger (check-trigger.ts, group-trigger.ts) runs a check. */
import type { Placement } from '../checks/group-merge.ts';
import type { StoredCheck } from '../store/store.ts';

/**
 * The check's effective locations; none for a heartbeat (pinged from outside, there is nothing to
 * run) or a check deactivated itself or by its group.
 */
export function triggeredLocations(check: Pick<StoredCheck, 'checkType'>, placement: Placement): string[] {
  return check.checkType !== 'HEARTBEAT' && placement.activated ? placement.locationIds : [];
}
