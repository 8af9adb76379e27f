/**
 * Why a browser, multistep or Playwright suite run failed, beyond the one-line `error`: each script
 * error with where in the user's code it happened and the failing line, or each suite error.
 */
import type { RunResult } from '../../../shared/protocol.ts';
import { html } from '../html.ts';

export interface ShownError {
  title: string;
  /** `script.js:4:20`, when the runner knows it. */
  where: string | null;
  /** The failing line with its neighbours. */
  snippet: string | null;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

export function errorsOf(result: RunResult): ShownError[] {
  const d = result.details;
  const browser = d?.browserCheckResult ?? d?.multiStepCheckResult;
  if (browser) {
    return browser.errors.map((e) => ({
      title: `${e.test ? `${e.test}: ` : ''}${e.name}: ${e.message}`,
      where: e.file ? [e.file, e.line, e.column].filter((part) => part !== null && part !== undefined).join(':') : null,
      snippet: e.snippet ?? null,
    }));
  }
  return (d?.playwrightCheckResult?.errors ?? []).map((e) => ({
    title: [text(e.test) ?? text(e.phase), text(e.message)].filter(Boolean).join(': ') || JSON.stringify(e),
    where: null,
    snippet: null,
  }));
}

export function ErrorsView({ errors }: { errors: ShownError[] }) {
  if (errors.length === 0) return null;
  return html`<section aria-labelledby="errors-heading">
    <h2 id="errors-heading">Errors</h2>
    <ul class="result-errors">
      ${errors.map(
        (e) => html`<li>
          <strong>${e.title}</strong>
          ${e.where ? html` <span class="muted">at <code>${e.where}</code></span>` : null}
          ${e.snippet ? html`<pre tabindex="0" aria-label="Failing code">${e.snippet}</pre>` : null}
        </li>`,
      )}
    </ul>
  </section>`;
}
