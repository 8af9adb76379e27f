import { globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

/** Two replicas, six agents and nginx for over a minute: it runs alone, after everything else. */
const FLEET = 'test/e2e/fleet.test.ts';
/**
 * Files that start `outpost serve` or `outpost agent` as processes. A start-up takes about 2 s on a quiet
 * machine and ten times that on a busy 2-core CI machine, so their hooks and tests get longer timeouts.
 */
const PROCESSES = [
  'test/e2e/*.test.ts',
  'test/cli.test.ts',
  'test/cli-run.test.ts',
  'test/service/backup.test.ts',
  'test/service/service-probes.test.ts',
  'test/agent/metrics.test.ts',
  'test/agent/sandbox-isolation.test.ts',
];
/**
 * Files that drive the real Chromium over the service's pages, with axe-core on each: every test file
 * that imports test/support/web-browser.ts, found here so that a new one cannot be left out. A page and
 * its axe run take about 2 s on a quiet machine; beside the browser-check tests on a busy 2-core CI
 * machine one test of two pages once took over 30 s (a 7 s test in the runs before), so they get
 * longer timeouts.
 */
const PAGES = globSync('test/**/*.test.ts', { cwd: import.meta.dirname })
  .filter((file) => readFileSync(path.join(import.meta.dirname, file), 'utf8').includes("/support/web-browser.ts'"))
  .sort();

export default defineConfig({
  test: {
    // Tests start real servers and child processes; forks keep each file's sockets and signals apart.
    pool: 'forks',
    // The CI machine has 2 cores; end-to-end files start several processes each.
    maxWorkers: 2,
    testTimeout: 30_000,
    // People get the default reporter; CI (CI=true) gets dots and each failure in full, which keeps its log
    // short. Both end on one plain closing line ("N passed, N failed, N skipped"), which CI reads to
    // know the run tested something: it must be the log's last line.
    reporters: [process.env.CI ? 'dot' : 'default', './test/support/closing-line-reporter.ts'],
    hookTimeout: 30_000,
    // expect.poll waits for an event (a page refreshing itself, a delivery landing); its default of 1 s
    // is a quiet machine's figure, and a busy CI machine misses it.
    expect: { poll: { timeout: 10_000 } },
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, FLEET, ...PROCESSES, ...PAGES],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'pages',
          include: PAGES,
          // A file that also starts processes stays with them (and their longer hook timeout), not in both.
          exclude: [...configDefaults.exclude, FLEET, ...PROCESSES],
          testTimeout: 90_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'processes',
          include: PROCESSES,
          exclude: [...configDefaults.exclude, FLEET],
          testTimeout: 90_000,
          hookTimeout: 90_000,
          sequence: { groupOrder: 0 },
        },
      },
      // Beside other end-to-end files, its eight processes would slow their start-ups past their timeouts.
      { extends: true, test: { name: 'fleet', include: [FLEET], sequence: { groupOrder: 1 } } },
    ],
  },
});
