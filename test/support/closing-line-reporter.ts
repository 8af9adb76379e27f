import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints one plain closing line after vitest's own summary: `N passed, N failed, N skipped`, with no prefix.
 *
 * Why: CI reads a run's closing line to tell a run that tested something from one that executed no test,
 * and it does not read vitest's coloured, column-aligned summary. No `Tests:` prefix: that is Jest's summary
 * label, and a reader that knows Jest looks for a `N total` after it. A file that failed before its tests ran
 * (an import error, a failing beforeAll) counts as one failure, so a broken file never reads as "0 failed".
 */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const testModule of testModules) {
      let moduleFailed = 0;
      for (const testCase of testModule.children.allTests()) {
        const state = testCase.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') moduleFailed += 1;
        else if (state === 'skipped') skipped += 1;
      }
      if (moduleFailed === 0 && testModule.state() === 'failed') moduleFailed = 1;
      failed += moduleFailed;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
