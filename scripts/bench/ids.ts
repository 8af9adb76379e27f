/**
 * `npm run bench -- ids [--ids 200000] [--rounds 5]`: the cost of one run or result id, uuid's
 * `v7()` (16 random bytes from the kernel per id) against the service's `timeOrderedId()` (a
 * UUIDv7 from a pool of random bytes filled once per 256 ids), taking turns in one process.
 * Medians of the rounds, in microseconds per id.
 */
import { v7 } from 'uuid';
import { timeOrderedId } from '../../src/service/store/time-ordered-id.ts';
import { numberFlags, roundTo, summarize } from './_stats.ts';

function microsPerId(make: () => string, ids: number): number {
  const start = performance.now();
  for (let i = 0; i < ids; i++) make();
  return ((performance.now() - start) * 1000) / ids;
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const { ids, rounds } = numberFlags(args, { ids: 200_000, rounds: 5 });
  const uuidV7: number[] = [];
  const pooled: number[] = [];
  for (let r = 0; r < rounds; r++) {
    uuidV7.push(microsPerId(() => v7(), ids));
    pooled.push(microsPerId(timeOrderedId, ids));
  }
  const [kernel, fromPool] = [summarize(uuidV7).p50, summarize(pooled).p50];
  return {
    workload: `${ids} ids per round, ${rounds} rounds, uuid v7() and timeOrderedId() taking turns`,
    microsPerId: { uuidV7: kernel, timeOrderedId: fromPool },
    ratio: roundTo(kernel / fromPool, 1),
    rounds: { uuidV7: uuidV7.map((x) => roundTo(x)), timeOrderedId: pooled.map((x) => roundTo(x)) },
  };
}
