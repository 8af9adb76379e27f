/**
 * The naming and cardinality rules the agent's /metrics must keep (README, "The agent's health port
 * and metrics"), checked on a parsed scrape: every name is the agent's own (`outpost_agent_…`) or one
 * of prom-client's process metrics, every family has a type and help, counters end in `_total`, and
 * every label value comes from a fixed list (never a check id, name or URL).
 */
import { expect } from 'vitest';
import { type Exposition, familyOf } from '../helpers/prometheus-text.ts';

const OWN = /^outpost_agent_[a-z_]+$/;
/** prom-client's default metrics: process_* and nodejs_*. */
const DEFAULT = /^(process|nodejs)_[a-z0-9_]+$/;

/** Bounded label values of the agent's own metrics, written out here rather than imported from the code. */
const OWN_LABELS: Record<string, readonly string[]> = {
  check_class: ['uptime', 'heavy'],
  check_type: ['API', 'TCP', 'DNS', 'ICMP', 'BROWSER', 'MULTI_STEP', 'PLAYWRIGHT', 'URL', 'SSL', 'unknown'],
  verdict: ['passed', 'degraded', 'failed', 'error', 'cancelled'],
  status: ['stored', 'duplicate'],
  state: ['idle', 'busy', 'starting'],
};

/** Labels prom-client's default metrics carry (each with a small fixed set of values). */
const DEFAULT_LABELS = new Set(['version', 'major', 'minor', 'patch', 'space', 'kind', 'type']);

function isBucketBound(value: string): boolean {
  return value === '+Inf' || Number.isFinite(Number(value));
}

export function expectBoundedMetrics(m: Exposition, options: { runtimes: readonly string[] }): void {
  expect(m.samples.length).toBeGreaterThan(0);
  for (const sample of m.samples) {
    const family = familyOf(m, sample.name);
    expect(family, `${sample.name} has a TYPE line`).toBeDefined();
    if (!family) continue;
    expect(
      OWN.test(family.name) || DEFAULT.test(family.name),
      `${family.name} is the agent's or a default process metric`,
    ).toBe(true);
    expect(family.help, `${family.name} has help`).not.toBe('');
    if (family.type === 'counter') expect(family.name, 'a counter ends in _total').toMatch(/_total$/);
    for (const [label, value] of Object.entries(sample.labels)) {
      if (label === 'le') {
        expect(isBucketBound(value), `${sample.name} le="${value}"`).toBe(true);
      } else if (OWN.test(family.name)) {
        const allowed = label === 'runtime' ? options.runtimes : OWN_LABELS[label];
        expect(allowed, `${family.name} has an unexpected label ${label}`).toBeDefined();
        expect(allowed, `${family.name}{${label}="${value}"}`).toContain(value);
      } else {
        expect(DEFAULT_LABELS.has(label), `${family.name} has an unexpected label ${label}`).toBe(true);
      }
    }
  }
}
