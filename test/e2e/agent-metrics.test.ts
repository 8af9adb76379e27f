/**
 * The agent's /metrics with the real service: `outpost serve` and `outpost agent` processes, an API
 * check created through the public API against a loopback target. What the service stored must be
 * exactly what the agent counted as sent and observed as check durations, and the scrape must hold
 * neither key nor URL nor the check's id or name.
 */
import { describe, expect } from 'vitest';
import { expectBoundedMetrics } from '../agent/metrics-rules.ts';
import { type Exposition, parseExposition, sampleValue } from '../helpers/prometheus-text.ts';
import { stackTest } from '../support/e2e-test.ts';
import { until } from './harness.ts';

const it = stackTest({ name: 'e2e-metrics', location: 'e2e-metrics' }).extend(
  'metricsUrl',
  { scope: 'file' },
  async ({ agent }) => {
    const probes = await agent.waitForLog((l) => l.msg === 'probes listening');
    return `http://127.0.0.1:${probes.port}/metrics`;
  },
);

describe('agent metrics against the real service', () => {
  async function scrape(metricsUrl: string): Promise<{ text: string; m: Exposition }> {
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    const text = await res.text();
    return { text, m: parseExposition(text) };
  }

  it('counts as sent and timed exactly the results the service stored', async ({
    api,
    target,
    location,
    service,
    metricsUrl,
  }) => {
    const check = await api.createApiCheck({
      name: 'metrics target up',
      frequency: 0,
      frequencyOffset: 10,
      privateLocations: ['e2e-metrics'],
      request: {
        method: 'GET',
        url: `${target.url}/`,
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
      },
    });
    await until(async () => ((await api.results(check.id)).length > 0 ? true : undefined), { what: 'a stored result' });
    await api.ok('PUT', `/v1/checks/api/${check.id}`, { activated: false });

    // A run leased just before the pause may still be under way: wait until the agent holds no job
    // and the service has every result it sent.
    const { text, m, stored } = await until(
      async () => {
        const { text, m } = await scrape(metricsUrl);
        const stored = (await api.results(check.id)).length;
        const busy =
          sampleValue(m, 'outpost_agent_jobs_running', { check_class: 'uptime' }) +
          sampleValue(m, 'outpost_agent_jobs_queued', { check_class: 'uptime' });
        return busy === 0 && sampleValue(m, 'outpost_agent_results_sent_total', { status: 'stored' }) === stored
          ? { text, m, stored }
          : undefined;
      },
      { what: 'the agent idle with every result stored' },
    );
    expect(stored).toBeGreaterThan(0);
    expect(sampleValue(m, 'outpost_agent_check_duration_seconds_count', { check_type: 'API', verdict: 'passed' })).toBe(
      stored,
    );
    const counted = m.samples
      .filter((s) => s.name === 'outpost_agent_check_duration_seconds_count')
      .reduce((n, s) => n + s.value, 0);
    expect(counted).toBe(stored);
    expect(sampleValue(m, 'outpost_agent_results_spooled_total')).toBe(0);
    expectBoundedMetrics(m, { runtimes: ['2026.04', '2025.04'] });
    for (const secret of [location.key, service.url, target.url, check.id, 'metrics target up']) {
      expect(text, `the exposition holds ${secret}`).not.toContain(secret);
    }
  });
});
