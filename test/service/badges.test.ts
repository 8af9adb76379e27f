/** The pure parts of status badges: which status and response time a badge shows, text cleaning and widths. */
import { describe, expect, it } from 'vitest';
import { badgeResponseTime, badgeStatus, checkBadgeStatus } from '../../src/service/badges/status.ts';
import { badgeText } from '../../src/service/badges/svg.ts';
import type { BadgeCheckState } from '../../src/service/store/account-settings-types.ts';

const base: BadgeCheckState = {
  activated: true,
  hasResult: true,
  hasFailures: false,
  hasErrors: false,
  isDegraded: false,
  responseTime: 100,
};
const passing = base;
const degraded = { ...base, isDegraded: true };
const failing = { ...base, hasFailures: true };
const erroring = { ...base, hasErrors: true };
const noData = { ...base, hasResult: false, responseTime: null };
const off = { ...base, activated: false, hasFailures: true, responseTime: 9000 };

describe('badge status', () => {
  it('of one check: deactivated first, then no data, then failing (errors too), degraded, passing', () => {
    expect(
      [off, noData, failing, erroring, { ...degraded, hasFailures: true }, degraded, passing].map(checkBadgeStatus),
    ).toEqual(['deactivated', 'no data', 'failing', 'failing', 'failing', 'degraded', 'passing']);
  });

  it('of a group: the worst of the running checks; deactivated ones count only when nothing runs', () => {
    expect(badgeStatus([passing, degraded, failing])).toBe('failing');
    expect(badgeStatus([passing, degraded, off])).toBe('degraded');
    expect(badgeStatus([passing, noData, off])).toBe('passing');
    expect(badgeStatus([noData, off])).toBe('no data');
    expect(badgeStatus([off, off])).toBe('deactivated');
    expect(badgeStatus([])).toBe('no data');
  });

  it('response time: the average of the running checks’ latest, rounded; null when none has one', () => {
    expect(
      badgeResponseTime([{ ...passing, responseTime: 100 }, { ...degraded, responseTime: 251 }, off, noData]),
    ).toBe(176);
    expect(badgeResponseTime([off, noData])).toBeNull();
  });
});

describe('badge text', () => {
  it('turns controls and line breaks into single spaces, lone surrogates into U+FFFD, and keeps whole characters', () => {
    expect(badgeText(' a\u0000b\n\tc\u007f\u0085d\uffff ', 48)).toBe('a b c d');
    expect(badgeText('x\ud800y', 48)).toBe('x\ufffdy');
    expect(badgeText('😀'.repeat(10), 5)).toBe('😀😀😀😀…');
    expect(badgeText('abcdef', 6)).toBe('abcdef');
  });
});
