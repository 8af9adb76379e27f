/**
 * Loads the group of a check for the run-time merge (./group-merge.ts), which itself stays pure.
 * Read fresh at every use, so a group edit applies from the next run on, like a check edit.
 */
import type { CheckGroupRepo, StoredCheckGroup } from '../store/check-group-types.ts';
import type { Store, StoredCheck } from '../store/store.ts';
import { effectivePlacement, groupIdOf, type Placement } from './group-merge.ts';

export async function groupOf(
  store: { checkGroups: Pick<CheckGroupRepo, 'get'> },
  check: Pick<StoredCheck, 'accountId' | 'body'>,
): Promise<StoredCheckGroup | undefined> {
  const id = groupIdOf(check);
  return id === undefined ? undefined : store.checkGroups.get(check.accountId, id);
}

/** Where and whether a check runs, its group considered. */
export async function placementOf(store: Pick<Store, 'checkGroups'>, check: StoredCheck): Promise<Placement> {
  return effectivePlacement(check, await groupOf(store, check));
}
