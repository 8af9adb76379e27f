/**
 * How a value inserted as it is into a URL comes out of the WHATWG URL parser, in the path, the
 * query and the fragment (each percent-encodes its own set of characters and drops tabs and
 * newlines). The result records the parsed URL, so these are forms a secret can take there.
 */
const BASE = 'http://outpost.invalid/';

/**
 * The forms of `value` in a parsed URL's path, query and fragment that differ from the value. A
 * component the value would end (a `?` or `#` in it) or rewrite (`\`, dot segments) is skipped:
 * the parser would keep only part of the value there.
 */
export function urlParserForms(value: string): string[] {
  const forms: string[] = [new URL(`${BASE}#${value}`).hash.slice(1)];
  if (!value.includes('#')) forms.push(new URL(`${BASE}?${value}`).search.slice(1));
  if (!/[?#\\]|(^|\/)\.\.?(\/|$)/.test(value)) forms.push(new URL(`${BASE}${value}`).pathname.slice(1));
  return [...new Set(forms)].filter((f) => f !== value && f !== '');
}
