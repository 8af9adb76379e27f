import { describe, expect, it } from 'vitest';
import { byteRangeOf, RangeNotSatisfiableError } from '../../src/service/web/console/byte-range.ts';

describe('byte ranges of an artifact', () => {
  it('reads first-last, open-ended and suffix ranges, clamping the end to the size', () => {
    expect(byteRangeOf('bytes=0-0', 10)).toEqual({ start: 0, end: 0 });
    expect(byteRangeOf('bytes=3-', 10)).toEqual({ start: 3, end: 9 });
    expect(byteRangeOf('bytes=3-99', 10)).toEqual({ start: 3, end: 9 });
    expect(byteRangeOf('bytes=-4', 10)).toEqual({ start: 6, end: 9 });
    expect(byteRangeOf('bytes=-40', 10)).toEqual({ start: 0, end: 9 });
  });

  it('answers the whole body for no header, several ranges or another unit', () => {
    expect(byteRangeOf(undefined, 10)).toBeUndefined();
    expect(byteRangeOf('bytes=0-1,4-5', 10)).toBeUndefined();
    expect(byteRangeOf('items=0-1', 10)).toBeUndefined();
    expect(byteRangeOf('bytes=-', 10)).toBeUndefined();
  });

  it('refuses a range outside the body with 416, naming the size', () => {
    for (const header of ['bytes=10-', 'bytes=5-2', 'bytes=-0']) {
      const err = (() => {
        try {
          byteRangeOf(header, 10);
        } catch (e) {
          return e;
        }
      })();
      expect(err, header).toBeInstanceOf(RangeNotSatisfiableError);
      expect((err as RangeNotSatisfiableError).statusCode).toBe(416);
      expect((err as RangeNotSatisfiableError).message).toBe(
        `range ${header} is outside the 10 bytes of this artifact`,
      );
    }
  });
});
