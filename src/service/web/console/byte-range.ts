/**
 * One HTTP byte range (RFC 9110 §14) of an artifact, so a <video> can seek without downloading the
 * whole file first. Several ranges in one request are answered with the whole body, as the RFC lets
 * a server do; a range that starts past the end is a 416.
 */
import { HttpError } from '../../http/errors.ts';

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

/** 416: the range asked for lies outside the artifact; the route names the size in Content-Range. */
export class RangeNotSatisfiableError extends HttpError {
  readonly size: number;
  constructor(header: string, size: number) {
    super(416, `range ${header} is outside the ${size} bytes of this artifact`);
    this.name = 'RangeNotSatisfiableError';
    this.size = size;
  }
}

const SINGLE_RANGE = /^bytes=(\d*)-(\d*)$/;

/** The range of a Range header for a body of `size` bytes; undefined means the whole body. */
export function byteRangeOf(header: string | undefined, size: number): ByteRange | undefined {
  const m = header === undefined ? null : SINGLE_RANGE.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  const [first, last] = [m[1] as string, m[2] as string];
  if (first === '') {
    // bytes=-N: the last N bytes.
    const n = Math.min(Number(last), size);
    if (n === 0) throw new RangeNotSatisfiableError(header as string, size);
    return { start: size - n, end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || end < start) throw new RangeNotSatisfiableError(header as string, size);
  return { start, end };
}
