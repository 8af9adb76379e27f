/**
 * The reads that building a run's definition repeats for every check of one account (its variables)
 * or of one group, made once per enqueued batch: at thousands of runs a tick, the account's
 * variables were read and their sealed values opened once per run. A batch's reads are its own, so
 * a variable or group changed since is seen by the next tick, as before.
 */
import type { CheckGroupRepo, StoredCheckGroup } from '../store/check-group-types.ts';
import type { AccountVariable, SnippetRepo, VariableRepo } from '../store/variables-types.ts';

/** What building a definition reads (checks/user-code.ts, checks/group-of.ts). */
export interface DefinitionReads {
  variables: Pick<VariableRepo, 'list'>;
  snippets: Pick<SnippetRepo, 'getMany'>;
  checkGroups: Pick<CheckGroupRepo, 'get'>;
}

/** Memoises `load` by key; a failed load is not kept, so the next caller tries again. */
function memo<T>(load: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const seen = new Map<string, Promise<T>>();
  return (key) => {
    let found = seen.get(key);
    if (!found) {
      found = load(key);
      seen.set(key, found);
      found.catch(() => seen.delete(key));
    }
    return found;
  };
}

/** `store`'s reads, with each account's variables and each group read at most once. */
export function readsOncePerBatch(store: DefinitionReads): DefinitionReads {
  const variablesOf = memo<AccountVariable[]>((accountId) => store.variables.list(accountId));
  // Keyed by account and id together: a group id means nothing outside its account.
  const groupOf = memo<StoredCheckGroup | undefined>((key) => {
    const [accountId, id] = JSON.parse(key) as [string, number];
    return store.checkGroups.get(accountId, id);
  });
  return {
    snippets: store.snippets,
    variables: { list: (accountId, opts) => (opts ? store.variables.list(accountId, opts) : variablesOf(accountId)) },
    checkGroups: { get: (accountId, id) => groupOf(JSON.stringify([accountId, id])) },
  };
}
