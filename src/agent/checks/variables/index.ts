/**
 * `{{VARIABLE}}` substitution in check definitions (docs/checks.md, "Variables"): the one step
 * between a leased job and its runner. ./template.ts reads the references, ./scope.ts resolves them,
 * ./fields.ts renders fields and collects notes, and one module per check type says which fields
 * take them (./api-check.ts; a URL monitor, once it exists, adds its own beside it).
 *
 * Secret variables: the job's Scrubber already holds every secret variable's value with its
 * URI-encoded forms. What it cannot know is how the URL parser rewrites a value inserted as it is
 * (`{{{SECRET}}}`) into a URL: a space becomes %20, a quote %22 or %27, a tab disappears. Those
 * forms of each substituted secret are added to the job's scrubber here (./url-forms.ts).
 */
import type { CheckDefinition } from '../../../shared/checks/types.ts';
import { substituteApiCheck } from './api-check.ts';
import type { VariableNote } from './notes.ts';
import { type RunInfo, variableScope } from './scope.ts';
import { urlParserForms } from './url-forms.ts';

export { type VariableNote, withVariableNotes } from './notes.ts';
export type { RunInfo } from './scope.ts';

/** What the substitution tells about secrets: the daemon passes the job's Scrubber. */
export interface SecretSink {
  add(value: string): unknown;
}

/**
 * The check its runner should run, variables substituted, and notes for references left as written.
 * Only API checks take variables in the reference; other types are returned unchanged.
 */
export function substituteVariables(
  check: CheckDefinition,
  run: RunInfo,
  secrets?: SecretSink,
): { check: CheckDefinition; notes: VariableNote[] } {
  if (check.checkType !== 'API') return { check, notes: [] };
  const onSecret = (value: string) => {
    for (const form of urlParserForms(value)) secrets?.add(form);
  };
  return substituteApiCheck(check, variableScope(check, { ...run, onSecret }));
}
