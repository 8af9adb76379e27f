/** How a run says which `{{...}}` references it could not resolve (RunResult.details.variableNotes). */
import type { CheckOutcome } from '../runner.ts';

/** One reference sent as written: where it was, what it said, and why it was not replaced. */
export interface VariableNote {
  /** The field of the check definition, e.g. `request.url` or `request.headers[0].value`. */
  field: string;
  /** The reference as written, braces included. */
  reference: string;
  message: string;
}

/** The outcome with the notes in `details.variableNotes` (unchanged when there are none). */
export function withVariableNotes(outcome: CheckOutcome, notes: readonly VariableNote[]): CheckOutcome {
  if (notes.length === 0) return outcome;
  return { ...outcome, details: { ...outcome.details, variableNotes: [...notes] } };
}
