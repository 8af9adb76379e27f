/**
 * Ids for rows written at a high rate and kept a long time (runs, results): UUIDv7, whose leading
 * 48 bits are the creation time in ms, so each new key lands at the right edge of its unique index
 * instead of on a random page of it. A random (v4) key dirties one more index page per row, and
 * that page is rarely cached once the index outgrows memory (BENCHMARKS.md, "Time-ordered ids").
 * The other 74 bits are random: an id is no easier to guess, and every use of one is checked
 * against its account or location anyway.
 */
import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * uuid's own source of randomness asks the kernel for 16 bytes per id, a system call each; this
 * pool asks once per POOL_IDS ids (BENCHMARKS.md, "Ids from a pool of random bytes"), as Node's
 * randomUUID does.
 */
const POOL_IDS = 256;
const pool = new Uint8Array(16 * POOL_IDS);
let next = pool.length;

function randomBytes16(): Uint8Array {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const at = next;
  next += 16;
  return pool.subarray(at, next);
}

/**
 * A UUIDv7 with the time of now in ms and the rest from the pool. Ids of one millisecond are in no
 * particular order among themselves (RFC 9562 makes the counter optional); nothing sorts by id.
 */
export function timeOrderedId(): string {
  return v7({ random: randomBytes16() });
}
