import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
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
  },
});
