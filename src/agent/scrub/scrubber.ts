/**
 * A Scrubber replaces every occurrence of a set of secret values, in each of their encoded forms
 * (./forms.ts), with REDACTED, and the values of sensitive headers whatever they are.
 *
 * Matching is one RegExp: the escaped forms of all values as alternatives, longest first, so where
 * two forms start at the same place the longer wins (a JSON-escaped form over the raw prefix of it).
 * V8 compiles that to a single pass over the text; scripts/bench/scrub.ts measures it against an
 * Aho–Corasick automaton (BENCHMARKS.md "scrub"). The RegExp is rebuilt lazily after add().
 */
import { formsOf } from './forms.ts';

export const REDACTED = '[secret]';

/** What scrubDeep puts where a cycle's back edge was. */
export const CYCLE = '[cycle]';

/**
 * Shorter values are not scrubbed: a 1-4 character value ("true", "1234", "prod") occurs all over
 * ordinary text, and replacing every occurrence would wreck results and logs while protecting
 * nothing (a value that short is guessed, not leaked). docs/secrets.md says so to users.
 */
export const MIN_SECRET_LENGTH = 5;

/** Headers whose values are secret whatever they are (names compared case-insensitively). */
export const SENSITIVE_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-auth-token',
]);

export function isSensitiveHeader(name: string): boolean {
  return SENSITIVE_HEADERS.has(name.toLowerCase());
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

export class Scrubber {
  readonly #values = new Set<string>();
  #pattern: RegExp | null | undefined;
  /** Bumped by every add() that changed the set; lets a registry know when to rebuild. */
  version = 0;

  constructor(values: Iterable<string> = []) {
    for (const v of values) this.add(v);
  }

  /**
   * Adds a secret value (e.g. what a script put into process.env.OUTPOST_SECRET_*). Values shorter
   * than MIN_SECRET_LENGTH are ignored. Returns whether the value is now scrubbed.
   */
  add(value: string): boolean {
    if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) return false;
    if (!this.#values.has(value)) {
      this.#values.add(value);
      this.#pattern = undefined;
      this.version++;
    }
    return true;
  }

  get size(): number {
    return this.#values.size;
  }

  values(): IterableIterator<string> {
    return this.#values.values();
  }

  /** The combined pattern; null when there is nothing to scrub. */
  #regex(): RegExp | null {
    if (this.#pattern === undefined) {
      const forms = new Set<string>();
      for (const v of this.#values) for (const f of formsOf(v)) forms.add(f);
      const sorted = [...forms].sort((a, b) => b.length - a.length);
      this.#pattern = sorted.length === 0 ? null : new RegExp(sorted.map(escapeRegExp).join('|'), 'g');
    }
    return this.#pattern;
  }

  scrubText(text: string): string {
    const re = this.#regex();
    if (re === null || text.length < 4) return text;
    re.lastIndex = 0;
    return text.replace(re, REDACTED);
  }

  /**
   * A copy of `value` with every string in it scrubbed, at any depth (objects, arrays), and the
   * values of sensitive headers redacted wherever a `headers` property holds a header map or list.
   * Keys are scrubbed too (a secret could be a query parameter name). Only a real cycle is cut, at
   * its back edge (a reference to an object on the path from the root), with CYCLE; an object that
   * is merely reached twice (e.g. `details.tls` and `response.tls`) is copied at both places.
   */
  scrubDeep<T>(value: T): T {
    return this.#walk(value, { ancestors: new Set(), copies: new WeakMap(), cuts: 0 }) as T;
  }

  #walk(value: unknown, w: DeepWalk): unknown {
    if (typeof value === 'string') return this.scrubText(value);
    if (value === null || typeof value !== 'object') return value;
    if (value instanceof Date || Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return value;
    if (w.ancestors.has(value)) {
      w.cuts++;
      return CYCLE;
    }
    const copied = w.copies.get(value);
    if (copied !== undefined) return copied;
    const cutsBefore = w.cuts;
    w.ancestors.add(value);
    const out = Array.isArray(value) ? value.map((v) => this.#walk(v, w)) : this.#walkEntries(value, w);
    w.ancestors.delete(value);
    // A copy made without cutting anything is the same wherever the object occurs, so a shared
    // object is walked once (not once per path to it); a copy with a cut depends on the path.
    if (w.cuts === cutsBefore) w.copies.set(value, out);
    return out;
  }

  #walkEntries(value: object, w: DeepWalk): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[this.scrubText(k)] = this.#walk(/headers$/i.test(k) ? redactHeaders(v) : v, w);
    }
    return out;
  }
}

/** The state of one scrubDeep walk. */
interface DeepWalk {
  /** The objects on the path from the root to where the walk is: a reference to one is a cycle. */
  ancestors: Set<object>;
  /** Finished copies that did not depend on the path (no cycle was cut inside them). */
  copies: WeakMap<object, unknown>;
  /** How many back edges have been cut so far. */
  cuts: number;
}

/**
 * Header maps with sensitive values replaced by REDACTED. Understands the shapes headers take in
 * results: a map ({name: value | value[]}), a list of {key|name, value} pairs, a list of
 * [name, value] pairs, and a flat raw list [name, value, name, value, ...]. Anything else is
 * returned as it is.
 */
export function redactHeaders(headers: unknown): unknown {
  if (headers === null || typeof headers !== 'object') return headers;
  if (Array.isArray(headers)) {
    if (headers.every((h) => typeof h === 'string')) {
      return headers.map((h, i) => (i % 2 === 1 && isSensitiveHeader(headers[i - 1] as string) ? REDACTED : h));
    }
    return headers.map((h) => {
      if (Array.isArray(h) && typeof h[0] === 'string') return isSensitiveHeader(h[0]) ? [h[0], REDACTED] : h;
      if (h && typeof h === 'object') {
        const name = (h as { key?: unknown; name?: unknown }).key ?? (h as { name?: unknown }).name;
        if (typeof name === 'string' && isSensitiveHeader(name) && 'value' in h) return { ...h, value: REDACTED };
      }
      return h;
    });
  }
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(headers)) {
    out[name] = isSensitiveHeader(name) ? (Array.isArray(v) ? v.map(() => REDACTED) : REDACTED) : v;
  }
  return out;
}
