/**
 * MULTI_STEP checks: a `@playwright/test` script whose steps are API requests (`request`) and may
 * open pages (`page`), run like a browser check (src/agent/browser/engine.ts). A browser starts only
 * when the script uses one.
 */
import type { MultiStepCheckDefinition } from '../../shared/checks/types.ts';
import { type BrowserCheckContext, runPlaywrightCheck } from '../browser/engine.ts';
import type { CheckRunner } from './runner.ts';

export const multiStepCheckRunner: CheckRunner<MultiStepCheckDefinition> = {
  checkType: 'MULTI_STEP',
  run: (check, ctx) => runPlaywrightCheck(check, ctx as BrowserCheckContext),
};
