/**
 * Every assertion of a result with what it expected and what the check saw: the API result's, or the
 * TCP, DNS, ICMP or SSL result's from `details` (they share the evaluated-assertion shape).
 */
import type { EvaluatedAssertion } from '../../../shared/checks/types.ts';
import type { RunResult } from '../../../shared/protocol.ts';
import { html } from '../html.ts';

type AnyAssertion = EvaluatedAssertion<{ source: string; comparison: string; property: string; target: string }>;

export function assertionsOf(result: RunResult): AnyAssertion[] {
  const d = result.details;
  return (
    result.apiCheckResult?.assertions ??
    d?.tcpCheckResult?.assertions ??
    d?.dnsCheckResult?.assertions ??
    d?.icmpCheckResult?.assertions ??
    d?.sslCheckResult?.assertions ??
    []
  );
}

/** A seen value as text: strings as they are, anything else as JSON; absent values say so. */
export function shownValue(value: unknown): string {
  if (value === undefined) return '(none)';
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? String(value);
}

function comparisonText(comparison: string): string {
  return comparison.toLowerCase().replaceAll('_', ' ');
}

export function AssertionsView({ assertions }: { assertions: AnyAssertion[] }) {
  if (assertions.length === 0) return null;
  return html`<section aria-labelledby="assertions-heading">
    <h2 id="assertions-heading">Assertions</h2>
    <table class="assertions">
      <thead>
        <tr><th scope="col">Result</th><th scope="col">Source</th><th scope="col">Property</th><th scope="col">Comparison</th><th scope="col">Expected</th><th scope="col">Actual</th></tr>
      </thead>
      <tbody>
        ${assertions.map(
          (a) => html`<tr class=${a.passed ? 'assertion-passed' : 'assertion-failed'}>
            <td class=${`state ${a.passed ? 'state-ok' : 'state-down'}`}>${a.passed ? 'Passed' : 'Failed'}</td>
            <td>${a.source}</td>
            <td><code>${a.property}</code></td>
            <td>${comparisonText(a.comparison)}</td>
            <td><code>${a.target}</code></td>
            <td><code>${shownValue(a.actual)}</code>${a.error ? html`<div class="state-down">${a.error}</div>` : null}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}
