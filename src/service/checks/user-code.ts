/**
 * What a job needs to run user code, resolved by the service so the agent gets it ready to use:
 * - environmentVariables: the account's, then the group's, then the check's; a later level replaces
 *   an earlier one with the same key. Every job carries them, whatever its type: the agent scrubs the
 *   secret ones from everything it sends, so it must know them even when no script reads them.
 * - localSetupScript / localTearDownScript: each step's snippet code (if any) then its inline code,
 *   the group's setup before the check's and the check's teardown before the group's (./group-merge.ts
 *   mergeScripts gives the order). Several steps are joined, each in its own block so their
 *   declarations do not collide. A snippet deleted since is replaced by code that throws, naming it:
 *   the check fails with that reason instead of silently skipping a step.
 * - runtimeId: for checks that run user code, the check's, else the group's, else the account's
 *   default (no account setting exists yet: DEFAULT_RUNTIME_ID). Other checks keep what they name.
 */
import {
  type CheckDefinition,
  type CheckType,
  DEFAULT_RUNTIME_ID,
  type EnvironmentVariable,
  type ScriptRef,
} from '../../shared/checks/types.ts';
import type { StoredCheckGroup } from '../store/check-group-types.ts';
import type { StoredCheck } from '../store/store.ts';
import type { SnippetRepo, VariableRepo } from '../store/variables-types.ts';
import { mergeScripts, mergeVariables } from './group-merge.ts';

export interface UserCodeContext {
  accountVariables: EnvironmentVariable[];
  /** Code of the snippets the check and its group name, by id (only the account's own). */
  snippets: ReadonlyMap<number, string>;
  accountRuntimeId: string;
}

export const NO_USER_CODE_CONTEXT: UserCodeContext = {
  accountVariables: [],
  snippets: new Map(),
  accountRuntimeId: DEFAULT_RUNTIME_ID,
};

/** Types whose every run is user code (a browser script, a Playwright suite). */
const SCRIPTED_TYPES: readonly CheckType[] = ['BROWSER', 'MULTI_STEP', 'PLAYWRIGHT'];

function snippetIdsOf(body: Record<string, unknown> | undefined): number[] {
  if (!body) return [];
  return [body.setupSnippetId, body.tearDownSnippetId].filter((id): id is number => typeof id === 'number');
}

/** Reads what withUserCode needs from the store: the account's variables and the named snippets. */
export async function userCodeContextOf(
  store: { variables: Pick<VariableRepo, 'list'>; snippets: Pick<SnippetRepo, 'getMany'> },
  check: Pick<StoredCheck, 'accountId' | 'body'>,
  group: Pick<StoredCheckGroup, 'body'> | undefined,
): Promise<UserCodeContext> {
  const ids = [
    ...snippetIdsOf(check.body),
    ...snippetIdsOf(group?.body as unknown as Record<string, unknown> | undefined),
  ];
  const [variables, snippets] = await Promise.all([
    store.variables.list(check.accountId),
    store.snippets.getMany(check.accountId, ids),
  ]);
  return {
    accountVariables: variables.map(({ key, value, secret }) => ({ key, value, secret })),
    snippets: new Map(snippets.map((s) => [s.id, s.script])),
    accountRuntimeId: DEFAULT_RUNTIME_ID,
  };
}

function stepCode(ref: ScriptRef, snippets: ReadonlyMap<number, string>, phase: 'setup' | 'teardown'): string[] {
  const parts: string[] = [];
  if (ref.snippetId !== null) {
    const code = snippets.get(ref.snippetId);
    parts.push(
      code ??
        `throw new Error(${JSON.stringify(`the ${ref.from}'s ${phase} snippet ${ref.snippetId} no longer exists; choose another snippet or remove it`)});`,
    );
  }
  if (ref.script !== null) parts.push(ref.script);
  return parts;
}

/** One script from the steps in run order; null when there are none. */
export function joinSteps(
  refs: readonly ScriptRef[],
  snippets: ReadonlyMap<number, string>,
  phase: 'setup' | 'teardown',
): string | null {
  const parts = refs.flatMap((ref) => stepCode(ref, snippets, phase));
  if (parts.length === 0) return null;
  if (parts.length === 1) return parts[0] as string;
  return parts.map((code) => `{\n${code}\n}`).join('\n');
}

/**
 * `definition` (the check's own, its group applied) with variables, scripts and runtime resolved.
 * Empty lists and absent scripts are left out: absent means none (CheckBase).
 */
export function withUserCode(
  definition: CheckDefinition,
  checkBody: Record<string, unknown>,
  ctx: UserCodeContext,
): CheckDefinition {
  // With a group, applyGroup merged group and check variables and scripts already.
  const own = definition.environmentVariables ?? mergeVariables(undefined, checkBody.environmentVariables);
  const variables = mergeVariables(ctx.accountVariables, own);
  const scripts = definition.scripts ?? mergeScripts({}, checkBody);
  const setup = joinSteps(scripts.setup, ctx.snippets, 'setup');
  const tearDown = joinSteps(scripts.tearDown, ctx.snippets, 'teardown');
  const runsUserCode = SCRIPTED_TYPES.includes(definition.checkType) || setup !== null || tearDown !== null;
  const resolved: CheckDefinition = { ...definition };
  if (variables.length > 0) resolved.environmentVariables = variables;
  else delete resolved.environmentVariables;
  if (setup !== null) resolved.localSetupScript = setup;
  if (tearDown !== null) resolved.localTearDownScript = tearDown;
  if (runsUserCode) resolved.runtimeId = definition.runtimeId ?? ctx.accountRuntimeId;
  return resolved;
}
