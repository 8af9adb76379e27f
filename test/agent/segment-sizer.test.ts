import { describe, expect, it } from 'vitest';
import { GROWTH, SegmentSizer } from '../../src/agent/artifacts/segment-sizer.ts';

const MiB = 1024 * 1024;

describe('SegmentSizer', () => {
  it('starts with one chunk, never more than what remains', () => {
    const sizer = new SegmentSizer(20_000, MiB);
    expect(sizer.next(150 * MiB)).toBe(MiB);
    expect(sizer.next(1000)).toBe(1000);
    expect(sizer.next(0)).toBe(0);
  });

  it('sizes the next request to half of segmentMs at the measured rate', () => {
    const sizer = new SegmentSizer(20_000, 64 * 1024);
    // 1 MiB in 2 s: 0.5 MiB/s, so 10 s carries 5 MiB.
    sizer.measured(MiB, 2_000);
    expect(sizer.next(150 * MiB)).toBe(5 * MiB);
    // Slower now: 5 MiB in 25 s (the last request ran long), so 10 s carries 2 MiB.
    sizer.measured(5 * MiB, 25_000);
    expect(sizer.next(150 * MiB)).toBe(2 * MiB);
  });

  it('grows at most GROWTH times per request, so one fast sample cannot ask a link for too much', () => {
    const sizer = new SegmentSizer(20_000, MiB);
    sizer.measured(MiB, 1);
    expect(sizer.next(10_000 * MiB)).toBe(GROWTH * MiB);
    sizer.measured(GROWTH * MiB, 1);
    expect(sizer.next(10_000 * MiB)).toBe(GROWTH * GROWTH * MiB);
  });

  it('never goes below the first size, however slow the link', () => {
    const sizer = new SegmentSizer(20_000, MiB);
    sizer.measured(MiB, 3_600_000);
    expect(sizer.next(150 * MiB)).toBe(MiB);
    const none = new SegmentSizer(0, 256 * 1024);
    none.measured(256 * 1024, 3);
    expect(none.next(MiB)).toBe(256 * 1024);
  });
});
