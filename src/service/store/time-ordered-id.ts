/**
 * Ids for rows written at a high rate and kept a long time (runs, results): UUIDv7, whose leading
 * 48 bits are the creation time in ms, so each new key lands at the right edge of its unique index
 * instead of on a random page of it. A random (v4) key dirties one more index page per row, and
 * that page is rarely cached once the index outgrows memory (BENCHMARKS.md, "Time-ordered ids").
 * The other 74 bits are random: an id is no easier to guess, and every use of one is checked
 * against its account or location anyway.
 */
import { v7 } from 'uuid';

export function timeOrderedId(): string {
  return v7();
}
