/**
 * When a scheduler "falls behind" at a load step, and the capacity and ratio that follow from its steps
 * (`npm run bench -- prometheus`). Both sides are judged by the same two rules:
 * - held: at least `minHeldFraction` of the probes the window should hold were done and succeeded
 *   (N targets every interval → N × window / interval);
 * - on time: the side's lateness p99 is at most `lateBoundMs` (Prometheus: how far the scrape interval's
 *   0.01/0.99 quantiles stray from the interval; Outpost: due → start p99).
 */

export interface Criteria {
  minHeldFraction: number;
  lateBoundMs: number;
}

export interface StepFigures {
  /** Targets (Prometheus) or checks (Outpost), each every interval. */
  n: number;
  /** Probes or results the window should hold. */
  expected: number;
  /** Probes or results in the window that were done and succeeded. */
  held: number;
  /** The side's lateness p99 in ms (see the module's comment). */
  lateP99Ms: number;
}

/** Why a step fell behind, or null when it held. */
export function fellBehind(s: StepFigures, c: Criteria): string | null {
  const fraction = s.expected > 0 ? s.held / s.expected : 0;
  const reasons: string[] = [];
  if (!(fraction >= c.minHeldFraction))
    reasons.push(`held ${(fraction * 100).toFixed(1)} % of ${s.expected} expected (< ${c.minHeldFraction * 100} %)`);
  if (!(s.lateP99Ms <= c.lateBoundMs)) reasons.push(`lateness p99 ${s.lateP99Ms} ms (> ${c.lateBoundMs} ms)`);
  return reasons.length > 0 ? reasons.join('; ') : null;
}

export interface Capacity {
  /** The largest step held before the first one that fell behind (0: the first step fell behind). */
  n: number;
  /**
   * exact: a step above it fell behind; atLeast: every step run held (the capacity is this or more);
   * below: the first step fell behind (the capacity is under it).
   */
  kind: 'exact' | 'atLeast' | 'below';
}

/** Capacity from the steps run in order, each with its verdict (the last one may have fallen behind). */
export function capacityOf(steps: Array<{ n: number; fellBehind: string | null }>): Capacity {
  const first = steps.findIndex((s) => s.fellBehind !== null);
  if (first === 0) return { n: 0, kind: 'below' };
  if (first === -1) return { n: steps.at(-1)?.n ?? 0, kind: 'atLeast' };
  return { n: steps[first - 1]!.n, kind: 'exact' };
}

/**
 * Outpost's capacity over Prometheus's, with what the figure means when a capacity is a bound:
 * null when either side held no step or both held every step.
 */
export function capacityRatio(
  outpost: Capacity,
  prometheus: Capacity,
): { ratio: number | null; kind: 'exact' | 'atLeast' | 'atMost' | 'unknown' } {
  if (outpost.n === 0 || prometheus.n === 0) return { ratio: null, kind: 'unknown' };
  const ratio = Math.round((outpost.n / prometheus.n) * 100) / 100;
  if (outpost.kind === 'exact' && prometheus.kind === 'exact') return { ratio, kind: 'exact' };
  if (outpost.kind === 'atLeast' && prometheus.kind === 'exact') return { ratio, kind: 'atLeast' };
  if (outpost.kind === 'exact' && prometheus.kind === 'atLeast') return { ratio, kind: 'atMost' };
  // Both held every step: neither capacity is known, so neither is their ratio.
  return { ratio: null, kind: 'unknown' };
}
