/**
 * The forms a secret value can take in what the agent sends: as given, URL-encoded (path and
 * component styles, upper- and lower-case hex, and as the URL parser rewrites a value put into a URL
 * as it is), form-encoded (`+` for space), JSON-escaped,
 * HTML-escaped and base64 (standard and URL alphabets, at each of the three byte alignments it can
 * have inside a longer base64 text, e.g. the password inside a Basic credential).
 */

/** Values shorter than this are not scrubbed: see MIN_SECRET_LENGTH in ./scrubber.ts. */
export const MIN_FORM_LENGTH = 4;

const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());

const PARSER_BASE = 'http://outpost.invalid/';

/**
 * How a value put into a URL as it is (a `{{{SECRET}}}` in a check's URL, a setup script's string
 * concatenation) comes out of the WHATWG URL parser, which a result records: in the path, the query
 * and the fragment each percent-encodes its own set of characters and drops tabs and newlines. A
 * component the value would end (a `?` or `#` in it) or rewrite (`\`, dot segments) is skipped: the
 * parser would keep only part of the value there.
 */
function urlParserForms(value: string): string[] {
  const forms: string[] = [new URL(`${PARSER_BASE}#${value}`).hash.slice(1)];
  if (!value.includes('#')) forms.push(new URL(`${PARSER_BASE}?${value}`).search.slice(1));
  if (!/[?#\\]|(^|\/)\.\.?(\/|$)/.test(value)) forms.push(new URL(`${PARSER_BASE}${value}`).pathname.slice(1));
  return forms;
}

function urlForms(value: string): string[] {
  const component = encodeURIComponent(value);
  const uri = encodeURI(value);
  // application/x-www-form-urlencoded as URLSearchParams writes it (encodes !'()~ too, space as +).
  const form = new URLSearchParams([['', value]]).toString().slice(1);
  const componentPlus = component.replace(/%20/g, '+');
  return [component, uri, form, componentPlus, ...urlParserForms(value)].flatMap((f) => [f, lowerHex(f)]);
}

function jsonForms(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  // Serializers that escape every non-ASCII character, or the slash.
  const ascii = json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const asciiUpper = ascii.replace(/\\u([0-9a-f]{4})/g, (_, h: string) => `\\u${h.toUpperCase()}`);
  return [json, ascii, asciiUpper, json.replace(/\//g, '\\/')];
}

function htmlForms(value: string): string[] {
  const base = value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return [
    base.replace(/"/g, '&quot;').replace(/'/g, '&#39;'),
    base.replace(/"/g, '&quot;').replace(/'/g, '&#x27;'),
    base.replace(/"/g, '&#34;').replace(/'/g, '&#39;'),
    base,
  ];
}

/**
 * Base64 of the value at each alignment. Inside a longer text the value starts at byte offset 0, 1
 * or 2 of a 3-byte group; the characters that also encode neighbouring bytes differ, so only the
 * characters that encode the value's bits alone are matched (plus, at offset 0, the whole padded
 * encoding, for a value encoded on its own).
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const out: string[] = [bytes.toString('base64')];
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const start = k === 0 ? 0 : k === 1 ? 2 : 3;
    const end = Math.floor(((k + bytes.length) * 8) / 6);
    out.push(enc.slice(start, end));
  }
  return out.flatMap((f) => [f, f.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')]);
}

/** Every distinct form of `value`, longest first (a longer form must win where two start together). */
export function formsOf(value: string): string[] {
  const all = [value, ...urlForms(value), ...jsonForms(value), ...htmlForms(value), ...base64Forms(value)];
  return [...new Set(all)].filter((f) => f.length >= MIN_FORM_LENGTH).sort((a, b) => b.length - a.length);
}
