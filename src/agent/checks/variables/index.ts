/**
 * `{{VARIABLE}}` substitution in check definitions (docs/checks.md, "Variables"): the one step
 * between a leased job and its runner. ./template.ts reads the references, ./scope.ts resolves them,
 * ./fields.ts renders fields and collects notes, and one module per check type says which fields
 * take them (./api-check.ts; a URL monitor, once it exists, adds its own beside it).
 *
 * Secret variables need nothing here: the job's Scrubber already holds every secret variable's
 * value in each form it can take in a result, the URL parser's rewrites of a value inserted as it
 * is (`{{{SECRET}}}`) included (src/agent/scrub/forms.ts).
 */
import type { CheckDefinition } from '../../../shared/checks/types.ts';
import { substituteApiCheck } from './api-check.ts';
import type { VariableNote } from './notes.ts';
import { type RunInfo, variableScope } from './scope.ts';

export { type VariableNote, withVariableNotes } from './notes.ts';
export type { RunInfo } from './scope.ts';

/**
 * The check its runner should run, variables substituted, and notes for references left as written.
 * Only API checks take variables in the reference; other types are returned unchanged.
 */
export function substituteVariables(
  check: CheckDefinition,
  run: RunInfo,
): { check: CheckDefinition; notes: VariableNote[] } {
  if (check.checkType !== 'API') return { check, notes: [] };
  return substituteApiCheck(check, variableScope(check, run));
}
