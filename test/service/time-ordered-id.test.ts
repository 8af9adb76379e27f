import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../src/service/store/time-ordered-id.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The creation time in ms that a UUIDv7 carries in its first 48 bits. */
const msOf = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('timeOrderedId', () => {
  it('gives distinct UUIDv7s across several refills of its pool of random bytes', () => {
    const ids = Array.from({ length: 10_000 }, timeOrderedId);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(new Set(ids).size).toBe(ids.length);
    // The 74 random bits differ between ids of the same millisecond too.
    expect(new Set(ids.map((id) => id.slice(-12))).size).toBe(ids.length);
  });

  it('leads with the creation time, so ids of later milliseconds sort after earlier ones', () => {
    const before = Date.now();
    const first = timeOrderedId();
    let second = first;
    // The clock's next millisecond, without sleeping.
    while (msOf(second) === msOf(first)) second = timeOrderedId();
    const after = Date.now();
    expect(msOf(first)).toBeGreaterThanOrEqual(before);
    expect(msOf(second)).toBeLessThanOrEqual(after);
    expect(msOf(second)).toBeGreaterThan(msOf(first));
    expect(second > first).toBe(true);
  });
});
