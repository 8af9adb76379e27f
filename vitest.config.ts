import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests start real servers and child processes; forks keep each file's sockets and signals apart.
    pool: 'forks',
    // The CI machine has 2 cores; end-to-end files start several processes each.
    maxWorkers: 2,
    testTimeout: 30_000,
    // The default reporter for people, and one plain closing line ("Tests: N passed, N failed, N skipped")
    // for CI, which reads that line to know the run tested something.
    reporters: ['default', './test/support/closing-line-reporter.ts'],
    hookTimeout: 30_000,
  },
});
