/** How the console writes times, durations and verdicts, the same on every page. */
import { html } from '../html.ts';

/** `2026-11-23 14:05:09 UTC` in a <time> element carrying the exact instant. */
export function timeOf(iso: string | null | undefined) {
  if (!iso) return html`<span class="muted">never</span>`;
  return html`<time datetime=${iso}>${iso.slice(0, 19).replace('T', ' ')} UTC</time>`;
}

/** `1 run`, `3 runs`. */
export const countOf = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

export const msOf = (ms: number): string => `${Math.round(ms).toLocaleString('en')} ms`;

export interface Verdict {
  label: string;
  /** The state-* class of web.css. */
  css: string;
}

/** A result's verdict, as the reference ranks them: an error over a failure over degraded. */
export function verdictOf(r: { hasFailures: boolean; hasErrors: boolean; isDegraded: boolean }): Verdict {
  if (r.hasErrors) return { label: 'Error', css: 'state-down' };
  if (r.hasFailures) return { label: 'Failed', css: 'state-down' };
  if (r.isDegraded) return { label: 'Degraded', css: 'state-degraded' };
  return { label: 'Passed', css: 'state-ok' };
}
