/** The from/to window of GET /v1/check-alerts and GET /v1/alert-notifications (routes/check-alerts.ts alertWindow). */
import { describe, expect, it } from 'vitest';
import { alertWindow } from '../../src/service/routes/check-alerts.ts';

describe('alertWindow', () => {
  const nowMs = Date.parse('2026-11-23T12:00:00.123Z');

  it('without from and to ends after now, so what was written this very millisecond is listed', () => {
    const { from, to } = alertWindow(undefined, undefined, nowMs, 86_400);
    const writtenNow = new Date(nowMs).toISOString();
    expect(writtenNow >= from && writtenNow < to).toBe(true);
    expect(from).toBe('2026-11-22T12:00:00.124Z');
  });

  it('a given to stays exclusive and a given from inclusive', () => {
    expect(alertWindow(1_000, 2_000, nowMs, 86_400)).toEqual({
      from: new Date(1_000_000).toISOString(),
      to: new Date(2_000_000).toISOString(),
    });
  });
});
