/**
 * How many bytes the next request of one upload pass carries. Every request declares its length,
 * because the service reads a body of known length for less CPU than a chunked one (BENCHMARKS.md,
 * "Artifact upload"); so a request cannot stop on a clock once started, and its size is chosen up
 * front from the rate the previous request achieved: about half of `segmentMs` worth of bytes,
 * as the service ends any request after JOB_LEASE_MAX_WAIT_SECONDS + 30 s.
 *
 * The first request carries `firstBytes` (one read chunk, a few seconds even on a slow uplink), and
 * each may carry at most GROWTH times the last, so one lucky measurement cannot ask a slow link for
 * more than it can send in time. A request that still runs too long fails, and the next pass resumes
 * at the service's offset with a sizer measuring afresh.
 */

/** Largest step from one request's size to the next's. */
export const GROWTH = 64;

export class SegmentSizer {
  readonly #segmentMs: number;
  readonly #firstBytes: number;
  #bytes: number;

  constructor(segmentMs: number, firstBytes: number) {
    this.#segmentMs = segmentMs;
    this.#firstBytes = Math.max(1, firstBytes);
    this.#bytes = this.#firstBytes;
  }

  /** Bytes for the next request, `remaining` at most. */
  next(remaining: number): number {
    return Math.min(remaining, this.#bytes);
  }

  /** A request carrying `bytes` took `ms` from its start to the service's answer. */
  measured(bytes: number, ms: number): void {
    const inHalfSegment = (bytes / Math.max(1, ms)) * (this.#segmentMs / 2);
    this.#bytes = Math.max(this.#firstBytes, Math.floor(Math.min(inHalfSegment, bytes * GROWTH)));
  }
}
