/**
 * Substitution field by field, for any check type: each type's module names its fields (the path
 * that goes into a note) and takes the notes at the end. ./api-check.ts uses it; a URL monitor
 * would do the same with its own fields.
 */
import type { KeyValue } from '../../../shared/checks/types.ts';
import type { VariableNote } from './notes.ts';
import { renderTemplate, type Resolve } from './template.ts';

/** Renders fields one by one and collects a note for each reference left as written. */
export class FieldRenderer {
  readonly notes: VariableNote[] = [];
  #resolve: Resolve;

  constructor(resolve: Resolve) {
    this.#resolve = resolve;
  }

  /** Resolves the fields rendered from now on with `resolve`. */
  use(resolve: Resolve): void {
    this.#resolve = resolve;
  }

  text(field: string, value: string): string {
    const { text, unresolved } = renderTemplate(value, this.#resolve);
    for (const u of unresolved)
      this.notes.push({ field, reference: u.reference, message: `${u.reason}; sent as written` });
    return text;
  }

  values(field: string, pairs: KeyValue[]): KeyValue[] {
    return pairs.map((p, i) => ({ ...p, value: this.text(`${field}[${i}].value`, p.value) }));
  }
}
