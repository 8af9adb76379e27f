/**
 * Maintenance-window request bodies for the tests of /v1/maintenance-windows (behaviour and contract).
 */

/** A window repeating every day from 23:00 to 01:00 UTC over production-tagged checks, without an end. */
export const nightlyWindow = {
  name: 'Nightly',
  tags: ['production'],
  startsAt: '2026-11-01T23:00:00Z',
  endsAt: '2026-11-02T01:00:00Z',
  repeatUnit: 'DAY',
  repeatInterval: 1,
};
