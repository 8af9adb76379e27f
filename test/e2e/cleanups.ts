/** Clean-ups of a test file's processes, servers and folders (kept out of harness.ts, which benchmarks load outside Vitest). */
import { afterAll } from 'vitest';

/** A list of clean-ups that run after the file's tests, last added first, each whatever the others do. */
export function cleanupsAfterAll(): Array<() => Promise<unknown>> {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
  });
  return cleanups;
}
