/**
 * A result's timing phases as a waterfall: one row per phase, each bar starting where the previous
 * phase ended, with the milliseconds written beside it. Bars are SVG geometry (x, width), not
 * style attributes, because the pages' CSP allows no inline style.
 */
import type { RunResult } from '../../../shared/protocol.ts';
import { html } from '../html.ts';

export interface TimingPhase {
  /** A CSS-safe key, also the bar's class (`phase-dns`). */
  key: string;
  label: string;
  ms: number;
}

/** The bar's coordinate space: wide enough that rounding never hides a short phase. */
const SCALE = 1000;

/** The sequential phases of an API, TCP or DNS result; empty for a result without any. */
export function timingPhasesOf(result: RunResult): TimingPhase[] {
  const api = result.apiCheckResult?.response?.timingPhases;
  if (api) {
    return [
      phase('wait', 'Wait', api.wait),
      phase('dns', 'DNS lookup', api.dns),
      phase('tcp', 'TCP connect', api.tcp),
      phase('tls', 'TLS handshake', api.tls),
      phase('firstByte', 'Time to first byte', api.firstByte),
      phase('download', 'Download', api.download),
    ];
  }
  const tcp = result.details?.tcpCheckResult?.response?.timingPhases;
  if (tcp)
    return [
      phase('dns', 'DNS lookup', tcp.dns),
      phase('tcp', 'TCP connect', tcp.connect),
      phase('download', 'Data', tcp.data),
    ];
  const dns = result.details?.dnsCheckResult?.response?.timingPhases;
  if (dns) return [phase('dns', 'Resolve server', dns.dns), phase('firstByte', 'Query', dns.query)];
  return [];
}

function phase(key: string, label: string, ms: number | undefined): TimingPhase {
  return { key, label, ms: Number.isFinite(ms) && (ms as number) > 0 ? (ms as number) : 0 };
}

function formatMs(ms: number): string {
  // Tenths below 10 ms, where they matter; whole milliseconds above.
  return `${Number(ms.toFixed(ms < 10 ? 1 : 0))} ms`;
}

/** The waterfall table, or nothing when the result has no phases. */
export function Waterfall({ phases }: { phases: TimingPhase[] }) {
  const total = phases.reduce((sum, p) => sum + p.ms, 0);
  if (phases.length === 0) return null;
  let start = 0;
  const rows = phases.map((p) => {
    const x = total > 0 ? (start / total) * SCALE : 0;
    const width = total > 0 ? Math.max((p.ms / total) * SCALE, p.ms > 0 ? 2 : 0) : 0;
    start += p.ms;
    return html`<tr>
      <th scope="row">${p.label}</th>
      <td class="waterfall-bar">
        <svg viewBox=${`0 0 ${SCALE} 12`} preserveAspectRatio="none" aria-hidden="true" focusable="false">
          <rect class="waterfall-track" x="0" y="0" width=${SCALE} height="12" />
          <rect class=${`waterfall-phase phase-${p.key}`} x=${x.toFixed(1)} y="0" width=${width.toFixed(1)} height="12" />
        </svg>
      </td>
      <td class="num">${formatMs(p.ms)}</td>
    </tr>`;
  });
  return html`<section aria-labelledby="timing-heading">
    <h2 id="timing-heading">Timing</h2>
    <table class="waterfall">
      <caption class="sr-only">Timing phases in the order they happened</caption>
      <thead><tr><th scope="col">Phase</th><th scope="col"><span class="sr-only">Bar</span></th><th scope="col" class="num">Duration</th></tr></thead>
      <tbody>${rows}</tbody>
      <tfoot><tr><th scope="row">Total</th><td></td><td class="num">${formatMs(total)}</td></tr></tfoot>
    </table>
  </section>`;
}
