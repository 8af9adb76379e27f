/** How a run says which `{{...}}` references it could not resolve (RunResult.details.variableNotes). */
import type { CheckOutcome } from '../runner.ts';
import type { VariableNote } from '../../../shared/checks/details.ts';

/** One reference sent as written: where it was, what it said, and why it was not replaced. */
export type { VariableNote };

/** The outcome with the notes in `details.variableNotes` (unchanged when there are none). */
export function withVariableNotes(outcome: CheckOutcome, notes: readonly VariableNote[]): CheckOutcome {
  if (notes.length === 0) return outcome;
  return { ...outcome, details: { ...outcome.details, variableNotes: [...notes] } };
}
