/**
 * What `{{...}}` can name in a check (docs/checks.md, "Variables"), resolved in this order:
 *  1. the built-in generators `$UUID` (a random UUID v4) and `$RANDOM_NUMBER` (a whole number 0 to
 *     10000), fresh at every occurrence, and the `moment` helper (./moment.ts);
 *  2. the check's variables as the job carries them: account, then group, then check, already
 *     merged by the service, so a later one with the same key wins;
 *  3. the run's built-in variables (ACCOUNT_ID, CHECK_ID, CHECK_NAME, CHECK_RUN_ID, CHECK_TYPE,
 *     REGION), which a variable of the same name overrides.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { CheckDefinition } from '../../../shared/checks/types.ts';
import { momentHelper } from './moment.ts';
import type { Resolution, Resolve } from './template.ts';

/** What the agent knows about the run beyond its check. */
export interface RunInfo {
  runId: string;
  /** The private location's slug (REGION); unknown before the agent registered. */
  region?: string;
  /** Fixed in tests; the current time otherwise. */
  now?: Date;
}

const NAME = /^\$?[A-Za-z_][A-Za-z0-9_]*$/;
// `moment`, then arguments in double or single quotes.
const MOMENT = /^moment(?:\s+|$)/;
const ARGUMENT = /\s*(?:"([^"]*)"|'([^']*)')\s*/y;

const GENERATORS: Record<string, () => string> = {
  $UUID: () => randomUUID(),
  $RANDOM_NUMBER: () => String(randomInt(0, 10_001)),
};

/** The quoted arguments of a helper call, or undefined when they are not all quoted strings. */
function argumentsOf(text: string): string[] | undefined {
  const args: string[] = [];
  ARGUMENT.lastIndex = 0;
  while (ARGUMENT.lastIndex < text.length) {
    const m = ARGUMENT.exec(text);
    if (m === null) return undefined;
    args.push(m[1] ?? m[2] ?? '');
  }
  return args;
}

function resolveMoment(expression: string, now: Date): Resolution {
  const args = argumentsOf(expression.replace(MOMENT, ''));
  if (args === undefined)
    return {
      kind: 'unresolved',
      reason: 'the arguments of moment must be quoted strings, e.g. {{moment "2 days ago" "YYYY-MM-DD"}}',
    };
  const answer = momentHelper(args, now);
  return 'value' in answer ? { kind: 'value', value: answer.value } : { kind: 'unresolved', reason: answer.error };
}

/** The values of the run's built-in variables. */
function runVariables(check: CheckDefinition, run: RunInfo): Map<string, string> {
  const builtIn = new Map<string, string>([
    ['ACCOUNT_ID', check.accountId],
    ['CHECK_ID', check.id],
    ['CHECK_NAME', check.name],
    ['CHECK_RUN_ID', run.runId],
    ['CHECK_TYPE', check.checkType],
  ]);
  if (run.region !== undefined) builtIn.set('REGION', run.region);
  return builtIn;
}

/** The resolver for one run of `check`. */
export function variableScope(check: CheckDefinition, run: RunInfo): Resolve {
  const values = runVariables(check, run);
  for (const v of check.environmentVariables ?? []) values.set(v.key, v.value);
  const now = run.now ?? new Date();
  return (expression) => {
    if (MOMENT.test(expression)) return resolveMoment(expression, now);
    if (!NAME.test(expression)) return { kind: 'not-a-reference' };
    const generate = GENERATORS[expression];
    if (generate) return { kind: 'value', value: generate() };
    const value = values.get(expression);
    if (value !== undefined) return { kind: 'value', value };
    const reason = expression.startsWith('$')
      ? `${expression} is not a built-in variable; the built-ins are ${Object.keys(GENERATORS).join(', ')}, and {{moment "FORMAT"}} for dates and timestamps`
      : `no variable ${expression} is defined for this check (check, group or account)`;
    return { kind: 'unresolved', reason };
  };
}
