/**
 * PLAYWRIGHT checks (Playwright check suites): the runner the daemon calls; the work is in
 * ../suites/run-suite.ts. Its settings come from the agent's environment the first time a suite
 * runs (../suites/config.ts), so an agent that never runs one reads none of them.
 *
 * Isolation: the install and the tests run under a sandbox uid of their own, from the same allocator
 * as the sandbox pool's (ctx.sandboxes), when the agent can switch uids (docs/sandbox.md).
 *
 * Artifacts: reports, traces and videos go through the run's collector (ctx.artifacts); the daemon
 * puts their references into the result's details.
 */
import type { PlaywrightCheckDefinition } from '../../shared/checks/types.ts';
import { type BundleSource, serviceBundleSource } from '../suites/bundle-source.ts';
import { loadSuiteRunnerConfig, type SuiteRunnerConfig } from '../suites/config.ts';
import { runSuite } from '../suites/run-suite.ts';
import type { CheckContext, CheckOutcome, CheckRunner } from './runner.ts';

export interface PlaywrightRunnerOptions {
  config?: SuiteRunnerConfig;
  bundles?: BundleSource;
}

/** A runner with its own settings (tests); the agent uses playwrightCheckRunner below. */
export function createPlaywrightCheckRunner(
  options: PlaywrightRunnerOptions = {},
): CheckRunner<PlaywrightCheckDefinition> {
  let config = options.config;
  let bundles = options.bundles;
  return {
    checkType: 'PLAYWRIGHT',
    async run(check: PlaywrightCheckDefinition, ctx: CheckContext): Promise<CheckOutcome> {
      config ??= loadSuiteRunnerConfig(process.env);
      bundles ??= serviceBundleSource(config);
      const isolation = ctx.sandboxes?.isolation;
      return runSuite(check, {
        config,
        bundles,
        signal: ctx.signal,
        log: ctx.log,
        ...(ctx.artifacts ? { artifacts: ctx.artifacts } : {}),
        ...(isolation ? { isolation } : {}),
      });
    },
  };
}

export const playwrightCheckRunner = createPlaywrightCheckRunner();
