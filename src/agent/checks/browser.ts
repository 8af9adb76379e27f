/**
 * BROWSER checks: a Playwright script in real headless Chromium (the system's), run in a sandbox of
 * the job's runtime with Playwright from that runtime. src/agent/browser/engine.ts does the work;
 * docs/checks.md "Browser and multistep checks" describes scripts, results and artifacts.
 */
import type { BrowserCheckDefinition } from '../../shared/checks/types.ts';
import { type BrowserCheckContext, runPlaywrightCheck } from '../browser/engine.ts';
import type { CheckRunner } from './runner.ts';

export const browserCheckRunner: CheckRunner<BrowserCheckDefinition> = {
  checkType: 'BROWSER',
  run: (check, ctx) => runPlaywrightCheck(check, ctx as BrowserCheckContext),
};
