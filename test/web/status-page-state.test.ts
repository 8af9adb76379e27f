/** What a status page says about a service, apart from its HTML: states, the 90 days, each day's words, the bar's escaping. */
import { describe, expect, it } from 'vitest';
import type { IncidentDay } from '../../src/service/store/status-page-web-types.ts';
import { dayBarWriter } from '../../src/service/web/status-pages/bar.ts';
import {
  dayLabel,
  historyByService,
  historyStart,
  severityState,
  worstSeverity,
} from '../../src/service/web/status-pages/state.ts';

const NOW = new Date('2026-11-23T15:00:00Z');
const incident = (
  id: string,
  startedAt: string,
  severity: IncidentDay['severity'],
  serviceId = 'api',
  name = `Incident ${id}`,
): IncidentDay => ({
  id,
  name,
  severity,
  startedAt,
  serviceId,
});

describe('status page state', () => {
  it('takes the highest severity among open incidents, and Operational without any', () => {
    expect(worstSeverity(['MINOR', 'CRITICAL', 'MEDIUM'])).toBe('CRITICAL');
    expect(worstSeverity(['MINOR', 'MEDIUM'])).toBe('MEDIUM');
    expect(severityState(worstSeverity([]))).toEqual({ label: 'Operational', tone: 'ok' });
    expect(severityState('MAJOR')).toEqual({ label: 'Partial outage', tone: 'partial' });
  });

  it('lays 90 UTC days, oldest first and ending today, and puts each incident on its start day and service', () => {
    expect(historyStart(NOW)).toBe('2026-08-26T00:00:00.000Z');
    const days = historyByService(
      NOW,
      ['api', 'web'],
      [
        incident('a', '2026-11-23T00:10:00.000Z', 'MINOR'),
        incident('b', '2026-08-26T00:00:00.000Z', 'MAJOR', 'web'),
        incident('c', '2026-11-20T12:00:00.000Z', 'MAJOR', 'elsewhere'),
      ],
    );
    const api = days.get('api') ?? [];
    expect(api).toHaveLength(90);
    expect(api[0]?.day).toBe('2026-08-26');
    expect(api[89]).toMatchObject({ day: '2026-11-23', date: '23 Nov 2026', incidents: [{ id: 'a' }] });
    expect(days.get('web')?.[0]?.incidents.map((i) => i.id)).toEqual(['b']);
    expect([...days.keys()]).toEqual(['api', 'web']);
  });

  it('words a day: no incidents, or the count, the worst state and up to three names', () => {
    const [quiet] = historyByService(NOW, ['api'], []).get('api') ?? [];
    expect(quiet && dayLabel(quiet)).toBe('26 Aug 2026: no incidents');
    const busy = historyByService(
      NOW,
      ['api'],
      ['1', '2', '3', '4', '5'].map((id, i) => incident(id, '2026-11-22T10:00:00Z', i === 3 ? 'CRITICAL' : 'MINOR')),
    )
      .get('api')
      ?.at(-2);
    expect(busy && dayLabel(busy)).toBe(
      '22 Nov 2026: 5 incidents, major outage: Incident 1; Incident 2; Incident 3 and 2 more',
    );
  });

  it("escapes incident names in the bar's markup and links a day to its first incident", () => {
    const days = historyByService(
      NOW,
      ['api'],
      [incident('x"1', '2026-11-23T01:00:00Z', 'MAJOR', 'api', '<img src=x onerror=alert(1)> & "quotes"')],
    );
    const markup = dayBarWriter('/status/acme/')(days.get('api') ?? []);
    expect(markup).not.toContain('<img');
    expect(markup).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;');
    expect(markup).toContain('<li class="d-partial"><a href="/status/acme/incidents/x&quot;1">');
    expect(markup).toContain('<li><span>22 Nov 2026: no incidents</span></li>');
    expect(markup.match(/<li[ >]/g)).toHaveLength(90);
  });
});
