import fc from 'fast-check';
import moment from 'moment';
import { describe, expect, it } from 'vitest';
import { inMaintenance, isWindowActiveAt, windowCoversCheck } from '../../src/service/alerting/maintenance.ts';
import type { RepeatUnit } from '../../src/service/store/maintenance-window-types.ts';
import { json, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { apiTest } from '../support/api-test.ts';
import { nightlyWindow } from '../support/maintenance-window-fixtures.ts';

describe('/v1/maintenance-windows', () => {
  const nightly = { ...nightlyWindow, repeatEndsAt: '2026-12-31' };

  async function create(
    api: TestApi,
    account: TestAccount,
    body: object,
  ): Promise<{ id: number } & Record<string, unknown>> {
    const res = await api.request(account, 'POST', '/v1/maintenance-windows', body);
    expect(res.statusCode, res.body).toBe(201);
    return json(res);
  }

  apiTest('creates, lists, reads, partially updates and deletes', async ({ api, acme }) => {
    const w = await create(api, acme, nightly);
    expect(w).toEqual({
      id: expect.any(Number),
      ...nightly,
      startsAt: '2026-11-01T23:00:00.000Z',
      endsAt: '2026-11-02T01:00:00.000Z',
      timezone: null,
      description: null,
      pauseAllChecks: false,
      silenceAlertsTags: [],
      silenceAllAlerts: false,
      created_at: expect.any(String),
      updated_at: null,
    });
    expect(json(await api.request(acme, 'GET', '/v1/maintenance-windows'))).toEqual([w]);
    const updated = await api.request(acme, 'PUT', `/v1/maintenance-windows/${w.id}`, {
      name: 'Renamed',
      repeatUnit: null,
    });
    expect(json(updated)).toMatchObject({
      name: 'Renamed',
      tags: ['production'],
      repeatUnit: null,
      repeatInterval: null,
      repeatEndsAt: null,
      updated_at: expect.any(String),
    });
    expect(json(await api.request(acme, 'GET', `/v1/maintenance-windows/${w.id}`))).toMatchObject({
      name: 'Renamed',
    });
    expect((await api.request(acme, 'DELETE', `/v1/maintenance-windows/${w.id}`)).statusCode).toBe(204);
    expect((await api.request(acme, 'GET', `/v1/maintenance-windows/${w.id}`)).statusCode).toBe(404);
  });

  apiTest('rejects inconsistent windows with a 400 naming the field', async ({ api, acme }) => {
    async function message(method: 'POST' | 'PUT', url: string, body: object): Promise<string> {
      const res = await api.request(acme, method, url, body);
      expect(res.statusCode, res.body).toBe(400);
      return json<{ message: string }>(res).message;
    }
    const url = '/v1/maintenance-windows';
    expect(await message('POST', url, { ...nightly, endsAt: nightly.startsAt })).toMatch(
      /^body\/endsAt: must be after startsAt/,
    );
    expect(await message('POST', url, { ...nightly, startsAt: 'tomorrow' })).toMatch(/^body\/startsAt/);
    expect(await message('POST', url, { ...nightly, startsAt: '2026-02-31T10:00:00Z' })).toMatch(/^body\/startsAt/);
    expect(await message('POST', url, { ...nightly, repeatEndsAt: '2026-11-31' })).toMatch(/^body\/repeatEndsAt/);
    expect(await message('POST', url, { ...nightly, repeatInterval: null })).toMatch(/^body\/repeatInterval: required/);
    expect(await message('POST', url, { ...nightly, repeatUnit: null })).toMatch(
      /^body\/repeatInterval: only allowed with a repeatUnit/,
    );
    expect(await message('POST', url, { ...nightly, repeatUnit: 'YEAR' })).toMatch(/repeatUnit/);
    expect(await message('POST', url, { ...nightly, repeatInterval: 0 })).toMatch(/repeatInterval/);
    expect(await message('POST', url, { ...nightly, repeatEndsAt: '2026-10-01' })).toMatch(
      /^body\/repeatEndsAt: must be on or after/,
    );
    expect(await message('POST', url, { ...nightly, tags: [''] })).toMatch(/tags/);
    expect(await message('POST', url, { ...nightly, timezone: 'Europe/Paris' })).toMatch(/^body\/timezone/);
    expect(await message('POST', url, { ...nightly, statusPageVisibility: { enabled: true } })).toMatch(
      /^body\/statusPageVisibility\/enabled/,
    );
    const w = await create(api, acme, nightly);
    expect(await message('PUT', `${url}/${w.id}`, { endsAt: '2026-11-01T22:00:00Z' })).toMatch(
      /^body\/endsAt: must be after startsAt/,
    );
  });

  apiTest("answers 404 for another account's window and never lists it", async ({ api, acme, other }) => {
    const w = await create(api, acme, nightly);
    expect((await api.request(other, 'GET', `/v1/maintenance-windows/${w.id}`)).statusCode).toBe(404);
    expect((await api.request(other, 'PUT', `/v1/maintenance-windows/${w.id}`, { name: 'x' })).statusCode).toBe(404);
    expect((await api.request(other, 'DELETE', `/v1/maintenance-windows/${w.id}`)).statusCode).toBe(404);
    expect(json(await api.request(other, 'GET', '/v1/maintenance-windows'))).toEqual([]);
    expect((await api.request(acme, 'GET', `/v1/maintenance-windows/${w.id}`)).statusCode).toBe(200);
  });
});

function schedule(
  startsAt: string,
  endsAt: string,
  repeatUnit: RepeatUnit | null = null,
  repeatInterval: number | null = null,
  repeatEndsAt: string | null = null,
) {
  return { startsAt, endsAt, repeatUnit, repeatInterval, repeatEndsAt };
}
const at = (iso: string) => new Date(iso);

// Times are UTC instants throughout, so daylight saving changes nothing here.
describe('maintenance window activity', () => {
  it.each<[string, ReturnType<typeof schedule>, Record<string, boolean>]>([
    [
      'one-off: active from startsAt (inclusive) to endsAt (exclusive)',
      schedule('2026-03-01T10:00:00Z', '2026-03-01T12:00:00Z'),
      {
        '2026-03-01T09:59:59.999Z': false,
        '2026-03-01T10:00:00Z': true,
        '2026-03-01T11:59:59.999Z': true,
        '2026-03-01T12:00:00Z': false,
        '2026-03-02T11:00:00Z': false,
      },
    ],
    [
      'daily across midnight, every second day, until repeatEndsAt inclusive',
      schedule('2026-03-01T23:00:00Z', '2026-03-02T01:00:00Z', 'DAY', 2, '2026-03-05'),
      {
        '2026-03-02T00:30:00Z': true,
        '2026-03-02T23:30:00Z': false, // odd day: no occurrence
        '2026-03-03T23:30:00Z': true,
        '2026-03-06T00:59:00Z': true, // the 5th's occurrence runs its full length
        '2026-03-07T23:30:00Z': false, // would start after repeatEndsAt
      },
    ],
    [
      'weekly: the same weekday each interval',
      schedule('2026-03-02T08:00:00Z', '2026-03-02T09:00:00Z', 'WEEK', 1),
      {
        '2026-03-09T08:30:00Z': true,
        '2027-03-01T08:30:00Z': true,
        '2026-03-10T08:30:00Z': false,
        '2026-03-09T09:00:00Z': false,
      },
    ],
    [
      'monthly on the 31st: the last day of shorter months, then the 31st again',
      schedule('2026-01-31T02:00:00Z', '2026-01-31T04:00:00Z', 'MONTH', 1),
      {
        '2026-02-28T03:00:00Z': true,
        '2026-03-31T03:00:00Z': true,
        '2026-03-28T03:00:00Z': false,
        '2026-04-30T03:00:00Z': true,
        '2028-02-29T03:00:00Z': true,
        '2026-02-27T03:00:00Z': false,
      },
    ],
    [
      'a repeat that has ended is not active, and nothing is active before the first start',
      schedule('2026-01-01T00:00:00Z', '2026-01-01T06:00:00Z', 'MONTH', 3, '2026-06-30'),
      {
        '2026-04-01T05:00:00Z': true,
        '2026-07-01T05:00:00Z': false,
        '2025-12-31T23:00:00Z': false,
      },
    ],
    [
      'an occurrence longer than the repeat period overlaps the next',
      schedule('2026-01-01T00:00:00Z', '2026-01-03T00:00:00Z', 'DAY', 1, '2026-01-01'),
      {
        '2026-01-02T12:00:00Z': true,
        '2026-01-03T00:00:00Z': false,
      },
    ],
  ])('%s', (_case, w, expected) => {
    for (const [instant, active] of Object.entries(expected))
      expect(isWindowActiveAt(w, at(instant)), instant).toBe(active);
  });

  it('covers checks by their tags or their group tags; silenceAllAlerts covers every check', () => {
    const scope = { tags: ['production'], silenceAlertsTags: [], silenceAllAlerts: false };
    expect(windowCoversCheck(scope, ['production', 'api'])).toBe(true);
    expect(windowCoversCheck(scope, ['api'], ['production'])).toBe(true);
    expect(windowCoversCheck(scope, ['api'], ['staging'])).toBe(false);
    expect(windowCoversCheck({ ...scope, silenceAlertsTags: ['frontend'] }, ['production'])).toBe(false);
    expect(windowCoversCheck({ ...scope, silenceAlertsTags: ['frontend'] }, ['frontend'])).toBe(true);
    expect(windowCoversCheck({ ...scope, tags: [], silenceAllAlerts: true }, [])).toBe(true);
  });

  it('inMaintenance needs a window that is both active and covering', () => {
    const windows = [
      {
        ...schedule('2026-03-01T10:00:00Z', '2026-03-01T12:00:00Z'),
        tags: ['db'],
        silenceAlertsTags: [],
        silenceAllAlerts: false,
      },
    ];
    expect(inMaintenance(windows, { tags: ['db'] }, at('2026-03-01T11:00:00Z'))).toBe(true);
    expect(inMaintenance(windows, { tags: ['web'] }, at('2026-03-01T11:00:00Z'))).toBe(false);
    expect(inMaintenance(windows, { tags: ['db'] }, at('2026-03-01T13:00:00Z'))).toBe(false);
  });

  it('agrees with walking every occurrence from the first (property)', () => {
    const units: RepeatUnit[] = ['DAY', 'WEEK', 'MONTH'];
    const DAY_MS = 86_400_000;
    const base = Date.parse('2024-01-01T00:00:00Z');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 800 * DAY_MS }),
        fc.integer({ min: 1, max: 40 * DAY_MS }),
        fc.constantFrom(...units),
        fc.integer({ min: 1, max: 3 }),
        fc.option(fc.integer({ min: 0, max: 900 }), { nil: null }),
        fc.integer({ min: 0, max: 1200 * DAY_MS }),
        (offset, duration, unit, interval, endDays, tOffset) => {
          const start = base + offset;
          const repeatEndsAt = endDays === null ? null : new Date(start + endDays * DAY_MS).toISOString().slice(0, 10);
          const w = schedule(
            new Date(start).toISOString(),
            new Date(start + duration).toISOString(),
            unit,
            interval,
            repeatEndsAt,
          );
          const t = base + tOffset;
          let expected = false;
          for (let k = 0; ; k++) {
            const s = moment
              .utc(start)
              .add(
                k * interval,
                { DAY: 'days', WEEK: 'weeks', MONTH: 'months' }[unit] as moment.unitOfTime.DurationConstructor,
              )
              .valueOf();
            if (s > t || (repeatEndsAt !== null && new Date(s).toISOString().slice(0, 10) > repeatEndsAt)) break;
            if (t < s + duration) expected = true;
          }
          expect(isWindowActiveAt(w, new Date(t))).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});
