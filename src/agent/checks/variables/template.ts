/**
 * `{{...}}` references in one text, as the reference's API checks read them (Handlebars delimiters):
 * `{{NAME}}` puts the value in URI-encoded (encodeURIComponent), `{{{NAME}}}` puts it in as it is.
 * Whitespace inside the braces is allowed. What the braces hold is resolved by a scope
 * (./scope.ts); a reference the scope cannot resolve stays in the text exactly as written, and the
 * caller is told why, so the result can say so.
 */

/** What a scope answers for the inside of one pair of braces. */
export type Resolution =
  | { kind: 'value'; value: string }
  /** A reference that names something this check does not have, or a helper given bad arguments. */
  | { kind: 'unresolved'; reason: string }
  /** Not a variable reference at all (e.g. `{{#if x}}`, text in braces): left alone, no note. */
  | { kind: 'not-a-reference' };

export type Resolve = (expression: string) => Resolution;

/** A reference that stayed as written, and why. */
export interface UnresolvedReference {
  reference: string;
  reason: string;
}

export interface Rendered {
  text: string;
  unresolved: UnresolvedReference[];
}

// Triple braces first, so `{{{X}}}` is not read as `{` + `{{X}}` + `}`. The inside holds no braces.
const REFERENCE = /\{\{\{([^{}]*)\}\}\}|\{\{([^{}]*)\}\}/g;

/** `text` with every reference `resolve` can answer replaced; the others kept and reported. */
export function renderTemplate(text: string, resolve: Resolve): Rendered {
  const unresolved: UnresolvedReference[] = [];
  if (!text.includes('{{')) return { text, unresolved };
  const out = text.replace(REFERENCE, (whole: string, raw: string | undefined, encoded: string | undefined) => {
    const expression = (raw ?? encoded ?? '').trim();
    const answer = resolve(expression);
    if (answer.kind === 'value') return raw !== undefined ? answer.value : encodeURIComponent(answer.value);
    if (answer.kind === 'unresolved') unresolved.push({ reference: whole, reason: answer.reason });
    return whole;
  });
  return { text: out, unresolved };
}
